#!/bin/sh
#  test_fault_partition - a site cut off mid-job, then joined again
#
#  An exchange job runs on a three-cluster grid in network namespaces.
#  Once every task has done its rounds but the last and checkpointed,
#  `jace-grid cut` drops every packet to and from the cluster running
#  most of them, without an answer: its daemons live on, but the spawner
#  hears nothing.  Their links do not drop (no RST, no refused port), so
#  the link watch must not fire: the tasks there are declared dead for
#  their silence alone, and run again outside the cut cluster from
#  checkpoints (a job of total exchanges cannot go on from a task's
#  initial state).  No daemon elsewhere is declared dead.  `jace-grid
#  heal` then joins the cluster again while the job runs: the cut
#  daemons, still on their old tasks, are fenced and none still works.
#  The job's last round waits for a file the test creates after the
#  heal (exchange/hold_file), so the job outlasts every step on any
#  machine; it ends with a verified answer.
#
#  Then a band job (jacobi2d: each task's neighbours hold the next rows,
#  its tolerance out of reach) loses the same cluster: the tasks whose
#  neighbours all ran there go on from their off-site copies
#  (checkpoint/offsite; OFFSITE=off in the environment runs both jobs
#  without them: three of those four tasks then restart from their
#  initial state, and that check fails).  It is cancelled at once
#  through the healed cluster's super-node, which has yet to hear from
#  its peers which spawner holds the job.
#
#  Last, an exchange job ends, verified, while its busiest cluster is
#  cut off.  Joined again, the daemons there, which never got its STOP,
#  are told by their super-node that the job is over, and are free
#  within seconds, not job/orphan_timeout.
#
#  Skips the whole test where namespaces cannot be made (not root, no
#  iproute2, no `ip netns add`).
. "$(dirname "$0")/lib.sh"

probe_blackhole () {
    ip -n "$probe" rule add to 10.0.0.0/24 blackhole pref 1000
}
require_netns "ip rule ... blackhole is refused here" probe_blackhole

lib_init medium
plan 15

cat >"$RUN/three.platform" <<EOF
platform
    name = "partition"
    backbone
        latency_us = 1000
        bandwidth_mbps = 1000
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

cat >"$RUN/x.job" <<JOB
job
    application = "exchange"
    mode = "async"
    tasks = 6
    mapping = "simple"
    spares = 0
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    heartbeat_timeout = 2000
    stall_snapshots = 0
exchange
    rounds = 12
    bytes = 2000
    pause_ms = 100
    hold_file = "$RUN/open"
checkpoint
    every_iterations = 2
    offsite = ${OFFSITE:-on}
JOB

start_grid "$RUN/three.platform" --netns --timeout 30 \
    --daemon-arg=--heartbeat --daemon-arg=200
ok $? "a grid of three clusters starts in network namespaces"

#  Every task has done its rounds but the last, and sent copies of its
#  state twice since (every 2 iterations: while held, a task iterates
#  without exchanging).  Every task's copies are then of the same round:
#  tasks restored from copies of different rounds could not replay the
#  total exchanges between them (each copy carries its last round's
#  pieces only), and the job would fail for that, not for the cut.
checkpointed () {     #  checkpointed NAME N: every task did N iterations
    for task in 0 1 2 3 4 5; do
        iterated "$1" $task "$2" || return 1
    done
}
#  Every task of cluster $cut ($lost) runs again elsewhere
moved_out () {        #  moved_out NAME
    for task in $lost; do
        jq -e -s --arg c "$cut" --argjson t "$task" '
            map(select(.event == "replace" and .task == $t)) | length > 0
            and (last | .cluster != $c)' "$RUN/$1.events" >/dev/null ||
            return 1
    done
}
#  Cut off the cluster running most of job NAME's tasks: $cut, $lost
cut_busiest () {      #  cut_busiest NAME
    cut=$(busiest_cluster "$RUN/$1.events") &&
    lost=$(jq -r --arg c "$cut" 'select(.event == "assign"
                                 and .cluster == $c) | .task' \
           "$RUN/$1.events" | sort -n) &&
    timeout 30 "$BIN/jace-grid" cut --run "$RUN/grid" --cluster "$cut" \
        2>"$RUN/cut.err"
}
submit split "$RUN/x.job" "$sn" &
job=$!
wait_for $((60 * SLOW)) checkpointed split 16
ok $? "the 6 tasks iterate, and have sent copies of their state"

cut_busiest split
ok $? "jace-grid cut --cluster $cut exits 0"
diag "cluster $cut runs tasks $(echo $lost)"
wait_for $((60 * SLOW)) moved_out split
ok $? "each task of cluster $cut is replaced outside it"
event split replace | jq -c '{task, daemon, reason}' | while read -r line; do
    diag "replace: $line"
done

event split dead | jq -s -e --arg c "$cut" 'length > 0 and all (.[];
    (.daemon | startswith ($c + "-"))
    and (.reason | startswith ("silent for")))' >/dev/null
ok $? "only daemons of $cut were declared dead, each for its silence"
event split dead | jq -c '{daemon, silent_ms, reason}' | while read -r line; do
    diag "dead: $line"
done

timeout 30 "$BIN/jace-grid" heal --run "$RUN/grid" --cluster "$cut" \
    2>"$RUN/heal.err"
ok $? "jace-grid heal --cluster $cut exits 0"

#  Joined again, the cut daemons learn that their tasks went on without
#  them (fenced), and leave them: listed, and none working any more (the
#  job may hold them again as spares).
wait_for $((40 * SLOW)) count_is 0 "$sn" \
    ".cluster == \"$cut\" and .state == \"working\""
rc=$?
wait_for 10 count_is 4 "$sn" ".cluster == \"$cut\"" || rc=1
[ $rc -ne 0 ] && diag "$(nodes_json "$sn" | jq -c '.[] | {id, state}')"
ok $rc "the daemons of $cut are listed again, none still working"
event split fenced | jq -c '{daemon, task, stopped}' | while read -r line; do
    diag "fenced: $line"
done

touch "$RUN/open"
wait "$job"
ok $? "the job exits 0"
job_residual split >/dev/null
ok $? "with a verified answer"
restored=$(jq -s '[.[] | select(.event == "restored")
    | select(.from != "checkpoint")] | length' "$RUN/split.events")
[ "$restored" = 0 ]
ok $? "every task lost with the cluster went on from a checkpoint"
diag "$(tail -n 1 "$RUN/split.events" | jq -c '{seconds, replacements,
    from_checkpoint, from_initial}')"

#  A band job: each task's neighbours are the tasks of the next rows, so
#  the tasks inside the busiest cluster have no neighbour elsewhere, and
#  without an off-site copy they would all go back to their initial
#  state.  Its tolerance is out of reach: it runs until cancelled.
wait_for 20 count_is 12 "$sn" '.state == "free"'
submit band "$JACE_SRCDIR/examples/poisson2d.job" "$sn" \
    --set job/tasks=6 --set job/mapping=simple --set job/spares=0 \
    --set job/tolerance=1e-300 --set job/stall_snapshots=0 \
    --set job/heartbeat_timeout=2000 --set checkpoint/every_iterations=100 \
    --set checkpoint/offsite="${OFFSITE:-on}" &
band=$!
band_restored () {
    [ "$(event band restored | jq -s 'length')" -ge "$(echo $lost | wc -w)" ]
}
wait_for $((60 * SLOW)) checkpointed band 300 && cut_busiest band &&
    wait_for $((60 * SLOW)) band_restored
rc=$?
event band restored | jq -c '{task, daemon, from, iteration}' |
    while read -r line; do diag "restored: $line"; done
[ $rc -eq 0 ] && event band restored | jq -s -e 'all (.[];
    .from == "checkpoint" and .iteration > 0)' >/dev/null
ok $? "a band job's tasks cut off with cluster $cut go on from their copies"
timeout 30 "$BIN/jace-grid" heal --run "$RUN/grid" --cluster "$cut"
#  Asked at once through the super-node that was cut off: it lists its
#  own daemons, still on their tasks, before it hears from its peers
#  which spawner holds the job now.  Its spawner must be the one asked
#  (the cancel once took the job for orphaned, stopped those daemons
#  only, and the job went on).
job=$(head -n 1 "$RUN/band.events" | jq -r .job)
cut_sn=$(awk -v c="$cut" '$1 == "supernode" && $5 == c { print $4; exit }' \
         "$RUN/grid/pids")
timeout 30 "$BIN/jace-spawner" cancel "$job" --supernode "$cut_sn" \
    >"$RUN/cancel.out" 2>&1 &&
    grep -q "cancelled by its spawner" "$RUN/cancel.out"
rc=$?
[ $rc -ne 0 ] && diag "cancel: $(cat "$RUN/cancel.out")"
wait "$band"
[ $rc -eq 0 ] && tail -n 1 "$RUN/band.events" | jq -e 'select(.event ==
    "failure") | .reason | startswith("cancelled")' >/dev/null
ok $? "its spawner cancels it, asked through the healed cluster"

#  A job that ends while a cluster is cut off: its daemons there, still
#  on their old tasks, never get their spawner's STOP.  Once joined
#  again, their super-node learns from its peers that the job is over
#  and tells them (they kept their tasks for job/orphan_timeout, 600 s).
wait_for 20 count_is 12 "$sn" '.state == "free"'
submit ended "$RUN/x.job" "$sn" --set exchange/hold_file="$RUN/open3" &
job=$!
wait_for $((60 * SLOW)) checkpointed ended 16 && cut_busiest ended &&
    wait_for $((60 * SLOW)) moved_out ended
rc=$?
touch "$RUN/open3"
wait "$job" && [ $rc -eq 0 ]
ok $? "a job whose cluster $cut is cut off ends verified without it"
timeout 30 "$BIN/jace-grid" heal --run "$RUN/grid" --cluster "$cut"
wait_for $((40 * SLOW)) count_is 0 "$sn" \
    ".cluster == \"$cut\" and .state == \"working\"" &&
    grep -q "is over, says super-node" "$RUN"/grid/logs/*.log
rc=$?
[ $rc -ne 0 ] && diag "$(nodes_json "$sn" | jq -c '.[] | {id, state, job}')"
ok $rc "healed, the daemons of $cut left the ended job's tasks at once"

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any log"
