# shellcheck shell=bash
# Run now (`lanleader trigger`) from a host on the LAN that is not a node:
# an extra namespace on the suite's bridge. Sourced by scripts/netns-test.sh
# (see README.md here).

# ui_client_up adds the namespace ${LLT_PFX}cli with an address on the LAN
# (.200), joined to the bridge like a node; the suite's cleanup deletes it.
ui_client_up() {
	UI_NS="${LLT_PFX}cli"
	UI_IP="${LLT_NET}.200"
	ip netns list | grep -q "^$UI_NS\b" && return 0
	llt_ns_add "$UI_NS" || return 1
	ip -n "$LLT_SW" link add pcli type veth peer name eth0 netns "$UI_NS" || return 1
	ip -n "$LLT_SW" link set pcli master br0 up || return 1
	ip -n "$UI_NS" addr add "$UI_IP/24" brd + dev eth0 || return 1
	ip -n "$UI_NS" link set eth0 up || return 1
	llt_poll 5000 50 llt_link_ready "$UI_NS" eth0 && llt_poll 5000 50 llt_link_ready "$LLT_SW" pcli
}

# ui_trigger ARGS... runs `lanleader trigger` on the client host against the
# suite's cluster; output in $WORK/trigger.out.
ui_trigger() {
	timeout 20 ip netns exec "$UI_NS" "$BIN" trigger --cluster "$CLUSTER" --port "$UDP_PORT" \
		--bind "$UI_IP" "$@" >"$WORK/trigger.out" 2>&1
}

ui_lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# ui_trigger_jobs OPTIN: the trigger scenario's config; with OPTIN the nodes
# accept requests without a key (the suite's nodes have none).
ui_trigger_jobs() {
	if [ "$1" = 1 ]; then printf 'election:\n  trigger_without_key: true\n'; fi
	echo "jobs:
  - name: tick
    schedule: '@every 1s'
    shell: 'echo \"\$LANLEADER_NODE \$LANLEADER_TERM \$LANLEADER_SCHEDULED_AT\" >> $WORK/jobs-\$LANLEADER_NODE.log'
  - name: now
    schedule: '0 0 1 1 *'
    shell: 'echo \"\$LANLEADER_NODE \$LANLEADER_TRIGGER \$LANLEADER_RUN_ID\" >> $WORK/trigger-\$LANLEADER_NODE.log; exit 3'"
}

sc_trigger() {
	say "trigger: refused by a cluster without a key; with trigger_without_key, a host that is not a node runs a job now, once, on the leader"
	jobs_cluster trigger "$(ui_trigger_jobs 0)" || { jobs_restore trigger; return; }
	local L=$AGREED i total=0 rc
	if ! ui_client_up; then
		fail "trigger: could not add the client namespace"
		jobs_restore trigger
		return
	fi
	ui_trigger now
	rc=$?
	if [ "$rc" = 1 ] && grep -q "n$L refuses trigger requests: the cluster has no key" "$WORK/trigger.out" &&
		grep -q 'trigger: refused a request: this cluster has no key.*"addr":"'"$UI_IP" "$WORK/n$L.log" &&
		[ "$(cat "$WORK"/trigger-n*.log 2>/dev/null | wc -l)" = 0 ]; then
		pass "trigger: without a key n$L refused it, the client said why, n$L logged the sender $UI_IP; nothing ran"
	else
		fail "trigger: without a key, want a refusal naming $UI_IP and no run, got exit $rc: $(tr '\n' ' ' <"$WORK/trigger.out")"
	fi
	jobs_cluster trigger "$(ui_trigger_jobs 1)" || { jobs_restore trigger; return; }
	L=$AGREED
	ui_trigger --wait --wait-timeout 10s now
	rc=$?
	local out run
	out=$(tr '\n' ' ' <"$WORK/trigger.out")
	run=$(sed -n 's/.*run id \([0-9a-f]*\).*/\1/p' "$WORK/trigger.out" | head -n1)
	if [ "$rc" = 3 ] && [ -n "$run" ] && grep -q "on n$L " "$WORK/trigger.out"; then
		pass "trigger: n$L answered the client with run $run; --wait exited with the job's status 3"
	else
		fail "trigger: want a run on n$L and exit 3, got exit $rc: $out"
	fi
	for ((i = 1; i <= NODES; i++)); do total=$((total + $(ui_lines "$WORK/trigger-n$i.log"))); done
	if [ "$total" = 1 ] && grep -q "^n$L manual $run\$" "$WORK/trigger-n$L.log"; then
		pass "trigger: the job ran exactly once, on the leader n$L, as a manual run"
	else
		fail "trigger: want one manual run on n$L, got $total: $(cat "$WORK"/trigger-n*.log 2>/dev/null | tr '\n' ';')"
	fi
	if timeout 5 ip netns exec "$(llt_ns "$L")" "$BIN" jobs --json --http "127.0.0.1:$HTTP_PORT" | grep -q "\"run_id\": \"$run\""; then
		pass "trigger: n$L's /jobs lists the manual run $run"
	else
		fail "trigger: n$L's /jobs does not list run $run"
	fi
	ui_trigger nosuchjob
	if grep -q "unknown job" "$WORK/trigger.out"; then
		pass "trigger: an unknown job is refused by name"
	else
		fail "trigger: unknown job: $(tr '\n' ' ' <"$WORK/trigger.out")"
	fi
	jobs_restore trigger
}

register_scenario trigger default

# sc_trigger_loss: the link to the client loses the first TRIGGER_ANSWER
# (message type 10, UDP payload byte 5) that issues a ticket and the first
# that says a run started, and every second one after each, so the answers
# to the first send of the ticket request and of the run request are lost
# after the leader acted on them, however many sends a slow leader answers.
# The client resends each; the leader answers the resent run request with
# the run it started. The job runs once.
sc_trigger_loss() {
	say "trigger_loss: the first ticket and started answers to the client are lost; trigger resends, and the job runs once"
	jobs_cluster trigger_loss "$(ui_trigger_jobs 1)" || { jobs_restore trigger_loss; return; }
	local L=$AGREED i n total=0 rc lost run out
	if ! ui_client_up; then
		fail "trigger_loss: could not add the client namespace"
		jobs_restore trigger_loss
		return
	fi
	rm -f "$WORK"/trigger-n*.log
	# The answer's code is byte 72+c+2f of the UDP payload (cluster name
	# of c bytes; the leader's id, f bytes, as sender and as leader):
	# 4 ticket, 1 started. @th counts bits from the UDP header (8 bytes).
	local code=$(((8 + 72 + ${#CLUSTER} + 2 * ${#L} + 2) * 8)) c
	for c in 4 1; do
		if ! llt_nft add rule bridge llt loss oifname "pcli" udp sport "$UDP_PORT" @th,104,8 10 @th,"$code",8 "$c" \
			numgen inc mod 2 0 counter drop; then
			fail "trigger_loss: could not add the nftables rules"
			llt_heal
			jobs_restore trigger_loss
			return
		fi
	done
	ui_trigger --wait --wait-timeout 10s now
	rc=$?
	lost=0
	for n in $(llt_nft list chain bridge llt loss | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'); do lost=$((lost + n)); done
	llt_heal
	out=$(tr '\n' ' ' <"$WORK/trigger.out")
	run=$(sed -n 's/.*run id \([0-9a-f]*\).*/\1/p' "$WORK/trigger.out" | head -n1)
	if [ "$rc" = 3 ] && [ -n "$run" ] && [ "${lost:-0}" -ge 2 ]; then
		pass "trigger_loss: the first ticket and started answers lost ($lost in all); the client still got run $run from n$L and its status 3"
	else
		fail "trigger_loss: want run and exit 3 with the first ticket and started answers lost, got exit $rc, $lost lost: $out"
	fi
	for ((i = 1; i <= NODES; i++)); do total=$((total + $(ui_lines "$WORK/trigger-n$i.log"))); done
	if [ "$total" = 1 ] && grep -q "^n$L manual $run\$" "$WORK/trigger-n$L.log" &&
		grep -q "a repeated run request got its ticket's decision" "$WORK/n$L.log"; then
		pass "trigger_loss: the run answer was lost and the request resent, and the job ran once, on n$L"
	else
		fail "trigger_loss: want one manual run on n$L and a repeat answered by its decision, got $total: $(cat "$WORK"/trigger-n*.log 2>/dev/null | tr '\n' ';')"
	fi
	jobs_restore trigger_loss
}

register_scenario trigger_loss default
