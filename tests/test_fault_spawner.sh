#!/bin/sh
#  test_fault_spawner - the super-node and the spawner fail mid-job
#
#  1. The super-node the spawner uses is crashed mid-job (by CRASH, through
#     `jace-spawner kill --crash-supernode`), then a daemon: the spawner
#     fails over to the other super-node, gets a replacement there, and the
#     job ends with a verified answer.
#  2. The spawner is crashed mid-job (SIGKILL); its daemons keep
#     iterating; `jace-spawner resume JOBID` rebuilds the job from them
#     and carries it to a verified answer, adding to the same event log;
#     the job's secret outlives the crashed spawner, and the resumed one
#     removes it at the end; resumed after the dead spawner's lease
#     lapsed, it holds the job again (listed with its owner).
. "$(dirname "$0")/lib.sh"
#  Exact inner solves (the default, 1e-3, is several times faster) keep
#  each job running long enough for the crashes to land while it runs.
EXACT="--set solver/inner_tolerance=1e-12"
lib_init
plan 25

JOB=$JACE_SRCDIR/examples/poisson3d.job
start_supernode a --heartbeat 200 --timeout 1000 --allow-crash
start_supernode b --heartbeat 200 --timeout 1000 --peer "$SN_a"
for i in 1 2 3 4 5; do
    start_daemon a$i --supernode "$SN_a" --supernode "$SN_b"
    start_daemon b$i --supernode "$SN_b" --supernode "$SN_a"
done
check "10 daemons register across two super-nodes" \
    wait_for 15 count_is 10 "$SN_b"
#  b was started without --allow-crash: it refuses, and kill says so
#  (it printed "crashed" and exited 0)
"$BIN/jace-spawner" kill --crash-supernode --supernode "$SN_b" \
    >"$RUN/kill-b.out" 2>&1
[ $? -eq 1 ] && grep -q "refused the CRASH and still runs" "$RUN/kill-b.out" \
    && running "$PID_b"
ok $? "kill --crash-supernode fails, saying why, on a super-node without --allow-crash"

#  1. Super-node a dies as soon as the job has started, task 1's daemon
#  when a task reaches iteration 150.  The job needs several hundred
#  iterations whatever the machine's speed, so both crashes land while it
#  runs, in that order.
submit supernode "$JOB" "$SN_a" --supernode "$SN_b" --set job/tasks=4 $EXACT \
    --set problem/n=44 --set job/tolerance=1e-10 \
    --set job/heartbeat_timeout=800 --set checkpoint/every_seconds=0.3 \
    --set faults/tasks=1 --set faults/first_iteration=150 &
job=$!
wait_for 20 grep -q '"event":"start"' "$RUN/supernode.events"
"$BIN/jace-spawner" kill --crash-supernode --supernode "$SN_a" \
    >"$RUN/kill-a.out" 2>&1
ok $? "kill --crash-supernode crashes a super-node started with --allow-crash"
gone () { ! running "$1"; }
wait_for 5 gone "$PID_a"
ok $? "which is gone"
wait $job
ok $? "the job whose super-node died exits 0"
job_residual supernode >/dev/null
ok $? "with a verified residual"
grep -q '"event":"failover"' "$RUN/supernode.events"
ok $? "the spawner failed over to the other super-node"
grep '"event":"replace"' "$RUN/supernode.events" | jq -s -e \
    'map(select(.task == 1)) | length == 1' >/dev/null
ok $? "and found a replacement there for the crashed daemon"
wait "$PID_a" 2>/dev/null
lib_pids=$(echo "$lib_pids" | tr ' ' '\n' | grep -vx "$PID_a" | tr '\n' ' ')
reap_dead

#  2. The spawner dies as soon as the job has started (hundreds of
#  iterations before it could end) and is resumed.
#  The spawner is started here, not through submit's timeout, so that $!
#  is the spawner itself: we crash it by its pid.
"$BIN/jace-spawner" submit "$JOB" --supernode "$SN_b" -q \
    --events "$RUN/orphan.events" --set job/tasks=4 $EXACT \
    --set problem/n=44 --set job/tolerance=1e-10 \
    --set job/heartbeat_timeout=800 >"$RUN/orphan.out" 2>"$RUN/orphan.err" &
submitted=$!
wait_for 20 grep -q '"event":"start"' "$RUN/orphan.events"
kill -KILL "$submitted"
wait $submitted 2>/dev/null
orphan_job=$(head -n 1 "$RUN/orphan.events" | jq -r .job)
iterations_then=$(nodes_json "$SN_b" | jq "[.[] | select(.job == \"$orphan_job\")] | length")
[ "$iterations_then" -eq 4 ]
ok $? "the spawner is gone; its 4 daemons still work for the job"
[ -f "$JACE_SECRETS/$orphan_job.secret" ]
ok $? "a crashed spawner leaves the job's secret for resume"
#  A daemon of the job dies too while it has no spawner, and the
#  super-nodes forget it: the resume counts a failure, not a daemon it
#  let go (it said "not taken back by the resume")
lost_daemon=$(daemon_of orphan 0)
crash "$(eval echo "\$PID_$lost_daemon")"
forgotten () { [ "$(nodes_json "$SN_b" | jq "[.[] | select(.id == \"$lost_daemon\")] | length")" -eq 0 ]; }
wait_for 20 forgotten
ok $? "its daemon $lost_daemon, killed meanwhile, is forgotten by the grid"
#  The dead spawner's lease lapses before the resume (a user may resume
#  minutes later): the resumed spawner must hold the job again, or `jobs`
#  lists it orphaned and `cancel` stops its daemons behind its back.
lapsed () { grep -q "lease $orphan_job not renewed, ended" "$RUN/b.log"; }
wait_for 30 lapsed
timeout 120 "$BIN/jace-spawner" resume "$orphan_job" --supernode "$SN_b" -q \
    --events "$RUN/orphan.events" >"$RUN/resume.out" 2>"$RUN/resume.err" &
resumed=$!
resuming () { grep -q '"event":"resume"' "$RUN/orphan.events" ||
              ! kill -0 "$resumed"; }
wait_for 60 resuming
#  Listed with its owner while it runs.  On a fast machine the resumed
#  job may end before `jobs` looks: its lease then ended by its release
#  ("lease J ended"), which without a lease begun again never happens.
released () { grep -q "supernode: lease $orphan_job ended$" "$RUN/b.log"; }
owned () {
    "$BIN/jace-spawner" jobs --supernode "$SN_b" --json >"$RUN/jobs.json" &&
        jq -e --arg job "$orphan_job" '.[] | select(.job == $job)
               | .state != "orphaned" and .owner != ""' "$RUN/jobs.json" \
        >/dev/null
}
owned_or_over () { owned || released || ! kill -0 "$resumed"; }
wait_for 10 owned_or_over
grep -q "lease $orphan_job had lapsed; renewed by its spawner" "$RUN/b.log" &&
    { owned || released; }
ok $? "after its lease lapsed, the resumed spawner holds the job again: $(jq -c --arg job "$orphan_job" '.[] | select(.job == $job)' "$RUN/jobs.json" 2>/dev/null)"
#  Only a job the grid's daemons work for: a HEARTBEAT of a made-up job
#  begins no lease.
"$BIN/tests/snclient" "$SN_b" heartbeat job-made-up >/dev/null 2>&1
"$BIN/tests/snclient" "$SN_b" status >"$RUN/status-made-up" 2>&1 &&
    grep -q "^node " "$RUN/status-made-up" &&
    ! grep -q "lease/job-made-up/" "$RUN/status-made-up"
ok $? "a HEARTBEAT of a job no daemon works for begins no lease"
wait $resumed
ok $? "resume carries the job to the end and exits 0"
job_residual orphan >/dev/null
ok $? "with a verified residual, in the same event log"
grep -q '"event":"resume"' "$RUN/orphan.events" \
    && [ "$(grep -c '"event":"start"' "$RUN/orphan.events")" -eq 1 ]
ok $? "which tells of the resumption, and of one start only"
[ ! -e "$JACE_SECRETS/$orphan_job.secret" ]
ok $? "the resumed job, over, removes its secret"
grep -q "^ended at .*Z: verified$" "$JACE_SECRETS/$orphan_job.ended"
ok $? "and records that it ended, and how, in its place"
"$BIN/jace-spawner" cancel "$orphan_job" --supernode "$SN_b" \
    >/dev/null 2>"$RUN/cancel-ended.err"
[ $? -eq 1 ] && grep -q "cannot control job $orphan_job: it ended at .*: verified" \
    "$RUN/cancel-ended.err"
ok $? "cancelling it then says it ended, not that its secret is missing"
grep -q "job $orphan_job: verified answer" "$RUN/resume.out"
ok $? "the summary names the job"
jq -s -e --arg d "$lost_daemon" '
    (map(select(.event == "dead" and .daemon == $d and .task == 0
                and (.reason | test("gone from the grid while the job had no spawner"))))
     | length == 1)
    and (map(select(.event == "unadopted" and .daemon == $d)) | length == 0)' \
    "$RUN/orphan.events" >/dev/null &&
    grep -q "^  replaced .*1 lost" "$RUN/resume.out"
ok $? "the daemon that died meanwhile is a failure the resume recovered, not one it let go"
diag "$(grep "^  replaced" "$RUN/resume.out")"
"$BIN/jace-spawner" resume job-nobody --supernode "$SN_b" -q \
    >/dev/null 2>"$RUN/resume-secret.err"
[ $? -eq 1 ] && grep -q "no secret for job job-nobody" \
    "$RUN/resume-secret.err"
ok $? "resuming a job without its secret is an error that says so"
#  A secret, but no daemon: any 40 Z85 digits make a key.
(umask 077; printf '%040d\n' 0 >"$JACE_SECRETS/job-nobody.secret")
"$BIN/jace-spawner" resume job-nobody --supernode "$SN_b" -q \
    >/dev/null 2>"$RUN/resume-none.err"
[ $? -eq 1 ] && grep -q "no daemon works for job job-nobody" \
    "$RUN/resume-none.err"
ok $? "resuming a job nobody runs is an error that says so"

lib_finish
