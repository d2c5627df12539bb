package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzDecode feeds arbitrary bytes to Decode, with and without a keyring.
// Decode must not panic; what it accepts must re-encode to the same bytes
// (the format has exactly one encoding per message), and what it rejects
// must carry a known drop reason. The seed corpus in testdata/fuzz/FuzzDecode
// runs in every plain `go test`.
func FuzzDecode(f *testing.F) {
	k := testKeyring(f, "fuzz")
	for _, m := range [...]struct {
		keyed bool
	}{{false}, {true}} {
		var kk *Keyring
		if m.keyed {
			kk = k
		}
		for _, msg := range []struct{ fn func() []byte }{
			{func() []byte { b, _ := Encode(fullMessage(), kk); return b }},
			{func() []byte { b, _ := Encode(maxMessage(), kk); return b }},
			{func() []byte { b, _ := Encode(promiseMessage(), kk); return b }},
		} {
			f.Add(msg.fn(), m.keyed)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, keyed bool) {
		var kk *Keyring
		if keyed {
			kk = k
		}
		m, err := Decode(b, kk)
		if err != nil {
			assert.NotEqual(t, ReasonOther, Reason(err), "unclassified error: %v", err)
			return
		}
		if b[offAuth] == AuthHMACSHA256 && kk == nil {
			// Accepted unchecked: the MAC bytes cannot be reproduced.
			b = append([]byte(nil), b[:len(b)-MACSize]...)
			b[offAuth] = AuthNone
		}
		again, err := Encode(m, kk)
		require.NoError(t, err, "a decoded message must encode")
		assert.Equal(t, b, again, "decode then encode must give the same bytes")
	})
}
