#!/bin/sh
#  test_platform_job - two peered super-nodes, eight daemons, one job
#
#  4 daemons register with each super-node; a job of 8 tasks must use
#  daemons of both, exit 0 and report a true relative residual under its
#  tolerance; `nodes` on either super-node shows all 8; everything stops
#  cleanly on SIGTERM.
. "$(dirname "$0")/lib.sh"
lib_init
plan 15

start_supernode one
start_supernode two --peer "$SN_one"
for i in 1 2 3 4; do
    start_daemon a$i --cluster A --supernode "$SN_one" --supernode "$SN_two"
    start_daemon b$i --cluster B --supernode "$SN_two" --supernode "$SN_one"
done

check "super-node one lists all 8 daemons" wait_for 15 count_is 8 "$SN_one"
check "super-node two lists all 8 daemons" wait_for 15 count_is 8 "$SN_two"
check "every daemon is free before the job" \
    count_is 8 "$SN_one" '.state == "free"'

#  An answer with nowhere to go is refused before the job runs: a
#  verified answer was lost to a mistyped folder, after the whole solve
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_one" --out "$RUN/missing/x.npy" >"$RUN/noout.out" 2>&1
[ $? -eq 2 ] && grep -q "missing/x.npy: its folder does not exist" \
    "$RUN/noout.out" && count_is 8 "$SN_one" '.state == "free"'
ok $? "--out into a missing folder is bad usage, before any daemon is leased"
#  So are an event log that cannot be written (the spawner aborted on
#  an assertion) and a plot of a format the report cannot draw (said
#  only after the job).
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_one" --events "$RUN/missing/e.jsonl" >"$RUN/noev.out" 2>&1
[ $? -eq 2 ] && grep -q "events .*missing/e.jsonl: its folder does not exist" \
    "$RUN/noev.out"
ok $? "--events into a missing folder is bad usage"
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_one" --events "$RUN/p.events" --report "$RUN/p.txt" \
    --plot "$RUN/p.gif" >"$RUN/gif.out" 2>&1
[ $? -eq 2 ] && grep -q "p.gif: unknown plot format; name the file .png or .svg" \
    "$RUN/gif.out" && [ ! -e "$RUN/p.events" ] &&
    count_is 8 "$SN_one" '.state == "free"'
ok $? "--plot of an unknown format is bad usage, before any daemon is leased"
submit job "$JACE_SRCDIR/examples/poisson2d.job" "$SN_one" \
    --set job/tasks=8 --set job/tolerance=1e-6 --set problem/n=32 \
    --out "$RUN/x.npy"
ok $? "a job of 8 tasks exits 0"
residual=$(job_residual job)
ok $? "the last event is the result, with a residual ($residual)"
check "the residual is under the tolerance" \
    jq -n "$residual < 1e-6 and $residual > 0"
grep -q "residual .* (relative, true" "$RUN/job.out"
ok $? "the summary prints the true relative residual"
clusters=$(jq -r 'select(.event == "assign") | .cluster' "$RUN/job.events" \
           | sort -u | tr '\n' ' ')
[ "$clusters" = "A B " ]
ok $? "the job used daemons of both super-nodes ($clusters)"
#  1024 doubles after a 128-byte NumPy header.
[ "$(stat -c %s "$RUN/x.npy" 2>/dev/null || echo 0)" -eq $((128 + 1024 * 8)) ] \
    && head -c 6 "$RUN/x.npy" | grep -q NUMPY
ok $? "the answer is written as a NumPy array"
check "daemons are free again after the job" \
    wait_for 10 count_is 8 "$SN_two" '.state == "free"'

lib_finish
