package cli

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
)

// asMainEnv makes the test binary behave as the lanleader command, so the
// demo test can start it as the demo's nodes (the demo starts
// os.Executable()) without a separate `go build`.
const asMainEnv = "LANLEADER_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		Main()
		return
	}
	goleak.VerifyTestMain(m, proctest.IgnoreForkThread())
}
