#!/bin/sh
#  bench_collectives.sh - LG against the direct all-to-all over Jace's
#  transport, side by side, on two clusters behind a slow backbone
#
#  Usage: bench/bench_collectives.sh   (settings in the environment)
#    SHAPES      two-cluster shapes n1:n2 (default "4:8 3:7")
#    SIZES       bytes of each piece (default "1024 4096 16384 65536")
#    ALGORITHMS  exchange/algorithm values (default "lg direct flat"); the
#                first is the one the others are compared with
#    ROUNDS      timed exchanges per job (default 8, after 1 warm-up)
#    REPEATS     jobs per cell (default 3); the table shows medians
#    LATENCY_US  backbone latency (default 20000)
#    BANDWIDTH_MBPS  backbone bandwidth (default 100)
#    SHARED      1: one backbone all transfers share (default), 0: a
#                backbone per flow
#    GRID_ARGS   more arguments for `jace-grid start`, e.g. "--netns" to
#                run on the netns testbed instead of the emulated links
#    OUT         folder for runs.tsv and the failures' logs (default: a
#                new bench-collectives.XXXXXX under TMPDIR)
#
#  Algorithms (docs/PLANNING.md, LG section): lg is LG between the
#  clusters (a local phase, then ceil(n2/n1) backbone steps that each
#  carry packed pieces, steps in order); direct is the planning
#  library's direct plan (N - 1 steps, task i sending to i + s in step
#  s, steps in order: the pairwise exchange MPI uses for large messages);
#  flat sends every piece at once, straight to its destination (OpenMPI's
#  basic linear alltoall).
#
#  For each shape one grid (cluster A of n1 daemons, B of n2; 50 us and
#  1000 Mb/s within a cluster) runs every cell; each cell is REPEATS jobs
#  of the exchange application: ROUNDS + 1 alltoallv calls of fixed-size
#  pieces, back to back, verified (every piece once, right) by the
#  spawner.  A job's time per exchange is the latest end minus the
#  earliest begin of its timed calls over all tasks (one clock: the grid
#  runs on this machine), divided by ROUNDS.  The loops nest repeat,
#  shape, size, algorithm innermost, so load drifts hit every algorithm
#  alike.
#
#  Prints, per shape, milliseconds per exchange for each algorithm and
#  each one's ratio to the first; writes OUT/runs.tsv: shape, bytes,
#  algorithm, repeat, ms per exchange, status.  Exits 1 when a job failed.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
shapes=${SHAPES:-"4:8 3:7"}
sizes=${SIZES:-"1024 4096 16384 65536"}
algorithms=${ALGORITHMS:-"lg direct flat"}
rounds=${ROUNDS:-8}
repeats=${REPEATS:-3}
latency=${LATENCY_US:-20000}
bandwidth=${BANDWIDTH_MBPS:-100}
shared=${SHARED:-1}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-collectives.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
export OPENBLAS_NUM_THREADS=1
trap 'for g in "$run"/grid-*; do "$JACE_BUILDDIR/jace-grid" stop --run "$g" >/dev/null 2>&1; done; rm -rf "$run"' EXIT
# shellcheck source=bench/bench_lib.sh
. "$JACE_SRCDIR/bench/bench_lib.sh"
private_secrets "$run"

platform () {       #  platform N1 N2
    cat <<EOF
platform
    name = "lg-$1-$2"
    backbone
        latency_us = $latency
        bandwidth_mbps = $bandwidth
        shared = $shared
    cluster
        name = "A"
        nodes = $1
        latency_us = 50
        bandwidth_mbps = 1000
        supernodes = 1
    cluster
        name = "B"
        nodes = $2
        latency_us = 50
        bandwidth_mbps = 1000
        supernodes = 0
EOF
}

cat >"$run/exchange.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    reserve_timeout = 30
    heartbeat_timeout = 5000
exchange
    sizes = "fixed"
    warmup = 1
checkpoint
    copies = 0
EOF

#  Milliseconds per timed exchange, from a job's verified answer (Matrix
#  Market: the header, the size line, then the values, one row of 9 per
#  task; fields 8 and 9 are the begin and end seconds).
per_exchange () {   #  per_exchange FILE
    awk -v rounds="$rounds" '
        /^%/ { next }
        !sized { sized = 1; next }
        { field = n % 9; n++
          if (field == 7 && (begin == "" || $1 < begin)) begin = $1
          if (field == 8 && $1 > end) end = $1 }
        END { printf "%.1f\n", (end - begin) * 1000 / rounds }' "$1"
}

#  One job: appends a line to runs.tsv.  Arguments: shape bytes algorithm
#  repeat n1 n2.
timed () {
    shape=$1 bytes=$2 algorithm=$3 repeat=$4 n1=$5 n2=$6
    tag="$shape.$bytes.$algorithm.$repeat"
    status=ok ms=NA
    wait_free $((n1 + n2))
    timeout 600 "$JACE_BUILDDIR/jace-spawner" submit "$run/exchange.job" \
        --supernode "$sn" -q --out "$run/answer.mtx" \
        --set job/tasks=$((n1 + n2)) --set exchange/rounds=$((rounds + 1)) \
        --set exchange/bytes="$bytes" --set exchange/algorithm="$algorithm" \
        >/dev/null 2>"$out/$tag.err" || status=fail
    if [ $status = ok ]; then
        ms=$(per_exchange "$run/answer.mtx")
        rm -f "$out/$tag.err"
    else
        echo "bench_collectives: $tag failed (error tail in $out/$tag.err):" >&2
        grep -v 'secret in' "$out/$tag.err" | tail -n 3 >&2 || true
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$shape" "$bytes" "$algorithm" \
        "$repeat" "$ms" "$status" >>"$out/runs.tsv"
    echo "bench_collectives: $tag: $status $ms ms" >&2
}

: >"$out/runs.tsv"
for shape in $shapes; do
    n1=${shape%:*} n2=${shape#*:}
    platform "$n1" "$n2" >"$run/$shape.platform"
    # shellcheck disable=SC2086
    "$JACE_BUILDDIR/jace-grid" start --platform "$run/$shape.platform" \
        --run "$run/grid-$shape" ${GRID_ARGS:-} >"$run/$shape.sn" \
        2>"$out/grid-$shape.err" ||
        { echo "bench_collectives: grid $shape did not start" >&2; exit 1; }
done
for repeat in $(seq 1 "$repeats"); do
    for shape in $shapes; do
        n1=${shape%:*} n2=${shape#*:}
        sn=$(cat "$run/$shape.sn")
        for bytes in $sizes; do
            for algorithm in $algorithms; do
                timed "$shape" "$bytes" "$algorithm" "$repeat" "$n1" "$n2"
            done
        done
    done
done

#  The table: medians per cell, and each algorithm's ratio to the first.
reference=$(echo $algorithms | awk '{ print $1 }')
echo "LG against the direct all-to-all: ms per exchange (median of" \
     "$repeats), backbone ${latency} us, ${bandwidth} Mb/s," \
     "shared=$shared, $rounds exchanges per job"
for shape in $shapes; do
    printf '\n%s (n1 = %s, n2 = %s)\n%8s' "$shape" "${shape%:*}" \
        "${shape#*:}" bytes
    for algorithm in $algorithms; do printf '%10s' "$algorithm"; done
    for algorithm in $algorithms; do
        [ "$algorithm" = "$reference" ] ||
            printf '%12s' "$algorithm/$reference"
    done
    printf '\n'
    for bytes in $sizes; do
        awk -F '\t' -v shape="$shape" -v bytes="$bytes" \
            -v algorithms="$algorithms" '
            $1 == shape && $2 == bytes && $6 == "ok" {
                times [$3] = times [$3] " " $5 }
            function median (list,    values, count, i, j, swap) {
                count = split (list, values, " ")
                if (count == 0) return -1
                for (i = 1; i <= count; i++)
                    for (j = i + 1; j <= count; j++)
                        if (values [j] + 0 < values [i] + 0) {
                            swap = values [i]; values [i] = values [j]
                            values [j] = swap }
                return count % 2 ? values [(count + 1) / 2] \
                    : (values [count / 2] + values [count / 2 + 1]) / 2
            }
            END {
                count = split (algorithms, names, " ")
                printf "%8s", bytes
                for (i = 1; i <= count; i++) {
                    m [i] = median (times [names [i]])
                    if (m [i] < 0) printf "%10s", "fail"
                    else printf "%10.1f", m [i]
                }
                for (i = 2; i <= count; i++)
                    if (m [1] > 0 && m [i] > 0)
                        printf "%11.2fx", m [i] / m [1]
                    else printf "%12s", "-"
                printf "\n"
            }' "$out/runs.tsv"
    done
done
echo
echo "runs: $out/runs.tsv"
! grep -q 'fail$' "$out/runs.tsv"
