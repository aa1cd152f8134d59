#!/bin/sh
#  bench_inner.sh - plain multisplitting's Krylov blocks, preconditioned by
#  the diagonal against ILU(0), measured side by side
#
#  Usage: bench/bench_inner.sh [PROBLEM...]
#
#  PROBLEM is NAME:KEY=VALUE,... with the job keys to set (problem/...,
#  solver/...; commas separate them, so no value may hold one).  KIND
#  "convection" is written as a Matrix Market file first (keys n and c:
#  jace-mmgen convection2d).  Default: 3D Poisson 40³, the NAS-CG-like
#  system (50,000 rows), upwind convection 300² with c = 2 and c = 20.
#  Environment: TASKS (2), MODE (sync), REPEATS (3), PRECONDITIONERS
#  ("jacobi ilu0"), TOLERANCE (1e-8), JACE_BUILDDIR.
#
#  One grid of TASKS speed-1 daemons on free links; every problem runs
#  REPEATS rounds with each preconditioner interleaved.  Prints for each
#  the median time to the verified answer (the result event's seconds,
#  submission to answer), its outer iterations, and the runs that failed.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$(dirname "$0")/bench_lib.sh"
tasks=${TASKS:-2}
mode=${MODE:-sync}
repeats=${REPEATS:-3}
preconditioners=${PRECONDITIONERS:-jacobi ilu0}
tolerance=${TOLERANCE:-1e-8}
[ $# -gt 0 ] || set -- poisson3d:problem/kind=poisson3d,problem/n=40 \
    nascg:problem/kind=nascg,problem/n=50000,problem/bandwidth=350 \
    convection-c2:kind=convection,n=300,c=2 \
    convection-c20:kind=convection,n=300,c=20

run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
private_secrets "$run"
cat >"$run/grid.platform" <<EOF
platform
    name = "bench-inner"
    cluster
        name = "A"
        nodes = $tasks
EOF
cat >"$run/base.job" <<EOF
job
    application = "multisplit"
    tasks = $tasks
    mode = "$mode"
    tolerance = $tolerance
    max_seconds = 600
solver
    inner = "krylov"
EOF
sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$run/grid.platform" \
     --run "$run/grid")

#  sets_of PROBLEM: its --set arguments (a convection matrix written once)
sets_of () {
    keys=${1#*:}
    case $keys in
        kind=convection,*)
            n=$(echo "$keys" | sed -n 's/.*n=\([0-9]*\).*/\1/p')
            c=$(echo "$keys" | sed -n 's/.*c=\([0-9.]*\).*/\1/p')
            matrix=$run/convection-$n-$c.mtx
            [ -f "$matrix" ] || "$JACE_BUILDDIR/jace-mmgen" --convection "$c" \
                convection2d "$n" "$matrix" >/dev/null
            echo "--set problem/kind=matrix --set problem/matrix=$matrix" ;;
        *)  echo "$keys" | tr ',' '\n' | sed 's/^/--set /' | tr '\n' ' ' ;;
    esac
}

printf 'problem\tpreconditioner\trepeat\tseconds\titerations\tstatus\n' \
    >"$run/runs.tsv"
for problem in "$@"; do
    name=${problem%%:*}
    sets=$(sets_of "$problem")
    for repeat in $(seq 1 "$repeats"); do
        for pc in $preconditioners; do
            wait_free "$tasks"
            events=$run/$name-$pc-$repeat.events
            status=ok
            # shellcheck disable=SC2086
            "$JACE_BUILDDIR/jace-spawner" submit "$run/base.job" \
                --supernode "$sn" -q --events "$events" $sets \
                --set solver/preconditioner="$pc" >/dev/null 2>&1 \
                || status=failed
            jq -r -s --arg p "$name" --arg pc "$pc" --arg r "$repeat" \
                  --arg status "$status" '
                (map (select (.event == "result")) [0]) as $result
                | [$p + "/" + $pc, $pc, $r, ($result.seconds // -1),
                   ($result.iterations_max // -1), $status] | @tsv' \
                "$events" >>"$run/runs.tsv"
        done
    done
done

echo "# $tasks tasks, $mode, tolerance $tolerance, medians of $repeats"
printf '%-28s %10s %10s %8s\n' problem/preconditioner seconds iterations failed
for problem in "$@"; do
    name=${problem%%:*}
    for pc in $preconditioners; do
        key=$name/$pc
        failed=$(awk -F '\t' -v k="$key" '$1 == k && $6 != "ok"' \
                 "$run/runs.tsv" | grep -c . || true)
        printf '%-28s %10s %10s %8s\n' "$key" \
            "$(median_column "$run/runs.tsv" "$key" 4 6)" \
            "$(median_column "$run/runs.tsv" "$key" 5 6)" "$failed"
    done
done
echo "# every run:"
cat "$run/runs.tsv"
