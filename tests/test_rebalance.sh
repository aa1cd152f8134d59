#!/bin/sh
#  test_rebalance - a running job's rows are cut again as its tasks'
#  measured rates say, and the job still ends with a verified answer
#
#  Job A (3D Poisson, two tasks, rebalanced on request): the daemon of
#  one task is crashed and the only daemon left to replace it is four
#  times slower; `jace-spawner rebalance` then moves rows to the fast
#  task.  Job B (a Matrix Market file, job/rebalance = auto) starts on a
#  fast and a slow daemon advertising the same power; the spawner
#  rebalances by itself, and the fast daemon is crashed while it does:
#  its replacement goes on from the iterate the spawner kept, not from
#  the initial state.  Both take the iterate from the daemons that held
#  it (job/rebalance_handoff = direct, the default): each new task asks
#  the old cut's owners for its rows and the unknowns it reads.  The
#  requests a spawner must refuse (an unknown
#  job, no secret, a job not running yet, a second rebalance while one
#  runs) and bad job keys are refused with a reason; test_drain checks
#  that a rebalance during a drain is refused.  Job C (auto, a threshold
#  of 1%) is rebalanced again and again, each time only after nine times
#  the last rebalance's pause; its iterate goes through the spawner
#  (job/rebalance_handoff = spawner).
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 32

#  Exact inner solves: each iteration does the same work, so the rates
#  measured are the nodes' speeds.
EXACT="--set solver/inner_tolerance=1e-12"

pid_of () {         #  pid_of DAEMON-ID
    eval "echo \$PID_$1"
}

#  --- Bad keys are refused before anything is leased -----------------
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson3d.job" \
    --supernode tcp://127.0.0.1:1 --set job/rebalance=sometimes \
    >"$RUN/badkey.out" 2>&1
[ $? -ne 0 ] && grep -q "job/rebalance = 'sometimes' is unknown" \
    "$RUN/badkey.out"
ok $? "job/rebalance must be off or auto"
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson3d.job" \
    --supernode tcp://127.0.0.1:1 --set job/rebalance_threshold=0 \
    >"$RUN/badthreshold.out" 2>&1
[ $? -ne 0 ] && grep -q "job/rebalance_threshold" "$RUN/badthreshold.out"
ok $? "job/rebalance_threshold must be a number in range"
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson3d.job" \
    --supernode tcp://127.0.0.1:1 --set job/rebalance_schedule=soon \
    >"$RUN/badschedule.out" 2>&1
[ $? -ne 0 ] && grep -q "job/rebalance_schedule = 'soon' is unknown" \
    "$RUN/badschedule.out"
ok $? "job/rebalance_schedule must be one of auto, oggp, ggp, all"
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson3d.job" \
    --supernode tcp://127.0.0.1:1 --set job/rebalance_handoff=mail \
    >"$RUN/badhandoff.out" 2>&1
[ $? -ne 0 ] && grep -q "job/rebalance_handoff = 'mail' is unknown" \
    "$RUN/badhandoff.out"
ok $? "job/rebalance_handoff must be direct or spawner"

start_supernode sn
ok $? "a super-node starts"

#  --- Job A: a slower replacement, then `jace-spawner rebalance` ------
submit a "$JACE_SRCDIR/examples/poisson3d.job" "$SN" --set job/tasks=2 \
    --set job/mapping=simple --set job/spares=0 --set problem/n=40 $EXACT \
    --set job/tolerance=1e-10 --set job/heartbeat_timeout=800 \
    --set checkpoint/every_seconds=1 --set checkpoint/every_iterations=10 &
job_a=$!
wait_for 20 has_event a submit
id_a=$(jq -r 'select(.event == "submit") | .job' "$RUN/a.events")
"$BIN/jace-spawner" rebalance "$id_a" --supernode "$SN" >"$RUN/early.out" 2>&1
[ $? -ne 0 ] && grep -q -E "still starting \(leasing; 0 of 2 tasks have their data\); try again once it runs|no spawner answers" "$RUN/early.out"
ok $? "a rebalance before the job runs is refused"
diag "$(cat "$RUN/early.out")"

start_daemon fast1 --supernode "$SN" --speed 1
start_daemon fast2 --supernode "$SN" --speed 1
wait_for 60 has_event a start
ok $? "job A runs on two fast daemons"


#  The crash comes at the start, so that the slow task has most of the
#  job to do on any machine (a crash at a progress event came a second
#  in, when a machine twice as fast would be done); then the only free
#  daemon is ten times slower, and says it is as fast.  The spawner asks
#  for a daemon again until one registers.
victim=$(daemon_of a 1)
crash "$(pid_of "$victim")"
start_daemon slow1 --supernode "$SN" --speed 0.1
runs_on () {        #  runs_on NAME T DAEMON
    [ "$(daemon_of "$1" "$2")" = "$3" ]
}
wait_for 30 runs_on a 1 slow1
ok $? "the replacement of task 1 is the slow daemon"
wait_for 60 iterated a 1 1
ok $? "task 1 goes on on the slow replacement"

#  Its rate is measured over a few reports before it may be judged
taken () {
    "$BIN/jace-spawner" rebalance "$id_a" --supernode "$SN" \
        >"$RUN/rebalance.out" 2>&1
}
wait_for 60 taken
grep -q "rebalancing" "$RUN/rebalance.out"
ok $? "jace-spawner rebalance is taken and cuts the rows again"
diag "$(cat "$RUN/rebalance.out")"
"$BIN/jace-spawner" rebalance "$id_a" --supernode "$SN" \
    >"$RUN/again.out" 2>&1
[ $? -ne 0 ] && grep -q "being rebalanced already" "$RUN/again.out"
ok $? "a second rebalance while one runs is refused"

JACE_SECRETS=$RUN/nowhere "$BIN/jace-spawner" rebalance "$id_a" \
    --supernode "$SN" >"$RUN/nosecret.out" 2>&1
[ $? -ne 0 ] && grep -q "secret" "$RUN/nosecret.out"
ok $? "a rebalance without the job's secret is refused"
"$BIN/jace-spawner" rebalance job-nosuch --supernode "$SN" \
    >"$RUN/unknown.out" 2>&1
[ $? -ne 0 ] && grep -q "job-nosuch" "$RUN/unknown.out"
ok $? "a rebalance of an unknown job is refused"

wait $job_a
ok $? "job A exits 0"
residual=$(job_residual a)
ok $? "with a verified residual ($residual)"
jq -e -s 'map(select(.event == "rebalance_plan")) | length == 1
    and .[0].trigger == "request"
    and .[0].new_rows [0] > .[0].old_rows [0]
    and .[0].new_rows [1] < .[0].old_rows [1]' "$RUN/a.events" >/dev/null
ok $? "rows moved from the slow task to the fast one"
diag "$(event a rebalance_plan | jq -c 'del(.job, .time)')"
jq -e -s '(map(select(.event == "restored" and .from == "rebalance"))
           | map(.task) | unique == [0, 1])
    and (map(select(.event == "rebalance_done")) | length == 1)' \
    "$RUN/a.events" >/dev/null
ok $? "both tasks went on from the iterate, and the rebalance ended"
#  Each task took its rows of the iterate and the unknowns it reads of
#  the other's from the daemons that held them, the spawner sending
#  none: the 64,000 rows, and for each task a 40 x 40 plane of the
#  other's; and some of it crossed between the two daemons.
jq -e -s '(map(select(.event == "rebalance_assign")) | .[0].handoff
           == "direct")
    and (map(select(.event == "rebalance_done")) | .[0].iterate_sent == 0)' \
    "$RUN/a.events" >/dev/null
ok $? "the spawner sent none of the iterate"
#  One cluster: no slice crosses between clusters, none is scheduled
jq -e -s 'map(select(.event == "rebalance_schedule")) | length == 1
    and .[0].used == "all" and .[0].transfers_between_clusters == 0' \
    "$RUN/a.events" >/dev/null
ok $? "inside one cluster the slices are asked at once"
took=$(cat "$RUN"/fast*.log "$RUN"/slow*.log \
       | sed -n "s/.*took the rebalance's iterate: \([0-9]*\) values, \([0-9]*\) of them.*/\1 \2/p")
values=$(echo "$took" | awk '{ sum += $1 } END { print sum + 0 }')
crossed=$(echo "$took" | awk '{ sum += $2 } END { print sum + 0 }')
[ "$(echo "$took" | wc -l)" -eq 2 ] && [ "$values" -eq $((64000 + 2 * 1600)) ] \
    && [ "$crossed" -gt 0 ]
ok $? "each task took its rows and what it reads from the old owners ($values values, $crossed between daemons)"

#  --- Job B: a file matrix, job/rebalance = auto, a crash meanwhile ---
"$BIN/jace-mmgen" poisson2d 100 "$RUN/p100.mtx" --rhs "$RUN/p100_rhs.mtx" \
    >/dev/null
cat >"$RUN/b.job" <<EOF
job
    application = "multisplit"
    tasks = 2
    tolerance = 1e-10
    max_seconds = 100
    mapping = "simple"
    spares = 0
    rebalance = "auto"
    heartbeat_timeout = 800
problem
    kind = "matrix"
    matrix = "p100.mtx"
    rhs = "p100_rhs.mtx"
solver
    inner = "lu-banded"
checkpoint
    every_seconds = 1
EOF
#  The free daemons are fast2 or fast1 and slow1: job B takes both
submit b "$RUN/b.job" "$SN" &
job_b=$!
wait_for 60 has_event b start
start_daemon fast3 --supernode "$SN" --speed 1
#  A rebalance keeps the daemons: the victim is known before it, and the
#  kill follows its first step at once (the job is short after it)
fast=$(daemon_of b 0)
[ "$fast" = slow1 ] && fast=$(daemon_of b 1)
fast_pid=$(pid_of "$fast")
wait_for 60 has_event b rebalance_assign
crash "$fast_pid"
ok $? "the fast daemon of job B is crashed during its rebalance"

wait $job_b
ok $? "job B exits 0"
residual=$(job_residual b)
ok $? "with a verified residual ($residual)"
jq -e -s 'map(select(.event == "rebalance_plan"))
    | length >= 1 and .[0].trigger == "auto"' "$RUN/b.events" >/dev/null
ok $? "job/rebalance = auto rebalanced the job by itself"
diag "$(event b rebalance_plan | jq -c 'del(.job, .time)')"
jq -e -s '(map(select(.event == "restored" and .from == "initial"))
           | length == 0)
    and (map(select(.event == "dead")) | length == 1)
    and (map(select(.event == "restored" and .from == "rebalance"))
         | map(.task) | unique == [0, 1])' "$RUN/b.events" >/dev/null
ok $? "the crashed task went on from the kept iterate: nothing restarted"

#  --- Job C: auto on a fast and a slow daemon, a threshold of 1% ------
#  Half steps after the first cut leave a drift over 1% for several
#  rebalances in a row; auto must wait nine times as long as the last
#  rebalance held the tasks still before it looks again, so that cutting
#  rows costs at most a tenth of the job.  The job has no reachable tolerance: it runs
#  until cancelled once two rebalances ended, however fast the machine.
wait_for 30 count_is 2 "$SN" '.state == "free"'
submit c "$JACE_SRCDIR/examples/poisson3d.job" "$SN" --set job/tasks=2 \
    --set job/mapping=simple --set job/spares=0 --set problem/n=40 $EXACT \
    --set job/tolerance=1e-300 --set job/stall_snapshots=0 \
    --set job/rebalance=auto --set job/rebalance_threshold=0.01 \
    --set job/rebalance_handoff=spawner \
    --set job/heartbeat_timeout=800 --set job/max_seconds=100 &
job_c=$!
rebalanced_twice () {
    [ "$(event c rebalance_done | wc -l)" -ge 2 ]
}
wait_for 90 rebalanced_twice
ok $? "auto rebalanced job C twice ($(event c rebalance_done | wc -l) done)"
id_c=$(jq -r 'select(.event == "submit") | .job' "$RUN/c.events")
#  status shows the rows of a cut the spawner planned (one more may have
#  begun meanwhile), not the first one
timeout 10 "$BIN/jace-spawner" status "$id_c" --supernode "$SN" --json \
    >"$RUN/c-status.json"
rows_c=$(jq -c '[.table[].rows]' "$RUN/c-status.json")
jq -e -s --argjson rows "${rows_c:-null}" '$rows != null
    and ($rows | add == 64000) and $rows != [32000, 32000]
    and ([.[] | select(.event == "rebalance_plan") | .new_rows]
         | index ([$rows]) != null)' "$RUN/c.events" >/dev/null
ok $? "jace-spawner status shows each task's rows after a rebalance ($rows_c)"
"$BIN/jace-spawner" cancel "$id_c" --supernode "$SN" >"$RUN/cancel.out" 2>&1
ok $? "job C is cancelled"
wait $job_c
#  Each auto plan after a rebalance came 9 x that rebalance's pause
#  after its end, or later (event times are rounded to the millisecond).
jq -e -s '[.[] | select(.event == "rebalance_done"
                        or (.event == "rebalance_plan"
                            and .trigger == "auto"))]
    | [range (1; length) as $i | select (.[$i - 1].event == "rebalance_done")
       | .[$i].time - .[$i - 1].time >= 9 * .[$i - 1].paused_seconds - 0.002]
    | length >= 1 and all' "$RUN/c.events" >/dev/null
ok $? "auto waited 9 x each rebalance's pause before the next"
#  Through the spawner, each task got its rows and the plane it reads of
#  the other's, as numbers and values (every unknown to each task would
#  be 128,000).
jq -e -s '(map(select(.event == "rebalance_assign")) | all (.handoff
           == "spawner"))
    and (map(select(.event == "rebalance_done"))
         | all (.iterate_sent == 64000 + 2 * 2 * 1600))' \
    "$RUN/c.events" >/dev/null
ok $? "with job/rebalance_handoff = spawner the spawner sent each task its rows and what it reads"
diag "$(jq -c 'select(.event == "rebalance_done" or .event == "rebalance_plan")
               | {event, time, paused_seconds, drift}' "$RUN/c.events")"

lib_finish
