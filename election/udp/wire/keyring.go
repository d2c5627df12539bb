package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"sync"
)

// Key length bounds, in bytes. MinKeyLen is HMAC-SHA256's output size: a
// shorter key would be the weakest part of the scheme.
const (
	MinKeyLen = 32
	MaxKeyLen = 1024
)

// Keyring holds the shared keys that authenticate packets. The first key (the
// primary) signs every packet sent; a packet is accepted if its MAC matches
// any key. Installing the new key second everywhere, then first everywhere,
// then removing the old one rotates keys without a moment where two nodes
// reject each other (docs/wire.md).
//
// A Keyring is immutable and safe for concurrent use. A nil *Keyring means no
// authentication: Encode sends unsigned packets and Decode accepts them.
type Keyring struct {
	keys [][]byte
	// macs pools one HMAC state per key, so signing and checking a packet
	// does not allocate a fresh HMAC (four allocations) each time.
	macs []sync.Pool
}

// NewKeyring returns a keyring whose first key signs. Each key must be
// between MinKeyLen and MaxKeyLen bytes long; keys are copied.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("wire: keyring: no keys")
	}
	k := &Keyring{keys: make([][]byte, len(keys)), macs: make([]sync.Pool, len(keys))}
	for i, key := range keys {
		if len(key) < MinKeyLen || len(key) > MaxKeyLen {
			return nil, fmt.Errorf("wire: keyring: key %d is %d bytes, want %d to %d", i+1, len(key), MinKeyLen, MaxKeyLen)
		}
		key = append([]byte(nil), key...)
		k.keys[i] = key
		k.macs[i].New = func() any { return &macState{h: hmac.New(sha256.New, key)} }
	}
	return k, nil
}

// Len returns the number of keys.
func (k *Keyring) Len() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

// macState is one pooled HMAC with room for its sum, which would escape to
// the heap if it lived on the caller's stack.
type macState struct {
	h   hash.Hash
	sum [MACSize]byte
}

// appendMAC appends the primary key's MAC of msg to dst.
func (k *Keyring) appendMAC(dst, msg []byte) []byte {
	st := k.macs[0].Get().(*macState)
	st.h.Reset()
	st.h.Write(msg)
	dst = append(dst, st.h.Sum(st.sum[:0])...)
	k.macs[0].Put(st)
	return dst
}

// verify reports whether mac is msg's MAC under any key. Every key is tried
// whatever the outcome, so timing does not tell which key matched.
func (k *Keyring) verify(msg, mac []byte) bool {
	ok := false
	for i := range k.keys {
		st := k.macs[i].Get().(*macState)
		st.h.Reset()
		st.h.Write(msg)
		if hmac.Equal(st.h.Sum(st.sum[:0]), mac) {
			ok = true
		}
		k.macs[i].Put(st)
	}
	return ok
}
