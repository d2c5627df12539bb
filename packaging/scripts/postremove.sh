#!/bin/sh
# lanleader .deb/.rpm: forget the removed unit. The lanleader user, the
# config and /var/lib/lanleader stay (as with most daemons' packages).
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
fi
exit 0
