#!/bin/sh
#  test_drain_silent - a drain never moves the holders of a task that may
#  be dead
#
#  Two tasks, each the other's only neighbour and so the only holder of
#  its checkpoint copies: one on cluster A, one (X) on B.  X's daemon is
#  frozen (SIGSTOP: dead to everyone, not yet declared so), then A is
#  drained.  Moving A's task would drop X's copies with the daemon that
#  held them, and X's replacement would restart from its initial state
#  (seen under crashes: 18 s of a task's work lost so).  The drain waits
#  instead until X speaks or is declared dead; X's replacement then
#  restores from its checkpoint, and the job ends with a verified answer.
#  The test waits for events, not for time: a faster machine only gets
#  there sooner.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 11

#  A is one fast node: the mapping puts one task there, the other on B.
#  Slow nodes keep the job running through the scenario.
cat >"$RUN/two.platform" <<PLATFORM
platform
    name = "two"
    cluster
        name = "A"
        nodes = 1
        power = 4
        speed = 0.3
    cluster
        name = "B"
        nodes = 4
        supernodes = 0
        speed = 0.3
PLATFORM
start_grid "$RUN/two.platform" --daemon-arg=--heartbeat --daemon-arg=300
ok $? "a grid of two clusters starts"

submit silent "$JACE_SRCDIR/examples/poisson3d.job" "$sn" --set job/tasks=2 \
    --set solver/inner_tolerance=1e-12 --set problem/n=40 \
    --set job/tolerance=1e-9 --set job/heartbeat_timeout=6000 \
    --set checkpoint/every_iterations=3 --set checkpoint/every_seconds=0 &
job=$!

#  Both tasks have checkpointed (every 3 iterations) a few times
wait_for 60 iterated silent 0 10 && wait_for 60 iterated silent 1 10
ok $? "both tasks iterate and checkpoint"
id=$(jq -r 'select(.event == "start") | .job' "$RUN/silent.events")
x=$(jq -r 'select(.event == "assign" and .cluster == "B") | .task' \
       "$RUN/silent.events" | head -n 1)
a=$(jq -r 'select(.event == "assign" and .cluster == "A") | .task' \
       "$RUN/silent.events" | head -n 1)
[ -n "$x" ] && [ -n "$a" ]
ok $? "one task runs on A (task $a), the other on B (task $x)"
victim=$(daemon_of silent "$x")
victim_pid=$(awk -v d="$victim" '$1 == "daemon" && $2 == d { print $3 }' \
             "$RUN/grid/pids")
kill -STOP "$victim_pid"
"$BIN/jace-spawner" drain "$id" --cluster A --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "the drain of A is taken"
#  Meanwhile `status` says what the drain waits for (the frozen task to
#  speak, or checkpoints the frozen task holds up)
waiting () {
    "$BIN/jace-spawner" status "$id" --supernode "$sn" --json 2>/dev/null |
        jq -e '.drain.waiting // "" | test("task [0-9]+ \\(daemon ")' \
        >/dev/null
}
wait_for 30 waiting
ok $? "status says which task the drain waits for"
diag "$("$BIN/jace-spawner" status "$id" --supernode "$sn" | tail -n 1)"

#  X is declared dead and replaced; A's task moves only after that
wait_for 60 has_task_event silent restored "$x"
kill -CONT "$victim_pid"
restored=$(task_event silent restored "$x")
diag "task $x: $restored"
echo "$restored" | jq -e '.from == "checkpoint" and .iteration > 0' >/dev/null
ok $? "the frozen task's replacement restores from its checkpoint, not from scratch"
wait_for 60 has_task_event silent drain_move "$a"
moved=$(task_event silent drain_move "$a" | jq .time)
dead=$(task_event silent dead "$x" | jq .time)
diag "task $x declared dead at $dead s, task $a moved at $moved s"
[ -n "$moved" ] && [ -n "$dead" ] &&
    awk -v m="$moved" -v d="$dead" 'BEGIN { exit !(m > d) }'
ok $? "task $a moved off A only after task $x was declared dead"

wait $job
ok $? "the job ends with exit 0"
job_residual silent >/dev/null
ok $? "with a verified residual"
lib_finish
