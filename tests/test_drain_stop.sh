#!/bin/sh
#  test_drain_stop - a drain that waits for room can be stopped, by its
#  user or by a crash that would otherwise fail the job
#
#  Clusters A and B of 3 daemons and C of 1; a job of 6 tasks leaves one
#  daemon free.  X, a full cluster of A and B, is drained: its first task
#  moves to the free daemon, then the drain waits, no daemon being left
#  off X.  `status` says so, and `drain --stop` ends it (the moved task
#  stays, the others stay on X).  Y, the other of A and B, is drained in
#  turn and waits likewise; the task it moved is crashed, and no daemon
#  off Y is left for it.  The job used to wait job/reserve_timeout and
#  fail "for want of daemons" while Y's sat free; then, after half that
#  time, the drain gave way; now it does on the first listing that finds
#  no daemon off Y, the task goes on Y, and the job verifies.
#  Steps wait for checkpoints, taken every 3 iterations.  The job's last
#  round waits for a file the test creates once it is done with the job
#  (exchange/hold_file), so the job outlasts all this on any machine.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 15

cat >"$RUN/three.platform" <<EOF
platform
    name = "three"
    backbone
        latency_us = 2000
        bandwidth_mbps = 100
    cluster
        name = "A"
        nodes = 3
    cluster
        name = "B"
        nodes = 3
        supernodes = 0
    cluster
        name = "C"
        nodes = 1
        supernodes = 0
EOF
cat >"$RUN/x.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tasks = 6
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    reserve_timeout = 6
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
    every_iterations = 3
EOF

#  True once the drain of cluster $1 waits for room.  (Not jq -e: over
#  many inputs it answers by the last one only.)
drain_waits () {
    event job drain_wait | grep -q "\"cluster\":\"$1\""
}

start_grid "$RUN/three.platform"
ok $? "a grid of clusters of 3, 3 and 1 daemons starts"

timeout $((300 * SLOW)) "$BIN/jace-spawner" submit "$RUN/x.job" \
    --supernode "$sn" -q --events "$RUN/job.events" >"$RUN/job.out" \
    2>"$RUN/job.err" &
job=$!
wait_for 120 all_iterate "$RUN/job.events" 6
id=$(jq -r 'select(.event == "start") | .job' "$RUN/job.events")
#  X: A, unless A holds the free daemon
on_a=$(jq -r 'select(.event == "assign" and .cluster == "A") | .task' \
       "$RUN/job.events" | wc -l)
if [ "$on_a" -eq 3 ]; then X=A; Y=B; else X=B; Y=A; fi
diag "job $id: $on_a tasks on A; draining $X, then $Y"

#  The drain of X: one task to the free daemon, then no room
"$BIN/jace-spawner" drain "$id" --cluster $X --supernode "$sn" \
    >"$RUN/drainX.out" 2>&1
ok $? "jace-spawner drain --cluster $X is taken"
wait_for 120 drain_waits "$X"
"$BIN/jace-spawner" status "$id" --supernode "$sn" >"$RUN/status.out" 2>&1
grep -q "^draining $X: 1 tasks moved, 2 left on it; waiting: no daemon off" \
    "$RUN/status.out"
ok $? "status says the drain of $X waits, and why"
"$BIN/jace-spawner" status "$id" --supernode "$sn" --json \
    >"$RUN/status.json" 2>&1
jq -e --arg c $X '.drain.cluster == $c and .drain.moved == 1
                  and .drain.left == 2' "$RUN/status.json" >/dev/null
ok $? "status --json has the drain"
"$BIN/jace-spawner" rebalance "$id" --supernode "$sn" \
    >"$RUN/rebalance.out" 2>&1
[ $? -ne 0 ] && grep -q "drain $id --stop" "$RUN/rebalance.out"
ok $? "a rebalance meanwhile is refused, naming how to stop the drain"

"$BIN/jace-spawner" drain "$id" --stop --supernode "$sn" \
    >"$RUN/stop.out" 2>&1
ok $? "jace-spawner drain --stop is taken"
grep -q "the drain of cluster $X stopped: 1 tasks moved, 2 left on it" \
    "$RUN/stop.out"
ok $? "it says what the drain did"
"$BIN/jace-spawner" drain "$id" --stop --supernode "$sn" \
    >"$RUN/stop2.out" 2>&1
[ $? -ne 0 ] && grep -q "no drain of job $id is under way" "$RUN/stop2.out"
ok $? "a second --stop is refused: no drain is under way"
"$BIN/jace-spawner" status "$id" --supernode "$sn" >"$RUN/status2.out" 2>&1
! grep -q "^draining" "$RUN/status2.out"
ok $? "status no longer shows a drain"

#  The drain of Y: one task to X's free daemon, then no room; that task
#  crashes
"$BIN/jace-spawner" drain "$id" --cluster $Y --supernode "$sn" \
    >"$RUN/drainY.out" 2>&1
ok $? "jace-spawner drain --cluster $Y is taken"
wait_for 120 drain_waits "$Y"
victim=$(jq -r "select(.event == \"drain_move\" and .cluster == \"$Y\")
                | .task" "$RUN/job.events" | head -n 1)
daemon=$(daemon_of job "$victim")
diag "the drain of $Y waits; killing $daemon, which runs task $victim"
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$daemon" >/dev/null
#  The last round needs the victim's pieces: the job cannot end before
#  its task is replaced
touch "$RUN/open"

wait $job
ok $? "the job exits 0"
residual=$(job_residual job)
[ "$residual" = 0 ]
ok $? "with every piece of every round delivered once (residual $residual)"
jq -e -s --argjson t "$victim" --arg c $Y '
    any(.event == "drain_stopped" and .cluster == $c
        and (.why | startswith("task \($t) found no daemon off it")))
    and (map(select(.event == "replace" and .task == $t)) | last
         | .cluster == $c)' "$RUN/job.events" >/dev/null
ok $? "the drain of $Y gave way, and task $victim went on $Y"
"$BIN/jace-spawner" report "$RUN/job.events" >"$RUN/report.out" 2>&1
grep -q "drain of cluster $X at .*, stopped at .* with 1 moved and 2 left (asked by jace-spawner-drain)" \
    "$RUN/report.out" \
&& grep -q "drain of cluster $Y at .*, stopped at .* (task $victim found no daemon off it" \
    "$RUN/report.out"
ok $? "the report lists both drains and why each stopped"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
