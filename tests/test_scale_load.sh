#!/bin/sh
#  tests/test_scale_load.sh - a busy machine and a big job
#
#  96 daemons on 6 peered super-nodes, on a 2-core machine with two
#  CPU-bound processes beside them; a 64-task 3D Poisson job.  Once the job
#  certainly runs (a task has passed iteration 10), 4 of its daemons are
#  SIGKILLed and one is SIGSTOPped until it has been replaced, then
#  resumed.  The job must still return a verified answer, no daemon may
#  ever hold two tasks, every live daemon must be free 10 s after the job,
#  and the idle super-nodes must wake no more often than the protocol's
#  messages need.
. "$(dirname "$0")/lib.sh"
lib_init
plan 12

SUPERNODES=6
PER_SUPERNODE=16
JOB=$JACE_SRCDIR/examples/poisson3d.job

#  Two CPU hogs, bounded: they die with the test at the latest.
hogs=""
for _ in 1 2; do
    timeout 600 sh -c 'while :; do :; done' &
    hogs="$hogs $!"
done
stop_hogs () { for pid in $hogs; do kill "$pid" 2>/dev/null; done; }
trap 'stop_hogs; lib_cleanup' EXIT

#  A full mesh of super-nodes: each new one peers with all before it.
peers=""
for s in $(seq 1 $SUPERNODES); do
    start_supernode "sn$s" $peers
    peers="$peers --peer $SN"
done
daemon=0
for s in $(seq 1 $SUPERNODES); do
    eval "own=\$SN_sn$s"
    next=$(( s % SUPERNODES + 1 ))
    eval "backup=\$SN_sn$next"
    for _ in $(seq 1 $PER_SUPERNODE); do
        daemon=$((daemon + 1))
        "$BIN/jace-daemon" --id "d$daemon" --power 1 --supernode "$own" \
            --supernode "$backup" --cluster "c$s" 2>"$RUN/d$daemon.log" &
        lib_pids="$lib_pids $!"
        eval "PID_d$daemon=$!"
    done
done
total=$((SUPERNODES * PER_SUPERNODE))
check "the first super-node lists all $total daemons, once each" \
    wait_for 60 count_is "$total" "$SN_sn1"
eval "last=\$SN_sn$SUPERNODES"
check "and so does the last one" wait_for 60 count_is "$total" "$last"

#  A sanitizer build runs everything SLOW times slower, replacements too.
submit big "$JOB" "$SN_sn1" --set job/tasks=64 --set problem/n=32 \
    --set job/tolerance=1e-8 --set job/max_seconds=$((110 * SLOW)) \
    --set job/reserve_timeout=$((30 * SLOW)) &
job=$!
#  Progress, not time: crash when a task has passed iteration 10.
past_iteration () {
    jq -s -e "map(select(.event == \"progress\" and .iteration >= $1)) \
              | length > 0" "$RUN/big.events" >/dev/null 2>&1
}
#  The victims are chosen before the job iterates, from its assign events:
#  on two cores shared with 96 daemons and two hogs every process the
#  test starts waits seconds for a core, and a query of the super-node
#  between the progress seen and the kills let a job on a faster machine
#  converge first (CI: 0 declared dead).  The kills are one command.
wait_for 60 jq -s -e 'map(select(.event == "assign")) | length >= 64' \
    "$RUN/big.events" || diag "the job placed fewer than 64 tasks in 60 s"
set -- $(jq -r 'select(.event == "assign") | .daemon' "$RUN/big.events" \
         | head -n 5)
victims="$1 $2 $3 $4"
frozen=$5
victim_pids=""
for victim in $victims; do
    eval "victim_pids=\"\$victim_pids \$PID_$victim\""
done
eval "frozen_pid=\$PID_$frozen"
wait_for 240 past_iteration 10
ok $? "the 64-task job starts and iterates beside two CPU hogs"
kill -KILL $victim_pids
kill -STOP "$frozen_pid"
for pid in $victim_pids; do
    crash "$pid"        #  Reaped, and no longer ours to clean up
done
diag "killed $victims, stopped $frozen"
wait_for 120 grep -q "\"event\":\"replace\".*" "$RUN/big.events"
frozen_replaced () {
    jq -s -e "map(select(.event == \"dead\" and .daemon == \"$frozen\")) \
              | length > 0" "$RUN/big.events" >/dev/null 2>&1
}
wait_for 120 frozen_replaced
kill -CONT "$frozen_pid"

wait $job
ok $? "the job exits 0 after 4 SIGKILLs and a SIGSTOP"
job_residual big >/dev/null
ok $? "with a verified residual"
#  No daemon is placed while it holds a task of the job: a daemon leaves
#  a task only when it says so (a "fenced" event with "stopped"), never
#  merely because the spawner suspected it.
twice=$(jq -s -r 'reduce .[] as $e ({holding: {}, bad: 0};
    if ($e.event == "assign" or $e.event == "replace") then
        (if .holding[$e.daemon] then .bad += 1 else . end)
        | .holding[$e.daemon] = true
    elif ($e.event == "fenced" and $e.stopped == true) then
        .holding[$e.daemon] = false
    else . end) | .bad' "$RUN/big.events")
[ "$twice" -eq 0 ]
ok $? "no daemon held two tasks ($twice placements on a busy daemon)"
dead=$(jq -r 'select(.event == "dead") | .daemon' "$RUN/big.events" \
       | sort -u | wc -l)
[ "$dead" -ge 5 ]
ok $? "all 5 lost daemons were detected ($dead declared dead)"

live=$((total - 4))
check "10 s after the job every live daemon is free" \
    wait_for 10 count_is "$live" "$SN_sn1" '.state == "free"'

#  Idle cost of the overlay, from /proc over 10 s: the super-nodes' CPU
#  (utime + stime) and their threads' wake-ups (voluntary context
#  switches).  What an idle overlay does is fixed by the protocol: each
#  second a HELLO from every daemon and its WELCOME, and from each peer a
#  PEER_STATE, a PING and a PONG answering ours, our PONG to its PING, and
#  a PONG from one daemon of each cluster.  Each message wakes a
#  super-node's I/O thread, and a received one its actor too: a loop of
#  messages between peers, or a timer that fires too often, shows as more
#  wake-ups, whatever the machine's speed.  The CPU those wake-ups cost
#  does depend on the machine: 4-9% of a core on the same VM on different
#  days (0.1-0.3 ms a wake-up), so the CPU bound is for a loop that never
#  sleeps, which takes a whole core.
overlay_counters () {   #  prints "cpu_ticks wake_ups"
    t=0 w=0
    for s in $(seq 1 $SUPERNODES); do
        eval "pid=\$PID_sn$s"
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
        for status in /proc/"$pid"/task/*/status; do
            w=$((w + $(awk '$1 == "voluntary_ctxt_switches:" { print $2 }' \
                       "$status")))
        done
    done
    echo "$t $w"
}
set -- $(overlay_counters)
sleep 10
set -- $(overlay_counters) "$@"
hz=$(getconf CLK_TCK)
percent=$(awk "BEGIN { printf \"%.2f\", ($1 - $3) * 100 / $hz / 10 }")
wake_ups=$(( ($2 - $4) / 10 ))
peers=$((SUPERNODES * (SUPERNODES - 1)))
scheduled=$(( 2 * total + 4 * peers + SUPERNODES * SUPERNODES ))
diag "idle super-nodes: $percent% of one core together; $wake_ups" \
     "wake-ups a second for $scheduled messages the protocol schedules"
[ "$wake_ups" -le $((3 * scheduled)) ]
ok $? "the idle super-nodes wake at most 3 times a second per message the protocol schedules"
awk "BEGIN { exit !($percent < 20) }"
ok $? "and use under 20% of one core together (no loop that never sleeps)"

stop_hogs
lib_finish
