#!/bin/sh
#  test_drain_alone - a drained task with no copy of its state anywhere
#  goes on from where it got, not from scratch
#
#  A one-task job keeps no copies (no other task holds them), nor does a
#  job with checkpoint/copies = 0.  A drain moved such a task and it
#  restarted from its initial state (a one-task job drained after 3.6 s
#  restored from "initial").  Now the drain gathers the iterate with a
#  snapshot first, and the moved task restores its rows of it.  Each job
#  is drained once it has done 30 iterations, and the moved tasks must
#  go on from at least that far.  Steepest descent (CG with one inner
#  iteration) on slow nodes keeps the jobs running thousands of
#  iterations past that on any machine.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 15

cat >"$RUN/two.platform" <<PLATFORM
platform
    name = "two"
    backbone
        latency_us = 2000
        bandwidth_mbps = 100
    cluster
        name = "A"
        nodes = 2
        speed = 0.3
    cluster
        name = "B"
        nodes = 2
        speed = 0.3
PLATFORM
start_grid "$RUN/two.platform"
ok $? "a grid of two clusters starts"

SLOW_JOB="--set solver/inner=cg --set solver/inner_max_iterations=1
    --set problem/n=48 --set job/tolerance=1e-12"

#  Drain job NAME's busiest cluster once task T has done 30 iterations;
#  true if the spawner took it
drain_at_30 () {    #  drain_at_30 NAME T
    wait_for 60 iterated "$1" "$2" 30 || return 1
    id=$(jq -r 'select(.event == "start") | .job' "$RUN/$1.events")
    "$BIN/jace-spawner" drain "$id" --cluster "$(busiest_cluster \
        "$RUN/$1.events")" --supernode "$sn" >"$RUN/$1.drain" 2>&1
}

#  True if every task job NAME moved off the drained cluster restored
#  from the drain's iterate, at iteration 30 or later
moved_restored_from_drain () {  #  moved_restored_from_drain NAME
    moved=$(event "$1" drain_move | jq -r .task | sort -u)
    [ -n "$moved" ] || return 1
    for t in $moved; do
        diag "$1: task $t: $(task_event "$1" restored "$t")"
        task_event "$1" restored "$t" |
            jq -e '.from == "drain" and .iteration >= 30' >/dev/null ||
            return 1
    done
}

# shellcheck disable=SC2086
submit alone "$JACE_SRCDIR/examples/poisson3d.job" "$sn" --set job/tasks=1 \
    $SLOW_JOB &
job=$!
drain_at_30 alone 0
ok $? "the one-task job's cluster is drained after 30 iterations"
wait_for 60 has_task_event alone restored 0
has_event alone drain_gathered
ok $? "the drain gathered the iterate first (drain_gathered)"
moved_restored_from_drain alone
ok $? "the task goes on from the iterate, from iteration 30 or later"
wait $job
ok $? "the one-task job ends with exit 0"
diag "alone: $(event alone result | jq -c '{seconds, iterations_max}')"
job_residual alone >/dev/null
ok $? "with a verified residual"
event alone result | jq -e '.from_drain == 1 and .from_initial == 0' \
    >/dev/null
ok $? "the result counts one task restored from the drain's iterate"

#  Two tasks, checkpoints off: a drain of both moves them in two steps
#  (never two neighbours together), each after its own snapshot
# shellcheck disable=SC2086
submit nocopies "$JACE_SRCDIR/examples/poisson3d.job" "$sn" \
    --set job/tasks=2 --set checkpoint/copies=0 $SLOW_JOB &
job=$!
drain_at_30 nocopies 0
ok $? "the no-copies job's busiest cluster is drained after 30 iterations"
wait_for 90 has_event nocopies drained
ok $? "every task leaves the drained cluster"
moved_restored_from_drain nocopies
ok $? "each moved task goes on from the drain's iterate, from 30 or later"
steps=$(event nocopies drain_move | jq -r .step | sort -u | wc -l)
[ "$steps" -ge 1 ] && [ "$(event nocopies drain_gathered | wc -l)" -eq "$steps" ]
ok $? "one snapshot per step that moved tasks"
wait $job
ok $? "the no-copies job ends with exit 0"
diag "nocopies: $(event nocopies result | jq -c '{seconds, iterations_max}')"
job_residual nocopies >/dev/null
ok $? "with a verified residual"
lib_finish
