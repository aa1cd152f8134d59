#!/bin/sh
#  bench_faults.sh - what failures and checkpoints cost, measured side by
#  side on a virtual grid
#
#  Usage: bench/bench_faults.sh [PLATFORM] [JOBFILE] [REPEATS] [SET...]
#
#  Runs the job REPEATS times in each of three configurations, each run on
#  a freshly started grid (a faulty run uses up daemons), interleaved so
#  that machine load drifts affect all alike:
#    off     checkpoints off (checkpoint/copies = 0), no failure
#    on      checkpoints at the job's frequency (default every 2 s)
#    faults  checkpoints on, and the paper's schedule: 2 daemons crashed
#            every 20 s (faults/every, faults/count; override with SET)
#  Prints the median time of each, the checkpoint overhead (on / off), the
#  failure overhead (faults / on), and the recovery time split of the last
#  faulty run (from its report).  Extra arguments are --set overrides for
#  every run, e.g. job/tasks=16 problem/n=60.  FAULTS=0 in the environment
#  skips the faulty runs (to measure the checkpoint overhead alone).
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
platform=${1:-$JACE_SRCDIR/examples/platforms/volatile.platform}
job=${2:-$JACE_SRCDIR/examples/poisson3d.job}
repeats=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
sets=""
for item in "$@"; do sets="$sets --set $item"; done

run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1

#  One job on a fresh grid; prints its wall time in seconds, or fails.
timed () {
    name=$1; shift
    "$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1 || true
    sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$platform" \
         --run "$run/grid" --daemon-arg=--heartbeat --daemon-arg=200)
    # shellcheck disable=SC2086
    if ! "$JACE_BUILDDIR/jace-spawner" submit "$job" --supernode "$sn" -q \
        --events "$run/$name.events" $sets "$@" >/dev/null 2>"$run/$name.err"
    then
        echo "bench_faults: run $name failed:" >&2
        tail -n 3 "$run/$name.err" >&2
        exit 1
    fi
    tail -n 1 "$run/$name.events" | jq -e 'select(.event == "result") | .seconds'
}

median () { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$run/off"; : >"$run/on"; : >"$run/faults"
for i in $(seq 1 "$repeats"); do
    timed "off$i" --set checkpoint/copies=0 >>"$run/off"
    timed "on$i" >>"$run/on"
    [ "${FAULTS:-1}" = 0 ] && continue
    timed "faults$i" --set faults/every=20 --set faults/count=2 \
        --report "$run/faults.report" >>"$run/faults"
done
if [ "${FAULTS:-1}" = 0 ]; then
    off=$(median <"$run/off"); on=$(median <"$run/on")
    echo "seconds, each run: off $(tr '\n' ' ' <"$run/off")| on $(tr '\n' ' ' <"$run/on")"
    echo "median seconds: checkpoints off $off, on $on"
    awk -v a="$on" -v b="$off" 'BEGIN { printf "checkpoint overhead (on / off): %.3f\n", a / b }'
    exit 0
fi
off=$(median <"$run/off"); on=$(median <"$run/on"); faults=$(median <"$run/faults")
crashes=$(tail -n 1 "$run/faults$repeats.events" | jq .crashes)
echo "platform $(basename "$platform"), job $(basename "$job")$sets, $repeats runs each"
echo "seconds, each run: off $(tr '\n' ' ' <"$run/off")| on $(tr '\n' ' ' <"$run/on")| faults $(tr '\n' ' ' <"$run/faults")"
echo "median seconds: checkpoints off $off, on $on, on with 2 crashes every 20 s $faults ($crashes crashes in the last run)"
awk -v a="$on" -v b="$off" 'BEGIN { printf "checkpoint overhead (on / off): %.3f\n", a / b }'
awk -v a="$faults" -v b="$on" 'BEGIN { printf "failure overhead (faults / on): %.3f\n", a / b }'
grep -E '^(time lost|mean split)' "$run/faults.report" || true
