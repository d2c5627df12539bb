package etcd

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

func TestBackoffDoublesUpToMax(t *testing.T) {
	b := backoff{first: time.Second, max: 10 * time.Second}
	var got []time.Duration
	for range 6 {
		got = append(got, b.next())
	}
	assert.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}, got)
}

// TestUnreachableAtStartKeepsTrying: an Elector whose etcd is unreachable
// when Run starts, with or without a username, keeps trying with growing
// waits, says at WARN that etcd is unreachable, and leads once etcd
// answers. The waits between attempts are the test's (no real pauses);
// each attempt still waits for its dial timeout on a proxy that drops
// everything.
func TestUnreachableAtStartKeepsTrying(t *testing.T) {
	authSrv, err := etcdtest.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(authSrv.Close)
	admin, err := etcdtest.NewClient(authSrv.Endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	require.NoError(t, etcdtest.EnableAuth(admin, "root password"))

	tests := []struct {
		name     string
		endpoint string
		user     string
		waits    int // attempts that fail before the proxy heals
	}{
		{"no username", server.Endpoint, "", 3},
		{"username", authSrv.Endpoint, "root", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := etcdtest.NewProxy(tt.endpoint)
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			p.Cut()

			logs := &recordLog{}
			waits := make(chan time.Duration)
			proceed := make(chan struct{})
			c := newCluster(t)
			c.startWith("a", false, func(cfg *Config) {
				cfg.Client, cfg.Endpoints, cfg.DialTimeout = nil, []string{p.Endpoint}, 300*time.Millisecond
				if tt.user != "" {
					cfg.Username, cfg.Password = tt.user, "root password"
				}
				cfg.Logger = slog.New(logs)
			}, func(n *node) {
				n.el.wait = func(ctx context.Context, d time.Duration) {
					select {
					case waits <- d:
					case <-ctx.Done():
						return
					}
					select {
					case <-proceed:
					case <-ctx.Done():
					}
				}
			})

			guard := time.After(30 * time.Second)
			var got []time.Duration
			for len(got) < tt.waits {
				select {
				case d := <-waits:
					got = append(got, d)
				case <-guard:
					t.Fatalf("after 30s: %d failed attempts, want %d; log:\n%s", len(got), tt.waits, logs)
				}
				if len(got) == tt.waits {
					p.Heal() // before the next attempt starts
				}
				proceed <- struct{}{}
			}
			want := []time.Duration{testTTL / 10, testTTL / 5, 2 * testTTL / 5}
			assert.Equal(t, want[:tt.waits], got, "waits between attempts")
			unreachable := logs.messages(slog.LevelWarn, "etcd: unreachable; trying again")
			assert.Len(t, unreachable, tt.waits, "log:\n%s", logs)

			// Later attempts (if one still fails) need no more waits from
			// the test.
			go func() {
				for {
					select {
					case <-waits:
						proceed <- struct{}{}
					case <-guard:
						return
					}
				}
			}()
			assert.Equal(t, "a", c.oneLeader(20*time.Second).node, "log:\n%s", logs)
		})
	}
}

// recordLog is a slog.Handler that keeps every record, for assertions on
// what was logged.
type recordLog struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordLog) WithGroup(string) slog.Handler            { return l }

// WithAttrs returns a handler that records into l with attrs added to
// every record (a logger's With).
func (l *recordLog) WithAttrs(attrs []slog.Attr) slog.Handler { return &recordWith{l, attrs} }

type recordWith struct {
	*recordLog
	attrs []slog.Attr
}

func (w *recordWith) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recordWith{w.recordLog, append(slices.Clip(w.attrs), attrs...)}
}

func (w *recordWith) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(w.attrs...)
	return w.recordLog.Handle(ctx, r)
}

func (l *recordLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}

// messages returns the records at level with message msg.
func (l *recordLog) messages(level slog.Level, msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records {
		if r.Level == level && r.Message == msg {
			out = append(out, r)
		}
	}
	return out
}

// String renders the records as text lines.
func (l *recordLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	h := slog.NewTextHandler(&b, nil)
	for _, r := range l.records {
		_ = h.Handle(context.Background(), r)
	}
	return b.String()
}
