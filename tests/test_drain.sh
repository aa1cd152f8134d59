#!/bin/sh
#  test_drain - every task of a running job moves off a cluster, and the
#  job still ends with a verified answer
#
#  Three clusters of four daemons; a job of six tasks mapped by MAHEVE.
#  Once every task iterates, `jace-spawner drain` asks the job's spawner
#  to move the tasks off the cluster holding most of them, in the steps
#  its drain/schedule plans (never two neighbours in one step), each to a
#  daemon the mapping chooses elsewhere, restarting from its neighbours'
#  copies of its checkpoint.  A daemon of another cluster is
#  crashed while the drain goes on; the job loses nothing and converges.
#  The requests a spawner must refuse (no secret, an unknown cluster) are
#  refused with a reason.  A drain that finds no daemon off the cluster
#  is refused before any task moves, and its job goes on: it used to
#  fence the tasks and fail the job 30 s later.
. "$(dirname "$0")/lib.sh"
#  Exact inner solves keep the job running long enough for the drain.
EXACT="--set solver/inner_tolerance=1e-12"
lib_init
plan 22

#  Nodes at 0.3 of this machine's speed: what the test does between
#  seeing the tasks iterate and its crash (a drain, a rebalance, a kill:
#  processes that each ask the super-node) takes about as long as the job
#  took at full speed, which a faster machine would have finished first.
cat >"$RUN/three.platform" <<EOF
platform
    name = "three"
    cluster
        name = "A"
        nodes = 4
        speed = 0.3
    cluster
        name = "B"
        nodes = 4
        supernodes = 0
        speed = 0.3
    cluster
        name = "C"
        nodes = 4
        supernodes = 0
        speed = 0.3
EOF
start_grid "$RUN/three.platform" --daemon-arg=--heartbeat --daemon-arg=300
ok $? "a grid of three clusters starts"

submit drain "$JACE_SRCDIR/examples/poisson3d.job" "$sn" \
    --set job/tasks=6 $EXACT --set problem/n=40 --set job/tolerance=1e-9 \
    --set job/heartbeat_timeout=1500 --set checkpoint/every_seconds=1 &
job=$!

#  Every task has iterated: the job certainly runs, whatever the speed.
wait_for 60 all_iterate "$RUN/drain.events" 6
id=$(jq -r 'select(.event == "start") | .job' "$RUN/drain.events")
#  The cluster running most tasks, and a task elsewhere
busiest=$(busiest_cluster "$RUN/drain.events")
other=$(jq -r "select(.event == \"assign\" and .cluster != \"$busiest\")
               | .task" "$RUN/drain.events" | head -n 1)
diag "job $id; draining cluster $busiest; task $other crashes meanwhile"

JACE_SECRETS=$RUN/nowhere "$BIN/jace-spawner" drain "$id" \
    --cluster "$busiest" --supernode "$sn" >"$RUN/nosecret.out" 2>&1
[ $? -ne 0 ] && grep -q "secret" "$RUN/nosecret.out"
ok $? "drain without the job's secret is refused"

"$BIN/jace-spawner" drain "$id" --cluster Z --supernode "$sn" \
    >"$RUN/unknown.out" 2>&1
[ $? -ne 0 ] && grep -q "no task of job $id runs on a cluster named 'Z'" \
    "$RUN/unknown.out"
ok $? "drain of a cluster the job does not use is refused with a reason"

"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "jace-spawner drain --cluster $busiest is taken by the job's spawner"

#  The same drain asked again is answered with how far it has come (asked
#  again while the first is still being decided)
for try in 1 2 3 4 5 6 7 8 9 10; do
    "$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
        >"$RUN/repeat.out" 2>&1
    grep -q "being decided; ask again" "$RUN/repeat.out" || break
    sleep 0.3
done
grep -q "cluster $busiest was already being drained: [0-9]* tasks moved" \
    "$RUN/repeat.out"
ok $? "a repeat drain of the cluster says it is already being drained"

#  A drain's steps each wait for a checkpoint period: it is still on
"$BIN/jace-spawner" rebalance "$id" --supernode "$sn" >"$RUN/rebalance.out" \
    2>&1
[ $? -ne 0 ] && grep -q "REBALANCE refused: cluster $busiest is being drained" \
    "$RUN/rebalance.out"
ok $? "a rebalance during the drain is refused with a reason"

wait_for 60 grep -q '"event":"drain_move"' "$RUN/drain.events"
"$BIN/jace-spawner" kill --job "$id" --task "$other" --supernode "$sn" \
    --run "$RUN/grid" >"$RUN/kill.out" 2>&1
ok $? "a daemon of another cluster is crashed during the drain"

wait $job
ok $? "the job exits 0"
residual=$(job_residual drain)
ok $? "with a verified residual ($residual)"

#  Asked the moment the job ended: the grid may still show it (its
#  lease and daemons leave a heartbeat or two later), but its spawner
#  recorded the end before it removed the secret.
"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/ended.out" 2>&1
[ $? -ne 0 ] && grep -q "cannot control job $id: it ended at .*: verified" \
    "$RUN/ended.out"
ok $? "a drain of the ended job says it ended, not that its secret is missing"
"$BIN/jace-spawner" kill --job job-never --task 0 --supernode "$sn" \
    --run "$RUN/grid" >"$RUN/never-kill.out" 2>&1
[ $? -ne 0 ] && grep -q "no job job-never runs on the grid" \
    "$RUN/never-kill.out"
ok $? "a kill of a job that never ran says no such job runs on the grid"

grep -q "\"event\":\"drained\",.*\"cluster\":\"$busiest\"" \
    "$RUN/drain.events"
ok $? "the events record the drain as done"

#  Where each task ran last: its last assign or replace
last_clusters () {
    jq -r 'select(.event == "assign" or .event == "replace")
           | "\(.task) \(.cluster)"' "$RUN/drain.events" |
        awk '{ last [$1] = $2 } END { for (t in last) print last [t] }'
}
moved=$(jq -r "select(.event == \"assign\" and .cluster == \"$busiest\")
               | .task" "$RUN/drain.events" | wc -l)
[ "$(jq -r 'select(.event == "drain_move") | .task' "$RUN/drain.events" |
     sort -u | wc -l)" -eq "$moved" ] &&
    [ "$(last_clusters | grep -c "^$busiest\$")" -eq 0 ]
ok $? "every task of $busiest moved, and none runs there at the end"
[ "$(jq -r --arg c "$busiest" 'select(.event == "replace"
        and (.reason | contains("\($c) is being drained"))) | .task' \
     "$RUN/drain.events" | sort -u | wc -l)" -eq "$moved" ]
ok $? "each move's reason says $busiest is being drained"
jq -r 'select(.event == "replace") | .reason' "$RUN/drain.events" |
    sort | uniq -c | while read -r line; do diag "$line"; done

grep -q '"event":"dead"' "$RUN/drain.events"
ok $? "the crashed daemon was detected and replaced"

jq -e -s --arg c "$busiest" 'map(select(.event == "drain_plan"))
    | length == 1 and .[0].cluster == $c and .[0].schedule == "auto"
    and (.[0].used == "all" or .[0].used == "oggp") and .[0].steps >= 1' \
    "$RUN/drain.events" >/dev/null
ok $? "the drain was planned once, auto choosing all at once or OGGP"
diag "$(jq -c 'select(.event == "drain_plan") | del(.job, .time)' \
    "$RUN/drain.events")"
#  poisson3d's tasks exchange values with the adjacent ranks only
jq -e -s 'map(select(.event == "drain_move")) | group_by(.step)
    | map(map(.task) | sort | . as $t
          | [range(1; length)] | map($t[.] - $t[. - 1]) | all(. > 1))
    | all' "$RUN/drain.events" >/dev/null
ok $? "no step moved two tasks that exchange values"
#  The tasks still to move had checkpointed to their holders' new daemons
#  before their own step: every moved task went on from a copy.
jq -e -s '(map(select(.event == "drain_move") | .task) | unique) as $moved
    | [.[] | select(.event == "restored" and (.task as $t | $moved
                                              | index($t)))]
    | length >= ($moved | length) and all(.from == "checkpoint")' \
    "$RUN/drain.events" >/dev/null
ok $? "every moved task went on from a copy of its checkpoint"

#  A job on every daemon: no room off any cluster
"$BIN/jace-grid" revive --run "$RUN/grid" >/dev/null 2>&1
wait_for 30 count_is 12 "$sn" '.state == "free"'
submit full "$JACE_SRCDIR/examples/poisson3d.job" "$sn" \
    --set job/tasks=12 --set job/spares=0 $EXACT --set problem/n=40 \
    --set job/tolerance=1e-9 --set job/heartbeat_timeout=1500 &
job=$!
wait_for 60 all_iterate "$RUN/full.events" 12
id=$(jq -r 'select(.event == "start") | .job' "$RUN/full.events")
"$BIN/jace-spawner" drain "$id" --cluster A --supernode "$sn" \
    >"$RUN/full-drain.out" 2>&1
[ $? -ne 0 ] && grep -q "DRAIN refused: no daemon off cluster A for task [0-9]*: .*; the grid has daemons off A for 0 of its 4 tasks; start daemons elsewhere first" \
    "$RUN/full-drain.out"
ok $? "a drain with no daemon off the cluster is refused, saying why"
wait $job
status=$?
residual=$(job_residual full)
[ $status -eq 0 ] && [ -n "$residual" ] \
    && ! grep -q '"event":"drain_move"' "$RUN/full.events"
ok $? "its job moved no task and ended verified ($residual)"
grep -q '"event":"drain_refused"' "$RUN/full.events"
ok $? "the events record the refused drain"

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
