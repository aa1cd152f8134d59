#!/bin/sh
#  test_platform_hostile - malformed input never stops a process
#
#  A raw ZeroMQ peer sends garbage, truncated, oversized, wrong-version
#  and wrong-kind messages, then disconnects mid-message, to a super-node,
#  to a daemon's control and data endpoints, and to a running spawner's
#  status endpoint.  Each logs and counts what it dropped, keeps serving,
#  and a job run afterwards (and one under attack) succeeds.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 13
RAW=$BIN/tests/rawzmq

start_supernode sn
for i in 1 2 3 4; do
    start_daemon d$i --supernode "$SN_sn"
done
check "4 daemons register" wait_for 10 count_is 4 "$SN_sn"

timeout 20 "$RAW" "$SN_sn" dealer
ok $? "the hostile peer talks to the super-node"
endpoints=$(nodes_json "$SN_sn" | jq -r '.[] | .endpoint + " " + .data')
echo "$endpoints" | while read -r control data; do
    timeout 20 "$RAW" "$control" dealer && timeout 20 "$RAW" "$data" push
done
ok $? "the hostile peer talks to every daemon's control and data endpoints"
sleep 0.5
check "the super-node still serves all 4 daemons" count_is 4 "$SN_sn"
[ "$(grep -c -E 'malformed|dropped|without its own record' "$RUN/sn.log")" -ge 8 ]
ok $? "the super-node logged each malformed message"
grep -q -E 'malformed message from [0-9A-F]+: .*bad messages so far' "$RUN/sn.log"
ok $? "its log names the sender and counts them"
[ "$(cat "$RUN"/d*.log | grep -c -E 'malformed|dropped|unexpected')" -ge 20 ]
ok $? "the daemons logged each malformed message"

#  A job under attack: garbage to its status endpoint and to the daemons'
#  data endpoints while it runs.
submit attacked "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set job/tasks=4 --set problem/n=32 &
job=$!
wait_for 20 grep -q '"event":"start"' "$RUN/attacked.events"
status=$(jq -r 'select(.event == "start") | .status' "$RUN/attacked.events")
timeout 20 "$RAW" "$status" dealer
ok $? "the hostile peer talks to the running spawner"
echo "$endpoints" | while read -r control data; do
    timeout 20 "$RAW" "$data" push
done
wait $job
ok $? "the attacked job still ends with a verified answer"
grep -q "bad messages so far" "$RUN/attacked.err"
ok $? "the spawner logged and counted what it dropped"

submit after "$JACE_SRCDIR/examples/poisson2d.job" "$SN_sn" \
    --set job/tasks=4 --set problem/n=32
ok $? "a job run afterwards succeeds"
lib_finish
