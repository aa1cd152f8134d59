#!/bin/sh
#  test_solver_tsirm_uneven - asynchronous TSIRM on uneven nodes
#
#  The 8 nodes of wan.platform (speeds 1 to 0.25, two clusters behind a
#  20 ms backbone), 3D Poisson 32^3, asynchronous TSIRM.  A step combines
#  every task's j-th iterate with one coefficient; by default a task waits
#  (a bounded time, solver/tsirm_source_wait) for its neighbours' values
#  of its previous iteration before iterating, so that those iterates
#  belong together.  Without the wait the fast tasks run their window on
#  old values and the job needs about five times the iterations.  The
#  check compares the two jobs of this run, whatever the machine's speed.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 7

GRID=$RUN/wan
"$BIN/jace-grid" start --platform "$JACE_SRCDIR/examples/platforms/wan.platform" \
    --run "$GRID" >"$RUN/wan.endpoint" 2>"$RUN/wan.grid.err"
ok $? "the 8 nodes of wan.platform start"
sn=$(cat "$RUN/wan.endpoint")

iterations () {     #  iterations NAME: the most any task ran
    jq -r 'select(.event == "result") | .iterations_max' "$RUN/$1.events"
}
#  tsirm NAME ARGS...: the job, and a check of its verified residual
tsirm () {
    name=$1; shift
    submit "$name" "$JACE_SRCDIR/examples/poisson3d.job" "$sn" \
        --set job/tasks=8 --set job/mode=async --set solver/outer=tsirm \
        --set problem/n=32 --set job/max_seconds=120 "$@"
    status=$?
    residual=$(job_residual "$name")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
}
tsirm waiting
ok $? "asynchronous TSIRM: verified residual ${residual:-none}"
tsirm free --set solver/tsirm_source_wait=0
ok $? "and without the wait for neighbours: verified residual ${residual:-none}"
waiting=$(iterations waiting)
free=$(iterations free)
[ -n "$waiting" ] && [ -n "$free" ] && [ $((2 * waiting)) -lt "$free" ]
ok $? "the wait halves the iterations at least ($waiting against $free)"
submit bad-wait "$JACE_SRCDIR/examples/poisson3d.job" "$sn" \
    --set solver/outer=tsirm --set solver/tsirm_source_wait=-1
[ $? -eq 2 ] && grep -q "solver/tsirm_source_wait = '-1' is not an integer in \[0, 60000\]" "$RUN/bad-wait.err"
ok $? "a negative wait is refused, with the range"
"$BIN/jace-grid" stop --run "$GRID" >"$RUN/wan.stop" 2>&1
ok $? "the grid stops"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$GRID"/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
