#!/bin/sh
#  test_mapping_map.sh - the jace-map tool, as a user runs it (TAP)
map="$JACE_BUILDDIR/jace-map"
data="$JACE_SRCDIR/tests/data/planning"
platforms="$JACE_SRCDIR/examples/platforms"
count=0
failed=0
check () {
    count=$((count + 1))
    if [ "$1" = 0 ]; then echo "ok $count - $2"
    else echo "not ok $count - $2"; failed=1; fi
}
echo "1..13"
"$map" --help | grep -q "jace-map --platform FILE"
check $? "--help prints the usage"
out=$("$map" --platform "$platforms/two-clusters.platform" --tasks 6)
echo "$out" | grep -q "hd 0.4779" && [ "$(echo "$out" | grep -c 'predicted ET')" -eq 4 ]
check $? "all four mappers side by side, with hd"
out=$("$map" --platform "$platforms/local8.platform" --job "$data/banded.job" 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q "cannot map 16 tasks on 8 nodes" \
    && echo "$out" | grep -q -- "--slots-per-node"
check $? "16 tasks on 8 nodes are refused, naming --slots-per-node"
out=$("$map" --platform "$platforms/local8.platform" --job "$data/band8.job" --algo maheve --json)
echo "$out" | grep -q '"hd": 0,' && echo "$out" | grep -q '"algorithm": "maheve"' \
    && echo "$out" | grep -q '"spares": \['
check $? "--json with a Matrix Market job"
"$map" --platform "$platforms/local8.platform" --tasks 2 --algo nope 2>&1 | grep -q "unknown mapper"
check $? "an unknown mapper is named"
err=$("$map" --platform "$data/bad-speed.platform" --tasks 2 2>&1)
[ $? -eq 1 ] && echo "$err" | grep -q "bad-speed.platform:8: speed"
check $? "a bad platform is reported with file and line"
printf 'job\n    tasks = zero\n' > "${TMPDIR:-/tmp}/jace-map-bad.job.$$"
err=$("$map" --platform "$platforms/local8.platform" --job "${TMPDIR:-/tmp}/jace-map-bad.job.$$" 2>&1)
status=$?
rm -f "${TMPDIR:-/tmp}/jace-map-bad.job.$$"
[ $status -eq 1 ] && echo "$err" | grep -q "jace-map-bad.job.$$:2: tasks must be"
check $? "a bad job file is reported with file and line"
"$map" --platform "$platforms/local8.platform" 2>/dev/null
[ $? -eq 2 ]
check $? "a missing --job/--tasks is a usage error"
"$map" --platform "$platforms/local8.platform" --tasks 3 --algo default | grep -q "0:A-0 1:A-1 2:A-2"
check $? "the default policy takes nodes in order"
#  Two daemons per machine: 16 tasks fit on 8 machines, every slot at
#  most once, each named NODE#SLOT of a machine of the platform.
out=$("$map" --platform "$platforms/local8.platform" --job "$data/banded.job" \
      --slots-per-node 2 --json)
check $? "--slots-per-node 2 maps 16 tasks on 8 machines with every mapper"
echo "$out" | jq -e '.nodes == 16 and ([.results[] | .mapping | length == 16
    and (unique | length == 16)
    and all(test("^[AB]-[0-3]#[01]$"))] | all)' >/dev/null
check $? "each mapping uses 16 distinct slots of the 8 machines"
"$map" --platform "$platforms/local8.platform" --tasks 12 --slots-per-node 2 \
    --json | jq -e '[.results[] | .mapping + .spares | unique | length == 16]
    | all' >/dev/null
check $? "12 tasks on 16 slots: the mapped slots and the spares are all 16"
"$map" --platform "$platforms/local8.platform" --tasks 2 --slots-per-node 0 \
    2>/dev/null
[ $? -eq 2 ]
check $? "--slots-per-node 0 is a usage error"
exit $failed
