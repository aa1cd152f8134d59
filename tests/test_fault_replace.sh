#!/bin/sh
#  test_fault_replace - a working daemon dies; its task moves and the job
#  still ends with a verified answer
#
#  A daemon crashed with SIGKILL is detected by heartbeat timeout, its task
#  is placed on a spare daemon with a new epoch (from its initial state),
#  the other tasks learn the new address, and the job converges.  A daemon
#  frozen with SIGSTOP past the timeout is replaced the same way, and when
#  resumed it is fenced: told to stop, it drops the task and is free again.
#  Every daemon of a job frozen at once for less than the mass-silence
#  bound (a stall of the machine, not crashes) loses nobody, nor does a
#  spawner frozen for much longer.
. "$(dirname "$0")/lib.sh"
#  Exact inner solves (the default, 1e-3, is several times faster) keep
#  each job running long enough for the crashes to land while it runs.
EXACT="--set solver/inner_tolerance=1e-12"
lib_init
plan 22

start_supernode sn --heartbeat 200 --timeout 1000
for i in 1 2 3 4 5 6; do
    start_daemon d$i --supernode "$SN_sn"
done
check "6 daemons register" wait_for 15 count_is 6 "$SN_sn"

#  working_daemon: the name of one daemon running a task.
working_daemon () {
    nodes_json "$SN_sn" | jq -r '[.[] | select(.state == "working")][0].id'
}

run_job () {    #  run_job NAME: in the background, pid in $job
    submit "$1" "$JACE_SRCDIR/examples/poisson3d.job" "$SN_sn" \
        --set job/tasks=4 $EXACT --set problem/n=40 --set job/tolerance=1e-9 \
        --set job/heartbeat_timeout=1000 &
    job=$!
    wait_for 30 grep -q '"event":"start"' "$RUN/$1.events"
}

#  Right after the start: the job needs hundreds of iterations, so it
#  certainly still runs whatever the machine's speed.
run_job crash
victim=$(working_daemon)
eval "crash \$PID_$victim"
diag "crashed $victim"
wait $job
ok $? "the job whose daemon was killed still exits 0"
residual=$(job_residual crash)
ok $? "with a verified residual ($residual)"
tail -n 1 "$RUN/crash.events" | jq -e '.replacements >= 1' >/dev/null
ok $? "the result counts the replacement"
grep -q "\"event\":\"dead\".*\"daemon\":\"$victim\"" "$RUN/crash.events"
ok $? "the dead daemon was detected"
grep -q '"event":"replace"' "$RUN/crash.events" \
    && grep -q '"event":"restart"' "$RUN/crash.events"
ok $? "its task was placed on another daemon and restarted"
check "the killed daemon leaves the registry" \
    wait_for 5 count_is 0 "$SN_sn" ".id == \"$victim\""

run_job freeze
frozen=$(working_daemon)
eval "frozen_pid=\$PID_$frozen"
kill -STOP "$frozen_pid"
wait_for 20 grep -q '"event":"replace"' "$RUN/freeze.events"
ok $? "a frozen daemon is replaced after the timeout"
kill -CONT "$frozen_pid"
wait $job
ok $? "the job with the frozen daemon exits 0"
job_residual freeze >/dev/null
ok $? "with a verified residual"
check "the resumed daemon was fenced" \
    grep -q '"event":"fenced"' "$RUN/freeze.events"
check "and is free again" \
    wait_for 10 count_is 1 "$SN_sn" ".id == \"$frozen\" and .state == \"free\""

#  The whole job's daemons freeze for 1.8 s: past their 1 s bound, under
#  the 3 s a mass silence is given.  Their silences straddle the bound by
#  up to a heartbeat; judged one check at a time, the first few to cross
#  it were lost before the others counted as silent at once.
run_job stall
pids=""
for id in $(nodes_json "$SN_sn" |
            jq -r '.[] | select(.state == "working") | .id'); do
    eval "pids=\"\$pids \$PID_$id\""
done
# shellcheck disable=SC2086
kill -STOP $pids
sleep 1.8
# shellcheck disable=SC2086
kill -CONT $pids
wait $job
status=$?
frozen_count=$(echo $pids | wc -w)
#  At least two working daemons frozen: the job was running, and the
#  freeze was a mass silence, not one daemon's
[ $status -eq 0 ] && [ "$frozen_count" -ge 2 ]
ok $? "a job whose daemons all froze for 1.8 s exits 0 ($frozen_count frozen)"
! grep -q '"event":"dead"' "$RUN/stall.events"
ok $? "no daemon is declared dead for a stall of them all"

#  The spawner itself frozen for 10 s, ten bounds: more than the four its
#  own stalls excuse, but the daemons' messages of those seconds wait in
#  its sockets, and a daemon whose messages wait unread has spoken.
run_job spawner_frozen
spawner_pids=$(pgrep -f "spawner_frozen.events")
# shellcheck disable=SC2086
kill -STOP $spawner_pids
sleep 10
# shellcheck disable=SC2086
kill -CONT $spawner_pids
wait $job
ok $? "a job whose spawner froze for 10 s exits 0"
! grep -q '"event":"dead"' "$RUN/spawner_frozen.events"
ok $? "and its spawner declares none of its daemons dead"

#  A daemon that dies while free stays listed until its super-node's
#  timeout (5 s here); a job that leases it in that window replaces it
#  before the start instead of failing.  It has the most power, so the
#  super-node, which leases the fastest first, hands it out.
start_supernode slow --heartbeat 200 --timeout 5000
start_daemon e1 --supernode "$SN_slow"
start_daemon e2 --supernode "$SN_slow"
start_daemon fast --supernode "$SN_slow" --power 5
check "3 daemons register, one of power 5" \
    wait_for 15 count_is 3 "$SN_slow"
crash "$PID_fast"
submit stale "$JACE_SRCDIR/examples/poisson3d.job" "$SN_slow" \
    --set job/tasks=2 --set problem/n=16 --set job/heartbeat_timeout=1000
ok $? "a job that leased a dead daemon still exits 0"
grep -q '"event":"dead".*"daemon":"fast"' "$RUN/stale.events" \
    && grep -q '"event":"replace"' "$RUN/stale.events"
ok $? "the dead daemon was replaced before the start"
job_residual stale >/dev/null
ok $? "with a verified residual"
lib_finish
