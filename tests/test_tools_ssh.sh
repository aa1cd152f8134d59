#!/bin/sh
#  test_tools_ssh.sh - jace-ssh-launch, the hostfile launcher (TAP)
#
#  Only --dry-run is used: the test never connects anywhere.  It checks the
#  ssh commands printed for a small hostfile (roles, clusters, speeds,
#  peering, failover order, security), the stop commands for a recorded
#  run, and that bad hostfile lines are refused with their line number.
#  Without --keys a grid on network addresses is refused unless --insecure
#  is given; a grid of loopback hosts starts bound to loopback.
set -u

launch="${JACE_BUILDDIR:-.}/tools/jace-ssh-launch"
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

echo "1..21"

timeout 10 sh "$launch" --help > "$work/out" 2>&1
ok $? "--help exits 0"
grep -q "role=supernode|daemon" "$work/out"
ok $? "--help describes the hostfile"

timeout 10 sh "$launch" start --hostfile "$work/hosts" --run "$work/run" \
    --dry-run --bin /opt/jace/bin > "$work/out" 2>"$work/err"
[ $? -eq 1 ] && [ ! -s "$work/out" ] &&
    grep -q "refusing to start a grid on non-loopback addresses without --keys" "$work/err" &&
    grep -q -- "--insecure" "$work/err"
ok $? "without --keys a grid on network hosts is refused, saying how to override"

timeout 10 sh "$launch" start --hostfile "$work/hosts" --run "$work/run" \
    --dry-run --bin /opt/jace/bin --insecure > "$work/out" 2>"$work/err"
ok $? "start --dry-run --insecure exits 0"
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
[ "$(grep -c -- "--insecure" "$work/out")" -eq 5 ] &&
    grep -q "neither encrypted nor authenticated" "$work/err"
ok $? "with --insecure it warns and passes --insecure to every process"
[ ! -e "$work/run" ]
ok $? "--dry-run writes no run folder"

timeout 10 sh "$launch" start --hostfile "$work/hosts" --run "$work/run" \
    --dry-run --keys /etc/jace/keys > "$work/out" 2>&1
grep -q -- "--keys '\\\\''/etc/jace/keys'\\\\''" "$work/out" && ! grep -q -- "--insecure" "$work/out" &&
    ! grep -q -- "--cert" "$work/out"
ok $? "with --keys every process gets the key folder and its default certificate"

#  Per-host identities: cert= gives each host its own certificate.
cat > "$work/certs" <<'HOSTS'
node1 role=supernode cluster=A cert=node1
node3 cluster=A slots=2 cert=node3
node4 cluster=A
HOSTS
timeout 10 sh "$launch" start --hostfile "$work/certs" --run "$work/run" \
    --dry-run --keys /etc/jace/keys > "$work/out" 2>"$work/err"
ok $? "a hostfile with cert= is accepted"
grep " node1 " "$work/out" | grep -q -- "jace-supernode .*--keys .*--cert node1" &&
    [ "$(grep " node3 " "$work/out" | grep -c -- "jace-daemon .*--cert node3")" -eq 2 ] &&
    grep " node4 " "$work/out" | grep -q "jace-daemon" &&
    ! grep " node4 " "$work/out" | grep -q -- "--cert"
ok $? "each process gets its host's certificate, or its role's default"
printf 'node1 role=supernode cert=../x\n' > "$work/bad"
timeout 10 sh "$launch" start --hostfile "$work/bad" --run "$work/run" \
    --dry-run --keys /k > /dev/null 2>"$work/err"
[ $? -ne 0 ] && grep -q "bad:1: bad certificate name" "$work/err"
ok $? "a certificate name with a path is refused"

#  Loopback hosts: no keys needed, and nothing listens on the network.
printf 'localhost role=supernode\n127.0.0.1 slots=2\n' > "$work/local"
timeout 10 sh "$launch" start --hostfile "$work/local" --run "$work/run" \
    --dry-run > "$work/out" 2>"$work/err"
ok $? "a grid of loopback hosts starts without --keys"
[ "$(grep -c "tcp://127.0.0.1:" "$work/out")" -eq 3 ] &&
    ! grep -q 'tcp://\*' "$work/out" && ! grep -q -- "--insecure" "$work/out" &&
    [ ! -s "$work/err" ]
ok $? "... every process binds loopback, without --insecure or a warning"
printf 'localhost role=supernode\nnode2\n' > "$work/mixed"
timeout 10 sh "$launch" start --hostfile "$work/mixed" --run "$work/run" \
    --dry-run > "$work/out" 2>"$work/err"
[ $? -eq 1 ] && grep -q "refusing" "$work/err"
ok $? "one network host among loopback ones needs --keys or --insecure"

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
