# shellcheck shell=bash
# Quorum mode (issue 10): a cluster_size smaller than the nodes on the LAN
# gives no leader and an ERROR; a minority side has no leader and says so
# (WARN with counts); the majority keeps or elects exactly one; a crash is
# failed over; a voter restarted from its state file acks its leader at once
# (issue 11). Sourced by scripts/netns-test.sh (see README.md here).

# qr_restart ARGS...: every node restarted with ARGS (none: the suite's
# defaults). Instants around a whole-cluster restart may run twice (the new
# cluster has no ledger), so they are excluded.
qr_restart() {
	local t0 i
	t0=$(llt_now_ms)
	cluster_stop
	NODE_ARGS=("$@")
	NODE_ARGS_ONE=()
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	EXCLUDED+=("quorum_restart:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 3000))")
}

# qr_leaders "I..." prints how many of the listed nodes say they lead.
qr_leaders() {
	local i n=0
	agree "$1" >/dev/null
	for i in $1; do
		parse_status "$(cat "$WORK/st.$i")" && [ "$ROLE" = leader ] && n=$((n + 1))
	done
	echo "$n"
}

# qr_logged PATTERN "I..." succeeds when every listed node's log has a line
# matching the extended regex PATTERN after its last start.
qr_logged() {
	local i
	for i in $2; do
		awk '/"msg":"netns-test: start"/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$WORK/n$i.log" |
			grep -Eq -- "$1" || return 1
	done
}

# --- 5 nodes, cluster_size 3 -------------------------------------------------

sc_quorum_oversize() {
	local size=$((NODES / 2 + 1)) all i n bad=0
	say "quorum: $NODES nodes started with --cluster-size $size: no leader, an ERROR"
	qr_restart --cluster-size "$size"
	all=$(alive_nodes)
	sleep 4
	for i in 1 2 3 4 5 6; do
		n=$(qr_leaders "$all")
		[ "$n" = 0 ] || bad=$((bad + 1))
		sleep 0.5
	done
	if [ "$bad" = 0 ]; then
		pass "quorum_oversize: no node leads over 3 s of polling"
	else
		fail "quorum_oversize: a node led in $bad of 6 polls ($VIEW)"
	fi
	if qr_logged "\"level\":\"ERROR\".*cluster_size too small: heard $NODES distinct node ids, cluster_size is $size" "$all"; then
		pass "quorum_oversize: every node logged ERROR 'cluster_size too small: heard $NODES distinct node ids, cluster_size is $size'"
	else
		fail "quorum_oversize: a node did not log the cluster_size ERROR ($(grep -h 'cluster_size' "$WORK"/n*.log | tail -n 2 | cut -c1-300))"
	fi
	qr_restart
	settle quorum_oversize
}

# --- quorum basics: partition, minority, heal -------------------------------

sc_quorum_basics() {
	say "quorum: cluster_size $NODES; the leader and one follower cut off, then healed"
	qr_restart --cluster-size "$NODES"
	settle quorum_basics || { qr_restart; settle quorum_basics; return 1; }
	pass "quorum_basics: one leader (n$AGREED, term $AGREED_TERM) with cluster_size $NODES"
	local L=$AGREED all small big x t0
	all=$(alive_nodes)
	# The leader and one follower form the minority.
	x=$(without "$all" "$L")
	small="$L ${x%% *}"
	big=$(without "$x" "${x%% *}")
	t0=$(llt_now_ms)
	llt_partition "$small" "$big"
	if llt_poll $((FAILOVER_BOUND_MS + 5000)) 100 agree "$big"; then
		pass "quorum_basics: the majority {$big} elected n$AGREED"
	else
		fail "quorum_basics: the majority {$big} has no single leader ($VIEW)"
	fi
	sleep 2
	local n
	n=$(qr_leaders "$small")
	if [ "$n" = 0 ]; then
		pass "quorum_basics: the minority {$small} has no leader"
	else
		fail "quorum_basics: $n leader(s) in the minority {$small} ($VIEW)"
	fi
	if llt_poll 5000 200 qr_logged '"level":"WARN".*no majority: [12] of '"$NODES"' reachable' "$small"; then
		pass "quorum_basics: the minority logged WARN 'no majority: k of $NODES reachable'"
	else
		# shellcheck disable=SC2046
		fail "quorum_basics: no 'no majority' WARN on {$small} ($(grep -h 'majority' $(logs_of "$small") | tail -n 2 | cut -c1-300))"
	fi
	llt_heal
	EXCLUDED+=("quorum_partition:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 1000))")
	if llt_poll $((FAILOVER_BOUND_MS + 8000)) 100 agree "$all"; then
		pass "quorum_basics: after heal all agree on n$AGREED"
	else
		fail "quorum_basics: no single leader after heal ($VIEW)"
	fi
	if qr_logged '"msg":"majority regained' "$small"; then
		pass "quorum_basics: the minority logged INFO 'majority regained'"
	else
		fail "quorum_basics: no 'majority regained' on {$small}"
	fi
	qr_restart
	settle quorum_basics
}

# --- a voter restarted from its state file keeps the leader's lease ----------

# qr_leases I prints node I's leases_lost counter ("" if it does not answer).
qr_leases() {
	local out
	out=$(timeout 2 ip netns exec "$(llt_ns "$1")" "$BIN" status --http "127.0.0.1:$HTTP_PORT" --json 2>/dev/null) || return 0
	[[ ${out//[$' \t\r\n']/} =~ \"leases_lost\":([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}

# qr_voter_restart LABEL ARGS...: with only a bare majority up, SIGKILL one
# of the leader's voters and start it again at once with ARGS; succeeds if
# after 4 s the same node leads without having lost its lease. Sets
# QR_DETAIL.
qr_voter_restart() {
	local label=$1 L=$AGREED T=$AGREED_TERM v lost0 lost1
	shift
	v=$(without "$(alive_nodes)" "$L")
	v=${v%% *}
	lost0=$(qr_leases "$L")
	llt_node_crash "$v"
	NODE_ARGS_ONE[$v]="$*"
	node_start "$v"
	unset "NODE_ARGS_ONE[$v]"
	sleep 4
	lost1=$(qr_leases "$L")
	agree "$(alive_nodes)" >/dev/null
	QR_DETAIL="$label: n$v restarted; n$L's leases lost ${lost0:-?} -> ${lost1:-?}; leader now n${AGREED:-?} term ${AGREED_TERM:-?} (was n$L term $T)"
	[ -n "$lost0" ] && [ "$lost0" = "$lost1" ] && [ "$AGREED" = "$L" ] && [ "$AGREED_TERM" = "$T" ]
}

sc_quorum_voter_restart() {
	say "quorum: a bare majority up; a voter SIGKILLed and restarted at once acks the leader from its state file"
	# Promise 2 s, lease 1.6 s: a restart takes well under that, and a
	# cold voter refuses everyone for the whole promise.
	qr_restart --cluster-size "$NODES" --misses 10
	settle quorum_voter_restart || { qr_restart; settle quorum_voter_restart; return 1; }
	local L=$AGREED i n=0 t0
	t0=$(llt_now_ms)
	for i in $(without "$(alive_nodes)" "$L"); do
		if ((n < NODES / 2)); then n=$((n + 1)); else llt_node_crash "$i"; fi
	done
	sleep 2
	if ! settle quorum_voter_restart; then
		fail "quorum_voter_restart: no leader with a bare majority up ($VIEW)"
	elif qr_voter_restart "from its state file"; then
		pass "quorum_voter_restart: $QR_DETAIL"
	else
		fail "quorum_voter_restart: $QR_DETAIL"
	fi
	# The contrast: without a state file the restarted voter refuses its
	# leader for the promise period, which outlasts the lease.
	if settle quorum_voter_restart && ! qr_voter_restart "cold" --state-dir ""; then
		pass "quorum_voter_restart: cold, the leader's lease ran out: $QR_DETAIL"
	else
		fail "quorum_voter_restart: cold, the leader kept its lease, so the check above proves nothing: $QR_DETAIL"
	fi
	EXCLUDED+=("quorum_voter_restart:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 1000))")
	qr_restart
	settle quorum_voter_restart
}

# --- failover with and without quorum (a measurement, not in the default run)

# qr_series NAME ARGS...: restart the cluster with ARGS, then ROUNDS SIGKILLs
# of the leader (bench_series); prints the series' p50 in ms.
qr_series() {
	local name=$1
	shift
	qr_restart "$@"
	settle "$name" || return 1
	bench_series "$name" kill >&2
	local s=${SERIES[${#SERIES[@]} - 1]#*:}
	python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1].split(",") if x]; print(round(statistics.median(v)) if v else "")' "$s"
}

sc_quorum_failover() {
	say "quorum: crash failover, $NODES nodes, $INTERVAL, $ROUNDS rounds each, without and with --cluster-size $NODES (load $(cut -d' ' -f1-3 /proc/loadavg))"
	SERIES=()
	local plain quorum
	plain=$(qr_series failover_plain) || { fail "quorum_failover: no figures without quorum"; qr_restart; return 1; }
	quorum=$(qr_series failover_quorum --cluster-size "$NODES") || { fail "quorum_failover: no figures with quorum"; qr_restart; return 1; }
	# Without quorum a follower whose probe finds the dead leader's port
	# closed claims at once; in quorum mode it must still wait out its
	# grant (an ICMP answer is not authenticated, so it cannot end a
	# promise), which makes quorum failover the detector's: within the
	# crash bound.
	info "quorum_failover: p50 ${quorum:-?} ms with quorum, ${plain:-?} ms without (probe fast path)"
	if [ -n "$quorum" ] && ((quorum <= FAILOVER_BOUND_MS)); then
		pass "quorum_failover: p50 $quorum ms with quorum, within the crash bound $FAILOVER_BOUND_MS ms"
	else
		fail "quorum_failover: p50 ${quorum:-?} ms with quorum > crash bound $FAILOVER_BOUND_MS ms"
	fi
	qr_restart
	settle quorum_failover
}

register_scenario quorum_failover
register_scenario quorum_oversize default
register_scenario quorum_basics default
register_scenario quorum_voter_restart default
