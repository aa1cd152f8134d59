#!/bin/sh
#  test_platform_expiry - a daemon killed while free leaves the registry
#
#  With a 1 s heartbeat timeout, a free daemon killed with SIGKILL must
#  vanish from `nodes`: after the timeout plus one housekeeping tick on an
#  idle machine, and whatever the load within 10 s.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 5

start_supernode sn --heartbeat 200 --timeout 1000
for i in 1 2 3; do
    start_daemon d$i --supernode "$SN_sn"
done
check "the super-node lists 3 daemons" wait_for 10 count_is 3 "$SN_sn"
crash "$PID_d2"
#  1 s plus a housekeeping tick on an idle machine; each poll here is a
#  process of its own, and a loaded machine delays it and the super-node
#  alike, so the bound is one a healthy super-node meets on any machine.
wait_for 10 count_is 0 "$SN_sn" '.id == "d2"'
ok $? "the killed daemon disappears (timeout 1 s; within 10 s on any machine)"
check "the other daemons stay" count_is 2 "$SN_sn"
lib_finish
