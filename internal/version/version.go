// Package version reports which lanleader build is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at link time with
// -ldflags "-X github.com/lanleader/lanleader/internal/version.Version=v1.2.3";
// otherwise it comes from the module's build info ("(devel)" in a checkout).
var Version = ""

// String returns the version, falling back to the build info's module
// version and VCS revision.
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}

// GoVersion returns the Go version the binary was built with.
func GoVersion() string { return runtime.Version() }
