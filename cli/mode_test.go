package cli

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/jobs"
)

// fakeSettings is a mode built as another module would build one: its own
// section election.fake and its own prefixed flags.
type fakeSettings struct {
	Term  uint64 `yaml:"term"`
	Label string `yaml:"label"`

	built *Env // set by New
	// noCluster builds an Elector without its jobs.Cluster: a mode wired
	// wrong.
	noCluster bool
}

func (s *fakeSettings) Load(src *Source) error {
	var file fakeSettings
	if _, err := src.Decode("fake", &file); err != nil {
		return err
	}
	if file.Term != 0 && !src.Changed("fake-term") {
		s.Term = file.Term
	}
	if file.Label != "" && !src.Changed("fake-label") {
		s.Label = file.Label
	}
	if s.Term == 0 {
		return src.Problem("fake.term", "fake-term", "must be positive")
	}
	return nil
}

func (s *fakeSettings) Succession() election.Succession { return election.Succession{} }

func (s *fakeSettings) New(env Env) (*Elector, error) {
	s.built = &env
	el := election.NewFixed(election.FixedConfig{
		Mode: "fake", Node: env.NodeID, Leads: true, Term: s.Term, Logger: env.Logger,
	})
	if s.noCluster {
		return &Elector{Elector: el}, nil
	}
	return &Elector{Elector: el, Cluster: jobs.Alone(el)}, nil
}

// fakeMode returns the mode; *got is set to the settings of the command
// that loaded them (every command with run's flags gets its own).
func fakeMode(got **fakeSettings) Mode {
	return Mode{
		Name:    "fake",
		Summary: "a test mode registered from outside the built-ins",
		Keys:    []string{"fake"},
		Setup: func(fs *pflag.FlagSet) ModeSettings {
			s := &fakeSettings{}
			fs.Uint64Var(&s.Term, "fake-term", 0, "fake mode: the term")
			fs.StringVar(&s.Label, "fake-label", "", "fake mode: a label")
			return &loadTracker{s, got}
		},
	}
}

func execute(args []string, modes ...Mode) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), args, &out, &errOut, modes...)
	return code, out.String(), errOut.String()
}

func TestExtraModeCheckConfig(t *testing.T) {
	var got *fakeSettings
	code, stdout, stderr := execute([]string{"check-config", "testdata/fake_mode.yaml"}, fakeMode(&got))
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "testdata/fake_mode.yaml: ok (mode fake, 1 jobs)")
	assert.Equal(t, uint64(7), got.Term, "read from election.fake.term")
	assert.Equal(t, "from-file", got.Label)

	// A flag given explicitly wins over the file.
	code, _, stderr = execute([]string{"check-config", "testdata/fake_mode.yaml", "--fake-label", "from-flag"}, fakeMode(&got))
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "from-flag", got.Label)
	assert.Equal(t, uint64(7), got.Term)

	// Without the mode registered, its section is an unknown key.
	code, _, stderr = execute([]string{"check-config", "testdata/fake_mode.yaml"})
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, stderr, "testdata/fake_mode.yaml:6: election.fake: unknown key")
}

func TestExtraModeBadSection(t *testing.T) {
	var got *fakeSettings
	code, _, stderr := execute([]string{"check-config", "testdata/fake_mode_bad.yaml"}, fakeMode(&got))
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, stderr, `testdata/fake_mode_bad.yaml:5: election.fake.lable: unknown key (did you mean "label"?)`)

	code, _, stderr = execute([]string{"check-config", "testdata/fake_mode.yaml", "--fake-term", "0"}, fakeMode(&got))
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, stderr, "--fake-term: must be positive")
}

func TestExtraModeTypeError(t *testing.T) {
	var got *fakeSettings
	f := t.TempDir() + "/f.yaml"
	require.NoError(t, os.WriteFile(f, []byte("election:\n  mode: fake\n  fake:\n    term: seven\n"), 0o600))
	code, _, stderr := execute([]string{"check-config", f}, fakeMode(&got))
	assert.Equal(t, ExitConfig, code)
	assert.Contains(t, stderr, f+":4: election.fake: cannot unmarshal")
}

// TestExtraModeRuns checks that run builds the registered mode's Elector
// with the node id and drives it: the fake node leads at its term.
func TestExtraModeRuns(t *testing.T) {
	var got *fakeSettings
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the fixed elector reports its decision, then stops at once
	var out, errOut bytes.Buffer
	code := Execute(ctx, []string{"run", "--config", "testdata/fake_mode.yaml", "--log-format", "json"}, &out, &errOut, fakeMode(&got))
	require.Equal(t, ExitOK, code, errOut.String())
	require.NotNil(t, got.built, "run must build the chosen mode's elector")
	assert.Equal(t, "n1", got.built.NodeID)
	assert.NotNil(t, got.built.Ledger)
	assert.NotNil(t, got.built.AdoptLedger)
	assert.Contains(t, errOut.String(), `"msg":"became leader","node":"n1","term":7`)
}

// A mode whose Elector has no jobs.Cluster is refused before any job can
// run: the runner would not know whether this node may act.
func TestExtraModeWithoutClusterIsRefused(t *testing.T) {
	var got *fakeSettings
	m := fakeMode(&got)
	setup := m.Setup
	m.Setup = func(fs *pflag.FlagSet) ModeSettings {
		lt := setup(fs).(*loadTracker)
		lt.fakeSettings.noCluster = true
		return lt
	}
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), []string{"run", "--config", "testdata/fake_mode.yaml"}, &out, &errOut, m)
	assert.NotEqual(t, ExitOK, code)
	assert.Contains(t, errOut.String(), "mode fake: its Elector has no jobs.Cluster")
}

func TestModeRegistryRefusesDuplicates(t *testing.T) {
	var got *fakeSettings
	assert.PanicsWithValue(t, `cli: mode "fake" registered twice`, func() {
		execute([]string{"version"}, fakeMode(&got), fakeMode(&got))
	})
	clash := fakeMode(&got)
	clash.Name = "clash"
	clash.Keys = []string{"port"}
	assert.PanicsWithValue(t, "cli: election.port claimed by both udp and clash", func() {
		execute([]string{"version"}, clash)
	})
}

// loadTracker points *got at the settings that were loaded.
type loadTracker struct {
	*fakeSettings
	got **fakeSettings
}

func (l *loadTracker) Load(src *Source) error {
	*l.got = l.fakeSettings
	return l.fakeSettings.Load(src)
}

func pflagSet() *pflag.FlagSet { return pflag.NewFlagSet("test", pflag.ContinueOnError) }
