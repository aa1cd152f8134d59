#!/bin/sh
#  test_tools_ssh.sh - jace-ssh-launch, the hostfile launcher (TAP)
#
#  Only --dry-run is used: the test never connects anywhere.  It checks the
#  ssh commands printed for a small hostfile (roles, clusters, speeds,
#  peering, failover order, security), the stop commands for a recorded
#  run, and that bad hostfile lines are refused with their line number.
set -u

launch="${JACE_SRCDIR:-.}/tools/jace-ssh-launch"
work=$(mktemp -d "${TMPDIR:-/tmp}/jace-ssh-test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

count=0
failed=0
ok () {
    count=$((count + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $count - $2"
    else
        echo "not ok $count - $2"
        failed=$((failed + 1))
    fi
}

cat > "$work/hosts" <<'HOSTS'
#  two clusters, one super-node each
node1 role=supernode cluster=A
node2 role=supernode cluster=B addr=10.0.0.2
alice@node3 cluster=A slots=2     # two daemons here
node4 cluster=B speed=0.5
HOSTS

echo "1..14"

timeout 10 sh "$launch" --help > "$work/out" 2>&1
ok $? "--help exits 0"
grep -q "role=supernode|daemon" "$work/out"
ok $? "--help describes the hostfile"

timeout 10 sh "$launch" start --hostfile "$work/hosts" --run "$work/run" \
    --dry-run --bin /opt/jace/bin > "$work/out" 2>"$work/err"
ok $? "start --dry-run exits 0"
[ "$(grep -c '^ssh -o BatchMode=yes' "$work/out")" -eq 5 ]
ok $? "it prints one BatchMode ssh command per process (2 + 3)"
grep "^ssh .* node1 " "$work/out" | grep -q "nohup /opt/jace/bin/jace-supernode --bind '\\\\''tcp://\*:7700'\\\\''"
ok $? "the first super-node binds its port on node1, under nohup"
grep "^ssh .* node2 " "$work/out" | grep -q -- "--peer tcp://node1:7700"
ok $? "the second super-node is peered with the first"
grep -q -- "alice@node3 .*jace-daemon --id A-1 --cluster A --speed 1 --supernode tcp://node1:7700 --supernode tcp://10.0.0.2:7700 --bind .*--advertise node3 " "$work/out"
ok $? "slots=2 gives two daemons, own super-node first"
grep -q -- "node4 .*jace-daemon --id B-0 --cluster B --speed 0.5 --supernode tcp://10.0.0.2:7700 --supernode tcp://node1:7700" "$work/out"
ok $? "speed and failover order follow the hostfile"
grep -q -- "--insecure" "$work/out" && grep -q "not encrypted" "$work/err"
ok $? "without --keys it warns and passes --insecure"
[ ! -e "$work/run" ]
ok $? "--dry-run writes no run folder"

timeout 10 sh "$launch" start --hostfile "$work/hosts" --run "$work/run" \
    --dry-run --keys /etc/jace/keys > "$work/out" 2>&1
grep -q -- "--keys '\\\\''/etc/jace/keys'\\\\''" "$work/out" && ! grep -q -- "--insecure" "$work/out"
ok $? "with --keys every process gets the key folder"

printf 'node1 role=supernode\nnode2 speed=2\n' > "$work/bad"
timeout 10 sh "$launch" start --hostfile "$work/bad" --run "$work/run" \
    --dry-run > /dev/null 2>"$work/err"
[ $? -ne 0 ] && grep -q "bad:2: speed must be in (0, 1]" "$work/err"
ok $? "a bad speed is refused with its line number"
printf 'node1;reboot role=supernode\n' > "$work/bad"
timeout 10 sh "$launch" start --hostfile "$work/bad" --run "$work/run" \
    --dry-run > "$work/out" 2>"$work/err"
[ $? -ne 0 ] && grep -q "bad host" "$work/err" && [ ! -s "$work/out" ]
ok $? "a host name with shell characters is refused"

mkdir -p "$work/rec"
cat > "$work/rec/pids" <<'PIDS'
#  role name host pid endpoint cluster
supernode A-sn0 node1 1234 tcp://node1:7700 A
daemon A-0 alice@node3 2345 - A
daemon A-1 alice@node3 2346 - A
PIDS
timeout 10 sh "$launch" stop --run "$work/rec" --dry-run > "$work/out" 2>&1
tr "\n" " " < "$work/out" | grep -q "alice@node3 'kill -TERM 2345 2346 .*kill -KILL 2345 2346" &&
    grep -q "node1 'kill -TERM 1234 " "$work/out" && [ -f "$work/rec/pids" ]
ok $? "stop --dry-run kills each host's processes in one ssh"
exit $((failed > 0))
