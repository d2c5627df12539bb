package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lanleader/lanleader/jobs"
)

// TestParseHTTPJob: an http: job decodes with every key.
func TestParseHTTPJob(t *testing.T) {
	f, err := Parse("d.yaml", []byte(`jobs:
  - name: digest
    schedule: "30 6 * * *"
    timeout: 2m
    http:
      method: PUT
      url: http://127.0.0.1:8080/jobs/digest
      headers:
        Authorization: Bearer s3cret
      body: '{"kind": "family"}'
      accept: [200, 2xx]
`))
	require.NoError(t, err)
	require.Len(t, f.Jobs, 1)
	assert.Equal(t, &jobs.HTTPRequest{Method: "PUT", URL: "http://127.0.0.1:8080/jobs/digest",
		Headers: map[string]string{"Authorization": "Bearer s3cret"}, Body: `{"kind": "family"}`,
		Accept: []string{"200", "2xx"}}, f.Jobs[0].HTTP)
}

// TestParseHTTPJobErrors: every bad input in an http: job names the file,
// the line and the key (one header by name).
func TestParseHTTPJobErrors(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	job := func(body string) string {
		return "jobs:\n  - name: a\n    schedule: '* * * * *'\n" + body
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad header name", job("    http:\n      url: http://app/x\n      headers:\n        Good: yes\n        Bad Header: x\n"),
			`d.yaml:8: jobs[0].http.headers.Bad Header: "Bad Header" is not a header name`},
		{"header with a line break", job("    http:\n      url: http://app/x\n      headers:\n        X-Note: \"a\\r\\nX-Evil: 1\"\n"),
			`d.yaml:7: jobs[0].http.headers.X-Note: value has a line break or control character`},
		{"reserved header", job("    http:\n      url: http://app/x\n      headers:\n        idempotency-key: mine\n"),
			`d.yaml:7: jobs[0].http.headers.idempotency-key: set by lanleader (the run's identity, or computed): remove it`},
		{"identity header", job("    http:\n      url: http://app/x\n      headers:\n        Lanleader-Term: \"9\"\n"),
			`d.yaml:7: jobs[0].http.headers.Lanleader-Term: set by lanleader`},
		{"one header twice", job("    http:\n      url: http://app/x\n      headers:\n        X-A: 1\n        x-a: 2\n"),
			`jobs[0].http.headers.x-a: the same header as "X-A" (names are case-insensitive)`},
		{"header value not a string", job("    http:\n      url: http://app/x\n      headers:\n        X-A: [1]\n"),
			`d.yaml:7: jobs[0].http.headers.X-A: expected a string, found a list`},
		{"missing url", job("    http:\n      method: GET\n"), `d.yaml:5: jobs[0].http.url: required`},
		{"not http", job("    http:\n      url: ftp://nas/x\n"), `d.yaml:5: jobs[0].http.url: "ftp://nas/x": want an http:// or https:// URL`},
		{"no host", job("    http:\n      url: http:///x\n"), `d.yaml:5: jobs[0].http.url: "http:///x" has no host`},
		{"bad url", job("    http:\n      url: 'http://app:port/x'\n"), `d.yaml:5: jobs[0].http.url: "http://app:port/x": invalid port ":port" after host`},
		{"port out of range", job("    http:\n      url: 'http://app:99999/x'\n"), `d.yaml:5: jobs[0].http.url: "http://app:99999/x": port 99999 is not 1-65535`},
		{"port zero", job("    http:\n      url: 'http://app:0/x'\n"), `d.yaml:5: jobs[0].http.url: "http://app:0/x": port 0 is not 1-65535`},
		{"bad method", job("    http:\n      url: http://app/x\n      method: 'GET /'\n"), `d.yaml:6: jobs[0].http.method: "GET /" is not a method`},
		{"bad accept", job("    http:\n      url: http://app/x\n      accept: [200, 6xx]\n"), `d.yaml:6: jobs[0].http.accept: "6xx" is not a status code (100-599) or class (1xx-5xx)`},
		{"ca_file missing", job("    http:\n      url: https://app/x\n      ca_file: /nonexistent/ca.pem\n"),
			`d.yaml:6: jobs[0].http.ca_file: open /nonexistent/ca.pem: no such file or directory`},
		{"ca_file not PEM", job("    http:\n      url: https://app/x\n      ca_file: " + notPEM + "\n"), `d.yaml:6: jobs[0].http.ca_file: ` + notPEM + `: no PEM certificate in it`},
		{"ca_file for http", job("    http:\n      url: http://app/x\n      ca_file: " + notPEM + "\n"), `jobs[0].http.ca_file: given for "http://app/x", which is not https`},
		{"unknown key", job("    http:\n      url: http://app/x\n      headres: {}\n"), `d.yaml:6: jobs[0].http.headres: unknown key (did you mean "headers"?)`},
		{"http and shell", job("    shell: 'true'\n    http:\n      url: http://app/x\n"), `d.yaml:6: jobs[0].http: http and shell are mutually exclusive`},
		{"dir with http", job("    dir: /srv\n    http:\n      url: http://app/x\n"), `d.yaml:4: jobs[0].dir: only for command and shell jobs`},
		{"kill_grace with http", job("    kill_grace: 5s\n    http:\n      url: http://app/x\n"), `d.yaml:4: jobs[0].kill_grace: only for command and shell jobs`},
		{"http not a mapping", job("    http: http://app/x\n"), `d.yaml:4: jobs[0].http: expected a mapping of method, url, headers, body, accept, ca_file, found "http://app/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("d.yaml", []byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
