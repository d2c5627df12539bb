#!/usr/bin/env bash
# Checks docs/systemd/lanleader.service with `systemd-analyze verify`, with
# ExecStart pointing at a freshly built binary (verify insists the program
# exists). Skips (exit 0) where systemd-analyze is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "verify-unit: SKIPPING: no systemd-analyze here"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/lanleader" ./cmd/lanleader
sed "s#/usr/bin/lanleader#$dir/lanleader#g" docs/systemd/lanleader.service >"$dir/lanleader.service"
systemd-analyze verify "$dir/lanleader.service"
echo "verify-unit: docs/systemd/lanleader.service ok"
