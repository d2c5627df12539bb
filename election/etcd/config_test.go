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
