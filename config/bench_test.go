package config

import "testing"

func BenchmarkParseFull(b *testing.B) {
	b.SetBytes(int64(len(full)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("full.yaml", []byte(full)); err != nil {
			b.Fatal(err)
		}
	}
}
