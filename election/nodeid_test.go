package election_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/election/udp/wire"
)

func TestCheckNodeID(t *testing.T) {
	tests := []struct {
		id   string
		want string // error contains; "" means valid
	}{
		{"web1", ""},
		{"web-1.example.org", ""},
		{"büro/rack:2@dc", ""},
		{"\ufffd", ""}, // a literal U+FFFD is valid UTF-8
		{strings.Repeat("n", 64), ""},
		{"", "empty"},
		{strings.Repeat("n", 65), "65 bytes, at most 64"},
		{strings.Repeat("ü", 33), "66 bytes, at most 64"},
		{"web 1", "space (U+0020) at byte 3"},
		{" web1", "space (U+0020) at byte 0"},
		{"web1\n", "whitespace (U+000A) at byte 4"},
		{"wéb\u2003", "whitespace (U+2003) at byte 4"},
		{"web\x00", "control character (U+0000) at byte 3"},
		{"web\u200b1", "non-printable character (U+200B) at byte 3"},
		{"web\xc3", "not valid UTF-8 at byte 3"},
	}
	for _, tt := range tests {
		err := election.CheckNodeID(tt.id)
		if tt.want == "" {
			assert.NoError(t, err, "%q", tt.id)
			continue
		}
		if assert.Error(t, err, "%q", tt.id) {
			assert.Contains(t, err.Error(), tt.want, "%q", tt.id)
		}
	}
}

// TestNodeIDFitsTheWire: every id CheckNodeID accepts can be sent.
func TestNodeIDFitsTheWire(t *testing.T) {
	assert.Equal(t, wire.MaxIDLen, election.MaxNodeIDLen)
}

func TestCheckClusterName(t *testing.T) {
	tests := []struct {
		name string
		want string // error contains; "" means valid
	}{
		{"default", ""},
		{"Home NAS", ""}, // spaces were always accepted
		{strings.Repeat("c", 64), ""},
		{"", "empty"},
		{strings.Repeat("c", 65), "65 bytes, at most 64"},
		{"home\tnas", "whitespace (U+0009) at byte 4"},
		{"home\u00a0nas", "whitespace (U+00A0) at byte 4"},
		{"home\x00", "control character (U+0000) at byte 4"},
		{"home\xc3", "not valid UTF-8 at byte 4"},
	}
	for _, tt := range tests {
		err := election.CheckClusterName(tt.name)
		if tt.want == "" {
			assert.NoError(t, err, "%q", tt.name)
			continue
		}
		if assert.Error(t, err, "%q", tt.name) {
			assert.Contains(t, err.Error(), tt.want, "%q", tt.name)
		}
	}
}
