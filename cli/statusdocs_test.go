package cli

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election/udp"
	"github.com/lanleader/lanleader/election/udp/protocol"
)

// Every `extra.…` path that docs/operations.md names is in udp mode's
// /status, as a reader would look it up: in quorum mode, with every part
// that can appear present.
func TestOperationsDocNamesRealStatusPaths(t *testing.T) {
	doc, err := os.ReadFile("../docs/operations.md")
	require.NoError(t, err)
	v := newUDPView(protocol.Stats{}, protocol.QuorumStatus{Size: 3, Majority: 2}, udp.TransportStats{})
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var extra map[string]any
	require.NoError(t, json.Unmarshal(b, &extra))

	paths := regexp.MustCompile("`extra\\.([a-z_.]+)").FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, paths, "operations.md names /status paths under extra")
	for _, p := range paths {
		var at any = extra
		for _, key := range strings.Split(strings.TrimSuffix(p[1], "."), ".") {
			m, ok := at.(map[string]any)
			if !assert.True(t, ok, "extra.%s: %v is not an object", p[1], at) {
				break
			}
			at, ok = m[key]
			if !assert.True(t, ok, "operations.md names extra.%s: /status has no %q there (keys: %v)", p[1], key, slices.Sorted(maps.Keys(m))) {
				break
			}
		}
	}
}
