package cli

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"time"
)

// demoNode is one `lanleader run --mode=udp` child of the demo, across its
// restarts.
type demoNode struct {
	name string
	port int
	// gen counts the node's starts: 0 for the first, one more per restart.
	gen int
	cmd *exec.Cmd
	// alive is true from a start until the demo has reaped that process.
	alive bool
	// stopping says the demo killed or stopped the current process, so
	// its exit is expected.
	stopping bool
	// restartPending is set between a kill and the restart.
	restartPending bool
}

func (n *demoNode) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

// demoNodeArgs is the command line of one node: udp mode on loopback,
// unicast to every node's port (its own entry is skipped by the transport),
// JSON logs for the demo to parse, no HTTP endpoint (so nothing else binds).
func demoNodeArgs(n *demoNode, peers, configPath, keyPath string, interval time.Duration) []string {
	return []string{"run", "--mode=udp",
		"--node-id", n.name,
		"--cluster", demoCluster,
		"--bind", "127.0.0.1",
		"--port", fmt.Sprint(n.port),
		"--peers", peers,
		"--interval", interval.String(),
		"--config", configPath,
		"--secret-file", keyPath,
		"--http=",
		"--state-dir=", // demo nodes start cold: a demo is not a deployment
		"--log-format", "json",
	}
}

// startDemoNode starts the next generation of n running exe with args and a
// goroutine that turns its stderr into events. The goroutine ends after
// sending the process's evExited, or at once when done is closed.
func startDemoNode(n *demoNode, exe string, args []string, events chan<- demoEvent, done <-chan struct{}) error {
	cmd := exec.Command(exe, args...)
	cmd.Env = os.Environ()
	cmd.SysProcAttr = demoSysProcAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("%s: stderr pipe: %w", n.name, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", n.name, err)
	}
	if n.cmd != nil {
		n.gen++
	}
	n.cmd, n.alive, n.stopping, n.restartPending = cmd, true, false, false
	go readDemoNode(n.name, n.gen, stderr, cmd, events, done)
	return nil
}

// readDemoNode parses r, the stderr of cmd, line by line into events, then
// reaps cmd and sends its exit.
func readDemoNode(node string, gen int, r io.Reader, cmd *exec.Cmd, events chan<- demoEvent, done <-chan struct{}) {
	send := func(ev demoEvent) bool {
		ev.node, ev.gen = node, gen
		select {
		case events <- ev:
			return true
		case <-done:
			return false
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		ev := parseDemoLine(sc.Bytes(), time.Now())
		if ev.kind == evIgnored {
			continue
		}
		if !send(ev) {
			break
		}
	}
	// Wait closes the pipe: read it to the end first, so the node never
	// blocks writing its last lines.
	_, _ = io.Copy(io.Discard, r)
	err := cmd.Wait()
	send(demoEvent{kind: evExited, at: time.Now(), exitErr: err})
}

// checkDemoPorts fails early, with a hint, if a node's port is taken; a
// node would otherwise exit at once with a bind error.
func checkDemoPorts(base, n int) error {
	for p := base; p < base+n; p++ {
		c, err := net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return fmt.Errorf("udp port 127.0.0.1:%d is not free; pick another --base-port: %w", p, err)
		}
		c.Close()
	}
	return nil
}
