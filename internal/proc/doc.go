// Package proc runs one external command the way lanleader's jobs and notify
// hooks need it: in a process group of its own, so that stopping it stops
// everything it started (SIGTERM to the group, SIGKILL after a grace
// period); with stdout and stderr delivered line by line, long lines split
// rather than lost; and with the group cleaned up once the main process
// exits, so no orphaned grandchildren outlive a run. A run may carry a
// Licence that its shim enforces on its own, so that it ends even when
// lanleader cannot end it (stopped, paused, dead).
package proc
