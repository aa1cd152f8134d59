#!/bin/sh
#  test_lease_lapse_failover - a stale spare that fails over meanwhile
#
#  Job one's spawner is stopped past its lease; its spare S, registered
#  with super-node one, is leased to job two as a spare.  Super-node one
#  then stalls, S fails over to super-node two, which does not hold it
#  (one's listing still does, leased to job two): two's WELCOME said S
#  was held by no job, S took job one's replacement with its lapsed
#  lease token, and job two, needing its spare later, failed.  Two's
#  WELCOME now says the job a peer lists S leased to.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 7

start_supernode one
start_supernode two --peer "$SN_one"
start_daemon a1 --cluster A --supernode "$SN_two" --power 4
start_daemon s1 --cluster A --supernode "$SN_one" --supernode "$SN_two" \
    --power 1
check "the super-nodes list the 2 daemons" wait_for 15 count_is 2 "$SN_two"

endless_job one "$SN_two" --set job/mapping=simple \
    --set job/tasks=1 --set job/spares=1 &
one=$!
wait_for 60 all_iterate "$RUN/one.events" 1
state_of () { held_state "$SN_two" "$1"; }
is_state () { [ "$(state_of "$1")" = "$2" ]; }
[ "$(daemon_of one 0)" = a1 ] && is_state s1 "leased $(event one submit | jq -r .job)"
ok $? "job one runs on a1, s1 is its spare"

start_daemon f1 --cluster A --supernode "$SN_two" --power 8
wait_for 15 count_is 3 "$SN_two"
kill -STOP "$one"
wait_for 30 is_state s1 "free "
endless_job two "$SN_two" --set job/mapping=simple \
    --set job/tasks=1 --set job/spares=1 &
two=$!
wait_for 60 all_iterate "$RUN/two.events" 1
id_two=$(event two submit | jq -r .job)
[ "$(daemon_of two 0)" = f1 ] && is_state s1 "leased $id_two"
ok $? "job two runs on f1, s1 is its spare now"

#  Super-node one stalls: s1 fails over to two, which holds no lease on it
kill -CONT "$one"
kill -STOP "$PID_one"
moved () { grep -q "failing over" "$RUN/s1.log"; }
wait_for 30 moved
crash "$PID_a1"
refused () {
    [ -n "$(event one dead | jq -c "select(.daemon == \"s1\"
            and (.reason | contains(\"leased to job $id_two\")))")" ]
}
check "s1, failed over, refuses job one's task: job two holds it" \
    wait_for 60 refused
kill -CONT "$PID_one"
crash "$PID_f1"
restored_on_s1 () {
    [ -n "$(event two restored | jq -c 'select(.daemon == "s1")')" ]
}
check "job two's task moves to its spare s1" wait_for 60 restored_on_s1
"$BIN/jace-spawner" cancel "$id_two" --supernode "$SN_two" >"$RUN/c2.out" 2>&1
"$BIN/jace-spawner" cancel "$(event one submit | jq -r .job)" \
    --supernode "$SN_two" >"$RUN/c1.out" 2>&1
wait "$two"
wait "$one"
lib_finish
