#!/bin/sh
#  tests/test_spawner_waiting.sh - a job that cannot be placed yet waits
#  idle, then says why it failed
#
#  Two daemons, a job of four tasks: the spawner plans, cannot place it,
#  and waits job/reserve_timeout for more daemons.  It must wait in its
#  poll, not spin: a spawner holding no daemon and asking for none once
#  took 94% of a core for the whole wait.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 15

start_supernode sn
start_daemon d1 --supernode "$SN_sn"
start_daemon d2 --supernode "$SN_sn"
check "the grid lists both daemons" wait_for 20 count_is 2 "$SN_sn"

"$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_sn" -q --set job/tasks=4 --set job/reserve_timeout=8 \
    --events "$RUN/job.events" \
    >/dev/null 2>"$RUN/submit.err" &
spawner=$!
#  utime + stime of the spawner, in clock ticks
cpu_ticks () { awk '{ print $14 + $15 }' "/proc/$spawner/stat"; }
wait_for 10 grep -q "cannot be placed yet" "$RUN/submit.err"
first=$(cpu_ticks); start=$(now_msec)
sleep 4
last=$(cpu_ticks); elapsed=$(( $(now_msec) - start ))
percent=$(( (last - first) * 100000 / $(getconf CLK_TCK) / elapsed ))
diag "the waiting spawner used $percent% of a core over $elapsed ms"
[ "$percent" -lt 25 ]
ok $? "a spawner waiting for daemons does not spin ($percent% < 25% of a core)"
wait $spawner
[ $? -eq 1 ] && grep -q "not enough daemons for job .* after 8 s" \
    "$RUN/submit.err" && grep -q "cannot map 4 tasks on 2 free daemons" \
    "$RUN/submit.err"
ok $? "after job/reserve_timeout it fails, saying how many it could not map"
grep -q '"event":"unplaced".*"reason":"maheve cannot map 4 tasks on 2 free daemons' \
    "$RUN/job.events"
ok $? "the events record why the job waited"

#  Submit a job of 4 tasks that waits for daemons, in the background:
#  sets $spawner and, once it waits, $id
submit_waiting () {     #  submit_waiting NAME
    "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
        --supernode "$SN_sn" -q --set job/tasks=4 \
        --set job/reserve_timeout=120 --events "$RUN/$1.events" \
        >/dev/null 2>"$RUN/$1.err" &
    spawner=$!
    wait_for 10 grep -q '"event":"unplaced"' "$RUN/$1.events"
    id=$(jq -r 'select (.event == "unplaced") | .job' "$RUN/$1.events")
}

#  A waiting job holds a lease of no daemon: the grid lists it, and its
#  spawner answers status and cancel (they could not reach it)
submit_waiting wait
listed () { "$BIN/jace-spawner" jobs --supernode "$SN_sn" --json \
                | jq -e ".[] | select (.job == \"$id\" and .state == \"leasing\"
                                       and .daemons == 0)"; }
wait_for 10 listed
ok $? "jobs lists the waiting job $id, leasing, with no daemon"
"$BIN/jace-spawner" status "$id" --supernode "$SN_sn" >"$RUN/status.out" 2>&1 \
    && grep -q "waiting for daemons: maheve cannot map 4 tasks on 2 free" \
        "$RUN/status.out"
ok $? "status reaches its spawner, which says why it waits"
#  A lease of none that lapsed (its spawner stopped past the super-node's
#  timeout) comes back once the spawner runs again
kill -STOP "$spawner"
wait_for 30 grep -q "lease $id not renewed, ended" "$RUN/sn.log"
ok $? "the stopped spawner's lease of none lapses"
kill -CONT "$spawner"
wait_for 20 listed
ok $? "and is listed again once its spawner runs"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" >"$RUN/cancel.out" 2>&1 \
    && grep -q "cancelled by its spawner" "$RUN/cancel.out"
ok $? "cancel reaches its spawner"
wait $spawner
[ $? -ne 0 ] && grep -q "cancel" "$RUN/wait.err"
ok $? "the waiting spawner ends, cancelled"
gone () { ! "$BIN/jace-spawner" jobs --supernode "$SN_sn" --json \
              | jq -e ".[] | select (.job == \"$id\")"; }
wait_for 10 gone
ok $? "its lease of no daemon ended with it"

#  A waiting job whose spawner is killed: nothing to resume (no daemon
#  has its data), which status says, and cancel records its end (its
#  secret stayed, and status advised resume)
submit_waiting killed
wait_for 10 listed
kill -9 "$spawner"
wait "$spawner" 2>/dev/null
"$BIN/jace-spawner" status "$id" --supernode "$SN_sn" --timeout 2000 \
    >"$RUN/killed-status.out" 2>&1
[ $? -ne 0 ] && grep -q "no daemon works for the job: if that spawner is gone, there is nothing to resume; submit the job again (jace-spawner cancel $id records its end)" \
    "$RUN/killed-status.out"
ok $? "status of the killed waiting job says there is nothing to resume"
diag "$(cat "$RUN/killed-status.out")"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_sn" >"$RUN/killed-cancel.out" 2>&1
[ $? -eq 1 ] &&
    grep -q "no daemon works for it, and its spawner is gone; its end is recorded" \
        "$RUN/killed-cancel.out" &&
    "$BIN/jace-spawner" status "$id" --supernode "$SN_sn" \
        >"$RUN/killed-ended.out" 2>&1 &&
    grep -q "job $id ended at .*: failed: cancelled by jace-spawner cancel" \
        "$RUN/killed-ended.out"
ok $? "cancel records its end, which status then shows"
diag "$(cat "$RUN/killed-cancel.out" "$RUN/killed-ended.out")"
lib_finish
