#!/bin/sh
#  bench_rebalance.sh - a job on a fast and a slow daemon that advertise
#  the same power, with job/rebalance off and auto, side by side
#
#  Usage: bench/bench_rebalance.sh   (settings in the environment)
#    N         side of the poisson3d problem (default 40)
#    SLOW      the slow daemon's --speed (default 0.1)
#    REPEATS   runs of each setting (default 3); medians are printed
#    OUT       folder for runs.tsv and the events (default: a new
#              bench-rebalance.XXXXXX under TMPDIR)
#
#  One super-node and two daemons, both `--power 1`, one at --speed 1 and
#  one at --speed SLOW: the job starts cut half and half, as the powers
#  say, although one node is 1/SLOW times slower (a replacement slower
#  than its advertised power, or a node that slowed down).  The job:
#  poisson3d, 2 tasks, asynchronous, exact inner solves, tolerance 1e-10,
#  checkpoints every second, mapping `simple`.  Settings alternate within
#  each repeat, so load drifts hit them alike.  Per run: the time to the
#  verified answer, the tasks' least and most iterations, and the
#  rebalances with the rows they gave.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
n=${N:-40}
slow=${SLOW:-0.1}
repeats=${REPEATS:-3}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-rebalance.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; wait; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
# shellcheck source=bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"
private_secrets "$run"

#  A free port on loopback: the super-node binds it, the daemons dial it
port=$(python3 -c 'import socket; s = socket.socket (); s.bind (("127.0.0.1", 0)); print (s.getsockname () [1])')
sn=tcp://127.0.0.1:$port
"$JACE_BUILDDIR/jace-supernode" --bind "$sn" --heartbeat 200 \
    >"$run/sn.log" 2>&1 &
pids="$pids $!"
"$JACE_BUILDDIR/jace-daemon" --supernode "$sn" --id fast --power 1 \
    --heartbeat 200 >"$run/fast.log" 2>&1 &
pids="$pids $!"
"$JACE_BUILDDIR/jace-daemon" --supernode "$sn" --id slow --power 1 \
    --speed "$slow" --heartbeat 200 >"$run/slow.log" 2>&1 &
pids="$pids $!"
wait_free 2

printf 'rebalance\trepeat\tanswer_s\titerations\trebalances\tstatus\n' \
    >"$out/runs.tsv"
for repeat in $(seq 1 "$repeats"); do
    for setting in off auto; do
        wait_free 2
        events=$out/$setting-$repeat.events
        status=ok
        "$JACE_BUILDDIR/jace-spawner" submit \
            "$JACE_SRCDIR/examples/poisson3d.job" --supernode "$sn" -q \
            --events "$events" --set job/tasks=2 --set job/mode=async \
            --set problem/n="$n" --set job/tolerance=1e-10 \
            --set solver/inner_tolerance=1e-12 \
            --set checkpoint/every_seconds=1 --set job/mapping=simple \
            --set job/max_seconds=600 --set job/rebalance="$setting" \
            >"$out/$setting-$repeat.out" 2>&1 || status=failed
        jq -r -s --arg setting "$setting" --arg repeat "$repeat" \
              --arg status "$status" '
            (map (select (.event == "result")) [0]) as $result
            | [$setting, $repeat, ($result.time // -1),
               "\($result.iterations_min // "-")..\($result.iterations_max // "-")",
               ([.[] | select (.event == "rebalance_plan")
                     | (.new_rows // [] | map (tostring) | join (":"))]
                | if length == 0 then "none" else join (" ") end),
               $status] | @tsv' "$events" >>"$out/runs.tsv"
        tail -n 1 "$out/runs.tsv"
    done
done

echo "# $out/runs.tsv; medians over the runs that answered:"
for setting in off auto; do
    printf '%-5s %s s\n' "$setting" \
        "$(median_column "$out/runs.tsv" "$setting" 3 6)"
done
echo "# $(getconf _NPROCESSORS_ONLN) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
