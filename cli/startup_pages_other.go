//go:build !linux

package cli

// releaseStartupPages does nothing outside Linux (startup_pages_linux.go).
func releaseStartupPages() (int, error) { return 0, nil }
