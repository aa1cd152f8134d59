#!/bin/sh
#  test_lease_lapse - a spare leased to another job after our lease lapsed
#
#  Job one's spawner is stopped past its lease (5 s): its spare goes free
#  and job two leases it as its own spare.  A lease token stays valid
#  after its lease lapsed, so when job one, running again, replaced a
#  lost daemon with that spare, the daemon took its task; job two then
#  found its spare busy when it needed it, and failed.  The daemon now
#  refuses a job other than the one its super-node says holds it (REFUSE
#  LEASED), job one waits for a daemon that is free, and job two's spare
#  is there for it.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 14

start_supernode sn
#  The simple mapping sorts the daemons by cluster, then power:
#  a1 and a2 run job one's tasks, s1 is its spare.
start_daemon a1 --cluster A --supernode "$SN" --power 4
start_daemon a2 --cluster A --supernode "$SN" --power 4
start_daemon s1 --cluster A --supernode "$SN" --power 1
check "the super-node lists the 3 daemons" wait_for 15 count_is 3 "$SN"

endless_job one "$SN" --set job/mapping=simple \
    --set job/tasks=2 --set job/spares=1 &
one=$!
check "job one's 2 tasks iterate" wait_for 60 all_iterate "$RUN/one.events" 2
id_one=$(jq -r 'select(.event == "submit") | .job' "$RUN/one.events")
state_of () { held_state "$SN" "$1"; }
is_state () { [ "$(state_of "$1")" = "$2" ]; }
is_state s1 "leased $id_one"
ok $? "s1 is listed as job one's spare ($(state_of s1))"

#  f1, the fastest, joins free; job one's spawner stops past its lease
start_daemon f1 --cluster A --supernode "$SN" --power 8
wait_for 15 count_is 4 "$SN"
kill -STOP "$one"
check "while job one's spawner is stopped, its spare goes free" \
    wait_for 30 is_state s1 "free "
endless_job two "$SN" --set job/mapping=simple \
    --set job/tasks=1 --set job/spares=1 &
two=$!
wait_for 60 all_iterate "$RUN/two.events" 1
id_two=$(jq -r 'select(.event == "submit") | .job' "$RUN/two.events")
[ "$(daemon_of two 0)" = f1 ] && is_state s1 "leased $id_two"
ok $? "job two runs on f1, s1 is listed as its spare ($(state_of s1))"

#  Job one, running again, loses a daemon: its spare is job two's now
kill -CONT "$one"
victim=$(daemon_of one 0)
eval "crash \$PID_$victim"
refused_s1 () {
    [ -n "$(event one dead | jq -c "select(.daemon == \"s1\"
        and (.reason | contains(\"leased to job $id_two\")))")" ]
}
check "job one's ASSIGN to s1 is refused: it is leased to job two" \
    wait_for 60 refused_s1
is_state s1 "leased $id_two"
ok $? "s1 stays job two's spare ($(state_of s1))"
spares_of () {      #  spares_of JOB: as `jobs` counts them
    timeout 10 "$BIN/jace-spawner" jobs --supernode "$SN" --json |
        jq -r ".[] | select(.job == \"$1\") | .spares"
}
[ "$(spares_of "$id_two")" = 1 ] && [ "$(spares_of "$id_one")" = 0 ]
ok $? "jobs counts it job two's spare, and none of job one's"

#  Job two loses its daemon: its spare takes the task (restores it)
restored_on_s1 () {     #  restored_on_s1 NAME [FIRST-LINE]
    [ -n "$(tail -n "+${2:-1}" "$RUN/$1.events" | jq -c 'select(
            .event == "restored" and .task == 0 and .daemon == "s1")')" ]
}
crash "$PID_f1"
check "job two's task moves to its spare s1, which restores it" \
    wait_for 60 restored_on_s1 two
#  Job two over, s1 is free: job one, waiting, takes it
restored_on_s1 one
ok $((!$?)) "job one's lost task did not go to s1 while job two held it"
ended_at=$(($(wc -l <"$RUN/one.events") + 1))
"$BIN/jace-spawner" cancel "$id_two" --supernode "$SN" >"$RUN/cancel2.out" 2>&1
wait "$two"
check "job one's lost task runs on s1 once job two ended" \
    wait_for 60 restored_on_s1 one "$ended_at"
"$BIN/jace-spawner" cancel "$id_one" --supernode "$SN" >"$RUN/cancel1.out" 2>&1
wait "$one"
grep -q "refused: leased to job $id_two" "$RUN/s1.log"
ok $? "s1's log says why it refused job one's task"
lib_finish
