#!/bin/sh
# One replica of the gateway: its web part on every replica, lanleader
# beside it. WAY picks docs/applications.md's way: a, b or c.
#
# The gateway's own process is started in a subshell so that it is not
# lanleader's child: lanleader kills the children it did not start itself
# (what a killed job left behind). With compose's `init: true` it is the
# init's child instead.
set -eu
way=${WAY:-a}
case "$way" in
a) (python3 /app/gateway.py serve &) ;;
b) ;; # lanleader starts gateway.py scheduler on the leader (services:)
c) (python3 /app/gateway.py ask &) ;;
*) echo "entrypoint: WAY=$way: want a, b or c" >&2; exit 2 ;;
esac
# CLUSTER_SIZE, when set, overrides the file's cluster_size (0: no quorum).
exec lanleader run --config "/app/lanleader-$way.yaml" --node-id "$(hostname)" --state-dir '' \
	${CLUSTER_SIZE:+--cluster-size "$CLUSTER_SIZE"}
