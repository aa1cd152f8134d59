#!/bin/sh
#  test_solver_jobs - the multisplitting solver as users submit it
#
#  On one grid of 8 daemons: Poisson, random diagonally dominant and
#  random SPD systems solved to their known solution (b = A*1) for 1, 2,
#  3, 5 and 8 tasks, asynchronous and synchronous, with both inner
#  solvers; a Matrix Market system and its answer; corrupt files refused
#  before anything is reserved; jobs that cannot converge end non-zero
#  and never report success.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 85

JOB=$RUN/system.job
cat >"$JOB" <<JOBFILE
job
    application = "multisplit"
    tolerance = 1e-9
    max_seconds = 60
problem
    kind = "poisson2d"
JOBFILE

start_supernode sn --heartbeat 200
for i in 1 2 3 4 5 6 7 8; do
    start_daemon d$i --supernode "$SN_sn"
done
check "8 daemons register" wait_for 15 count_is 8 "$SN_sn"

#  solves NAME KIND-ARGS...: one job per tasks x mode x inner solver, each
#  checked against the known solution.
solves () {
    label=$1; shift
    for tasks in 1 2 3 5 8; do
        for mode in async sync; do
            for inner in krylov lu-banded; do
                name="$label-$tasks-$mode-$inner"
                submit "$name" "$JOB" "$SN_sn" --set job/tasks=$tasks \
                    --set job/mode=$mode --set solver/inner=$inner "$@"
                status=$?
                error=$(tail -n 1 "$RUN/$name.events" | jq -e \
                        'select(.event == "result" and .residual < 1e-9) | .error')
                [ $status -eq 0 ] && jq -n -e "$error < 1e-6" >/dev/null
                ok $? "$label, $tasks tasks, $mode, $inner: error ${error:-none}"
            done
        done
    done
}
solves poisson2d --set problem/kind=poisson2d --set problem/n=16
solves dominant --set problem/kind=random-dominant --set problem/n=300 \
    --set problem/per_row=5
solves spd --set problem/kind=random-spd --set problem/n=200 \
    --set problem/per_row=3

#  A Matrix Market system with its right-hand side: x_i = i.
MTX=$JACE_SRCDIR/examples/matrices
submit file "$JOB" "$SN_sn" --set problem/kind=matrix \
    --set problem/matrix="$MTX/poisson2d_4x4.mtx" \
    --set problem/rhs="$MTX/poisson2d_4x4_rhs.mtx" --set job/tasks=3 \
    --out "$RUN/answer.mtx"
ok $? "a Matrix Market system is solved"
awk 'NR > 3 { d = $1 - (NR - 3); if (d < 0) d = -d; if (d > 1e-7) bad++ }
     END { exit bad || NR != 19 }' "$RUN/answer.mtx"
ok $? "its answer, written as a Matrix Market array, is x_i = i"

#  Corrupt files: refused with file, line and reason, nothing reserved.
{ printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n'
  printf '1 1 1.0\n4 1 2.0\n3 3 1\n'; } >"$RUN/range.mtx"
printf '%%%%MatrixMarket vector coordinate real general\n' >"$RUN/banner.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 x\n' \
    >"$RUN/value.mtx"
for case in range:4 banner:1 value:4; do
    file=${case%%:*}; line=${case##*:}
    timeout 20 "$BIN/jace-spawner" submit "$JOB" --supernode "$SN_sn" \
        --set problem/kind=matrix --set problem/matrix="$RUN/$file.mtx" \
        --events "$RUN/bad-$file.events" >/dev/null 2>"$RUN/bad-$file.err"
    [ $? -eq 2 ] && grep -q "$RUN/$file.mtx:$line: " "$RUN/bad-$file.err"
    ok $? "a corrupt file ($file) is refused with its name and line $line"
done
[ ! -s "$RUN/bad-range.events" ]
ok $? "nothing was leased for a corrupt file"
#  Singular systems: a zero row (an explicit zero is none), a column
#  no entry uses; each refused with the row or column.
{ printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n'
  printf '1 1 2\n2 2 0\n3 3 2\n1 2 1\n'; } >"$RUN/row.mtx"
{ printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n'
  printf '1 1 2\n2 1 1\n3 3 2\n'; } >"$RUN/column.mtx"
for case in "row:row 2 holds no nonzero" "column:column 2 holds no nonzero"
do
    file=${case%%:*}; says=${case#*:}
    timeout 20 "$BIN/jace-spawner" submit "$JOB" --supernode "$SN_sn" \
        --set problem/kind=matrix --set problem/matrix="$RUN/$file.mtx" \
        --set job/tasks=1 >/dev/null 2>"$RUN/singular-$file.err"
    [ $? -eq 2 ] && grep -q "is singular: $says" "$RUN/singular-$file.err"
    ok $? "a singular matrix (a zero $file) is refused, naming it"
done
diag "$(cat "$RUN/singular-row.err")"
check "every daemon is still free" count_is 8 "$SN_sn" '.state == "free"'

#  Jobs that cannot converge.
submit cap "$JOB" "$SN_sn" --set job/tasks=2 --set job/tolerance=1e-300 \
    --set job/max_iterations=300 --set problem/n=16
[ $? -eq 1 ] && grep -q "no convergence within job/max_iterations" "$RUN/cap.err"
ok $? "an unreachable tolerance ends at the iteration cap, non-zero"
! grep -q '"event":"result"' "$RUN/cap.events"
ok $? "and never reports a result"
submit clock "$JOB" "$SN_sn" --set job/tasks=2 --set job/tolerance=1e-300 \
    --set job/max_seconds=3 --set problem/n=16
[ $? -eq 1 ] && grep -q "wall-time limit" "$RUN/clock.err"
ok $? "an unreachable tolerance ends at the wall-time cap, non-zero"
submit diverge "$JOB" "$SN_sn" --set job/tasks=3 \
    --set problem/kind=random-dominant --set problem/dominance=0.3 \
    --set problem/n=300 --set solver/inner=lu-banded
[ $? -eq 1 ] && grep -q "diverges" "$RUN/diverge.err"
ok $? "a diverging iteration ends non-zero, saying it diverges"
! grep -q '"event":"result"' "$RUN/diverge.events"
ok $? "and never reports a result"
#  A zero on the diagonal (not singular): Krylov blocks break down on it,
#  and the failure says where and what pivots; the banded LU solves it.
awk 'BEGIN { N = 30; print "%%MatrixMarket matrix coordinate real general"
             print N * N, N * N, 5 * N * N - 4 * N
             for (i = 0; i < N; i++) for (j = 0; j < N; j++) {
                 k = i * N + j + 1
                 print k, k, (k == 101 ? 0 : 4)
                 if (i > 0) print k, k - N, -1
                 if (i < N - 1) print k, k + N, -1
                 if (j > 0) print k, k - 1, -1
                 if (j < N - 1) print k, k + 1, -1 } }' >"$RUN/zero.mtx"
submit zero "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/zero.mtx" --set solver/inner=cg
[ $? -eq 1 ] && grep -q "broke down; row 101 has no nonzero diagonal entry.*lu-banded" "$RUN/zero.err"
ok $? "a Krylov block that breaks down on a zero diagonal names the row and lu-banded"
diag "$(tail -n 1 "$RUN/zero.err")"
#  The default takes CG only for a symmetric block with a positive
#  diagonal: BiCGStab solves this one
submit zero-krylov "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/zero.mtx" --set solver/inner=krylov
ok $? "and the default inner solver, BiCGStab on that block, solves it"
submit zero-lu "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/zero.mtx" --set solver/inner=lu-banded
ok $? "and the banded LU solves it"
#  A block with an explicit zero on its diagonal, on which BiCGStab
#  diverges and gives the rows back unchanged, again and again: the task
#  reported no change, converged locally, and the job spun until its
#  stall check.  It now fails after ten such solves in a row, naming the
#  rows and the zero.  Blocks of rows 1-10 and 11-20, coupled by one pair.
awk 'BEGIN { n = 20
    for (i = 1; i <= n; i++) {
        base = i <= 10 ? 0 : 10
        d[i, i] = (i == 7) ? 0 : 3 + (i % 3) * 0.5
        j = base + (i * 7 + 3) % 10 + 1; if (j != i) d[i, j] = -0.5
        j = base + (i * 3 + 5) % 10 + 1; if (j != i) d[i, j] = 0.4 }
    d[7, 8] = 5; d[7, 15] = 1; d[15, 7] = 1
    for (k in d) count++
    print "%%MatrixMarket matrix coordinate real general"; print n, n, count
    for (k in d) { split(k, p, SUBSEP); print p[1], p[2], d[k] } }' \
    >"$RUN/stuck.mtx"
submit stuck "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/stuck.mtx" --set job/max_seconds=20
[ $? -eq 1 ] && grep -q "rows 1-10 diverged 10 times in a row.*row 7 has no nonzero diagonal entry" "$RUN/stuck.err"
ok $? "a block whose inner solves keep giving it back unchanged fails, naming its rows"
diag "$(tail -n 1 "$RUN/stuck.err")"
#  Singular but consistent (row 4 repeats row 3, b = A 1): the answer
#  meets the tolerance and is far from the known solution; the summary
#  says what that may mean
awk 'BEGIN { n = 20
    print "%%MatrixMarket matrix coordinate real general"; print n, n, 3 * n - 2
    for (i = 1; i <= n; i++) { r = (i == 4) ? 3 : i
        if (i > 1) print i, i - 1 - (i - r), -1
        print i, r, 4
        if (i < n) print i, r + 1, -1 } }' >"$RUN/duprow.mtx"
submit duprow "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/duprow.mtx"
[ $? -eq 0 ] && grep -q "^ *the known solution: is the matrix singular or badly conditioned?" \
    "$RUN/duprow.out"
ok $? "an answer far from the known solution is flagged in the summary"
diag "$(grep -A1 "error  \|note" "$RUN/duprow.out")"
#  Symmetric and diagonally dominant, but indefinite (+3, -3): the
#  default inner solver chose CG by symmetry alone, and CG broke down.
awk 'BEGIN { n = 40
    print "%%MatrixMarket matrix coordinate real symmetric"
    print n, n, 2 * n - 1
    for (i = 1; i <= n; i++) print i, i, (i % 2 ? 3 : -3)
    for (i = 1; i < n; i++) print i + 1, i, 1 }' >"$RUN/indefinite.mtx"
submit indefinite "$JOB" "$SN_sn" --set job/tasks=2 --set problem/kind=matrix \
    --set problem/matrix="$RUN/indefinite.mtx"
ok $? "a symmetric indefinite matrix solves under the default inner solver"
#  A tolerance below double precision: the stall says rounding stopped
#  it, not that the method does not suit the matrix.
submit rounding "$JOB" "$SN_sn" --set job/tasks=2 --set problem/n=16 \
    --set job/tolerance=1e-17 --set job/stall_snapshots=3
[ $? -eq 1 ] && grep -q "job/tolerance = 1.0e-17 is below double precision" \
    "$RUN/rounding.err" && grep -q "about where double precision's rounding leaves it for this matrix: job/tolerance = 1.0e-17 asks for more than it can give" \
    "$RUN/rounding.err"
ok $? "a tolerance below double precision is warned of, and its stall says so"
check "10 s after the failed jobs every daemon is free" \
    wait_for 10 count_is 8 "$SN_sn" '.state == "free"'
lib_finish
