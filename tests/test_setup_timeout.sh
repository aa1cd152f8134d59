#!/bin/sh
#  test_setup_timeout - a task whose set-up waits on another gives up
#  after job/setup_timeout of nothing new, saying what it waited for
#
#  Task 1's daemon is frozen (SIGSTOP; the detector's timeout is long, so
#  it stays task 1's), then task 0's daemon is killed.  Task 0's
#  replacement needs task 1's request list, which does not come: with
#  job/setup_timeout = 3 its daemon gives the task up after 3 s (it was a
#  fixed 30 s, which the job file could not change), naming task 1.
#  Task 1 thawed, the next replacement gets through.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 6

cat >"$RUN/one.platform" <<EOF
platform
    name = "one"
    cluster
        name = "A"
        nodes = 6
EOF
start_grid "$RUN/one.platform"
ok $? "a grid of 6 daemons starts"

endless_job job "$sn" --set job/tasks=3 --set job/spares=0 \
    --set job/mapping=default --set job/heartbeat_timeout=120000 \
    --set job/setup_timeout=3 &
job=$!
check "the job's 3 tasks iterate" wait_for 60 all_iterate "$RUN/job.events" 3
pid_of () { awk -v n="$1" '$2 == n { print $3 }' "$RUN/grid/pids"; }
frozen=$(pid_of "$(daemon_of job 1)")
kill -STOP "$frozen"
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$(daemon_of job 0)" \
    >/dev/null 2>&1
gave_up () {
    [ -n "$(event job dead | jq -c 'select(.task == 0 and (.reason |
        contains("nothing new in the set-up exchange for 3 s (job/setup_timeout); waiting for: ")
        and contains("request lists of tasks 1")))')" ]
}
wait_for 60 gave_up
rc=$?
[ $rc -ne 0 ] && diag "$(event job dead | tail -n 3)"
ok $rc "task 0's replacement gave up after 3 s, naming task 1"
mark=$(($(wc -l <"$RUN/job.events") + 1))
kill -CONT "$frozen"
iterates_again () {
    d=$(daemon_of job 0)
    [ -n "$(tail -n "+$mark" "$RUN/job.events" | jq -c "select(
        .event == \"progress\" and .task == 0 and .daemon == \"$d\"
        and .iteration >= 3)")" ]
}
check "task 1 thawed, task 0 runs again" wait_for 60 iterates_again
"$BIN/jace-spawner" cancel "$(jq -r 'select(.event == "submit") | .job' \
    "$RUN/job.events")" --supernode "$sn" >/dev/null 2>&1
wait "$job"
lib_finish
