#!/bin/sh
#  test_stall_link - a job stalled by a slow link is told so
#
#  Two clusters of two daemons joined by 0.02 Mb/s: a round of poisson3d's
#  values across the cut (1,800 doubles) takes nearly 6 s there, while
#  a task computes an iteration in milliseconds, so the asynchronous
#  iteration runs on values thousands of iterations old and its verified
#  residual stops falling.  The failure must name the link and its
#  figures before the solver's advice about the matrix.  The same job
#  where the two clusters are joined by 1000 Mb/s converges.  The job is
#  submitted once the super-node has measured the link, so the spawner
#  judges on the link as measured, not on its defaults.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 6

platform () {       #  platform BANDWIDTH_MBPS
    cat <<EOF
platform
    name = "two-sites"
    backbone
        latency_us = 2000
        bandwidth_mbps = $1
    cluster
        name = A
        nodes = 2
        supernodes = 1
    cluster
        name = B
        nodes = 2
        supernodes = 0
EOF
}

#  start_grid NAME BANDWIDTH_MBPS: the grid, once A -> B's bandwidth is
#  measured ("? Mb/s" until then)
start_grid () {
    platform "$2" >"$RUN/$1.platform"
    "$BIN/jace-grid" start --platform "$RUN/$1.platform" --run "$RUN/$1" \
        >"$RUN/$1.endpoint" 2>"$RUN/$1.err" || return 1
    wait_for $((30 * SLOW)) sh -c "\"$BIN/jace-spawner\" nodes \
        --supernode \"\$(cat '$RUN/$1.endpoint')\" 2>/dev/null |
        grep -q 'A -> B: .*[0-9] Mb/s'"
}

run_job () {        #  run_job NAME GRID
    submit "$1" "$JACE_SRCDIR/examples/poisson3d.job" \
        "$(cat "$RUN/$2.endpoint")" --set job/tasks=4 --set problem/n=30 \
        --set job/mapping=simple --set report/sample_seconds=0.2 \
        --set job/stall_snapshots=5 --set job/max_seconds=60
}

start_grid slow 0.02
ok $? "a grid of two clusters joined by 0.02 Mb/s, its link measured"
run_job stalled slow
rc=$?
diag "$(tail -n 1 "$RUN/stalled.err")"
[ $rc -eq 1 ] && grep -Eq "failed: the link between clusters (A and B|B and A) is the likely cause: a round of the values the tasks exchange across it \(1800 values, both ways\) takes [0-9.]+ s at its 0\.[0-9]+ Mb/s and [0-9.]+ ms, and they compute an iteration in [0-9.e+-]+ ms, so what crosses it is about [0-9]+ iterations old; .*; if not that, block Jacobi" "$RUN/stalled.err"
ok $? "the stalled job names the link, its figures and the values' age, then the solver's advice"
"$BIN/jace-grid" stop --run "$RUN/slow" >/dev/null 2>&1

start_grid fast 1000
ok $? "the same grid joined by 1000 Mb/s, its link measured"
run_job converged fast
[ $? -eq 0 ] && job_residual converged >/dev/null
ok $? "there the same job converges to a verified answer"
lib_finish
