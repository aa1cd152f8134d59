#!/bin/sh
#  test_lease_lapse_busy - stale spares at work for another job
#
#  Job one's spawner is stopped past its lease: its 8 spares go free and
#  job two runs its 9 tasks on them and on the one free daemon.  Job one,
#  running again, lost a daemon: each spare it tried answered BUSY
#  ("busy with task K of job two"), counted as a refusal, and the eighth
#  failed the job ("8 daemons in a row refused") while a daemon that
#  joined meanwhile was free.  A daemon at work for another job now
#  refuses as leased elsewhere (REFUSE LEASED): the spare is dropped, not
#  counted, and job one takes the free daemon.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 7

start_supernode sn
#  The simple mapping sorts by cluster, then power: a1 runs job one's
#  task, s1..s8 are its spares
start_daemon a1 --cluster A --supernode "$SN" --power 4
for i in 1 2 3 4 5 6 7 8; do
    start_daemon s$i --cluster A --supernode "$SN" --power 1
done
check "the super-node lists the 9 daemons" wait_for 15 count_is 9 "$SN"

endless_job one "$SN" --set job/mapping=simple \
    --set job/tasks=1 --set job/spares=8 &
one=$!
wait_for 60 all_iterate "$RUN/one.events" 1
[ "$(daemon_of one 0)" = a1 ] \
    && [ "$(event one plan | jq '.spares | length')" = 8 ]
ok $? "job one runs on a1 with 8 spares"

start_daemon f1 --cluster A --supernode "$SN" --power 8
wait_for 15 count_is 10 "$SN"
kill -STOP "$one"
spares_free () { count_is 9 "$SN" '.state == "free"'; }
check "while job one's spawner is stopped, its spares go free" \
    wait_for 30 spares_free
endless_job two "$SN" --set job/mapping=simple \
    --set job/tasks=9 --set job/spares=0 &
two=$!
check "job two runs its 9 tasks on them and f1" \
    wait_for 60 all_iterate "$RUN/two.events" 9

kill -CONT "$one"
crash "$PID_a1"
#  Job one tries its stale spares, then waits: a daemon joins for it
refused_all () {
    [ "$(event one dead | jq -c 'select(.reason | contains("working for task"))' \
         | wc -l)" -ge 8 ]
}
wait_for 60 refused_all
start_daemon n1 --cluster A --supernode "$SN" --power 2
restored_on_n1 () {
    [ -n "$(event one restored | jq -c 'select(.daemon == "n1")')" ]
}
check "job one, refused by its 8 stale spares, takes the daemon that joined" \
    wait_for 60 restored_on_n1
id_two=$(jq -r 'select(.event == "submit") | .job' "$RUN/two.events")
id_one=$(jq -r 'select(.event == "submit") | .job' "$RUN/one.events")
"$BIN/jace-spawner" cancel "$id_two" --supernode "$SN" >"$RUN/cancel2.out" 2>&1
"$BIN/jace-spawner" cancel "$id_one" --supernode "$SN" >"$RUN/cancel1.out" 2>&1
wait "$two"
wait "$one"
lib_finish
