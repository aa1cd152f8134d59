#!/bin/sh
#  test_platform_keys - per-host identities, CURVE on every link, strangers
#  kept out and logged
#
#  jace-keygen makes one certificate per host and role (a super-node sn,
#  daemons d1 and d2, a user alice); each "host" gets a folder of its own
#  with every public certificate and only its own secret, as
#  docs/SECURITY.md says to copy them.  A grid started that way runs a job
#  over encrypted links; a secret file others may read is refused; a
#  daemon whose certificate is not trusted cannot register, and the
#  super-node logs the refusal with the stranger's address and key; a
#  client without keys reads nothing; without keys a process refuses to
#  bind a non-loopback endpoint.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 17

"$BIN/jace-keygen" "$RUN/all" supernode:sn daemon:d1 daemon:d2 \
    spawner:alice >/dev/null 2>&1
ok $? "jace-keygen makes a certificate per host and role"
all=0
for name in sn d1 d2 alice; do
    mkdir -m 700 "$RUN/host-$name" &&
        cp "$RUN/all/"*.cert "$RUN/host-$name/" &&
        cp -p "$RUN/all/$name.cert_secret" "$RUN/host-$name/" || all=1
    [ "$(ls "$RUN/host-$name/"*.cert_secret | wc -l)" -eq 1 ] &&
        [ "$(ls "$RUN/host-$name/"*.cert | wc -l)" -eq 4 ] || all=1
done
ok $all "each host's folder holds every public certificate and only its own secret"
"$BIN/jace-keygen" "$RUN/rogue" daemon:rogue >/dev/null 2>&1 \
    && cp "$RUN/all/sn.cert" "$RUN/rogue/"
ok $? "a stranger makes its own daemon certificate"
rogue_key=$(sed -n 's/^ *public-key = "\(.*\)"$/\1/p' "$RUN/rogue/rogue.cert")

#  A secret others may read is no secret: the process refuses to start.
mkdir -m 700 "$RUN/loose" && cp -p "$RUN/host-sn/"* "$RUN/loose/" &&
    chmod 644 "$RUN/loose/sn.cert_secret"
timeout 10 "$BIN/jace-supernode" --bind 'tcp://127.0.0.1:*' \
    --keys "$RUN/loose" --cert sn >/dev/null 2>"$RUN/loose.out"
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ]
ok $? "a super-node whose secret certificate is mode 644 exits with an error"
grep -F "$RUN/loose/sn.cert_secret" "$RUN/loose.out" | grep -q "chmod 600"
ok $? "the error names the file and says how to fix it"

start_supernode sn --keys "$RUN/host-sn" --cert sn
for name in d1 d2; do
    start_daemon $name --supernode "$SN_sn" --keys "$RUN/host-$name" \
        --cert $name
done
start_daemon stranger --supernode "$SN_sn" --keys "$RUN/rogue" --cert rogue

alice="--keys $RUN/host-alice --cert alice"
# shellcheck disable=SC2086  # $alice is two options
check "the 2 daemons with their own host certificates register" \
    wait_for 10 count_is 2 "$SN_sn" true $alice
sleep 1
# shellcheck disable=SC2086
kill -0 "$PID_stranger" \
    && count_is 0 "$SN_sn" '.id == "stranger"' $alice
ok $? "the daemon with a foreign certificate runs but is not registered"
grep "authentication refused" "$RUN/sn.log" | grep -F "key $rogue_key" |
    grep -q "127.0.0.1"
ok $? "the super-node logs the refusal with the stranger's address and key"
[ -n "$rogue_key" ] || diag "no public key read from rogue.cert"
! timeout 10 "$BIN/jace-spawner" nodes --supernode "$SN_sn" --timeout 1000 \
    >/dev/null 2>&1
ok $? "a client without keys gets no answer"
grep -q "authentication refused: a client of .* failed the CURVE handshake" \
    "$RUN/sn.log"
ok $? "and the super-node logs the refused handshake"
! timeout 10 "$BIN/jace-spawner" nodes --supernode "$SN_sn" --timeout 1000 \
    --keys "$RUN/rogue" --cert rogue >/dev/null 2>&1
ok $? "nor does a client whose key is not trusted"

# shellcheck disable=SC2086
submit secure "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set job/tasks=2 --set problem/n=24 $alice
rc=$?
[ $rc -ne 0 ] && diag "submit failed ($rc): $(tail -n 5 "$RUN/secure.err")"
ok $rc "a job runs over encrypted links, submitted by alice with her own certificate"
residual=$(job_residual secure 2>/dev/null)
ok $? "its answer is verified (residual $residual)"

! timeout 5 "$BIN/jace-supernode" --bind 'tcp://0.0.0.0:*' \
    >/dev/null 2>"$RUN/open.err"
ok $? "without keys, binding every interface is refused"
grep -q -- "--insecure" "$RUN/open.err"
ok $? "the refusal says how to override it"
lib_finish
