package wire

import (
	"testing"

	"github.com/lanleader/lanleader/election/udp/protocol"
)

// heartbeat is a typical heartbeat: short ids and a small job ledger.
func heartbeat() protocol.Message {
	m := fullMessage()
	m.Type = protocol.Heartbeat
	m.Successor = ""
	m.Payload = make([]byte, 128)
	return m
}

func BenchmarkEncode(b *testing.B) {
	for _, bc := range []struct {
		name string
		k    *Keyring
	}{{"unsigned", nil}, {"hmac", testKeyring(b, "a")}} {
		b.Run(bc.name, func(b *testing.B) {
			m := heartbeat()
			buf := make([]byte, 0, MaxPacketSize)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				buf, err = AppendEncode(buf[:0], m, bc.k)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		name string
		k    *Keyring
	}{{"unsigned", nil}, {"hmac", testKeyring(b, "a")}, {"hmac-2-keys", testKeyring(b, "a", "b")}} {
		b.Run(bc.name, func(b *testing.B) {
			pkt, err := Encode(heartbeat(), bc.k)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(pkt)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(pkt, bc.k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeReject measures the cost of dropping a forged packet, the
// path a flood of junk takes.
func BenchmarkDecodeReject(b *testing.B) {
	k := testKeyring(b, "a")
	pkt, err := Encode(heartbeat(), testKeyring(b, "z"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(pkt, k); err == nil {
			b.Fatal("forged packet accepted")
		}
	}
}
