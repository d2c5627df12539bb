package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"os"
	"strings"
	"syscall"
	"time"
)

// demoOptions are the flags of `lanleader demo`.
type demoOptions struct {
	nodes     int
	killEvery time.Duration // 0: never kill
	duration  time.Duration
	interval  time.Duration
	basePort  int
	// until, if set, ends the demo before duration once the summary so
	// far satisfies it (a test's end condition: what it waits for, with
	// duration only as the bound).
	until func(demoSummary) bool
}

// demoStopGrace bounds how long the demo waits for a node to exit after
// SIGTERM before it uses SIGKILL.
const demoStopGrace = 10 * time.Second

// restartAfter is how long a killed node stays down: long enough for the
// failover to finish without it, and short enough that it is back (as a
// follower) before the next kill.
func (o demoOptions) restartAfter() time.Duration {
	return min(2*time.Second, o.killEvery/2)
}

func (o demoOptions) validate() error {
	switch {
	case o.nodes < 2 || o.nodes > 20:
		return fmt.Errorf("--nodes %d: want 2-20 (a failover needs a survivor)", o.nodes)
	case o.killEvery < 0:
		return fmt.Errorf("--kill-every %v: want a positive duration, or 0 to never kill", o.killEvery)
	case o.killEvery > 0 && o.killEvery < 10*o.interval:
		return fmt.Errorf("--kill-every %v: want at least 10 heartbeat intervals (%v), so each failover can finish", o.killEvery, 10*o.interval)
	case o.duration <= 0:
		return fmt.Errorf("--duration %v: must be positive", o.duration)
	case o.interval < 10*time.Millisecond:
		return fmt.Errorf("--interval %v: want at least 10ms", o.interval)
	case o.basePort < 1 || o.basePort+o.nodes-1 > 65535:
		return fmt.Errorf("--base-port %d: ports %d-%d must lie in 1-65535", o.basePort, o.basePort, o.basePort+o.nodes-1)
	}
	return nil
}

func newDemoCmd() *cobra.Command {
	o := demoOptions{nodes: 3, killEvery: 5 * time.Second, duration: 20 * time.Second,
		interval: 200 * time.Millisecond, basePort: 17483}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "run a 3-node cluster on loopback and kill its leader",
		Long: `Demo runs a cluster of real ` + "`lanleader run --mode=udp`" + ` processes on 127.0.0.1
(unicast, no other interface), prints their elections and job runs as they
happen, SIGKILLs the leader every --kill-every and restarts it, then prints
failover times and whether any scheduled instant ran twice.`,
		Example: `  lanleader demo
  lanleader demo --nodes 5 --kill-every 3s --duration 30s`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return ConfigError{err}
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find own binary to start the nodes: %w", err)
			}
			sum, err := runDemo(cmd.Context(), o, exe, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			writeDemoNext(cmd.OutOrStdout())
			switch {
			case len(sum.Duplicates) > 0:
				return fmt.Errorf("%d scheduled instants ran more than once", len(sum.Duplicates))
			case len(sum.Unexpected) > 0:
				return fmt.Errorf("nodes exited without being told to: %v", sum.Unexpected)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.nodes, "nodes", o.nodes, "number of nodes")
	fs.DurationVar(&o.killEvery, "kill-every", o.killEvery, "SIGKILL the leader this often; 0 never")
	fs.DurationVar(&o.duration, "duration", o.duration, "stop after this long (Ctrl-C stops sooner)")
	fs.DurationVar(&o.interval, "interval", o.interval, "heartbeat interval of the nodes")
	fs.IntVar(&o.basePort, "base-port", o.basePort, "UDP port of n1; n2 uses the next one, and so on")
	return cmd
}

// writeDemoNext tells someone who just saw the demo where to go next.
func writeDemoNext(w io.Writer) {
	fmt.Fprint(w, `
next:
  one node of your own, running the jobs of examples/demo.yaml (in the source tree):
    lanleader run --mode=static --leader "$(uname -n)" --config examples/demo.yaml
  while it runs, in another shell: lanleader status, lanleader jobs, or http://127.0.0.1:7484/
  a real cluster: docs/operations.md ("A 3-node cluster with a key, step by step")
`)
}

// demo is one run of the demo cluster. Only the goroutine in runDemo
// touches it; the per-node readers talk to it through events.
type demo struct {
	opts                demoOptions
	exe                 string
	configPath, keyPath string
	peers               string
	nodes               []*demoNode
	events              chan demoEvent
	done                chan struct{}
	tl                  *demoTimeline
	restarts            chan *demoNode
	restartTimers       []*time.Timer
}

// runDemo runs the cluster for o.duration or until ctx is done, printing
// the timeline and summary to out, and returns the summary. Whatever
// happens, every node it started has exited when it returns.
func runDemo(ctx context.Context, o demoOptions, exe string, out io.Writer) (demoSummary, error) {
	if err := checkDemoPorts(o.basePort, o.nodes); err != nil {
		return demoSummary{}, err
	}
	dir, err := os.MkdirTemp("", "lanleader-demo-")
	if err != nil {
		return demoSummary{}, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	d := &demo{
		opts:     o,
		exe:      exe,
		events:   make(chan demoEvent, 64),
		done:     make(chan struct{}),
		restarts: make(chan *demoNode, o.nodes),
	}
	if d.configPath, d.keyPath, err = writeDemoFiles(dir); err != nil {
		return demoSummary{}, err
	}
	addrs := make([]string, o.nodes)
	for i := range o.nodes {
		d.nodes = append(d.nodes, &demoNode{name: fmt.Sprintf("n%d", i+1), port: o.basePort + i})
		addrs[i] = d.nodes[i].addr()
	}
	d.peers = strings.Join(addrs, ",")
	defer d.abandon()

	d.header(out)
	d.tl = newDemoTimeline(out, time.Now())
	for _, n := range d.nodes {
		if err := d.start(n); err != nil {
			d.stopAll()
			return d.tl.summary(time.Now()), err
		}
	}
	err = d.loop(ctx)
	d.stopAll()
	sum := d.tl.summary(time.Now())
	sum.write(out, d.names())
	return sum, err
}

func (d *demo) header(out io.Writer) {
	o := d.opts
	fmt.Fprintf(out, "lanleader demo: %d nodes on 127.0.0.1 ports %d-%d (unicast, HMAC-signed), heartbeat every %v.\n",
		o.nodes, o.basePort, o.basePort+o.nodes-1, o.interval)
	fmt.Fprintf(out, "Job \"tick\" is due every second and runs on the leader only.\n")
	if o.killEvery > 0 {
		fmt.Fprintf(out, "Every %v the leader is SIGKILLed (a crash) and restarted %v later. ", o.killEvery, o.restartAfter())
	}
	fmt.Fprintf(out, "Ends after %v (Ctrl-C ends sooner).\n", o.duration)
	fmt.Fprintf(out, "Each node runs: lanleader %s\n\n",
		strings.Join(demoNodeArgs(d.nodes[0], d.peers, d.configPath, d.keyPath, o.interval), " "))
}

func (d *demo) names() []string {
	names := make([]string, len(d.nodes))
	for i, n := range d.nodes {
		names[i] = n.name
	}
	return names
}

// loop runs the cluster until the duration is over or ctx is done.
func (d *demo) loop(ctx context.Context) error {
	end := time.NewTimer(d.opts.duration)
	defer end.Stop()
	var kills <-chan time.Time
	if d.opts.killEvery > 0 {
		t := time.NewTicker(d.opts.killEvery)
		defer t.Stop()
		kills = t.C
	}
	defer func() {
		for _, t := range d.restartTimers {
			t.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(d.tl.out, "%7.2fs  -    interrupted; stopping the nodes\n", time.Since(d.tl.start).Seconds())
			return nil
		case <-end.C:
			return nil
		case ev := <-d.events:
			d.handle(ev)
			if d.allGone() {
				return errors.New("every node exited; see their messages above")
			}
			if d.opts.until != nil && d.opts.until(d.tl.summary(time.Now())) {
				return nil
			}
		case <-kills:
			d.killLeader()
		case n := <-d.restarts:
			if n.alive {
				// Not reaped yet: try again shortly rather than race the
				// old process for the port.
				d.restartTimers = append(d.restartTimers, time.AfterFunc(d.opts.interval, func() { d.restarts <- n }))
				continue
			}
			if err := d.start(n); err != nil {
				d.tl.printf(time.Now(), n.name, "could not restart: %v", err)
			}
		}
	}
}

func (d *demo) start(n *demoNode) error {
	restart := n.cmd != nil
	args := demoNodeArgs(n, d.peers, d.configPath, d.keyPath, d.opts.interval)
	if err := startDemoNode(n, d.exe, args, d.events, d.done); err != nil {
		return err
	}
	d.tl.started(time.Now(), n.name, n.cmd.Process.Pid, n.addr(), restart)
	return nil
}

func (d *demo) node(name string) *demoNode {
	for _, n := range d.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// handle applies one event; a process exit also updates the node.
func (d *demo) handle(ev demoEvent) {
	if ev.kind != evExited {
		d.tl.apply(ev)
		return
	}
	n := d.node(ev.node)
	if n == nil || ev.gen != n.gen {
		return
	}
	n.alive = false
	d.tl.exited(ev.at, n.name, ev.exitErr, n.stopping)
}

// allGone reports whether no node is running or about to be restarted.
func (d *demo) allGone() bool {
	for _, n := range d.nodes {
		if n.alive || n.restartPending {
			return false
		}
	}
	return true
}

// killLeader SIGKILLs the current leader, as a crash would, and schedules
// its restart.
func (d *demo) killLeader() {
	n := d.node(d.tl.leader)
	if n == nil || !n.alive || n.stopping {
		d.tl.noLeaderToKill(time.Now())
		return
	}
	n.stopping, n.restartPending = true, true
	at := time.Now()
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		d.tl.printf(at, n.name, "kill: %v", err)
	}
	d.tl.killed(at, n.name)
	d.restartTimers = append(d.restartTimers, time.AfterFunc(d.opts.restartAfter(), func() { d.restarts <- n }))
}

// stopAll stops every running node with SIGTERM, followers first and the
// leader last, so that stopping does not trigger elections, and waits for
// them all.
func (d *demo) stopAll() {
	var followers, leader []*demoNode
	for _, n := range d.nodes {
		n.restartPending = false
		switch {
		case !n.alive:
		case n.name == d.tl.leader:
			leader = append(leader, n)
		default:
			followers = append(followers, n)
		}
	}
	d.stop(followers, "followers")
	d.stop(leader, "leader")
}

// stop sends SIGTERM to nodes and handles events until they have all been
// reaped, escalating to SIGKILL after demoStopGrace.
func (d *demo) stop(nodes []*demoNode, what string) {
	if len(nodes) == 0 {
		return
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.name
	}
	d.tl.stopping(time.Now(), names, what)
	for _, n := range nodes {
		n.stopping = true
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
	}
	grace := time.NewTimer(demoStopGrace)
	defer grace.Stop()
	for {
		alive := 0
		for _, n := range nodes {
			if n.alive {
				alive++
			}
		}
		if alive == 0 {
			return
		}
		select {
		case ev := <-d.events:
			d.handle(ev)
		case <-grace.C:
			for _, n := range nodes {
				if n.alive {
					d.tl.printf(time.Now(), n.name, "still running %v after SIGTERM; sending SIGKILL", demoStopGrace)
					_ = n.cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		}
	}
}

// abandon is the last resort on an unexpected return: SIGKILL whatever is
// still running (by its PID) and release the reader goroutines.
func (d *demo) abandon() {
	for _, n := range d.nodes {
		if n.alive {
			_ = n.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	close(d.done)
}
