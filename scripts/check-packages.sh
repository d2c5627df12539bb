#!/usr/bin/env bash
# Builds what a release ships and checks it: the static binaries for
# linux amd64, arm64 and armv7 (make static), and the .deb (make deb, nfpm
# from packaging/nfpm.yaml), whose contents, conffiles, scripts and binary
# are inspected with dpkg-deb. Run by .ci/run; needs make and dpkg-deb.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v0.0.0-ci
deb=dist/lanleader_0.0.0~ci_amd64.deb
rm -rf dist
fail() { echo "check-packages: FAIL: $*" >&2; exit 1; }

make --no-print-directory static VERSION=$version
for arch in amd64 arm64 armv7; do
	bin=dist/lanleader-linux-$arch
	[ -x "$bin" ] || fail "$bin not built"
	# CGO_ENABLED=0 is what makes it static; the build info records it.
	go version -m "$bin" | grep -q 'CGO_ENABLED=0' || fail "$bin: not built with CGO_ENABLED=0"
done
./dist/lanleader-linux-amd64 version | grep -q "^lanleader $version " || fail "version not set by -ldflags"

make --no-print-directory deb VERSION=$version
[ -f "$deb" ] || fail "$deb not built"
listing=$(dpkg-deb -c "$deb")
echo "$listing"
want() { # MODE OWNER PATH
	echo "$listing" | awk -v m="$1" -v o="$2" -v p="$3" '$1==m && $2==o && $6==p {f=1} END {exit !f}' ||
		fail "$deb: no $3 with mode $1 owner $2"
}
want -rwxr-xr-x root/root ./usr/bin/lanleader
want -rw-r--r-- root/root ./usr/lib/systemd/system/lanleader.service
want -rw-r--r-- root/root ./etc/lanleader/lanleader.yaml
want drwxr-x--- root/root ./var/lib/lanleader/
dpkg-deb -f "$deb" Package Version Architecture
[ "$(dpkg-deb -f "$deb" Version)" = "0.0.0~ci" ] || fail "package version"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -R "$deb" "$tmp/pkg"
grep -qx /etc/lanleader/lanleader.yaml "$tmp/pkg/DEBIAN/conffiles" || fail "the config is not a conffile"
for s in preinst postinst prerm postrm; do
	[ -x "$tmp/pkg/DEBIAN/$s" ] || fail "no $s script"
	sh -n "$tmp/pkg/DEBIAN/$s" || fail "$s: syntax"
done
grep -q useradd "$tmp/pkg/DEBIAN/preinst" || fail "preinst does not create the user"
"$tmp/pkg/usr/bin/lanleader" version | grep -q "^lanleader $version " || fail "packaged binary version"
"$tmp/pkg/usr/bin/lanleader" check-config "$tmp/pkg/etc/lanleader/lanleader.yaml" || fail "default config"
echo "check-packages: ok ($deb, static amd64 arm64 armv7)"
