#!/bin/sh
#  bench_offsite.sh - what off-site checkpoint copies cost, and what they
#  save when a whole cluster is cut off
#
#  Usage: make bench-offsite [N=60] [TASKS=8] [REPEATS=2] [ITERATIONS=20]
#             [BACKBONE_MBPS=100] [OUT=DIR]
#
#  A three-cluster grid of 4 nodes each in network namespaces (root
#  only), behind a 5 ms, BACKBONE_MBPS (default 100) Mb/s backbone that
#  tc tbf limits.  A multisplitting job (poisson3d, N^3 unknowns, TASKS
#  tasks, mapping simple: the first cluster takes 4 of them, checkpoints
#  every second) runs, in each repeat, with checkpoint/offsite on and off
#  alternated:
#    free  no failure: what sending one copy of each checkpoint across
#          the backbone costs;
#    cut   once every task has done ITERATIONS (default 20) iterations,
#          `jace-grid cut` takes the busiest cluster off the backbone;
#          once its tasks run again elsewhere it is healed.  Time to the
#          answer, and how many tasks went back to their initial state.
#  Each run starts its own grid.  Prints one line per run, then medians.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
N=${N:-60}
TASKS=${TASKS:-8}
REPEATS=${REPEATS:-2}
ITERATIONS=${ITERATIONS:-20}
BACKBONE_MBPS=${BACKBONE_MBPS:-100}
[ "$(id -u)" = 0 ] || { echo "bench_offsite: needs root (--netns)" >&2; exit 1; }

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")}
mkdir -p "$out"
grid="$out/grid"
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$grid" >/dev/null 2>&1' EXIT
export OPENBLAS_NUM_THREADS=1

cat >"$out/three.platform" <<EOF
platform
    name = "offsite"
    backbone
        latency_us = 5000
        bandwidth_mbps = $BACKBONE_MBPS
    cluster
        name = "A"
        nodes = 4
    cluster
        name = "B"
        nodes = 4
    cluster
        name = "C"
        nodes = 4
EOF

#  True once every task reported ITERATIONS iterations (events FILE)
all_past () {
    [ "$(jq -r "select(.event == \"progress\" and .iteration >= $ITERATIONS)
                | .task" "$1" 2>/dev/null | sort -u | wc -l)" -eq "$TASKS" ]
}

#  True once COUNT tasks restored (events FILE)
restored () {
    [ "$(jq -c 'select(.event == "restored")' "$1" 2>/dev/null | wc -l)" \
      -ge "$2" ]
}

wait_until () {     #  wait_until SECONDS COMMAND...
    limit=$1; shift
    for _ in $(seq 1 $((limit * 10))); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

#  One run: MODE (free or cut), OFFSITE (on or off), NAME.  Prints
#  "seconds from_initial".
run_one () {
    mode=$1 offsite=$2 name=$3
    "$JACE_BUILDDIR/jace-grid" stop --run "$grid" >/dev/null 2>&1 || true
    sn=$("$JACE_BUILDDIR/jace-grid" start --netns --platform \
         "$out/three.platform" --run "$grid" --daemon-arg=--heartbeat \
         --daemon-arg=200)
    events="$out/$name.events"
    "$JACE_BUILDDIR/jace-spawner" submit "$JACE_SRCDIR/examples/poisson3d.job" \
        --supernode "$sn" -q --events "$events" --set job/tasks="$TASKS" \
        --set problem/n="$N" --set job/mapping=simple --set job/spares=0 \
        --set job/heartbeat_timeout=2000 --set job/max_seconds=600 \
        --set checkpoint/every_seconds=1 --set checkpoint/offsite="$offsite" \
        >/dev/null 2>"$out/$name.err" &
    job=$!
    if [ "$mode" = cut ]; then
        wait_until 120 all_past "$events"
        cluster=$(jq -r 'select(.event == "assign") | .cluster' "$events" |
                  sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
        lost=$(jq -c --arg c "$cluster" 'select(.event == "assign"
               and .cluster == $c)' "$events" | wc -l)
        "$JACE_BUILDDIR/jace-grid" cut --run "$grid" --cluster "$cluster"
        wait_until 120 restored "$events" "$lost"
        "$JACE_BUILDDIR/jace-grid" heal --run "$grid" --cluster "$cluster"
    fi
    if ! wait "$job"; then
        echo "bench_offsite: run $name failed:" >&2
        tail -n 3 "$out/$name.err" >&2
        exit 1
    fi
    tail -n 1 "$events" | jq -r 'select(.event == "result")
        | "\(.seconds) \(.from_initial)"'
}

echo "poisson3d n=$N, $TASKS tasks, 3 clusters of 4, backbone 5 ms and" \
     "$BACKBONE_MBPS Mb/s (tbf), checkpoints every 1 s; $REPEATS repeats"
for i in $(seq 1 "$REPEATS"); do
    for mode in free cut; do
        for offsite in on off; do
            result=$(run_one "$mode" "$offsite" "$mode-$offsite-$i")
            echo "$mode $offsite $result" >>"$out/results"
            echo "run $i: $mode, offsite $offsite: $result (seconds, tasks" \
                 "from their initial state)"
        done
    done
done
for mode in free cut; do
    for offsite in on off; do
        awk -v m="$mode" -v o="$offsite" '$1 == m && $2 == o { print $3 }' \
            "$out/results" | sort -g |
            awk -v m="$mode" -v o="$offsite" '{ v[NR] = $1 } END {
                printf "median %s, offsite %s: %.2f s\n", m, o,
                       v[int((NR + 1) / 2)] }'
    done
done
