package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTriggerCommandErrors(t *testing.T) {
	code, _, errOut := runCLI(t, "trigger")
	assert.Equal(t, ExitUsage, code, "a job name is required")
	assert.Contains(t, errOut, "job name")

	// Nobody answers on loopback unicast to a closed port: the ticket
	// request got no answer, so the command says nothing ran, and how to
	// pass the key.
	code, _, errOut = runCLI(t, "trigger", "--transport", "unicast", "--peers", "127.0.0.1:9", "--bind", "127.0.0.1",
		"--timeout", "200ms", "backup")
	assert.Equal(t, ExitFailure, code, errOut)
	assert.Contains(t, errOut, "no leader of cluster")
	assert.Contains(t, errOut, "--secret-file")
	assert.Contains(t, errOut, "nothing ran")

	code, _, errOut = runCLI(t, "trigger", "--transport", "unicast", "--peers", "127.0.0.1:9", "--bind", "127.0.0.1",
		"--timeout", "200ms", strings.Repeat("x", 200))
	assert.Equal(t, ExitUsage, code, errOut)
	assert.Contains(t, errOut, "name of 200 bytes")

	code, _, errOut = runCLI(t, "trigger", "--secret-file", "/nonexistent/key", "backup")
	assert.Equal(t, ExitConfig, code, errOut)
}

func TestExitStatusCarriesTheJobsCode(t *testing.T) {
	err := error(exitStatus{code: 7, err: errors.New("run x failed")})
	var es exitStatus
	assert.True(t, errors.As(err, &es))
	assert.Equal(t, 7, es.code)
}
