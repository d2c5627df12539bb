package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEndpointNames: the status endpoint answers to the names listed in
// http_hosts and to the host of http when that is a name, not an address.
func TestEndpointNames(t *testing.T) {
	for _, c := range []struct {
		http  string
		hosts []string
		want  []string
	}{
		{"127.0.0.1:7484", nil, []string{}},
		{":7484", []string{"nas.lan"}, []string{"nas.lan"}},
		{"nas.lan:7484", nil, []string{"nas.lan"}},
		{"nas.lan:7484", []string{"backup.lan"}, []string{"backup.lan", "nas.lan"}},
		{"[::1]:7484", []string{"nas.lan"}, []string{"nas.lan"}},
	} {
		got := endpointNames(settings{HTTP: c.http, HTTPHosts: c.hosts})
		if got == nil {
			got = []string{}
		}
		assert.Equal(t, c.want, got, "http %q, http_hosts %v", c.http, c.hosts)
	}
}
