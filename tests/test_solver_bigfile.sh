#!/bin/sh
#  tests/test_solver_bigfile.sh - Matrix Market files of any size
#
#  A 216,000-row 3D Poisson file (1.49 M entries, 24 MB) is solved on 2
#  and on 8 tasks: its rows travel to the daemons in chunks, never inside
#  an ASSIGN.  A 260 MB file (2.1 M rows, 14.6 M entries) streams to 2
#  tasks, which run two iterations; the spawner's peak memory stays under
#  twice the file's size (it holds the matrix once, plus one task's rows
#  being sent).
. "$(dirname "$0")/lib.sh"
lib_init
plan 11

start_supernode sn --heartbeat 200 --timeout 1000
for d in $(seq 1 8); do
    start_daemon "d$d" --supernode "$SN_sn"
done
check "eight daemons register" wait_for 20 count_is 8 "$SN_sn"

"$BIN/jace-mmgen" poisson3d 60 "$RUN/p60.mtx" >/dev/null
ok $? "jace-mmgen writes a 216,000-row 3D Poisson file"
cat >"$RUN/p60.job" <<JOB
job
    application = "multisplit"
    tasks = 2
    tolerance = 1e-8
    max_seconds = 110
problem
    kind = "matrix"
    matrix = "p60.mtx"
JOB
submit two "$RUN/p60.job" "$SN_sn"
ok $? "the 216,000-row file is solved on 2 tasks"
job_residual two >/dev/null
ok $? "with a verified residual"
submit eight "$RUN/p60.job" "$SN_sn" --set job/tasks=8
ok $? "and on 8 tasks"
job_residual eight >/dev/null
ok $? "with a verified residual"

"$BIN/jace-mmgen" poisson3d 128 "$RUN/p128.mtx" >/dev/null
size_mib=$(( $(stat -c %s "$RUN/p128.mtx") / 1048576 ))
sed 's/p60/p128/' "$RUN/p60.job" >"$RUN/p128.job"
submit huge "$RUN/p128.job" "$SN_sn" --set job/max_iterations=2
[ $? -eq 1 ] && grep -q "no convergence within job/max_iterations = 2" \
    "$RUN/huge.err"
ok $? "a ${size_mib} MiB file streams to 2 tasks, which iterate"
grep -q '"event":"start"' "$RUN/huge.events"
ok $? "both tasks set up from the streamed rows and start"
peak=$(tail -n 1 "$RUN/huge.events" | jq .peak_rss_mib)
diag "spawner peak memory ${peak} MiB for a ${size_mib} MiB file"
if [ "$SLOW" -gt 1 ]; then
    #  AddressSanitizer's shadow memory and redzones inflate every RSS.
    skip "peak memory is not measured in a sanitizer build"
else
    awk "BEGIN { exit !($peak < 2 * $size_mib) }"
    ok $? "the spawner never holds the file twice ($peak MiB)"
fi
rm -f "$RUN/p128.mtx" "$RUN/p60.mtx"
lib_finish
