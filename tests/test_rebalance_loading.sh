#!/bin/sh
#  test_rebalance_loading - a spawner killed while its rebalance's new
#  blocks are still on their way: the daemons loading them go back to the
#  rows they run, a daemon that took its new block is given its old rows
#  again, and the resumed job goes on on the old cut
#
#  Two daemons of cluster B take a file matrix from cluster Z over a
#  2 Mb/s backbone, so that their blocks take seconds to arrive;
#  a third, in Z, takes its block at once.  The job rebalances by itself
#  (job/rebalance = auto, a threshold of 1%: the daemons run at speeds 1,
#  0.5 and 1), and its spawner is killed (SIGKILL) as soon as fast1 and
#  z1 have their new block's ASSIGN: the backbone's rate, not the
#  machine, says that fast1's block is seconds from done while Z's daemon
#  has its own.
#  - Before, a daemon still loading its new block did not answer the
#    resume's ADOPT (its worker's answer was of the old epoch, and
#    dropped); the resume released it, and with every daemon loading it
#    found none to adopt and failed the job.  Now each gives up the
#    block that will never come and answers with the task it runs.
#  - Z's daemon is then on the new cut, its task set up and never
#    STARTed, while the others run the old one: the resume used to refuse
#    the job (two cuts).  Now it assigns that daemon its old rows again,
#    and the job resumes whole on the old cut.
#  Then the job converges to a verified residual; its tolerance is out of
#  reach, so that it cannot end before the checks however fast the
#  machine; it is cancelled.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 9

cat >"$RUN/far.platform" <<EOF
platform
    name = "far"
    backbone
        latency_us = 2000
        bandwidth_mbps = 2
    cluster
        name = "B"
        nodes = 2
    cluster
        name = "Z"
        nodes = 1
        latency_us = 50
        bandwidth_mbps = 10000
EOF
start_supernode sn
start_daemon fast1 --supernode "$SN" --speed 1 --cluster B \
    --platform "$RUN/far.platform"
start_daemon half1 --supernode "$SN" --speed 0.5 --cluster B \
    --platform "$RUN/far.platform"
start_daemon z1 --supernode "$SN" --speed 1 --cluster Z \
    --platform "$RUN/far.platform"
check "three daemons register" wait_for 15 count_is 3 "$SN"
"$BIN/jace-mmgen" poisson2d 200 "$RUN/p.mtx" --rhs "$RUN/p_rhs.mtx" \
    >/dev/null
cat >"$RUN/r.job" <<JOBFILE
job
    application = "multisplit"
    tasks = 3
    tolerance = 1e-300
    stall_snapshots = 0
    max_seconds = 200
    mapping = "simple"
    spares = 0
    rebalance = "auto"
    rebalance_threshold = 0.01
    heartbeat_timeout = 3000
problem
    kind = "matrix"
    matrix = "p.mtx"
    rhs = "p_rhs.mtx"
solver
    inner = "lu-banded"
checkpoint
    every_seconds = 1
scatter
    root = "Z"
    distribution = "uniform"
report
    sample_seconds = 0.5
JOBFILE

"$BIN/jace-spawner" submit "$RUN/r.job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/r.out" 2>"$RUN/r.err" &
submitted=$!
#  Killed once fast1 and z1 have their ASSIGN of the new cut: the
#  spawner's rebalance_assign event comes before it sends them, and under
#  load it was killed before B's daemons had theirs.
took_assign () {    #  took_assign NAME: its new block is on its way
    grep -q "task [0-9]* of job [^ ]* assigned again, epoch 2 (a rebalance)" \
        "$RUN/$1.log"
}
reassigning () {     #  true once it re-assigns, or can no more
    { took_assign fast1 && took_assign z1; } || ! kill -0 "$submitted"
}
wait_for 120 reassigning
took_assign fast1 && took_assign z1
seen=$?
kill -KILL "$submitted"
wait "$submitted" 2>/dev/null
[ $seen -eq 0 ] && [ -z "$(event r rebalance_done)" ]
ok $? "the spawner is killed as it re-assigns the tasks of a rebalance"
old_rows=$(event r rebalance_plan | tail -n 1 | jq -c .old_rows)
new_rows=$(event r rebalance_plan | tail -n 1 | jq -c .new_rows)

job=$(head -n 1 "$RUN/r.events" | jq -r .job)
timeout $((150 * SLOW)) "$BIN/jace-spawner" resume "$job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/resume.out" 2>"$RUN/resume.err" &
resumed=$!
resuming () { has_event r resume || ! kill -0 "$resumed"; }
wait_for 30 resuming
gave_up () {        #  gave_up NAME: its log says it went back
    grep -q "the rebalance's block (epoch [0-9]*, [0-9]* of [0-9]* bytes in) was still loading as its spawner died; back on epoch" \
        "$RUN/$1.log"
}
#  fast1's block is the larger of B's (about 1.9 MB, 7 s at 2 Mb/s): it is
#  still coming when the resume asks.  half1's is a quarter of it: on a
#  slow machine it may be in by then (half1 is then on the new cut like
#  z1, and given its old rows again), or the spawner may have died before
#  it sent half1 its block (half1 then simply runs the old cut).
reassigned () {     #  reassigned NAME: the resume gave it its old rows
    grep -q "on $1 held a rebalance's rows it never started on: assigned its old rows again" \
        "$RUN/resume.err"
}
both=""
for name in fast1 half1; do
    gave_up "$name" && reassigned "$name" && both="$both $name"
done
event r resume | jq -e --argjson old "$old_rows" \
    '.answered == 3 and .daemons + .reassigned == 3 and .reassigned >= 1
     and .rows == $old' >/dev/null && [ -z "$both" ]
ok $? "the resume adopts the daemons that run the old cut (those of B that gave up their block among them), and assigns the others their old rows again: $(event r resume |
    jq -c '{answered, daemons, reassigned, rows}') (the rebalance cut $old_rows to $new_rows)${both:+; gave up and reassigned:$both}"

gave_up fast1
ok $? "fast1, whose block could not have come, gave it up"

#  z1 took its new block at once, and is assigned its old rows again, at
#  epoch 3; no daemon is lost or replaced
[ -z "$(event r dead)" ] && [ -z "$(event r replace)" ] &&
    grep -q "task 2 of job $job assigned again, epoch 3" "$RUN/z1.log"
ok $? "z1, on the new cut that never started, takes its old rows again; nothing is placed anew"

#  The job goes on: a snapshot sampled after the resume is verified
converged () {
    jq -e -s '(map(.event) | index("resume")) as $at
        | $at != null and ([.[$at:][] | select(.event == "verification"
                                              and .residual < 1e-9)]
                           | length > 0)' "$RUN/r.events" >/dev/null
}
converging () { converged || ! kill -0 "$resumed"; }
wait_for $((90 * SLOW)) converging
converged
ok $? "the resumed job converges (a verified residual under 1e-9)"

"$BIN/jace-spawner" cancel "$job" --supernode "$SN" >"$RUN/cancel.out" 2>&1
ok $? "the resumed job is cancelled"
wait "$resumed"
diag "$(jq -c 'select(.event | test("plan|resume|rebalance_(plan|assign|done|fallback)|dead|replace"))
               | {event, time, rows, new_rows, task, daemon, reason}
               | with_entries(select(.value != null))' "$RUN/r.events")"
diag "$(grep -h "back on epoch\|never started\|refused\|replacing" "$RUN"/*.log "$RUN/resume.err")"
lib_finish
