package env_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Run must not leave goroutines behind once it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
