#!/bin/sh
#  test_stall_not_silence - a process that did not run for a while (a
#  stopped one; a starved one on a loaded machine) takes its own stall
#  for nobody's silence
#
#  A daemon stopped past its fail-over time (3 s), then continued,
#  stays with its super-node: it had sent no HELLO to answer.  A super-
#  node stopped past its daemons' timeout (1.5 s), then continued,
#  removes none of them: their HELLOs wait unread.  At load 150 a
#  128-daemon grid's daemons failed over, and its super-nodes removed
#  live daemons, hundreds of times a minute.  After each stall the
#  checks wait for the process to have run again (the daemon listed
#  anew, the super-node answering), not for a time.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 8

#  Heartbeats of 1 s: the daemon fails over after 3 s without a WELCOME
start_supernode a --heartbeat 1000 --timeout 1500
start_supernode b --heartbeat 1000 --timeout 1500 --peer "$SN_a"
"$BIN/jace-daemon" --id d1 --power 1 --heartbeat 1000 --supernode "$SN_a" \
    --supernode "$SN_b" 2>"$RUN/d1.log" &
PID_d1=$!
lib_pids="$lib_pids $PID_d1"
on_a='.id == "d1" and .supernode == "'"$SN_a"'"'
check "super-node a lists the daemon as its own" \
    wait_for 20 count_is 1 "$SN_a" "$on_a"

#  The super-node first: stopped 2 s, past the daemon's timeout, short
#  of the daemon's fail-over
kill -STOP "$PID_a"
sleep 2
kill -CONT "$PID_a"
#  Its overdue tick runs before it reads anything: once it answers, the
#  tick is done
check "super-node a answers again" wait_for 10 count_is 1 "$SN_a" "$on_a"
! grep -q "daemon d1 silent for" "$RUN/a.log"
ok $? "super-node a, stopped 2 s, removed no daemon for the silence"

#  The daemon: stopped 4 s.  Super-node a drops it meanwhile (it was
#  silent); continued, it says HELLO again, to a or, failing over, to b.
removals () { grep -c "daemon d1 silent for" "$RUN/a.log"; }
before=$(removals)
kill -STOP "$PID_d1"
check "super-node a drops the stopped daemon" \
    wait_for 10 sh -c "[ \$(grep -c 'daemon d1 silent for' '$RUN/a.log') -gt $before ]"
sleep 2.5
kill -CONT "$PID_d1"
check "the daemon is listed again once it runs" \
    wait_for 10 count_is 1 "$SN_a" '.id == "d1"'
count_is 1 "$SN_a" "$on_a" && ! grep -q "failing over" "$RUN/d1.log"
ok $? "stopped 4 s, it stayed with super-node a"
lib_finish
