#!/bin/sh
# lanleader .deb/.rpm: hand /var/lib/lanleader to the lanleader user and
# make systemd see the unit. Nothing is enabled or started: the config must
# be edited first (cluster, bind address, key), the same on every node.
# deb passes "configure" and the previous version (empty on a first
# install); rpm passes 1 on a first install, 2 on an upgrade.
set -e
chown lanleader:lanleader /var/lib/lanleader
chmod 0750 /var/lib/lanleader
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload || true
fi
if { [ "${1:-}" = configure ] && [ -z "${2:-}" ]; } || [ "${1:-}" = 1 ]; then
	echo "lanleader is installed but not started. Edit /etc/lanleader/lanleader.yaml"
	echo "(the same on every node), check it with"
	echo "  lanleader check-config /etc/lanleader/lanleader.yaml"
	echo "then start it with"
	echo "  sudo systemctl enable --now lanleader"
fi
exit 0
