#!/bin/sh
#  test_fence_bound - a spawner's descriptors stay bounded however many
#  daemons its job loses
#
#  The spawner kept the link to every daemon it fenced for the rest of
#  the job, to tell it again to stop should it speak: one descriptor per
#  replacement, and one reconnection attempt every 100 ms to each dead
#  daemon.  A spawner with 100 descriptors aborted after 52 replacements
#  ("zsock_new_checked: Assertion 'self->handle' failed").  Here task
#  0's daemon is killed 30 times (the dead ones revived as new daemons);
#  the spawner, limited to 64 descriptors, keeps the job, and its
#  descriptors grow by less than one per replacement.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 6

cat >"$RUN/one.platform" <<EOF
platform
    name = "one"
    cluster
        name = "A"
        nodes = 5
EOF
start_grid "$RUN/one.platform"
ok $? "a grid of 5 daemons starts"

(ulimit -n 64 && endless_job job "$sn" --set job/tasks=2 \
    --set job/spares=0 --set job/mapping=default) &
job=$!
check "the job's 2 tasks iterate" wait_for 60 all_iterate "$RUN/job.events" 2
descriptors () { ls "/proc/$job/fd" | wc -l; }
replaced () {       #  replaced N: task 0 replaced N times, and iterating
    [ "$(jq -r 'select(.event == "replace" and .task == 0) | .daemon' \
         "$RUN/job.events" | wc -l)" -ge "$1" ] && iterated job 0 1
}
kills=0
lost=""
while [ $kills -lt 30 ]; do
    [ $kills -eq 10 ] && before=$(descriptors)
    "$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$(daemon_of job 0)" \
        >/dev/null 2>&1
    kills=$((kills + 1))
    if ! wait_for 60 replaced $kills; then
        lost="replacement $kills did not come"
        break
    fi
    "$BIN/jace-grid" revive --run "$RUN/grid" >/dev/null 2>&1
done
[ -z "$lost" ] && kill -0 "$job" 2>/dev/null
ok $? "the spawner replaced task 0's daemon 30 times${lost:+ ($lost)}"
after=$(descriptors)
diag "spawner descriptors: $before after 10 replacements, $after after 30"
[ -n "$before" ] && [ $((after - before)) -lt 15 ]
ok $? "its descriptors grew by less than 15 over the last 20"
"$BIN/jace-spawner" cancel "$(jq -r 'select(.event == "submit") | .job' \
    "$RUN/job.events")" --supernode "$sn" >/dev/null 2>&1
wait "$job"
lib_finish
