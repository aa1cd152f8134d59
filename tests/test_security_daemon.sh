#!/bin/sh
#  test_security_daemon - a local process that knows a daemon's endpoints
#  and a job's id, but not its lease key nor the job key, steers nothing
#
#  One check per attack of issue 12 on daemons, with rawzmq as the raw
#  client: ASSIGN of a free daemon without or with a made-up lease token;
#  STOP, CRASH, ADOPT, REMAP, COLLECT, START of a working daemon unsealed or
#  sealed with another key; FETCH of a task's copies to the attacker; DATA
#  at iteration 2^62; forged and relabelled checkpoints.  Each is refused,
#  the daemons keep serving, and the job running beside the attacks
#  verifies in about the time the same job takes undisturbed.
#  (test_daemon_protocol proves the same in one process, without a
#  super-node or spawner.)
. "$(dirname "$0")/lib.sh"
lib_init
plan 15
RAW=$BIN/tests/rawzmq

start_supernode sn
for i in 1 2 3 4; do
    start_daemon d$i --supernode "$SN_sn"
done
check "4 daemons register" wait_for 10 count_is 4 "$SN_sn"

#  1. Free daemons: no lease token, no daemon.
refused=0
for control in $(nodes_json "$SN_sn" | jq -r '.[].endpoint'); do
    out=$(timeout 60 "$RAW" "$control" steer job-evil)
    [ "$out" = "refusals=3 answers=0" ] && refused=$((refused + 1))
done
[ "$refused" = 4 ]
ok $? "ASSIGN without a lease token or with a made-up one: refused by all 4"
sleep 0.5
check "all 4 daemons are still free" count_is 4 "$SN_sn" '.state == "free"'

#  2. The job undisturbed, for its normal time.
JOB="$JACE_SRCDIR/examples/poisson2d.job"
ARGS="--set job/tasks=4 --set problem/n=48 --set checkpoint/every_iterations=5"
start=$(now_msec)
submit calm "$JOB" "$SN_sn" $ARGS
ok $? "a job without attacks verifies"
calm=$(( $(now_msec) - start ))
diag "undisturbed: $calm ms"

#  3. The same job under every attack.
start=$(now_msec)
submit attacked "$JOB" "$SN_sn" $ARGS &
attacked=$!
wait_for 20 grep -q '"event":"start"' "$RUN/attacked.events"
job=$(head -n 1 "$RUN/attacked.events" | jq -r .job)
wait_for 10 count_is 4 "$SN_sn" ".job == \"$job\""
nodes_json "$SN_sn" | jq -r ".[] | select(.job == \"$job\")
    | .endpoint + \" \" + .data" >"$RUN/victims"
#  Every daemon is attacked at once, so that the attacks land while the
#  job runs however fast this machine is; the daemons' logs then say they
#  refused them as messages of the job they were running.
pids=""
i=0
while read -r control data; do
    (
        out=$(timeout 60 "$RAW" "$control" steer "$job")
        echo "${out##*answers=}" >"$RUN/answers.$i"
        out=$(timeout 60 "$RAW" "$data" data "$job" 1)
        echo "${out##*copies=}" >"$RUN/copies.$i"
        timeout 60 "$RAW" "$data" forge "$job" 1 2>/dev/null
    ) &
    pids="$pids $!"
    i=$((i + 1))
done <"$RUN/victims"
for pid in $pids; do wait "$pid"; done
answers=0; copies=0
for n in 0 1 2 3; do
    answers=$((answers + $(cat "$RUN/answers.$n" 2>/dev/null || echo 99)))
    copies=$((copies + $(cat "$RUN/copies.$n" 2>/dev/null || echo 99)))
done
[ "$(wc -l <"$RUN/victims")" = 4 ]
ok $? "the attacks reached the job's 4 daemons"
[ "$answers" = 0 ]
ok $? "STOP, CRASH, ADOPT, REMAP, COLLECT, START knowing only the job id: nothing answered"
[ "$copies" = 0 ]
ok $? "FETCH on behalf of task 1: no copy sent to the attacker"
[ "$(grep -l "not sealed with the key of job '$job'" "$RUN"/d*.log \
     | wc -l)" -eq 4 ]
ok $? "all 4 daemons refused them as messages of the job they were running"
wait $attacked
ok $? "the attacked job verifies"
took=$(( $(now_msec) - start ))
diag "under attack: $took ms"
[ "$took" -le $(( 3 * calm + 5000 )) ]
ok $? "in about its normal time (no frozen values)"
! cat "$RUN"/d*.log | grep -q "checkpoint of iteration 999999"
ok $? "no forged checkpoint was restored"
[ "$(cat "$RUN"/d*.log | grep -c 'unauthorised so far')" -ge 8 ]
ok $? "the daemons audited the attacks (logged with address and count)"
submit after "$JOB" "$SN_sn" $ARGS
ok $? "a job run afterwards verifies"
lib_finish
