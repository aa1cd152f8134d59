#!/bin/sh
#  bench_petsc.sh - Jace's multisplitting against PETSc on the same matrix,
#  the same tolerance and the same number of processes
#
#  Usage: bench/bench_petsc.sh [PROBLEM...]
#
#  PROBLEM is KIND or KIND:KEY=VALUE,... with KIND poisson3d or nascg and
#  the keys of the job's problem/ section (n; bandwidth, per_row, shift,
#  seed for nascg), or KIND convection: the nonsymmetric upwind
#  convection-diffusion matrix of an n x n grid (keys n, c: the
#  convection, default 2), which Jace reads from the file only.
#  Default: poisson3d:n=40 nascg:n=50000,bandwidth=350.
#  Environment: PROCS (process counts, "1 2 4"), REPEATS (3), TOLERANCE
#  (1e-8), JACE_CONFIGS (the Jace configurations to run, by the names
#  below without their -async/-sync, e.g. "tsirm-ilu"; default all),
#  PETSC_VARIANTS (NAME|OPTIONS lines, replacing the list below),
#  PETSC (1; 0 runs Jace alone, installs nothing and needs no MPI),
#  MPIRUN_FLAGS (added to mpirun's), JACE_BUILDDIR and JACE_SRCDIR as for
#  bench_solver.sh.
#
#  Installs petsc-dev, an MPI and pkg-config with apt-get if PETSc is not
#  found, and builds bench/petsc_solve.c and a matrix writer (Jace's own
#  generators and Matrix Market writer, from the build tree's libsolvers)
#  into a temp folder.  Each problem is written once as a Matrix Market
#  file, which Jace (problem/kind = matrix, b = A*1) and PETSc both read.
#  For each P, on a virtual grid of P speed-1 daemons with free links, it
#  runs REPEATS rounds, interleaved:
#    jace-file-async/sync  Jace on P tasks, reading the file
#    jace-gen-async/sync   Jace on P tasks, generating the same matrix
#    jace-tsirm-async/sync the same, accelerated by TSIRM (solver/outer =
#                          tsirm, its defaults: s = 12, 100 CGLS
#                          iterations, 3 inner iterations)
#    jace-tsirm-ilu-async/sync  TSIRM with ILU(0)-preconditioned inner
#                          solves (solver/preconditioner = ilu0)
#    jace-gmres-sync       GMRES(30) around the blocks, each applying
#                          its ILU(0) once (solver/outer = gmres: what
#                          PETSc's gmres-ilu below runs)
#    jace-tsirm-gmres-sync TSIRM over GMRES cycles (solver/tsirm_inner =
#                          gmres, its defaults: cycles of 12, a
#                          least-squares step every 4): KSPTSIRM's form
#    jace-cg-sync          CG around the blocks, each applying its ILU(0)
#                          (IC(0) on these symmetric blocks) once
#                          (solver/outer = cg: PETSc's cg-icc below)
#    jace-tsirm-cg-sync    TSIRM over CG cycles (solver/tsirm_inner = cg:
#                          cycles of 200, a least-squares step every 4)
#  (a convection problem is nonsymmetric: no CG runs)
#  (a convection problem has no generator: its jace-gen and TSIRM runs
#  read the file)
#    petsc VARIANT         mpirun -n P petsc_solve, for each variant below
#  Every run stops at the true relative residual ||b - Ax|| / ||b|| <=
#  TOLERANCE from x0 = 0.  Times: solve (Jace: the result event's seconds,
#  submission to verified answer; PETSc: KSPSolve, set-up included) and
#  whole (jace-spawner submit, or mpirun, start to exit).  Prints the
#  medians with every run, and the ratios Jace / PETSc.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$JACE_SRCDIR/bench/bench_lib.sh"
procs=${PROCS:-1 2 4}
repeats=${REPEATS:-3}
tolerance=${TOLERANCE:-1e-8}
[ $# -gt 0 ] || set -- poisson3d:n=40 nascg:n=50000,bandwidth=350

#  PETSc's configurations, NAME|OPTIONS: Jace's stationary equivalent
#  (Richardson, block Jacobi, LU on each block; also with MUMPS's LU and
#  with Jace's own inner solver, CG to 1e-12), GMRES with block Jacobi
#  (ILU(0) and LU blocks), FGMRES with block Jacobi/ILU(0), KSPTSIRM (GMRES
#  inner solves capped at 30 iterations on block Jacobi/ILU(0), PETSc's
#  least-squares defaults given explicitly: some PETSc versions set them
#  in KSPSetUp, after the options were read, so check -ksp_view that
#  they took effect) and, the matrices being SPD, CG with ICC(0).
#  KSPTSIRM's inner solve needs -ksp_ksp_rtol below the outer tolerance:
#  PETSc 3.18 caps it at 30 iterations itself, and with the default rtol
#  (1e-5) every inner solve after the first returns at once, unchanged,
#  and the outer loop never converges (measured: the same residual norm
#  for ever on a 20^3 Poisson matrix).
variants=${PETSC_VARIANTS:-"richardson-lu|-ksp_type richardson -pc_type bjacobi -sub_pc_type lu
richardson-mumps|-ksp_type richardson -pc_type bjacobi -sub_pc_type lu -sub_pc_factor_mat_solver_type mumps
richardson-cg|-ksp_type richardson -pc_type bjacobi -sub_ksp_type cg -sub_pc_type jacobi -sub_ksp_rtol 1e-12 -sub_ksp_max_it 100000
gmres-ilu|-ksp_type gmres -pc_type bjacobi -ksp_pc_side right
gmres-lu|-ksp_type gmres -pc_type bjacobi -sub_pc_type lu -ksp_pc_side right
fgmres-ilu|-ksp_type fgmres -pc_type bjacobi
tsirm|-ksp_type tsirm -ksp_tsirm_size_ls 12 -ksp_tsirm_max_it_ls 15 -pc_type ksp -ksp_ksp_type gmres -ksp_ksp_max_it 30 -ksp_ksp_rtol 1e-14 -ksp_pc_type bjacobi
cg-icc|-ksp_type cg -pc_type bjacobi -sub_pc_type icc"}
common="-ksp_norm_type unpreconditioned -ksp_rtol $tolerance -ksp_max_it 1000000"

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench-petsc.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT

#  PETSc, an MPI and pkg-config, from Debian, only when missing
install_petsc () {
    if pkg-config --exists PETSc 2>/dev/null && command -v mpicc >/dev/null \
    && command -v mpirun >/dev/null; then
        return 0
    fi
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "bench_petsc: installing petsc-dev (apt-get)" >&2
    $sudo apt-get update -q >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends petsc-dev mpi-default-dev mpi-default-bin \
        pkg-config >&2
}

#  petsc_solve, and a writer of Jace's generated matrices
build_tools () {
    # shellcheck disable=SC2046
    mpicc -O2 $(pkg-config --cflags PETSc) "$JACE_SRCDIR/bench/petsc_solve.c" \
        -o "$run/petsc_solve" $(pkg-config --libs PETSc) -lm
    build_writer
}

build_writer () {
    cat >"$run/write_matrix.c" <<'EOF'
//  write_matrix - one of Jace's generated matrices as a Matrix Market file
#include "solvers.h"

int
main (int argc, char **argv)
{
    char error [512] = "bad arguments";
    csr_t *A = NULL;
    if (argc == 4 && strcmp (argv [1], "poisson3d") == 0) {
        int32_t N = (int32_t) atoi (argv [2]);
        problems_poisson3d (N, 0, N * N * N, &A, error, sizeof error);
    }
    else
    if (argc == 8 && strcmp (argv [1], "nascg") == 0) {
        problems_nascg_t nascg = { atoi (argv [2]), atoi (argv [3]),
            atoi (argv [4]), atof (argv [5]), strtoull (argv [6], NULL, 10) };
        problems_nascg (&nascg, 0, nascg.n, &A, error, sizeof error);
    }
    if (!A || mmio_write_matrix (argv [argc - 1], A, error, sizeof error)) {
        fprintf (stderr, "write_matrix: %s\n", error);
        return 1;
    }
    csr_destroy (&A);
    return 0;
}
EOF
    cc -O2 -I"$JACE_SRCDIR/solvers" "$run/write_matrix.c" -o "$run/write_matrix" \
        "$JACE_BUILDDIR/solvers/.libs/libsolvers.a" -lm
}

#  Parse PROBLEM into $kind, the job's --set list $sets and the file $mtx,
#  written with the job's defaults (app_multisplit.c) for missing keys.
write_problem () {
    kind=${1%%:*}
    keys=""
    [ "$kind" = "$1" ] || keys=$(echo "${1#*:}" | tr ',' ' ')
    n="" bandwidth="" per_row=4 diagonal_shift=1 seed=1 convection=2
    sets="--set problem/kind=$kind"
    for item in $keys; do
        case $item in
            c=*) convection=${item#*=}; continue ;;
            n=*) n=${item#*=} ;;
            bandwidth=*) bandwidth=${item#*=} ;;
            per_row=*) per_row=${item#*=} ;;
            shift=*) diagonal_shift=${item#*=} ;;
            seed=*) seed=${item#*=} ;;
            *) echo "bench_petsc: unknown key '$item' in $1" >&2; exit 1 ;;
        esac
        sets="$sets --set problem/$item"
    done
    mtx="$run/$(echo "$1" | tr ':,=' '_._').mtx"
    case $kind in
        poisson3d) "$run/write_matrix" poisson3d "${n:-32}" "$mtx" ;;
        nascg) n=${n:-1000}
               "$run/write_matrix" nascg "$n" "${bandwidth:-$((n / 50))}" \
                   "$per_row" "$diagonal_shift" "$seed" "$mtx" ;;
        convection) write_convection "${n:-100}" "$convection" "$mtx"
                    sets="--set problem/kind=matrix --set problem/matrix=$mtx" ;;
        *) echo "bench_petsc: problem kind '$kind' is not poisson3d, nascg or convection" >&2
           exit 1 ;;
    esac
}

#  The n x n grid's upwind convection-diffusion matrix (flow along x, the
#  convection c weighting the upwind neighbour): nonsymmetric, diagonally
#  dominant, written by jace-mmgen as a general Matrix Market file.
write_convection () {   #  write_convection N C FILE
    "$JACE_BUILDDIR/jace-mmgen" --convection "$2" convection2d "$1" "$3" \
        >/dev/null
}

#  A grid of $1 speed-1 daemons in one cluster; the links are emulated with
#  no latency and a bandwidth that makes transfers free.
start_grid () {
    cat >"$run/p$1.platform" <<EOF
platform
    name = "bench-petsc-$1"
    cluster
        name = "A"
        nodes = $1
        speed = 1
        latency_us = 0
        bandwidth_mbps = 1000000000
        supernodes = 1
EOF
    sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$run/p$1.platform" \
         --run "$run/grid")
}

now () { date +%s.%N; }

#  One Jace job: appends "problem P config solve whole its residual".
jace_run () {
    config=$1; shift
    base=${config#jace-}
    case " ${JACE_CONFIGS:-${base%-*}} " in
        *" ${base%-*} "*) ;;
        *) return 0 ;;
    esac
    wait_free "$P"
    events="$run/$config.events"
    started=$(now)
    # shellcheck disable=SC2086
    if "$JACE_BUILDDIR/jace-spawner" submit "$run/matrix.job" --supernode "$sn" \
        -q --events "$events" --set job/tasks="$P" --set job/tolerance="$tolerance" \
        "$@" >/dev/null 2>"$run/$config.err"; then
        whole=$(echo "$(now) - $started" | awk '{ printf "%.3f", $1 - $3 }')
        # shellcheck disable=SC2046
        set -- $(tail -n 1 "$events" | jq -r '"\(.seconds) \(.residual)
            \(.iterations_min)..\(.iterations_max)"')
        echo "$problem $P $config $1 $whole $3 $2" >>"$run/results"
    else
        echo "bench_petsc: $config failed: $(tail -n 1 "$run/$config.err")" >&2
        echo "$problem $P $config fail fail - -" >>"$run/results"
    fi
}

#  One PETSc run of a variant (its NAME|OPTIONS line).
petsc_run () {
    config="petsc-${1%%|*}"
    started=$(now)
    # shellcheck disable=SC2086
    if timeout 1800 mpirun $mpi_flags -n "$P" "$run/petsc_solve" -f "$mtx" \
        ${1#*|} $common </dev/null >"$run/petsc.out" 2>&1 \
    && grep -q "reason CONVERGED" "$run/petsc.out"; then
        whole=$(echo "$(now) - $started" | awk '{ printf "%.3f", $1 - $3 }')
        awk -v p="$problem" -v P="$P" -v c="$config" -v w="$whole" \
            '/^iterations/ { print p, P, c, $4, w, $2, $8 }' \
            "$run/petsc.out" >>"$run/results"
    else
        echo "bench_petsc: $config failed: $(tail -n 2 "$run/petsc.out")" >&2
        echo "$problem $P $config fail fail - -" >>"$run/results"
    fi
}

#  Medians of every configuration, with the runs, and the ratios
report () {
    awk -v repeats="$repeats" '
    function median (list,    v, count, i, j, t) {
        count = split (list, v, " ")
        for (i = 1; i <= count; i++) {
            if (v [i] == "fail")
                return "fail"
            for (j = i; j > 1 && v [j - 1] + 0 > v [j] + 0; j--) {
                t = v [j]; v [j] = v [j - 1]; v [j - 1] = t
            }
        }
        return v [int ((count + 1) / 2)]
    }
    function ratio (a, b) {
        return a == "fail" || b == "fail" ? "-" : sprintf ("%.2f", a / b)
    }
    {
        key = $1 " " $2 " " $3
        if (!(key in solve))
            order [++keys] = key
        solve [key] = solve [key] " " $4
        whole [key] = whole [key] " " $5
        its [key] = $6
        residual [key] = $7
    }
    END {
        for (k = 1; k <= keys; k++) {
            split (order [k], f, " ")
            if (f [1] != problem) {
                problem = f [1]
                printf "\n%s: medians of %d; runs are solve/whole s\n",
                       problem, repeats
                printf "%-2s %-23s %8s %8s %12s %10s  %s\n", "P",
                       "configuration", "solve s", "whole s", "iterations",
                       "residual", "runs"
            }
            ms [order [k]] = median (solve [order [k]])
            mw [order [k]] = median (whole [order [k]])
            count = split (solve [order [k]], rs, " ")
            split (whole [order [k]], rw, " ")
            runs = ""
            for (i = 1; i <= count; i++)
                runs = runs " " rs [i] "/" rw [i]
            printf "%-2s %-23s %8s %8s %12s %10s %s\n", f [2], f [3],
                   ms [order [k]], mw [order [k]], its [order [k]],
                   residual [order [k]], runs
        }
        print "\nJace / PETSc: ratio of solve times (of whole times)"
        for (k = 1; k <= keys; k++) {
            split (order [k], f, " ")
            if (f [3] !~ /^jace/)
                continue
            if (f [1] " " f [2] != header) {
                header = f [1] " " f [2]
                line = sprintf ("\n%s, P = %s\n  %-16s", f [1], f [2], "")
                for (m = 1; m <= keys; m++) {
                    split (order [m], g, " ")
                    if (g [1] " " g [2] == header && g [3] ~ /^petsc/)
                        line = line sprintf (" %16s", substr (g [3], 7))
                }
                print line
            }
            line = sprintf ("  %-16s", f [3])
            for (m = 1; m <= keys; m++) {
                split (order [m], g, " ")
                if (g [1] " " g [2] != header || g [3] !~ /^petsc/)
                    continue
                line = line sprintf (" %16s", ratio (ms [order [k]],
                       ms [order [m]]) " (" ratio (mw [order [k]],
                       mw [order [m]]) ")")
            }
            print line
        }
    }' "$run/results"
}

with_petsc=${PETSC:-1}
mpi_flags=none
if [ "$with_petsc" = 1 ]; then
    install_petsc
    build_tools
    mpi_flags="--bind-to none ${MPIRUN_FLAGS:-}"
    if mpirun --version 2>&1 | grep -q "Open MPI"; then
        mpi_flags="$mpi_flags --oversubscribe"
        [ "$(id -u)" != 0 ] || mpi_flags="$mpi_flags --allow-run-as-root"
    fi
else
    build_writer
fi
cat >"$run/matrix.job" <<EOF
job
    application = "multisplit"
    max_seconds = 1800
problem
    kind = "matrix"
EOF
: >"$run/results"
load=$(cut -d' ' -f1-3 /proc/loadavg)
for problem in "$@"; do
    write_problem "$problem"
    echo "bench_petsc: $problem: $(sed -n 3p "$mtx") (n n entries)" >&2
    for P in $procs; do
        start_grid "$P"
        for _ in $(seq 1 "$repeats"); do
            for mode in async sync; do
                jace_run "jace-file-$mode" --set job/mode=$mode \
                    --set problem/matrix="$mtx"
                # shellcheck disable=SC2086
                [ "$kind" = convection ] \
                || jace_run "jace-gen-$mode" --set job/mode=$mode $sets
                # shellcheck disable=SC2086
                jace_run "jace-tsirm-$mode" --set job/mode=$mode \
                    --set solver/outer=tsirm $sets
                # shellcheck disable=SC2086
                jace_run "jace-tsirm-ilu-$mode" --set job/mode=$mode \
                    --set solver/outer=tsirm --set solver/preconditioner=ilu0 \
                    $sets
                # shellcheck disable=SC2086
                [ "$mode" = async ] \
                || jace_run "jace-gmres-sync" --set job/mode=sync \
                    --set solver/outer=gmres $sets
                # shellcheck disable=SC2086
                [ "$mode" = async ] \
                || jace_run "jace-tsirm-gmres-sync" --set job/mode=sync \
                    --set solver/outer=tsirm --set solver/tsirm_inner=gmres \
                    $sets
                # shellcheck disable=SC2086
                [ "$mode" = async ] || [ "$kind" = convection ] \
                || jace_run "jace-cg-sync" --set job/mode=sync \
                    --set solver/outer=cg $sets
                # shellcheck disable=SC2086
                [ "$mode" = async ] || [ "$kind" = convection ] \
                || jace_run "jace-tsirm-cg-sync" --set job/mode=sync \
                    --set solver/outer=tsirm --set solver/tsirm_inner=cg \
                    $sets
            done
            [ "$with_petsc" = 1 ] || continue
            echo "$variants" | while IFS= read -r variant; do
                petsc_run "$variant"
            done
        done
        "$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null
    done
done
echo "$(getconf _NPROCESSORS_ONLN) cores, load average at the start $load," \
     "at the end $(cut -d' ' -f1-3 /proc/loadavg)," \
     "tolerance $tolerance," \
     "PETSc $([ "$with_petsc" = 1 ] && pkg-config --modversion PETSc || echo off)," \
     "mpirun $mpi_flags"
report
