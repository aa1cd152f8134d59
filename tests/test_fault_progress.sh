#!/bin/sh
#  test_fault_progress - crashes scheduled on progress: when the first
#  task gets there, or when every task has
#
#  faults/first_iteration fires the first crash round when a task has
#  done that many iterations: the fastest one.  A test (or a user) who
#  wants every task past that point, each with its checkpoints sent, says
#  faults/first_iteration_by = every: the round waits for the slowest.
#  Two tasks, one on a daemon ten times slower (--speed 0.1), both
#  crashed at once (faults/tasks = "0 1"); their replacements are the
#  two daemons of lower power the mapping left free.
#
#  1. `every`: both tasks had done the iterations when they crashed, and
#     the job ends with a verified answer.
#  2. `any` (the default): the slow task crashed well short of them.
#  3. An unknown value, and `every` without faults/first_iteration, are
#     refused with the reason.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 8
N=3000

start_supernode sn --heartbeat 200 --timeout 1000
#  The replacements: free, and of lower power than the pair the job
#  takes first.
add_daemons 2 "$SN_sn" --power 0.5
pair () {           #  pair: a fast daemon and one ten times slower
    add_daemons 1 "$SN_sn"
    add_daemons 1 "$SN_sn" --speed 0.1
    wait_for 15 count_is 4 "$SN_sn" '.state == "free"'
}
run () {            #  run NAME BY: the job, both tasks crashed at N
    submit "$1" "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
        --set job/tasks=2 --set job/spares=0 --set problem/n=48 \
        --set job/heartbeat_timeout=1500 --set faults/tasks="0 1" \
        --set faults/first_iteration=$N --set faults/first_iteration_by="$2"
}
crashed_at () {     #  crashed_at NAME: the tasks' iterations at the crash
    grep '"event":"crash"' "$RUN/$1.events" | jq -s -c '[.[].iteration]'
}

pair
run every every
ok $? "both tasks crashed once every task was past iteration $N: the job exits 0"
diag "every: crashed at iterations $(crashed_at every)"
[ -n "$(job_residual every)" ] && grep '"event":"crash"' "$RUN/every.events" |
    jq -s -e --argjson n $N 'length == 2 and all (.[]; .iteration >= $n)' \
    >/dev/null
ok $? "verified, and each task had done $N iterations when it crashed"

reap_dead
pair
run any any
ok $? "with the first task to get there, the job exits 0 too"
diag "any: crashed at iterations $(crashed_at any)"
grep '"event":"crash"' "$RUN/any.events" |
    jq -s -e --argjson n $N 'length == 2 and any (.[]; .iteration < $n)' \
    >/dev/null
#  Short of N, where `every` had both past it: the margin of N / 2 this
#  asked for failed when the round came 0.1 s after the start, before a
#  daemon's emulated slowness told (the slow task at 1590 of 3353)
ok $? "and the slow task crashed short of iteration $N"

submit by "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set faults/first_iteration=10 --set faults/first_iteration_by=all
[ $? -ne 0 ] && grep -q "faults/first_iteration_by = 'all' is neither any" \
    "$RUN/by.err"
ok $? "an unknown faults/first_iteration_by is refused, saying what it takes"
submit alone "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set faults/every=5 --set faults/first_iteration_by=every
[ $? -ne 0 ] && grep -q "faults/first_iteration_by needs faults/first_iteration" \
    "$RUN/alone.err"
ok $? "and so is one without faults/first_iteration"

reap_dead
lib_finish
