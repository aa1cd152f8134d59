#!/bin/sh
#  test_collectives_exchange - total exchanges (jace_task_alltoallv and
#  the set-up trade of request lists) on virtual grids of two and three
#  clusters of unequal sizes, with and without a crashed daemon
#
#  The `exchange` application runs K rounds of alltoallv whose pieces
#  (random sizes, empty ones included) are functions of (round, source,
#  destination): every task checks each byte it gets and counts, and the
#  spawner's verification passes only if every task received every piece
#  of every round exactly once, right, and was asked exactly what the
#  set-up rule says; a wrong or doubled piece fails the job at once.
#
#  1. Clusters of 3 and 5 behind a shared 5 ms backbone, LG: verified,
#     and the daemons' emulated schedules (-v) show LG's 2 max(n1, n2)
#     backbone messages per exchange (K rounds and the set-up), not the
#     direct plan's 2 n1 n2, which a second job then shows.
#  2. Clusters of 2, 3 and 4: verified, 2 (3 + 4 + 4) backbone messages
#     per exchange (LG pairwise in tournament rounds).
#  3. Clusters of 4 and 6 (two spares), a daemon crashed by the job's
#     fault schedule once the tasks are past round 8 of 40 (on progress,
#     not on the clock): verified with the task restored from a
#     checkpoint, then again with no checkpoints (the replacement runs
#     every round again from the first, served from the others' logs);
#     two daemons crashed at once, both tasks restored from copies
#     (of different rounds when each held the other's newest), verified;
#     with the logs bounded to nothing, the job fails with the reason
#     instead of waiting for ever.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 24

ROUNDS=6
#  platform LATENCY_US NAME:NODES...: clusters behind a shared backbone
platform () {
    latency=$1; shift
    printf 'platform\n    name = "exchange"\n    backbone\n'
    printf '        latency_us = %s\n        bandwidth_mbps = 100\n' "$latency"
    printf '        shared = 1\n'
    supernodes=1
    for cluster in "$@"; do
        printf '    cluster\n        name = %s\n        nodes = %s\n' \
            "${cluster%:*}" "${cluster#*:}"
        printf '        supernodes = %s\n' $supernodes
        supernodes=0
    done
}

cat >"$RUN/exchange.job" <<EOF
job
    application = "exchange"
    mode = "async"
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 60
    reserve_timeout = 20
    heartbeat_timeout = 1000
exchange
    rounds = $ROUNDS
    bytes = 3000
    sizes = "random"
    seed = 7
checkpoint
    copies = 0
EOF

start_grid () {     #  start_grid NAME PLATFORM-ARGS...
    name=$1; shift
    platform "$@" >"$RUN/$name.platform"
    "$BIN/jace-grid" start --platform "$RUN/$name.platform" \
        --run "$RUN/$name" --daemon-arg=-v --daemon-arg=--heartbeat \
        --daemon-arg=200 >"$RUN/$name.endpoint" 2>"$RUN/$name.grid.err"
}

#  Messages the daemons of grid $1 sent between clusters so far, as their
#  shapers scheduled them ("shaper: FROM to task T in TO: ...").
backbone () {
    cat "$RUN/$1"/logs/*.log | awk '
        $5 == "shaper:" { to = $11; sub (/:$/, "", to); if ($6 != to) n++ }
        END { print n + 0 }'
}

#  run_job NAME GRID SET...: one exchange job on a grid
run_job () {
    name=$1 grid=$2; shift 2
    submit "$name" "$RUN/exchange.job" "$(cat "$RUN/$grid.endpoint")" "$@"
}

verified () {       #  verified NAME: exit 0 and a residual of exactly 0
    [ "$(job_residual "$1")" = 0 ]
}

#  1. Two clusters, 3 and 5 tasks
start_grid two 5000 A:3 B:5
ok $? "a grid of clusters of 3 and 5 starts"
before=$(backbone two)
run_job lg two --set job/tasks=8
ok $? "an LG exchange job of 8 tasks exits 0"
verified lg
ok $? "every piece of every round reached every task once, right"
lg_messages=$(( $(backbone two) - before ))
diag "LG: $lg_messages backbone messages for $ROUNDS rounds and the set-up"
[ "$lg_messages" -eq $(( (ROUNDS + 1) * 2 * 5 )) ]
ok $? "LG crosses the backbone 2 max(n1, n2) = 10 times per exchange"
before=$(backbone two)
run_job direct two --set job/tasks=8 --set exchange/algorithm=direct
verified direct
ok $? "the direct plan delivers every piece once, right"
direct_messages=$(( $(backbone two) - before ))
diag "direct: $direct_messages backbone messages"
[ "$direct_messages" -eq $(( (ROUNDS + 1) * 2 * 3 * 5 )) ]
ok $? "the direct plan crosses it 2 n1 n2 = 30 times per exchange"
#  A job of slow rounds: its residual falls as they go (1.01 to the power
#  of the rounds left), so the stall check (2 snapshots here) lets it run
#  to the end.  It was a flat 1 until the last round, and such jobs were
#  ended as "not converging".
run_job slow two --set job/tasks=8 --set exchange/rounds=60 \
    --set exchange/pause_ms=200 --set job/stall_snapshots=2
verified slow && grep '"event":"verification"' "$RUN/slow.events" | jq -s -e '
    [.[] | select(.passed | not) | .residual] as $r
    | ($r | length) >= 1 and all($r[]; . >= 1 and . <= pow(1.01; 60))
    and ([range(1; $r | length) | $r[.] < $r[. - 1]] | all)' >/dev/null
ok $? "a job of slow rounds is verified, its residual falling as they go"
diag "residuals: $(grep '"event":"verification"' "$RUN/slow.events" | jq -r .residual | tr '\n' ' ')"
run_job bad two --set job/tasks=8 --set exchange/algorithm=ring
grep -q "exchange/algorithm = 'ring'" "$RUN/bad.err"
ok $? "an unknown exchange algorithm is refused with the reason"
"$BIN/jace-grid" stop --run "$RUN/two" >/dev/null 2>&1

#  2. Three clusters, 2, 3 and 4 tasks
start_grid three 5000 A:2 B:3 C:4
ok $? "a grid of clusters of 2, 3 and 4 starts"
before=$(backbone three)
run_job three three --set job/tasks=9 --set exchange/sizes=fixed
verified three
ok $? "an LG exchange job over three clusters: every piece once, right"
messages=$(( $(backbone three) - before ))
diag "three clusters: $messages backbone messages"
[ "$messages" -eq $(( (ROUNDS + 1) * 2 * (3 + 4 + 4) )) ]
ok $? "LG crosses the backbones 2 (3 + 4 + 4) = 22 times per exchange"
"$BIN/jace-grid" stop --run "$RUN/three" >/dev/null 2>&1

#  3. A daemon crashed during the exchanges
start_grid spare 10000 A:4 B:6
ok $? "a grid of clusters of 4 and 6 starts"
CRASH="--set job/tasks=8 --set job/spares=2 --set exchange/rounds=40
    --set faults/first_iteration=8 --set faults/every=100
    --set faults/rounds=1 --set faults/tasks=0"
#  Each job crashes a daemon for good: bring the dead back (as new ids)
#  and wait until all 10 are free, so every job has its two spares.
renew_spares () {
    "$BIN/jace-grid" revive --run "$RUN/spare" >/dev/null 2>&1
    wait_for 20 count_is 10 "$(cat "$RUN/spare.endpoint")" \
        '.state == "free"'
}
crashed_mid_run () {    #  crashed_mid_run NAME: crashed before round 40
    iteration=$(grep '"event":"crash"' "$RUN/$1.events" | jq .iteration)
    [ -n "$iteration" ] && [ "$iteration" -lt 40 ] &&
        grep -q '"event":"replace"' "$RUN/$1.events"
}
# shellcheck disable=SC2086
run_job restored spare $CRASH --set checkpoint/copies=2 \
    --set checkpoint/every_iterations=2
verified restored
ok $? "a job whose daemon crashed mid-run still gets every piece once, right"
crashed_mid_run restored
ok $? "the crash came during the exchanges and the task was replaced"
grep -q '"from":"checkpoint"' "$RUN/restored.events"
ok $? "the replacement went on from a checkpoint"
renew_spares
# shellcheck disable=SC2086
run_job initial spare $CRASH
verified initial
ok $? "with no checkpoint, the replacement runs every round again: right"
crashed_mid_run initial && grep -q '"from":"initial"' "$RUN/initial.events"
ok $? "it restarted from its initial state"
renew_spares
#  Two daemons crashed at once: when each held the other's newest copy,
#  their tasks restore from copies rounds apart, and the one restored
#  later serves the other, from its copy, the rounds that one runs
#  again.  (While a copy carried its last round only, 2 of 4 jobs like
#  this one, crashed at round 30, failed.)  Copies by time, so that
#  tasks' copies lie rounds apart.
run_job pair spare --set job/tasks=8 --set job/spares=2 \
    --set exchange/rounds=40 --set exchange/pause_ms=50 \
    --set faults/first_iteration=20 --set "faults/tasks=0 5" \
    --set checkpoint/copies=2 --set checkpoint/every_seconds=1
verified pair
ok $? "two tasks lost at once and restored from their copies: every piece once, right"
diag "restored (task, iteration): $(grep '"event":"restored"' \
    "$RUN/pair.events" | jq -r '"\(.task) \(.iteration)"' | tr '\n' ' ')"
[ "$(grep '"event":"restored"' "$RUN/pair.events" |
    jq -s '[.[] | select(.from == "checkpoint") | .task] | unique | length')" = 2 ]
ok $? "both went on from checkpoints"
renew_spares
started=$(now_msec)
# shellcheck disable=SC2086
run_job gone spare $CRASH --set exchange/log_mib=0 \
    --set exchange/fallback_seconds=0.5
status=$?
diag "$(grep -o 'no longer holds[^"]*' "$RUN/gone.events" | head -n 1)"
[ $status -ne 0 ] && grep '"event":"failure"' "$RUN/gone.events" |
    grep -q "no longer holds"
ok $? "with no log a replacement cannot be served: the job fails, saying so"
[ $(( $(now_msec) - started )) -lt 30000 ]
ok $? "and fails within seconds, not at its time limit"
! grep -h -E "malformed|dropped (DATA|transfer)" "$RUN"/*/logs/*.log \
    | grep -v "we have no task of" | grep -q .
ok $? "no daemon dropped an exchange message as malformed"

stop_grids
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/*/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any daemon log"
sanitizers_quiet
ok $? "none in the spawners' logs either"
[ "$lib_failed" -eq 0 ]
