#!/bin/sh
#  bench_control.sh - what the control plane costs, and whether it holds
#
#  Usage: bench/bench_control.sh scale|load|recovery [REPEATS]
#
#  scale     One super-node and 128 daemons on this machine.  For 16, 32,
#            64 and 128 tasks: a 3D Poisson job that cannot converge runs
#            for 10 s (job/max_seconds); prints the set-up time (submit
#            to START sent to every accepted task, the "start" event) and
#            the spawner's CPU time per task per second of the job
#            (utime + stime of the spawner process from /proc, divided by
#            tasks and by the job's seconds), and what mapping adds to
#            the start (the plan event: the mapping, the task graph, the
#            round trip of the grid's listing, ms).
#  load      Two CPU-bound processes beside 32 daemons; REPEATS (default
#            20) runs of a 32-task job with no crash injected; prints how
#            many daemons were declared dead in each run (goal: 0).
#  recovery  Two CPU hogs, 16 daemons; a 12-task job loses one daemon
#            (SIGKILL by the test, when a task has passed iteration 20);
#            REPEATS (default 5) runs of each detection, interleaved:
#            watch (the default: links watched, adaptive detector),
#            adaptive and fixed (job/watch_links = off, job/detector =
#            adaptive or fixed: silence alone); prints the median
#            detection delay (crash to "dead" event) and recovery (crash
#            to "restored") of each.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
mode=${1:-scale}
repeats=${2:-}
BIN=$JACE_BUILDDIR
JOB=$JACE_SRCDIR/examples/poisson3d.job
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
pids=""
cleanup () {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$run"
}
trap cleanup EXIT
export OPENBLAS_NUM_THREADS=1
. "$JACE_SRCDIR/bench/bench_lib.sh"

start_grid () {     #  start_grid DAEMONS: sets sn
    "$BIN/jace-supernode" --bind 'tcp://127.0.0.1:*' \
        --endpoint-file "$run/sn.endpoint" 2>"$run/sn.log" &
    pids="$pids $!"
    for _ in $(seq 1 100); do [ -s "$run/sn.endpoint" ] && break; sleep 0.1; done
    sn=$(cat "$run/sn.endpoint")
    for d in $(seq 1 "$1"); do
        "$BIN/jace-daemon" --id "d$d" --power 1 --supernode "$sn" \
            2>"$run/d$d.log" &
        pids="$pids $!"
        eval "PID_d$d=$!"
    done
    wait_free "$1"
}

start_hogs () {
    for _ in 1 2; do
        sh -c 'while :; do :; done' &
        pids="$pids $!"
    done
}

median () { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

#  CPU seconds (utime + stime) of a process, read just before it exits.
cpu_seconds () {    #  cpu_seconds PID
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' \
        "/proc/$1/stat"
}

scale () {
    start_grid 128
    printf "%6s %10s %10s %16s %9s %9s %11s\n" TASKS SETUP_S JOB_S \
        CPU_MS/TASK/S PLAN_MS GRAPH_MS LISTING_MS
    for tasks in 16 32 64 128; do
        wait_free 128
        "$BIN/jace-spawner" submit "$JOB" --supernode "$sn" -q \
            --set job/tasks=$tasks --set problem/n=48 \
            --set job/tolerance=1e-300 --set job/max_seconds=10 \
            --events "$run/s$tasks.events" >/dev/null 2>&1 &
        spawner=$!
        #  The spawner's CPU, read while it is still alive at the end.
        cpu=0
        while kill -0 "$spawner" 2>/dev/null; do
            now=$(cpu_seconds "$spawner" 2>/dev/null) && cpu=$now
            sleep 0.2
        done
        wait "$spawner" || true
        setup=$(jq -r 'select(.event == "start") | .setup_seconds' \
                "$run/s$tasks.events")
        seconds=$(jq -r 'select(.event == "failure") | .time' \
                  "$run/s$tasks.events")
        #  What mapping adds to the start (the plan event): the mapping
        #  itself, the task graph, the round trip of the grid's listing.
        plan=$(jq -r 'select(.event == "plan")
                      | "\(.plan_ms) \(.graph_ms) \(.listing_ms)"' \
               "$run/s$tasks.events" | head -n 1)
        awk -v t="$tasks" -v s="$setup" -v j="$seconds" -v c="$cpu" \
            -v p="$plan" \
            'BEGIN { split (p, f, " ");
                     printf "%6d %10.3f %10.2f %16.4f %9.3f %9.3f %11.3f\n",
                     t, s, j, c * 1000 / t / j, f[1], f[2], f[3] }'
    done
}

load () {
    start_hogs
    start_grid 32
    total=0
    for i in $(seq 1 "${repeats:-20}"); do
        wait_free 32
        "$BIN/jace-spawner" submit "$JOB" --supernode "$sn" -q \
            --set job/tasks=32 --set problem/n=40 --set job/tolerance=1e-8 \
            --events "$run/l$i.events" >/dev/null 2>"$run/l$i.err" || true
        dead=$(grep -c '"event":"dead"' "$run/l$i.events" || true)
        outcome=$(tail -n 1 "$run/l$i.events" | jq -r .event)
        seconds=$(tail -n 1 "$run/l$i.events" | jq -r .time)
        echo "run $i: $outcome in $seconds s, $dead daemons declared dead"
        total=$((total + dead))
    done
    echo "declared dead in ${repeats:-20} runs: $total"
}

#  One job that loses one daemon when a task has passed iteration 20.
recover_once () {   #  recover_once NAME watch|adaptive|fixed
    wait_free 16
    case $2 in
        watch) detection="--set job/detector=adaptive" ;;
        *) detection="--set job/detector=$2 --set job/watch_links=off" ;;
    esac
    # shellcheck disable=SC2086
    "$BIN/jace-spawner" submit "$JOB" --supernode "$sn" -q \
        --set job/tasks=12 --set problem/n=40 --set job/tolerance=1e-10 \
        --set solver/inner_tolerance=1e-12 $detection \
        --events "$run/$1.events" >/dev/null 2>"$run/$1.err" &
    spawner=$!
    for _ in $(seq 1 600); do
        jq -s -e 'map(select(.event == "progress" and .iteration >= 20))
                  | length > 0' "$run/$1.events" >/dev/null 2>&1 && break
        sleep 0.1
    done
    victim=$("$BIN/jace-spawner" nodes --supernode "$sn" --json \
             | jq -r '[.[] | select(.state == "working")][0].id')
    eval "pid=\$PID_$victim"
    crashed=$(date +%s.%N)
    kill -KILL "$pid"
    wait "$spawner" || true
    submitted=$(jq -r 'select(.event == "submit") | .wall' "$run/$1.events")
    jq -r --arg v "$victim" --arg c "$crashed" --arg s "$submitted" '
        select(.event == "dead" and .daemon == $v)
        | (.time - (($c | tonumber) - ($s | tonumber)))' \
        "$run/$1.events" | head -n 1 >>"$run/$2.detect"
    jq -r --arg c "$crashed" --arg s "$submitted" '
        select(.event == "restored")
        | (.time - (($c | tonumber) - ($s | tonumber)))' \
        "$run/$1.events" | head -n 1 >>"$run/$2.recover"
    #  The killed daemon comes back under its name, as a node would.
    "$BIN/jace-daemon" --id "$victim" --power 1 --supernode "$sn" \
        2>>"$run/$victim.log" &
    pids="$pids $!"
    eval "PID_$victim=$!"
}

recovery () {
    start_hogs
    start_grid 16
    for detector in watch adaptive fixed; do
        : >"$run/$detector.detect"; : >"$run/$detector.recover"
    done
    for i in $(seq 1 "${repeats:-5}"); do
        recover_once "w$i" watch
        recover_once "a$i" adaptive
        recover_once "f$i" fixed
    done
    for detector in watch adaptive fixed; do
        echo "$detector: detection $(median <"$run/$detector.detect") s," \
             "recovery $(median <"$run/$detector.recover") s" \
             "(medians of $(wc -l <"$run/$detector.detect") runs;" \
             "detections: $(tr '\n' ' ' <"$run/$detector.detect"))"
    done
}

case "$mode" in
    scale|load|recovery) "$mode" ;;
    *) echo "usage: $0 scale|load|recovery [REPEATS]" >&2; exit 2 ;;
esac
