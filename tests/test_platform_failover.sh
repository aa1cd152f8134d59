#!/bin/sh
#  test_platform_failover - a super-node dies; its daemons move on
#
#  kill -9 of one of two peered super-nodes: its daemons must register
#  with the other within 5 s, and a new job must run there.
. "$(dirname "$0")/lib.sh"
lib_init
plan 6

start_supernode one
start_supernode two --peer "$SN_one"
for i in 1 2 3 4; do
    start_daemon a$i --cluster A --supernode "$SN_one" --supernode "$SN_two"
    start_daemon b$i --cluster B --supernode "$SN_two" --supernode "$SN_one"
done
check "both super-nodes list all 8 daemons" \
    wait_for 15 count_is 8 "$SN_two" ".supernode == \"$SN_two\" or .supernode == \"$SN_one\""
check "4 daemons are registered with super-node one" \
    wait_for 5 count_is 4 "$SN_two" ".supernode == \"$SN_one\""

crash "$PID_one"
started=$(date +%s.%N)
wait_for 5 count_is 8 "$SN_two" ".supernode == \"$SN_two\""
ok $? "within 5 s of kill -9, all 8 daemons are registered with super-node two"
diag "failover took $(awk "BEGIN { printf \"%.2f\", $(date +%s.%N) - $started }") s"

submit after "$JACE_SRCDIR/examples/poisson2d.job" "$SN_two" \
    --set job/tasks=6 --set problem/n=24
ok $? "a new job of 6 tasks runs on the surviving super-node"
lib_finish
