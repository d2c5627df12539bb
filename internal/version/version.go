// Package version reports which lanleader build is running.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is set at link time (make, goreleaser, the Dockerfile) with
// -ldflags "-X github.com/lanleader/lanleader/internal/version.Version=v1.2.3";
// otherwise it comes from the module's build info: the module version for
// `go install github.com/lanleader/lanleader/cmd/lanleader@v1.2.3` (or
// @latest), "(devel)" for a build from a checkout.
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
	return fromBuildInfo(info)
}

// fromBuildInfo is the main module's version, plus the first 12 hex digits
// of the VCS revision and "-dirty" when Go recorded them (a build from a
// checkout; `go install mod@version` records none).
func fromBuildInfo(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) >= 12 {
		v += "+" + rev[:12]
		if dirty {
			v += "-dirty"
		}
	}
	return v
}

// GoVersion returns the Go version the binary was built with.
func GoVersion() string { return runtime.Version() }
