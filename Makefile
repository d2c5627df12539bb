# Builds of lanleader for people and for packages. Everything is a static
# binary (CGO_ENABLED=0): no libc to match on a Raspberry Pi, a NAS or a
# distroless container.
#
#   make              ./lanleader for this machine
#   make static       dist/lanleader-linux-{amd64,arm64,armv7}
#   make deb          dist/lanleader_VERSION_amd64.deb (nfpm, no goreleaser needed)
#   make VERSION=v1.2.3 static
#
# Releases are built by goreleaser from .goreleaser.yaml with the same flags.

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
# Package versions must start with a digit: v1.2.3 -> 1.2.3, an untagged
# a18a36f-dirty -> 0.0.0~git.a18a36f~dirty and v1.2.0-rc.1 -> 1.2.0~rc.1
# (both sort before the release).
PKG_VERSION := $(shell echo "$(VERSION)" | sed -e "s/^v//" -e "s/^\([^0-9]\)/0.0.0~git.\1/" -e "s/-/~/g")
# The nfpm used by `make deb` and .ci/run; goreleaser embeds its own.
NFPM_VERSION := v2.48.0
PKG := github.com/lanleader/lanleader
LDFLAGS := -s -w -X $(PKG)/internal/version.Version=$(VERSION)
BUILD := CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)'
DIST := dist

.PHONY: all lanleader static deb clean
all: lanleader

lanleader:
	$(BUILD) -o lanleader ./cmd/lanleader

# One static binary per Linux target: amd64 (PCs, servers), arm64
# (Raspberry Pi 3/4/5 with a 64-bit OS, most ARM NASes) and armv7 (32-bit
# Raspberry Pi OS, older boards).
static:
	GOOS=linux GOARCH=amd64 $(BUILD) -o $(DIST)/lanleader-linux-amd64 ./cmd/lanleader
	GOOS=linux GOARCH=arm64 $(BUILD) -o $(DIST)/lanleader-linux-arm64 ./cmd/lanleader
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o $(DIST)/lanleader-linux-armv7 ./cmd/lanleader

# A .deb for this machine's architecture from packaging/nfpm.yaml, the same
# contents as goreleaser's (packaging_test.go keeps the two in step).
deb:
	GOOS=linux GOARCH=amd64 $(BUILD) -o $(DIST)/linux-amd64/lanleader ./cmd/lanleader
	VERSION=$(PKG_VERSION) ARCH=amd64 BINARY=$(DIST)/linux-amd64/lanleader \
		go run github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION) \
		package --config packaging/nfpm.yaml --packager deb --target $(DIST)/

clean:
	rm -rf $(DIST) lanleader
