#!/bin/sh
#  test_supernode_reserve_ids - RESERVE by id (protocol 4, MAPPING.md 2)
#
#  Two peered super-nodes, two daemons registered with each.  A RESERVE
#  naming daemons gets exactly those that are free: here and at the peer
#  (the forwarded RESERVE names only the peer's), never another; a daemon
#  leased to another job and an unknown id are simply absent from the
#  GRANT; a count that differs from the records is refused as malformed.
#  However many of a peer's daemons a RESERVE names, and however often,
#  the peer gets one forwarded RESERVE naming each of them once.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 9
CLIENT=$BIN/tests/snclient
FAST="--heartbeat 200 --timeout 1000"

start_supernode s1 $FAST
start_supernode s2 $FAST --peer "$SN_s1"
for i in 1 2; do
    start_daemon a$i --cluster A --supernode "$SN_s1"
    start_daemon b$i --cluster B --supernode "$SN_s2"
done
wait_for 15 count_is 4 "$SN_s1"
ok $? "s1 lists its 2 daemons and its peer's 2"

#  Sorted granted ids, one a line, no tokens.
reserve_ids () {    #  reserve_ids OUT SUPERNODE JOB COUNT IDS
    "$CLIENT" --ids "$5" "$2" reserve "$3" "$4" 20000 \
        2>>"$RUN/client.log" | sort >"$RUN/$1"
}

reserve_ids g1 "$SN_s1" job-1 1 a2
[ "$(cat "$RUN/g1")" = a2 ]
ok $? "by id, a free daemon here: exactly it (not a1)"

reserve_ids g2 "$SN_s1" job-2 2 a1,b2
[ "$(tr '\n' ' ' <"$RUN/g2")" = "a1 b2 " ]
ok $? "by id, one here and one at the peer: exactly those two"

reserve_ids g3 "$SN_s1" job-3 3 a2,b1,nosuch
[ "$(cat "$RUN/g3")" = b1 ]
ok $? "a daemon leased to another job and an unknown id are absent"

reserve_ids g4 "$SN_s2" job-4 1 b2
[ ! -s "$RUN/g4" ]
ok $? "through the peer, a daemon leased elsewhere is absent too"

reserve_ids g6 "$SN_s1" job-6 4 b1,a1,b2,b1
[ "$(grep -c 'asks [0-9]* daemons by id for job-6' "$RUN/s2.log")" = 1 ] &&
    grep -q 'asks 2 daemons by id for job-6' "$RUN/s2.log"
ok $? "the peer gets one RESERVE for job-6, naming its 2 daemons once each"

before=$("$CLIENT" "$SN_s1" status 2>>"$RUN/client.log" \
    | awk '$2 == "audit/malformed" { print $3 }')
"$CLIENT" --wait 500 --ids a1 "$SN_s1" reserve job-5 2 20000 \
    >"$RUN/g5" 2>>"$RUN/client.log"
answered=$?
after=$("$CLIENT" "$SN_s1" status 2>>"$RUN/client.log" \
    | awk '$2 == "audit/malformed" { print $3 }')
[ $answered -ne 0 ] && [ "$after" -eq $((before + 1)) ]
ok $? "a count that is not the number of records is refused and counted"

lib_finish
