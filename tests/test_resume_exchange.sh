#!/bin/sh
#  test_resume_exchange - a job of total exchanges, its spawner killed in
#  the middle of a drain, is resumed and drained to a verified answer
#
#  Three things broke this run.  A daemon waiting in jace_task_alltoallv
#  for a partner that died with the spawner did not answer the resume's
#  ADOPT, so the resume replaced that healthy task too, and its restore
#  needed pieces the partner's new daemon no longer logged.  The dead
#  spawner's spares stayed leased for ever (the resumed spawner renews
#  the job's lease), so the drain found no room and never finished.  And
#  two tasks moved together broke the exchange logs the same way.  The
#  job's last round waits for a file the test creates once the resumed
#  drain is over (exchange/hold_file), so the job outlasts all this on
#  any machine.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 7

cat >"$RUN/two.platform" <<PLATFORM
platform
    name = "two"
    backbone
        latency_us = 2000
        bandwidth_mbps = 100
    cluster
        name = "A"
        nodes = 4
    cluster
        name = "B"
        nodes = 4
        supernodes = 0
PLATFORM
cat >"$RUN/x.job" <<JOB
job
    application = "exchange"
    mode = "async"
    tasks = 4
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    heartbeat_timeout = 2000
    stall_snapshots = 0
exchange
    rounds = 40
    hold_file = "$RUN/open"
    bytes = 2000
    sizes = "random"
    seed = 5
    pause_ms = 100
checkpoint
    every_seconds = 1
JOB

"$BIN/jace-grid" start --platform "$RUN/two.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of two clusters of 4 daemons starts"
sn=$(cat "$RUN/grid.endpoint")

"$BIN/jace-spawner" submit "$RUN/x.job" --supernode "$sn" -q \
    --events "$RUN/first.events" >"$RUN/first.out" 2>"$RUN/first.err" &
spawner=$!
wait_for 120 all_iterate "$RUN/first.events" 4
id=$(jq -r 'select(.event == "start") | .job' "$RUN/first.events")
busiest=$(busiest_cluster "$RUN/first.events")
"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "jace-spawner drain --cluster $busiest is taken"
wait_for 60 grep -q '"event":"drain_move"' "$RUN/first.events"
kill -9 "$spawner"
wait "$spawner" 2>/dev/null
! grep -q '"event":"drained"' "$RUN/first.events"
ok $? "the spawner died mid-drain"

timeout $((200 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    -q --events "$RUN/resume.events" >"$RUN/resume.out" 2>"$RUN/resume.err" &
spawner=$!
wait_for 120 grep -q '"event":"drained"' "$RUN/resume.events"
touch "$RUN/open"
wait "$spawner"
ok $? "the resumed job exits 0"
residual=$(job_residual resume)
[ "$residual" = 0 ]
ok $? "with every piece of every round delivered once (residual $residual)"
jq -e -s --arg c "$busiest" 'any(.event == "drained" and .cluster == $c)
    and (map(select(.event == "drain_move")) | group_by(.time)
         | all(length == 1))' "$RUN/resume.events" >/dev/null
ok $? "the resumed spawner finished the drain, one task at a time"
diag "$(grep -h 'answers at' "$RUN"/grid/logs/*sn*.log)"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
