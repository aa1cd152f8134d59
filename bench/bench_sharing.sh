#!/bin/sh
#  bench_sharing.sh - two jobs on one shared backbone: does a small job
#  get its share beside a big one?
#
#  Usage: bench/bench_sharing.sh   (settings in the environment)
#    BACKBONE_MBPS  the shared backbone's bandwidth (default 4)
#    BIG_BYTES      the big job's pieces, bytes (default 400000)
#    REPEATS        runs of each case (default 3); medians are printed
#    GRID_ARGS      more arguments for `jace-grid start`, e.g. "--netns"
#                   for the namespace testbed (the kernel's TCP through
#                   tc tbf carries the backbone instead of the emulation)
#    OUT            folder for runs.tsv and the events (default: a new
#                   bench-sharing.XXXXXX under TMPDIR)
#
#  Three clusters of 3 daemons behind one shared backbone (2 ms).  Two
#  exchange jobs of 4 tasks each, so that both must cross the backbone
#  (job/mapping = simple, no spares): "small" runs 20 rounds of 2000-byte
#  pieces, "big" 4 rounds of BIG_BYTES-byte pieces (and checkpoint copies
#  that carry them).  Cases, alternating within each repeat: small alone,
#  big alone, and small submitted once big has completed its first round
#  (on progress, whatever the machine's speed).  The times are the
#  spawner's (submit to verified answer).
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
backbone=${BACKBONE_MBPS:-4}
big_bytes=${BIG_BYTES:-400000}
repeats=${REPEATS:-3}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-sharing.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
big_pid=""
trap '[ -z "$big_pid" ] || kill "$big_pid" 2>/dev/null
      "$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1
      rm -rf "$run"' EXIT
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
private_secrets "$run"

cat >"$out/sharing.platform" <<EOF
platform
    name = "sharing"
    backbone
        latency_us = 2000
        bandwidth_mbps = $backbone
        shared = 1
EOF
for cluster in X Y Z; do
    cat >>"$out/sharing.platform" <<EOF
    cluster
        name = "$cluster"
        nodes = 3
        latency_us = 50
        bandwidth_mbps = 1000
EOF
done

job_file () {       #  job_file ROUNDS BYTES
    cat <<EOF
job
    application = "exchange"
    tasks = 4
    mode = "async"
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 600
    reserve_timeout = 60
    spares = 0
    mapping = "simple"
exchange
    rounds = $1
    bytes = $2
    sizes = "fixed"
    seed = 7
EOF
}
job_file 20 2000 >"$out/small.job"
job_file 4 "$big_bytes" >"$out/big.job"

# shellcheck disable=SC2086  # GRID_ARGS may be several arguments
sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$out/sharing.platform" \
     --run "$run/grid" ${GRID_ARGS:-})

#  submit NAME EVENTS: one job, quiet; its result's seconds on stdout
submit () {
    "$JACE_BUILDDIR/jace-spawner" submit "$out/$1.job" --supernode "$sn" \
        -q --events "$2" >/dev/null 2>"$2.err" || return 1
    grep '"event":"result"' "$2" | tail -n 1 | jq -e .seconds
}

#  record CASE REPEAT SECONDS|"": a line of runs.tsv
record () {
    status=ok
    [ -n "$3" ] || status=fail
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3:-NA}" "$status" >>"$out/runs.tsv"
    echo "bench_sharing: $1 $2: $status ${3:-} s" >&2
}

printf 'case\trepeat\tseconds\tstatus\n' >"$out/runs.tsv"
for repeat in $(seq 1 "$repeats"); do
    wait_free 9
    record small-alone "$repeat" \
        "$(submit small "$out/small-alone.$repeat.events" || true)"
    wait_free 9
    record big-alone "$repeat" \
        "$(submit big "$out/big-alone.$repeat.events" || true)"
    wait_free 9
    events=$out/big-beside.$repeat.events
    rm -f "$events"
    submit big "$events" >"$run/big.seconds" &
    big_pid=$!
    #  Small goes once every task of big has finished a round: big's
    #  pieces and copies are on the backbone then.
    #  (Line by line: the file's last line may be half written.)
    for _ in $(seq 1 6000); do
        started=$(grep '"event":"progress"' "$events" 2>/dev/null |
                  jq -r 'select(.iteration >= 1) | .task' 2>/dev/null |
                  sort -u | wc -l)
        [ "$started" -ge 4 ] && break
        sleep 0.1
    done
    record small-beside-big "$repeat" \
        "$(submit small "$out/small-beside.$repeat.events" || true)"
    wait "$big_pid" || true
    big_pid=""
    record big-beside-small "$repeat" "$(cat "$run/big.seconds")"
done

echo
echo "backbone $backbone Mb/s shared ${GRID_ARGS:-emulated}, big pieces" \
     "$big_bytes bytes;" \
     "median seconds of $repeats run(s) (runs in $out/runs.tsv)"
for case in small-alone big-alone small-beside-big big-beside-small; do
    printf '%-18s %s\n' "$case" \
        "$(median_column "$out/runs.tsv" "$case" 3 4)"
done
if awk -F '\t' '$4 == "fail" { found = 1 } END { exit !found }' \
       "$out/runs.tsv"; then
    echo "some runs failed: their events and errors are in $out" >&2
    exit 1
fi
