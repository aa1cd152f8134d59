#!/bin/sh
#  test_lease_failover - the super-node a running job leased from dies
#
#  Two peered super-nodes; the job's spawner talks to one, which is
#  killed mid-job.  Its spawner renewed the lease into the void: the
#  lease lapsed everywhere, `jobs` through the other super-node showed
#  the job orphaned for the rest of its run, status, drain and cancel
#  could not reach it, and its spare went free for another job to take.
#  The super-node now answers the lease's HEARTBEATs, and a spawner whose
#  super-node falls silent moves the lease to the next one, which holds
#  the job's daemons and its spare again, as one does for a spawner that
#  was stopped past its lease.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 11

start_supernode one
start_supernode two --peer "$SN_one"
#  Every daemon registers with the super-node that dies: the spare, too,
#  fails over, and is held again where it arrives
for i in 1 2 3; do
    start_daemon a$i --cluster A --supernode "$SN_one" --supernode "$SN_two"
    start_daemon b$i --cluster B --supernode "$SN_one" --supernode "$SN_two"
done
check "both super-nodes list the 6 daemons" wait_for 15 count_is 6 "$SN_two"

#  No reachable tolerance: the job runs until cancelled
"$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_one" --supernode "$SN_two" -q --set job/tasks=4 \
    --set job/spares=1 --set job/mapping=default --set problem/n=64 \
    --set job/tolerance=1e-300 --set job/stall_snapshots=0 \
    --set job/max_seconds=120 --events "$RUN/job.events" \
    >"$RUN/job.out" 2>"$RUN/job.err" &
spawner=$!
wait_for 60 all_iterate "$RUN/job.events" 4
ok $? "the job's 4 tasks iterate"
id=$(jq -r 'select(.event == "submit") | .job' "$RUN/job.events")
#  The spares: daemons leased, not working (this job is the only one)
leased () {
    nodes_json "$SN_two" | jq -c '[.[] | select(.state == "leased") | .id]
                                  | sort'
}
leased_before=$(leased)
diag "leased, not working, before the kill: $leased_before"

crash "$PID_one"
#  The lease outlives its last renewal by 5 s: look after that
sleep 8
running () {
    "$BIN/jace-spawner" jobs --supernode "$SN_two" --json \
        | jq -e ".[] | select(.job == \"$id\" and .state == \"running\")"
}
wait_for 30 running >/dev/null
ok $? "jobs through the surviving super-node lists the job running, not orphaned"
"$BIN/jace-spawner" status "$id" --supernode "$SN_two" >"$RUN/status.out" 2>&1
ok $? "status reaches the job's spawner through it"
spares_back () { [ "$(leased)" = "$leased_before" ]; }
[ "$leased_before" != "[]" ] && wait_for 20 spares_back
ok $? "its spare is leased to it again ($leased_before)"
diag "$(nodes_json "$SN_two" | jq -c '[.[] | {id, state, job}]')"
#  The spawner stopped past the lease (5 s): the lease lapses and frees
#  its spare; running again, its renewal holds the spare once more
kill -STOP "$spawner"
lapsed () { [ "$(leased)" = "[]" ]; }
wait_for 30 lapsed
ok $? "while its spawner is stopped, the lease lapses and the spare is free"
kill -CONT "$spawner"
wait_for 20 spares_back
ok $? "running again, the spawner holds its spare again"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN_two" >"$RUN/cancel.out" 2>&1
ok $? "cancel reaches it"
wait "$spawner"
[ "$(grep -c "failing over" "$RUN/job.err")" -eq 1 ]
ok $? "the spawner failed over once: not again after its own stall"
lib_finish
