#!/bin/sh
#  bench_solver.sh - asynchronous against synchronous multisplitting, and
#  against one node, on a virtual grid, measured side by side
#
#  Usage: bench/bench_solver.sh [PLATFORM] [JOBFILE] [REPEATS] [SET...]
#
#  Starts the platform's virtual grid (emulated speeds and links), then
#  runs the job REPEATS times in each configuration, interleaved so that
#  machine load drifts affect all alike: async on every daemon, sync on
#  every daemon, and the same problem on one task (a single node's sparse
#  solver, what a user would run without Jace).  Prints the median time of
#  each and the ratios.  Extra arguments are --set overrides.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$JACE_SRCDIR/bench/bench_lib.sh"
platform=${1:-$JACE_SRCDIR/examples/platforms/two-clusters.platform}
job=${2:-$JACE_SRCDIR/examples/poisson3d.job}
repeats=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
sets=""
for item in "$@"; do sets="$sets --set $item"; done

run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$platform" --run "$run/grid")
daemons=$("$JACE_BUILDDIR/jace-spawner" nodes --supernode "$sn" --json | jq length)

#  One job on an idle grid; prints its time to the verified answer in
#  seconds (the result event's), or fails.
timed () {
    wait_free "$daemons"
    name=$1; shift
    # shellcheck disable=SC2086
    "$JACE_BUILDDIR/jace-spawner" submit "$job" --supernode "$sn" -q \
        --events "$run/$name.events" $sets "$@" >/dev/null
    tail -n 1 "$run/$name.events" | jq -e 'select(.event == "result") | .seconds'
}

median () { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$run/async"; : >"$run/sync"; : >"$run/single"
for i in $(seq 1 "$repeats"); do
    timed "async$i" --set job/tasks="$daemons" --set job/mode=async >>"$run/async"
    timed "sync$i" --set job/tasks="$daemons" --set job/mode=sync >>"$run/sync"
    timed "single$i" --set job/tasks=1 >>"$run/single"
done
async=$(median <"$run/async"); sync=$(median <"$run/sync")
single=$(median <"$run/single")
echo "platform $(basename "$platform"), job $(basename "$job"), $daemons daemons,$sets"
echo "median of $repeats: async $async s, sync $sync s, one task $single s"
echo "runs: async $(tr '\n' ' ' <"$run/async")| sync $(tr '\n' ' ' <"$run/sync")| one task $(tr '\n' ' ' <"$run/single")"
awk -v a="$async" -v s="$sync" -v o="$single" 'BEGIN {
    printf "async / sync = %.2f, sync / async = %.2f, one task / async = %.2f\n",
           a / s, s / a, o / a }'
