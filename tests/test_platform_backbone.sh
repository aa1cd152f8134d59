#!/bin/sh
#  test_platform_backbone - a virtual grid's shared backbone is shared by
#  all its daemons
#
#  Four clusters of one daemon each, joined by a slow backbone (0.1 Mb/s:
#  a 448-byte vector takes 35.84 ms on it); a job of four tasks, so every
#  vector crosses the backbone, six flows at once.  Every daemon logs the
#  schedule its shaper computed (-v), on the clock all processes share.
#  With `shared = 1` the backbone carries one transfer at a time, each at
#  its full bandwidth, so a vector waits for the others: they take about
#  six transfers, not one, and the backbone is never asked for more than
#  its bandwidth.  The same grid with `shared = 0` gives each flow a
#  backbone of its own, as before.  Only ratios of the emulated schedule
#  are checked, never how fast this machine runs the job.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 12

#  The platform, with the backbone shared or not
platform () {       #  platform SHARED
    cat <<EOF
platform
    name = "backbone"
    backbone
        latency_us = 1000
        bandwidth_mbps = 0.1
        shared = $1
EOF
    for name in A B C D; do
        supernodes=0
        [ $name = A ] && supernodes=1
        printf '    cluster\n        name = %s\n        nodes = 1\n' $name
        printf '        supernodes = %s\n' $supernodes
    done
}

start_grid () {     #  start_grid RUN PLATFORM [JACE-GRID ARGS...]
    grid_run=$1 grid_platform=$2
    shift 2
    "$BIN/jace-grid" start --platform "$grid_platform" --run "$grid_run" \
        --daemon-arg=-v --daemon-arg=--heartbeat --daemon-arg=200 "$@" \
        >"$grid_run.endpoint" 2>"$grid_run.err"
}

#  Four tasks for a few seconds: no convergence needed, only traffic
run_job () {        #  run_job NAME RUN
    submit "$1" "$JACE_SRCDIR/examples/poisson2d.job" \
        "$(cat "$2.endpoint")" --set job/tasks=4 --set problem/n=48 \
        --set job/max_seconds=4 --set checkpoint/copies=0
}

#  The backbone's schedule from the daemons' logs: transfers between two
#  clusters, how many overlap, how many do not last bytes / bandwidth,
#  the share of the time the backbone was asked to carry (1 = its full
#  bandwidth), and the mean time from queue to arrival in transfers.
backbone_stats () { #  backbone_stats RUN
    grep -h " shaper: " "$1"/logs/*.log | awk '
        {
            to = $11; sub (/:$/, "", to)
            if ($6 == to) next
            print $17, $19, $15, $12
        }' | sort -n | awk '
        {
            start = $1; transfer = $2; queued = $3; bytes = $4
            if (n > 0 && start < end) overlaps++
            if (start + transfer > end) end = start + transfer
            if (n == 0) first = start
            if (transfer != bytes * 80000) wrong++
            busy += transfer
            waited += (start + transfer - queued) / transfer
            n++
        }
        END {
            printf "%d %d %d %.3f %.3f\n", n, overlaps, wrong,
                   n ? busy / (end - first) : 0, n ? waited / n : 0
        }'
}

platform 1 >"$RUN/shared.platform"
platform 0 >"$RUN/own.platform"

start_grid "$RUN/shared" "$RUN/shared.platform"
ok $? "a grid with a shared backbone starts"
[ -f "$RUN/shared/links" ] &&
    [ "$(grep -l "shared links in $RUN/shared/links" \
         "$RUN"/shared/logs/[A-D]-0.log | wc -l)" -eq 4 ]
ok $? "jace-grid makes the links file and every daemon maps it"
run_job shared "$RUN/shared"
grep -q '"event":"assign"' "$RUN/shared.events"
ok $? "a job of four tasks runs across the backbone"

set -- $(backbone_stats "$RUN/shared")
diag "shared: $1 transfers, $2 overlapping, $3 wrong, backbone asked" \
     "$4 of its bandwidth, $5 transfers from queue to arrival"
shared_wait=$5
[ "$1" -ge 12 ]
ok $? "the daemons logged their transfers across the backbone ($1)"
[ "$2" -eq 0 ]
ok $? "a shared backbone carries one transfer at a time"
[ "$3" -eq 0 ]
ok $? "each transfer gets the backbone's full bandwidth"
awk "BEGIN { exit !($4 > 0.8 && $4 <= 1.0001) }"
ok $? "six flows at once fill the backbone, never beyond it ($4)"
awk "BEGIN { exit !($5 > 3) }"
ok $? "a vector sent beside five others takes several transfers ($5)"

#  A new grid in the same folder starts with the backbone free: the
#  lane word (the file's last 8 bytes) is back to 0.  Its super-nodes do
#  not probe: their PINGs reserve the backbone too, within a second of
#  starting, and a start slowed by a busy machine would see one.
lane () { od -A n -t d8 -j 64 -N 8 "$RUN/shared/links" | tr -d ' '; }
used=$(lane)
"$BIN/jace-grid" stop --run "$RUN/shared" >/dev/null 2>&1
start_grid "$RUN/shared" "$RUN/shared.platform" \
        --supernode-arg=--probe --supernode-arg=0 &&
    [ "$used" -gt 0 ] && [ "$(lane)" = 0 ]
ok $? "a grid started again in the same folder frees the backbone"
"$BIN/jace-grid" stop --run "$RUN/shared" >/dev/null 2>&1

start_grid "$RUN/own" "$RUN/own.platform" && run_job own "$RUN/own"
set -- $(backbone_stats "$RUN/own")
diag "own: $1 transfers, $2 overlapping, $3 wrong, backbone asked" \
     "$4 of its bandwidth, $5 transfers from queue to arrival"
awk "BEGIN { exit !($1 >= 12 && $4 > 1.5) }"
ok $? "with shared = 0 each flow has a backbone of its own ($4)"
awk "BEGIN { exit !($shared_wait > 2.5 * $5) }"
ok $? "sharing makes each vector wait for the others ($shared_wait vs $5)"
"$BIN/jace-grid" stop --run "$RUN/own" >/dev/null 2>&1

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/*/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
