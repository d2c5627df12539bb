# shellcheck shell=bash
# Issue 11, what the cluster knows and keeps: a scheduled instant runs once
# through 30 % loss (without quorum at most one duplicate per run of
# LEDGER_EPISODES episodes, each printed; with --cluster-size none), and
# through a power cut of every node (terms keep growing, no duplicate, the
# state files give the ledger back). Sourced by scripts/netns-test.sh (see
# README.md here).
#
#   ledger_powercut  (default, about 10 s)  SIGKILL every node, restart all
#   ledger_loss      (opt-in, about 2 × LEDGER_EPISODES × 36 s: 6 min with
#                    the default 5)  30 % random loss for 30 s per episode,
#                    no quorum, then the same with --cluster-size
#
# Run: sudo scripts/netns-test.sh --scenarios startup,ledger_powercut,ledger_loss
# (--nodes 3 for the 3-node figures).

LEDGER_EPISODES=${LEDGER_EPISODES:-5}
LEDGER_LOSS_SECONDS=${LEDGER_LOSS_SECONDS:-30}

# lg_restart ARGS...: stop every node at once and start them all again with
# ARGS. Their state dirs are kept, as after a power cut.
lg_restart() {
	local i
	cluster_stop
	NODE_ARGS=("$@")
	NODE_ARGS_ONE=()
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
}

# lg_dups NAME FROM TO: prints the runs of instants in [FROM, TO] (ms) that
# ran more than once, one line each ("INSTANT nX@termT nY@termU").
lg_dups() {
	local f
	f=$(ls "$WORK"/jobs-n*.log 2>/dev/null) || return 0
	# shellcheck disable=SC2086
	python3 "$HELPER" jobs --excluded "$1:$2:$3" $f | python3 -c '
import json, sys
name = sys.argv[1]
for d in json.load(sys.stdin)["duplicates_in_excluded_windows"]:
    if d.get("window") == name:
        print(d["instant"], " ".join(d["runs"]))' "$1"
}

sc_ledger_powercut() {
	say "power cut: SIGKILL every node at once, restart all from their state files"
	settle ledger_powercut || return
	local T0=$AGREED_TERM t0 t1
	t0=$(llt_now_ms)
	cluster_stop
	sleep 2 # instants fall into the outage
	NODE_ARGS=()
	NODE_ARGS_ONE=()
	local i
	for ((i = 1; i <= NODES; i++)); do node_start "$i"; done
	if ! settle ledger_powercut; then
		fail "ledger_powercut: no leader after restarting every node ($VIEW)"
		return
	fi
	sleep 3 # the gathering window, the misfire run, a few instants
	t1=$(llt_now_ms)
	# The round (term >> 24) must grow: a cold cluster restarts at round 1,
	# where another node's tag could still give a larger term.
	if python3 -c "import sys; sys.exit(0 if int(sys.argv[2]) >> 24 > int(sys.argv[1]) >> 24 else 1)" "$T0" "$AGREED_TERM"; then
		pass "ledger_powercut: terms keep growing (round $((T0 >> 24)), term $T0 before; round $((AGREED_TERM >> 24)), term $AGREED_TERM after)"
	else
		fail "ledger_powercut: round $((AGREED_TERM >> 24)) (term $AGREED_TERM) after the restart is not above round $((T0 >> 24)) (term $T0) before it"
	fi
	local d
	d=$(lg_dups ledger_powercut $((t0 - 10000)) "$t1")
	if [ -z "$d" ]; then
		pass "ledger_powercut: no instant ran twice across the power cut"
	else
		fail "ledger_powercut: instants ran twice across the power cut: $d"
	fi
	# The window is excluded from the suite's exactly-once check: checked here.
	EXCLUDED+=("ledger_powercut:$((t0 - 10000)):$t1")
}

# lg_episodes MODE ARGS...: LEDGER_EPISODES episodes of 30 % loss on a
# cluster started with ARGS; sets LG_EP (episodes run) and LG_DUPS (lines).
lg_episodes() {
	local mode=$1 e t0 t1 d
	shift
	lg_restart "$@"
	settle "ledger_loss_$mode" || return 1
	LG_EP=0 LG_DUPS=""
	for ((e = 1; e <= LEDGER_EPISODES; e++)); do
		t0=$(llt_now_ms)
		llt_loss 30
		sleep "$LEDGER_LOSS_SECONDS"
		llt_heal
		settle "ledger_loss_$mode" >/dev/null || sleep 3
		t1=$(llt_now_ms)
		EXCLUDED+=("ledger_loss_$mode$e:$((t0 - UNANNOUNCED_MS)):$t1")
		d=$(lg_dups "ledger_loss_$mode$e" $((t0 - UNANNOUNCED_MS)) "$t1")
		LG_EP=$((LG_EP + 1))
		if [ -n "$d" ]; then
			LG_DUPS+="episode $e: $d; "
			# Explain it: every leadership around the duplicate instants.
			info "ledger_loss $mode episode $e duplicate(s): $d"
			# shellcheck disable=SC2046
			python3 "$HELPER" leaderships $(logs_of "$(seq -s ' ' 1 "$NODES")") | tail -n 6 | sed 's/^/        /'
		fi
	done
}

sc_ledger_loss() {
	say "30 % loss for ${LEDGER_LOSS_SECONDS} s, $LEDGER_EPISODES episodes, without and with quorum ($NODES nodes)"
	local n
	if lg_episodes noquorum; then
		n=$(echo -n "$LG_DUPS" | grep -o 'episode' | wc -l)
		if ((n <= 1)); then
			pass "ledger_loss: no quorum: $n of $LG_EP episodes ran an instant twice (allowed: 1) ${LG_DUPS}"
		else
			fail "ledger_loss: no quorum: $n of $LG_EP episodes ran an instant twice: $LG_DUPS"
		fi
	else
		fail "ledger_loss: no quorum: the cluster did not settle"
	fi
	if lg_episodes quorum --cluster-size "$NODES"; then
		if [ -z "$LG_DUPS" ]; then
			pass "ledger_loss: quorum: no instant ran twice in $LG_EP episodes"
		else
			fail "ledger_loss: quorum: an instant ran twice: $LG_DUPS"
		fi
	else
		fail "ledger_loss: quorum: the cluster did not settle"
	fi
	lg_restart
	settle ledger_loss
}

register_scenario ledger_powercut default
register_scenario ledger_loss
