#!/bin/sh
#  test_fault_checkpoints - checkpoints on neighbours, crashes scheduled by
#  the job file, and jobs that still end with a verified answer
#
#  1. 8 tasks, 2 daemons crashed every 2 s (6 s in a sanitizer build,
#     several times slower) until the job ends (crashed
#     nodes come back as new daemons, as volatile nodes do): the job exits
#     0 with a verified residual, and its report lists every crash and
#     every recovery.  Under such a storm all tasks are rarely converged at
#     once, so the spawner samples the true residual every second: any
#     snapshot that passes is a verified answer.
#  2. A task and both daemons holding its copies crashed at once: that
#     task restarts from its initial state and says so; a task whose copy
#     survived restarts from it; the job converges.
#  3. Checkpoints sent every iteration, and task 3 crashed with task 2,
#     which holds its copies and whose copies it holds (each crash lands in
#     the middle of sending or receiving one); damaged copies pushed to
#     every daemon, tagged newer than any real one: none is ever kept or
#     used, and both restart from the copies task 1 kept.
#  4. kill: `jace-spawner kill --task K` crashes that task's daemon and the
#     job recovers on its spare; a job nobody runs is an error.
. "$(dirname "$0")/lib.sh"
#  Exact inner solves (the default, 1e-3, is several times faster) keep
#  each job running long enough for the crashes to land while it runs.
EXACT="--set solver/inner_tolerance=1e-12"
lib_init
plan 31

JOB=$JACE_SRCDIR/examples/poisson3d.job
start_supernode sn --heartbeat 200 --timeout 1000
add_daemons 12 "$SN_sn"
check "12 daemons register" wait_for 15 count_is 12 "$SN_sn"

#  Until process $1 ends, replace every crashed daemon by a new one.
keep_pool () {      #  keep_pool PID
    while running "$1"; do
        reap_dead
        [ "$REAPED" -gt 0 ] && add_daemons "$REAPED" "$SN_sn"
        sleep 0.2
    done
    wait "$1"
}

events () {         #  events NAME EVENT: the lines of that event
    grep "\"event\":\"$2\"" "$RUN/$1.events"
}

#  1. Two daemons every two seconds.
submit storm "$JOB" "$SN_sn" --set job/tasks=8 $EXACT --set problem/n=48 \
    --set job/tolerance=1e-9 --set job/heartbeat_timeout=800 \
    --set checkpoint/every_seconds=0.5 --set faults/every=$((2 * SLOW)) \
    --set faults/first_iteration=10 --set faults/count=2 \
    --set report/sample_seconds=1 \
    --report "$RUN/storm.report" --plot "$RUN/storm.svg" &
storm=$!
keep_pool $storm
ok $? "8 tasks, 2 daemons crashed every 2 s: the job exits 0"
residual=$(job_residual storm)
ok $? "with a verified residual ($residual)"
crashes=$(events storm crash | wc -l)
restored=$(events storm restored | wc -l)
diag "$crashes crashes, $restored tasks restored"
[ "$crashes" -ge 4 ]
ok $? "crashes kept coming until the end ($crashes)"
[ "$(tail -n 1 "$RUN/storm.events" | jq .crashes)" = "$crashes" ]
ok $? "the result counts them"
events storm restored | grep -q '"from":"checkpoint"'
ok $? "replacements restart from their neighbours' checkpoints"
#  Every crash and every restoration is in the report, by task.
#  Its failure table has one row per crash: "TASK DAEMON CRASHED ...".
missing=0
for row in $(events storm crash | jq -r '"\(.task):\(.daemon)"'); do
    grep -Eq "^ *${row%%:*} +${row#*:} " "$RUN/storm.report" \
        || missing=$((missing + 1))
done
[ "$missing" -eq 0 ]
ok $? "the report lists every crash ($missing missing)"
[ "$(grep -c -E 'from (checkpoint|the initial)' "$RUN/storm.report")" \
    -ge "$restored" ]
ok $? "and every recovery"
if command -v gnuplot >/dev/null; then
    grep -q '<svg' "$RUN/storm.svg"
    ok $? "the plot is an SVG"
    #  A plot with nowhere to go: gnuplot wrote the image to the terminal
    "$BIN/jace-spawner" report "$RUN/storm.events" \
        --plot "$RUN/missing/storm.png" >"$RUN/noplot.out" 2>"$RUN/noplot.err"
    [ $? -eq 2 ] && grep -q "missing/storm.png: its folder does not exist" \
        "$RUN/noplot.err" && ! grep -q PNG "$RUN/noplot.out"
    ok $? "a plot into a missing folder is bad usage, said so, and prints no image"
else
    skip "gnuplot is not installed"
    skip "gnuplot is not installed"
fi

#  2. Task 1 of a chain of 4 and both its neighbours (its copy holders)
#  crashed at once.  Task 0's holders are tasks 1 and 2: gone too.  Task
#  2's are 1 and 3: task 3 survives.
submit holders "$JOB" "$SN_sn" --set job/tasks=4 $EXACT --set problem/n=40 \
    --set job/tolerance=1e-10 --set job/heartbeat_timeout=800 \
    --set checkpoint/every_seconds=0.2 --set checkpoint/every_iterations=5 \
    --set faults/tasks="1 0 2" \
    --set faults/first_iteration=20 &
holders=$!
keep_pool $holders
ok $? "a task and both holders of its copies crashed: the job exits 0"
job_residual holders >/dev/null
ok $? "with a verified residual"
events holders restored \
    | jq -s -e 'map(select(.task == 1)) | .[0].from == "initial"' >/dev/null
ok $? "the task restarts from its initial state"
initial=$(events holders restored | grep -c '"from":"initial"')
grep -q "restarted from a checkpoint, $initial from the initial state" \
    "$RUN/holders.out"
ok $? "and the summary says so"
events holders restored | jq -s -e \
    'map(select(.task == 2)) | .[0].from == "checkpoint" and .[0].holder == 3' \
    >/dev/null
ok $? "a task whose holder survived restarts from its copy"

#  3. Checkpoints every iteration, damaged copies everywhere.
submit forged "$JOB" "$SN_sn" --set job/tasks=4 $EXACT --set problem/n=40 \
    --set job/tolerance=1e-10 --set job/heartbeat_timeout=800 \
    --set checkpoint/every_iterations=1 --set faults/tasks="3 2" \
    --set faults/first_iteration=20 &
forged=$!
wait_for 20 grep -q '"event":"start"' "$RUN/forged.events"
forged_job=$(head -n 1 "$RUN/forged.events" | jq -r .job)
#  The registry learns a daemon's job from its next HELLO.
wait_for 10 count_is 4 "$SN_sn" ".job == \"$forged_job\""
for data in $(nodes_json "$SN_sn" \
        | jq -r ".[] | select(.job == \"$forged_job\") | .data"); do
    "$BIN/tests/rawzmq" "$data" forge "$forged_job" 3 2>/dev/null
done
keep_pool $forged
ok $? "checkpoints every iteration and damaged copies: the job exits 0"
job_residual forged >/dev/null
ok $? "with a verified residual"
events forged restored | jq -s -e 'map(select(.task == 3 or .task == 2))
    | length == 2 and all(.from == "checkpoint" and .holder == 1
                          and .iteration < 999999)' >/dev/null
ok $? "a task and its holder crashed while trading copies: both restart from genuine copies kept by task 1"
cat "$RUN"/d*.log | grep -q "fails its seal"
ok $? "forged and damaged copies are refused for their seal"
! cat "$RUN"/d*.log | grep -q "restarts from the checkpoint of iteration 999999"
ok $? "and never used"

#  4. The kill tool, on a job with a spare leased beforehand.
submit killed "$JOB" "$SN_sn" --set job/tasks=4 $EXACT --set problem/n=40 \
    --set job/tolerance=1e-10 --set job/heartbeat_timeout=800 \
    --set job/spares=1 --set job/replacement=any &
killed=$!
wait_for 20 grep -q '"event":"start"' "$RUN/killed.events"
killed_job=$(head -n 1 "$RUN/killed.events" | jq -r .job)
"$BIN/jace-spawner" kill --job "$killed_job" --supernode "$SN_sn" --task 2 \
    >"$RUN/kill.out" 2>"$RUN/kill.err"
ok $? "kill --task crashes the task's daemon"
grep -q "crashed daemon .* (task 2 of $killed_job" "$RUN/kill.out"
ok $? "and says which"
keep_pool $killed
ok $? "the job recovers and exits 0"
events killed replace | jq -s -e 'map(select(.task == 2)) | length > 0' \
    >/dev/null
ok $? "task 2 was replaced"
events killed lease | jq -e '.wanted == 5' >/dev/null \
    && ! grep -q "asks 1 daemons for $killed_job" "$RUN/sn.log"
ok $? "by the spare leased at the start, without asking the super-node"
submit badpolicy "$JOB" "$SN_sn" --set job/replacement=nearest
[ $? -eq 2 ] && grep -q "job/replacement = 'nearest' is unknown" \
    "$RUN/badpolicy.err"
ok $? "an unknown replacement policy is refused before anything is leased"
#  Repeated random crashes from outside, reproducible with a seed.
submit repeated "$JOB" "$SN_sn" --set job/tasks=4 $EXACT --set problem/n=44 \
    --set job/tolerance=1e-10 --set job/heartbeat_timeout=800 &
repeated=$!
wait_for 20 grep -q '"event":"start"' "$RUN/repeated.events"
repeated_job=$(head -n 1 "$RUN/repeated.events" | jq -r .job)
wait_for 10 count_is 4 "$SN_sn" ".job == \"$repeated_job\""
"$BIN/jace-spawner" kill --job "$repeated_job" --supernode "$SN_sn" \
    --random 1 --every 1.5 --rounds 2 --seed 7 >"$RUN/kill-repeated.out" \
    2>&1 &
killer=$!
keep_pool $repeated
ok $? "kill --random 1 --every 1.5 --rounds 2: the job still exits 0"
wait $killer
[ "$(grep -c '^crashed daemon' "$RUN/kill-repeated.out")" -eq 2 ] \
    && [ "$(tail -n 1 "$RUN/repeated.events" | jq .replacements)" -ge 2 ]
ok $? "two daemons crashed, two replaced"
#  A secret of our own for the job, so that kill gets past it to the
#  question of who runs the job.
(umask 077; printf '%040d\n' 0 >"$JACE_SECRETS/job-nobody.secret")
"$BIN/jace-spawner" kill --job job-nobody --supernode "$SN_sn" --task 0 \
    >/dev/null 2>"$RUN/kill-none.err"
[ $? -eq 1 ] && grep -q "no daemon works for job job-nobody" \
    "$RUN/kill-none.err"
ok $? "killing a job nobody runs is an error that says so"

reap_dead
lib_finish
