#!/bin/sh
#  test_scatter - a file matrix is handed out by the load-balanced scatter
#
#  Two clusters: A, three speed-1 nodes where the data is (scatter/root),
#  and B, three half-speed nodes behind a 2 Mb/s backbone.  The spawner
#  plans the scatter on the live model and sends one daemon's rows at a
#  time, by decreasing bandwidth; each daemon checks its data against the
#  digest the ASSIGN declared.  Checked: the answer is verified, the plan's
#  rows are the rows the tasks got, A is served before B (or after, with
#  scatter/order = increasing), slow and far B gets fewer rows, the data
#  phase lasted at least what the emulated backbone needs for B's rows,
#  and uniform gives every task the same.  A generated problem (no data
#  to send) gets rows in proportion to power, or the same with uniform.
#  Only the emulated link's lower bound is a time, never how fast this
#  machine runs.
. "$(dirname "$0")/lib.sh"
lib_init
plan 16

cat >"$RUN/far.platform" <<EOF
platform
    name = "far"
    backbone
        latency_us = 2000
        bandwidth_mbps = 2
    cluster
        name = "A"
        nodes = 3
    cluster
        name = "B"
        nodes = 3
        speed = 0.5
        supernodes = 0
EOF
"$BIN/jace-mmgen" poisson2d 40 "$RUN/p40.mtx" --rhs "$RUN/p40_rhs.mtx" \
    >/dev/null
#  A generator's slip must not leave a file that looks like a system
"$BIN/jace-mmgen" poisson2d 4 "$RUN/m.mtx" --rhs "$RUN/m.mtx" 2>/dev/null
same=$?
"$BIN/jace-mmgen" poisson2d 4 "$RUN/n.mtx" --rhs "$RUN/no/such/dir" 2>/dev/null
failed=$?
[ $same -eq 2 ] && [ ! -e "$RUN/m.mtx" ] && [ $failed -eq 1 ] \
    && [ ! -e "$RUN/n.mtx" ]
ok $? "jace-mmgen: --rhs on the matrix's own file is refused; a failed --rhs leaves no matrix"
cat >"$RUN/scatter.job" <<EOF
job
    application = "multisplit"
    tasks = 6
    tolerance = 1e-8
    max_seconds = 90
problem
    kind = "matrix"
    matrix = "p40.mtx"
    rhs = "p40_rhs.mtx"
solver
    inner = "lu-banded"
scatter
    root = "A"
EOF

"$BIN/jace-grid" start --platform "$RUN/far.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of two clusters starts"
sn=$(cat "$RUN/grid.endpoint")

#  The verified residual is below the tolerance
verified () {       #  verified NAME
    residual=$(job_residual "$1")
    [ -n "$residual" ] && awk "BEGIN { exit !($residual <= 1e-8) }"
}
#  Clusters of the tasks in send order, e.g. "AAABBB"
send_clusters () {  #  send_clusters NAME
    jq -r -s '
        (map (select (.event == "assign")) | map ({ (.task | tostring):
                                                    .cluster }) | add) as $c
        | map (select (.event == "scatter")) [0].send_order
        | map ($c [tostring]) | join ("")' "$RUN/$1.events"
}

submit balanced "$RUN/scatter.job" "$sn"
verified balanced
ok $? "a scattered file matrix gives a verified answer"

jq -s -e '
    (map (select (.event == "scatter")) [0].rows) as $rows
    | (map (select (.event == "assign")) | sort_by (.task) | map (.rows))
      == $rows and ($rows | add) == 1600' "$RUN/balanced.events" >/dev/null
ok $? "the tasks got the rows the scatter planned, 1600 in all"
order=$(send_clusters balanced)
[ "$order" = AAABBB ]
ok $? "rows go out by decreasing bandwidth from the root: A first ($order)"

jq -s -e '
    map (select (.event == "assign"))
    | (map (select (.cluster == "B")) | map (.rows) | max)
      < (map (select (.cluster == "A")) | map (.rows) | min)' \
    "$RUN/balanced.events" >/dev/null
ok $? "slow daemons behind the slow backbone get fewer rows"

#  B's rows crossed the emulated 2 Mb/s backbone one daemon at a time.
need=$(jq -s -r '
    (map (select (.event == "scatter")) [0]) as $s
    | map (select (.event == "assign" and .cluster == "B")) | map (.rows)
    | add * $s.bytes_per_row * 8 / 2e6' "$RUN/balanced.events")
took=$(event balanced scatter_data | jq -r .measured_seconds)
diag "data phase $took s; B's rows need $need s on the backbone"
awk "BEGIN { exit !($took >= 0.95 * $need && $need > 0.05) }"
ok $? "the data phase lasts what the emulated backbone needs for B's rows"
event balanced scatter_makespan | jq -e '.measured_seconds > 0
                                         and .predicted_seconds > 0' \
    >/dev/null
ok $? "the events record predicted and measured makespans"

submit increasing "$RUN/scatter.job" "$sn" --set scatter/order=increasing
order=$(send_clusters increasing)
verified increasing && [ "$order" = BBBAAA ]
ok $? "scatter/order = increasing serves the far cluster first ($order)"

submit uniform "$RUN/scatter.job" "$sn" --set scatter/distribution=uniform
verified uniform && event uniform scatter | jq -e '.rows | unique
                                                   == [266, 267]' >/dev/null
ok $? "scatter/distribution = uniform gives every task the same rows"

#  A generated problem (each daemon builds its own rows), the same job
{
    sed '/^problem/,$d' "$RUN/scatter.job"
    printf 'problem\n    kind = "poisson2d"\n    n = 40\n'
    printf 'solver\n    inner = "lu-banded"\n'
} >"$RUN/generated.job"
submit generated "$RUN/generated.job" "$sn"
verified generated && jq -s -e '
    map (select (.event == "assign"))
    | (map (select (.cluster == "B")) | map (.rows) | max) * 2
      <= (map (select (.cluster == "A")) | map (.rows) | min) + 1' \
    "$RUN/generated.events" >/dev/null
ok $? "a generated problem gives half-speed daemons half the rows"
submit generated_uniform "$RUN/generated.job" "$sn" \
    --set scatter/distribution=uniform
verified generated_uniform && jq -s -e '
    map (select (.event == "assign")) | map (.rows) | unique == [266, 267]' \
    "$RUN/generated_uniform.events" >/dev/null
ok $? "scatter/distribution = uniform gives a generated problem's tasks the same rows"

submit bad "$RUN/scatter.job" "$sn" --set scatter/distribution=fair
[ $? -ne 0 ] && grep -q "scatter/distribution = 'fair' is unknown" \
    "$RUN/bad.err"
ok $? "an unknown distribution is refused, naming the key"

submit noroot "$RUN/scatter.job" "$sn" --set scatter/root=Nowhere
[ $? -ne 0 ] && grep -qE "scatter/root = 'Nowhere' is no cluster of the grid \(its clusters: (A, B|B, A)\)" \
    "$RUN/noroot.err" && ! grep -q '"event":"assign"' "$RUN/noroot.events"
ok $? "a scatter/root that names no cluster fails the job before any task is placed"

! grep -l "does not hash" "$RUN"/grid/logs/*.log >/dev/null 2>&1
ok $? "every daemon's data hashed to its digest"

! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
