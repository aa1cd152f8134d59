#!/bin/sh
#  bench_drain.sh - a cluster drained mid-job by each drain/schedule:
#  one task at a time, all at once (never two neighbours together), OGGP
#  steps, and auto (OGGP only where eta_o predicts a gain)
#
#  Usage: bench/bench_drain.sh   (settings in the environment)
#    N          side of the poisson3d problem (default 48)
#    TASKS      tasks of the job (default 8)
#    REPEATS    runs of each schedule (default 3); medians are printed
#    SCHEDULES  drain/schedule values (default "one all oggp auto")
#    PLATFORM   platform file (default: the one below, written to OUT)
#    GRID_ARGS  extra arguments of jace-grid start (e.g. --netns)
#    OUT        folder for runs.tsv and the events (default: a new
#               bench-drain.XXXXXX under TMPDIR)
#
#  The default platform: clusters A, B and C of 4 nodes behind a shared
#  backbone of 100 Mb/s and 5 ms.  Each run submits the job, waits until
#  every task has iterated 3 times (on progress, whatever the machine's
#  speed), drains the cluster running most tasks, and measures the drain
#  (drain to drained, the spawner's clock) and the time to the verified
#  answer.  Schedules alternate within each repeat, so load drifts hit
#  them alike.  A run whose job converged before its drain ended is
#  marked "unfinished": make the job longer (N) rather than trust it.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
n=${N:-48}
tasks=${TASKS:-8}
repeats=${REPEATS:-3}
schedules=${SCHEDULES:-"one all oggp auto"}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-drain.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
private_secrets "$run"

platform=${PLATFORM:-$out/three.platform}
if [ -z "${PLATFORM:-}" ]; then
    cat >"$platform" <<PLATFORM_EOF
platform
    name = "three"
    backbone
        latency_us = 5000
        bandwidth_mbps = 100
        shared = 1
    cluster
        name = "A"
        nodes = 4
    cluster
        name = "B"
        nodes = 4
        supernodes = 0
    cluster
        name = "C"
        nodes = 4
        supernodes = 0
PLATFORM_EOF
fi
nodes=$(awk '$1 == "nodes" { n += $3 } END { print n }' "$platform")

"$JACE_BUILDDIR/jace-grid" start --platform "$platform" --run "$run/grid" \
    ${GRID_ARGS:-} >"$run/endpoint"
sn=$(cat "$run/endpoint")

#  all_iterate EVENTS: every task reported iteration 3 or more
all_iterate () {
    [ "$(jq -r 'select(.event == "progress" and .iteration >= 3) | .task' \
         "$1" 2>/dev/null | sort -u | wc -l)" -eq "$tasks" ]
}

printf 'schedule\trepeat\tused\tsteps\tmoved\tdrain_s\tanswer_s\tstatus\n' \
    >"$out/runs.tsv"
for repeat in $(seq 1 "$repeats"); do
    for schedule in $schedules; do
        wait_free "$nodes"
        events=$out/$schedule-$repeat.events
        rm -f "$events"
        "$JACE_BUILDDIR/jace-spawner" submit \
            "$JACE_SRCDIR/examples/poisson3d.job" --supernode "$sn" -q \
            --events "$events" --set job/tasks="$tasks" \
            --set problem/n="$n" --set job/tolerance=1e-10 \
            --set solver/inner_tolerance=1e-12 \
            --set checkpoint/every_seconds=1 \
            --set drain/schedule="$schedule" \
            >"$out/$schedule-$repeat.out" 2>&1 &
        job=$!
        for _ in $(seq 1 1200); do
            all_iterate "$events" && break
            sleep 0.05
        done
        id=$(jq -r 'select(.event == "start") | .job' "$events")
        busiest=$(jq -r 'select(.event == "assign") | .cluster' "$events" |
                  sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
        "$JACE_BUILDDIR/jace-spawner" drain "$id" --cluster "$busiest" \
            --supernode "$sn" >"$out/$schedule-$repeat.drain" 2>&1 || true
        status=ok
        wait "$job" || status=failed
        grep -q '"event":"drained"' "$events" || status=unfinished
        jq -r -s --arg schedule "$schedule" --arg repeat "$repeat" \
              --arg status "$status" '
            (map (select (.event == "drain_plan")) [0]) as $plan
            | (map (select (.event == "drained")) [0]) as $done
            | [$schedule, $repeat, ($plan.used // "-"),
               ($plan.steps // -1), ($done.tasks // -1),
               ($done.seconds // -1),
               (map (select (.event == "result")) [0].time // -1),
               $status] | @tsv' "$events" >>"$out/runs.tsv"
        tail -n 1 "$out/runs.tsv"
    done
done

echo "# $out/runs.tsv; medians over the runs that drained and answered:"
printf '%-10s %6s %6s %10s %10s\n' schedule used steps drain_s answer_s
for schedule in $schedules; do
    used=$(awk -F '\t' -v s="$schedule" '$1 == s { print $3 }' \
           "$out/runs.tsv" | sort | uniq -c | sort -rn |
           awk 'NR == 1 { print $2 }')
    printf '%-10s %6s %6s %10s %10s\n' "$schedule" "$used" \
           "$(median_column "$out/runs.tsv" "$schedule" 4 8)" \
           "$(median_column "$out/runs.tsv" "$schedule" 6 8)" \
           "$(median_column "$out/runs.tsv" "$schedule" 7 8)"
done
