#!/bin/sh
#  test_rebalance_spawner - a spawner killed during a rebalance, and the
#  job resumed
#
#  A file-matrix job on a fast and a slow daemon rebalances by itself
#  (job/rebalance = auto, a threshold of 1%, so that the cut keeps
#  moving); its spawner is killed (SIGKILL) as soon as it re-assigns the
#  tasks.  `jace-spawner resume` finds every daemon on one cut (whichever
#  it is: the re-assignments may have reached them or died with the
#  spawner).  Then the fast daemon dies and a slow one replaces it, and
#  the resumed spawner rebalances again: the daemon it adopted runs our
#  task with no lease token of ours, so its new block comes sealed with
#  the job key (before, the daemon refused it and the job failed).  The job converges on the new cut, and is cancelled: its
#  tolerance is out of reach, so that it cannot end before the checks
#  however fast the machine.  test_spawner_resume checks that daemons
#  left on two cuts are refused.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 9

start_supernode sn
start_daemon fast1 --supernode "$SN" --speed 1
start_daemon slow1 --supernode "$SN" --speed 0.1
check "two daemons register" wait_for 15 count_is 2 "$SN"
"$BIN/jace-mmgen" poisson2d 100 "$RUN/p100.mtx" --rhs "$RUN/p100_rhs.mtx" \
    >/dev/null
cat >"$RUN/r.job" <<JOBFILE
job
    application = "multisplit"
    tasks = 2
    tolerance = 1e-300
    stall_snapshots = 0
    max_seconds = 100
    mapping = "simple"
    spares = 0
    rebalance = "auto"
    rebalance_threshold = 0.01
    heartbeat_timeout = 2000
problem
    kind = "matrix"
    matrix = "p100.mtx"
    rhs = "p100_rhs.mtx"
solver
    inner = "lu-banded"
checkpoint
    every_seconds = 1
report
    sample_seconds = 0.3
JOBFILE

#  Lines of EVENT after the resumption
after_resume () {   #  after_resume EVENT
    jq -c -s "(map(.event) | index(\"resume\")) as \$at
        | if \$at == null then empty
          else .[\$at:][] | select(.event == \"$1\") end" "$RUN/r.events"
}

"$BIN/jace-spawner" submit "$RUN/r.job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/r.out" 2>"$RUN/r.err" &
submitted=$!
wait_for 60 has_event r rebalance_assign
seen=$?
kill -KILL "$submitted"
[ $seen -eq 0 ] && [ -z "$(event r rebalance_done)" ]
ok $? "the spawner is killed as it re-assigns the tasks of a rebalance"
wait "$submitted" 2>/dev/null

job=$(head -n 1 "$RUN/r.events" | jq -r .job)
timeout 100 "$BIN/jace-spawner" resume "$job" --supernode "$SN" -q \
    --events "$RUN/r.events" >"$RUN/resume.out" 2>"$RUN/resume.err" &
resumed=$!
wait_for 30 has_event r resume
event r resume | jq -e '.rows | add == 10000' >/dev/null
ok $? "resume takes the job over, every daemon on one cut: $(event r resume | jq -c .rows)"

#  Make sure the rows must move again, whatever cut the daemons are on:
#  the fast daemon dies, and the only free one is slow too.  The resumed
#  spawner replaces it (a daemon leased now, with a token), then cuts the
#  rows again on it and on slow1, which it adopted (no token: sealed).
start_daemon slow2 --supernode "$SN" --speed 0.1
wait_for 15 count_is 1 "$SN" '.state == "free"'
crash "$PID_fast1"
replaced () { [ -n "$(after_resume replace)" ]; }
wait_for 30 replaced
rebalanced () {
    jq -e -s '(map(.event) | index("replace")) as $at
        | $at != null and ([.[$at:][] | select(.event == "rebalance_done")]
                           | length > 0)' "$RUN/r.events" >/dev/null
}
wait_for 60 rebalanced
ok $? "after a replacement, the resumed spawner cuts the rows again"
#  fast1 is lost: crashed.  A daemon may also be lost at the resume: one
#  too busy to answer ADOPT within its window is released and its task
#  placed anew (one still taking its new block goes back to the rows it
#  runs and answers: test_rebalance_loading).  Nothing else may lose
#  one.
! grep -q "refused its task" "$RUN/resume.err" \
    && jq -e -s '[.[] | select(.event == "dead")] as $dead
        | ($dead | any(.daemon == "fast1"))
          and ($dead | map(select(.reason != "did not answer the resume")
                           | .daemon) | unique - ["fast1"] == [])' \
        "$RUN/r.events" >/dev/null
ok $? "no daemon refused its new block; only fast1 was lost after the resume"
if grep -q '"did not answer the resume"' "$RUN/r.events"; then
    diag "a daemon did not answer the resume: the rebalance after the" \
         "replacement may have no adopted daemon"
fi
#  A snapshot sampled after that rebalance shows the job converging
converged () {
    jq -e -s '(map(.event) | rindex("rebalance_done")) as $at
        | $at != null and ([.[$at:][] | select(.event == "verification"
                                              and .residual < 1e-9)]
                           | length > 0)' "$RUN/r.events" >/dev/null
}
wait_for 60 converged
ok $? "and converges on its new cut (a verified residual under 1e-9)"

"$BIN/jace-spawner" cancel "$job" --supernode "$SN" >"$RUN/cancel.out" 2>&1
ok $? "the resumed job is cancelled"
wait "$resumed"
diag "$(jq -c 'select(.event | test("resume|rebalance_(plan|done|fallback)|dead|replace"))
               | {event, time, rows, new_rows, task, daemon, reason}
               | with_entries(select(.value != null))' "$RUN/r.events")"
diag "$(grep -h "refused\|replacing" "$RUN/r.err" "$RUN/resume.err")"
lib_finish
