#!/bin/sh
#  test_scatter_relay - a cluster's data crosses the backbone once, to a
#  relay there, which passes it on; a relay that dies loses nothing
#
#  Two clusters: A, where the data is (scatter/root), and B behind a slow
#  backbone, with no super-node.  The first of B's tasks in the send order
#  relays the others' chunks (scatter/relay = auto, the default).
#  Checked: the plan names the relays, the relay passed every task's
#  chunks on and their acknowledgements back, the answer is verified and
#  every daemon's data hashed to its digest; with scatter/relay = off
#  nothing is relayed; with CURVE keys on, relayed chunks are accepted.
#  Then the relay is killed while it holds a task's chunks (the trigger
#  is its own log line for that task, and the slow backbone holds the
#  chunks seconds after it): the spawner gives the relay up, sends the
#  rest of that task's data straight to it from the last byte it
#  acknowledged, and the job still ends verified.  Nothing here measures
#  how fast the machine runs.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 17

cat >"$RUN/far.platform" <<EOF
platform
    name = "far"
    backbone
        latency_us = 5000
        bandwidth_mbps = 0.5
    cluster
        name = "A"
        nodes = 4
    cluster
        name = "B"
        nodes = 5
        supernodes = 0
EOF
"$BIN/jace-mmgen" poisson2d 70 "$RUN/p.mtx" --rhs "$RUN/p_rhs.mtx" \
    >/dev/null
#  Equal blocks: 78 KB a task, 1.25 s each on the backbone.
cat >"$RUN/relay.job" <<EOF
job
    application = "multisplit"
    tasks = 6
    tolerance = 1e-6
    max_seconds = 120
    heartbeat_timeout = 3000
problem
    kind = "matrix"
    matrix = "p.mtx"
    rhs = "p_rhs.mtx"
solver
    inner = "bicgstab"
scatter
    root = "A"
    distribution = "uniform"
EOF

"$BIN/jace-grid" start --platform "$RUN/far.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of two clusters starts"
sn=$(cat "$RUN/grid.endpoint")

verified () {       #  verified NAME
    residual=$(job_residual "$1")
    [ -n "$residual" ] && awk "BEGIN { exit !($residual <= 1e-6) }"
}
#  The plan's relays, checked against the assignments: B's tasks all name
#  the first of them in the send order (which names itself), A's none.
relays_planned () { #  relays_planned NAME
    jq -s -e '
        (map (select (.event == "assign")) | map ({ (.task | tostring):
                                                    .cluster }) | add) as $c
        | (map (select (.event == "scatter")) [0]) as $s
        | ($s.send_order | map (select ($c [tostring] == "B"))) as $b
        | ($b | length) >= 2
          and all ($s.send_order [];
                   . as $t | $s.relays [$t]
                   == (if $c [$t | tostring] == "B" then $b [0] else -1 end))' \
        "$RUN/$1.events" >/dev/null
}
relay_lines () { cat "$RUN"/grid/logs/B-*.log | grep -c "relay: passing"; }
b_tasks () {        #  b_tasks NAME: how many tasks run in B
    jq -s 'map (select (.event == "assign" and .cluster == "B")) | length' \
        "$RUN/$1.events"
}

submit relayed "$RUN/relay.job" "$sn"
verified relayed && relays_planned relayed
ok $? "B's data goes through the first of B's tasks, and the answer is verified"
passed=$(grep -h "relay: job .* over" "$RUN"/grid/logs/B-*.log \
         | sed -n 's/.*over: \([0-9]*\) chunks passed on, \([0-9]*\) ack.*/\1 \2/p')
relayed=$(( $(b_tasks relayed) - 1 ))
diag "relay: $passed (chunks passed on, acknowledgements back) for $relayed tasks"
[ -n "$passed" ] && [ "$(relay_lines)" -eq "$relayed" ] \
    && echo "$passed" | awk "{ exit !(\$1 >= $relayed && \$2 >= \$1) }"
ok $? "the relay passed the other B tasks' chunks on and their acknowledgements back"

submit direct "$RUN/relay.job" "$sn" --set scatter/relay=off
verified direct && jq -s -e 'map (select (.event == "scatter")) [0].relays
                             | all (. == -1)' "$RUN/direct.events" >/dev/null \
    && [ "$(relay_lines)" -eq "$relayed" ]
ok $? "scatter/relay = off sends every task its data straight"

submit bad "$RUN/relay.job" "$sn" --set scatter/relay=sometimes
[ $? -ne 0 ] && grep -q "scatter/relay = 'sometimes' is unknown (known: off, auto)" \
    "$RUN/bad.err"
ok $? "an unknown scatter/relay is refused, naming the key and its values"

#  The relay dies holding the chunks of the first task it relays to.
before=$(relay_lines)
timeout $((150 * SLOW)) "$BIN/jace-spawner" submit "$RUN/relay.job" \
    --supernode "$sn" -q --events "$RUN/crash.events" \
    >"$RUN/crash.out" 2>"$RUN/crash.err" &
job=$!
wait_for $((60 * SLOW)) sh -c "[ \$(cat '$RUN'/grid/logs/B-*.log \
                                  | grep -c 'relay: passing') -gt $before ]"
relay=$(grep -l "relay: passing" "$RUN"/grid/logs/B-*.log | while read -r f; do
            [ "$(grep -c 'relay: passing' "$f")" -gt "$(grep -c 'relay: job' "$f")" ] \
                && basename "$f" .log
        done | head -n 1)
"$BIN/jace-grid" kill --run "$RUN/grid" --daemon "$relay" >/dev/null
ok $? "the relay ($relay) is killed while it passes data on"
wait $job
ok $? "the job ends"
jq -s -e 'map (select (.event == "relay_lost")) | length == 1
           and .[0].streams >= 1' "$RUN/crash.events" >/dev/null
ok $? "the spawner gives the relay up and sends its streams straight"
verified crash
ok $? "the answer is still verified"
target=$(grep -h "relay: passing" "$RUN/grid/logs/$relay.log" | tail -n 1 \
         | sed -n "s/.* on to daemon \([^ ]*\)$/\1/p")
[ -n "$target" ] && [ -s "$RUN/grid/logs/$target.log" ] \
    && ! grep -q "giving up task" "$RUN/grid/logs/$target.log"
ok $? "the task it relayed to ($target) kept its daemon and its data"

! grep -l "does not hash" "$RUN"/grid/logs/*.log >/dev/null 2>&1
ok $? "every daemon's data hashed to its digest"

#  A daemon killed while its ASSIGN waits for its turn in the scatter is
#  given up from its link at once, not a turn and a heartbeat bound later.
#  The target is the last of B's tasks to be sent; the trigger is the
#  first B task's daemon taking its ASSIGN: the backbone then holds that
#  task's data over a second before the next may start.
assigned () {       #  assigned DAEMON JOB
    grep -q "assigned task [0-9]* of job $2" "$RUN/grid/logs/$1.log"
}
timeout $((150 * SLOW)) "$BIN/jace-spawner" submit "$RUN/relay.job" \
    --supernode "$sn" -q --events "$RUN/early.events" --set scatter/relay=off \
    >"$RUN/early.out" 2>"$RUN/early.err" &
job=$!
wait_for $((60 * SLOW)) grep -q '"event":"scatter"' "$RUN/early.events"
id=$(jq -r 'select (.event == "scatter") | .job' "$RUN/early.events")
b_order=$(jq -s -r '
    (map (select (.event == "assign")) | map ({ (.task | tostring):
                                                .cluster }) | add) as $c
    | map (select (.event == "scatter")) [0].send_order []
    | select ($c [tostring] == "B")' "$RUN/early.events")
daemon_of () { jq -r "select (.event == \"assign\" and .task == $1) | .daemon" \
                   "$RUN/early.events" | head -n 1; }
first=$(daemon_of "$(echo "$b_order" | head -n 1)")
last_task=$(echo "$b_order" | tail -n 1)
last=$(daemon_of "$last_task")
wait_for $((60 * SLOW)) assigned "$first" "$id"
! assigned "$last" "$id" && "$BIN/jace-grid" kill --run "$RUN/grid" \
    --daemon "$last" >/dev/null
ok $? "the daemon of task $last_task ($last) is killed before its ASSIGN left"
wait $job
jq -s -e "map (select (.event == \"dead\" and .task == $last_task))
          | length == 1 and (.[0].reason | test (\"link dropped\"))" \
    "$RUN/early.events" >/dev/null
ok $? "its daemon is given up from its dropped link, not after a silence"
verified early
ok $? "the task is placed again and the answer is verified"

#  The same with CURVE keys: a relayed chunk comes from a daemon's key
"$BIN/jace-keygen" "$RUN/keys" >/dev/null 2>&1
"$BIN/jace-grid" start --platform "$RUN/far.platform" --run "$RUN/keyed" \
    --keys "$RUN/keys" >"$RUN/keyed.endpoint" 2>"$RUN/keyed.err"
ok $? "the grid starts with keys"
submit keyed "$RUN/relay.job" "$(cat "$RUN/keyed.endpoint")" \
    --keys "$RUN/keys"
verified keyed && relays_planned keyed \
    && grep -q "relay: job .* over: [1-9]" "$RUN"/keyed/logs/B-*.log
ok $? "with keys on, the relay passes data on and the answer is verified"

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/keyed/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
