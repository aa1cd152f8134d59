#!/bin/sh
#  test_supernode_links - measured links (protocol 4, MAPPING.md 1)
#
#  A virtual grid of two clusters (backbone 5000 us, 100 Mb/s; intra
#  50 us) started as jace-grid starts it: each super-node with --cluster
#  and --platform, each daemon with --platform.  The super-nodes' PINGs
#  and PONGs are held for the emulated links, so STATUS must show
#  link/A/B/latency_us near 5000 (0.7x to 2x), link/A/A small, and a
#  bandwidth for A/B once bulk probes came back, and for A/C, a cluster
#  with no super-node, from bulk probes of its daemon.  A forged PING and PONG
#  from a client that is neither peer nor registered daemon are dropped
#  and counted.  Each pair is published with its age, and once the only
#  daemon of cluster A leaves, sa stops publishing A/A within a few probe
#  periods (5 x 100 ms) instead of forever.  A daemon given a platform
#  file it cannot read refuses to start (it would run unemulated).
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 12
CLIENT=$BIN/tests/snclient
RAW=$BIN/tests/rawzmq
cat >"$RUN/grid.platform" <<'PLATFORM'
platform
    name = "links"
    backbone
        latency_us = 5000
        bandwidth_mbps = 100
    cluster
        name = "A"
        nodes = 2
        latency_us = 50
        bandwidth_mbps = 1000
    cluster
        name = "B"
        nodes = 2
        latency_us = 50
        bandwidth_mbps = 1000
    cluster
        name = "C"
        nodes = 1
        latency_us = 50
        bandwidth_mbps = 1000
PLATFORM
FAST="--heartbeat 200 --timeout 1000 --probe 100 --platform $RUN/grid.platform"

start_supernode sa $FAST --cluster A
start_supernode sb $FAST --cluster B --peer "$SN_sa"
start_daemon a1 --cluster A --platform "$RUN/grid.platform" --supernode "$SN_sa"
start_daemon b1 --cluster B --platform "$RUN/grid.platform" --supernode "$SN_sb"
#  C has no super-node: its daemon registers with sa
start_daemon c1 --cluster C --platform "$RUN/grid.platform" --supernode "$SN_sa"

timeout 20 "$BIN/jace-daemon" --power 1 --platform "$RUN/nope.platform" \
    --supernode "$SN_sa" 2>"$RUN/nope.err"
[ $? -eq 1 ] && grep -q "nope.platform: " "$RUN/nope.err"
ok $? "a daemon refuses to start on a platform file it cannot read"

#  A param of a super-node's STATUS_REPLY, or nothing.
param () {          #  param SUPERNODE KEY
    "$CLIENT" "$1" status 2>>"$RUN/client.log" \
        | awk -v key="$2" '$1 == "param" && $2 == key { print $3 }'
}
has_param () { [ -n "$(param "$1" "$2")" ]; }
#  Enough samples on a pair for its minimum to be sound.
sampled () {        #  sampled SUPERNODE PAIR N
    n=$(param "$1" "link/$2/samples")
    [ -n "$n" ] && [ "$n" -ge "$3" ]
}

wait_for 20 sampled "$SN_sa" A/B 12
ok $? "sa measured the link to B with its peer probes"
lat=$(param "$SN_sa" link/A/B/latency_us)
diag "link/A/B/latency_us = $lat (emulated 5000)"
[ -n "$lat" ] && [ "$lat" -ge 3500 ] && [ "$lat" -le 10000 ]
ok $? "link/A/B/latency_us is within 0.7x..2x of the emulated 5000 us"

wait_for 20 sampled "$SN_sa" A/A 8
intra=$(param "$SN_sa" link/A/A/latency_us)
diag "link/A/A/latency_us = $intra (emulated 50)"
[ -n "$intra" ] && [ "$intra" -lt 2500 ]
ok $? "link/A/A (sa to its daemon) is small"

#  The bandwidth is the best of the last 8 measuring bulk probes: one
#  alone, delayed by a loaded machine, may read 22 Mb/s.  Each pair gets
#  one bulk probe in 4 of its own, so 48 round trips hold several.
wait_for 20 has_param "$SN_sa" link/A/B/bandwidth_mbps
wait_for 20 sampled "$SN_sa" A/B 48
bw=$(param "$SN_sa" link/A/B/bandwidth_mbps)
diag "link/A/B/bandwidth_mbps = $bw (emulated 100)"
awk -v bw="$bw" 'BEGIN { exit !(bw + 0 >= 25 && bw + 0 <= 400) }'
ok $? "a bandwidth for A/B appears after bulk probes, near 100 Mb/s"

wait_for 20 has_param "$SN_sa" link/A/C/bandwidth_mbps
wait_for 20 sampled "$SN_sa" A/C 48
bw=$(param "$SN_sa" link/A/C/bandwidth_mbps)
diag "link/A/C/bandwidth_mbps = $bw (emulated 100)"
awk -v bw="$bw" 'BEGIN { exit !(bw + 0 >= 25 && bw + 0 <= 400) }'
ok $? "a cluster with no super-node gets its bandwidth from bulk probes of its daemon"

wait_for 20 has_param "$SN_sb" link/B/A/latency_us
[ -n "$(param "$SN_sb" link/A/A/latency_us)" ]
ok $? "sb publishes its own B/A and learns A/A from its peer"

before=$(param "$SN_sa" audit/unauthorised)
bad_before=$(param "$SN_sa" audit/malformed)
"$RAW" "$SN_sa" ping intruder >/dev/null 2>&1
"$RAW" "$SN_sa" pong a1 >/dev/null 2>&1
settled () {
    [ "$(param "$SN_sa" audit/unauthorised)" -ge $((before + 2)) ]
}
wait_for 5 settled
ok $? "a forged PING and PONG from a non-daemon are dropped and counted"

age=$(param "$SN_sa" link/A/A/age_ms)
diag "link/A/A/age_ms = $age (probes every 100 ms)"
[ -n "$age" ] && [ "$age" -lt 1000 ]
ok $? "a pair measured each probe period is published with a small age"

stop_cleanly "$PID_a1"
forgotten () { ! has_param "$SN_sa" link/A/A/latency_us; }
wait_for 10 forgotten && has_param "$SN_sa" link/A/B/latency_us
ok $? "once A's daemon left, sa forgets A/A and keeps A/B"

lib_finish
