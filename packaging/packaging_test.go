package packaging

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/lanleader/lanleader/config"
)

// The package layout both configs and the unit file must agree on.
const (
	binPath    = "/usr/bin/lanleader"
	configPath = "/etc/lanleader/lanleader.yaml"
	unitPath   = "/usr/lib/systemd/system/lanleader.service"
	stateDir   = "/var/lib/lanleader"
)

type content struct {
	Src      string `yaml:"src"`
	Dst      string `yaml:"dst"`
	Type     string `yaml:"type"`
	Expand   bool   `yaml:"expand"`
	FileInfo struct {
		Mode int `yaml:"mode"`
	} `yaml:"file_info"`
}

type nfpmConfig struct {
	Contents []content         `yaml:"contents"`
	Scripts  map[string]string `yaml:"scripts"`
	License  string            `yaml:"license"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, v), path)
}

// TestGoreleaserMatchesNFPM: the packages CI builds (packaging/nfpm.yaml)
// are the ones a release ships (.goreleaser.yaml): same files, modes,
// types and scripts. goreleaser adds the binary itself (bindir).
func TestGoreleaserMatchesNFPM(t *testing.T) {
	var nf nfpmConfig
	readYAML(t, "nfpm.yaml", &nf)
	var gr struct {
		Nfpms []struct {
			nfpmConfig `yaml:",inline"`
			Bindir     string   `yaml:"bindir"`
			Formats    []string `yaml:"formats"`
		} `yaml:"nfpms"`
		Builds []struct {
			Env    []string `yaml:"env"`
			Goarch []string `yaml:"goarch"`
			Goarm  []string `yaml:"goarm"`
		} `yaml:"builds"`
	}
	readYAML(t, "../.goreleaser.yaml", &gr)
	require.Len(t, gr.Nfpms, 1)
	g := gr.Nfpms[0]
	assert.ElementsMatch(t, []string{"deb", "rpm"}, g.Formats)
	assert.Equal(t, filepath.Dir(binPath), g.Bindir)
	assert.Equal(t, nf.Scripts, g.Scripts)
	assert.Equal(t, nf.License, g.License)

	var rest []content
	for _, c := range nf.Contents {
		if c.Dst == binPath {
			assert.True(t, c.Expand, "the binary's src is ${BINARY}: needs expand")
			assert.Equal(t, 0o755, c.FileInfo.Mode)
			continue
		}
		rest = append(rest, c)
	}
	assert.Len(t, rest, len(nf.Contents)-1, "nfpm.yaml must install %s", binPath)
	assert.Equal(t, rest, g.Contents)

	require.Len(t, gr.Builds, 1)
	assert.Contains(t, gr.Builds[0].Env, "CGO_ENABLED=0", "release binaries must be static")
	assert.ElementsMatch(t, []string{"amd64", "arm64", "arm"}, gr.Builds[0].Goarch)
	assert.Equal(t, []string{"7"}, gr.Builds[0].Goarm)
}

// TestPackageLayout: the unit, the config and the state directory are where
// the unit file and the scripts expect them, and every source file exists.
func TestPackageLayout(t *testing.T) {
	var nf nfpmConfig
	readYAML(t, "nfpm.yaml", &nf)
	byDst := map[string]content{}
	for _, c := range nf.Contents {
		byDst[c.Dst] = c
		if !c.Expand && c.Src != "" {
			assert.FileExists(t, filepath.Join("..", c.Src), "source of %s", c.Dst)
		}
	}
	assert.Equal(t, "docs/systemd/lanleader.service", byDst[unitPath].Src)
	assert.Equal(t, "config|noreplace", byDst[configPath].Type, "an upgrade must not overwrite the admin's config")
	assert.Equal(t, "dir", byDst[stateDir].Type)
	for phase, path := range nf.Scripts {
		info, err := os.Stat(filepath.Join("..", path))
		if assert.NoError(t, err, phase) {
			assert.NotZero(t, info.Mode()&0o111, "%s is not executable", path)
		}
	}

	unit, err := os.ReadFile("../docs/systemd/lanleader.service")
	require.NoError(t, err)
	exec := regexp.MustCompile(`(?m)^ExecStart=(\S+) run --config (\S+)$`).FindSubmatch(unit)
	require.NotNil(t, exec, "unit has no ExecStart=BIN run --config FILE line")
	assert.Equal(t, binPath, string(exec[1]))
	assert.Equal(t, configPath, string(exec[2]))
	assert.Regexp(t, `(?m)^User=lanleader$`, string(unit), "the scripts create user lanleader for the unit")
}

// TestScriptsStartNothing: installing must not enable or start the daemon
// (the config must be edited first, the same on every node).
func TestScriptsStartNothing(t *testing.T) {
	for _, name := range []string{"preinstall.sh", "postinstall.sh"} {
		b, err := os.ReadFile(filepath.Join("scripts", name))
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "echo ") {
				continue // advice to the admin, not a command
			}
			assert.NotRegexp(t, `systemctl\s+(--\S+\s+)*(start|enable|restart|reload-or-restart)\b`, line,
				"%s:%d", name, i+1)
		}
	}
}

// TestDefaultConfigLoads: the config the package installs is valid as is.
func TestDefaultConfigLoads(t *testing.T) {
	f, err := config.Load("lanleader.yaml")
	require.NoError(t, err)
	assert.Equal(t, "udp", f.Election.Mode)
	assert.Empty(t, f.Jobs)
	require.NotNil(t, f.Election.HTTP)
	assert.Regexp(t, `^127\.0\.0\.1:`, *f.Election.HTTP, "the status page stays on loopback by default")
}
