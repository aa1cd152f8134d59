#!/bin/sh
#  test_fault_holder - a new daemon holds its neighbours' copies at once
#
#  Two tasks, each the only holder of the other's checkpoint copies, and
#  checkpoints too rare to happen during the test (every 600 s).  Task
#  0's daemon is killed: its replacement restores from scratch (no copy
#  was ever made), and its FETCH makes task 1 send it a copy of task 1's
#  state at once.  Task 1's daemon is killed next: its replacement
#  restores from that copy.  Before, the new daemon held nothing until
#  task 1's next checkpoint, and task 1 restarted from scratch too (a
#  drain step that moves both neighbours of a task leaves it so).
#  Triggered by events, not by time.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 7

cat >"$RUN/one.platform" <<PLATFORM
platform
    name = "one"
    cluster
        name = "A"
        nodes = 4
        speed = 0.3
PLATFORM
start_grid "$RUN/one.platform" --daemon-arg=--heartbeat --daemon-arg=300
ok $? "a grid starts"

submit holder "$JACE_SRCDIR/examples/poisson3d.job" "$sn" --set job/tasks=2 \
    --set solver/inner_tolerance=1e-12 --set problem/n=40 \
    --set job/tolerance=1e-9 --set job/heartbeat_timeout=1500 \
    --set checkpoint/every_iterations=0 --set checkpoint/every_seconds=600 &
job=$!

wait_for 60 all_iterate "$RUN/holder.events" 2
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$(daemon_of holder 0)" \
    >/dev/null
wait_for 60 has_task_event holder restored 0
#  Task 0 runs again on its new daemon before task 1 goes
wait_for 60 iterated holder 0 3
diag "task 0: $(task_event holder restored 0)"
task_event holder restored 0 | jq -e '.from == "initial"' >/dev/null
ok $? "task 0 had no copy to restore from (no checkpoint yet)"
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$(daemon_of holder 1)" \
    >/dev/null
wait_for 60 has_task_event holder restored 1
diag "task 1: $(task_event holder restored 1)"
task_event holder restored 1 | jq -e '.from == "checkpoint" and .iteration > 0
                    and .holder == 0' >/dev/null
ok $? "task 1 restores from the copy it sent task 0's new daemon"
wait $job
ok $? "the job ends with exit 0"
job_residual holder >/dev/null
ok $? "with a verified residual"
lib_finish
