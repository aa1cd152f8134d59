#!/bin/sh
#  test_platform_learned - given one super-node, a process learns its peers
#
#  Daemons and a spawner are each given a single super-node.  Its WELCOMEs
#  and listings name its peers, so when it dies mid-job its daemons
#  register with a peer, and the spawner fails over there too and finds a
#  replacement for a daemon crashed after it (the job holds no spare):
#  the job ends with a verified answer.  Before, each kept calling the
#  dead super-node, and the job failed with no daemon to replace the
#  crashed one.
. "$(dirname "$0")/lib.sh"
#  Exact inner solves keep the job running long enough for both crashes
#  to land while it runs (as in test_fault_spawner).
EXACT="--set solver/inner_tolerance=1e-12"
lib_init medium
plan 13

start_supernode a --heartbeat 200 --timeout 1000 --allow-crash
start_supernode b --heartbeat 200 --timeout 1000 --peer "$SN_a"
for i in 1 2 3 4; do
    start_daemon a$i --supernode "$SN_a"
    start_daemon b$i --supernode "$SN_b"
done
check "8 daemons register across two super-nodes" \
    wait_for 15 count_is 8 "$SN_b"
learned () {    #  learned DAEMON OF FROM
    grep -q "learned of super-node $2 from $1" "$RUN/$3.log"
}
check "a daemon given super-node a learns of b from it" \
    wait_for 10 learned "$SN_a" "$SN_b" a1
check "a daemon given super-node b learns of a from it" \
    wait_for 10 learned "$SN_b" "$SN_a" b1
#  Super-node a dies once the job has started, task 1's daemon when a
#  task reaches iteration 150: the job needs several hundred iterations
#  whatever the machine's speed, so both land while it runs.  The default
#  mapping holds no spare (MAHEVE reserves one whatever job/spares says):
#  the replacement must come through a super-node.
submit learned "$JACE_SRCDIR/examples/poisson3d.job" "$SN_a" \
    --set job/tasks=4 --set job/spares=0 --set job/mapping=default $EXACT \
    --set problem/n=44 --set job/tolerance=1e-10 \
    --set job/heartbeat_timeout=800 --set checkpoint/every_seconds=0.3 \
    --set faults/tasks=1 --set faults/first_iteration=150 &
job=$!
wait_for $((20 * SLOW)) grep -q '"event":"start"' "$RUN/learned.events"
ok $? "the job started through super-node a"
crash "$PID_a"
wait $job
ok $? "the job whose only given super-node died exits 0"
job_residual learned >/dev/null
ok $? "with a verified residual"
event learned failover | jq -s -e --arg b "$SN_b" \
    'map(select(.to == $b)) | length == 1' >/dev/null
ok $? "the spawner failed over to super-node b, which a had named"
replace=$(task_event learned replace 1)
[ -n "$replace" ] && ! echo "$replace" | grep -q "a spare the job holds"
ok $? "and a replacement for task 1 came through it: $replace"
check "the 7 daemons left all register with b" \
    wait_for 10 count_is 7 "$SN_b" ".supernode == \"$SN_b\""
grep -q "learned of super-node" "$RUN/a2.log" \
    && grep -q "failing over" "$RUN/a2.log"
ok $? "a daemon of a failed over to the super-node it learned of"
[ "$(grep -c "learned of super-node" "$RUN/b1.log")" = 1 ]
ok $? "a daemon learns a super-node once, though every WELCOME names it"
lib_finish
