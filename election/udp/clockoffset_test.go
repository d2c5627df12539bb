package udp

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// clockRig drives a leader's clockWatch with literal times: the protocol
// clock and this node's wall clock advance together.
type clockRig struct {
	w  *clockWatch
	t0 time.Time
	// pausedAt is when the node last noticed a pause (PausedAt).
	pausedAt time.Time
	logs     bytes.Buffer
	log      *slog.Logger
}

func newClockRig() *clockRig {
	r := &clockRig{w: newClockWatch("me", 200*time.Millisecond, time.Second, time.Hour), t0: time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)}
	r.log = slog.New(slog.NewTextHandler(&r.logs, nil))
	return r
}

// report is this node's heartbeat number beat sent at ms, answered by
// follower from (clock off by off) after delay each way and queued wait
// more on the way back.
func (r *clockRig) report(from string, beat uint64, ms int, off, delay, wait time.Duration) {
	sent := r.t0.Add(time.Duration(ms) * time.Millisecond)
	hb := protocol.Message{Type: protocol.Heartbeat, From: "me", Leader: "me", Term: 1, Beat: beat}
	r.w.stamp(&hb, sent, sent)
	require.Zero(nil, hb.Sent, "a heartbeat carries no sent time")
	answered := sent.Add(delay)
	q := protocol.Message{Type: protocol.Query, From: from, Flags: protocol.FlagReport, Leader: "me",
		Heard: protocol.Evidence{Term: 1, Beat: beat}}
	r.w.stamp(&q, answered, answered.Add(off))
	require.Equal(nil, answered.Add(off).UnixNano(), q.Sent, "a report carries its sender's wall clock")
	at := answered.Add(delay + wait)
	r.w.heard(r.log, &q, at, at, r.pausedAt)
}

func (r *clockRig) offset(t *testing.T, node string) (ClockOffset, bool) {
	t.Helper()
	for _, o := range r.w.offsets(r.t0.Add(time.Hour)) {
		if o.Node == node {
			return o, true
		}
	}
	return ClockOffset{}, false
}

// The leader's offset of a follower is corrected by half the round trip:
// exact when the delays are symmetric, whatever they are.
func TestClockOffsetRoundTripCorrection(t *testing.T) {
	r := newClockRig()
	for i, delay := range []time.Duration{300 * time.Microsecond, 40 * time.Millisecond} {
		r.report("f", uint64(i+1), 1000*i, 2*time.Second, delay, 0)
	}
	o, ok := r.offset(t, "f")
	require.True(t, ok)
	assert.Equal(t, 2*time.Second, o.Offset, "corrected by half the round trip")
	assert.Equal(t, 600*time.Microsecond, o.RoundTrip, "the shortest round trip's sample")
}

// Messages read late from a queue are not a clock offset. A leader paused
// for 3 s reads the reports sent meanwhile as it wakes, all at once: their
// samples are taken within two intervals of the pause the protocol
// noticed, and dropped (a follower heard only then has no offset yet); a
// shorter wait (a loaded host) loses to the window's shortest round trip.
// No WARN either way.
func TestClockOffsetIgnoresQueuedMessages(t *testing.T) {
	r := newClockRig()
	for i := range 4 {
		r.report("f", uint64(i+1), 1000*i, 0, time.Millisecond, 0)
	}
	wake := 4000 + 3000
	r.pausedAt = r.t0.Add(time.Duration(wake) * time.Millisecond)
	for i := 4; i < 7; i++ {
		for _, from := range []string{"f", "g"} { // all read at the wake
			r.report(from, uint64(i+1), 1000*i, 0, time.Millisecond, time.Duration(wake-1000*i-2)*time.Millisecond)
		}
	}
	_, ok := r.offset(t, "g")
	assert.False(t, ok, "the queued reports give no sample")

	r.pausedAt = time.Time{}
	for i := 10; i < 14; i++ {
		r.report("f", uint64(i+1), 1000*i, 0, time.Millisecond, 300*time.Millisecond) // a loaded host
	}
	o, ok := r.offset(t, "f")
	require.True(t, ok)
	assert.Equal(t, time.Duration(0), o.Offset, "the shortest round trip wins")
	assert.NotContains(t, r.logs.String(), "level=WARN", "a pause is not a clock offset")
}

// A follower whose clock is off by more than the bound is named at WARN at
// its first sample, with its offset; not again while it stays off; INFO
// once it is back within three quarters of the bound; WARN again if it
// goes off.
func TestClockOffsetWarnsOnCrossing(t *testing.T) {
	r := newClockRig()
	beat := uint64(0)
	send := func(off time.Duration, n int) {
		for range n {
			beat++
			r.report("f", beat, 200*int(beat), off, time.Millisecond, 0)
		}
	}
	send(5*time.Second, 10)
	out := r.logs.String()
	require.Equal(t, 1, strings.Count(out, "level=WARN"), out)
	assert.Contains(t, out, `msg="clock offset over the bound: another node's wall clock differs from this node's" peer=f offset=5s bound=1s measured="from its reports, corrected by half the round trip" round_trip=2ms`)
	assert.Contains(t, out, "run NTP")
	o, _ := r.offset(t, "f")
	assert.True(t, o.Over)

	// The follower's clock is fixed (stepped back): the window forgets the
	// old samples within clockSamples reports.
	r.logs.Reset()
	send(100*time.Millisecond, clockSamples)
	assert.Contains(t, r.logs.String(), `level=INFO msg="clock offset back within the bound" peer=f offset=100ms`)
	o, _ = r.offset(t, "f")
	assert.False(t, o.Over)
	r.logs.Reset()
	send(-2*time.Second, clockSamples)
	assert.Equal(t, 1, strings.Count(r.logs.String(), "offset=-2s"), r.logs.String())
}

// With the leader's own clock off, every follower is off the same way: the
// leader says its own clock is the likely one, once, with its offset. One
// follower off among others that agree, or a single follower, is not that.
func TestClockOffsetNamesThisNodeWhenEveryFollowerIsOffTheSameWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		offs map[string]time.Duration
		self string // the offset the line names; "" for no line
	}{
		{"every follower behind", map[string]time.Duration{"a": -5 * time.Second, "b": -5 * time.Second, "c": -5 * time.Second}, "5s"},
		{"every follower ahead", map[string]time.Duration{"a": 3 * time.Second, "b": 3 * time.Second}, "-3s"},
		{"one follower off", map[string]time.Duration{"a": -5 * time.Second, "b": 0, "c": 0}, ""},
		{"off both ways", map[string]time.Duration{"a": -5 * time.Second, "b": 5 * time.Second}, ""},
		{"a single follower", map[string]time.Duration{"a": -5 * time.Second}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newClockRig()
			for beat := uint64(1); beat <= 5; beat++ {
				for from, off := range tc.offs {
					r.report(from, beat, 200*int(beat), off, time.Millisecond, 0)
				}
			}
			lines := strings.Count(r.logs.String(), "this node's wall clock differs from every follower's")
			if tc.self == "" {
				assert.Zero(t, lines, r.logs.String())
				return
			}
			assert.Equal(t, 1, lines, r.logs.String())
			assert.Contains(t, r.logs.String(), "offset="+tc.self+" followers=")
		})
	}
}

// Only a report that answers one of this node's heartbeats is paired: a
// report naming a heartbeat this node did not send (another term, a beat
// long gone) gives no sample; nor does a message without Sent (an older
// node) or of a type that does not carry it.
func TestClockOffsetPairsOnlyItsOwnHeartbeats(t *testing.T) {
	r := newClockRig()
	hb := protocol.Message{Type: protocol.Heartbeat, From: "me", Leader: "me", Term: 1, Beat: 7}
	r.w.stamp(&hb, r.t0, r.t0)
	at := r.t0.Add(time.Millisecond)
	for _, q := range []protocol.Message{
		{Type: protocol.Query, From: "f", Flags: protocol.FlagReport, Heard: protocol.Evidence{Term: 2, Beat: 7}, Sent: at.UnixNano()},
		{Type: protocol.Query, From: "f", Flags: protocol.FlagReport, Heard: protocol.Evidence{Term: 1, Beat: 7 + beatMemory}, Sent: at.UnixNano()},
		{Type: protocol.Query, From: "f", Flags: protocol.FlagReport, Heard: protocol.Evidence{Term: 1, Beat: 7}},
		{Type: protocol.Query, From: "f", Flags: protocol.FlagReport | protocol.FlagClient, Heard: protocol.Evidence{Term: 1, Beat: 7}, Sent: at.UnixNano()},
		{Type: protocol.Claim, From: "f", Heard: protocol.Evidence{Term: 1, Beat: 7}, Sent: at.UnixNano()},
		{Type: protocol.Heartbeat, From: "l", Heard: protocol.Evidence{Term: 1, Beat: 7}, Sent: at.UnixNano()},
	} {
		r.w.heard(r.log, &q, at, at, time.Time{})
	}
	assert.Empty(t, r.w.offsets(at))
	q := protocol.Message{Type: protocol.Query, From: "f", Flags: protocol.FlagReport, Heard: protocol.Evidence{Term: 1, Beat: 7}, Sent: at.UnixNano()}
	r.w.heard(r.log, &q, at.Add(time.Millisecond), at.Add(time.Millisecond), time.Time{})
	assert.Len(t, r.w.offsets(at), 1)
}
