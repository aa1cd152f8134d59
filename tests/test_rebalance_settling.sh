#!/bin/sh
#  test_rebalance_settling - a task replaced while a rebalance settles goes
#  on from its newest checkpoint, not from the rebalance's iterate
#
#  After a rebalance the spawner keeps the iterate it cut the rows from
#  until every task has checkpointed on its new rows, and sends it with
#  the ASSIGN of any task replaced meanwhile.  Under crashes every few
#  seconds that never happened, and every replacement went back to the
#  rebalance's iteration for the rest of the job.
#
#  Three tasks, one on a slow daemon: job/rebalance = auto cuts the rows
#  again.  As soon as every task runs on its new rows, the slow task's
#  daemon is crashed with no daemon free: the rebalance cannot settle
#  before a checkpoint period (4 s) and two iterations have gone by, and
#  once the loss is detected, it cannot settle at all (a task is not
#  iterating), however fast the machine.  Task 0 goes on, checkpointing
#  every 4 s; once it has iterated for three periods past the rebalance,
#  its daemon is crashed too, and two daemons are started.  Task 0 must
#  go on from a copy of its new rows newer than the rebalance.
. "$(dirname "$0")/lib.sh"
lib_init
plan 9

restored_count () { #  restored_count NAME: RESTORED events after a rebalance
    jq -s '[.[] | select(.event == "restored" and .from == "rebalance")]
           | length' "$RUN/$1.events" 2>/dev/null
}

start_supernode sn
start_daemon fast1 --supernode "$SN" --speed 1
start_daemon fast2 --supernode "$SN" --speed 1
start_daemon slow1 --supernode "$SN" --speed 0.1
wait_for 30 count_is 3 "$SN"

submit s "$JACE_SRCDIR/examples/poisson3d.job" "$SN" --set job/tasks=3 \
    --set job/mapping=simple --set job/spares=0 --set problem/n=40 \
    --set solver/inner_tolerance=1e-12 --set job/tolerance=1e-10 \
    --set job/heartbeat_timeout=800 --set job/rebalance=auto \
    --set checkpoint/every_iterations=0 --set checkpoint/every_seconds=4 &
job=$!
all_took_rows () { [ "$(restored_count s)" -ge 3 ]; }
wait_for $((60 * SLOW)) has_event s rebalance_assign &&
    wait_for $((60 * SLOW)) all_took_rows
ok $? "job/rebalance = auto cut the rows again, and every task took them"
from=$(event s rebalance_assign | jq -r .iteration)

slow_task=$(jq -r 'select(.event == "assign" and .daemon == "slow1") | .task' \
    "$RUN/s.events")
victim=$(daemon_of s 0)
[ "$slow_task" != 0 ] && [ "$victim" != slow1 ]
ok $? "task 0 runs on a fast daemon, task $slow_task on the slow one"

crash "$PID_slow1"
#  The time every task had its new rows, and task 0's last report
taken=$(jq -s '[.[] | select(.event == "restored")] | map(.time) | max' \
    "$RUN/s.events")
reported () {       #  reported SECONDS-PAST-THE-REBALANCE
    [ -n "$(jq -c --argjson t "$taken" --argjson d "$1" \
            'select(.event == "progress" and .task == 0
                    and .time >= $t + $d)' "$RUN/s.events" 2>/dev/null)" ]
}
wait_for $((30 * SLOW)) has_event s dead &&
    wait_for $((60 * SLOW)) reported 12 &&
    iterated s 0 $((from + 2))
ok $? "with the slow task waiting for a daemon, task 0 iterates for three checkpoint periods past the rebalance's iteration $from"

eval "crash \"\$PID_$victim\""
start_daemon fast3 --supernode "$SN" --speed 1
start_daemon fast4 --supernode "$SN" --speed 1
wait $job
ok $? "the job exits 0"
residual=$(job_residual s)
ok $? "with a verified residual ($residual)"

#  The rebalance was still settling when task 0 died: the test's premise
jq -e -s '(map(select(.event == "dead" and .task == 0)) | .[0].time) as $t
    | map(select(.event == "rebalance_done" and .time < $t)) | length == 0' \
    "$RUN/s.events" >/dev/null
ok $? "the rebalance had not settled when task 0's daemon died"
diag "$(jq -c 'select(.event == "restored" and .task == 0)
              | {daemon, from, iteration}' "$RUN/s.events" | tr '\n' ' ')"
#  (later rebalances restore it from their iterates again, rightly)
jq -e -s --argjson from "$from" --arg victim "$victim" '[.[]
        | select(.event == "restored" and .task == 0
                 and .daemon != $victim)] | first | .from == "checkpoint"
        and .iteration > $from' "$RUN/s.events" >/dev/null
ok $? "task 0's replacement went on from a checkpoint newer than the rebalance"
lib_finish
