// Package env is the election mode for nodes whose leader is chosen from
// outside: an orchestrator (a deployment with one "leader" replica, a
// systemd drop-in, an Ansible variable) sets an environment variable on the
// node that must lead. The node reads it once at start; nothing is sent on
// the network.
package env
