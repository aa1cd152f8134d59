#!/bin/sh
#  test_probe_transfers - the overlay measures how many transfers a
#  backbone carries at full speed at once (KPBS k), and a drain plans
#  with it
#
#  Three clusters behind an emulated 20 Mb/s backbone that carries two
#  transfers at once.  The super-nodes' bursts of bulk probes must find 2
#  on every link between clusters (`jace-spawner nodes` says so), not
#  read it from the platform file; a drain then plans its steps with
#  k = 2.  Before, the spawner's k came from the platform's KPBS limit,
#  which a live grid's model never has, or from the ratio of measured
#  bandwidths (1 here).
. "$(dirname "$0")/lib.sh"
#  Heavy though it uses about a core: its timed bursts read k only on a
#  quiet machine (86 s beside a light test in the suite, 26 s alone).
lib_init
plan 7

cat >"$RUN/kpbs.platform" <<PLATFORM
platform
    name = "kpbs"
    backbone
        latency_us = 2000
        bandwidth_mbps = 20
        shared = 1
        transfers = 2
    cluster
        name = "A"
        nodes = 2
    cluster
        name = "B"
        nodes = 2
    cluster
        name = "C"
        nodes = 2
PLATFORM
#  Probes 10 times a second (the default is once): the figures settle in
#  seconds, not a minute
start_grid "$RUN/kpbs.platform" --supernode-arg=--probe --supernode-arg=100
ok $? "a grid of three clusters behind a 2-transfer backbone starts"

#  True once every link between two clusters reads 2 transfers
links_read_two () {
    "$BIN/jace-spawner" nodes --supernode "$sn" >"$RUN/nodes.out" 2>&1 ||
        return 1
    between=$(grep -- '->' "$RUN/nodes.out" |
              grep -v 'A -> A\|B -> B\|C -> C')
    [ "$(printf '%s\n' "$between" | grep -c .)" -eq 6 ] &&
        [ "$(printf '%s\n' "$between" | grep -c ', 2 at full speed at once')" \
          -eq 6 ]
}
#  Under the suite's load (two tests at once on two cores) the whole test
#  took 98 s, alone 25 s: bursts that meet other work count fewer
wait_for $((240 * SLOW)) links_read_two
ok $? "every link between clusters reads 2 transfers at full speed"
diag "$(grep -- '->' "$RUN/nodes.out" | head -n 3)"

submit kpbs "$JACE_SRCDIR/examples/poisson3d.job" "$sn" --set job/tasks=2 \
    --set solver/inner=cg --set solver/inner_max_iterations=1 \
    --set problem/n=48 --set job/tolerance=1e-12 &
job=$!
wait_for 60 iterated kpbs 0 30
id=$(jq -r 'select(.event == "start") | .job' "$RUN/kpbs.events")
"$BIN/jace-spawner" drain "$id" --cluster "$(busiest_cluster \
    "$RUN/kpbs.events")" --supernode "$sn" >"$RUN/drain.out" 2>&1
ok $? "the job's busiest cluster is drained"
wait_for 60 has_event kpbs drain_plan
diag "$(event kpbs drain_plan)"
event kpbs drain_plan | jq -e '.k == 2' >/dev/null
ok $? "the drain plans with the measured k = 2"
#  What the job does next is other tests' business
"$BIN/jace-spawner" cancel "$id" --supernode "$sn" >/dev/null 2>&1
wait $job
event kpbs failure | jq -e '.reason | startswith("cancelled by")' >/dev/null
ok $? "the job is cancelled"
lib_finish
