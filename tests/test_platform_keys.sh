#!/bin/sh
#  test_platform_keys - CURVE on every link; strangers cannot register
#
#  A grid started with --keys DIR runs a job over encrypted links; a daemon
#  whose certificate is not in DIR cannot register, nor can a client
#  without keys read the registry; without keys a process refuses to bind
#  a non-loopback endpoint.
. "$(dirname "$0")/lib.sh"
lib_init
plan 10

"$BIN/jace-keygen" "$RUN/keys" >/dev/null
ok $? "jace-keygen makes the grid's certificates"
"$BIN/jace-keygen" "$RUN/rogue" rogue >/dev/null \
    && cp "$RUN/keys/supernode.cert" "$RUN/rogue/"
ok $? "a stranger makes its own certificate"

start_supernode sn --keys "$RUN/keys"
for i in 1 2 3; do
    start_daemon d$i --supernode "$SN_sn" --keys "$RUN/keys"
done
start_daemon stranger --supernode "$SN_sn" --keys "$RUN/rogue" --cert rogue

check "the 3 daemons with grid certificates register" \
    wait_for 10 count_is 3 "$SN_sn" true --keys "$RUN/keys"
sleep 1
kill -0 "$PID_stranger" \
    && count_is 0 "$SN_sn" '.id == "stranger"' --keys "$RUN/keys"
ok $? "the daemon with a foreign certificate runs but is not registered"
! timeout 10 "$BIN/jace-spawner" nodes --supernode "$SN_sn" --timeout 1000 \
    >/dev/null 2>&1
ok $? "a client without keys gets no answer"
submit secure "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set job/tasks=3 --set problem/n=24 --keys "$RUN/keys"
ok $? "a job runs over encrypted links"

! timeout 5 "$BIN/jace-supernode" --bind 'tcp://0.0.0.0:*' \
    >/dev/null 2>"$RUN/open.err"
ok $? "without keys, binding every interface is refused"
grep -q -- "--insecure" "$RUN/open.err"
ok $? "the refusal says how to override it"
lib_finish
