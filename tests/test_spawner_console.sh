#!/bin/sh
#  tests/test_spawner_console.sh - the live table in a real terminal
#
#  A job loses a daemon while its table is drawn in a tmux pane.  What the
#  pane shows: the crash notice, still visible above the table; one table
#  heading, never a stack of stale ones; and, once the job is over, a last
#  frame with the verified residual and every task done.
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux is not installed"
    exit 0
fi
lib_init medium
plan 8

start_supernode sn --heartbeat 200 --timeout 1000
for d in 1 2 3; do
    start_daemon "d$d" --supernode "$SN_sn"
done
check "three daemons register" wait_for 20 count_is 3 "$SN_sn"

#  A private tmux server, in the run folder, killed on the way out
TMUX_SOCKET=$RUN/tmux
screen () { tmux -S "$TMUX_SOCKET" capture-pane -p -t console; }
cleanup_tmux () { tmux -S "$TMUX_SOCKET" kill-server 2>/dev/null; }
trap 'cleanup_tmux; lib_cleanup' EXIT

cat >"$RUN/console.sh" <<SCRIPT
"$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
    --supernode "$SN_sn" --set job/tasks=2 --set problem/n=24 \
    --set job/heartbeat_timeout=1000 --set faults/tasks=1 \
    --set faults/first_iteration=100 --set job/spares=1 \
    --events "$RUN/console.events"
echo "EXIT=\$?"
sleep 300
SCRIPT
tmux -S "$TMUX_SOCKET" new-session -d -s console -x 100 -y 30 \
    "sh '$RUN/console.sh'"

check "the job ends in the pane" wait_for 60 sh -c \
    "tmux -S '$TMUX_SOCKET' capture-pane -p -t console | grep -q EXIT="
screen >"$RUN/screen.txt"
diag "the pane at the end:"; sed 's/^/#   /' "$RUN/screen.txt" >&2
grep -q "EXIT=0" "$RUN/screen.txt"
ok $? "the job is verified"
grep -q "crashing daemon .* of task 1" "$RUN/screen.txt"
ok $? "the crash notice is still on the screen"
[ "$(grep -c "TASK  DAEMON" "$RUN/screen.txt")" -eq 1 ] \
    && ! grep -q "last residual" "$RUN/screen.txt"
ok $? "one table heading, no stale frame left above"
grep -q "verified: residual" "$RUN/screen.txt" \
    && [ "$(grep -cE '^ +[01]  d[123] .* done$' "$RUN/screen.txt")" -eq 2 ]
ok $? "the last frame shows the verified residual and every task done"
cleanup_tmux
lib_finish
