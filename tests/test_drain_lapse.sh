#!/bin/sh
#  test_drain_lapse - a drain whose only room was a spare another job
#  took gives way at once
#
#  Job one runs on a1 (cluster A) and b1 (B) with s1 (C) as its spare.
#  Its spawner is stopped past its lease, and job two leases s1.  Job
#  one, running again, is asked to drain A: it still counts s1 as its
#  spare, moves its task there, and s1 refuses (LEASED).  No daemon off
#  A is left for the task.  It used to wait half job/reserve_timeout
#  (100 s here) without a daemon, the job standing still, while a1 sat
#  free; now the drain stops on the first listing that finds none, and
#  the task goes back to A.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 8

start_supernode sn
start_daemon a1 --cluster A --supernode "$SN" --power 4
start_daemon b1 --cluster B --supernode "$SN" --power 4
start_daemon s1 --cluster C --supernode "$SN" --power 1
check "the super-node lists the 3 daemons" wait_for 15 count_is 3 "$SN"

endless_job one "$SN" --set job/mapping=maheve \
    --set job/tasks=2 --set job/spares=1 &
one=$!
check "job one's 2 tasks iterate" wait_for 60 all_iterate "$RUN/one.events" 2
id_one=$(jq -r 'select(.event == "submit") | .job' "$RUN/one.events")
[ "$(held_state "$SN" s1)" = "leased $id_one" ]
ok $? "s1 is job one's spare ($(held_state "$SN" s1))"

kill -STOP "$one"
s1_free () { [ "$(held_state "$SN" s1)" = "free " ]; }
wait_for 30 s1_free
start_daemon f1 --cluster C --supernode "$SN" --power 8
wait_for 15 count_is 4 "$SN"
endless_job two "$SN" --set job/mapping=maheve \
    --set job/tasks=1 --set job/spares=1 &
two=$!
wait_for 60 all_iterate "$RUN/two.events" 1
id_two=$(jq -r 'select(.event == "submit") | .job' "$RUN/two.events")
s1_twos () { held_state "$SN" s1 | grep -q " $id_two\$"; }
check "job two holds s1 ($(held_state "$SN" s1))" wait_for 15 s1_twos
kill -CONT "$one"

task=$(jq -r 'select(.event == "assign" and .cluster == "A") | .task' \
       "$RUN/one.events")
mark=$(($(wc -l <"$RUN/one.events") + 1))
"$BIN/jace-spawner" drain "$id_one" --cluster A --supernode "$SN" \
    >"$RUN/drain.out" 2>&1
diag "drain of A: $(cat "$RUN/drain.out")"
#  Task $task iterating again, on A, after the drain began
back_on_a () {
    d=$(daemon_of one "$task")
    [ -n "$(tail -n "+$mark" "$RUN/one.events" | jq -c "select(
            .event == \"progress\" and .task == $task and .daemon == \"$d\"
            and .iteration >= 1)")" ] \
    && [ "$(jq -r "select(.event == \"replace\" and .task == $task)
                   | .cluster" "$RUN/one.events" | tail -n 1)" = A ]
}
check "task $task iterates on A again, well before 100 s" \
    wait_for 60 back_on_a
stopped=$(jq -r 'select(.event == "drain_stopped") | .why' "$RUN/one.events")
case "$stopped" in
    "task $task found no daemon off it on the grid"*) true ;;
    *) false ;;
esac
ok $? "the drain says why it stopped ($stopped)"
"$BIN/jace-spawner" cancel "$id_two" --supernode "$SN" >/dev/null 2>&1
"$BIN/jace-spawner" cancel "$id_one" --supernode "$SN" >/dev/null 2>&1
wait "$one" "$two"
lib_finish
