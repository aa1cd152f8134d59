#!/bin/sh
#  test_mapping_map.sh - the jace-map tool, as a user runs it (TAP): the
#  spawner's job files, the spawner's plans
map="$JACE_BUILDDIR/jace-map"
data="$JACE_SRCDIR/tests/data/planning"
platforms="$JACE_SRCDIR/examples/platforms"
job="$JACE_SRCDIR/examples/poisson2d.job"
tmp="${TMPDIR:-/tmp}/jace-map-test.$$"
count=0
failed=0
check () {
    count=$((count + 1))
    if [ "$1" = 0 ]; then echo "ok $count - $2"
    else echo "not ok $count - $2"; failed=1; fi
}
echo "1..17"
"$map" --help | grep -q "jace-map --job FILE (--platform FILE | --supernode EP)"
check $? "--help prints the usage"
"$map" --version | grep -q "^jace-map [0-9]"
check $? "--version"
out=$("$map" --job "$job" --platform "$platforms/two-clusters.platform" --algo all)
echo "$out" | grep -q "hd 0.4779" \
    && [ "$(echo "$out" | grep -c 'predicted ET [0-9.]* [mu]*s per iteration')" -eq 6 ]
check $? "the spawner's job file: all six mappings side by side, hd, ET with its unit"
echo "$out" | grep -q "^maheve .*" && echo "$out" | grep -q "^simple .*" \
    && echo "$out" | grep -q "0:B-3 1:A-0"
check $? "daemons named as jace-grid names them (MAHEVE puts the heaviest task on B-3)"
out=$("$map" --job "$job" --platform "$platforms/two-clusters.platform" --algo all --json)
echo "$out" | jq -e '.hd > 0.47 and .tasks == 8 and .daemons == 10
    and (.results | length == 6)
    and ([.results[] | .mapping | length == 8 and (unique | length == 8)
          and all(test("^[AB]-[0-9]$"))] | all)
    and ([.results[] | .predicted_et_seconds > 0] | all)' >/dev/null
check $? "--json: every mapping places 8 tasks on 8 distinct daemons"
out=$("$map" --job "$job" --platform "$platforms/two-clusters.platform" --tasks 4 --algo all --json)
echo "$out" | jq -e '[.results[] | .predicted_et_seconds] | unique | length > 1' >/dev/null
check $? "mappings predict different figures on a heterogeneous platform"
"$map" --job "$job" --platform "$platforms/two-clusters.platform" --set job/mapping=simple \
    | grep -q "^simple "
check $? "without --algo, the job's job/mapping"
out=$("$map" --job "$job" --platform "$platforms/local8.platform" --tasks 12 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q "cannot map 12 tasks on 8 free daemons"
check $? "12 tasks on 8 daemons are refused"
"$map" --job "$job" --platform "$platforms/local8.platform" --algo nope 2>&1 \
    | grep -q "unknown mapping 'nope'"
[ $? -eq 0 ]
check $? "an unknown mapping is named"
err=$("$map" --job "$job" --platform "$data/bad-speed.platform" 2>&1)
[ $? -eq 1 ] && echo "$err" | grep -q "bad-speed.platform:8: speed"
check $? "a bad platform is reported with file and line"
printf 'job\n    application = "jacobi2d"\n    tasks = 2\n    mapping = "best"\nproblem\n    n = 8\n' > "$tmp.job"
err=$("$map" --job "$tmp.job" --platform "$platforms/local8.platform" 2>&1)
status=$?
rm -f "$tmp.job"
[ $status -eq 1 ] && echo "$err" | grep -q "jace-map-test.$$.job:4: job/mapping = 'best' is unknown"
check $? "a bad job file is reported with its file and line"
"$map" --job "$job" 2>/dev/null
[ $? -eq 2 ]
check $? "a missing --platform/--supernode is a usage error"
err=$("$map" --job "$job" --supernode garbage 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q "^jace-map: --supernode: 'garbage' is not an endpoint"
check $? "a super-node that is no endpoint is bad usage, named as such, not as silent"
"$map" --job "$job" --platform "$platforms/local8.platform" --tasks 3 --algo default \
    | grep -q "0:A-0 1:A-1 2:A-2"
check $? "the default policy takes daemons in hand-out order"
#  job/spares is a floor: when the grid has no room for it, say so
"$map" --job "$job" --platform "$platforms/local8.platform" --tasks 6 \
    --set job/spares=3 --algo maheve \
    | grep -q "spares: A-3 B-3 (3 wanted: no more free daemons)"
check $? "spares the grid has no room for are said to be missing"
#  Many spares (job/spares on a large grid): the text names the first
#  ones (it printed all of them, 100,000 names on a large platform)
mkdir -p "$tmp"
printf 'platform\n    name = "p"\n    cluster\n        name = "A"\n        nodes = 300\n        supernodes = 1\n    cluster\n        name = "B"\n        nodes = 300\n' \
    >"$tmp/big.platform"
text=$("$map" --job "$job" --platform "$tmp/big.platform" --tasks 4 --algo maheve \
      --set job/spares=60)
all=$("$map" --job "$job" --platform "$tmp/big.platform" --tasks 4 --algo maheve \
      --set job/spares=60 --json | jq '.results [0].spares | length')
echo "$text" | grep -q "spares: \([A-B]-[0-9]* \)\{24\}and $((all - 24)) more ($all in all; --json lists them)" \
    && [ "$all" -gt 24 ]
check $? "many spares: the text names 24 of them and counts the rest ($all in JSON)"
#  Without job/spares, MAHEVE keeps at most a spare per task: its 10% of
#  each cluster leased 60 idle spares for these 4 tasks
few=$("$map" --job "$job" --platform "$tmp/big.platform" --tasks 4 --algo maheve \
      --json | jq '.results [0].spares | length')
[ "$few" -ge 1 ] && [ "$few" -le 4 ]
check $? "a 4-task job on 600 daemons keeps $few spares, at most one per task"
rm -rf "$tmp"
exit $failed
