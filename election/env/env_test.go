package env_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/electiontest"
	"github.com/lanleader/lanleader/election/env"
)

// environ is a fake environment.
func environ(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func hostname() (string, error) { return "app-1", nil }

func TestValues(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		varName string
		leads   bool
		wantErr []string
	}{
		{name: "true", vars: map[string]string{"LANLEADER_LEADER": "true"}, leads: true},
		{name: "TRUE", vars: map[string]string{"LANLEADER_LEADER": "TRUE"}, leads: true},
		{name: "1", vars: map[string]string{"LANLEADER_LEADER": "1"}, leads: true},
		{name: "yes", vars: map[string]string{"LANLEADER_LEADER": "yes"}, leads: true},
		{name: "Yes with spaces", vars: map[string]string{"LANLEADER_LEADER": " Yes\n"}, leads: true},
		{name: "false", vars: map[string]string{"LANLEADER_LEADER": "false"}, leads: false},
		{name: "False", vars: map[string]string{"LANLEADER_LEADER": "False"}, leads: false},
		{name: "0", vars: map[string]string{"LANLEADER_LEADER": "0"}, leads: false},
		{name: "no", vars: map[string]string{"LANLEADER_LEADER": "NO"}, leads: false},
		{name: "empty", vars: map[string]string{"LANLEADER_LEADER": ""}, leads: false},
		{name: "unset", vars: map[string]string{}, leads: false},
		{name: "other variable set is ignored", vars: map[string]string{"OTHER": "true"}, leads: false},
		{name: "custom variable", varName: "IS_PRIMARY",
			vars: map[string]string{"IS_PRIMARY": "1", "LANLEADER_LEADER": "0"}, leads: true},
		{name: "custom variable unset ignores the default one", varName: "IS_PRIMARY",
			vars: map[string]string{"LANLEADER_LEADER": "1"}, leads: false},
		{name: "bad value", vars: map[string]string{"LANLEADER_LEADER": "maybe"},
			wantErr: []string{`LANLEADER_LEADER="maybe"`, "true, 1 or yes"}},
		{name: "on is not accepted", vars: map[string]string{"LANLEADER_LEADER": "on"},
			wantErr: []string{`LANLEADER_LEADER="on"`}},
		{name: "2 is not accepted", vars: map[string]string{"LANLEADER_LEADER": "2"},
			wantErr: []string{`LANLEADER_LEADER="2"`}},
		{name: "bad value names the custom variable", varName: "IS_PRIMARY",
			vars: map[string]string{"IS_PRIMARY": "tru"}, wantErr: []string{`IS_PRIMARY="tru"`}},
		{name: "bad variable name", varName: "A=B", vars: map[string]string{},
			wantErr: []string{`"A=B"`, "not a valid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := env.New(env.Config{Var: tt.varName, LookupEnv: environ(tt.vars), Hostname: hostname})
			if tt.wantErr != nil {
				require.Error(t, err)
				assert.Nil(t, e)
				for _, s := range tt.wantErr {
					assert.Contains(t, err.Error(), s)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.leads, e.Leads(), e.Reason())
		})
	}
}

func TestNodeID(t *testing.T) {
	e, err := env.New(env.Config{NodeID: "worker-7", LookupEnv: environ(nil),
		Hostname: func() (string, error) { return "", errors.New("must not be asked") }})
	require.NoError(t, err)
	assert.Equal(t, "worker-7", e.Status().Node)

	e, err = env.New(env.Config{LookupEnv: environ(nil), Hostname: hostname})
	require.NoError(t, err)
	assert.Equal(t, "app-1", e.Status().Node)

	_, err = env.New(env.Config{LookupEnv: environ(nil), Hostname: func() (string, error) { return "", errors.New("boom") }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "boom")
}

func TestDefaultLookupEnv(t *testing.T) {
	t.Setenv(env.DefaultVar, "yes")
	e, err := env.New(env.Config{NodeID: "n"})
	require.NoError(t, err)
	assert.True(t, e.Leads())

	t.Setenv("LANLEADER_TEST_CUSTOM", "bogus")
	_, err = env.New(env.Config{NodeID: "n", Var: "LANLEADER_TEST_CUSTOM"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LANLEADER_TEST_CUSTOM="bogus"`)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name        string
		value       string
		whileRun    election.Status
		runEvents   []string
		finalEvents []string
		final       election.Status
		logged      string
	}{
		{
			name:  "leader",
			value: "true",
			whileRun: election.Status{Node: "app-1", Role: election.Leader, Term: 1,
				Leader: election.LeaderInfo{ID: "app-1", Term: 1}},
			runEvents:   []string{"new:app-1/1", "start:1"},
			finalEvents: []string{"stop(ctx cancelled=true)", "new:/0"},
			final:       election.Status{Node: "app-1", Role: election.Follower, Term: 1},
			logged:      `msg="env: this node leads" reason="LANLEADER_LEADER=\"true\""`,
		},
		{
			name:        "follower",
			value:       "0",
			whileRun:    election.Status{Node: "app-1", Role: election.Follower, Term: 1},
			runEvents:   nil,
			finalEvents: nil,
			final:       election.Status{Node: "app-1", Role: election.Follower, Term: 1},
			logged:      `msg="env: this node follows" reason="LANLEADER_LEADER=\"0\""`,
		},
	}
	noSince := func(s election.Status) election.Status { s.Since = time.Time{}; return s }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs bytes.Buffer
				e, err := env.New(env.Config{
					LookupEnv: environ(map[string]string{env.DefaultVar: tt.value}),
					Hostname:  hostname,
					Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
				})
				require.NoError(t, err)
				assert.Equal(t, election.Status{Node: "app-1", Role: election.Follower}, e.Status())
				assert.False(t, e.Joined(), "joined before Run")

				rec := &electiontest.Recorder{}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- e.Run(ctx, rec.Callbacks()) }()
				synctest.Wait()

				assert.Equal(t, tt.runEvents, rec.Events)
				assert.Equal(t, tt.whileRun, noSince(e.Status()))
				assert.True(t, e.Joined())
				assert.Contains(t, logs.String(), tt.logged)
				select {
				case err := <-done:
					t.Fatalf("Run returned %v before ctx was done", err)
				default:
				}
				rec.Events = nil

				cancel()
				require.NoError(t, <-done)
				assert.Equal(t, tt.finalEvents, rec.Events)
				assert.Equal(t, tt.final, noSince(e.Status()))
				if rec.Ctx != nil {
					assert.Error(t, rec.Ctx.Err())
				}
			})
		})
	}
}

func TestRunTwice(t *testing.T) {
	e, err := env.New(env.Config{NodeID: "n", LookupEnv: environ(nil)})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.NoError(t, e.Run(ctx, election.Callbacks{}))
	err = e.Run(ctx, election.Callbacks{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "twice")
}
