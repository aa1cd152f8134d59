#!/bin/sh
#  test_security_spawner - only the user who submitted a job controls it
#
#  Two jobs run side by side.  Job A is attacked; it must be unaffected
#  and end with a verified answer:
#  1. Another user (nobody, through setpriv, when the test runs as root)
#     cannot cancel, kill or resume it: it cannot read the job's secret
#     file, even pointed straight at it.
#  2. The same user with another secrets folder (--secrets) cannot
#     either: no secret there.
#  3. A secret file with the wrong key (a forged one): the CANCEL it
#     seals is refused by the job's spawner, which counts it in STATUS
#     (`jobs --json` shows it), and the CRASH it seals is not obeyed.
#  Job B is cancelled by its own user: its spawner ends it, its daemons
#  are freed, its secret file is removed.
#  4. With keys and a certificate per user, another user's tools reach
#  the job's spawner (with the key its lease lists) but cannot cancel
#  it; its own user can.
. "$(dirname "$0")/lib.sh"
#  Exact inner solves keep job A running while it is attacked.
EXACT="--set solver/inner_tolerance=1e-12"
lib_init
plan 31

JOB=$JACE_SRCDIR/examples/poisson3d.job
start_supernode a --heartbeat 200 --timeout 1000
#  Job A's 2 tasks and the spare its mapping reserves leave job B, which
#  starts while A runs, 3 daemons: whatever A's length under load.
for i in 1 2 3 4 5 6; do
    start_daemon d$i --supernode "$SN_a"
done
check "6 daemons register" wait_for 15 count_is 6 "$SN_a"

submit victim "$JOB" "$SN_a" --set job/tasks=2 $EXACT --set problem/n=44 \
    --set job/tolerance=1e-10 &
victim=$!
wait_for 20 grep -q '"event":"start"' "$RUN/victim.events"
ok $? "job A starts"
job=$(head -n 1 "$RUN/victim.events" | jq -r .job)
secret=$JACE_SECRETS/$job.secret
[ "$(stat -c %a "$secret" 2>/dev/null)" = 600 ] \
    && [ "$(stat -c %a "$JACE_SECRETS")" = 700 ]
ok $? "its secret is SECRETS/JOB.secret, mode 0600 in a 0700 folder"
grep '"event":"start"' "$RUN/victim.events" | grep -q "\"secret\":\"$secret\""
ok $? "the start event says where it is"


#  3. A forged secret: a key in the right place and form, but not the
#  job's.  Z85 digits and lower-case letters only, so it always decodes.
#  First, while job A certainly runs: the refusals of 1 and 2 fail on
#  reading the secret and need no running job, but these reach its
#  spawner, and a fast machine ends the job in about two seconds.
forged=$RUN/forged-secrets
mkdir -m 700 "$forged"
(umask 077; tr -dc 'a-z0-9' </dev/urandom | head -c 40 >"$forged/$job.secret"
 echo >>"$forged/$job.secret")
"$BIN/jace-spawner" cancel "$job" --supernode "$SN_a" --secrets "$forged" \
    >"$RUN/forged-cancel.out" 2>"$RUN/forged-cancel.err"
[ $? -ne 0 ] && grep -q "refused" "$RUN/forged-cancel.err"
ok $? "a CANCEL sealed with a forged secret is refused by the job's spawner"
refusals=$(timeout 10 "$BIN/jace-spawner" jobs --supernode "$SN_a" --json \
    | jq ".[] | select(.job == \"$job\") | .unauthorised")
[ "${refusals:-0}" -ge 1 ]
ok $? "and counted in its STATUS (audit/unauthorised = ${refusals:-none})"
"$BIN/jace-spawner" kill --job "$job" --task 0 --supernode "$SN_a" \
    --secrets "$forged" >"$RUN/forged-kill.out" 2>&1
[ $? -ne 0 ] && ! grep -q "^crashed daemon" "$RUN/forged-kill.out"
ok $? "kill with a forged secret fails, and says no daemon crashed"
#  The daemon says it got the CRASH and did not obey it (while it ran the
#  job, or, on a machine fast enough to end the job first, after).
wait_for 15 grep -q -e "refused CRASH" -e "CRASH for job '$job'" \
        "$RUN"/d*.log \
    && ! grep -q "crashed on purpose" "$RUN"/d*.log \
    && ! grep -q '"event":"dead"' "$RUN/victim.events"
ok $? "a CRASH sealed with a forged secret is not obeyed"

#  Each command, run by someone without the job's secret, must exit
#  non-zero with an error naming the secret and --secrets.
refused () {    #  refused NAME COMMAND...
    name=$1; shift
    "$@" >"$RUN/$name.out" 2>"$RUN/$name.err"
    rc=$?
    [ $rc -ne 0 ] && grep -q "cannot control job $job" "$RUN/$name.err" \
        && grep -q -- "--secrets" "$RUN/$name.err"
}

#  1. Another user.  The build tree must be readable by nobody; if it is
#  not, a copy of jace-spawner (linked statically to Jace's libraries)
#  goes to a folder nobody can read.
as_nobody () {
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
nobody_bin=""
if [ "$(id -u)" -eq 0 ] && as_nobody true 2>/dev/null; then
    if as_nobody test -x "$BIN/jace-spawner"; then
        nobody_bin=$BIN/jace-spawner
    else
        copy=$(mktemp -d "${TMPDIR:-/tmp}/jace-nobody.XXXXXX")
        cp "$BIN/jace-spawner" "$copy/" && chmod 755 "$copy" \
            && as_nobody "$copy/jace-spawner" --help >/dev/null 2>&1 \
            && nobody_bin=$copy/jace-spawner
        diag "nobody runs a copy of jace-spawner in $copy"
    fi
fi
if [ -n "$nobody_bin" ]; then
    diag "another user: nobody (uid 65534), JACE_SECRETS=$JACE_SECRETS"
    refused nobody-cancel as_nobody "$nobody_bin" cancel "$job" \
        --supernode "$SN_a"
    ok $? "another user cannot cancel the job: it cannot read the secret"
    refused nobody-kill as_nobody "$nobody_bin" kill --job "$job" --task 0 \
        --supernode "$SN_a"
    ok $? "nor kill its daemons"
    refused nobody-resume as_nobody "$nobody_bin" resume "$job" \
        --supernode "$SN_a" -q
    ok $? "nor resume it"
    refused nobody-cancel-dir as_nobody "$nobody_bin" cancel "$job" \
        --supernode "$SN_a" --secrets "$JACE_SECRETS"
    ok $? "not even pointed at the job's secrets folder"
else
    for what in cancel kill resume "cancel --secrets"; do
        skip "nobody $what: not root, or setpriv cannot switch users here"
    done
fi
[ -n "${copy:-}" ] && rm -rf "$copy"

#  2. The same user, another secrets folder.
other=$RUN/other-secrets
refused other-cancel "$BIN/jace-spawner" cancel "$job" --supernode "$SN_a" \
    --secrets "$other"
ok $? "cancel with another --secrets folder is refused"
refused other-kill "$BIN/jace-spawner" kill --job "$job" --task 0 \
    --supernode "$SN_a" --secrets "$other"
ok $? "so is kill"
refused other-resume "$BIN/jace-spawner" resume "$job" --supernode "$SN_a" \
    -q --secrets "$other"
ok $? "and resume"
chmod 644 "$secret"
refused loose-cancel "$BIN/jace-spawner" cancel "$job" --supernode "$SN_a"
loose=$?
chmod 600 "$secret"
[ $loose -eq 0 ] && grep -q "open to others" "$RUN/loose-cancel.err"
ok $? "a secret file others may read is refused, and the error says so"

#  Job B, cancelled by its own user.
submit owned "$JOB" "$SN_a" --set job/tasks=2 $EXACT --set problem/n=44 \
    --set job/tolerance=1e-14 --set job/max_iterations=0 &
owned=$!
wait_for 20 grep -q '"event":"start"' "$RUN/owned.events"
ok $? "job B starts"
owned_job=$(head -n 1 "$RUN/owned.events" | jq -r .job)
"$BIN/jace-spawner" cancel "$owned_job" --supernode "$SN_a" \
    >"$RUN/owner-cancel.out" 2>"$RUN/owner-cancel.err"
ok $? "its own user cancels job B"
grep -q "cancelled by its spawner" "$RUN/owner-cancel.out"
ok $? "through its spawner"
wait $owned
[ $? -eq 1 ] && grep -q "cancelled by jace-spawner-cancel" "$RUN/owned.err"
ok $? "whose job ends, not verified, saying who cancelled it"
[ ! -e "$JACE_SECRETS/$owned_job.secret" ]
ok $? "and whose secret file is removed"

wait $victim
ok $? "job A, attacked all along, exits 0"
job_residual victim >/dev/null
ok $? "with a verified residual"
[ ! -e "$secret" ]
ok $? "and its secret file is removed at the end"

#  4. With keys, each user has a certificate of their own: bob reaches
#  alice's spawner with the key the super-node lists for her lease, and
#  still cannot cancel her job; alice can.
keys=$RUN/keys
"$BIN/jace-keygen" "$keys" supernode daemon spawner:alice spawner:bob \
    >/dev/null 2>&1
ok $? "jace-keygen makes a super-node's, a daemon's, alice's and bob's certificates"
start_supernode k --heartbeat 200 --timeout 1000 --keys "$keys"
for i in 1 2; do
    start_daemon k$i --supernode "$SN_k" --keys "$keys"
done
wait_for 15 count_is 2 "$SN_k" true --keys "$keys" --cert alice
submit alice "$JOB" "$SN_k" --set job/tasks=2 $EXACT --set problem/n=44 \
    --set job/tolerance=1e-14 --set job/max_iterations=0 --keys "$keys" \
    --cert alice &
alice=$!
wait_for 20 grep -q '"event":"start"' "$RUN/alice.events"
alice_job=$(head -n 1 "$RUN/alice.events" | jq -r .job)
mkdir -m 700 "$RUN/bob-secrets"
cp "$forged/$job.secret" "$RUN/bob-secrets/$alice_job.secret"
#  Running, or verifying a snapshot as it runs: states only her spawner
#  tells (with her spawner out of reach the job would be "orphaned").
timeout 10 "$BIN/jace-spawner" jobs --supernode "$SN_k" --json \
      --keys "$keys" --cert bob \
    | jq -r ".[] | select(.job == \"$alice_job\") | .state" |
    grep -qxE 'running|verifying'
ok $? "bob sees alice's job running: her spawner is reached with her key"
"$BIN/jace-spawner" cancel "$alice_job" --supernode "$SN_k" --keys "$keys" \
    --cert bob --secrets "$RUN/bob-secrets" >"$RUN/bob-cancel.out" \
    2>"$RUN/bob-cancel.err"
[ $? -ne 0 ] && grep -q "refused" "$RUN/bob-cancel.err" && running "$alice"
ok $? "bob's CANCEL, sealed with a key of his own, is refused"
"$BIN/jace-spawner" cancel "$alice_job" --supernode "$SN_k" --keys "$keys" \
    --cert alice >"$RUN/alice-cancel.out" 2>&1 \
    && grep -q "cancelled by its spawner" "$RUN/alice-cancel.out"
ok $? "alice cancels her job through her spawner"
wait $alice
[ $? -eq 1 ] && [ ! -e "$JACE_SECRETS/$alice_job.secret" ]
ok $? "which ends, its secret removed"

lib_finish
