package httpapi_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Serve must not leave goroutines behind once its context is done.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
