#!/bin/sh
#  test_lease_failover_ring - a lease's failover passes over the dead
#
#  Three peered super-nodes; the job's spawner is given all three.  One
#  and two die in turn, and the spawner moves the lease on each time.
#  Then three, the only one left, stalls 6 s: the spawner going round to
#  the two dead ones (4 s of silence each) let the lease lapse mid-job,
#  listed orphaned with its spares free.  It stays with three now.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 9

start_supernode one
start_supernode two --peer "$SN_one"
start_supernode three --peer "$SN_one" --peer "$SN_two"
for i in 1 2 3 4 5; do
    start_daemon d$i --supernode "$SN_three" --supernode "$SN_two"
done
check "the three super-nodes list the 5 daemons" \
    wait_for 15 count_is 5 "$SN_one"

"$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_one" --supernode "$SN_two" --supernode "$SN_three" -q \
    --set job/tasks=4 --set job/spares=1 --set job/mapping=default \
    --set problem/n=64 --set job/tolerance=1e-300 \
    --set job/stall_snapshots=0 --set job/max_seconds=120 \
    --events "$RUN/job.events" >"$RUN/job.out" 2>"$RUN/job.err" &
spawner=$!
wait_for 60 all_iterate "$RUN/job.events" 4
ok $? "the job's 4 tasks iterate"
id=$(jq -r 'select(.event == "submit") | .job' "$RUN/job.events")
failovers () { grep -c '"event":"failover"' "$RUN/job.events"; }
moved_to () {       #  moved_to N: the Nth failover happened
    [ "$(failovers)" -ge "$1" ]
}
crash "$PID_one"
wait_for 30 moved_to 1
crash "$PID_two"
wait_for 30 moved_to 2
ok $? "one and two die in turn: the lease moves on each time"
running () {
    "$BIN/jace-spawner" jobs --supernode "$SN_three" --json \
        | jq -e ".[] | select(.job == \"$id\" and .state == \"running\")"
}
wait_for 30 running >/dev/null
ok $? "three lists the job running"
kill -STOP "$PID_three"
sleep 6
kill -CONT "$PID_three"
wait_for 30 running >/dev/null
ok $? "after three's 6 s stall it lists the job running again"
[ "$(failovers)" -eq 2 ]
ok $? "and the spawner did not go round to the dead ones ($(failovers) failovers)"
said=$(grep -c "no super-node answers" "$RUN/job.err")
[ "$said" -eq 1 ]
ok $? "it said once that no super-node answered ($said times)"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_three" >"$RUN/cancel.out" 2>&1
wait "$spawner"
lib_finish
