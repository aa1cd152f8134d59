#!/bin/sh
#  test_daemon_speed_load - an emulated slow node stays as slow as its
#  speed says while other processes hold its core
#
#  Two daemons at speed 0.05: d1 shares CPU 0 with eight CPU-bound
#  processes, d2 has CPU 1.  The slowness a daemon owes after an
#  iteration is in proportion to the CPU the iteration used.  Taken from
#  the wall clock, an iteration the hogs delayed cost d1 19 times the
#  delay more: it made 0.3 to 0.5 times d2's iterations (1 to 1.1 now),
#  and on a machine at load 150 tasks of slow nodes stood still for up
#  to two minutes.  Checked once d2's task has made 300 iterations
#  (progress, not time): d1's has made at least 0.6 times as many.
. "$(dirname "$0")/lib.sh"
lib_init heavy
command -v taskset >/dev/null 2>&1 && taskset -c 1 true 2>/dev/null ||
    skip_all "needs taskset and a second CPU"
plan 5

start_supernode sn
taskset -c 0 "$BIN/jace-daemon" --id d1 --power 1 --heartbeat 200 \
    --speed 0.05 --supernode "$SN_sn" 2>"$RUN/d1.log" &
lib_pids="$lib_pids $!"
taskset -c 1 "$BIN/jace-daemon" --id d2 --power 1 --heartbeat 200 \
    --speed 0.05 --supernode "$SN_sn" 2>"$RUN/d2.log" &
lib_pids="$lib_pids $!"
check "the grid lists both daemons" wait_for 20 count_is 2 "$SN_sn"
#  Bounded in time, should the test end before it stops them
hogs=""
for i in 1 2 3 4 5 6 7 8; do
    timeout 200 taskset -c 0 sh -c 'while :; do :; done' &
    hogs="$hogs $!"
done

timeout 260 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_sn" -q --set job/tasks=2 --set job/mapping=simple \
    --set problem/n=1000 --set job/tolerance=1e-30 \
    --set job/max_seconds=240 --events "$RUN/job.events" \
    >/dev/null 2>"$RUN/job.err" &
spawner=$!
#  The newest iteration task of daemon $1 reported
iterations_of () {
    jq -s -r "(map (select (.event == \"assign\" and .daemon == \"$1\"))
               [0].task) as \$t
              | [.[] | select (.event == \"progress\" and .task == \$t)
                | .iteration] | max // 0" "$RUN/job.events"
}
d2_passed () { [ "$(iterations_of d2)" -ge 300 ]; }
wait_for 180 d2_passed
ok $? "d2's task makes 300 iterations"
d1=$(iterations_of d1); d2=$(iterations_of d2)
diag "iterations: d1 (its core shared with 8 hogs) $d1, d2 (a core of its own) $d2"
[ $((10 * d1)) -ge $((6 * d2)) ]
ok $? "d1, its core shared, keeps at least 0.6 of d2's pace ($d1 against $d2)"
kill $hogs "$spawner" 2>/dev/null
wait $hogs "$spawner" 2>/dev/null
lib_finish
