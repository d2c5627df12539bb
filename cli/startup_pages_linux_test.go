package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rssFile is this process's resident file-backed memory in kB.
func rssFile(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "RssFile:" {
			kb, err := strconv.Atoi(f[1])
			require.NoError(t, err)
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseStartupPages: the executable's unwritten pages leave the
// process's resident set, and the code keeps running (it faults back in).
func TestReleaseStartupPages(t *testing.T) {
	before := rssFile(t)
	n, err := releaseStartupPages()
	require.NoError(t, err)
	assert.Positive(t, n)
	assert.Less(t, rssFile(t), before)
	s, err := os.ReadFile("/proc/self/smaps_rollup") // code and data still work
	require.NoError(t, err)
	assert.Contains(t, string(s), "Rss:")
}

func TestMappingRange(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [2]uint64
		ok   bool
	}{
		{"00400000-00a71000 r-xp 00000000 fd:01 1234 /usr/bin/lanleader", [2]uint64{0x400000, 0xa71000}, true},
		{"7ffcb5142000-7ffcb5163000 rw-p 00000000 00:00 0 [stack]", [2]uint64{0x7ffcb5142000, 0x7ffcb5163000}, true},
		{"Rss:                5956 kB", [2]uint64{}, false},
		{"VmFlags: rd ex mr mw me dw sd", [2]uint64{}, false},
		{"00a71000-00400000 r-xp 0 0 0", [2]uint64{}, false},
	} {
		got, ok := mappingRange(tc.line)
		assert.Equal(t, tc.ok, ok, tc.line)
		assert.Equal(t, tc.want, got, tc.line)
	}
}
