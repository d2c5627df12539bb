# shellcheck shell=bash
# Applications as users (issue 24, docs/applications.md): three nodes in
# quorum mode (cluster_size 3), each with the example home gateway
# (examples/applications/gateway.py) under Debian's /usr/bin/python3 and
# python3-apscheduler, lanleader configured from examples/applications.
#
#   apps_a   way (a): http: jobs every second; the leader is killed three
#            times; every Idempotency-Key reaches the gateways once, and no
#            instant is missed outside the failovers (misfire run-once).
#   apps_b   way (b): the gateway's APScheduler as a leader-only service.
#            The leader is killed: its successor's scheduler starts within
#            a second of its takeover. Then, with a scheduler that takes 2 s
#            to stop (stop_grace 3s), the leader's
#            lanleader is stopped (SIGSTOP) for 8 s: its scheduler is stopped
#            by its shim meanwhile, and never two schedulers are alive.
#   apps_c   way (c): the snippet docs/applications.md shows, taken from the
#            guide, answers true on the leader only; the gateway's own
#            scheduler on every node asking it does each instant once.
#   apps_unguarded (not in the default suite) builds lanleader with the
#            services' wait for the previous copy switched off and runs
#            apps_b's SIGSTOP part with it: the check must see two
#            schedulers alive at once (it shows the check can fail).
#
# Sourced by scripts/netns-test.sh (see README.md here). Uses nodes 1-3 of
# the suite's topology and restores the suite's cluster when done.

APPS_PY=/usr/bin/python3 # Debian's, which sees python3-apscheduler
APPS_DIR="$REPO/examples/applications"
APPS_CHECK="$HERE/lib/apps_check.py"
declare -A APPS_GW_PID=()

# apps_ready: Debian's python3 with APScheduler, as .ci/run installs it.
apps_ready() {
	if ! "$APPS_PY" -c 'import apscheduler.schedulers.blocking' 2>/dev/null; then
		fail "$1: $APPS_PY cannot import apscheduler (apt-get install python3-apscheduler)"
		return 1
	fi
}

# apps_config WAY [SED...]: the example config of WAY, its cron schedules
# made "every second" and further sed expressions applied, as the config
# file of the nodes.
apps_config() {
	local way=$1
	shift
	CONFIG_FILE="$WORK/apps-$way.yaml"
	sed -E -e 's|schedule: "CRON_TZ=Europe/Paris [^"]*"|schedule: "* * * * * *"|' "$@" \
		"$APPS_DIR/lanleader-$way.yaml" >"$CONFIG_FILE"
}

# apps_gateway I ARGS...: the gateway (not a child of lanleader) in node I.
apps_gateway() {
	local i=$1
	shift
	setsid ip netns exec "$(llt_ns "$i")" env LANLEADER_NODE="n$i" "$APPS_PY" "$APPS_DIR/gateway.py" "$@" \
		>>"$WORK/gw-n$i.out" 2>&1 </dev/null &
	APPS_GW_PID[$i]=$!
}

# apps_cluster [GATEWAY_ARGS...]: nodes 1-3 with CONFIG_FILE, quorum of 3,
# 100 ms heartbeats (a 0.5 s gathering window), each with its gateway
# started first with GATEWAY_ARGS (none: no gateway), where STATE in them
# is replaced by the node's own state directory.
apps_cluster() {
	local i
	[ -n "${APPS_BEGIN:-}" ] || APPS_BEGIN=$(llt_now_ms)
	cluster_stop
	if [ $# -gt 0 ]; then
		for i in 1 2 3; do apps_gateway "$i" "${@//STATE/$WORK/gw-$APPS_WAY-n$i}"; done
	fi
	NODE_ARGS=(--cluster-size 3 --interval 100ms)
	NODE_ARGS_ONE=()
	for i in 1 2 3; do node_start "$i"; done
	llt_poll 10000 100 agree "1 2 3"
}

# apps_restore: the suite's cluster again (its config, every node).
apps_restore() {
	local t0 i
	t0=$(llt_now_ms)
	cluster_stop
	for i in "${!APPS_GW_PID[@]}"; do kill "${APPS_GW_PID[$i]}" 2>/dev/null; done
	APPS_GW_PID=()
	unset CONFIG_FILE
	NODE_ARGS=()
	NODE_ARGS_ONE=()
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	# The suite's tick job did not run meanwhile, and starts afresh:
	# instants around the restart may run twice.
	EXCLUDED+=("apps_restart:$((t0 - UNANNOUNCED_MS)):$(($(llt_now_ms) + 3000))")
	FAILOVERS+=("$1:${APPS_BEGIN:-$t0}:$(($(llt_now_ms) + 3000))")
	APPS_BEGIN=""
	settle "$1" && runs_jobs "$1"
}

# apps_became I FROM_MS: when node I logged "became leader" after FROM_MS.
apps_became() {
	python3 "$HELPER" first-event --after "$2" --msg "became leader" "$WORK/n$1.log" | cut -d' ' -f1 | cut -d. -f1
}

sc_apps_a() {
	say "apps (a): http: jobs call each node's gateway; the leader is killed three times"
	apps_ready apps_a || return 1
	local i k L t0 rest windows=() r
	apps_config a
	APPS_WAY=a
	if ! apps_cluster serve --state STATE; then
		fail "apps_a: the three nodes did not elect one leader ($VIEW)"
		apps_restore apps_a
		return 1
	fi
	sleep 3
	for k in 1 2 3; do
		llt_poll 5000 100 agree "1 2 3" || info "apps_a: round $k: no agreement before the kill ($VIEW)"
		L=$AGREED
		sleep 0.5 # half a second after the instants: no request in flight
		llt_node_kill "$L"
		t0=$LLT_CRASH_MS
		rest=$(without "1 2 3" "$L")
		if llt_poll 10000 50 agree "$rest"; then
			info "apps_a: round $k: n$L killed, n$AGREED leads"
		else
			fail "apps_a: round $k: no successor of n$L ($VIEW)"
		fi
		windows+=(--window "$((t0 - 1000)):$(($(llt_now_ms) + 2000))")
		sleep 3
		apps_gateway "$L" serve --state "$WORK/gw-a-n$L"
		node_start "$L"
		sleep 3
	done
	sleep 2
	cluster_stop
	if r=$(python3 "$APPS_CHECK" keys "${windows[@]}" "$WORK"/gw-a-n*/actions.log); then
		pass "apps_a: every Idempotency-Key reached the gateways once, no instant missed outside the 3 failovers ($(echo "$r" | head -n1))"
	else
		fail "apps_a: $(echo "$r" | head -n 6 | tr '\n' ';')"
	fi
	apps_restore apps_a
}

# apps_b_sigstop NAME: way (b) with a scheduler that takes 2 s to stop and
# stop_grace 3s; the leader's lanleader (only it) is stopped for 8 s.
# Prints the checker's output; fails if two schedulers were alive at once.
apps_b_sigstop() {
	local name=$1 L t0 tc rest log r
	log="$WORK/gw-$name/actions.log"
	apps_config b -e "s|command: \[python3, /app/gateway.py, scheduler\]|command: [$APPS_PY, $APPS_DIR/gateway.py, scheduler, --state, $WORK/gw-$name, --every, \"1\", --stop-seconds, \"2\"]|" \
		-e 's|stop_grace: 5s|stop_grace: 3s|'
	apps_cluster || { fail "$name: the three nodes did not elect one leader ($VIEW)"; return 1; }
	llt_poll 10000 100 test -s "$log" || { fail "$name: no scheduler started"; return 1; }
	sleep 3
	agree "1 2 3"
	L=$AGREED
	rest=$(without "1 2 3" "$L")
	llt_stamp t0
	kill -STOP "${LLT_DAEMON_PID[$L]}"
	llt_poll 10000 50 agree "$rest" || info "$name: no successor while n$L was stopped ($VIEW)"
	sleep 8
	llt_stamp tc
	kill -CONT "${LLT_DAEMON_PID[$L]}"
	sleep 3
	cluster_stop
	r=$(python3 "$APPS_CHECK" overlap "$log")
	local rc=$?
	echo "$r" | sed 's/^/      /'
	APPS_SIGSTOP_OLD_STOP=$(echo "$r" | awk -v n="n$L" -v t0="$t0" '$2 == n && $5 <= t0 && $7 != "alive" {print $7}' | tail -n1)
	APPS_SIGSTOP_CONT=$tc
	return $rc
}

sc_apps_b() {
	say "apps (b): APScheduler as a leader-only service: the leader killed, then a leader's lanleader stopped"
	apps_ready apps_b || return 1
	local L t0 rest became start log="$WORK/gw-b/actions.log" r
	# The leader killed: a scheduler that stops at once, stop_grace 100ms.
	apps_config b -e "s|command: \[python3, /app/gateway.py, scheduler\]|command: [$APPS_PY, $APPS_DIR/gateway.py, scheduler, --state, $WORK/gw-b, --every, \"1\"]|" \
		-e 's|stop_grace: 5s|stop_grace: 100ms|'
	if ! apps_cluster; then
		fail "apps_b: the three nodes did not elect one leader ($VIEW)"
		apps_restore apps_b
		return 1
	fi
	llt_poll 10000 100 test -s "$log" || fail "apps_b: no scheduler started on the leader"
	sleep 3
	agree "1 2 3"
	L=$AGREED
	rest=$(without "1 2 3" "$L")
	llt_node_kill "$L"
	t0=$LLT_CRASH_MS
	if llt_poll 10000 50 agree "$rest" && llt_poll 10000 100 python3 "$APPS_CHECK" started-after "n$AGREED" "$t0" "$log" >/dev/null; then
		became=$(apps_became "$AGREED" "$t0")
		# When lanleader started it (exec), and when its first line ran.
		start=$(python3 "$HELPER" first-event --after "$t0" --msg "services: starting" "$WORK/n$AGREED.log" | cut -d' ' -f1 | cut -d. -f1)
		marker=$(python3 "$APPS_CHECK" started-after "n$AGREED" "$t0" "$log")
		if ((start - became <= 1000)); then
			pass "apps_b: n$L killed; n$AGREED became leader $((became - t0)) ms later and started its scheduler $((start - became)) ms after that (bound 1000; its first line ran $((marker - start)) ms later)"
		else
			fail "apps_b: n$AGREED started its scheduler $((start - became)) ms after it became leader (bound 1000)"
		fi
	else
		fail "apps_b: no successor scheduler after n$L was killed ($VIEW)"
	fi
	sleep 2
	cluster_stop
	if r=$(python3 "$APPS_CHECK" overlap --end "n$L:$t0" "$log"); then
		pass "apps_b: the leader killed: never two schedulers alive at once ($(echo "$r" | grep -c '^scheduler') schedulers)"
	else
		fail "apps_b: the leader killed: $(echo "$r" | grep OVERLAP | tr '\n' ';')"
	fi
	# The leader's lanleader stopped, its scheduler slow to stop.
	if apps_b_sigstop apps_b2 >"$WORK/apps_b2.out"; then
		pass "apps_b: a leader's lanleader stopped 8 s: never two schedulers alive at once"
	else
		fail "apps_b: a leader's lanleader stopped 8 s: $(grep OVERLAP "$WORK/apps_b2.out" | tr '\n' ';')$(grep -v '^scheduler' "$WORK/apps_b2.out" | head -n 2 | tr '\n' ';')"
	fi
	if [ -n "${APPS_SIGSTOP_OLD_STOP:-}" ] && ((APPS_SIGSTOP_OLD_STOP < APPS_SIGSTOP_CONT)); then
		pass "apps_b: the stopped lanleader's scheduler was stopped by its shim while lanleader was still stopped ($((APPS_SIGSTOP_CONT - APPS_SIGSTOP_OLD_STOP)) ms before SIGCONT)"
	else
		fail "apps_b: the stopped lanleader's scheduler did not end before SIGCONT (licence not enforced?)"
	fi
	apps_restore apps_b
}

sc_apps_c() {
	say "apps (c): the guide's /leader snippet, run as written"
	apps_ready apps_c || return 1
	local i snippet="$WORK/way_c.py" got want r
	if ! python3 "$APPS_CHECK" snippet "$REPO/docs/applications.md" "$APPS_DIR/gateway.py" >"$snippet"; then
		fail "apps_c: $(cat "$snippet")"
		return 1
	fi
	printf '\nimport sys\nprint(lanleader_may_act())\n' >>"$snippet"
	apps_config c
	APPS_WAY=c
	if ! apps_cluster ask --state "$WORK/gw-c" --every 1; then
		fail "apps_c: the three nodes did not elect one leader ($VIEW)"
		apps_restore apps_c
		return 1
	fi
	sleep 1
	got="" want=""
	for i in 1 2 3; do
		got+="n$i=$(ip netns exec "$(llt_ns "$i")" "$APPS_PY" "$snippet" 2>&1 | tail -n1) "
		[ "$i" = "$AGREED" ] && want+="n$i=True " || want+="n$i=False "
	done
	if [ "$got" = "$want" ]; then
		pass "apps_c: the snippet says True on the leader n$AGREED only ($got)"
	else
		fail "apps_c: the snippet says '$got', want '$want'"
	fi
	local t0
	t0=$(llt_now_ms)
	sleep 6
	local t1
	t1=$(llt_now_ms)
	kill -STOP "${LLT_DAEMON_PID[3]}" # a node whose lanleader does not answer
	r=$(ip netns exec "$(llt_ns 3)" "$APPS_PY" "$snippet" 2>&1 | tail -n1)
	kill -CONT "${LLT_DAEMON_PID[3]}"
	[ "$r" = False ] && pass "apps_c: a lanleader that does not answer is a no" || fail "apps_c: a stopped lanleader gave '$r'"
	cluster_stop
	if r=$(python3 - "$WORK/gw-c/actions.log" "$t0" "$t1" <<-'EOF'
		import collections, sys
		lo, hi = int(sys.argv[2]) / 1000 + 1, int(sys.argv[3]) / 1000 - 1
		n = collections.Counter()
		for line in open(sys.argv[1]):
		    f = dict(x.split("=", 1) for x in line.split()[1:] if "=" in x)
		    if line.startswith("did ") and lo <= float(f["at"]) <= hi:
		        n[f["key"]] += 1
		twice = [k for k, c in n.items() if c > 1]
		print("%d keys done in a stable cluster, %d twice %s" % (len(n), len(twice), " ".join(twice[:5])))
		sys.exit(1 if twice or not n else 0)
	EOF
	); then
		pass "apps_c: each node's scheduler asking /leader: $r"
	else
		fail "apps_c: $r"
	fi
	apps_restore apps_c
}

# apps_unguarded: apps_b's SIGSTOP part with a lanleader whose services do
# not wait for another leader's copy (startAtLocked's QuietAt replaced by the
# takeover itself): the check must find two schedulers alive at once.
sc_apps_unguarded() {
	say "apps (b) with the services' wait switched off: the check must catch it"
	apps_ready apps_unguarded || return 1
	local src="$WORK/unguarded-src" bin="$WORK/lanleader-unguarded" saved=$BIN
	mkdir -p "$src" && (cd "$REPO" && git ls-files -z | xargs -0 cp --parents -t "$src")
	sed -i 's/quiet, bounded := r.cfg.Succession.QuietAt(since, serviceStop(&sv.spec))/quiet, bounded := since, true/' "$src/jobs/services.go"
	grep -q 'quiet, bounded := since, true' "$src/jobs/services.go" || { fail "apps_unguarded: could not switch the wait off (jobs/services.go changed?)"; return 1; }
	(cd "$src" && CGO_ENABLED=0 go build -o "$bin" ./cmd/lanleader) || { fail "apps_unguarded: build failed"; return 1; }
	BIN=$bin
	if apps_b_sigstop apps_unguarded >"$WORK/apps_unguarded.out"; then
		fail "apps_unguarded: no overlap seen: the check would not catch a successor that does not wait"
	else
		pass "apps_unguarded: the check caught it: $(grep OVERLAP "$WORK/apps_unguarded.out" | head -n1)"
	fi
	BIN=$saved
	apps_restore apps_unguarded
}

register_scenario apps_a default
register_scenario apps_b default
register_scenario apps_c default
register_scenario apps_unguarded
