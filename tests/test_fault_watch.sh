#!/bin/sh
#  test_fault_watch - a daemon whose process dies is declared dead at once
#
#  A job whose detector would wait 30 s of silence (job/heartbeat_timeout)
#  loses a task's daemon to SIGKILL: its link drops and its port refuses
#  the spawner, which declares it dead for that reason, replaces it and
#  ends with a verified answer, long before the silence's bound.  Frozen
#  daemons keep their connections (test_fault_replace: no daemon of a
#  stalled job is declared dead).  The job's last round waits for a file
#  the test creates after the crash (exchange/hold_file), so the job
#  outlasts it on any machine.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 8

cat >"$RUN/x.job" <<JOB
job
    application = "exchange"
    mode = "async"
    tasks = 3
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    heartbeat_timeout = 30000
    stall_snapshots = 0
exchange
    rounds = 30
    bytes = 2000
    pause_ms = 100
    hold_file = "$RUN/open"
checkpoint
    every_seconds = 1
JOB

start_supernode sn --heartbeat 200 --timeout 1000
for i in 1 2 3 4 5; do
    start_daemon d$i --supernode "$SN"
done
check "5 daemons register" wait_for 15 count_is 5 "$SN"
submit watched "$RUN/x.job" "$SN" &
job=$!
wait_for $((60 * SLOW)) all_iterate "$RUN/watched.events" 3
ok $? "the 3 tasks iterate"
victim=$(daemon_of watched 1)
eval "crash \$PID_$victim"
wait_for $((20 * SLOW)) has_event watched dead
touch "$RUN/open"
wait "$job"
ok $? "the job that lost $victim exits 0"
job_residual watched >/dev/null
ok $? "with a verified answer"
event watched dead | jq -s -e --arg v "$victim" 'length == 1
    and .[0].daemon == $v
    and (.[0].reason | startswith("its link dropped and its port refused"))
    and .[0].silent_ms < 30000' >/dev/null
ok $? "$victim was declared dead because its port refused the spawner"
diag "$(event watched dead | jq -c '{daemon, silent_ms, reason}')"
has_task_event watched restored 1
ok $? "and task 1 went on elsewhere"
lib_finish
