package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/memnet"
	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udpjobs"
	"github.com/lanleader/lanleader/httpapi"
	"github.com/lanleader/lanleader/jobs"
)

// screenshotPath is where the browser test leaves its picture of the page
// (the README shows it) when LANLEADER_UPDATE_SCREENSHOT is set.
const screenshotPath = "../docs/status-page.png"

// browser returns the Chromium binary, or skips the test where there is
// none, unless LANLEADER_REQUIRE_BROWSER is set (CI installs Chromium and
// sets it, so the test always runs there).
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("LANLEADER_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium on PATH and LANLEADER_REQUIRE_BROWSER is set (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: the status page is not tested in a browser (apt-get install chromium)")
	return ""
}

// pageNode is one in-process lanleader node: a udp elector on the memnet
// network, a job runner and the HTTP endpoint, wired as the daemon wires
// them.
type pageNode struct {
	id     string
	el     *udp.Elector
	runner *jobs.Runner
	url    string
	cancel context.CancelFunc
	done   chan struct{}
}

func startPageNode(t *testing.T, net_ *memnet.Network, i int, specs []jobs.Spec) *pageNode {
	t.Helper()
	id := fmt.Sprintf("node-%d", i)
	pc := protocol.DefaultLANConfig()
	pc.NodeID, pc.Cluster = id, "page"
	pc.Priority = uint8(200 - i) // node-1 is the natural first leader
	// The test stalls whole (a loaded machine starves the process, nodes,
	// server and all, for a second or more): on waking, a follower would
	// take the missed heartbeats for a dead leader and the leader the page
	// is checked against would change under the test. Suspicion after 5 s
	// of silence outlasts such stalls; the failover the test makes is a
	// resignation, which hands over at once.
	pc.Misses, pc.MaxMisses = 25, 25
	pc.Rand = rand.New(rand.NewPCG(uint64(i), 11))
	addr := netip.MustParseAddrPort(fmt.Sprintf("198.18.0.%d:7483", i))
	pn := &pageNode{id: id, done: make(chan struct{})}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var err error
	pn.el, err = udp.New(udp.Config{
		Protocol: pc, Transport: net_.Join(addr), Logger: quiet,
		Payload: func() []byte { return pn.runner.Ledger() },
		OnPayload: func(h protocol.PeerPayload) error {
			return pn.runner.AdoptLedgerFrom(h.From, udpjobs.HoldWordOf(h), h.Payload)
		},
	})
	require.NoError(t, err)
	pn.runner, err = jobs.NewRunner(udpjobs.Cluster(pn.el), jobs.RunnerConfig{Jobs: specs, Node: id, Logger: quiet})
	require.NoError(t, err)
	changes := httpapi.NewChangeLog(id)
	srv := httpapi.New(httpapi.Config{
		Elector: pn.el, JobViews: pn.runner.Jobs, Changes: changes, Version: "test",
		Nodes: func() []httpapi.NodeView {
			var out []httpapi.NodeView
			for _, p := range pn.el.Peers() {
				out = append(out, httpapi.NodeView{ID: p.ID, Addr: p.Addr, Role: "follower", Ago: p.Ago})
			}
			return out
		},
		Quorum: func() httpapi.QuorumView { return httpapi.QuorumView{} },
		Logger: quiet,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pn.url = "http://" + ln.Addr().String() + "/?refresh=1"
	ctx, cancel := context.WithCancel(context.Background())
	pn.cancel = cancel
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.ServeListener(ctx, ln) })
	wg.Go(func() {
		_ = pn.el.Run(ctx, election.Combine(pn.runner.Callbacks(), changes.Callbacks()))
		_ = pn.runner.Wait(context.Background())
	})
	go func() { wg.Wait(); close(pn.done) }()
	return pn
}

func (pn *pageNode) stop() {
	pn.cancel()
	<-pn.done
}

// The status page in headless Chromium: it shows the leader, the nodes and
// the jobs with their runs, and after the leader stops it shows the new
// leader by refreshing itself, without being reloaded by the test.
func TestStatusPageInBrowser(t *testing.T) {
	bin := browser(t)
	specs := []jobs.Spec{
		{Name: "backup", Schedule: "@every 1s", Command: []string{"/bin/true"}},
		{Name: "weekly-report", Schedule: "0 7 * * 1", Shell: "exit 0"},
	}
	n := memnet.New(memnet.WithSeed(5))
	nodes := []*pageNode{startPageNode(t, n, 1, specs), startPageNode(t, n, 2, specs), startPageNode(t, n, 3, specs)}
	defer func() {
		for _, pn := range nodes {
			pn.stop()
		}
	}()
	leaderOf := func() string {
		for _, pn := range nodes {
			if st := pn.el.Status(); st.IsLeader() {
				return st.Node
			}
		}
		return ""
	}
	require.Eventually(t, func() bool { return leaderOf() != "" }, 10*time.Second, 20*time.Millisecond, "no leader elected")
	first := leaderOf()
	var watcher *pageNode // a follower's page: it must follow the failover
	for _, pn := range nodes {
		if pn.id != first && watcher == nil {
			watcher = pn
		}
	}
	// Let the leader run the backup job a few times, so the page has runs.
	require.Eventually(t, func() bool {
		return len(watcher.runner.Jobs(5)[0].Runs) >= 2
	}, 10*time.Second, 50*time.Millisecond, "the follower heard of no finished runs")

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 1300),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		require.NoError(t, err, sel)
		return v
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(watcher.url), chromedp.WaitVisible(chromedp.CSS("#leader"))))
	assert.Contains(t, text("#leader"), first)
	assert.Equal(t, "follower", text("#role"))
	jobsText := text("#job-backup")
	assert.Contains(t, jobsText, "@every 1s")
	assert.Contains(t, jobsText, "ok", "the backup runs' outcomes")
	assert.Contains(t, jobsText, first, "runs name the node that ran them")
	nodesText := text("#nodes")
	assert.Contains(t, nodesText, first)
	assert.Contains(t, nodesText, "leader")
	assert.Contains(t, text("#job-weekly-report"), "no runs yet")

	// Fail over: the leader stops (resigns); another takes over. The page
	// is not navigated again: its meta refresh must bring the news.
	for _, pn := range nodes {
		if pn.id == first {
			pn.stop()
		}
	}
	require.Eventually(t, func() bool { l := leaderOf(); return l != "" && l != first }, 10*time.Second, 20*time.Millisecond)
	second := leaderOf()
	// Each meta refresh replaces the document; query it afresh each time.
	require.Eventually(t, func() bool {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		v, err := chromedp.Run(qctx, chromedp.Text(chromedp.CSS("#leader")))
		return err == nil && strings.Contains(v, second)
	}, 15*time.Second, 100*time.Millisecond, "the page did not show the new leader %s", second)
	changes := text("#changes")
	assert.Contains(t, changes, second)
	assert.True(t, strings.Contains(changes, "took over from "+first) || strings.Contains(changes, first+" is no longer heard"),
		"the change names the old leader: %s", changes)

	// Stop the refresh before the picture, so it is of one whole page.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(strings.Replace(watcher.url, "refresh=1", "refresh=3600", 1)),
		chromedp.WaitVisible(chromedp.CSS("#changes"))))
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NotEmpty(t, png)
	// docs/status-page.png is rewritten only on request (or when missing),
	// so a test run leaves the work tree clean; otherwise the picture goes
	// to a temporary file.
	path := filepath.Join(t.TempDir(), "status-page.png")
	if _, err := os.Stat(screenshotPath); err != nil || os.Getenv("LANLEADER_UPDATE_SCREENSHOT") != "" {
		path = screenshotPath
	}
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s (%d bytes); leader %s -> %s", path, len(png), first, second)
}
