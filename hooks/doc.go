// Package hooks runs the notify hooks of keepalived fame (notify_master,
// notify_backup) on lanleader's role changes: on_leader, on_follower and
// on_stop commands, each exactly once per transition, in order, on a queue
// of their own so a slow or failing hook never holds up the election.
package hooks
