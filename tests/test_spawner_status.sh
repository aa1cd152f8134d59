#!/bin/sh
#  tests/test_spawner_status.sh - `jace-spawner status JOBID` from another
#  terminal
#
#  While a job runs, status asks its spawner (found through the super-
#  node's lease) for the task table: one row per task with its daemon,
#  cluster, rows, iteration and state, as text and as JSON.  A job that is not
#  running is an error that says so.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 10

JOB=$JACE_SRCDIR/examples/poisson2d.job
start_supernode sn --heartbeat 200 --timeout 1000
start_daemon d1 --supernode "$SN_sn" --cluster A
start_daemon d2 --supernode "$SN_sn" --cluster B
check "two daemons register" wait_for 20 count_is 2 "$SN_sn"

#  A job that cannot converge: it runs until cancelled.
submit endless "$JOB" "$SN_sn" --set job/tasks=2 --set problem/n=16 \
    --set job/tolerance=1e-300 --set job/max_seconds=60 &
job=$!
wait_for 30 grep -q '"event":"start"' "$RUN/endless.events"
id=$(head -n 1 "$RUN/endless.events" | jq -r .job)

status_json () {
    timeout 10 "$BIN/jace-spawner" status "$id" --supernode "$SN_sn" --json
}
#  Progress, not time: both tasks have iterated.
iterating () {
    status_json | jq -e '[.table[] | select(.iteration > 0)] | length == 2'
}
check "status --json shows both tasks iterating" wait_for 30 iterating
status_json >"$RUN/status.json"
#  The job runs, or checks a snapshot (verifying) between two stretches
jq -e --arg id "$id" '.job == $id and .tasks == 2
    and (.state == "running" or .state == "verifying")
    and ([.table[].task] | sort == [0, 1])
    and ([.table[].daemon] | sort == ["d1", "d2"])
    and ([.table[].cluster] | sort == ["A", "B"])
    and ([.table[] | select(.state == "running" or .state == "converged")]
         | length == 2)
    and ([.table[].rows] | add == 16 and all (. > 0))' \
    "$RUN/status.json" >/dev/null
ok $? "one row per task: its daemon, cluster, rows (the 16 grid rows in all) and state (iterating), in a running job"

timeout 10 "$BIN/jace-spawner" status "$id" --supernode "$SN_sn" \
    >"$RUN/status.txt"
[ $? -eq 0 ] && head -n 1 "$RUN/status.txt" \
    | grep -qE "^$id  (running|verifying)  " \
    && grep -qE "TASK  DAEMON +CLUSTER +ROWS +ITERATION" "$RUN/status.txt" \
    && [ "$(grep -c -E '^ +[01]  d[12] ' "$RUN/status.txt")" -eq 2 ] \
    && head -n 1 "$RUN/status.txt" \
       | grep -qE "(no residual verified yet|last residual [0-9][0-9.e+-]*)\$"
ok $? "the text table has the job's line, a header and a row per task"

timeout 10 "$BIN/jace-spawner" status job-nosuch --supernode "$SN_sn" \
    >/dev/null 2>"$RUN/nosuch.err"
[ $? -eq 1 ] && grep -q "no running job job-nosuch" "$RUN/nosuch.err"
ok $? "status of a job that is not running exits 1 and says so"

timeout 30 "$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" \
    >/dev/null 2>&1
wait $job
[ $? -eq 1 ]
ok $? "the cancelled job's spawner exits 1"
#  Asked right after the end, while the grid may still name its spawner
timeout 10 "$BIN/jace-spawner" status "$id" --supernode "$SN_sn" \
    >"$RUN/ended.txt" 2>&1
[ $? -eq 0 ] && grep -q "^job $id ended at .*cancelled" "$RUN/ended.txt" \
    && ! grep -q "resume" "$RUN/ended.txt"
ok $? "status of the ended job says it ended, and how, not to resume it"
JACE_SECRETS=$RUN/nowhere timeout 10 "$BIN/jace-spawner" status "$id" \
    --supernode "$SN_sn" --secrets "$JACE_SECRETS" --json \
    >"$RUN/ended.json" 2>&1
[ $? -eq 0 ] && jq -e ".job == \"$id\" and .state == \"ended\"" \
    "$RUN/ended.json" >/dev/null
ok $? "with --secrets naming the folder, and in JSON"
lib_finish
