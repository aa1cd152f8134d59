#!/bin/sh
#  tests/test_platform_orphans.sh - no daemon works for a job that is over
#
#  A job that fails (iteration cap, time cap) leaves every daemon free
#  within 10 s; `jace-spawner jobs` lists a running job and `cancel` ends
#  it and frees its daemons; the daemons of a spawner that was SIGKILLed
#  leave the job after job/orphan_timeout, and `cancel` frees them at once
#  when no spawner answers for the job.
. "$(dirname "$0")/lib.sh"
lib_init
plan 19

JOB=$JACE_SRCDIR/examples/poisson3d.job
start_supernode sn --heartbeat 200 --timeout 1000
for d in 1 2 3 4 5 6; do
    start_daemon "d$d" --supernode "$SN_sn"
done
check "six daemons register" wait_for 20 count_is 6 "$SN_sn"
all_free () { count_is 6 "$SN_sn" '.state == "free"'; }
#  A job that cannot converge: it runs until something stops it.
ENDLESS="--set job/tasks=4 --set problem/n=24 --set job/tolerance=1e-300"

submit capped "$JOB" "$SN_sn" $ENDLESS --set job/max_iterations=50
[ $? -eq 1 ] && grep -q "no convergence within job/max_iterations" \
    "$RUN/capped.err"
ok $? "a job at its iteration cap fails and says why"
check "10 s later every daemon is free" wait_for 10 all_free

submit timed "$JOB" "$SN_sn" $ENDLESS --set job/max_seconds=2
[ $? -eq 1 ] && grep -q "wall-time limit" "$RUN/timed.err"
ok $? "a job at its time cap fails and says why"
check "10 s later every daemon is free" wait_for 10 all_free

#  jobs and cancel, with the job's spawner alive.
submit cancelled "$JOB" "$SN_sn" $ENDLESS --set job/max_seconds=100 &
job=$!
wait_for 30 grep -q '"event":"start"' "$RUN/cancelled.events"
id=$(head -n 1 "$RUN/cancelled.events" | jq -r .job)
wait_for 10 count_is 4 "$SN_sn" ".job == \"$id\""
"$BIN/jace-spawner" jobs --supernode "$SN_sn" --json >"$RUN/jobs.json"
jq -e ".[] | select(.job == \"$id\" and .daemons == 4 and .tasks == 4
               and .state != \"orphaned\")" "$RUN/jobs.json" >/dev/null
ok $? "jobs lists the running job, its 4 daemons and its spawner's state"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" >"$RUN/cancel.out" \
    2>"$RUN/cancel.err"
ok $? "cancel exits 0 once the job's daemons are free"
grep -q "cancelled by its spawner" "$RUN/cancel.out" \
    && grep -q "4 daemons freed" "$RUN/cancel.out"
ok $? "and says who cancelled and how many daemons were freed"
wait $job
[ $? -eq 1 ] && grep -q "cancelled by" "$RUN/cancelled.err"
ok $? "the cancelled job's spawner exits 1 and says it was cancelled"
check "every daemon is free" wait_for 10 all_free

#  A spawner that dies: its daemons are orphans until job/orphan_timeout.
"$BIN/jace-spawner" submit "$JOB" --supernode "$SN_sn" -q $ENDLESS \
    --set job/max_seconds=100 --set job/orphan_timeout=3 \
    --events "$RUN/orphan.events" >"$RUN/orphan.out" 2>"$RUN/orphan.err" &
spawner=$!
wait_for 30 grep -q '"event":"start"' "$RUN/orphan.events"
id=$(head -n 1 "$RUN/orphan.events" | jq -r .job)
kill -KILL "$spawner"; wait "$spawner" 2>/dev/null
check "its daemons leave the job after job/orphan_timeout" \
    wait_for 15 all_free
grep -q "silent for .*abandon" "$RUN"/d*.log
ok $? "and say why in their logs"

#  The same with a long orphan timeout: cancel stops the daemons itself.
"$BIN/jace-spawner" submit "$JOB" --supernode "$SN_sn" -q $ENDLESS \
    --set job/max_seconds=100 --events "$RUN/orphan2.events" \
    >"$RUN/orphan2.out" 2>"$RUN/orphan2.err" &
spawner=$!
wait_for 30 grep -q '"event":"start"' "$RUN/orphan2.events"
id=$(head -n 1 "$RUN/orphan2.events" | jq -r .job)
wait_for 10 count_is 4 "$SN_sn" ".job == \"$id\""
kill -KILL "$spawner"; wait "$spawner" 2>/dev/null
"$BIN/jace-spawner" jobs --supernode "$SN_sn" --json >"$RUN/jobs2.json"
jq -e ".[] | select(.job == \"$id\" and .state == \"orphaned\")" \
    "$RUN/jobs2.json" >/dev/null
ok $? "jobs shows the job of a dead spawner as orphaned"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" >"$RUN/cancel2.out" \
    2>"$RUN/cancel2.err"
ok $? "cancel frees the daemons of a job whose spawner is gone"
grep -q "no spawner answers" "$RUN/cancel2.out"
ok $? "and says it told the daemons itself"
#  It records the end the dead spawner could not: later commands say so
[ ! -e "$JACE_SECRETS/$id.secret" ] \
    && "$BIN/jace-spawner" status "$id" --supernode "$SN_sn" \
        >"$RUN/status2.out" 2>&1 \
    && grep -q "^job $id ended at .*cancelled by jace-spawner cancel" \
        "$RUN/status2.out"
ok $? "and records its end: the secret is gone, and status says it was cancelled"
(umask 077; printf '%040d\n' 0 >"$JACE_SECRETS/job-nosuch.secret")
"$BIN/jace-spawner" cancel job-nosuch --supernode "$SN_sn" \
    >/dev/null 2>"$RUN/cancel3.err"
[ $? -eq 1 ] && grep -q "no job job-nosuch" "$RUN/cancel3.err"
ok $? "cancelling an unknown job is an error that names it"
lib_finish
