#!/bin/sh
#  test_fetch_busy - a replacement waits for holders busy in an iteration
#
#  A holder answers a replacement's FETCH between two of its iterations.
#  The replacement used to give up after 500 ms and restart from its
#  initial state ("no valid copy survived") while a live neighbour held
#  its copy: drained tasks did so on a loaded machine.  Here each round
#  of the exchange application ends in a 3 s sleep (pause_ms) that serves
#  no message.  A task's daemon is killed just after a round, once every
#  task iterates: its replacement asks while the holders sleep, and they
#  answer a second or two late.  The task must come back from a
#  checkpoint, and the job end with every exchange delivered.  (On a
#  machine so loaded that the replacement comes after the holders wake,
#  they answer at once: the test then passes without testing the wait.)
. "$(dirname "$0")/lib.sh"
lib_init light
plan 6

cat >"$RUN/x.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tasks = 3
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    reserve_timeout = 20
    heartbeat_timeout = 1000
exchange
    rounds = 7
    bytes = 2000
    sizes = "random"
    seed = 9
    pause_ms = 3000
checkpoint
    every_seconds = 1
EOF

start_supernode sn --heartbeat 200 --timeout 1000
for i in 1 2 3 4; do
    start_daemon "d$i" --supernode "$SN_sn"
done
check "4 daemons register" wait_for 15 count_is 4 "$SN_sn"
submit busy "$RUN/x.job" "$SN_sn" &
job=$!
wait_for $((60 * SLOW)) all_iterate "$RUN/busy.events" 3
ok $? "every task iterates"
victim=$(grep '"event":"assign"' "$RUN/busy.events" |
         jq -r 'select(.task == 1) | .daemon' | head -n 1)
sleep 0.3
eval "crash \$PID_$victim"
wait "$job"
ok $? "task 1's daemon ($victim) killed: the job exits 0"
grep '"event":"restored"' "$RUN/busy.events" |
    jq -s -e 'length == 1 and .[0].task == 1 and .[0].from == "checkpoint"
              and .[0].iteration > 0' >/dev/null
ok $? "task 1 came back from a checkpoint its busy neighbours held"
grep '"event":"restored"' "$RUN/busy.events" | jq -c '{task, from,
    iteration, fetch_ms}' | while read -r line; do diag "$line"; done
lib_finish
