//go:build linux

package proc

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue is the cost of one run of /bin/true through Run (shim,
// pipes, group kill, reaping); BenchmarkExecTrue is os/exec alone, for
// comparison.
func BenchmarkRunTrue(b *testing.B) {
	for b.Loop() {
		if res := Run(context.Background(), Spec{Argv: []string{"/bin/true"}}); !res.OK() {
			b.Fatal(res)
		}
	}
}

func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
