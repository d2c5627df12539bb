package version

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFromBuildInfo(t *testing.T) {
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"go install @version", debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"checkout with vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "false"}}}, "(devel)+0123456789ab"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, rev}}, "(devel)+0123456789ab-dirty"},
		{"no module version", debug.BuildInfo{}, "(devel)"},
		{"short revision ignored", debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "v0.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fromBuildInfo(&tc.info))
		})
	}
}

func TestLinkerVersionWins(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v9.9.9"
	assert.Equal(t, "v9.9.9", String())
}
