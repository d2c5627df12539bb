#!/bin/sh
# lanleader .deb/.rpm: when the package is removed for good (deb "remove",
# rpm 0), stop and disable the daemon; it resigns and another node takes
# over at once. On an upgrade the running daemon is left alone: restart
# the nodes one at a time when it suits you.
set -e
if [ "${1:-}" = remove ] || [ "${1:-}" = 0 ]; then
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now lanleader.service >/dev/null 2>&1 || true
	fi
fi
exit 0
