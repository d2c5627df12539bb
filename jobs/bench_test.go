package jobs

import "testing"

func BenchmarkLedgerEncode60(b *testing.B) {
	l := Ledger{Entries: entries(60)}
	b.ReportAllocs()
	for b.Loop() {
		_ = l.Encode()
	}
}

func BenchmarkLedgerDecode60(b *testing.B) {
	enc := Ledger{Entries: entries(60)}.Encode()
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeLedger(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdoptLedger60 is a follower's cost per heartbeat.
func BenchmarkAdoptLedger60(b *testing.B) {
	specs := make([]Spec, 60)
	for i := range specs {
		specs[i] = everyMinute(entriesName(i))
	}
	r, err := NewRunner(testCluster{}, RunnerConfig{Jobs: specs})
	if err != nil {
		b.Fatal(err)
	}
	enc := Ledger{Entries: entries(60)}.Encode()
	b.ReportAllocs()
	for b.Loop() {
		if err := r.AdoptLedger(enc); err != nil {
			b.Fatal(err)
		}
	}
}
