package static_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/electiontest"
	"github.com/lanleader/lanleader/election/static"
)

// machine is a fake host: its hostname, FQDN and addresses, and how often
// each lookup was used.
type machine struct {
	hostname    string
	hostnameErr error
	fqdn        string
	fqdnErr     error
	addrs       []string
	addrsErr    error

	hostnameCalls, fqdnCalls, addrCalls int
}

func (m *machine) config(leader, nodeID string, log *slog.Logger) static.Config {
	return static.Config{
		NodeID: nodeID,
		Leader: leader,
		Logger: log,
		Hostname: func() (string, error) {
			m.hostnameCalls++
			return m.hostname, m.hostnameErr
		},
		FQDN: func(_ context.Context, host string) (string, error) {
			m.fqdnCalls++
			if host != m.hostname {
				return "", fmt.Errorf("FQDN asked for %q, not the hostname", host)
			}
			return m.fqdn, m.fqdnErr
		},
		InterfaceAddrs: func() ([]netip.Addr, error) {
			m.addrCalls++
			var out []netip.Addr
			for _, a := range m.addrs {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, m.addrsErr
		},
	}
}

func nas() *machine {
	return &machine{
		hostname: "nas",
		fqdn:     "nas.home.lan",
		addrs:    []string{"127.0.0.1", "192.168.1.5", "::1", "fe80::1%eth0", "fd00::5"},
	}
}

func TestDecision(t *testing.T) {
	tests := []struct {
		name    string
		machine *machine
		leader  string
		nodeID  string
		leads   bool
		// inReason must all appear in Reason().
		inReason []string
		// fqdnLookups is how often the FQDN lookup may run (it can be slow).
		fqdnLookups int
	}{
		{name: "hostname", machine: nas(), leader: "nas", leads: true,
			inReason: []string{`hostname "nas"`}},
		{name: "hostname, other case", machine: nas(), leader: "NaS", leads: true,
			inReason: []string{`hostname "nas"`}},
		{name: "FQDN", machine: nas(), leader: "nas.home.lan", leads: true, fqdnLookups: 1,
			inReason: []string{`FQDN "nas.home.lan"`}},
		{name: "FQDN, other case and trailing dot", machine: nas(), leader: "NAS.Home.LAN.", leads: true, fqdnLookups: 1,
			inReason: []string{`FQDN "nas.home.lan"`}},
		{name: "short name of a dotted hostname",
			machine: &machine{hostname: "nas.home.lan"}, leader: "NAS", leads: true,
			inReason: []string{`short hostname "nas"`}},
		{name: "dotted hostname in full",
			machine: &machine{hostname: "nas.home.lan"}, leader: "nas.home.lan", leads: true,
			inReason: []string{`hostname "nas.home.lan"`}},
		{name: "local IPv4 address", machine: nas(), leader: "192.168.1.5", leads: true,
			inReason: []string{"interface address 192.168.1.5"}},
		{name: "IPv4-mapped IPv6 form of a local address", machine: nas(), leader: "::ffff:192.168.1.5", leads: true,
			inReason: []string{"interface address 192.168.1.5"}},
		{name: "local IPv6 address", machine: nas(), leader: "FD00::5", leads: true,
			inReason: []string{"interface address fd00::5"}},
		{name: "link-local address with a zone", machine: nas(), leader: "fe80::1%eth1", leads: true,
			inReason: []string{"interface address fe80::1"}},
		{name: "other host", machine: nas(), leader: "pi", leads: false, fqdnLookups: 1,
			inReason: []string{`"pi"`, `hostname "nas"`, `FQDN "nas.home.lan"`}},
		{name: "other host in the same domain", machine: nas(), leader: "pi.home.lan", leads: false, fqdnLookups: 1,
			inReason: []string{`FQDN "nas.home.lan"`}},
		{name: "same short name in another domain is not this node",
			machine: &machine{hostname: "nas.home.lan"}, leader: "nas.office.lan", leads: false, fqdnLookups: 1,
			inReason: []string{`hostname "nas.home.lan"`}},
		{name: "prefix of the hostname is not a match", machine: nas(), leader: "na", leads: false, fqdnLookups: 1},
		{name: "other IP", machine: nas(), leader: "192.168.1.6", leads: false,
			inReason: []string{"192.168.1.5", "fd00::5"}},
		{name: "FQDN unknown is not an error", machine: &machine{hostname: "nas", fqdnErr: errors.New("no such host")},
			leader: "nas.home.lan", leads: false, fqdnLookups: 1,
			inReason: []string{"FQDN (unknown: no such host)"}},
		{name: "node id matches", machine: nas(), nodeID: "node-b", leader: "NODE-B", leads: true,
			inReason: []string{`node id "node-b"`}},
		{name: "short form of a dotted node id", machine: nas(), nodeID: "b.rack1", leader: "b", leads: true,
			inReason: []string{`short node id "b"`}},
		{name: "node id overrides the hostname", machine: nas(), nodeID: "node-b", leader: "nas", leads: false,
			inReason: []string{`node id "node-b"`}},
		{name: "node id overrides the FQDN", machine: nas(), nodeID: "node-b", leader: "nas.home.lan", leads: false},
		// The CLI passes the hostname as node id when --node-id is not
		// given: that must not lose the FQDN.
		{name: "node id equal to the hostname keeps the FQDN", machine: nas(), nodeID: "NAS", leader: "nas.home.lan",
			leads: true, fqdnLookups: 1, inReason: []string{`FQDN "nas.home.lan"`}},
		{name: "node id equal to the hostname is the hostname", machine: nas(), nodeID: "nas", leader: "nas",
			leads: true, inReason: []string{`hostname "nas"`}},
		{name: "node id does not hide interface addresses", machine: nas(), nodeID: "node-b", leader: "192.168.1.5", leads: true,
			inReason: []string{"interface address 192.168.1.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			e, err := static.New(tt.machine.config(tt.leader, tt.nodeID, slog.New(slog.NewTextHandler(&logs, nil))))
			require.NoError(t, err)
			assert.Equal(t, tt.leads, e.Leads(), "reason: %s", e.Reason())
			for _, s := range tt.inReason {
				assert.Contains(t, e.Reason(), s)
			}
			assert.Equal(t, tt.fqdnLookups, tt.machine.fqdnCalls, "FQDN lookups")
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		machine *machine
		leader  string
		nodeID  string
		wantErr []string
	}{
		{name: "no leader", machine: nas(), leader: "", wantErr: []string{"leader is required"}},
		{name: "blank leader", machine: nas(), leader: "  ", wantErr: []string{"leader is required"}},
		{name: "IPv4 loopback", machine: nas(), leader: "127.0.0.1", wantErr: []string{`"127.0.0.1"`, "every node"}},
		{name: "IPv6 loopback", machine: nas(), leader: "::1", wantErr: []string{`"::1"`, "every node"}},
		{name: "unspecified", machine: nas(), leader: "0.0.0.0", wantErr: []string{`"0.0.0.0"`}},
		{name: "host:port", machine: nas(), leader: "nas:7483", wantErr: []string{`"nas:7483"`, "neither a hostname nor an IP"}},
		{name: "list", machine: nas(), leader: "nas,pi", wantErr: []string{`"nas,pi"`}},
		{name: "hostname fails without node id", machine: &machine{hostnameErr: errors.New("boom")}, leader: "nas",
			wantErr: []string{"hostname", "boom", "node id"}},
		{name: "empty hostname without node id", machine: &machine{}, leader: "nas",
			wantErr: []string{"hostname is empty"}},
		{name: "addresses unknown for an IP leader", machine: &machine{hostname: "nas", addrsErr: errors.New("netlink")},
			leader: "192.168.1.5", wantErr: []string{`"192.168.1.5"`, "netlink"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := static.New(tt.machine.config(tt.leader, tt.nodeID, nil))
			require.Error(t, err)
			assert.Nil(t, e)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestHostnameFailureIgnoredWithNodeID(t *testing.T) {
	m := &machine{hostnameErr: errors.New("boom")}
	e, err := static.New(m.config("b", "b", nil))
	require.NoError(t, err)
	assert.True(t, e.Leads())
	assert.Equal(t, "b", e.Status().Node)
}

func TestLogsWhy(t *testing.T) {
	tests := []struct {
		leader string
		want   []string
	}{
		{"NAS.home.lan", []string{"this node leads", `matched="FQDN \"nas.home.lan\""`, "leader=NAS.home.lan"}},
		{"pi", []string{"this node follows", "leader=pi", `hostname \"nas\"`, `FQDN \"nas.home.lan\"`}},
	}
	for _, tt := range tests {
		t.Run(tt.leader, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				e, err := static.New(nas().config(tt.leader, "", slog.New(slog.NewTextHandler(&logs, nil))))
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error)
				go func() { done <- e.Run(ctx, election.Callbacks{}) }()
				synctest.Wait()
				for _, s := range tt.want {
					assert.Contains(t, logs.String(), s)
				}
				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name        string
		leader      string
		whileRun    election.Status
		runEvents   []string
		finalEvents []string
		final       election.Status
	}{
		{
			name:   "leader",
			leader: "nas",
			whileRun: election.Status{Node: "nas", Role: election.Leader, Term: 1,
				Leader: election.LeaderInfo{ID: "nas", Term: 1}},
			runEvents:   []string{"new:nas/1", "start:1"},
			finalEvents: []string{"stop(ctx cancelled=true)", "new:/0"},
			final:       election.Status{Node: "nas", Role: election.Follower, Term: 1},
		},
		{
			name:   "follower",
			leader: "Pi.home.lan",
			whileRun: election.Status{Node: "nas", Role: election.Follower, Term: 1,
				Leader: election.LeaderInfo{ID: "Pi.home.lan", Term: 1}},
			runEvents:   []string{"new:Pi.home.lan/1"},
			finalEvents: nil,
			final: election.Status{Node: "nas", Role: election.Follower, Term: 1,
				Leader: election.LeaderInfo{ID: "Pi.home.lan", Term: 1}},
		},
	}
	// Since is wall-clock time for display; compare everything else.
	noSince := func(s election.Status) election.Status { s.Since = time.Time{}; return s }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, err := static.New(nas().config(tt.leader, "", nil))
				require.NoError(t, err)
				assert.Equal(t, election.Status{Node: "nas", Role: election.Follower}, e.Status(),
					"before Run: a follower that knows no leader")
				assert.False(t, e.Joined())

				rec := &electiontest.Recorder{}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- e.Run(ctx, rec.Callbacks()) }()
				synctest.Wait()

				assert.Equal(t, tt.runEvents, rec.Events)
				assert.Equal(t, tt.whileRun, noSince(e.Status()))
				assert.False(t, e.Status().Since.IsZero(), "Since set once the role is known")
				assert.True(t, e.Joined())
				select {
				case err := <-done:
					t.Fatalf("Run returned %v before ctx was done", err)
				default:
				}
				rec.Events = nil

				cancel()
				require.NoError(t, <-done)
				assert.Equal(t, tt.finalEvents, rec.Events)
				assert.Equal(t, tt.final, noSince(e.Status()))
				if rec.Ctx != nil {
					assert.Error(t, rec.Ctx.Err(), "leadership ctx live after Run returned")
				}
			})
		})
	}
}

func TestRunTwice(t *testing.T) {
	e, err := static.New(nas().config("nas", "", nil))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, e.Run(ctx, election.Callbacks{}))
	err = e.Run(ctx, election.Callbacks{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "twice")
}

// A callback that asks the Elector for its status must not deadlock and
// sees the status being reported.
func TestCallbackMayCallStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := static.New(nas().config("nas", "", nil))
		require.NoError(t, err)
		var seen []election.Role
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- e.Run(ctx, election.Callbacks{
				OnStartedLeading: func(context.Context, uint64) { seen = append(seen, e.Status().Role) },
				OnStoppedLeading: func() { seen = append(seen, e.Status().Role) },
			})
		}()
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, []election.Role{election.Leader, election.Follower}, seen)
	})
}
