# Job processes across the death and the graceful stop of their lanleader
# (issue 11): no orphan, and never two runs of one job at once.
# shellcheck shell=bash

# jobs_cluster CONFIG_TEXT starts every node with a config of its own and
# waits for one leader; jobs_restore brings back the suite's cluster.
jobs_cluster() {
	cluster_stop
	CONFIG_FILE="$WORK/jobs-$1.yaml"
	printf '%s\n' "$2" >"$CONFIG_FILE"
	local i
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	settle "$1"
}

# jobs_count_ge N CMD... succeeds when CMD prints a number >= N (for
# llt_poll, which runs it anew each time).
jobs_count_ge() {
	local n=$1
	shift
	(($("$@") >= n))
}
jobs_ns_count() { llt_ns_pids "$1" | wc -l; }
jobs_lines() { grep -c "$1" "$2"; }

jobs_restore() {
	cluster_stop
	unset CONFIG_FILE
	local i
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	settle "$1" || true
}

# A leader SIGKILLed while its job runs a process tree (children in the
# job's group and one that left it with setsid): every process of the job
# is gone within 1 s, so the next leader cannot start it beside them.
sc_orphans() {
	say "SIGKILL of lanleader (only) while its job runs a process tree: the job's processes are gone within 1 s"
	jobs_cluster orphans "jobs:
  - name: tree
    schedule: '@every 1s'
    shell: 'echo \"\$LANLEADER_NODE \$\$\" >> $WORK/tree.log; sleep 300 & setsid sleep 300 & sh -c \"sleep 300\"'" || { jobs_restore orphans; return; }
	local L=$AGREED f="$WORK/tree.log" before t0 t1 ms
	if ! llt_poll 5000 50 grep -q "^n$L " "$f"; then
		fail "orphans: leader n$L did not start its job within 5 s"
		jobs_restore orphans
		return
	fi
	llt_poll 2000 20 jobs_count_ge 6 jobs_ns_count "$L" || true
	before=$(llt_ns_pids "$L" | wc -l)
	llt_stamp t0
	kill -KILL "${LLT_DAEMON_PID[$L]}"
	llt_poll 5000 10 llt_ns_empty "$L"
	llt_stamp t1
	ms=$((t1 - t0))
	if llt_ns_empty "$L" && ((ms <= 1000)) && ((before >= 6)); then
		pass "orphans: n$L SIGKILLed with $((before - 1)) job processes running; all gone after $ms ms (bound 1000)"
	else
		fail "orphans: n$L SIGKILLed with $((before - 1)) job processes (want >= 5); after $ms ms left: $(llt_ns_pids "$L" | tr '\n' ' ')"
	fi
	llt_reap "$L"
	jobs_restore orphans
}

# A leader whose job ignores SIGTERM gets SIGTERM: it ends the run (the
# job finishes on its own, within kill_grace) before it resigns, so the
# successor's first run starts after the old run's end. Checked from the
# job's own start and end lines, which carry the wall clock.
sc_handover() {
	say "SIGTERM of a leader whose job ignores SIGTERM: never two runs of the job at once"
	local f="$WORK/stubborn.log"
	: >"$f"
	jobs_cluster handover "jobs:
  - name: stubborn
    schedule: '@every 1s'
    kill_grace: 20s
    shell: 'trap \"\" TERM; echo \"\$LANLEADER_NODE start \$(date +%s.%N)\" >> $f; sleep 3; echo \"\$LANLEADER_NODE end \$(date +%s.%N)\" >> $f'" || { jobs_restore handover; return; }
	local L=$AGREED t0 rest
	rest=$(without "$(alive_nodes)" "$L")
	if ! llt_poll 5000 50 grep -q "^n$L start" "$f"; then
		fail "handover: leader n$L did not start its job within 5 s"
		jobs_restore handover
		return
	fi
	sleep 0.5 # the run is going: SIGTERM the leader in the middle of it
	llt_stamp t0
	kill -TERM "${LLT_DAEMON_PID[$L]}"
	llt_poll 15000 50 llt_pid_gone "${LLT_DAEMON_PID[$L]}" || info "n$L still running 15 s after SIGTERM"
	llt_reap "$L"
	local rc=$LLT_EXIT_CODE
	if ! llt_poll 5000 50 agree "$rest"; then
		fail "handover: no successor agreed after n$L stopped ($VIEW)"
		jobs_restore handover
		return
	fi
	local S=$AGREED
	# Two runs of the successor, each ending.
	llt_poll 12000 100 jobs_count_ge 2 jobs_lines "^n$S end" "$f" || info "successor n$S ended fewer than 2 runs in 12 s"
	local res
	res=$(jobs_overlap "$f")
	if [[ $res == ok* ]] && grep -q "^n$L end" "$f" && grep -q "^n$S start" "$f"; then
		pass "handover: n$L stopped (exit $rc) after its run ended; n$S took over; $res, none overlapping"
	else
		fail "handover: $res (n$L exit $rc; see $f)"
	fi
	jobs_restore handover
}

# jobs_overlap FILE prints "ok N runs on NODES" or "OVERLAP ..." from a
# job's start and end lines ("nI start|end EPOCH"); a run still going at the
# end counts as going on forever.
jobs_overlap() {
	python3 - "$1" <<-'PY'
		import sys
		runs, open_ = [], {}
		for line in open(sys.argv[1]):
		    node, what, ts = line.split()
		    if what == "start":
		        open_[node] = float(ts)
		    elif node in open_:
		        runs.append((open_.pop(node), float(ts), node))
		for node, s in open_.items():
		    runs.append((s, float("inf"), node))
		runs.sort()
		bad = [(a, b) for a, b in zip(runs, runs[1:]) if b[0] < a[1]]
		nodes = sorted({r[2] for r in runs})
		if bad:
		    a, b = bad[0]
		    print("OVERLAP %d: %s ran %.3f-%.3f while %s started at %.3f" % (len(bad), a[2], a[0], a[1], b[2], b[0]))
		else:
		    print("ok %d runs on %s" % (len(runs), ",".join(nodes)))
	PY
}

# A leader running a long on_leader_loss: finish, overlap: skip job is cut
# off just after the run started; the others elect a better leader and the
# partition heals at once, so the old leader steps down without stopping and
# its run goes on. It tells the new leader it still runs it (FlagHolding):
# the new leader skips the instants due meanwhile and starts the job only
# after the run's end. Checked from the job's own start and end lines.
sc_held() {
	say "leader deposed by a healed partition while its finish job runs: never two runs of the job at once"
	local f="$WORK/held.log"
	: >"$f"
	jobs_cluster held "jobs:
  - name: long
    schedule: '*/10 * * * * *'
    on_leader_loss: finish
    overlap: skip
    shell: 'echo \"\$LANLEADER_NODE start \$(date +%s.%N)\" >> $f; sleep 14; echo \"\$LANLEADER_NODE end \$(date +%s.%N)\" >> $f'" || { jobs_restore held; return; }
	local L=$AGREED all rest
	all=$(alive_nodes)
	rest=$(without "$all" "$L")
	if ! llt_poll 12000 50 grep -q "^n$L start" "$f"; then
		fail "held: leader n$L did not start its job within 12 s"
		jobs_restore held
		return
	fi
	sleep 0.5 # the run is going: cut its leader off, then heal at once
	llt_partition "$L" "$rest"
	if ! llt_poll $((FAILOVER_BOUND_MS + 5000)) 50 agree "$rest"; then
		llt_heal
		fail "held: {$rest} did not elect a leader while n$L was cut off ($VIEW)"
		jobs_restore held
		return
	fi
	local S=$AGREED
	llt_heal
	if ! llt_poll $((HEAL_BOUND_MS + 5000)) 50 agree "$all" || [ "$AGREED" = "$L" ]; then
		fail "held: n$L was not deposed after the heal ($VIEW)"
		jobs_restore held
		return
	fi
	S=$AGREED
	# n$L's run ends about 14 s after it started; n$S skips the instant due
	# meanwhile and runs the next one to its end.
	llt_poll 40000 200 grep -q "^n$S end" "$f" || info "n$S ended no run within 40 s"
	local res skipped
	res=$(jobs_overlap "$f")
	skipped=$(grep -c 'previous run still going on another node' "$WORK/n$S.log" || true)
	if [[ $res == ok* ]] && kill -0 "${LLT_DAEMON_PID[$L]}" 2>/dev/null && grep -q "^n$L end" "$f" && grep -q "^n$S start" "$f" && ((skipped >= 1)); then
		pass "held: n$L deposed without stopping, its run ended; n$S skipped $skipped instant(s) meanwhile; $res, none overlapping"
	else
		fail "held: $res; n$S skipped $skipped instant(s) for n$L's run (see $f)"
	fi
	jobs_restore held
}

register_scenario orphans default
register_scenario handover default
register_scenario held default
