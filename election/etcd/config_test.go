package etcd

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, []byte("x"), 0o600))
	pwFile := filepath.Join(dir, "password")
	require.NoError(t, os.WriteFile(pwFile, []byte("s3cret\n"), 0o600))
	emptyPw := filepath.Join(dir, "empty-password")
	require.NoError(t, os.WriteFile(emptyPw, []byte("\n"), 0o600))
	missingPw := filepath.Join(dir, "nope-password")
	ok := Config{NodeID: "n1", Endpoints: []string{"http://127.0.0.1:2379", "etcd2:2379"}}
	tests := []struct {
		name string
		edit func(*Config)
		want string // substring of the error; empty means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no node", func(c *Config) { c.NodeID = "" }, "node_id: empty"},
		{"no endpoints", func(c *Config) { c.Endpoints = nil }, "endpoints: none given"},
		{"bad scheme", func(c *Config) { c.Endpoints = []string{"unix:///x"} }, `"unix:///x": scheme "unix"`},
		{"no port", func(c *Config) { c.Endpoints = []string{"etcd1"} }, `"etcd1": want http(s)://host:port`},
		{"http with TLS", func(c *Config) { c.TLS.CA = ca }, "plain http, but TLS files are configured"},
		{"https with CA", func(c *Config) { c.TLS.CA = ca; c.Endpoints = []string{"https://e:2379"} }, ""},
		{"missing CA", func(c *Config) { c.TLS.CA = filepath.Join(dir, "nope.pem"); c.Endpoints = []string{"https://e:2379"} }, "ca_file: stat"},
		{"cert without key", func(c *Config) { c.TLS.Cert = ca; c.Endpoints = []string{"https://e:2379"} }, "give both or neither"},
		{"user with password", func(c *Config) { c.Username = "u"; c.Password = "p" }, ""},
		{"user with password file", func(c *Config) { c.Username = "u"; c.PasswordFile = pwFile }, ""},
		{"user without password", func(c *Config) { c.Username = "u" }, `username: "u" without a password: set password_file or LANLEADER_ETCD_PASSWORD`},
		{"password without user", func(c *Config) { c.Password = "p" }, "username: empty, but a password is given"},
		{"password file without user", func(c *Config) { c.PasswordFile = pwFile }, "username: empty, but a password is given"},
		{"password file and password", func(c *Config) { c.Username = "u"; c.Password = "p"; c.PasswordFile = pwFile },
			"password_file: " + `"` + pwFile + `", and a password is also given directly (LANLEADER_ETCD_PASSWORD): give one`},
		{"missing password file", func(c *Config) { c.Username = "u"; c.PasswordFile = missingPw },
			"password_file: open " + missingPw + ": no such file"},
		{"password file a directory", func(c *Config) { c.Username = "u"; c.PasswordFile = dir },
			"password_file: read " + dir + ": is a directory"},
		{"empty password file", func(c *Config) { c.Username = "u"; c.PasswordFile = emptyPw },
			"password_file: " + `"` + emptyPw + `": empty`},
		{"relative prefix", func(c *Config) { c.Prefix = "lanleader" }, `prefix: "lanleader"`},
		{"root prefix", func(c *Config) { c.Prefix = "/" }, `prefix: ""`},
		{"short TTL", func(c *Config) { c.SessionTTL = time.Second }, "session_ttl: 1s: at least 2s"},
		{"fractional TTL", func(c *Config) { c.SessionTTL = 2500 * time.Millisecond }, "whole seconds"},
		{"big margin", func(c *Config) { c.Margin = 6 * time.Second }, "margin: 6s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.withDefaults().Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var fe *FieldError
			assert.ErrorAs(t, err, &fe, "every problem names its field")
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Prefix: "/x/"}.withDefaults()
	assert.Equal(t, "/x", c.Prefix)
	assert.Equal(t, DefaultSessionTTL, c.SessionTTL)
	assert.Equal(t, DefaultSessionTTL/10, c.Margin)
	assert.Equal(t, DefaultPrefix, Config{}.withDefaults().Prefix)
}

func TestConfigPasswordFromFile(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{"s3cret\n": "s3cret", "s3cret": "s3cret", "s3cret\r\n": "s3cret", " two words \n\n": " two words \n"} {
		f := filepath.Join(dir, "pw")
		require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
		got, err := Config{PasswordFile: f}.password()
		require.NoError(t, err)
		assert.Equal(t, want, got, "file content %q", content)
	}
	got, err := Config{Password: "direct"}.password()
	require.NoError(t, err)
	assert.Equal(t, "direct", got)
}
