#!/bin/sh
#  test_netns_testbed - a virtual grid in network namespaces, whose
#  backbone the kernel limits
#
#  `jace-grid start --netns` runs each cluster of a two-cluster platform
#  in a network namespace of its own, joined by one backbone that tc tbf
#  limits to 20 Mb/s.  The super-node lists every daemon from the root
#  namespace; bulk TCP transfers between the namespaces get no more than
#  the backbone (checked against the tbf rate only, never against this
#  machine's speed), both directions at once share it, and traffic inside
#  a cluster does not cross it; a job runs across both clusters and
#  verifies its answer.  Stopping the grid, or a launcher killed half way
#  then stopped, leaves no namespace, link or route behind.
#
#  Skips the whole test ("1..0 # SKIP", which the TAP driver reports as
#  SKIP) where namespaces cannot be made: not root, no iproute2, or `ip
#  netns add` or tbf refused.
. "$(dirname "$0")/lib.sh"

probe_tbf () {
    tc -n "$probe" qdisc add dev lo root tbf rate 1mbit burst 3200 limit 6400
}
require_netns "tc tbf is not available in this kernel" probe_tbf

lib_init medium
plan 23

RATE=20                         #  Backbone, Mb/s
BYTES=4000000                   #  One bulk transfer: 1.6 s at RATE
grids=""

#  Names a run's DIR/netns records, one "KIND NAME" a line
recorded () {       #  recorded NETNS-FILE
    awk '$1 == "backbone" || $1 == "link" { print $1, $2 }
         $1 == "cluster" { print "netns", $3 }
         $1 == "subnet" { print "route", $2 }' "$1"
}

#  What of a recorded testbed is still there, one line each
left_behind () {    #  left_behind NETNS-FILE
    recorded "$1" | while read -r kind name; do
        case $kind in
            backbone|netns)
                ip netns list | awk '{ print $1 }' | grep -qx "$name" &&
                    echo "namespace $name" ;;
            link)
                ip link show dev "$name" >/dev/null 2>&1 &&
                    echo "link $name" ;;
            route)
                [ -n "$(ip route show "$name")" ] && echo "route $name" ;;
        esac
    done
}

#  Whatever happens, stop the grids, then remove by hand any namespace
#  jace-grid did not
cleanup () {
    for run in $grids; do
        [ -f "$run/netns" ] && cp "$run/netns" "$run.netns-copy"
        timeout 30 "$BIN/jace-grid" stop --run "$run" >/dev/null 2>&1
        [ -f "$run.netns-copy" ] || continue
        recorded "$run.netns-copy" | while read -r kind name; do
            case $kind in
                link) ip link del "$name" 2>/dev/null ;;
                backbone|netns) ip netns del "$name" 2>/dev/null ;;
            esac
        done
    done
    lib_cleanup
}
trap cleanup EXIT

start_grid () {     #  start_grid RUN PLATFORM
    grids="$grids $1"
    timeout 60 "$BIN/jace-grid" start --netns --platform "$2" --run "$1" \
        --timeout 30 --daemon-arg=--heartbeat --daemon-arg=200 \
        >"$1.endpoint" 2>"$1.err"
}

#  Rate in Mb/s of one transfer, from jace-grid bulk's line
bulk () {           #  bulk RUN FROM TO
    timeout 40 "$BIN/jace-grid" bulk --run "$1" --from "$2" --to "$3" \
        --bytes "$BYTES" --timeout 30 2>>"$RUN/bulk.err" |
        awk '{ print $(NF - 1) }'
}

below () { awk "BEGIN { exit !($1 < $2) }"; }

#  The platform: A with an uplink wider than the backbone, B without
cat >"$RUN/two.platform" <<EOF
platform
    name = "netns-two"
    backbone
        latency_us = 500
        bandwidth_mbps = $RATE
    cluster
        name = "A"
        nodes = 2
        uplink_mbps = 64
    cluster
        name = "B"
        nodes = 2
        speeds = "1 0.5"
EOF

G=$RUN/grid
start_grid "$G" "$RUN/two.platform"
ok $? "jace-grid start --netns starts a two-cluster grid"
SN=$(cat "$G.endpoint")
BACKBONE=$(awk '$1 == "backbone" { print $2 }' "$G/netns")
NS_A=$(awk '$1 == "cluster" && $2 == "A" { print $3 }' "$G/netns")
NS_B=$(awk '$1 == "cluster" && $2 == "B" { print $3 }' "$G/netns")
ADDRESS_A=$(awk '$1 == "cluster" && $2 == "A" { print $4 }' "$G/netns")
ADDRESS_B=$(awk '$1 == "cluster" && $2 == "B" { print $4 }' "$G/netns")
diag "backbone $BACKBONE, A in $NS_A at $ADDRESS_A, B in $NS_B at $ADDRESS_B"

names=$(ip netns list | awk '{ print $1 }')
echo "$names" | grep -qx "$BACKBONE" && echo "$names" | grep -qx "$NS_A" &&
    echo "$names" | grep -qx "$NS_B" && [ "$NS_A" = "$BACKBONE-A" ]
ok $? "a namespace per cluster and the backbone's, named after the run"

in_own_namespace () {
    awk '!/^#/ { print $2, $3, $5 }' "$G/pids" | {
        status=0
        while read -r name pid cluster; do
            [ "$(ip netns identify "$pid")" = "$BACKBONE-$cluster" ] ||
                { diag "$name (pid $pid) is not in $BACKBONE-$cluster"; \
                  status=1; }
        done
        return $status
    }
}
in_own_namespace
ok $? "every super-node and daemon runs in its cluster's namespace"

count_is 4 "$SN"
ok $? "the super-node lists the 4 daemons, asked from the root namespace"
nodes_json "$SN" | jq -e --arg a "$ADDRESS_A" --arg b "$ADDRESS_B" '
    all (.[]; (.cluster == "A" and (.endpoint | contains ($a + ":")))
           or (.cluster == "B" and (.endpoint | contains ($b + ":"))))' \
    >/dev/null
ok $? "each daemon is reached at its cluster's address"

tc -n "$BACKBONE" qdisc show dev backbone | grep -q "tbf .*rate ${RATE}Mbit"
ok $? "tbf limits the backbone to its bandwidth_mbps"
tc -n "$NS_A" qdisc show dev uplink | grep -q "tbf .*rate 64Mbit" &&
    tc -n "$BACKBONE" qdisc show dev c0 | grep -q "tbf .*rate 64Mbit" &&
    ! tc -n "$NS_B" qdisc show dev uplink | grep -q tbf
ok $? "tbf limits A's uplink each way to its uplink_mbps, not B's"

! grep -q uplink_mbps "$G/platform-latency-only" &&
    grep -q "bandwidth_mbps = 1e9" "$G/platform-latency-only" &&
    grep -qx -- "--platform" "$G/argv/B-1" &&
    grep -qx "$G/platform-latency-only" "$G/argv/B-1" &&
    ! grep -qx -- "--links" "$G/argv/B-1"
ok $? "the processes emulate latencies only (platform-latency-only)"

rate=$(bulk "$G" A B)
diag "A to B: $rate Mb/s through a $RATE Mb/s backbone"
[ -n "$rate" ] && below "$rate" "$RATE * 1.5" && below "$RATE / 4" "$rate"
ok $? "a bulk transfer from A to B gets the backbone, no more ($rate)"
rate=$(bulk "$G" B A)
diag "B to A: $rate Mb/s"
[ -n "$rate" ] && below "$rate" "$RATE * 1.5"
ok $? "so does one from B to A ($rate)"
rate=$(bulk "$G" A A)
diag "within A: $rate Mb/s"
[ -n "$rate" ] && below "$RATE * 2" "$rate"
ok $? "traffic within a cluster does not cross the backbone ($rate)"

#  Both ways at once: 2 x BYTES through one backbone take about twice as
#  long as one transfer, whatever each gets.
started=$(now_msec)
bulk "$G" A B >"$RUN/ab.rate" &
ab=$!
bulk "$G" B A >"$RUN/ba.rate"
wait $ab
elapsed=$(( $(now_msec) - started ))
total=$(awk "BEGIN { printf \"%.3f\", 2 * $BYTES * 8 / $elapsed / 1000 }")
diag "A to B and B to A at once: $(cat "$RUN/ab.rate") +" \
     "$(cat "$RUN/ba.rate") Mb/s, $total Mb/s in all"
[ -s "$RUN/ab.rate" ] && [ -s "$RUN/ba.rate" ] &&
    below "$total" "$RATE * 1.5"
ok $? "both directions at once share the one backbone ($total in all)"

#  Synchronous, so its time is bounded by its iterations: an asynchronous
#  job floods a real link with vectors that then wait in TCP queues.
submit job "$JACE_SRCDIR/examples/poisson2d.job" "$SN" \
    --set job/tasks=4 --set job/mode=sync --set problem/n=32 \
    --set job/max_seconds=60
ok $? "a job of 4 tasks across both clusters exits 0"
residual=$(job_residual job)
[ -n "$residual" ] && jq -en "$residual < 1e-6 and $residual > 0" >/dev/null
ok $? "its verified residual is under the tolerance ($residual)"
clusters=$(jq -r 'select(.event == "assign") | .cluster' "$RUN/job.events" \
           | sort -u | tr '\n' ' ')
[ "$clusters" = "A B " ]
ok $? "the job used daemons of both clusters ($clusters)"

#  The revived daemon's pid is `ip netns exec`'s, which joins the
#  namespace a moment after it was spawned (under load, after revive
#  returned): wait for it to get there.
revived_in_b () {
    pid=$(awk '$2 == "B-1+1" { print $3 }' "$G/pids") && [ -n "$pid" ] &&
        [ "$(ip netns identify "$pid" 2>/dev/null)" = "$NS_B" ]
}
timeout 10 "$BIN/jace-grid" kill --run "$G" --daemon B-1 >/dev/null &&
    timeout 10 "$BIN/jace-grid" revive --run "$G" >"$RUN/revived" &&
    wait_for 10 revived_in_b
ok $? "a revived daemon comes back in its cluster's namespace"

cp "$G/netns" "$RUN/grid.netns"
timeout 30 "$BIN/jace-grid" stop --run "$G" 2>"$RUN/stop.err"
ok $? "jace-grid stop exits 0"
left=$(left_behind "$RUN/grid.netns")
[ -z "$left" ] && [ ! -e "$G/netns" ]
ok $? "stop leaves no namespace, link or route behind${left:+: $left}"

#  A launcher killed once it made the namespaces and started processes
K=$RUN/killed
grids="$grids $K"
"$BIN/jace-grid" start --netns --platform "$RUN/two.platform" --run "$K" \
    --timeout 30 >/dev/null 2>"$K.err" &
launcher=$!
wait_for 30 grep -q "^daemon" "$K/pids"
kill -KILL "$launcher" 2>/dev/null
wait "$launcher" 2>/dev/null
cp "$K/netns" "$RUN/killed.netns"
pids=$(awk '!/^#/ { print $3 }' "$K/pids")
[ -n "$(left_behind "$RUN/killed.netns")" ] && [ -n "$pids" ]
ok $? "a launcher killed half way leaves namespaces and processes"
timeout 30 "$BIN/jace-grid" stop --run "$K" 2>>"$RUN/stop.err"
left=$(left_behind "$RUN/killed.netns")
for pid in $pids; do
    running "$pid" && left="$left process $pid"
done
#  Even one started but not yet recorded when the launcher died
for pid in $(pgrep -f "jace-(daemon|supernode) .*$K/"); do
    left="$left unrecorded process $pid"
done
[ -z "$left" ]
ok $? "stop removes all of them${left:+: $left}"

#  A run folder deleted before its grid was stopped: nothing records the
#  grid any more but the owner record in /run/jace-grid, and the
#  processes' own arguments.  sweep finds both.
L=$RUN/lost
grids="$grids $L"
start_grid "$L" "$RUN/two.platform"
cp "$L/netns" "$L.netns-copy"     #  cleanup removes by hand what is left
pids=$(awk '!/^#/ { print $3 }' "$L/pids")
rm -rf "$L"
timeout 60 "$BIN/jace-grid" sweep --grace 2 >"$RUN/sweep.out" \
    2>"$RUN/sweep.err"
rc=$?
left=$(left_behind "$L.netns-copy")
for pid in $pids; do
    running "$pid" && left="$left process $pid"
done
[ $rc -eq 0 ] && [ -z "$left" ] && [ -n "$pids" ] &&
    grep -q "^netns jace-[a-z0-9]* .*/lost$" "$RUN/sweep.out"
rc=$?
[ $rc -ne 0 ] && diag "sweep: $(cat "$RUN/sweep.out" "$RUN/sweep.err")"
ok $rc "sweep removes the processes and namespaces of a grid whose run folder was deleted${left:+: $left}"

#  What the kernel cannot build is refused before anything is made
cat >"$RUN/linked.platform" <<EOF
platform
    name = "linked"
    cluster
        name = "A"
        nodes = 1
    cluster
        name = "B"
        nodes = 1
    link
        between = "A B"
        latency_us = 100
        bandwidth_mbps = 10
EOF
grids="$grids $RUN/linked"
! timeout 30 "$BIN/jace-grid" start --netns --platform "$RUN/linked.platform" \
    --run "$RUN/linked" >/dev/null 2>"$RUN/linked.err" &&
    grep -q "the link between A and B" "$RUN/linked.err" &&
    [ ! -e "$RUN/linked/netns" ]
ok $? "a platform with a link of its own is refused, nothing made"

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/*/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
