#!/bin/sh
#  test_drain_undone - after a drain, a crash that leaves no daemon off the
#  drained cluster is replaced on it rather than the job failing
#
#  Two clusters of 4 daemons, a job of 4 tasks: once the cluster running
#  most tasks is drained, the other is full.  A daemon of a moved task is
#  then killed.  Its task used to wait for a daemon off the drained
#  cluster until job/reserve_timeout and fail the job ("no daemon is left
#  to replace task N"), while the drained cluster's daemons sat free.
#  Now the reason names the daemons kept off, and after half the timeout
#  the drained cluster takes tasks again.  The job's last round waits for
#  a file the test creates once the daemon is killed (exchange/hold_file),
#  so the job outlasts all this on any machine.  Its tasks all take part
#  in total exchanges, so the drain moves them one at a time.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 9

cat >"$RUN/two.platform" <<EOF
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
EOF
cat >"$RUN/x.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tasks = 4
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    reserve_timeout = 8
    heartbeat_timeout = 2000
    stall_snapshots = 0
exchange
    rounds = 40
    hold_file = "$RUN/open"
    bytes = 2000
    sizes = "random"
    seed = 3
    pause_ms = 100
checkpoint
    every_seconds = 1
EOF

start_grid "$RUN/two.platform"
ok $? "a grid of two clusters of 4 daemons starts"

timeout $((300 * SLOW)) "$BIN/jace-spawner" submit "$RUN/x.job" \
    --supernode "$sn" -q --events "$RUN/job.events" >"$RUN/job.out" \
    2>"$RUN/job.err" &
job=$!
wait_for 120 all_iterate "$RUN/job.events" 4
id=$(jq -r 'select(.event == "start") | .job' "$RUN/job.events")
busiest=$(busiest_cluster "$RUN/job.events")
"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "jace-spawner drain --cluster $busiest is taken"
#  Once every task has checkpointed after the drain: a task killed
#  before has no copy left of the round its partners' logs begin at
wait_for 120 grep -q '"event":"drain_copied"' "$RUN/job.events"
#  Each task recovers from the others' logs of their total exchanges: two
#  moved together failed the job ("no longer holds its piece")
jq -e -s 'map(select(.event == "drain_move")) | length >= 2
          and (group_by(.time) | all(length == 1))' "$RUN/job.events" \
    >/dev/null
ok $? "the tasks of a total-exchange job were moved one at a time"
victim=$(jq -r 'select(.event == "replace") | .daemon' "$RUN/job.events" |
         head -n 1)
task=$(jq -r "select(.event == \"replace\" and .daemon == \"$victim\")
              | .task" "$RUN/job.events" | head -n 1)
diag "job $id; drained $busiest; killing $victim, which runs task $task"
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$victim" >/dev/null
ok $? "a moved task's daemon is killed once the drain is over"
#  The last round needs its pieces: the job cannot end before the task
#  is replaced
touch "$RUN/open"

wait $job
ok $? "the job exits 0"
residual=$(job_residual job)
[ "$residual" = 0 ]
ok $? "with every piece of every round delivered once (residual $residual)"

kept_off="free daemons of drained $busiest kept off"
grep -q "no daemon for task $task yet: .* $kept_off" "$RUN/job.err"
ok $? "while it waits, the reason names the drained cluster's daemons"
jq -e -s --argjson t "$task" --arg c "$busiest" '
    any(.event == "drain_undone" and .task == $t and .clusters == $c)
    and (map(select(.event == "replace" and .task == $t)) | last
         | .cluster == $c)' "$RUN/job.events" >/dev/null
ok $? "then the drained cluster takes task $task again"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
