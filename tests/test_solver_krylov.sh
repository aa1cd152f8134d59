#!/bin/sh
#  test_solver_krylov - GMRES and CG around the multisplitting blocks, as
#  users submit them
#
#  solver/outer = gmres on 3D Poisson, the NAS-CG-like generator and a
#  nonsymmetric Matrix Market file, each with one daemon crashed on
#  progress in the middle of a GMRES cycle: every job ends with a
#  verified residual under its tolerance, its replacement restored from a
#  checkpoint and caught up with the cycle.  The iteration count is
#  GMRES's, not block Jacobi's; flexible GMRES (inner iterations) and
#  banded LU blocks converge; asynchronous mode, overlap and a restart
#  out of range are refused with what was wrong.  TSIRM over GMRES cycles
#  survives a crash in the middle of its window, converges on the
#  nonsymmetric file, and refuses what it cannot run.
#
#  solver/outer = cg and TSIRM over CG cycles the same way, with crashes
#  in mid-cycle.  The step count is CG's: a matrix with two eigenvalues
#  is solved in a few steps where block Jacobi needs thousands, and an
#  indefinite one fails at CG's breakdown, saying so.  What CG cannot run
#  is refused with what was wrong: a nonsymmetric matrix (a file, a
#  generator), asynchronous mode, an overlap and a cycle out of range.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 42

JOB=$RUN/gmres.job
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
    outer = "gmres"
    gmres_restart = 20
problem
    kind = "poisson3d"
JOBFILE

MTX=$RUN/convection.mtx
"$BIN/jace-mmgen" --convection 2 convection2d 40 "$MTX" >/dev/null

start_supernode sn --heartbeat 200 --timeout 1000
#  The crashes come when a PROGRESS (every 100 ms at most) shows
#  iteration 8 or more, and a job must not end before its crash on a fast
#  machine: at a fifth of their speed the daemons compute five times as
#  long (at full speed the TSIRM job's crash came at its 45th iteration of
#  49; at a fifth, at its 35th).
daemons () {       #  daemons COUNT: more, at a fifth of their speed
    add_daemons "$1" "$SN_sn" --speed 0.2
}
daemons 5
check "5 daemons register" wait_for 15 count_is 5 "$SN_sn"

field () {          #  field NAME KEY: a key of the job's result
    tail -n 1 "$RUN/$1.events" | jq -r "select(.event == \"result\") | .$2"
}

#  solve NAME ARGS...: a GMRES job (CG with its keys) with one crash.
#  The crash comes at iteration 8, the checkpoint before it at 5: the
#  replacement starts in the middle of a cycle of 20 and must run its
#  first 5 steps again.
solve () {
    label=$1; shift
    submit "$label" "$JOB" "$SN_sn" --set faults/first_iteration=8 \
        --set faults/count=1 --set faults/rounds=1 --set faults/every=1 "$@"
    status=$?
    residual=$(job_residual "$label")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
    ok $? "$label, one crash: verified residual ${residual:-none}"
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
solve convection --set problem/kind=matrix --set problem/matrix="$MTX"
#  Checkpoints every 5 iterations, cycles of 20: a crash at any time
#  after the 5th iteration finds a checkpoint taken in mid-cycle.
grep -q "runs the [0-9]* steps of its GMRES cycle from iteration" "$RUN"/d*.log
ok $? "a replacement ran its cycle's steps again and went on"

#  What the daemons logged since log_mark
log_mark () {
    for f in "$RUN"/d*.log; do
        printf '%s %s\n' "$f" "$(wc -l <"$f")"
    done >"$RUN/log.mark"
}
logs_since () {
    for f in "$RUN"/d*.log; do
        n=$(awk -v f="$f" '$1 == f { print $2 }' "$RUN/log.mark")
        tail -n +$(( ${n:-0} + 1 )) "$f"
    done
}

#  window_crash METHOD: TSIRM over METHOD (gmres, cg) cycles of 3 steps,
#  a least-squares step every 8 cycles (windows of 24 iterations), one
#  crash.  A checkpoint taken after I iterations holds the cycles its
#  window had ended, (I mod 24) div 3, and the replacement must count
#  them: it takes its least-squares step with the others at the window's
#  end, or the job's exchanges no longer match and it fails.  Which
#  checkpoint the crash finds depends on when progress shows iteration
#  10; 7 in 8 of them are in a window's later cycles.  Sets $restored and
#  $cycles; the status says whether the replacement's log agrees.
window_crash () {
    log_mark
    solve "tsirm-$1" --set problem/n=24 --set solver/outer=tsirm \
        --set solver/tsirm_inner="$1" --set "solver/$1_restart=3" \
        --set solver/tsirm_size=8 --set faults/first_iteration=10
    restored=$(jq -r 'select(.event == "restored") | .iteration' \
               "$RUN/tsirm-$1.events" | head -n 1)
    cycles=$(( ${restored:-0} % 24 / 3 ))
    if [ "$cycles" -gt 0 ]; then
        logs_since | grep -q "its TSIRM window goes on after $cycles of its 8 Krylov cycles"
    else
        ! logs_since | grep -q "its TSIRM window goes on after"
    fi
}
window_crash gmres
ok $? "TSIRM over GMRES restored after ${restored:-no} iterations: the window went on after $cycles cycles"
for mode in sync async; do
    submit "tsirm-$mode" "$JOB" "$SN_sn" --set problem/kind=matrix \
        --set problem/matrix="$MTX" --set solver/outer=tsirm \
        --set solver/tsirm_inner=gmres --set solver/gmres_restart=12 \
        --set job/mode=$mode
    status=$?
    case $mode in
    sync)
        residual=$(job_residual "tsirm-$mode")
        [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
        ok $? "TSIRM over GMRES(12), nonsymmetric file: verified ${residual:-none}" ;;
    async)
        [ $status -eq 2 ] && grep -q "solver/tsirm_inner = gmres needs job/mode = sync" "$RUN/tsirm-async.err"
        ok $? "asynchronous TSIRM over GMRES is refused, saying why" ;;
    esac
done
submit inner-alone "$JOB" "$SN_sn" --set solver/tsirm_inner=gmres
[ $? -eq 2 ] && grep -q "solver/tsirm_inner = gmres needs solver/outer = tsirm, not gmres" "$RUN/inner-alone.err"
ok $? "solver/tsirm_inner without TSIRM is refused"
submit inner-bad "$JOB" "$SN_sn" --set solver/outer=tsirm --set solver/tsirm_inner=bicgstab
[ $? -eq 2 ] && grep -q "solver/tsirm_inner = 'bicgstab' is not one of multisplit, gmres, cg" "$RUN/inner-bad.err"
ok $? "an unknown solver/tsirm_inner is refused, with the choices"

#  A crash before any checkpoint: the replacement starts from its initial
#  state, behind the others, which wait for it in sync mode.  It waited
#  for them too, and the job hung; now it catches up, as from a
#  checkpoint (GMRES from the others' logs, block Jacobi on its values).
for outer in gmres multisplit; do
    submit "initial-$outer" "$JOB" "$SN_sn" --set problem/n=24 \
        --set solver/outer=$outer --set checkpoint/every_iterations=0 \
        --set checkpoint/every_seconds=600 --set faults/first_iteration=8 \
        --set faults/count=1 --set faults/rounds=1 --set faults/every=1
    status=$?
    residual=$(job_residual "initial-$outer")
    [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null \
        && [ "$(field "initial-$outer" from_initial)" -ge 1 ]
    ok $? "$outer, sync, crashed before any checkpoint: restarted from its initial state, verified ${residual:-none}"
    reap_dead
    [ "$REAPED" -gt 0 ] && daemons "$REAPED"
    wait_for 15 count_is 5 "$SN_sn" '.state == "free"'
done

#  GMRES, not block Jacobi: A = [I C; C' I] with C = 1.5 times the
#  identity, split in its two blocks.  Block Jacobi's iteration matrix
#  then has spectral radius 1.5 and diverges; A has two eigenvalues,
#  -0.5 and 2.5, and GMRES solves it in a few steps.
two_blocks () {     #  two_blocks C FILE: [I C; C I], 100 rows, C = c I
    awk -v c="$1" 'BEGIN {
        n = 100
        print "%%MatrixMarket matrix coordinate real symmetric"
        print n, n, n + n / 2
        for (i = 1; i <= n; i++) print i, i, 1
        for (i = 1; i <= n / 2; i++) print i + n / 2, i, c
    }' >"$2"
}
TWO=$RUN/two-blocks.mtx
two_blocks 1.5 "$TWO"
submit jacobi "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$TWO" --set solver/outer=multisplit
jacobi=$?
submit krylov "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$TWO"
status=$?
residual=$(job_residual krylov)
[ $jacobi -ne 0 ] && [ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "GMRES solves (${residual:-no result}) where block Jacobi fails (exit $jacobi)"

submit flexible "$JOB" "$SN_sn" --set problem/n=24 \
    --set solver/gmres_inner_iterations=3
residual=$(job_residual flexible)
[ -n "$residual" ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "flexible GMRES (3 inner iterations a block): verified ${residual:-none}"
submit banded "$JOB" "$SN_sn" --set problem/kind=matrix \
    --set problem/matrix="$MTX" --set solver/inner=lu-banded
residual=$(job_residual banded)
[ -n "$residual" ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "banded LU blocks (exact block Jacobi): verified ${residual:-none}"

submit async "$JOB" "$SN_sn" --set job/mode=async
[ $? -eq 2 ] && grep -q "solver/outer = gmres needs job/mode = sync (its steps are global), not async" "$RUN/async.err"
ok $? "asynchronous GMRES is refused, saying why"
submit overlap "$JOB" "$SN_sn" --set solver/overlap=4
[ $? -eq 2 ] && grep -q "solver/outer = gmres takes no solver/overlap (4 asked)" "$RUN/overlap.err"
ok $? "GMRES with overlap is refused"
submit restart "$JOB" "$SN_sn" --set solver/gmres_restart=0
[ $? -eq 2 ] && grep -q "solver/gmres_restart = '0' is not an integer in \[1, 200\]" "$RUN/restart.err"
ok $? "a restart of 0 is refused, with the range"
#  CG: the same job with solver/outer = cg and cycles of 20
CG="--set solver/outer=cg --set solver/cg_restart=20"
solve cg-poisson3d --set problem/n=24 $CG
solve cg-nascg --set problem/kind=nascg --set problem/n=30000 \
    --set problem/bandwidth=600 $CG
grep -q "runs the [0-9]* steps of its CG cycle from iteration" "$RUN"/d*.log
ok $? "a CG replacement ran its cycle's steps again and went on"

window_crash cg
ok $? "TSIRM over CG restored after ${restored:-no} iterations: the window went on after $cycles cycles"

#  CG, not block Jacobi: A = [I C; C I] with C = 0.99 times the identity,
#  split in its two blocks.  Block Jacobi's iteration matrix has spectral
#  radius 0.99 (about 1,800 iterations to 1e-8); A has two eigenvalues,
#  0.01 and 1.99, and CG solves it in two steps.
TWO_SPD=$RUN/two-eigenvalues.mtx
two_blocks 0.99 "$TWO_SPD"
submit cg-two "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$TWO_SPD" $CG
status=$?
residual=$(job_residual cg-two)
steps=$(field cg-two iterations_max)
[ $status -eq 0 ] && jq -n -e "$residual <= 1e-8" >/dev/null \
    && [ "${steps:-99}" -le 10 ]
ok $? "CG solves a two-eigenvalue system in ${steps:-no} iterations (block Jacobi: about 1,800), verified ${residual:-none}"

submit cg-banded "$JOB" "$SN_sn" --set problem/n=16 --set solver/inner=lu-banded $CG
residual=$(job_residual cg-banded)
[ -n "$residual" ] && jq -n -e "$residual <= 1e-8" >/dev/null
ok $? "CG on banded LU blocks (exact block solves): verified ${residual:-none}"

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
    --set problem/matrix="$INDEFINITE" $CG
[ $? -eq 1 ] && grep -q "the method diverges on this system" "$RUN/indefinite.err" \
    && grep -q "CG found r'M^-1r = 0 and p'Ap = 0" "$RUN"/d*.log
ok $? "an indefinite matrix fails at CG's breakdown, saying so"

#  What CG cannot run
refused () {        #  refused NAME MESSAGE ARGS...: exit 2, saying MESSAGE
    label=$1; message=$2; shift 2
    submit "$label" "$JOB" "$SN_sn" $CG "$@"
    [ $? -eq 2 ] && grep -qF "$message" "$RUN/$label.err"
}
refused cg-file "solver/outer = cg needs a symmetric positive definite matrix, and problem/matrix = $MTX is not symmetric; use solver/outer = gmres" \
    --set problem/kind=matrix --set problem/matrix="$MTX"
ok $? "a nonsymmetric file matrix is refused before anything runs"
refused cg-generated "solver/tsirm_inner = cg needs a symmetric positive definite matrix, and problem/kind = random-dominant is not symmetric; use solver/tsirm_inner = gmres" \
    --set problem/kind=random-dominant --set solver/outer=tsirm \
    --set solver/tsirm_inner=cg
ok $? "a nonsymmetric generator under TSIRM over CG is refused"
refused cg-async "solver/outer = cg needs job/mode = sync (its steps are global), not async" \
    --set job/mode=async
ok $? "asynchronous CG is refused, saying why"
refused cg-overlap "solver/outer = cg takes no solver/overlap (4 asked)" \
    --set solver/overlap=4
ok $? "CG with overlap is refused"
refused cg-restart "solver/cg_restart = '201' is not an integer in [1, 200]" \
    --set solver/cg_restart=201
ok $? "a cycle out of range is refused, with the range"
#  A key the problem's kind never reads: the job solved the generated
#  system and ignored the user's file
refused kind-keys "problem/matrix is not read by problem/kind = poisson3d, which reads only problem/n" \
    --set problem/matrix="$MTX"
ok $? "a matrix file beside a generated kind is refused, naming what it reads"
lib_finish
