package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpOnStdout checks the CLI conventions: help of every form goes to
// stdout with exit 0, names double-dash flags and shows examples.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"help", "run"}, {"run", "--help"}, {"run", "-h"}} {
		code, stdout, stderr := runCLI(t, args...)
		require.Equal(t, ExitOK, code, "%v: %s", args, stderr)
		assert.Empty(t, stderr, "%v", args)
		assert.Contains(t, stdout, "Usage:\n  lanleader run [flags]", "%v", args)
		assert.Contains(t, stdout, "Examples:\n  lanleader run --config", "%v", args)
		assert.Contains(t, stdout, "  -c, --config string", "%v", args)
		assert.Contains(t, stdout, "--mode string", "%v", args)
		assert.Contains(t, stdout, "election mode: static, env or udp", "%v", args)
	}
	code, stdout, _ := runCLI(t, "help")
	require.Equal(t, ExitOK, code)
	for _, c := range []string{"run", "check-config", "status", "who", "demo", "version", "completion"} {
		assert.Contains(t, stdout, "\n  "+c+" ", "help lists %s", c)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, _ := runCLI(t, args...)
		require.Equal(t, ExitOK, code, "%v", args)
		assert.Regexp(t, `^lanleader \S+ \(go1\.\d+.*\)\n$`, stdout, "%v", args)
	}
}

func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_lanleader", "zsh": "#compdef lanleader", "fish": "complete -c lanleader"} {
		code, stdout, stderr := runCLI(t, "completion", shell)
		require.Equal(t, ExitOK, code, "%s: %s", shell, stderr)
		assert.Contains(t, stdout, want, shell)
	}
}

// TestManPages: one page per command, from the same definitions as help.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, "man", "--dir", dir)
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, dir)
	for _, page := range []string{"lanleader.1", "lanleader-run.1", "lanleader-check-config.1", "lanleader-status.1", "lanleader-who.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		require.NoError(t, err, page)
		assert.Contains(t, string(b), ".SH SYNOPSIS", page)
	}
	b, err := os.ReadFile(filepath.Join(dir, "lanleader-run.1"))
	require.NoError(t, err)
	assert.Contains(t, string(b), `\fB--stop-grace\fP`, "flags come from the command definitions")
}

// TestHelpUnknownTopic: "help X" for no command X is a usage error naming
// X (cobra's default printed the root's help and exited 0).
func TestHelpUnknownTopic(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"help", "nothing"}, `lanleader help: unknown help topic "nothing"`},
		{[]string{"help", "stauts"}, `unknown help topic "stauts" (did you mean "status"?)`},
		{[]string{"help", "run", "extra"}, `unknown help topic "run extra"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, tt.args...)
		assert.Equal(t, ExitUsage, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
		assert.Empty(t, stdout, "%v", tt.args)
	}
}
