#!/bin/sh
#  test_solver_tsirm - TSIRM-accelerated multisplitting as users submit it
#
#  solver/outer = tsirm on 3D Poisson, the NAS-CG-like generator and a
#  nonsymmetric Matrix Market file (upwind convection-diffusion), each
#  synchronous and asynchronous, each with one daemon crashed on progress
#  in the middle of the job: every job ends with a verified residual
#  under its tolerance and its replacement restored.  ILU(0) inner solves
#  with TSIRM and overlap converge, and so do single inner iterations;
#  the step's own residual ends a job whose changes never settle, and
#  so do plain multisplitting tasks' residuals of their rows;
#  unknown solver/outer and solver/preconditioner names and an inner
#  iteration cap of 0 are refused.  A job whose verified
#  residual stops falling ends early and says so.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 29

JOB=$RUN/tsirm.job
cat >"$JOB" <<JOBFILE
job
    application = "multisplit"
    tasks = 3
    tolerance = 1e-8
    max_seconds = 60
    heartbeat_timeout = 800
checkpoint
    every_iterations = 5
solver
    outer = "tsirm"
    tsirm_size = 6
problem
    kind = "poisson3d"
JOBFILE

#  A 30 x 30 upwind convection-diffusion matrix (flow along x, c = 2),
#  written as a general (nonsymmetric) Matrix Market file.
MTX=$RUN/convection.mtx
"$BIN/jace-mmgen" --convection 2 convection2d 30 "$MTX" >/dev/null
#  The crash tests' problems are larger: a crash comes when a PROGRESS
#  (every 100 ms at most) shows iteration 8 or more, and the job must not
#  end before it on a fast machine (on 20^3 and this 30 x 30 matrix it
#  came at the 36th iteration of 42).
CRASH_MTX=$RUN/convection-200.mtx
"$BIN/jace-mmgen" --convection 2 convection2d 200 "$CRASH_MTX" >/dev/null

start_supernode sn --heartbeat 200 --timeout 1000
add_daemons 5 "$SN_sn"
check "5 daemons register" wait_for 15 count_is 5 "$SN_sn"

events () {         #  events NAME EVENT: the lines of that event
    grep "\"event\":\"$2\"" "$RUN/$1.events"
}

#  solve NAME ARGS...: a TSIRM job with one crash, sync and async.
solve () {
    label=$1; shift
    for mode in sync async; do
        name="$label-$mode"
        submit "$name" "$JOB" "$SN_sn" --set job/mode=$mode \
            --set faults/first_iteration=8 --set faults/count=1 \
            --set faults/rounds=1 --set faults/every=1 "$@"
        status=$?
        residual=$(job_residual "$name")
        [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
        ok $? "$label, $mode, TSIRM: verified residual ${residual:-none}"
        [ "$(events "$name" crash | wc -l)" -ge 1 ] \
            && [ "$(events "$name" restored | wc -l)" -ge 1 ]
        ok $? "$label, $mode: a daemon crashed mid-job and its task was restored"
        reap_dead
        [ "$REAPED" -gt 0 ] && add_daemons "$REAPED" "$SN_sn"
        wait_for 15 count_is 5 "$SN_sn" '.state == "free"'
    done
}
solve poisson3d --set problem/n=32
solve nascg --set problem/kind=nascg --set problem/n=200000 \
    --set problem/bandwidth=400
solve convection --set problem/kind=matrix --set problem/matrix="$CRASH_MTX"

#  Inner solves preconditioned by ILU(0) (BiCGStab on the nonsymmetric
#  blocks), with TSIRM and overlap.
submit ilu "$JOB" "$SN_sn" --set problem/kind=matrix \
    --set problem/matrix="$MTX" --set solver/preconditioner=ilu0 \
    --set solver/overlap=30
status=$?
residual=$(job_residual ilu)
[ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "ILU(0) inner solves, TSIRM and overlap: verified residual ${residual:-none}"
#  One inner iteration per outer one (TSIRM's default is three).
submit one-inner "$JOB" "$SN_sn" --set job/mode=sync --set problem/n=20 \
    --set solver/preconditioner=ilu0 --set solver/inner_max_iterations=1
status=$?
residual=$(job_residual one-inner)
[ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "one ILU(0) inner iteration per outer one: verified residual ${residual:-none}"
#  Convergence on TSIRM's word: with job/converge_iterations out of reach
#  the tasks' changes never make them converged, and nothing samples the
#  job (job/stall_snapshots = 0); only the step's residual, which is the
#  true residual of the iterate every task goes on from, can.
for mode in sync async; do
    submit "own-word-$mode" "$JOB" "$SN_sn" --set job/mode=$mode \
        --set problem/n=20 --set job/converge_iterations=100000000 \
        --set job/stall_snapshots=0 --set job/max_seconds=30
    status=$?
    residual=$(job_residual "own-word-$mode")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
    ok $? "$mode: the step's residual ends the job (verified ${residual:-none})"
    #  Plain multisplitting says so too, from its rows' residual
    submit "own-rows-$mode" "$JOB" "$SN_sn" --set job/mode=$mode \
        --set problem/n=20 --set job/converge_iterations=100000000 \
        --set job/stall_snapshots=0 --set job/max_seconds=30 \
        --set solver/outer=multisplit
    status=$?
    residual=$(job_residual "own-rows-$mode")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
    ok $? "$mode: plain tasks' residuals end the job (verified ${residual:-none})"
done
submit bad-inner "$JOB" "$SN_sn" --set solver/inner_max_iterations=0
[ $? -eq 2 ] && grep -q "solver/inner_max_iterations = '0' is not an integer in \[1, 1000000\]" "$RUN/bad-inner.err"
ok $? "an inner iteration cap of 0 is refused, with the range"
submit half-inner "$JOB" "$SN_sn" --set solver/inner_max_iterations=2.5
[ $? -eq 2 ] && grep -q "solver/inner_max_iterations = '2.5' is not an integer" "$RUN/half-inner.err"
status=$?
submit half-n "$JOB" "$SN_sn" --set problem/n=20.5
half_n=$?
[ $status -eq 0 ] && [ $half_n -eq 2 ] \
    && grep -q "problem/n = '20.5' is not an integer in \[2, 1290\]" "$RUN/half-n.err"
ok $? "counts that are not whole (2.5 inner iterations, n = 20.5) are refused"
submit bad-pc "$JOB" "$SN_sn" --set solver/preconditioner=ilu1
[ $? -eq 2 ] && grep -q "solver/preconditioner = 'ilu1' is not one of jacobi, ilu0" "$RUN/bad-pc.err"
ok $? "an unknown preconditioner is refused, with its name"
submit bad-outer "$JOB" "$SN_sn" --set solver/outer=cgls
[ $? -eq 2 ] && grep -q "solver/outer = 'cgls' is not one of multisplit, tsirm, gmres" "$RUN/bad-outer.err"
ok $? "an unknown outer method is refused, with its name"

#  A stalled job: the Laplacian of a path with free ends is singular and
#  b = 1 lies wholly outside its range, so the residual cannot fall below
#  ||b|| whatever the iterate; block Jacobi drifts along the null space
#  for ever.  Sampled every 0.2 s, it ends after 5 flat snapshots.
SINGULAR=$RUN/singular.mtx
awk 'BEGIN {
    n = 300
    print "%%MatrixMarket matrix coordinate real symmetric"
    print n, n, 2 * n - 1
    for (i = 1; i <= n; i++) {
        print i, i, (i == 1 || i == n) ? 1 : 2
        if (i > 1) print i, i - 1, -1
    }
}' >"$SINGULAR"
awk 'BEGIN { print "%%MatrixMarket matrix array real general"; print 300, 1
             for (i = 0; i < 300; i++) print 1 }' >"$RUN/ones.mtx"
submit stall "$JOB" "$SN_sn" --set problem/kind=matrix \
    --set problem/matrix="$SINGULAR" --set problem/rhs="$RUN/ones.mtx" \
    --set solver/outer=multisplit --set report/sample_seconds=0.2 \
    --set job/stall_snapshots=5
[ $? -eq 1 ] && grep -Eq "block Jacobi \(multisplitting\) does not converge on this matrix; try solver/outer = gmres, or cg on a symmetric matrix \(job/mode = sync\), solver/outer = tsirm or solver/overlap: the verified residual (grows|stopped falling) over the last 5 snapshots \(now [0-9.e+-]+, [0-9.e+-]+ before them" "$RUN/stall.err"
ok $? "a stalled job ends early, saying what it saw and what to try"
seconds=$(jq -r 'select(.event == "failure") | .time' "$RUN/stall.events")
jq -n -e "$seconds < 20" >/dev/null
ok $? "well before its time cap (${seconds:-?} s of 60)"
! grep -q '"event":"result"' "$RUN/stall.events"
ok $? "and never reports a result"
submit stall-tsirm "$JOB" "$SN_sn" --set problem/kind=matrix \
    --set problem/matrix="$SINGULAR" --set problem/rhs="$RUN/ones.mtx" \
    --set report/sample_seconds=0.2 --set job/stall_snapshots=5
[ $? -eq 1 ] && grep -q "TSIRM does not converge on this matrix; try solver/tsirm_inner = cg (job/mode = sync), a larger solver/tsirm_size" "$RUN/stall-tsirm.err"
ok $? "TSIRM stalled on it too, and the advice is TSIRM's (CG cycles: the matrix is symmetric)"
lib_finish
