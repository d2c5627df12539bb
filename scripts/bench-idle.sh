#!/usr/bin/env bash
# bench-idle.sh [--interval D] [--seconds N] DAEMON...
#
# Idle CPU of several 3-node clusters measured side by side, in the same
# window, so that they share the machine's load. DAEMON is a lanleader
# binary (any build, e.g. one to compare with the release) or the word
# "keepalived" (VRRPv3 at the same advert interval). Each cluster gets its
# own switch namespace with a bridge and three node namespaces, addresses
# from 198.19.90.0/24 upwards (198.18.0.0/15); names carry a prefix unique
# to this run and only those are deleted. Needs root, iproute2, and
# keepalived if named.
#
# Prints, per cluster, each node's CPU in µs per second (the scheduler's
# per-thread count, /proc/PID/task/TID/schedstat, summed over the node's
# processes), the leader marked with *, and the node mean.
set -uo pipefail

interval=200ms seconds=60
while [ $# -gt 0 ]; do
	case $1 in
	--interval) interval=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	-h | --help) sed -n '2,15p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--interval D] [--seconds N] DAEMON..." >&2; exit 2; }
[ $# -le 10 ] || { echo "$0: at most 10 clusters" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: needs root (network namespaces)" >&2; exit 2; }
advert_s=$(python3 -c "
s='$interval'
print((float(s[:-2])/1000) if s.endswith('ms') else float(s[:-1]))") || exit 2

pfx="lbi$$"
work=$(mktemp -d "/tmp/$pfx.XXXX")
created=()
cleanup() {
	disown -a 2>/dev/null
	local ns p
	for ns in "${created[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	sleep 0.3
	for ns in "${created[@]}"; do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
printf 'jobs:\n  - name: tick\n    schedule: "@every 1h"\n    shell: "true"\n' >"$work/config.yaml"

node_ns() { echo "${pfx}c$1n$2"; }

# cluster_up C NET DAEMON: switch and three nodes for cluster C on NET.0/24.
cluster_up() {
	local c=$1 net=$2 daemon=$3 sw="${pfx}c$1sw" i ns
	ip netns add "$sw" && created+=("$sw") || return 1
	ip -n "$sw" link add br0 type bridge mcast_snooping 0 stp_state 0
	ip -n "$sw" link set br0 up
	for i in 1 2 3; do
		ns=$(node_ns "$c" "$i")
		ip netns add "$ns" && created+=("$ns") || return 1
		ip -n "$ns" link set lo up
		ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns"
		ip -n "$sw" link set "p$i" master br0 up
		ip -n "$ns" addr add "$net.$((10 + i))/24" brd + dev eth0
		ip -n "$ns" link set eth0 up
	done
	for i in 1 2 3; do
		ns=$(node_ns "$c" "$i")
		if [ "$daemon" = keepalived ]; then
			cat >"$work/c$c-ka$i.conf" <<-EOF
				global_defs {
				  router_id n$i
				  vrrp_version 3
				}
				vrrp_instance bench {
				  state BACKUP
				  interface eth0
				  virtual_router_id 51
				  priority 100
				  advert_int $advert_s
				  virtual_ipaddress {
				    $net.250/24
				  }
				}
			EOF
			setsid ip netns exec "$ns" keepalived --dont-fork --log-console --vrrp \
				--use-file "$work/c$c-ka$i.conf" --pid "$work/c$c-ka$i.pid" \
				--vrrp_pid "$work/c$c-ka$i.vpid" >"$work/c$c-n$i.log" 2>&1 </dev/null &
		else
			setsid ip netns exec "$ns" "$daemon" run --mode=udp --config "$work/config.yaml" \
				--node-id "n$i" --bind "$net.$((10 + i))" --port 7483 --cluster "$pfx-$c" \
				--interval "$interval" --misses 3 --http 127.0.0.1:7484 --log-format=json \
				--state-dir "$work/c$c-st$i" >/dev/null 2>"$work/c$c-n$i.log" </dev/null &
		fi
		sleep 0.2
	done
}

# cpu_ns NS prints the CPU time, in ns, of every process in namespace NS.
cpu_ns() {
	local t=0 v f p
	for p in $(ip netns pids "$1"); do
		for f in /proc/"$p"/task/*/schedstat; do
			read -r v _ <"$f" 2>/dev/null && t=$((t + v))
		done
	done
	echo "$t"
}

daemons=("$@")
for c in "${!daemons[@]}"; do
	cluster_up "$c" "198.19.$((90 + c))" "${daemons[$c]}" || exit 1
done
sleep 4 # joined and settled
declare -A start=()
for c in "${!daemons[@]}"; do
	for i in 1 2 3; do start[$c.$i]=$(cpu_ns "$(node_ns "$c" "$i")"); done
done
sleep "$seconds"
echo "idle CPU, µs/s per node, $interval, ${seconds} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${!daemons[@]}"; do
	line="${daemons[$c]}:" sum=0
	for i in 1 2 3; do
		v=$((($(cpu_ns "$(node_ns "$c" "$i")") - ${start[$c.$i]}) / seconds / 1000))
		sum=$((sum + v))
		mark=""
		grep -q '"became leader"\|Entering MASTER' "$work/c$c-n$i.log" && mark="*"
		line+=" n$i$mark=$v"
	done
	echo "$line mean=$((sum / 3))"
done
