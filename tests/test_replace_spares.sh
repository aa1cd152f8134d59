#!/bin/sh
#  test_replace_spares - a dead daemon's task and the spares the job holds
#
#  Cluster A: four daemons of power 2; cluster B: two of power 1.  MAHEVE
#  puts the job's two tasks on A and holds a spare in each cluster.
#  1. The super-node is killed, then a task's daemon.  The spawner gets no
#     listing of the grid, yet A's spare is the job's already: the task
#     goes to it and the job ends verified.  It used to wait for a listing
#     until job/reserve_timeout and fail the job.
#  2. A's spare dies, the super-node forgets it, then a task's daemon is
#     killed.  The task goes to a live daemon of A, once: the dead spare
#     used to be handed out, and the task was lost a second time.
#  3. The super-node is killed, then both tasks' daemons, one after the
#     other.  The first task takes A's spare; the second finds none left
#     in A and must take B's, the job's too: the last listing's free
#     daemon of A would be asked of the dead super-node, and the job
#     waited for it until job/reserve_timeout and failed.  Task 1 crashes
#     once it has checkpointed to task 0's new daemon (on progress).
#  Each job's last round waits for a file the test creates after the
#  crashes (exchange/hold_file), so the job outlasts them on any machine;
#  the crashes follow progress.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 18

cat >"$RUN/x.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tasks = 2
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    reserve_timeout = 20
    heartbeat_timeout = 1500
    stall_snapshots = 0
exchange
    rounds = 40
    bytes = 2000
    sizes = "random"
    seed = 5
    pause_ms = 100
checkpoint
    every_seconds = 1
EOF

events () {         #  events NAME EVENT: the lines of that event
    grep "\"event\":\"$2\"" "$RUN/$1.events"
}

#  Daemons Pa1..Pa4 (A, power 2) and Pb1, Pb2 (B, power 1) of super-node P.
grid () {           #  grid PREFIX
    start_supernode "$1" --heartbeat 200 --timeout 1000
    eval "sn=\$SN_$1"
    for i in 1 2 3 4; do
        start_daemon "$1a$i" --supernode "$sn" --cluster A --power 2
    done
    for i in 1 2; do
        start_daemon "$1b$i" --supernode "$sn" --cluster B --power 1
    done
    wait_for 15 count_is 6 "$sn"
}

#  The daemon of a task, and A's spare, from the plan and assign events.
task_daemon () {    #  task_daemon NAME TASK
    events "$1" assign | jq -r "select(.task == $2) | .daemon" | head -n 1
}
spare_of_a () {     #  spare_of_a NAME
    events "$1" plan | jq -r '.spares[]' | grep 'a[0-9]$' | head -n 1
}

# 1. No super-node answers
grid one
ok $? "1: six daemons of two clusters register"
submit one "$RUN/x.job" "$SN_one" --set exchange/hold_file="$RUN/open.one" &
job=$!
wait_for $((60 * SLOW)) all_iterate "$RUN/one.events" 2
ok $? "1: both tasks iterate"
spare=$(spare_of_a one)
victim=$(task_daemon one 0)
[ -n "$spare" ] && [ -n "$victim" ]
ok $? "1: MAHEVE holds a spare of A ($spare); task 0 runs on $victim"
eval "crash \$PID_one"
eval "crash \$PID_$victim"
touch "$RUN/open.one"
wait "$job"
ok $? "1: the super-node and a task's daemon killed: the job exits 0"
events one replace | jq -s -e --arg spare "$spare" 'length == 1
    and .[0].daemon == $spare
    and (.[0].reason | test("reserved node of its cluster A"))' >/dev/null
ok $? "1: the task went to A's spare, which needs no super-node"
#  Killed, its daemon's port refuses the link at once; on a machine too
#  loaded to read that in time, its silence says it instead.
events one dead | jq -s -e 'length == 1
    and (.[0].reason | test("^its link dropped and its port refused us"
                            + "|^silent for [0-9]+ ms"))' >/dev/null
ok $? "1: the loss is recorded with how it was seen (refused, or silent)"
events one replace | jq -r .reason | while read -r line; do diag "$line"; done
job_residual one >/dev/null
ok $? "1: with a verified answer"

# 2. The spare died first
grid two
ok $? "2: six daemons of two clusters register"
submit two "$RUN/x.job" "$SN_two" --set exchange/hold_file="$RUN/open.two" &
job=$!
wait_for $((60 * SLOW)) all_iterate "$RUN/two.events" 2
spare=$(spare_of_a two)
victim=$(task_daemon two 0)
eval "crash \$PID_$spare"
wait_for $((15 * SLOW)) count_is 0 "$SN_two" ".id == \"$spare\""
ok $? "2: A's spare ($spare) killed, and forgotten by the super-node"
eval "crash \$PID_$victim"
touch "$RUN/open.two"
wait "$job"
ok $? "2: then a task's daemon killed: the job exits 0"
events two replace | jq -s -e --arg spare "$spare" 'length == 1
    and .[0].daemon != $spare and .[0].cluster == "A"' >/dev/null
ok $? "2: the task went to a live daemon of A, not to the dead spare"
events two replace | jq -r '"\(.daemon): \(.reason)"' |
    while read -r line; do diag "$line"; done
tail -n 1 "$RUN/two.events" | jq -e '.replacements == 1' >/dev/null
ok $? "2: one replacement, the task was not lost again"

# 3. No super-node answers, and A runs out of spares
grid three
ok $? "3: six daemons of two clusters register"
submit three "$RUN/x.job" "$SN_three" --set checkpoint/every_iterations=1 \
    --set exchange/hold_file="$RUN/open.three" &
job=$!
wait_for $((60 * SLOW)) all_iterate "$RUN/three.events" 2
spare_b=$(events three plan | jq -r '.spares[]' | grep 'b[0-9]$' | head -n 1)
first=$(task_daemon three 0)
second=$(task_daemon three 1)
eval "crash \$PID_three"
eval "crash \$PID_$first"
wait_for $((30 * SLOW)) sh -c "grep -q '\"event\":\"restored\"' \"$RUN/three.events\""
#  Task 0's new daemon is the only holder task 1 has: three more of task
#  1's iterations (a copy each) before its daemon dies, or it has none
#  and starts over, and round 1 is in no log (progress, not the clock).
#  (Line by line: the file's last line may be half written.)
task1_at () {
    grep '"event":"progress"' "$RUN/three.events" |
        jq -r 'select(.task == 1) | .iteration' 2>/dev/null |
        sort -n | tail -n 1 | grep . || echo 0
}
task1_past () { [ "$(task1_at)" -ge "$1" ]; }
mark=$(task1_at)
wait_for $((30 * SLOW)) task1_past $((mark + 3))
eval "crash \$PID_$second"
touch "$RUN/open.three"
wait "$job"
ok $? "3: the super-node, then both tasks' daemons killed: the job exits 0"
events three replace | jq -s -e --arg spare "$spare_b" 'length == 2
    and .[1].daemon == $spare' >/dev/null
ok $? "3: the second task went to B's spare ($spare_b), which the job holds"
events three replace | jq -r '"\(.daemon): \(.reason)"' |
    while read -r line; do diag "$line"; done
job_residual three >/dev/null
ok $? "3: with a verified answer"
lib_finish
