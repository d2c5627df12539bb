package env

import (
	"fmt"
	"strings"
)

// parseFlag interprets the variable's value. set is false when the
// variable is absent.
func parseFlag(name, value string, set bool) (bool, error) {
	if !set {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no", "":
		// Empty counts as unset: templating often renders a missing value
		// as NAME= rather than leaving the variable out.
		return false, nil
	default:
		return false, fmt.Errorf("env: %s=%q: want true, 1 or yes to lead, false, 0, no or unset to follow", name, value)
	}
}
