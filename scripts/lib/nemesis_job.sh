#!/bin/bash
# The nemesis run's job (scripts/netns/nemesis.sh): one line per start and
# end of an attempt into $NEMESIS_DIR/nm-jobs-$LANLEADER_NODE.log:
#   STAMP EVENT NODE JOB SCHEDULED_AT TERM RUN_ID
# STAMP is the realtime clock ($EPOCHREALTIME, no fork): every namespace
# shares the kernel's clock, so stamps compare across nodes. EVENT is start,
# end (exit 0), fail (exit 1 on purpose) or term (SIGTERM: cancelled).
#   nemesis_job.sh run SECONDS          run SECONDS, then exit 0
#   nemesis_job.sh fail-first SECONDS   the run's first attempt exits 1, a
#                                       retry (same run id) succeeds
mode=$1 secs=$2
log="$NEMESIS_DIR/nm-jobs-$LANLEADER_NODE.log"
line() {
	printf '%s %s %s %s %s %s %s\n' "$EPOCHREALTIME" "$1" "$LANLEADER_NODE" "$LANLEADER_JOB" \
		"$LANLEADER_SCHEDULED_AT" "$LANLEADER_TERM" "$LANLEADER_RUN_ID" >>"$log"
}
line start
trap 'line term; exit 143' TERM
if [ "$mode" = fail-first ]; then
	mark="$NEMESIS_DIR/nm-attempts/$LANLEADER_RUN_ID"
	if [ ! -e "$mark" ]; then
		: >"$mark"
		line fail
		exit 1
	fi
fi
if [ "$secs" != 0 ]; then
	sleep "$secs" &
	wait $!
fi
line end
