package cli

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/jobs"
)

// checkHTTPAddr checks a status endpoint address without resolving or
// listening: host:port with a port in 1-65535. Empty turns the endpoint off.
func checkHTTPAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port, e.g. 127.0.0.1:7484 (empty turns the endpoint off)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 1-65535", addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && !validHostname(host) {
		return fmt.Errorf("%q: %q is neither an IP address nor a host name", addr, host)
	}
	return nil
}

func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkJobs warns about jobs whose working directory is missing here: the
// run would fail at its start. (A warning, not an error: the directory may
// be a mount that appears later.) And about http: jobs without a timeout,
// which a server that never answers holds for ever.
func checkJobs(src *Source, file *config.File) {
	for i, j := range file.Jobs {
		if j.HTTP != nil && j.Timeout == 0 {
			src.Warn("%s: jobs[%d]: http job %q has no timeout: a request its server never answers holds the job for ever (with overlap: skip, every later instant is skipped); set timeout",
				file.Where(fmt.Sprintf("jobs[%d].http", i)), i, j.Name)
		}
		if j.Dir == "" {
			continue
		}
		key := fmt.Sprintf("jobs[%d].dir", i)
		st, err := os.Stat(j.Dir)
		switch {
		case err != nil:
			src.Warn("%s: %s: %v: job %q cannot start until it exists", file.Where(key), key, err, j.Name)
		case !st.IsDir():
			src.Warn("%s: %s: %s is not a directory: job %q cannot start", file.Where(key), key, j.Dir, j.Name)
		}
	}
}

// checkLeaderLoss warns, where the mode bounds when a deposed leader stops
// acting (succession: udp quorum mode, etcd), about every job whose runs
// it still cannot bound: on_leader_loss: finish without a timeout. A new
// leader then cannot wait such a run out: once it no longer hears that
// the run goes on, it counts it interrupted and starts the job again
// (its rerun, or its next instant) while the run may still be going. The
// same line goes to run's start-up log.
func checkLeaderLoss(src *Source, file *config.File, succession election.Succession) {
	if !succession.Bounded {
		return
	}
	for i, j := range file.Jobs {
		if j.OnLeaderLoss != jobs.LeaderLossFinish || j.Timeout > 0 {
			continue
		}
		again := "starts the job's next instant"
		if j.RerunInterrupted {
			again = "runs the job again (rerun_interrupted)"
		}
		key := fmt.Sprintf("jobs[%d].on_leader_loss", i)
		src.Warn("%s: %s: job %q: finish without a timeout: a run that outlives its leader's leadership has no end "+
			"the next leader can wait for, so once the next leader no longer hears that the run goes on (a "+
			"partition; in udp mode also its node unheard for 10 heartbeat intervals, a process stalled that "+
			"long) it %s while the run may still be going. Set timeout: the next leader then waits timeout + "+
			"kill_grace for the run", file.Where(key), key, j.Name, again)
	}
}

// endpointNames are the names the status endpoint answers to besides
// localhost and IP addresses: http_hosts, and the host of http when it is
// a name.
func endpointNames(s settings) []string {
	names := slices.Clone(s.HTTPHosts)
	if host, _, err := net.SplitHostPort(s.HTTP); err == nil && host != "" && net.ParseIP(host) == nil {
		names = append(names, host)
	}
	return names
}
