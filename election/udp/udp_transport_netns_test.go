//go:build linux

package udp

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
	"golang.org/x/sys/unix"
)

// netnsLab is a throwaway LAN: a bridge in a namespace of its own and one
// namespace per node, each with eth0 = 198.18.0.<i>/24 on the bridge. Names
// carry a unique prefix and cleanup deletes exactly those namespaces, so no
// real interface of this machine ever sees a broadcast.
type netnsLab struct {
	prefix string
	nodes  []string
}

func newNetnsLab(t *testing.T, n int) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("ip (iproute2) not installed")
	}
	lab := &netnsLab{prefix: fmt.Sprintf("llwire-%d-%04x-", os.Getpid(), rand.Uint32()&0xffff)}
	sw := lab.prefix + "sw"
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	ip("netns", "add", sw)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", sw).Run() })
	ip("-n", sw, "link", "add", "br0", "type", "bridge")
	ip("-n", sw, "link", "set", "br0", "up")
	for i := 1; i <= n; i++ {
		ns := fmt.Sprintf("%sn%d", lab.prefix, i)
		port := fmt.Sprintf("p%d", i)
		ip("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		ip("-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", port, "netns", sw)
		ip("-n", sw, "link", "set", port, "master", "br0", "up")
		ip("-n", ns, "addr", "add", fmt.Sprintf("198.18.0.%d/24", i), "dev", "eth0")
		ip("-n", ns, "link", "set", "eth0", "up")
		lab.nodes = append(lab.nodes, ns)
	}
	// A veth's carrier, and with it the bridge port's forwarding state,
	// comes up asynchronously (the kernel's link watch runs up to a second
	// later, more on a loaded host); until then what is sent is dropped:
	// wait until every node's link is up and its port forwards, or a first
	// broadcast may be lost.
	for i, ns := range lab.nodes {
		for _, l := range [][3]string{{ns, "eth0", "state UP"}, {sw, fmt.Sprintf("p%d", i+1), "bridge_slave state forwarding"}} {
			up := false
			for range 200 {
				out, err := exec.Command("ip", "-n", l[0], "-d", "link", "show", l[1]).Output()
				if up = err == nil && strings.Contains(string(out), l[2]); up {
					break
				}
				time.Sleep(25 * time.Millisecond)
			}
			require.True(t, up, "%s %s: no %q within 5 s", l[0], l[1], l[2])
		}
	}
	return lab
}

// in runs fn on an OS thread switched into node i's namespace. The thread
// is never switched back: the goroutine exits locked, so Go discards it.
// Sockets opened by fn stay in that namespace.
func (lab *netnsLab) in(t *testing.T, i int, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + lab.nodes[i])
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", lab.nodes[i], err)
			return
		}
		done <- fn()
	}()
	require.NoError(t, <-done)
}

func TestUDPSubnetBroadcastInNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds network namespaces")
	}
	defer goleak.VerifyNone(t, proctest.IgnoreForkThread())
	lab := newNetnsLab(t, 3)
	const bind = `{{ GetAllInterfaces | include "name" "^eth0$" | include "type" "IPv4" | attr "address" }}`
	ts := make([]*UDPTransport, 3)
	for i := range ts {
		lab.in(t, i, func() (err error) {
			ts[i], err = NewUDPTransport(UDPConfig{Bind: bind, Logger: discard})
			return err
		})
		defer ts[i].Close()
	}
	a := ts[0]
	bc, ok := a.BroadcastAddr()
	require.True(t, ok)
	assert.Equal(t, netip.MustParseAddrPort("198.18.0.255:7483"), bc, "directed broadcast of 198.18.0.0/24 on DefaultPort")
	assert.Equal(t, netip.MustParseAddrPort("198.18.0.1:7483"), a.LocalAddr())

	require.NoError(t, a.Broadcast([]byte("claim")))
	for _, r := range ts[1:] {
		p := recv(t, r)
		assert.Equal(t, "claim", string(p.Data))
		assert.Equal(t, a.LocalAddr(), p.From)
	}
	require.True(t, a.EchoesSelf())
	p := recv(t, a)
	assert.Equal(t, "claim", string(p.Data), "the sender hears its own broadcast back (the self echo)")
	assert.Equal(t, a.LocalAddr(), p.From)
	assert.Equal(t, uint64(1), a.Stats().SelfEchoes)

	require.NoError(t, ts[2].SendTo([]byte("answer"), a.LocalAddr()))
	p = recv(t, a)
	assert.Equal(t, "answer", string(p.Data), "unicast reaches the node's own address")
	assert.Equal(t, uint64(2), a.Stats().PacketsIn, "its own claim and the answer")

	// A host firewall dropping inbound UDP to the port (what makes a node
	// deaf) drops the self echo too: the echo is the node's proof that it
	// can receive.
	if _, err := exec.LookPath("nft"); err == nil {
		rules := "table inet deaf { chain in { type filter hook input priority 0; udp dport 7483 drop; }; }"
		cmd := exec.Command("ip", "netns", "exec", lab.nodes[0], "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(rules)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "nft: %s", out)
		require.NoError(t, a.Broadcast([]byte("claim2")))
		for _, r := range ts[1:] {
			assert.Equal(t, "claim2", string(recv(t, r).Data), "a can still send")
		}
		require.NoError(t, ts[2].SendTo([]byte("marker"), a.LocalAddr()))
		select {
		case p := <-a.Packets():
			t.Fatalf("a is deaf but received %q from %s", p.Data, p.From)
		case <-time.After(200 * time.Millisecond):
		}
		assert.Equal(t, uint64(1), a.Stats().SelfEchoes, "no echo through the firewall")
	}
	for _, tr := range ts {
		require.NoError(t, tr.Close())
	}
}
