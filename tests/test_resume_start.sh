#!/bin/sh
#  test_resume_start - a spawner that dies between its tasks' ACCEPTs and
#  their STARTs is resumed, and the job still ends verified
#
#  The tasks run tests/app_gate.c, built here as a plugin: each task's
#  setup waits until a gate file exists.  The spawner is killed once every
#  task is in its setup (each writes a mark when it begins, so the test
#  acts on progress, not on the clock): no task has accepted, so the
#  spawner has sent no START.  Then the gate opens, the tasks accept a
#  spawner that is gone, and wait for a START.  jace-spawner resume must
#  start them: before it did, the job stayed at iteration 0 until its cap.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 7

mkdir "$RUN/apps"
# shellcheck disable=SC2046
cc -O2 -fPIC -shared -I"$JACE_SRCDIR/runtime" $(pkg-config --cflags libczmq) \
    -o "$RUN/apps/gate.so" "$JACE_SRCDIR/tests/app_gate.c" \
    -L"$JACE_BUILDDIR/runtime/.libs" -ljace -lm 2>"$RUN/cc.err"
ok $? "the gate application builds as a plugin"
JACE_APPS=$RUN/apps; export JACE_APPS

start_supernode sn --heartbeat 200
start_daemon d1 --supernode "$SN_sn" --heartbeat 200
start_daemon d2 --supernode "$SN_sn" --heartbeat 200
wait_for 15 count_is 2 "$SN_sn"

GATE=$RUN/gate
cat >"$RUN/gate.job" <<JOBFILE
job
    application = "gate"
    tasks = 2
    tolerance = 1e-8
    max_seconds = 60
problem
    n = 1000
gate
    file = "$GATE"
JOBFILE

"$BIN/jace-spawner" submit "$RUN/gate.job" --supernode "$SN_sn" -q \
    --events "$RUN/gate.events" >"$RUN/gate.out" 2>"$RUN/gate.err" &
submitted=$!
wait_for 30 test -e "$GATE.setup-0" -a -e "$GATE.setup-1"
setups=$?
kill -KILL "$submitted"
wait "$submitted" 2>/dev/null
[ $setups -eq 0 ] && ! grep -q '"event":"start"' "$RUN/gate.events"
ok $? "the spawner is killed while both tasks set up, before any START"

touch "$GATE"
job=$(head -n 1 "$RUN/gate.events" | jq -r .job)
timeout 60 "$BIN/jace-spawner" resume "$job" --supernode "$SN_sn" -q \
    --events "$RUN/gate.events" >"$RUN/resume.out" 2>"$RUN/resume.err"
ok $? "resume carries the job to the end and exits 0"
residual=$(job_residual gate)
[ -n "$residual" ] && jq -en "$residual <= 1e-8" >/dev/null
ok $? "with a verified residual (${residual:-none})"
grep -q '"event":"resume"' "$RUN/gate.events"
ok $? "and the event log tells of the resumption"
lib_finish
