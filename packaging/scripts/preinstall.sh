#!/bin/sh
# lanleader .deb/.rpm: create the lanleader system user and group that the
# unit runs as and that owns /var/lib/lanleader. Idempotent (upgrades).
set -e
if ! getent group lanleader >/dev/null; then
	groupadd --system lanleader
fi
if ! getent passwd lanleader >/dev/null; then
	nologin=/usr/sbin/nologin
	[ -x "$nologin" ] || nologin=/sbin/nologin
	useradd --system --gid lanleader --no-create-home \
		--home-dir /var/lib/lanleader --shell "$nologin" \
		--comment "lanleader daemon" lanleader
fi
exit 0
