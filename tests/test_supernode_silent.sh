#!/bin/sh
#  tests/test_supernode_silent.sh - a super-node that does not answer is
#  named as such, within seconds
#
#  Nothing listens at tcp://127.0.0.1:1.  jace-spawner submit fails in a
#  few seconds saying that super-node does not answer (not, after
#  job/reserve_timeout, that daemons are missing); a daemon logs the same
#  and keeps trying.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 5

SILENT=tcp://127.0.0.1:1
start=$(now_msec)
timeout 20 "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SILENT" -q >/dev/null 2>"$RUN/submit.err"
rc=$?
elapsed=$(( $(now_msec) - start ))
[ $rc -eq 1 ] && grep -q "super-node $SILENT does not answer" "$RUN/submit.err"
ok $? "submit fails and names the super-node that does not answer"
! grep -q "start more daemons" "$RUN/submit.err"
ok $? "and does not blame the daemons"
diag "submit gave up after $elapsed ms"
#  job/reserve_timeout is 20 s in this job: well before it.
[ $elapsed -lt 10000 ]
ok $? "within a few seconds, not after job/reserve_timeout"

start_daemon lonely --supernode "$SILENT"
wait_for 15 grep -q "super-node $SILENT does not answer" "$RUN/lonely.log"
ok $? "a daemon logs that its super-node does not answer"
stop_all
ok $? "the daemon, still trying, exits 0 on SIGTERM"
