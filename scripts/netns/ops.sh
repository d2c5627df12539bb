# shellcheck shell=bash
# Reload (SIGHUP) of the leader's config file mid-run: a job added, a job
# removed. Sourced by scripts/netns-test.sh (see README.md here).

# reload_write EXTRA_JOB writes the suite's config plus one more every-second
# job named EXTRA_JOB (none if empty), which appends to $WORK/reload-NAME.log.
reload_write() {
	write_config
	[ -n "$1" ] || return 0
	cat >>"$WORK/config.yaml" <<EOF
  - name: $1
    schedule: "@every 1s"
    shell: 'echo "\$LANLEADER_NODE \$LANLEADER_SCHEDULED_AT" >> $WORK/reload-$1.log'
EOF
}

reloads_of() { grep -c '"msg":"config reloaded"' "$WORK/n$1.log" 2>/dev/null || true; }
lines_of() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# reload_leader L WANT: SIGHUP node L and wait until it has logged WANT
# "config reloaded" lines.
reload_leader() {
	kill -HUP "${LLT_DAEMON_PID[$1]}"
	llt_poll 5000 50 reloaded "$1" "$2"
}
reloaded() { [ "$(reloads_of "$1")" -ge "$2" ]; }

sc_reload() {
	say "reload: the leader's file gains one job and loses another (SIGHUP)"
	settle reload || return 1
	local L=$AGREED T=$AGREED_TERM t0 base
	t0=$(llt_now_ms)
	base=$(reloads_of "$L")

	reload_write gone
	if ! reload_leader "$L" $((base + 1)) || ! llt_poll 3000 100 test -s "$WORK/reload-gone.log"; then
		fail "reload: n$L did not reload or never ran the job 'gone' it gained ($(grep -h 'reload' "$WORK/n$L.log" | tail -n 2 | cut -c1-300))"
		reload_write "" && reload_leader "$L" $((base + 2))
		return 1
	fi
	pass "reload: n$L gained the job 'gone' by SIGHUP and runs it"

	reload_write added
	if ! reload_leader "$L" $((base + 2)); then
		fail "reload: n$L did not log the second reload"
		return 1
	fi
	sleep 0.3 # a run of 'gone' started just before the reload may still write its line
	local gone_at
	gone_at=$(lines_of "$WORK/reload-gone.log")
	if llt_poll 3000 100 test -s "$WORK/reload-added.log"; then
		pass "reload: the added job runs on n$L"
	else
		fail "reload: the added job did not run on n$L within 3 s"
	fi
	sleep 2
	if [ "$(lines_of "$WORK/reload-gone.log")" = "$gone_at" ]; then
		pass "reload: the removed job has not run since the reload"
	else
		fail "reload: the removed job ran after the reload ($gone_at then $(lines_of "$WORK/reload-gone.log") lines)"
	fi
	if grep -q '"msg":"config reloaded".*"jobs_removed":\["gone"\]' "$WORK/n$L.log"; then
		pass "reload: n$L reports the removed job"
	else
		fail "reload: n$L's log does not report 'gone' removed"
	fi

	local n
	n=$(count_events "$t0" "$(llt_now_ms)" "$(alive_nodes)")
	if agree "$(alive_nodes)" && [ "$AGREED" = "$L" ] && [ "$AGREED_TERM" = "$T" ] && [ "${n:-0}" = 0 ]; then
		pass "reload: no leadership change (n$L leads under term $T, no leadership log lines)"
	else
		fail "reload: leadership changed during the reloads (now n$AGREED term $AGREED_TERM, was n$L term $T; $n leadership events; $VIEW)"
	fi

	# Back to the suite's config for the scenarios after this one.
	reload_write ""
	reload_leader "$L" $((base + 3)) || fail "reload: n$L did not reload the suite's config back"
	settle reload
}

register_scenario reload default
