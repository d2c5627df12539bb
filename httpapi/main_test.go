package httpapi_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/lanleader/lanleader/internal/proctest"
)

// Serve must not leave goroutines behind once its context is done. (Package
// proc, imported through jobs, keeps one fork goroutine for good.)
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, proctest.IgnoreForkThread()) }
