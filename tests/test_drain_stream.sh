#!/bin/sh
#  test_drain_stream - a drain moves several tasks of a file job at once;
#  each replacement learns where the others went, and the job ends
#  verified even when the drain cannot finish
#
#  Three clusters of unequal sizes and speeds; a Matrix Market job whose
#  data the spawner streams from cluster "home".  Once every task
#  iterates, the cluster running most tasks is drained.  Its first step
#  moves several tasks together, and a replacement's data takes a while to
#  stream in: the REMAPs of the others, sent while it still took its data,
#  were dropped by its daemon, and its set-up exchange then waited for a
#  dead daemon until the task was given up and the job failed.  Now each
#  replacement is told where every moved task runs before its START.
#  When too few daemons are left off the cluster, the drain waits; the
#  summary then says the drain did not finish, and why.
. "$(dirname "$0")/lib.sh"
lib_init
plan 10

#  Slow nodes keep the job running well past the drain on any machine.
cat >"$RUN/three.platform" <<EOF
platform
    name = "three"
    backbone
        latency_us = 8000
        bandwidth_mbps = 50
        shared = 1
    cluster
        name = "home"
        nodes = 3
        speeds = "0.3 0.3 0.15"
    cluster
        name = "far"
        nodes = 6
        speeds = "0.24 0.24 0.12 0.12 0.12 0.06"
        supernodes = 0
        uplink_mbps = 20
    cluster
        name = "mid"
        nodes = 4
        speed = 0.18
EOF
#  test_drain's problem, as a file: a 3D Laplacian with exact inner
#  solves needs hundreds of iterations whatever the machine (a convection
#  matrix converged before the drain's first step on an idle machine)
"$BIN/jace-mmgen" poisson3d 40 "$RUN/c.mtx" --rhs "$RUN/c_rhs.mtx" \
    >/dev/null
cat >"$RUN/c.job" <<EOF
job
    application = "multisplit"
    tasks = 9
    tolerance = 1e-9
    max_seconds = 300
    heartbeat_timeout = 3000
problem
    kind = "matrix"
    matrix = "c.mtx"
    rhs = "c_rhs.mtx"
solver
    inner = "bicgstab"
    inner_tolerance = 1e-12
scatter
    root = "home"
checkpoint
    every_seconds = 1
EOF

"$BIN/jace-grid" start --platform "$RUN/three.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of three unequal clusters starts"
sn=$(cat "$RUN/grid.endpoint")

timeout $((300 * SLOW)) "$BIN/jace-spawner" submit "$RUN/c.job" --supernode "$sn" -q \
    --events "$RUN/job.events" >"$RUN/job.out" 2>"$RUN/job.err" &
job=$!

wait_for 120 all_iterate "$RUN/job.events" 9
id=$(jq -r 'select(.event == "start") | .job' "$RUN/job.events")
busiest=$(busiest_cluster "$RUN/job.events")
diag "job $id; draining cluster $busiest"
"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "jace-spawner drain --cluster $busiest is taken"

wait $job
ok $? "the job exits 0"
residual=$(job_residual job)
[ -n "$residual" ]
ok $? "with a verified residual ($residual)"

#  The rows a file job's moved tasks get again from the spawner: their
#  rows of the scatter event, at its bytes per row
jq -e -s --arg c "$busiest" '
    (map(select(.event == "scatter")) | .[0]) as $s
    | (map(select(.event == "assign" and .cluster == $c) | .rows) | add)
      as $rows
    | map(select(.event == "drain_plan")) | .[0].data_bytes as $d
    | $d > 0 and (($d - $rows * $s.bytes_per_row) | fabs) <= $rows' \
    "$RUN/job.events" >/dev/null
ok $? "the drain plan counts the data the moved tasks receive again"

#  The case this test is for: replacements made together
jq -e -s 'map(select(.event == "drain_move")) | group_by(.step)
          | map(length) | max >= 2' "$RUN/job.events" >/dev/null
ok $? "a drain step moved two tasks or more at once"
jq -e -s '(map(select(.event == "drain_move") | .task) | unique) as $moved
    | [.[] | select(.event == "restored" and (.task as $t | $moved
                                              | index($t)))]
    | length >= ($moved | length) and all(.from == "checkpoint")' \
    "$RUN/job.events" >/dev/null
ok $? "every moved task went on from a copy of its checkpoint"
! grep -q 'refused its task\|request lists of the other tasks' \
    "$RUN/job.err" "$RUN"/grid/logs/*.log
ok $? "no replacement gave its task up"

#  The summary says how the drain ended, as the events do
moves=$(jq -s 'map(select(.event == "drain_move")) | length' \
        "$RUN/job.events")
if grep -q '"event":"drained"' "$RUN/job.events"; then
    ! grep -q "drain .*not finished" "$RUN/job.out" &&
        grep -q "($moves drained)" "$RUN/job.out"
    ok $? "the drain finished, and the summary counts its $moves moves"
else
    grep -q '"event":"drain_wait"' "$RUN/job.events" &&
        grep -q "drain          of cluster $busiest not finished when the job ended: no daemon off cluster $busiest" \
            "$RUN/job.out" &&
        grep -q "($moves drained)" "$RUN/job.out"
    ok $? "the drain waited for room; the summary says so and counts its $moves moves"
fi
diag "$(grep 'replaced\|drain ' "$RUN/job.out")"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
