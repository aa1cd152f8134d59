#!/bin/sh
#  tests/test_spawner_cancel_busy.sh - `jace-spawner cancel` of a job
#  whose spawner is alive but slow to answer
#
#  The spawner is frozen (SIGSTOP) for 3 s while cancel asks it: it still
#  holds its lease, so cancel waits for it instead of telling its daemons
#  to stop behind its back.  That used to happen after 1 s: the spawner,
#  busy on a loaded machine, then took every daemon for crashed,
#  replaced them all, and the job failed for want of daemons.
. "$(dirname "$0")/lib.sh"
lib_init
plan 6

start_supernode sn --heartbeat 200 --timeout 10000
start_daemon d1 --supernode "$SN_sn" --cluster A
start_daemon d2 --supernode "$SN_sn" --cluster A
check "two daemons register" wait_for 20 count_is 2 "$SN_sn"

#  A job that cannot converge: it runs until cancelled.
"$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_sn" -q --events "$RUN/job.events" --set job/tasks=2 \
    --set problem/n=16 --set job/tolerance=1e-300 --set job/max_seconds=120 \
    --set job/stall_snapshots=0 >/dev/null 2>"$RUN/job.err" &
spawner=$!
check "both tasks iterate" wait_for $((30 * SLOW)) all_iterate \
    "$RUN/job.events" 2
id=$(head -n 1 "$RUN/job.events" | jq -r .job)

kill -STOP "$spawner"
timeout 60 "$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" \
    >"$RUN/cancel.out" 2>"$RUN/cancel.err" &
cancel=$!
sleep 3
kill -CONT "$spawner"
wait $cancel
[ $? -eq 0 ] && grep -q "cancelled by its spawner" "$RUN/cancel.out" \
    && ! grep -q "told its" "$RUN/cancel.out"
ok $? "cancel waits for the frozen spawner, which cancels the job itself"
diag "$(cat "$RUN/cancel.err" "$RUN/cancel.out")"
wait $spawner
[ $? -eq 1 ] && grep -q '"event":"failure".*cancelled by' "$RUN/job.events" \
    && ! grep -q '"event":"dead"' "$RUN/job.events"
ok $? "the job ends cancelled, no daemon taken for dead"
lib_finish
