# shellcheck shell=bash
# Two servers and a witness (issue 25): nodes 1 and 2 are the servers, node 3
# a witness (priority 255: it would win every claim if it claimed), with
# cluster_size 3. Cut either server off: the side with the witness runs the
# jobs, the other none. Stop the witness: the two keep one leader and lose
# no instant. Cut the witness and a server off together (every node alone):
# no node runs anything, and the servers log why. And the default: peers
# listed name the voters, so three peers run with quorum and say so in their
# first log lines, two say they run without. Sourced by scripts/netns-test.sh
# (see README.md here).

WT_SERVERS="1 2"
WT_WITNESS=3

# wt_start "I..." ARGS...: the suite's cluster stopped, nodes I started
# with ARGS (node 3 a witness when listed with --role in NODE_ARGS_ONE by
# the caller). Instants around a whole-cluster restart may run twice (the
# new cluster's ledger starts from the state files of other nodes), so they
# are excluded.
wt_start() {
	local nodes=$1 t0 i
	shift
	t0=$(llt_now_ms)
	cluster_stop
	NODE_ARGS=("$@")
	for i in $nodes; do node_start "$i"; done
	EXCLUDED+=("witness_restart:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 3000))")
}

# wt_restore: the suite's cluster back (defaults, every node).
wt_restore() {
	local t0 i
	t0=$(llt_now_ms)
	cluster_stop
	NODE_ARGS=()
	NODE_ARGS_ONE=()
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	EXCLUDED+=("witness_restore:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 3000))")
	settle "$1"
}

# wt_runs NODE FROM_MS [TO_MS] prints how many runs node NODE started for
# instants scheduled at or after FROM_MS (and before TO_MS).
wt_runs() {
	python3 - "$WORK/jobs-n$1.log" "$2" "${3:-0}" <<-'EOF'
		import sys
		from datetime import datetime
		path, lo, hi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
		n = 0
		try:
		    for line in open(path):
		        f = line.split()
		        if len(f) < 3:
		            continue
		        ms = datetime.fromisoformat(f[2].replace("Z", "+00:00")).timestamp() * 1000
		        if ms >= lo and (hi == 0 or ms < hi):
		            n += 1
		except FileNotFoundError:
		    pass
		print(n)
	EOF
}

# wt_first_lines NODE PATTERN: node NODE's log, from its last start, has a
# line matching the extended regex PATTERN among its first 6 lines.
wt_first_lines() {
	awk '/"msg":"netns-test: start"/{n=0; buf=""} {n++; if (n <= 7) buf=buf $0 "\n"} END{printf "%s", buf}' "$WORK/n$1.log" |
		grep -Eq -- "$2"
}

# wt_cut_server S L: server S is cut off from the other two nodes; the
# side with the witness must have a leader and run the jobs, S none once
# its lease is over.
wt_cut_server() {
	local s=$1 label=$2 other t0 lease_end others
	other=$(without "$WT_SERVERS" "$s")
	others="$other $WT_WITNESS"
	settle "$label" || return
	local was=$AGREED
	t0=$(llt_now_ms)
	llt_partition "$s" "$others"
	# The longest lease a voter's promise can give: 4/5 of 10 intervals.
	lease_end=$((t0 + 8 * INTERVAL_MS + 200))
	if llt_poll $((FAILOVER_BOUND_MS + 5000)) 100 agree "$others" && [ "$AGREED" = "$other" ]; then
		pass "$label: {n$other, witness n$WT_WITNESS} leads with n$other (was n$was) after n$s was cut off"
	else
		fail "$label: the side with the witness has no leader n$other ($VIEW)"
	fi
	sleep 3
	local t1 late led
	t1=$(llt_now_ms)
	late=$(wt_runs "$s" "$lease_end" "$t1")
	led=$(wt_runs "$other" "$((t1 - 2000))" "$t1")
	if [ "$late" = 0 ] && ((led >= 1)); then
		pass "$label: cut-off n$s ran nothing after its lease (0 runs), n$other ran $led in the last 2 s"
	else
		fail "$label: cut-off n$s ran $late instants after its lease; n$other ran $led in the last 2 s"
	fi
	if [ "$(qr_leaders "$s")" = 0 ]; then
		pass "$label: n$s does not lead"
	else
		fail "$label: cut-off n$s still leads ($VIEW)"
	fi
	wt_heal "$label" "$t0"
}

# wt_heal LABEL T0: the network healed after a cut at T0; the three agree
# on one leader. The instants in between may have been missed, not run
# twice.
wt_heal() {
	llt_heal
	FAILOVERS+=("$1:$(($2 - 1000)):$(($(llt_now_ms) + 2000))")
	if llt_poll $((HEAL_BOUND_MS + 5000)) 100 agree "$WT_SERVERS $WT_WITNESS"; then
		pass "$1: healed, all agree on n$AGREED"
	else
		fail "$1: no single leader after the heal ($VIEW)"
	fi
}

sc_witness() {
	say "two servers (n1, n2) and a witness (n3, priority 255), cluster_size 3"
	NODE_ARGS_ONE=([$WT_WITNESS]="--role witness --priority 255")
	wt_start "$WT_SERVERS $WT_WITNESS" --cluster-size 3
	settle witness || { wt_restore witness; return 1; }
	local L=$AGREED i
	if [ "$L" != "$WT_WITNESS" ]; then
		pass "witness: n$L leads; the witness, though the best priority, does not"
	else
		fail "witness: the witness leads"
	fi
	for i in $WT_SERVERS; do
		if wt_first_lines "$i" '"level":"INFO","msg":"quorum: 3 voters \(cluster_size\); a minority side runs nothing"'; then
			pass "witness: n$i says in its first lines: quorum: 3 voters (cluster_size)"
		else
			fail "witness: n$i's first lines do not state the quorum ($(head -c 600 "$WORK/n$i.log" | tail -c 300))"
		fi
	done
	if wt_first_lines "$WT_WITNESS" '"msg":"quorum: 3 voters \(cluster_size\), this node a witness'; then
		pass "witness: n$WT_WITNESS says in its first lines that it is a witness"
	else
		fail "witness: n$WT_WITNESS's first lines do not say it is a witness"
	fi
	local out
	out=$(timeout 3 ip netns exec "$(llt_ns 1)" "$BIN" who --cluster "$CLUSTER" --bind "$(llt_ip 1)" --port "$UDP_PORT" --timeout 300ms 2>&1)
	if grep -Eq "^n$WT_WITNESS +n$L " <<<"$out"; then
		pass "witness: who lists n$WT_WITNESS as a witness following n$L"
	else
		fail "witness: who does not list the witness: $(tr '\n' '|' <<<"$out")"
	fi

	wt_cut_server "$L" witness_cut_leader
	settle witness || { wt_restore witness; return 1; }
	wt_cut_server "$(without "$WT_SERVERS" "$AGREED")" witness_cut_follower

	# The witness stops: the two servers are a majority.
	settle witness || { wt_restore witness; return 1; }
	L=$AGREED
	local T=$AGREED_TERM t0 t1 ran want
	llt_node_crash "$WT_WITNESS"
	t0=$(llt_now_ms)
	sleep 4
	t1=$(llt_now_ms)
	ran=0
	for i in $WT_SERVERS; do ran=$((ran + $(wt_runs "$i" "$((t0 + 1000))" "$((t1 - 1000))"))); done
	want=$(((t1 - 1001) / 1000 - (t0 + 1000 + 999) / 1000 + 1))
	if agree "$WT_SERVERS" && [ "$AGREED" = "$L" ] && [ "$AGREED_TERM" = "$T" ] && [ "$ran" = "$want" ]; then
		pass "witness_stopped: n$L keeps leading (term $T) without the witness; $ran of $want instants ran"
	else
		fail "witness_stopped: leader n${AGREED:-?} term ${AGREED_TERM:-?} (was n$L term $T); $ran of $want instants ran ($VIEW)"
	fi
	node_start "$WT_WITNESS"
	settle witness || { wt_restore witness; return 1; }

	# The witness and a server cut off together: every node alone.
	t0=$(llt_now_ms)
	llt_partition "1" "2 3"
	llt_partition "2" "3"
	sleep 4
	t1=$(llt_now_ms)
	local lease_end=$((t0 + 8 * INTERVAL_MS + 200)) late=0 leaders
	for i in $WT_SERVERS; do late=$((late + $(wt_runs "$i" "$lease_end" "$t1"))); done
	agree "$WT_SERVERS $WT_WITNESS" >/dev/null
	leaders=$(qr_leaders "$WT_SERVERS $WT_WITNESS")
	if [ "$late" = 0 ] && [ "$leaders" = 0 ]; then
		pass "witness_alone: every node alone: no leader, no run after the lease"
	else
		fail "witness_alone: $leaders leaders, $late runs after the lease ($VIEW)"
	fi
	# A follower learns it is alone only when its leader's promise ends and
	# its first claim finds no majority, which can come after the 4 s above.
	if llt_poll 5000 200 qr_logged '"level":"WARN","msg":"no majority: 1 of 3 reachable, 2 needed; no leader on this side"' "$WT_SERVERS"; then
		pass "witness_alone: both servers log WARN 'no majority: 1 of 3 reachable, 2 needed'"
	else
		fail "witness_alone: a server did not log why ($(grep -h 'majority' $(logs_of "$WT_SERVERS") | tail -n 2 | cut -c1-300))"
	fi
	wt_heal witness_alone "$t0"
	wt_restore witness
}

sc_quorum_default() {
	say "quorum by default: 3 peers listed run with quorum, 2 without, and say so first"
	local peers="" i
	for i in 1 2 3; do peers+="$(llt_ip "$i"):$UDP_PORT,"; done
	NODE_ARGS_ONE=()
	wt_start "1 2 3" --peers "${peers%,}"
	settle quorum_default || { wt_restore quorum_default; return 1; }
	local bad=""
	for i in 1 2 3; do
		wt_first_lines "$i" '"level":"INFO","msg":"quorum: 3 voters \(peers: this node and 2 listed\); a minority side runs nothing"' || bad+="n$i "
	done
	if [ -z "$bad" ]; then
		pass "quorum_default: three peers, no cluster_size: each says 'quorum: 3 voters (peers: ...)' in its first lines"
	else
		fail "quorum_default: no quorum line first on $bad"
	fi
	local L=$AGREED t0
	t0=$(llt_now_ms)
	llt_partition "$L" "$(without "1 2 3" "$L")"
	sleep $(((8 * INTERVAL_MS + 999) / 1000 + 1))
	agree "$L" >/dev/null
	if [ "$(qr_leaders "$L")" = 0 ]; then
		pass "quorum_default: the cut-off leader n$L stops leading: quorum is in force"
	else
		fail "quorum_default: the cut-off leader n$L still leads: no quorum ($VIEW)"
	fi
	llt_heal
	FAILOVERS+=("quorum_default:$((t0 - 1000)):$(($(llt_now_ms) + 2000))")
	peers="$(llt_ip 1):$UDP_PORT,$(llt_ip 2):$UDP_PORT"
	wt_start "1 2" --peers "$peers"
	settle quorum_default || { wt_restore quorum_default; return 1; }
	bad=""
	for i in 1 2; do
		wt_first_lines "$i" '"level":"WARN","msg":"no quorum: 2 voters \(peers: this node and 1 listed\); a partition runs jobs on both sides until it heals: add a witness' || bad+="n$i "
	done
	if [ -z "$bad" ]; then
		pass "quorum_default: two peers: each warns 'no quorum: 2 voters ... add a witness' in its first lines"
	else
		fail "quorum_default: no 'no quorum' warning first on $bad"
	fi
	wt_restore quorum_default
}

# sc_witness_idle measures (not in the default suite) what a witness costs
# at rest beside two servers: resident memory, private memory and CPU over
# WITNESS_IDLE_SECONDS (default 30), against a server that follows, for
# docs/benchmarks.md.
sc_witness_idle() {
	local secs=${WITNESS_IDLE_SECONDS:-30} i t0 t1
	say "witness at rest: RSS and CPU over $secs s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	NODE_ARGS_ONE=([$WT_WITNESS]="--role witness")
	wt_start "$WT_SERVERS $WT_WITNESS" --cluster-size 3
	settle witness_idle || { wt_restore witness_idle; return 1; }
	sleep 5 # past the start-up: the Go runtime's heap settles
	declare -A c0=()
	for i in $WT_SERVERS $WT_WITNESS; do c0[$i]=$(ns_cpu_ns "$i"); done
	t0=$(llt_now_ms)
	sleep "$secs"
	t1=$(llt_now_ms)
	agree "$WT_SERVERS $WT_WITNESS" >/dev/null
	for i in $WT_SERVERS $WT_WITNESS; do
		local role=follower cpu
		[ "$i" = "$AGREED" ] && role=leader
		[ "$i" = "$WT_WITNESS" ] && role=witness
		cpu=$(python3 -c "print(round(($(ns_cpu_ns "$i") - ${c0[$i]}) / 1e9 / (($t1 - $t0) / 1000) * 100, 3))")
		info "witness_idle: n$i $role: VmRSS $(ns_mem "$i" VmRSS) kB, RssAnon $(ns_mem "$i" RssAnon) kB, CPU $cpu % over $(((t1 - t0) / 1000)) s, interval $INTERVAL (load $(cut -d' ' -f1-3 /proc/loadavg))"
	done
	pass "witness_idle: measured"
	wt_restore witness_idle
}

register_scenario witness default
register_scenario witness_idle
register_scenario quorum_default default
