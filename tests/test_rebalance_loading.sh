#!/bin/sh
#  test_rebalance_loading - a spawner killed while its rebalance's new
#  blocks are still on their way: the daemons go back to the rows they
#  run, and the resumed job keeps every one of them
#
#  Two daemons of cluster B take a file matrix from cluster Z over a
#  2 Mb/s backbone, so that each block takes seconds to arrive (a third
#  daemon, in Z, is there for the grid to have the root's cluster;
#  mapping = simple takes cluster B's daemons first).  The job
#  rebalances by itself (job/rebalance = auto, a threshold of 1%: the
#  daemons run at speeds 1 and 0.5), and its spawner is killed (SIGKILL)
#  as soon as it re-assigns the tasks: the new blocks have begun to
#  stream, and the backbone's rate, not the machine, says they are
#  seconds from done.  Before, a daemon still loading its new block did
#  not answer the resume's ADOPT (its worker's answer was of the old
#  epoch, and dropped); the resume released both and, finding no daemon
#  to adopt, failed the job.  Now each gives up the block that will never
#  come and answers with the task it runs: the job resumes on the old
#  cut, every daemon adopted, and goes on to a verified residual.  Its
#  tolerance is out of reach, so that it cannot end before the checks
#  however fast the machine; it is cancelled.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 8

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
EOF
start_supernode sn
start_daemon fast1 --supernode "$SN" --speed 1 --cluster B \
    --platform "$RUN/far.platform"
start_daemon half1 --supernode "$SN" --speed 0.5 --cluster B \
    --platform "$RUN/far.platform"
start_daemon z1 --supernode "$SN" --cluster Z --platform "$RUN/far.platform"
check "three daemons register" wait_for 15 count_is 3 "$SN"
"$BIN/jace-mmgen" poisson2d 200 "$RUN/p.mtx" --rhs "$RUN/p_rhs.mtx" \
    >/dev/null
cat >"$RUN/r.job" <<JOBFILE
job
    application = "multisplit"
    tasks = 2
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

event () {          #  event EVENT: its lines in the job's log
    jq -c "select(.event == \"$1\")" "$RUN/r.events" 2>/dev/null
}
has_event () {      #  has_event EVENT
    [ -n "$(event "$1")" ]
}

"$BIN/jace-spawner" submit "$RUN/r.job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/r.out" 2>"$RUN/r.err" &
submitted=$!
reassigning () {     #  true once it re-assigns, or can no more
    has_event rebalance_assign || ! kill -0 "$submitted"
}
wait_for 120 reassigning
has_event rebalance_assign
seen=$?
kill -KILL "$submitted"
wait "$submitted" 2>/dev/null
[ $seen -eq 0 ] && [ -z "$(event rebalance_done)" ]
ok $? "the spawner is killed as it re-assigns the tasks of a rebalance"
old_rows=$(event rebalance_plan | tail -n 1 | jq -c .old_rows)
new_rows=$(event rebalance_plan | tail -n 1 | jq -c .new_rows)

job=$(head -n 1 "$RUN/r.events" | jq -r .job)
timeout 150 "$BIN/jace-spawner" resume "$job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/resume.out" 2>"$RUN/resume.err" &
resumed=$!
resuming () { has_event resume || ! kill -0 "$resumed"; }
wait_for 30 resuming
event resume | jq -e --argjson old "$old_rows" \
    '.daemons == 2 and .rows == $old' >/dev/null
ok $? "both daemons answer the resume, on the rows they ran: $(event resume |
    jq -c '{daemons, rows}') (the rebalance cut $old_rows to $new_rows)"

gave_up () {        #  gave_up NAME: its log says it went back
    grep -q "the rebalance's block (epoch [0-9]*, [0-9]* of [0-9]* bytes in) was still loading as its spawner died; back on epoch" \
        "$RUN/$1.log"
}
gave_up fast1 && gave_up half1
ok $? "each daemon gave up the block that could not come"

#  Nothing was lost: no daemon released, none dead
[ -z "$(event dead)" ] && [ -z "$(event replace)" ]
ok $? "no task is placed anew"

#  The job goes on: a snapshot sampled after the resume is verified
converged () {
    jq -e -s '(map(.event) | index("resume")) as $at
        | $at != null and ([.[$at:][] | select(.event == "verification"
                                              and .residual < 1e-9)]
                           | length > 0)' "$RUN/r.events" >/dev/null
}
converging () { converged || ! kill -0 "$resumed"; }
wait_for 90 converging
converged
ok $? "the resumed job converges (a verified residual under 1e-9)"

"$BIN/jace-spawner" cancel "$job" --supernode "$SN" >"$RUN/cancel.out" 2>&1
ok $? "the resumed job is cancelled"
wait "$resumed"
diag "$(jq -c 'select(.event | test("plan|resume|rebalance_(plan|assign|done|fallback)|dead|replace"))
               | {event, time, rows, new_rows, task, daemon, reason}
               | with_entries(select(.value != null))' "$RUN/r.events")"
diag "$(grep -h "back on epoch\|refused\|replacing" "$RUN"/*.log "$RUN/resume.err")"
lib_finish
