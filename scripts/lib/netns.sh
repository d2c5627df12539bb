# shellcheck shell=bash
# Network-namespace topology, fault injection and process control for
# scripts/netns-test.sh. Sourced, not run.
#
# Topology: one "switch" namespace holding bridge br0 (multicast snooping
# off, so broadcast and multicast flood to every port), and N node namespaces,
# each joined to the bridge by a veth pair: "eth0" in the node, "pI" in the
# switch. Addresses come from 198.18.0.0/15 (RFC 2544's benchmarking range).
# Every name carries $LLT_PFX, unique per run, and only names recorded in
# LLT_CREATED_NS are ever deleted. Nothing here touches the root namespace's
# interfaces: links are created inside the switch namespace with `ip -n`.
#
# Faults are nftables rules in the switch namespace's bridge-family table
# (this kernel has no sch_netem, so `tc netem` is not an option). A rule in
# the forward hook sees one copy of each frame per output port, so
# "iifname pA oifname pB" is exactly the link A→B, for broadcast too.

LLT_PFX=${LLT_PFX:-"llt$$-"}
LLT_SW="${LLT_PFX}sw"
LLT_NET=${LLT_NET:-198.18.0}   # /24 inside 198.18.0.0/15
LLT_CREATED_NS=()              # namespaces this run created, in order
declare -A LLT_DAEMON_PID=()   # node index → PID of its running daemon

llt_ns() { echo "${LLT_PFX}n$1"; }
llt_ip() { echo "${LLT_NET}.$((10 + $1))"; }

# llt_now_ms prints the wall clock in milliseconds (the same clock as the
# daemons' log timestamps), without forking.
llt_now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# llt_stamp VAR sets VAR to llt_now_ms without a subshell, for timestamps
# that must be taken right next to the event they date.
llt_stamp() {
	local _llt_us=${EPOCHREALTIME/./}
	printf -v "$1" '%d' $((_llt_us / 1000))
}

# llt_poll TIMEOUT_MS STEP_MS CMD... runs CMD until it succeeds or
# TIMEOUT_MS passes. Every wait in the suite goes through here.
llt_poll() {
	local timeout=$1 step=$2
	shift 2
	local deadline=$(($(llt_now_ms) + timeout))
	while true; do
		"$@" && return 0
		(($(llt_now_ms) >= deadline)) && return 1
		sleep "$(printf '0.%03d' "$step")"
	done
}

# llt_link_ready NS DEV succeeds once DEV in NS carries frames: its carrier
# is up and the kernel has given it a real queue. Until the kernel's link
# watcher runs (up to a second after `link set up`) a new device keeps the
# "noop" queue, which drops every frame sent: a client's first packets
# (`lanleader who` sends one; `lanleader trigger` resends for 2 s) are
# lost, and a scenario's timing with them.
llt_link_ready() {
	local l
	l=$(ip -n "$1" link show "$2" 2>/dev/null) || return 1
	[[ $l == *LOWER_UP* && $l != *"qdisc noop"* ]]
}

llt_ns_add() {
	ip netns add "$1" || return 1
	LLT_CREATED_NS+=("$1")
	ip -n "$1" link set lo up
}

# llt_topology_up N builds the switch and N nodes.
llt_topology_up() {
	local n=$1 i ns
	llt_ns_add "$LLT_SW" || return 1
	ip -n "$LLT_SW" link add br0 type bridge mcast_snooping 0 stp_state 0 || return 1
	ip -n "$LLT_SW" link set br0 up || return 1
	for ((i = 1; i <= n; i++)); do
		ns=$(llt_ns "$i")
		llt_ns_add "$ns" || return 1
		ip -n "$LLT_SW" link add "p$i" type veth peer name eth0 netns "$ns" || return 1
		ip -n "$LLT_SW" link set "p$i" master br0 up || return 1
		ip -n "$ns" addr add "$(llt_ip "$i")/24" brd + dev eth0 || return 1
		ip -n "$ns" link set eth0 up || return 1
	done
	ip netns exec "$LLT_SW" nft -f - <<-'EOF' || return 1
		table bridge llt {
			chain forward {
				type filter hook forward priority 0; policy accept;
				counter jump part
				jump oneway
				jump loss
			}
			chain part {}
			chain oneway {}
			chain loss {}
		}
	EOF
}

# --- faults -----------------------------------------------------------------

llt_nft() { ip netns exec "$LLT_SW" nft "$@"; }

# llt_partition "1 2" "3 4 5" drops every frame between the two groups.
llt_partition() {
	local a b
	for a in $1; do
		for b in $2; do
			llt_nft add rule bridge llt part iifname "p$a" oifname "p$b" counter drop || return 1
			llt_nft add rule bridge llt part iifname "p$b" oifname "p$a" counter drop || return 1
		done
	done
}

# llt_oneway FROM TO drops frames from node FROM to node TO only.
llt_oneway() {
	llt_nft add rule bridge llt oneway iifname "p$1" oifname "p$2" counter drop
}

# llt_loss PCT drops PCT % of frames on every link (each copy of a
# broadcast is dropped independently, so each sender→receiver path loses PCT %).
llt_loss() {
	llt_nft add rule bridge llt loss numgen random mod 100 '<' "$1" counter drop
}

llt_heal() {
	llt_nft flush chain bridge llt part &&
		llt_nft flush chain bridge llt oneway &&
		llt_nft flush chain bridge llt loss
}

# llt_counter CHAIN prints the packets counted by the chain's first counter.
llt_counter() {
	llt_nft list chain bridge llt "$1" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -n1
}

# --- processes --------------------------------------------------------------

# llt_ns_pids I prints the PIDs of every process in node I's namespace: the
# daemon and the jobs it started. All of them are this run's own.
llt_ns_pids() { ip netns pids "$(llt_ns "$1")" 2>/dev/null; }

# llt_node_signal SIG I sends SIG to every process of node I.
llt_node_signal() {
	local pids
	pids=$(llt_ns_pids "$2")
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -s "$1" $pids 2>/dev/null
	return 0
}

# llt_node_crash I kills node I like a power cut: it freezes every process of
# the node (repeating until no new one appears, so a job forked meanwhile is
# caught), then SIGKILLs them all, so no survivor can exit gracefully.
#
# LLT_CRASH_MS is set to the moment of the first SIGSTOP (taken with a
# builtin, after the PIDs are listed), so measured failovers do not include
# the time this script takes to list processes.
llt_node_crash() {
	local i=$1 seen="" pids
	LLT_CRASH_MS=""
	while true; do
		pids=$(llt_ns_pids "$i" | sort -n | tr '\n' ' ')
		[ "$pids" = "$seen" ] && break
		[ -n "$LLT_CRASH_MS" ] || llt_stamp LLT_CRASH_MS
		# shellcheck disable=SC2086
		[ -n "$pids" ] && kill -s STOP $pids 2>/dev/null
		seen=$pids
	done
	# The braces keep bash's "Killed" job notice out of the output.
	{
		# shellcheck disable=SC2086
		[ -n "$pids" ] && kill -s KILL $pids
		llt_reap "$i"
	} 2>/dev/null
}

# llt_node_kill I SIGKILLs every process of node I, as `kill -9` or the
# OOM killer would, while its host (namespace, address) stays up.
# LLT_CRASH_MS is set right before the signal. Unlike llt_node_crash (a
# power cut: freeze, list again, then kill), the node's sockets close at
# LLT_CRASH_MS and not after the listing, which is what a peer probing the
# dead port sees. Whole process groups are killed first, each by one
# kill(2), so that no process of a group outlives another: a child whose
# parent died before it would get its parent-death signal (keepalived's
# VRRP process: SIGTERM) and could say goodbye (a priority-0 advert) before
# its own SIGKILL. A process forked meanwhile is killed by a second pass.
llt_node_kill() {
	local i=$1 pids groups p own
	pids=$(llt_ns_pids "$i" | tr '\n' ' ')
	own=$(awk '{print "-" $5}' "/proc/$$/stat") # never this script's own group
	groups=""
	for p in $pids; do
		p=$(awk '{print "-" $5}' "/proc/$p/stat" 2>/dev/null) || continue
		case " $own $groups " in *" $p "*) ;; *) groups+="$p " ;; esac
	done
	llt_stamp LLT_CRASH_MS
	{
		# shellcheck disable=SC2086
		[ -n "${pids// /}" ] && kill -s KILL -- $groups $pids
		pids=$(llt_ns_pids "$i" | tr '\n' ' ')
		# shellcheck disable=SC2086
		[ -n "${pids// /}" ] && kill -s KILL $pids
		llt_reap "$i"
	} 2>/dev/null
}

# llt_reap I waits (bounded) until node I's namespace has no process left and
# collects its daemon's exit status into LLT_EXIT_CODE.
llt_reap() {
	local i=$1 pid=${LLT_DAEMON_PID[$1]:-}
	LLT_EXIT_CODE=""
	llt_poll 5000 20 llt_ns_empty "$i" || echo "netns-test: node $i still has processes: $(llt_ns_pids "$i" | tr '\n' ' ')"
	if [ -n "$pid" ]; then
		wait "$pid" 2>/dev/null
		LLT_EXIT_CODE=$?
		unset "LLT_DAEMON_PID[$i]"
	fi
}

llt_ns_empty() { [ -z "$(llt_ns_pids "$1")" ]; }
llt_pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# llt_cleanup kills every process in the namespaces this run created and
# deletes those namespaces (their veths and nftables tables go with them).
llt_cleanup() {
	local ns pids k
	for ns in "${LLT_CREATED_NS[@]}"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$pids" ] && kill -s STOP $pids 2>/dev/null && kill -s KILL $pids 2>/dev/null
	done
	for k in "${!LLT_DAEMON_PID[@]}"; do
		wait "${LLT_DAEMON_PID[$k]}" 2>/dev/null
	done
	LLT_DAEMON_PID=()
	for ((k = ${#LLT_CREATED_NS[@]} - 1; k >= 0; k--)); do
		ns=${LLT_CREATED_NS[$k]}
		llt_poll 3000 20 llt_netns_empty "$ns" || true
		ip netns del "$ns" 2>/dev/null || echo "netns-test: could not delete namespace $ns"
	done
	LLT_CREATED_NS=()
}

llt_netns_empty() { [ -z "$(ip netns pids "$1" 2>/dev/null)" ]; }

# llt_leftovers prints this run's namespaces that still exist.
llt_leftovers() { ip netns list 2>/dev/null | awk '{print $1}' | grep -F -- "$LLT_PFX" || true; }
