# shellcheck shell=bash
# The nemesis (netns-test.sh --nemesis DURATION): real nodes under a random
# schedule of faults drawn from a seed, then a checker over the nodes' own
# job logs, lanleader logs and state files. Sourced by scripts/netns-test.sh
# (see README.md here); it registers no scenario. The jobs and the schedule
# come from scripts/lib/nemesis_plan.py, the verdict from
# scripts/lib/nemesis_check.py.
#
# Faults run one after another: a quiet time, the fault, then recovery
# (heal, resume, restart what is down, wait for one agreed leader, bounded).
# Every action is appended to $WORK/nemesis-faults.log with its time, which
# is what the checker sets the nodes' logs against.

NM_PLAN="$HERE/lib/nemesis_plan.py"
NM_CHECK="$HERE/lib/nemesis_check.py"
NM_JOB="$HERE/lib/nemesis_job.sh"
declare -A NM_TIMING=() # node → its --interval/--misses flags
NM_STEP=0
NM_GEN=1

# nm_log ACTION ARGS...: one line of the fault log ("MS STEP ACTION ARGS"),
# echoed with the seconds since the start.
nm_log() {
	local now
	llt_stamp now
	nm_log_at "$now" "$@"
}

# nm_log_at MS ACTION ARGS...: nm_log for an action taken at MS.
nm_log_at() {
	local at=$1
	shift
	echo "$at $NM_STEP $*" >>"$WORK/nemesis-faults.log"
	printf '      %7.1fs step %s: %s\n' "$(((at - NM_T0) / 100))e-1" "$NM_STEP" "$*"
}

nm_sleep_ms() { (($1 > 0)) && sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; return 0; }

# nm_align OFFSET_MS sleeps until OFFSET_MS past the next whole second (a
# negative offset: that much before it, at least 20 ms from now): right
# after, or right before, an instant of the every-second jobs.
nm_align() {
	local now d
	now=$(llt_now_ms)
	d=$(((1000 - now % 1000 + $1 + 1000) % 1000))
	((d < 20)) && d=$((d + 1000))
	nm_sleep_ms "$d"
}

nm_start() {
	NODE_ARGS_ONE[$1]=${NM_TIMING[$1]:-}
	node_start "$1"
	nm_log start "n$1" ${NM_TIMING[$1]:-}
}

nm_kill() {
	llt_node_kill "$1"
	nm_log_at "$LLT_CRASH_MS" kill "n$1"
}

# nm_signal SIG SCOPE I: SIGSTOP/SIGCONT node I: every process of it (a VM
# freeze; its runs stop too) or its daemon alone (a stalled process; its
# runs go on).
nm_signal() {
	if [ "$2" = daemon ]; then
		kill -s "$1" "${LLT_DAEMON_PID[$3]}" 2>/dev/null
	else
		llt_node_signal "$1" "$3"
	fi
	nm_log "$(echo "$1" | tr '[:upper:]' '[:lower:]')" "n$3" "scope=$2"
}

# nm_leader sets AGREED to the leader every running node agrees on
# (bounded); fails if there is none.
nm_leader() { llt_poll 10000 100 agree "$(alive_nodes)"; }

# nm_exited: daemons that exited though the nemesis did not stop them (a
# crash or a panic): logged for the checker, then started again.
nm_exited() {
	local i
	for i in $(alive_nodes); do
		if ! kill -0 "${LLT_DAEMON_PID[$i]}" 2>/dev/null; then
			nm_log exited "n$i" "$(tail -n1 "$WORK/n$i.log" | cut -c1-200)"
			llt_reap "$i"
		fi
	done
}

# nm_recover: heal the network, resume every node, start every node that is
# down, and wait (bounded) for one agreed leader.
nm_recover() {
	local i
	llt_heal
	for i in $(alive_nodes); do llt_node_signal CONT "$i"; done
	nm_exited
	for ((i = 1; i <= NODES; i++)); do
		[ -n "${LLT_DAEMON_PID[$i]:-}" ] || nm_start "$i"
	done
	if llt_poll 15000 100 agree "$(alive_nodes)"; then
		nm_log settled "n$AGREED" "term=$AGREED_TERM"
	else
		nm_log unsettled "$VIEW"
	fi
}

# nm_param KEY: the value of KEY in the current step's "key=value" words.
nm_param() {
	local kv
	for kv in $NM_ARGS; do
		[ "${kv%%=*}" = "$1" ] && echo "${kv#*=}" && return
	done
}

nm_step_pause() {
	local L scope cls rest S
	nm_leader || { nm_log skipped "no agreed leader ($VIEW)"; return; }
	L=$AGREED scope=$(nm_param scope) cls=$(nm_param class)
	[ "$(nm_param align)" = instant ] && nm_align "$(nm_param offset_ms)"
	nm_signal STOP "$scope" "$L"
	if [ "$cls" = across ]; then
		# Across a successor's whole leadership: it is elected, leads,
		# and dies before the paused leader wakes.
		rest=$(without "$(alive_nodes)" "$L")
		if llt_poll 10000 50 agree "$rest"; then
			S=$AGREED
			nm_log successor "n$S" "term=$AGREED_TERM"
			nm_sleep_ms "$(nm_param lead_ms)"
			nm_kill "$S"
			llt_poll 10000 50 agree "$(without "$rest" "$S")" && nm_log successor "n$AGREED" "term=$AGREED_TERM"
		else
			nm_log no-successor "$VIEW"
		fi
	else
		nm_sleep_ms "$(nm_param ms)"
	fi
	nm_signal CONT "$scope" "$L"
}

nm_step_kill() {
	local v
	nm_leader || { nm_log skipped "no agreed leader ($VIEW)"; return; }
	v=$AGREED
	if [ "$(nm_param target)" = follower ]; then
		local f
		read -r -a f <<<"$(without "$(alive_nodes)" "$AGREED")"
		v=${f[$((NM_STEP % ${#f[@]}))]}
	fi
	[ "$(nm_param align)" = instant ] && nm_align "$(nm_param offset_ms)"
	nm_kill "$v"
	if [ "$(nm_param state)" = wipe ]; then
		rm -rf "$WORK/state.n$v"
		nm_log wiped "n$v"
	fi
	nm_sleep_ms "$(nm_param down_ms)"
	nm_start "$v"
}

nm_step_partition() {
	local L rest small big k x
	nm_leader || { nm_log skipped "no agreed leader ($VIEW)"; return; }
	L=$AGREED
	rest=$(without "$(alive_nodes)" "$L")
	k=$(((NODES - 1) / 2)) small="" big=""
	if [ "$(nm_param leader_side)" = minority ]; then small="$L"; k=$((k - 1)); else big="$L"; fi
	for x in $rest; do
		if ((k > 0)); then small+=" $x"; k=$((k - 1)); else big+=" $x"; fi
	done
	llt_partition "$small" "$big"
	nm_log partition "{${small# }}|{${big# }}"
	nm_sleep_ms "$(nm_param ms)"
	llt_heal
	nm_log heal
}

nm_step_oneway() {
	local L x rest
	nm_leader || { nm_log skipped "no agreed leader ($VIEW)"; return; }
	L=$AGREED
	rest=$(without "$(alive_nodes)" "$L")
	case $(nm_param dir) in
	from-leader) for x in $rest; do llt_oneway "$L" "$x"; done; nm_log oneway "n$L->{$rest}" ;;
	to-leader) for x in $rest; do llt_oneway "$x" "$L"; done; nm_log oneway "{$rest}->n$L" ;;
	*) x=${rest%% *}; llt_oneway "$L" "$x"; nm_log oneway "n$L->{$x}" ;;
	esac
	nm_sleep_ms "$(nm_param ms)"
	llt_heal
	nm_log heal
}

nm_step_loss() {
	llt_loss "$(nm_param pct)"
	nm_log loss "$(nm_param pct)%"
	nm_sleep_ms "$(nm_param ms)"
	llt_heal
	nm_log heal
}

nm_write_config() {
	python3 "$NM_PLAN" config --gen "$NM_GEN" --job-script "$NM_JOB" --out "$WORK/nemesis.yaml"
}

nm_step_reload() {
	local pids=() i
	NM_GEN=$((NM_GEN + 1))
	nm_write_config
	nm_align "$(nm_param offset_ms)"
	for i in $(alive_nodes); do pids+=("${LLT_DAEMON_PID[$i]}"); done
	kill -HUP "${pids[@]}" 2>/dev/null
	nm_log reload "gen=$NM_GEN" "$(alive_nodes)"
}

# nm_restart_gracefully I: SIGTERM (node I resigns if it leads, after its
# runs end), then start it again with its NM_TIMING.
nm_restart_gracefully() {
	kill -TERM "${LLT_DAEMON_PID[$1]}" 2>/dev/null
	nm_log sigterm "n$1"
	llt_poll 40000 50 llt_pid_gone "${LLT_DAEMON_PID[$1]}" || nm_log still-running "n$1"
	llt_node_crash "$1"
	nm_start "$1"
}

nm_step_timing() {
	local L order=() i n=0 flags cut
	nm_leader || { nm_log skipped "no agreed leader ($VIEW)"; return; }
	L=$AGREED
	flags="--interval $(nm_param interval_ms)ms --misses $(nm_param misses)"
	cut=$(nm_param cut_leader_mid_ms)
	if [ "$(nm_param order)" = leader-first ]; then order=("$L"); fi
	for i in $(without "$(alive_nodes)" "$L"); do order+=("$i"); done
	[ "$(nm_param order)" = leader-first ] || order+=("$L")
	nm_log timing "$flags" "order=${order[*]}"
	for i in "${order[@]}"; do
		NM_TIMING[$i]=$flags
		nm_restart_gracefully "$i"
		llt_poll 10000 100 agree "$(alive_nodes)" || nm_log unsettled "$VIEW"
		n=$((n + 1))
		if ((cut > 0 && n == NODES / 2)) && agree "$(alive_nodes)"; then
			# Mixed timings: cut the leader off, as the rolling change's
			# worst moment.
			llt_partition "$AGREED" "$(without "$(alive_nodes)" "$AGREED")"
			nm_log partition "{$AGREED}|{$(without "$(alive_nodes)" "$AGREED")}" mixed-timing
			nm_sleep_ms "$cut"
			llt_heal
			nm_log heal
		fi
	done
}

# run_nemesis: the --nemesis mode of netns-test.sh.
run_nemesis() {
	local dur_ms t_end i line verdict=0 rerun
	dur_ms=$(dur_ms "$NEMESIS_DURATION") || return 1
	rerun="sudo scripts/netns-test.sh --nemesis $NEMESIS_DURATION --seed $NEMESIS_SEED --nodes $NODES --interval $INTERVAL --misses $MISSES${NEMESIS_QUORUM:+ --quorum}"
	local mode="no quorum"
	[ -n "$NEMESIS_QUORUM" ] && mode="quorum (cluster_size $NODES)"
	say "nemesis: seed $NEMESIS_SEED, $NEMESIS_DURATION, $NODES nodes, interval $INTERVAL, misses $MISSES, $mode"
	echo "      rerun: $rerun"
	python3 "$NM_PLAN" plan --seed "$NEMESIS_SEED" --duration-ms "$dur_ms" --nodes "$NODES" \
		--interval-ms "$INTERVAL_MS" --misses "$MISSES" >"$WORK/nemesis-plan.txt" || return 1
	echo "      fault schedule (nominal start; the run stops at $NEMESIS_DURATION, as many steps as it reaches):"
	sed 's/^/        /' "$WORK/nemesis-plan.txt"
	mkdir -p "$WORK/nm-attempts"
	export NEMESIS_DIR=$WORK
	CONFIG_FILE="$WORK/nemesis.yaml"
	nm_write_config
	NODE_ARGS=()
	[ -n "$NEMESIS_QUORUM" ] && NODE_ARGS=(--cluster-size "$NODES")
	: >"$WORK/nemesis-faults.log"
	llt_stamp NM_T0
	for ((i = 1; i <= NODES; i++)); do nm_start "$i"; done
	if nm_leader; then nm_log settled "n$AGREED" "term=$AGREED_TERM"; else nm_log unsettled "$VIEW"; fi
	while read -r line; do
		(($(llt_now_ms) - NM_T0 >= dur_ms)) && break
		read -r _ NM_STEP _ NM_KIND NM_ARGS <<<"$line"
		nm_sleep_ms "$(nm_param quiet_ms)"
		(($(llt_now_ms) - NM_T0 >= dur_ms)) && break
		"nm_step_$NM_KIND"
		nm_recover
	done <"$WORK/nemesis-plan.txt"
	nm_log ran "$NM_STEP of $(wc -l <"$WORK/nemesis-plan.txt") steps in $((($(llt_now_ms) - NM_T0) / 1000)) s"
	NM_STEP=end
	nm_recover
	sleep 6 # a calm end: every instant owed up to here has had time to start
	llt_stamp t_end
	nm_log end
	cluster_stop
	nm_log stopped
	say "nemesis: checking the nodes' logs and state files"
	# shellcheck disable=SC2046
	python3 "$NM_CHECK" --work "$WORK" --nodes "$NODES" --end-ms "$t_end" ${NEMESIS_QUORUM:+--quorum} \
		--rerun "$rerun" | tee "$WORK/nemesis-verdict.txt"
	verdict=${PIPESTATUS[0]}
	if [ "$verdict" = 0 ]; then
		pass "nemesis: seed $NEMESIS_SEED: $(tail -n1 "$WORK/nemesis-verdict.txt")"
	else
		fail "nemesis: seed $NEMESIS_SEED: $(tail -n1 "$WORK/nemesis-verdict.txt"); rerun: $rerun"
	fi
}
