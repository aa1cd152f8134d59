#!/bin/sh
#  bench_scatter.sh - a file matrix handed out by the balanced scatter,
#  against uniform and power-proportional shares, and the send order
#  (paper 004: decreasing bandwidth against increasing)
#
#  Usage: bench/bench_scatter.sh   (settings in the environment)
#    N          side of the 2D grid of the matrix jace-mmgen writes
#               (default 700: 490,000 rows, 42 MB of task data)
#    CONVECTION  its convection C (default 20): convection2d, 24 on the
#               diagonal, so block Jacobi converges in some 800
#               asynchronous iterations (2D Poisson, C = 0, needs many
#               thousands: a run took over 15 minutes)
#    REPEATS    runs of each variant (default 3); medians are printed
#    PLATFORM   platform file (default: the one below, written to OUT)
#    TOLERANCE  job/tolerance (default 1e-6)
#    INNER      solver/inner (default krylov: a banded LU of the fast
#               nodes' blocks needs more than a daemon's 1 GiB limit at
#               N = 700 under the balanced split)
#    GRID_ARGS  extra arguments of jace-grid start (e.g. --netns)
#    OUT        folder for runs.tsv and the events (default: a new
#               bench-scatter.XXXXXX under TMPDIR)
#
#  The default platform: cluster A (4 speed-1 nodes) holds the data
#  (scatter/root = A); cluster B (4 nodes at speed 0.25) sits behind a
#  20 Mb/s, 10 ms backbone: its slow nodes are also behind slow links.
#  Variants, interleaved within each repeat so load drifts hit them
#  alike: balanced (decreasing order, B's data through a relay in B),
#  direct (the same, each of B's daemons served over the backbone itself:
#  scatter/relay = off), balanced with increasing order, and the
#  baselines power and uniform, served directly as MPI_Scatter(v) would.  For each run: the data phase (first send to the last
#  daemon's data in, event scatter_data), the time until every task has
#  done one iteration (from the scatter event to the last task's first
#  progress above 0), and the time to the verified answer.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
n=${N:-700}
repeats=${REPEATS:-3}
tolerance=${TOLERANCE:-1e-6}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-scatter.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
private_secrets "$run"

platform=${PLATFORM:-$out/far-slow.platform}
if [ -z "${PLATFORM:-}" ]; then
    cat >"$platform" <<EOF
platform
    name = "far-slow"
    backbone
        latency_us = 10000
        bandwidth_mbps = 20
        shared = 1
    cluster
        name = "A"
        nodes = 4
    cluster
        name = "B"
        nodes = 4
        speed = 0.25
        supernodes = 0
EOF
fi
convection=${CONVECTION:-20}
matrix=$out/convection2d-$n-$convection.mtx
[ -f "$matrix" ] || "$JACE_BUILDDIR/jace-mmgen" --convection "$convection" \
    convection2d "$n" "$matrix" \
    >/dev/null
cat >"$out/scatter.job" <<EOF
job
    application = "multisplit"
    tasks = 8
    tolerance = $tolerance
    max_seconds = 900
problem
    kind = "matrix"
    matrix = "$matrix"
solver
    inner = "${INNER:-krylov}"
    preconditioner = "ilu0"
scatter
    root = "A"
EOF

#  name  settings
variants="balanced scatter/distribution=balanced
direct scatter/relay=off
increasing scatter/order=increasing
power scatter/distribution=power scatter/relay=off
uniform scatter/distribution=uniform scatter/relay=off"

printf 'variant\trepeat\tdata_s\tfirst_iteration_s\tanswer_s\tstatus\n' \
    >"$out/runs.tsv"
"$JACE_BUILDDIR/jace-grid" start --platform "$platform" --run "$run/grid" \
    ${GRID_ARGS:-} >"$run/endpoint"
sn=$(cat "$run/endpoint")
for repeat in $(seq 1 "$repeats"); do
    echo "$variants" | while read -r name settings; do
        events=$out/$name-$repeat.events
        status=ok
        set --
        for setting in $settings; do set -- "$@" --set "$setting"; done
        "$JACE_BUILDDIR/jace-spawner" submit "$out/scatter.job" \
            --supernode "$sn" -q --events "$events" "$@" \
            >"$out/$name-$repeat.out" 2>&1 || status=failed
        jq -r -s --arg name "$name" --arg repeat "$repeat" \
              --arg status "$status" '
            (map (select (.event == "scatter")) [0].time) as $t0
            | (map (select (.event == "scatter_data")) [0].measured_seconds
               // -1) as $data
            | ([map (select (.event == "progress" and .iteration > 0))
                | group_by (.task) [] | map (.time) | min] | max) as $last
            | (if $last then ($last - $t0) * 1000 | round / 1000
               else -1 end) as $first
            | (map (select (.event == "result")) [0].time // -1) as $answer
            | [$name, $repeat, $data, $first, $answer, $status] | @tsv' \
            "$events" >>"$out/runs.tsv"
    done
done

echo "# $(grep -c . "$out/runs.tsv") lines in $out/runs.tsv; medians:"
printf '%-12s %10s %18s %10s\n' variant data_s first_iteration_s answer_s
for name in balanced direct increasing power uniform; do
    printf '%-12s %10s %18s %10s\n' "$name" \
           "$(median_column "$out/runs.tsv" "$name" 3 6)" \
           "$(median_column "$out/runs.tsv" "$name" 4 6)" \
           "$(median_column "$out/runs.tsv" "$name" 5 6)"
done
