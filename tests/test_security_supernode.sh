#!/bin/sh
#  test_security_supernode - a super-node obeys only who may say what
#
#  Attacks by a raw client (tests/snclient), some holding a legitimate
#  host's certificate (a daemon's, a spawner's), some on a keyless grid:
#  a HELLO from a spawner's key, a HELLO claiming another key, a live
#  daemon id taken over, another daemon's BYE, a forged forwarded RESERVE,
#  a PEER_STATE from a daemon, a RESERVE, RELEASE or HEARTBEAT of another
#  owner's lease, a "job over" of it or of a lease nobody holds, a CRASH from a daemon, a lease of INT64_MAX ms, a flood
#  of HELLOs past --max-daemons, a PEER_STATE past it.  Each is refused,
#  counted in STATUS (audit/...) and the super-node keeps answering.
#  Grants carry the lease tokens the daemons will check, for the right
#  spawner key.  A job runs beside a stream of these attacks and verifies.
#  On a keyless grid, a job said over by a local process with a made-up
#  proof: its daemons check the proof and work on.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 44
CLIENT=$BIN/tests/snclient
KEYS=$RUN/keys
HUGE=9223372036854775807

#  snclient as the identity CERT of the grid's keys; refused requests get
#  no answer, so a short wait (later --wait options override it).
as () {     #  as CERT ARGS...
    cert=$1; shift
    "$CLIENT" --keys "$KEYS" --cert "$cert" --wait 400 "$@" 2>>"$RUN/client.log"
}
#  The keyless grid's client.
plain () { "$CLIENT" --wait 400 "$@" 2>>"$RUN/client.log"; }
key () { "$CLIENT" key; }
#  STATUS of super-node SN, keyed but for the keyless $KL.
status_of () {      #  status_of SN
    if [ "$1" = "${KL:-}" ]; then plain --wait 5000 "$1" status
    else as spawner --wait 5000 "$1" status; fi
}
param () {          #  param SN KEY
    status_of "$1" | awk -v k="$2" '$1 == "param" && $2 == k { print $3 }'
}
listed () { status_of "$1" | grep -q "^node $2 "; }     #  listed SN ID
state_of () {       #  state_of SN ID
    status_of "$1" | awk -v id="$2" '$1 == "node" && $2 == id { print $4 }'
}
state_is () { [ "$(state_of "$1" "$2")" = "$3" ]; }   #  state_is SN ID STATE
not_listed () { ! listed "$@"; }
at_least () { [ "$(param "$1" "$2")" -ge "$3" ]; }     #  at_least SN KEY N
unauthorised () { param "$1" audit/unauthorised; }
#  True once SN has counted more than `before` unauthorised messages.
counted_above () {  #  counted_above SN BEFORE
    [ "$(unauthorised "$1")" -gt "$2" ]
}

"$BIN/jace-keygen" "$KEYS" >/dev/null \
    && "$CLIENT" cert "$KEYS" daemon2 daemon \
    && "$CLIENT" cert "$KEYS" spawner2 spawner
ok $? "the grid's certificates: a super-node, two daemons, two spawners"
SPAWNER=$("$CLIENT" --keys "$KEYS" --cert spawner whoami)
SPAWNER2=$("$CLIENT" --keys "$KEYS" --cert spawner2 whoami)
DAEMON=$("$CLIENT" --keys "$KEYS" --cert daemon whoami)

start_supernode ks --keys "$KEYS" --heartbeat 200 --timeout 60000 \
    --allow-crash
KS=$SN_ks
#  Three real daemons for the job; made-up ones are far slower, so that
#  the job is never leased one.
for i in 1 2 3; do
    start_daemon r$i --supernode "$KS" --keys "$KEYS"
done
KA=$(key); KC=$(key)
FAKE="--power 0.001 --cluster fake"
as daemon --wait 5000 $FAKE "$KS" hello dA "$KA" >/dev/null \
    && as daemon --wait 5000 $FAKE "$KS" hello dC "$KC" >/dev/null
ok $? "a daemon's key registers daemons dA and dC with their lease keys"

#  --- HELLO -----------------------------------------------------------------
before=$(unauthorised "$KS")
as spawner "$KS" hello rogue "$(key)" >/dev/null
wait_for 3 counted_above "$KS" "$before" && ! listed "$KS" rogue
ok $? "a HELLO from a spawner's key is refused and counted"
grep -q "refused HELLO from .*spawner spawner): a spawner may not send it" \
    "$RUN/ks.log"
ok $? "the refusal is logged with the sender's address, key and role"

before=$(unauthorised "$KS")
as daemon2 --pubkey "$DAEMON" "$KS" hello dB "$(key)" >/dev/null
wait_for 3 counted_above "$KS" "$before" && ! listed "$KS" dB
ok $? "a HELLO whose record claims another daemon's key is refused"

before=$(unauthorised "$KS")
as daemon2 "$KS" hello dA "$(key)" >/dev/null
as daemon2 "$KS" hello dA "$KA" >/dev/null
as daemon "$KS" hello dA "$(key)" >/dev/null
wait_for 3 counted_above "$KS" $((before + 2))
ok $? "a live daemon id is not taken by another key, nor another lease key"
as daemon --wait 5000 $FAKE "$KS" hello dA "$KA" >/dev/null
ok $? "the daemon itself still refreshes it"

#  --- BYE -------------------------------------------------------------------
before=$(unauthorised "$KS")
as daemon2 "$KS" bye dA "$KA"
as daemon "$KS" bye dA "$(key)"
as spawner "$KS" bye dA "$KA"
wait_for 3 counted_above "$KS" $((before + 2)) && listed "$KS" dA
ok $? "BYE of another daemon (other key, other lease key, a spawner) is refused"

#  --- Leases and their tokens -----------------------------------------------
as spawner --wait 5000 --tokens --cluster fake "$KS" \
    reserve job-a 1 5000 tcp://127.0.0.1:9 >"$RUN/grant-a"
token=$(awk '$1 == "token" && $2 == "dA" { print $3 }' "$RUN/grant-a")
[ -n "$token" ] \
    && [ "$token" = "$("$CLIENT" token "$KA" job-a "$SPAWNER" dA)" ]
ok $? "a grant carries the daemon's lease token for that job and spawner key"
! status_of "$KS" | grep -qF -e "$KA" -e "$KC"
ok $? "no lease key appears in a listing"
[ "$(param "$KS" lease/job-a/owner_key)" = "$SPAWNER" ]
ok $? "the lease is listed with its owner's key"

before=$(unauthorised "$KS")
! as spawner2 "$KS" reserve job-a 1 5000 >/dev/null
wait_for 3 counted_above "$KS" "$before"
ok $? "a RESERVE of a job leased by another key is refused"

before=$(unauthorised "$KS")
as spawner2 "$KS" release job-a dA
as spawner2 "$KS" heartbeat job-a
wait_for 3 counted_above "$KS" $((before + 1)) \
    && [ "$(state_of "$KS" dA)" = 1 ]
ok $? "RELEASE and HEARTBEAT of another's lease are refused; it stays leased"
#  A job said over stops the daemons still on it (supernode_ended): only
#  its lease's owner may say so, and only of a lease the grid holds (a
#  lapsed one may be resumed).
before=$(unauthorised "$KS")
as spawner2 "$KS" over job-a
as spawner2 "$KS" over job-nobody
wait_for 3 counted_above "$KS" $((before + 1))
ok $? "'job over' for another's lease, or a lease nobody holds, is refused"
as spawner "$KS" release job-a dA
wait_for 3 state_is "$KS" dA 0
ok $? "its owner releases it"

before=$(unauthorised "$KS")
! as spawner --forwarded --pubkey "$SPAWNER" "$KS" reserve job-f 1 5000 \
    >/dev/null \
    && ! as daemon --forwarded "$KS" reserve job-f 1 5000 >/dev/null
wait_for 3 counted_above "$KS" $((before + 1))
ok $? "a forwarded RESERVE from a spawner's or a daemon's key is refused"
as supernode --wait 5000 --forwarded --pubkey "$SPAWNER2" --tokens \
    --cluster fake "$KS" reserve job-f 1 5000 >"$RUN/grant-f"
token=$(awk '$1 == "token" { print $2 " " $3 }' "$RUN/grant-f")
[ "$token" = "dC $("$CLIENT" token "$KC" job-f "$SPAWNER2" dC)" ] \
    || [ "$token" = "dA $("$CLIENT" token "$KA" job-f "$SPAWNER2" dA)" ]
ok $? "a super-node's forwarded RESERVE gets tokens for the spawner it names"
as supernode --forwarded "$KS" release job-f dA dC

as spawner "$KS" reserve job-huge 0 "$HUGE" >/dev/null
grep -q "asks a lease of $HUGE ms for job-huge, capped to 60000 ms" \
    "$RUN/ks.log"
ok $? "a lease of INT64_MAX ms is capped to --max-lease"

#  --- Peering and CRASH -----------------------------------------------------
before=$(unauthorised "$KS")
as daemon --nodes 3 "$KS" peer tcp://127.0.0.1:9/evil 2
wait_for 3 counted_above "$KS" "$before" && ! listed "$KS" peer-1 \
    && ! grep -q "peering with tcp://127.0.0.1:9/evil" "$RUN/ks.log"
ok $? "a PEER_STATE from a daemon's key is refused: no peer, no records"

before=$(unauthorised "$KS")
as daemon "$KS" crash
wait_for 3 counted_above "$KS" "$before" && running "$PID_ks"
ok $? "a CRASH from a daemon's key is refused even with --allow-crash"

#  --- Peers: a grant completed by a peer -----------------------------------
#  Two super-nodes sharing the super-node certificate: kp2 names kp1 as a
#  peer, kp1 learns kp2 from its PEER_STATE and reaches it with its key.
start_supernode kp1 --keys "$KEYS" --heartbeat 200 --timeout 60000
start_supernode kp2 --keys "$KEYS" --heartbeat 200 --timeout 60000 \
    --peer "$SN_kp1"
KP=$(key)
as daemon "$SN_kp2" hello dP "$KP" >/dev/null
wait_for 5 listed "$SN_kp1" dP
ok $? "a super-node learns a peer's daemons over CURVE, with the peer's key"
as spawner --wait 5000 --tokens "$SN_kp1" reserve job-p 1 5000 \
    >"$RUN/grant-p"
grep -qxF "token dP $("$CLIENT" token "$KP" job-p "$SPAWNER" dP)" \
    "$RUN/grant-p"
ok $? "a grant completed by a peer carries its token for the spawner's key"

#  --- Strangers and audit ---------------------------------------------------
"$BIN/jace-keygen" "$RUN/rogue" spawner:rogue >/dev/null \
    && cp "$KEYS/supernode.cert" "$RUN/rogue/"
#  The stranger must hold a certificate, or the check proves nothing.
[ -f "$RUN/rogue/rogue.cert_secret" ] \
    && ! "$CLIENT" --keys "$RUN/rogue" --cert rogue --wait 1000 "$KS" \
        status >/dev/null 2>&1
ok $? "a client with a foreign certificate gets no answer"
wait_for 3 at_least "$KS" audit/refused_connections 1
ok $? "the refused connection is counted in audit/refused_connections"
[ "$(unauthorised "$KS")" -ge 16 ]
ok $? "every refused message is counted in audit/unauthorised"

#  --- A job beside the attacks ----------------------------------------------
#  Refused attacks only: none of them may take a daemon or a lease.
attack () {         #  attack JOB-ID
    as spawner "$KS" hello r1 "$(key)"
    as daemon2 "$KS" hello r1 "$(key)"
    as daemon "$KS" hello r2 "$(key)"
    as daemon2 "$KS" bye r1 "$(key)"
    as daemon "$KS" bye r3 "$(key)"
    as daemon --forwarded "$KS" reserve "$1" 3 "$HUGE"
    as daemon "$KS" peer tcp://127.0.0.1:9/evil 1
    if [ -n "$1" ]; then
        as spawner2 "$KS" reserve "$1" 3 "$HUGE"
        as spawner2 "$KS" heartbeat "$1"
        as spawner2 "$KS" release "$1" r1 r2 r3
    fi
} >/dev/null 2>&1

if wait_for 10 count_is 3 "$KS" '.id | startswith("r")' --keys "$KEYS"; then
    before=$(unauthorised "$KS")
    submit beside "$JACE_SRCDIR/examples/poisson2d.job" "$KS" \
        --set job/tasks=3 --set problem/n=24 --keys "$KEYS" &
    job=$!
    rounds=0
    while kill -0 "$job" 2>/dev/null; do
        attack "$(head -n 1 "$RUN/beside.events" 2>/dev/null | jq -r .job)"
        rounds=$((rounds + 1))
    done
    wait "$job"
    ok $? "a job beside $rounds rounds of attacks ends with a verified answer"
    counted_above "$KS" $((before + rounds * 5))
    ok $? "the attacks beside the job were refused and counted"
else
    diag "the real daemons did not register (protocol 3 daemons needed)"
    ok 1 "a job beside rounds of attacks ends with a verified answer"
    ok 1 "the attacks beside the job were refused and counted"
fi
as daemon "$KS" bye dA "$KA"
wait_for 3 not_listed "$KS" dA
ok $? "the daemon itself leaves with its lease key"
status_of "$KS" >/dev/null
ok $? "the keyed super-node still answers STATUS"

#  --- A keyless grid ---------------------------------------------------------
start_supernode kl --heartbeat 200 --timeout 2000 --max-daemons 8
KL=$SN_kl
K1=$(key); K2=$(key)
plain --wait 5000 "$KL" hello x1 "$K1" >/dev/null
ok $? "keyless, a daemon registers with its lease key"
before=$(unauthorised "$KL")
! plain "$KL" hello x1 "$K2" >/dev/null
wait_for 3 counted_above "$KL" "$before"
ok $? "keyless, a live daemon id is not taken with another lease key"
before=$(unauthorised "$KL")
plain "$KL" bye x1 "$K2"
wait_for 3 counted_above "$KL" "$before" && listed "$KL" x1
ok $? "keyless, a BYE with another lease key is refused"
! plain "$KL" hello x2 "not a key" >/dev/null && ! listed "$KL" x2
ok $? "keyless, a HELLO without a lease key is refused"
#  A rogue that claims a huge power would be leased first and get the
#  job's data: records out of range are refused.
! plain --power 1e9 "$KL" hello x4 "$(key)" >/dev/null && ! listed "$KL" x4
ok $? "keyless, a daemon claiming power 1e9 is refused"
#  Any local process may lease a free daemon on a keyless grid (a stray
#  spawner of another test on a reused port did): try a few times.
for try in 1 2 3; do
    plain "$KL" hello x1 "$K1" >/dev/null
    plain --wait 5000 --tokens "$KL" reserve job-k 1 2000 >"$RUN/grant-k"
    grep -qxF "token x1 $("$CLIENT" token "$K1" job-k "" x1)" \
        "$RUN/grant-k" && break
    plain "$KL" release job-k x1
done
grep -qxF "token x1 $("$CLIENT" token "$K1" job-k "" x1)" "$RUN/grant-k"
ok $? "keyless, the grant's token is made for the empty spawner key"
#  The claimed record lapses (2 s), then the id is free again: a daemon
#  that restarted gets it back.
wait_for 6 plain "$KL" hello x1 "$K2"
ok $? "once the record expires, the id registers with a new lease key"

#  Not longer: the records lapse 2 s after they register (--timeout
#  2000), and the count below must find all 7
welcomed=$(plain --wait 300 "$KL" flood f 50)
[ "$welcomed" -eq 7 ] && [ "$(status_of "$KL" | grep -c '^node f-')" -eq 7 ]
ok $? "a flood of 50 HELLOs registers 7, up to --max-daemons 8"
[ "$(param "$KL" audit/registry_full)" -ge 43 ] \
    && [ "$(grep -c 'registry full' "$RUN/kl.log")" -eq 1 ]
ok $? "the other 43 are counted in audit/registry_full and logged once"
plain --nodes 20 "$KL" peer tcp://127.0.0.1:9 1
[ "$(status_of "$KL" | grep -c '^node peer-')" -eq 8 ]
ok $? "of a PEER_STATE of 20 records, 8 (--max-daemons) are taken"
status_of "$KL" >/dev/null
ok $? "the keyless super-node still answers STATUS"

#  A local process says a running job is over, with a made-up proof: the
#  super-node cannot tell (no keys), and passes it on to the job's
#  daemons, which check it with the job key and work on.
start_supernode kj --heartbeat 200 --timeout 2000
add_daemons 3 "$SN_kj"
wait_for 15 count_is 3 "$SN_kj"
submit claimed "$JACE_SRCDIR/examples/poisson2d.job" "$SN_kj" \
    --set job/tasks=3 --set problem/n=48 --set job/tolerance=1e-9 &
job=$!
claimed=0
while kill -0 "$job" 2>/dev/null; do
    id=$(head -n 1 "$RUN/claimed.events" 2>/dev/null | jq -r .job)
    if [ -n "$id" ] && [ "$id" != null ]; then
        plain "$SN_kj" over "$id" "$(key)" && claimed=$((claimed + 1))
    fi
    sleep 0.2
done
wait "$job"
ok $? "a job said over by another local process, $claimed times, ends verified"
grep -q "without its proof: ignored" "$RUN"/d*.log
ok $? "its daemons were told, and found the proof false"
lib_finish
