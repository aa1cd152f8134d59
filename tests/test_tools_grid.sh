#!/bin/sh
#  test_tools_grid.sh - jace-grid, the local virtual-grid launcher (TAP)
#
#  Part one runs the launcher against stand-in binaries (small shell
#  scripts that behave like the super-node, daemon and spawner at their
#  command lines), so the launcher itself is tested on any machine: run
#  folder records, peering and failover order, kill, status, stop, and
#  clean failure.  Part two starts a real grid with the real binaries when
#  they are built, and is skipped otherwise.  Every command is bounded by
#  timeout, no port is fixed, and the trap stops whatever was started.
set -u

builddir=${JACE_BUILDDIR:-.}
grid="$builddir/jace-grid"
#  A heavy grid test: it takes all three of lib.sh's slots, in its turn
#  at the turnstile (the others never wait holding one).
mkdir -p "$builddir/tests"
exec 6>"$builddir/tests/.grid-turnstile" 7>"$builddir/tests/.grid-slot.1" \
     8>"$builddir/tests/.grid-slot.2" 9>"$builddir/tests/.grid-slot.3"
flock 6 && flock 7 && flock 8 && flock 9 && flock -u 6
work=$(mktemp -d "${TMPDIR:-/tmp}/jace-grid-test.XXXXXX") || exit 1
fake="$work/fake-bin"
run="$work/run"
real_run="$work/real-run"
keys_run="$work/keys-run"
gone_run="$work/gone-run"
kept_run="$work/kept-run"

#  Stop every grid this test started, whatever happens.
cleanup () {
    for dir in "$run" "$real_run" "$keys_run" "$gone_run" "$kept_run"; do
        if [ -f "$dir/pids" ]; then
            timeout 30 "$grid" stop --run "$dir" --grace 2 >/dev/null 2>&1
        fi
    done
    [ -z "${stray:-}" ] || kill -KILL "$stray" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
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
skip () {
    count=$((count + 1))
    echo "ok $count # SKIP $1"
}
diag () {
    echo "# $*" >&2
}

#  True if pid is a running process (a zombie counts as gone).
alive () {
    if [ -r "/proc/$1/stat" ]; then
        state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
        [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
    else
        kill -0 "$1" 2>/dev/null
    fi
}

#  Number of recorded pids of a run folder still alive.
count_alive () {
    n=0
    for pid in $(awk '!/^#/ { print $3 }' "$1"); do
        if alive "$pid"; then
            n=$((n + 1))
        fi
    done
    echo "$n"
}

#  Number of stand-in processes running, found by their command lines.
count_fakes () {
    n=0
    for file in /proc/[0-9]*/cmdline; do
        if tr '\0' ' ' < "$file" 2>/dev/null | grep -q "$fake/jace-[sd]"; then
            n=$((n + 1))
        fi
    done
    echo "$n"
}

#  Stand-in binaries.  Each prints its arguments into its log, so the
#  test can check what the launcher passed; the daemons register by
#  writing a file the stand-in spawner lists while their pid lives.
mkdir -p "$fake" "$work/registry"
cat > "$fake/jace-supernode" <<'EOF'
#!/bin/sh
echo "args: $*"
[ -z "${JACE_FAKE_SN_FAIL:-}" ] || { echo "fake failure" >&2; exit 3; }
while [ $# -gt 0 ]; do
    case $1 in --endpoint-file) file=$2; shift ;; esac
    shift
done
printf 'tcp://127.0.0.1:%d\n' $((20000 + $$ % 20000)) > "$file.tmp"
mv "$file.tmp" "$file"
while :; do sleep 1; done
EOF
cat > "$fake/jace-daemon" <<'EOF'
#!/bin/sh
echo "args: $*"
while [ $# -gt 0 ]; do
    case $1 in
        --id) id=$2; shift ;;
        --cluster) cluster=$2; shift ;;
    esac
    shift
done
[ -n "${JACE_FAKE_NO_REGISTER:-}" ] ||
    echo "$cluster $$" > "$JACE_FAKE_REGISTRY/$id"
while :; do sleep 1; done
EOF
cat > "$fake/jace-spawner" <<'EOF'
#!/bin/sh
[ "$1" = nodes ] || exit 2
sep=""
printf '['
for file in "$JACE_FAKE_REGISTRY"/*; do
    [ -f "$file" ] || continue
    read -r cluster pid < "$file"
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
    [ -n "$state" ] && [ "$state" != Z ] || continue
    printf '%s{"id": "%s", "endpoint": "tcp://127.0.0.1:1", "cluster": "%s", "power": 1.0, "state": "free"}' \
        "$sep" "${file##*/}" "$cluster"
    sep=", "
done
printf ']\n'
EOF
chmod +x "$fake"/*
JACE_FAKE_REGISTRY="$work/registry"
export JACE_FAKE_REGISTRY

cat > "$work/small.platform" <<'EOF'
#  Two small clusters for the launcher test
platform
    name = "small"
    cluster
        name = "A"
        nodes = 2
        speeds = "1 0.5"
    cluster
        name = "B"
        nodes = 2
        power = 2
EOF

echo "1..41"

#  ---- Command line -------------------------------------------------------
timeout 10 "$grid" --help > "$work/help" 2>&1
ok $? "jace-grid --help exits 0"
grep -q "start --platform FILE --run DIR" "$work/help"
ok $? "--help describes start"
timeout 10 "$grid" frobnicate --run "$run" 2>"$work/err"
[ $? -eq 2 ] && grep -q "unknown command" "$work/err"
ok $? "an unknown command is a usage error"
timeout 10 "$grid" start --platform "$work/nope.platform" --run "$run" \
    --bin "$fake" 2>"$work/err"
[ $? -ne 0 ] && grep -q "nope.platform" "$work/err" && [ ! -e "$run/pids" ]
ok $? "a missing platform file is reported and nothing starts"

#  ---- A grid of stand-ins -------------------------------------------------
sn=$(timeout 60 "$grid" start --platform "$work/small.platform" \
     --run "$run" --bin "$fake" --timeout 20 2>"$work/err")
rc=$?
[ $rc -ne 0 ] && diag "start failed: $(cat "$work/err")"
ok $rc "start exits 0 once every daemon is registered"
echo "$sn" | grep -Eq '^tcp://127\.0\.0\.1:[0-9]+$'
ok $? "start prints the first super-node endpoint ($sn)"
[ "$(grep -c '^supernode ' "$run/pids")" -eq 2 ] &&
    [ "$(grep -c '^daemon ' "$run/pids")" -eq 4 ]
ok $? "pids records 2 super-nodes and 4 daemons"
grep -Eq '^daemon A-1 [0-9]+ - A$' "$run/pids" &&
    grep -Eq "^supernode A-sn0 [0-9]+ $sn A\$" "$run/pids"
ok $? "records read role name pid endpoint cluster"
[ "$(count_alive "$run/pids")" -eq 6 ]
ok $? "every recorded process is alive"
[ "$(sed -n 1p "$run/supernodes")" = "$sn" ] &&
    [ "$(wc -l < "$run/supernodes")" -eq 2 ] &&
    cmp -s "$run/platform" "$work/small.platform"
ok $? "supernodes and platform are written in the run folder"
sn_b=$(sed -n 2p "$run/supernodes")
grep -q -- "--peer $sn --cluster B --platform $run/platform --links $run/links\$" \
        "$run/logs/B-sn0.log" &&
    grep -q -- "--cluster A --platform $run/platform --links $run/links\$" \
        "$run/logs/A-sn0.log" &&
    ! grep -q -- "--peer" "$run/logs/A-sn0.log"
ok $? "the later super-node is peered with the earlier one; each gets its cluster, the platform and the shared links file"
grep -q -- "--id A-1 --cluster A --speed 0.5 --power 0.5 --platform $run/platform --links $run/links --supernode $sn --supernode $sn_b" \
    "$run/logs/A-1.log" &&
    grep -q -- "--cluster B --speed 1 --power 2 --platform $run/platform --links $run/links --supernode $sn_b --supernode $sn" \
    "$run/logs/B-0.log" && [ -s "$run/links" ]
ok $? "daemons get cluster, speed, power, the platform, the shared links file, their own super-node first"
timeout 10 "$grid" status --run "$run" > "$work/status" 2>&1
[ $? -eq 0 ] && [ "$(grep -c ' alive ' "$work/status")" -eq 6 ]
ok $? "status shows all six alive"

timeout 10 "$grid" kill --run "$run" --daemon A-1 > "$work/killed" 2>&1
[ $? -eq 0 ] && [ "$(cat "$work/killed")" = A-1 ]
ok $? "kill --daemon A-1 kills it and names it"
timeout 10 "$grid" status --run "$run" > "$work/status" 2>&1
[ $? -eq 1 ] && grep -Eq '^daemon +A-1 .* dead ' "$work/status"
ok $? "status then shows A-1 dead and exits 1"
timeout 10 "$grid" kill --run "$run" --random 1 > "$work/killed" 2>&1
[ $? -eq 0 ] && grep -Eq '^(A-0|B-0|B-1)$' "$work/killed"
ok $? "kill --random 1 kills one live daemon ($(cat "$work/killed"))"
timeout 10 "$grid" kill --run "$run" --daemon nosuch 2>"$work/err"
[ $? -ne 0 ] && grep -q "no daemon named nosuch" "$work/err"
ok $? "kill of an unknown name fails clearly"
timeout 30 "$grid" start --platform "$work/small.platform" --run "$run" \
    --bin "$fake" 2>"$work/err"
[ $? -ne 0 ] && grep -q "already running" "$work/err"
ok $? "a second start over a running grid is refused"

#  A platform larger than the machine (a typo of nodes): refused before
#  any process starts (it used to start them until interrupted).
printf 'platform\n    name = "huge"\n    cluster\n        name = "A"\n        nodes = 90000\n' \
    >"$work/huge.platform"
timeout 30 "$grid" start --platform "$work/huge.platform" \
    --run "$work/huge-run" --bin "$fake" 2>"$work/err"
[ $? -ne 0 ] && grep -q "90001 processes .* on this machine, which holds about" \
    "$work/err" && [ ! -s "$work/huge-run/pids" ]
ok $? "a platform larger than the machine is refused before any process starts"

cp "$run/pids" "$work/pids.before"
timeout 30 "$grid" stop --run "$run" 2>"$work/err"
ok $? "stop exits 0"
[ "$(count_alive "$work/pids.before")" -eq 0 ]
ok $? "stop leaves no process behind"
[ ! -e "$run/pids" ] && [ -s "$run/logs/A-0.log" ] && [ -f "$run/supernodes" ]
ok $? "stop removes pids and keeps the logs"

#  ---- Failures stop what was started --------------------------------------
JACE_FAKE_SN_FAIL=1 timeout 60 "$grid" start \
    --platform "$work/small.platform" --run "$run" --bin "$fake" \
    2>"$work/err" >/dev/null
[ $? -ne 0 ] && grep -q "A-sn0 exited with status 3" "$work/err" &&
    grep -q "fake failure" "$work/err" && [ ! -e "$run/pids" ]
ok $? "a super-node that dies is reported with its log, and nothing stays"
JACE_FAKE_NO_REGISTER=1 timeout 60 "$grid" start \
    --platform "$work/small.platform" --run "$run" --bin "$fake" \
    --timeout 2 2>"$work/err" >/dev/null
rc=$?
[ $rc -ne 0 ] && grep -q "timed out.*to list the 4 daemons" "$work/err" &&
    [ ! -e "$run/pids" ] &&
    [ "$(count_fakes)" -eq 0 ]
ok $? "daemons that never register time out, and nothing stays"

#  ---- A real grid -------------------------------------------------------
real_bins=yes
for name in jace-supernode jace-daemon jace-spawner; do
    [ -x "$builddir/$name" ] || real_bins=no
done
if [ $real_bins = no ]; then
    for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17; do
        skip "real binaries not built yet"
    done
    exit $((failed > 0))
fi

spawner="$builddir/jace-spawner"
#  Short heartbeats, so a crashed daemon is noticed quickly.
sn=$(timeout 90 "$grid" start --platform "$work/small.platform" \
     --run "$real_run" --bin "$builddir" --timeout 60 \
     --supernode-arg=--heartbeat --supernode-arg=200 \
     --supernode-arg=--timeout --supernode-arg=1500 \
     --daemon-arg=--heartbeat --daemon-arg=200 2>"$work/err")
rc=$?
[ $rc -ne 0 ] && diag "real start failed: $(cat "$work/err")"
ok $rc "a real grid of 2 super-nodes and 4 daemons starts"
timeout 20 "$spawner" nodes --supernode "$sn" --json > "$work/nodes" 2>&1
[ "$(grep -o '"cluster": *"A"' "$work/nodes" | wc -l)" -eq 2 ] &&
    [ "$(grep -o '"cluster": *"B"' "$work/nodes" | wc -l)" -eq 2 ]
rc=$?
[ $rc -ne 0 ] && diag "nodes: $(cat "$work/nodes")"
ok $rc "nodes --json shows the 4 daemons with their clusters"

timeout 10 "$grid" kill --run "$real_run" --daemon A-1 >/dev/null 2>&1
gone=1
for attempt in $(seq 1 30); do
    timeout 20 "$spawner" nodes --supernode "$sn" --json > "$work/nodes" 2>&1
    if [ "$(grep -o '"id"' "$work/nodes" | wc -l)" -eq 3 ]; then
        gone=0
        break
    fi
    sleep 0.5
done
ok $gone "a killed daemon vanishes from nodes"

#  A crashed daemon comes back under a new id, in its cluster.
timeout 30 "$grid" revive --run "$real_run" > "$work/revived" 2>&1
[ $? -eq 0 ] && [ "$(cat "$work/revived")" = "A-1 A-1+1" ]
ok $? "revive restarts the dead daemon as A-1+1 and says so"
back=1
for attempt in $(seq 1 30); do
    timeout 20 "$spawner" nodes --supernode "$sn" --json > "$work/nodes" 2>&1
    if [ "$(jq '[.[] | select(.id == "A-1+1" and .cluster == "A")] | length' \
            "$work/nodes" 2>/dev/null)" = 1 ] &&
       [ "$(jq length "$work/nodes")" = 4 ]; then
        back=0
        break
    fi
    sleep 0.5
done
ok $back "which registers in cluster A: 4 daemons again"
timeout 30 "$grid" revive --run "$real_run" > "$work/revived" 2>&1
[ $? -eq 0 ] && [ ! -s "$work/revived" ] &&
    grep -q "^daemon A-1+1 " "$real_run/pids"
ok $? "revive with no daemon dead does nothing; pids names A-1+1"
timeout 10 "$grid" kill --run "$real_run" --daemon A-1+1 >/dev/null 2>&1
timeout 30 "$grid" revive --run "$real_run" > "$work/revived" 2>&1
[ "$(cat "$work/revived")" = "A-1+1 A-1+2" ]
ok $? "killed again, it comes back as A-1+2"

#  A daemon the pids file does not name, as a launcher killed between
#  starting it and recording it leaves: stop finds it by the file of the
#  run folder it names (here relative to its working folder).
bin=$(cd "$builddir" && pwd)
(cd "$work" && exec "$bin/jace-daemon" --id A-stray --cluster A \
     --platform real-run/platform --supernode "$sn") >"$work/stray.log" 2>&1 9>&- &
stray=$!
#  Past the build tree's wrapper script: the daemon's own binary runs
for attempt in $(seq 1 100); do
    tr '\0' '\n' <"/proc/$stray/cmdline" 2>/dev/null | head -n 1 |
        grep -q "jace-daemon$" && break
    sleep 0.1
done
cp "$real_run/pids" "$work/real-pids.before"
timeout 30 "$grid" stop --run "$real_run" 2>"$work/err"
ok $? "stop of the real grid exits 0"
[ "$(count_alive "$work/real-pids.before")" -eq 0 ]
ok $? "no real process is left behind"
! alive "$stray" && grep -q "stopped 1 processes of .* pids file did not name" \
    "$work/err"
rc=$?
[ $rc -ne 0 ] && diag "stop: $(cat "$work/err")"
ok $rc "nor a daemon of the run folder that pids does not name; stop says so"

#  The same grid with CURVE keys: every link encrypted and authenticated.
timeout 10 "$builddir/jace-keygen" "$work/keys" >/dev/null 2>&1
sn=$(timeout 90 "$grid" start --platform "$work/small.platform" \
     --run "$keys_run" --bin "$builddir" --keys "$work/keys" --timeout 60 \
     2>"$work/err")
rc=$?
[ $rc -ne 0 ] && diag "keyed start failed: $(cat "$work/err")"
ok $rc "a grid started with --keys comes up"
timeout 20 "$spawner" nodes --supernode "$sn" --json --keys "$work/keys" \
    > "$work/nodes" 2>&1
[ "$(grep -o '"id"' "$work/nodes" | wc -l)" -eq 4 ]
ok $? "a spawner holding the keys sees its 4 daemons"
cp "$keys_run/pids" "$work/keys-pids.before"
timeout 30 "$grid" stop --run "$keys_run" 2>/dev/null &&
    [ "$(count_alive "$work/keys-pids.before")" -eq 0 ]
ok $? "the keyed grid stops and leaves nothing behind"

#  Grids whose run folder is deleted before they are stopped: stop finds
#  them by the folder's path all the same, and sweep finds every one.
for dir in "$gone_run" "$kept_run"; do
    timeout 90 "$grid" start --platform "$work/small.platform" --run "$dir" \
        --bin "$builddir" --timeout 60 >/dev/null 2>"$work/err" ||
        diag "start in $dir failed: $(cat "$work/err")"
done
cp "$gone_run/pids" "$work/gone-pids"
cp "$kept_run/pids" "$work/kept-pids"
[ "$(count_alive "$work/gone-pids")" -eq 6 ] &&
    [ "$(count_alive "$work/kept-pids")" -eq 6 ]
ok $? "two more grids of 6 processes start"
rm -rf "$gone_run"
timeout 60 "$grid" sweep --grace 2 >"$work/swept" 2>"$work/err"
rc=$?
[ $rc -eq 0 ] && [ "$(count_alive "$work/gone-pids")" -eq 0 ] &&
    [ "$(grep -c " $gone_run\$" "$work/swept")" -eq 6 ] &&
    [ "$(wc -l <"$work/swept")" -eq 6 ]
rc=$?
[ $rc -ne 0 ] && diag "sweep: $(cat "$work/swept" "$work/err")"
ok $rc "sweep stops the 6 processes of the grid whose run folder was deleted, naming each"
[ "$(count_alive "$work/kept-pids")" -eq 6 ]
ok $? "and leaves the grid whose run folder is there"
rm -rf "$kept_run"
timeout 30 "$grid" stop --run "$kept_run" --grace 2 2>"$work/err"
rc=$?
[ $rc -eq 0 ] && [ "$(count_alive "$work/kept-pids")" -eq 0 ] &&
    grep -q "stopped 6 processes of .*kept-run, deleted before" "$work/err"
rc=$?
[ $rc -ne 0 ] && diag "stop: $(cat "$work/err")"
ok $rc "stop --run of a deleted run folder stops its grid all the same"
exit $((failed > 0))
