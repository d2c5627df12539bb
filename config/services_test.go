package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/jobs"
)

// TestParseServices: a services: list decodes with every key.
func TestParseServices(t *testing.T) {
	f, err := Parse("d.yaml", []byte(`services:
  - name: scheduler
    command: [/usr/bin/python3, -m, app.scheduler]
    dir: /srv/app
    env: {APP_ENV: prod}
    stop_grace: 20s
    restart_delay: 2s
    restart_max_delay: 5m
  - name: consumer
    shell: exec ./consume
`))
	require.NoError(t, err)
	assert.Equal(t, []jobs.ServiceSpec{
		{Name: "scheduler", Command: []string{"/usr/bin/python3", "-m", "app.scheduler"}, Dir: "/srv/app",
			Env: map[string]string{"APP_ENV": "prod"}, StopGrace: 20 * time.Second, RestartDelay: 2 * time.Second, RestartMaxDelay: 5 * time.Minute},
		{Name: "consumer", Shell: "exec ./consume"},
	}, f.Services)
}

// TestParseServiceErrors: each problem names the file, the line and the
// key.
func TestParseServiceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no command", "services:\n  - name: s\n", `d.yaml:2: services[0].command: one of command (argv list) or shell (string) is required`},
		{"no name", "services:\n  - shell: x\n", `d.yaml:2: services[0].name: required`},
		{"duplicate", "services:\n  - name: s\n    shell: x\n  - name: s\n    shell: y\n", `d.yaml:4: services[1].name: "s" already used by services[0] (line 2)`},
		{"unknown key", "services:\n  - name: s\n    shell: x\n    schedule: '@daily'\n", `d.yaml:4: services[0].schedule: unknown key`},
		{"bad duration", "services:\n  - name: s\n    shell: x\n    stop_grace: soon\n", `d.yaml:4: services[0].stop_grace: "soon": not a duration`},
		{"negative", "services:\n  - name: s\n    shell: x\n    restart_delay: -1s\n", `d.yaml:4: services[0].restart_delay: "-1s": must not be negative`},
		{"both", "services:\n  - name: s\n    shell: x\n    command: [y]\n", `d.yaml:3: services[0].shell: command and shell are mutually exclusive`},
		{"not a list", "services: {s: x}\n", `d.yaml:1: services: expected a list of services, found a mapping`},
		{"named like a job's entry", "jobs:\n  - name: 'service:s'\n    schedule: '@daily'\n    shell: x\nservices:\n  - name: s\n    shell: y\n",
			`d.yaml:6: services[0].name: "s" has the ledger id of job service:s; rename one`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("d.yaml", []byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
