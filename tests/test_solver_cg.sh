#!/bin/sh
#  test_solver_cg - CG around the multisplitting blocks, as users submit
#  it
#
#  solver/outer = cg on 3D Poisson and the NAS-CG-like generator, and
#  TSIRM over CG cycles, each with one daemon crashed on progress in the
#  middle of a cycle: every job ends with a verified residual under its
#  tolerance, its replacement restored from a checkpoint and caught up
#  with the cycle.  The step count is CG's: a matrix with two eigenvalues
#  is solved in a few steps where block Jacobi needs thousands.  What CG
#  cannot run is refused with what was wrong: a nonsymmetric matrix (a
#  file, a generator), asynchronous mode, an overlap and a cycle out of
#  range.
. "$(dirname "$0")/lib.sh"
lib_init
plan 19

JOB=$RUN/cg.job
cat >"$JOB" <<JOBFILE
job
    application = "multisplit"
    tasks = 3
    mode = "sync"
    tolerance = 1e-8
    max_seconds = 60
    heartbeat_timeout = 800
checkpoint
    every_iterations = 5
solver
    outer = "cg"
    cg_restart = 20
problem
    kind = "poisson3d"
JOBFILE

start_supernode sn --heartbeat 200 --timeout 1000
#  The crashes come when a PROGRESS (every 100 ms at most) shows
#  iteration 8 or more; at a fifth of their speed the daemons are slow
#  enough that a job cannot end before its crash on a fast machine.
daemons () {       #  daemons COUNT: more, at a fifth of their speed
    add_daemons "$1" "$SN_sn" --speed 0.2
}
daemons 5
check "5 daemons register" wait_for 15 count_is 5 "$SN_sn"

field () {          #  field NAME KEY: a key of the job's result
    tail -n 1 "$RUN/$1.events" | jq -r "select(.event == \"result\") | .$2"
}

#  solve NAME ARGS...: a CG job with one crash.  The crash comes at
#  iteration 8 or later, the checkpoint before it at 5 or later: with
#  cycles of 20, the replacement starts in the middle of a cycle and must
#  run its first steps again.
solve () {
    label=$1; shift
    submit "$label" "$JOB" "$SN_sn" --set faults/first_iteration=8 \
        --set faults/count=1 --set faults/rounds=1 --set faults/every=1 "$@"
    status=$?
    residual=$(job_residual "$label")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
    ok $? "$label, CG, one crash: verified residual ${residual:-none}"
    [ "$(grep -c '"event":"crash"' "$RUN/$label.events")" -ge 1 ] \
        && [ "$(field "$label" from_checkpoint)" -ge 1 ]
    ok $? "$label: the crashed task restarted from a checkpoint"
    reap_dead
    [ "$REAPED" -gt 0 ] && daemons "$REAPED"
    wait_for 15 count_is 5 "$SN_sn" '.state == "free"'
}
solve poisson3d --set problem/n=24
solve nascg --set problem/kind=nascg --set problem/n=30000 \
    --set problem/bandwidth=600
grep -q "runs the [0-9]* steps of its CG cycle from iteration" "$RUN"/d*.log
ok $? "a replacement ran its cycle's steps again and went on"

#  TSIRM over CG cycles of 3 steps, a least-squares step every 8 cycles
#  (windows of 24 iterations): the replacement must count the cycles its
#  window had ended, or the job's exchanges no longer match and it fails.
solve tsirm-cg --set problem/n=24 --set solver/outer=tsirm \
    --set solver/tsirm_inner=cg --set solver/cg_restart=3 \
    --set solver/tsirm_size=8 --set faults/first_iteration=10
restored=$(jq -r 'select(.event == "restored") | .iteration' \
           "$RUN/tsirm-cg.events" | head -n 1)
cycles=$(( ${restored:-0} % 24 / 3 ))
if [ "$cycles" -gt 0 ]; then
    grep -q "its TSIRM window goes on after $cycles of its 8 Krylov cycles" "$RUN"/d*.log
else
    ! grep -q "its TSIRM window goes on after" "$RUN"/d*.log
fi
ok $? "restored after ${restored:-no} iterations: the window went on after $cycles cycles"

#  CG, not block Jacobi: A = [I C; C I] with C = 0.99 times the identity,
#  split in its two blocks.  Block Jacobi's iteration matrix has spectral
#  radius 0.99 (about 1,800 iterations to 1e-8); A has two eigenvalues,
#  0.01 and 1.99, and CG solves it in two steps.
TWO=$RUN/two-eigenvalues.mtx
awk 'BEGIN {
    n = 100
    print "%%MatrixMarket matrix coordinate real symmetric"
    print n, n, n + n / 2
    for (i = 1; i <= n; i++) print i, i, 1
    for (i = 1; i <= n / 2; i++) print i + n / 2, i, 0.99
}' >"$TWO"
submit two "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$TWO"
status=$?
residual=$(job_residual two)
steps=$(field two iterations_max)
[ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null \
    && [ "${steps:-99}" -le 10 ]
ok $? "CG solves a two-eigenvalue system in ${steps:-no} iterations (block Jacobi: about 1,800), verified ${residual:-none}"

submit banded "$JOB" "$SN_sn" --set problem/n=16 --set solver/inner=lu-banded
residual=$(job_residual banded)
[ -n "$residual" ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "banded LU blocks (exact block solves): verified ${residual:-none}"

#  A symmetric matrix that is not positive definite: diag(1, -1, 1, ...)
#  with b = A 1 makes r'M^-1r = 0 at the first step.  The job fails at once,
#  saying why, instead of running to its time cap.
INDEFINITE=$RUN/indefinite.mtx
awk 'BEGIN {
    n = 100
    print "%%MatrixMarket matrix coordinate real symmetric"
    print n, n, n
    for (i = 1; i <= n; i++) print i, i, (i % 2 ? 1 : -1)
}' >"$INDEFINITE"
submit indefinite "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$INDEFINITE"
[ $? -eq 1 ] && grep -q "the method diverges on this system" "$RUN/indefinite.err" \
    && grep -q "CG found r'M^-1r = 0 and p'Ap = 0" "$RUN"/d*.log
ok $? "an indefinite matrix fails at CG's breakdown, saying so"

#  What CG cannot run
MTX=$RUN/convection.mtx
"$BIN/jace-mmgen" --convection 2 convection2d 30 "$MTX" >/dev/null
refused () {        #  refused NAME MESSAGE ARGS...: exit 2, saying MESSAGE
    label=$1; message=$2; shift 2
    submit "$label" "$JOB" "$SN_sn" "$@"
    [ $? -eq 2 ] && grep -qF "$message" "$RUN/$label.err"
}
refused file "solver/outer = cg needs a symmetric positive definite matrix, and problem/matrix = $MTX is not symmetric; use solver/outer = gmres" \
    --set problem/kind=matrix --set problem/matrix="$MTX"
ok $? "a nonsymmetric file matrix is refused before anything runs"
refused generated "solver/tsirm_inner = cg needs a symmetric positive definite matrix, and problem/kind = random-dominant is not symmetric; use solver/tsirm_inner = gmres" \
    --set problem/kind=random-dominant --set solver/outer=tsirm \
    --set solver/tsirm_inner=cg
ok $? "a nonsymmetric generator under TSIRM over CG is refused"
refused async "solver/outer = cg needs job/mode = sync (its steps are global), not async" \
    --set job/mode=async
ok $? "asynchronous CG is refused, saying why"
refused overlap "solver/outer = cg takes no solver/overlap (4 asked)" \
    --set solver/overlap=4
ok $? "CG with overlap is refused"
refused restart "solver/cg_restart = '201' is not an integer in [1, 200]" \
    --set solver/cg_restart=201
ok $? "a cycle out of range is refused, with the range"
lib_finish
