#!/bin/sh
#  test_mapping_agree - jace-map and the spawner map a job alike
#
#  A live grid of three clusters of uneven powers, its links not probed
#  (--probe 0: the model's links are the documented defaults, so the
#  listing is the same input at both times).  For every mapping, jace-map
#  --supernode is asked where the job's tasks would run; then the job is
#  submitted with that mapping, and its assign events must name the same
#  daemon for every task, and its plan event the same spares.
. "$(dirname "$0")/lib.sh"
lib_init medium
MAPPINGS="maheve maheve-locality aiac-qm f-ec default simple"
plan $(( 1 + 2 * 6 + 2 + 2 ))

start_supernode sn --heartbeat 200 --timeout 1000 --probe 0
number=0
for spec in A:3:2 A:2:2 B:3:1.5 B:2:1 C:1:1 C:2:0.5; do
    cluster=${spec%%:*}; rest=${spec#*:}; count=${rest%%:*}; power=${rest#*:}
    for _ in $(seq 1 "$count"); do
        number=$((number + 1))
        start_daemon "$cluster-$number" --supernode "$SN_sn" \
            --cluster "$cluster" --power "$power"
    done
done
check "13 daemons register" wait_for 15 count_is 13 "$SN_sn"

JOB="$JACE_SRCDIR/examples/poisson3d.job"
SETS="--set job/tasks=5 --set problem/n=16 --set job/spares=1"
for mapping in $MAPPINGS; do
    wait_for 10 count_is 13 "$SN_sn" '.state == "free"'
    # shellcheck disable=SC2086
    timeout 20 "$BIN/jace-map" --job "$JOB" --supernode "$SN_sn" \
        --algo "$mapping" --json $SETS >"$RUN/$mapping.map" 2>"$RUN/$mapping.map.err"
    # shellcheck disable=SC2086
    submit "$mapping" "$JOB" "$SN_sn" $SETS --set job/mapping="$mapping"
    ok $? "$mapping: the job exits 0"
    predicted=$(jq -c '.results[0].mapping' "$RUN/$mapping.map")
    placed=$(grep '"event":"assign"' "$RUN/$mapping.events" \
             | jq -s -c 'sort_by(.task) | map(.daemon)')
    spares_map=$(jq -c '.results[0].spares | sort' "$RUN/$mapping.map")
    spares_run=$(grep '"event":"plan"' "$RUN/$mapping.events" | head -n 1 \
                 | jq -c '.spares | sort')
    [ -n "$predicted" ] && [ "$predicted" = "$placed" ] \
        && [ "$spares_map" = "$spares_run" ]
    ok $? "$mapping: jace-map's tasks $predicted and spares $spares_map are the spawner's ($placed, $spares_run)"
done
#  The mappings do not all agree with each other on this grid.
distinct=$(for m in $MAPPINGS; do jq -c '.results[0].mapping' "$RUN/$m.map"; done \
           | sort -u | wc -l)
[ "$distinct" -ge 3 ]
ok $? "the six mappings place the job in $distinct different ways"
jq -e '.results[0].predicted_et_seconds > 0' "$RUN/maheve.map" >/dev/null
ok $? "jace-map predicts ET in seconds"
lib_finish
