#!/bin/sh
#  bench_mapping.sh - the MAHEVE paper's Table 1 on virtual grids: a job's
#  time under each mapping, fault free and with faults
#
#  Usage: bench/bench_mapping.sh   (settings in the environment)
#    PLATFORMS  platform files (default: examples/platforms/table1-hd008,
#               -hd050 and -hd072.platform)
#    MAPPINGS   job/mapping values (default: default aiac-qm f-ec maheve
#               maheve-locality); "default" is the reference of the gains
#    JOB        job file (default: bench/table1-nascg.job)
#    REPEATS    runs of each cell (default 3); the table shows medians
#    OUT        folder for the TSV of every run and the failures' error
#               tails (default: a new bench-mapping.XXXXXX under TMPDIR)
#    FAULT_EVERY  seconds between two rounds of crashes (default: 20/75 of
#               the platform's first fault-free default time, see below)
#    HEARTBEAT_TIMEOUT  job/heartbeat_timeout, ms (default 1000: the
#               daemons beat every 200 ms; a crash costs its detection)
#    REVIVE=0   crashed daemons stay down (default 1: they come back)
#    REVIVE_EVERY  seconds between two revivals (default 1)
#    DISTRIBUTION  scatter/distribution of every run (default: the job's;
#               `uniform` gives every task the same rows, as the paper's
#               JaceP2P did, instead of rows in proportion to power)
#    SETTINGS   job keys for every run, as KEY=VALUE words (e.g.
#               SETTINGS="job/rebalance=auto"), passed as --set
#    KEEP_EVENTS=1  keep every run's event log in OUT (PLATFORM.MODE.
#               MAPPING.REPEAT.events), not only failed runs': what each
#               replacement waited ("replace" events' seconds), the
#               verifications, the tasks' progress
#    BENCH_QUICK=1  smoke test: the first platform, one repeat, two
#               mappings (default and maheve, or the first two of MAPPINGS)
#    BENCH_MAPPING_SET=0  do not pass --set job/mapping=NAME (to check the
#               plumbing with a spawner that does not map by name yet)
#
#  For each platform, FF runs (no faults) and WF runs (2 daemons crashed
#  per round, as the paper's "2 node failures each 20 seconds"), each
#  mapping passed as --set job/mapping=NAME, each run on a freshly started
#  grid (a faulty run uses daemons up).  The loops nest repeat, platform,
#  mode, mapping, mapping innermost, so machine load drifts hit all
#  mappings alike.  The paper's default-mapping FF runs last 67-80 s and
#  its faults come every 20 s: WF runs here crash 2 daemons every T =
#  max(2, round(20/75 x FF)) seconds, FF the platform's first fault-free
#  run under the first mapping (default), the first round T seconds after
#  the submission (T is measured here, so the rounds land in the run on
#  any machine).  The paper crashed nodes until its runs ended, on a grid
#  with "enough available free nodes"; ours has 12-14 beyond a 16-task
#  job, so a crashed daemon comes back: every REVIVE_EVERY seconds
#  (default 1) `jace-grid revive` starts the dead ones again, under new
#  ids, in their clusters, with their speeds.  The crashes go on until the
#  job ends (faults/rounds = 0), as the paper's did, so a slower run
#  suffers more of them.  REVIVE=0 keeps the crashed daemons down and
#  stops the crashes after (daemons - tasks) / 2 - 1 rounds instead.
#  The tasks crashed are drawn with faults/seed = the repeat's number: the
#  mappings of a repeat lose the same tasks in the same order (so they
#  are compared on the same bad luck), and each repeat draws anew.
#
#  Prints the table in the paper's form (rows FF and WF per platform,
#  columns per mapping, median seconds and the gain against default in
#  brackets) and writes OUT/runs.tsv: platform, mode, mapping, repeat,
#  seconds, status, hd, crashes, fault_every.  A failed run is reported
#  with its error tail and counted as failed; a cell whose runs all failed
#  shows "fail", one where some failed shows the median of the others
#  followed by "!k" (k failures).  Exits 1 when any run failed.
set -eu
: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
platforms=${PLATFORMS:-"$JACE_SRCDIR/examples/platforms/table1-hd008.platform
    $JACE_SRCDIR/examples/platforms/table1-hd050.platform
    $JACE_SRCDIR/examples/platforms/table1-hd072.platform"}
mappings=${MAPPINGS:-"default aiac-qm f-ec maheve maheve-locality"}
job=${JOB:-$JACE_SRCDIR/bench/table1-nascg.job}
repeats=${REPEATS:-3}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    platforms=$(echo $platforms | awk '{ print $1 }')
    mappings=$(echo ${MAPPINGS:-default maheve} | awk '{ print $1, $2 }')
    repeats=1
fi
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-mapping.XXXXXX")}
mkdir -p "$out"
run=$(mktemp -d "${TMPDIR:-/tmp}/jace-bench.XXXXXX")
trap '"$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1; rm -rf "$run"' EXIT
export OPENBLAS_NUM_THREADS=1
max_seconds=$(awk '$1 == "max_seconds" { print $3; exit }' "$job")
tasks=$(awk '$1 == "tasks" { print $3; exit }' "$job")

#  The platform's heterogeneity degree as the mapping computes it.
hd_of () {
    "$JACE_BUILDDIR/jace-map" --job "$job" --platform "$1" --algo default \
        --json | jq -r '.hd * 10000 | round / 10000'
}

#  One job on a fresh grid: appends a TSV line to runs.tsv; the job's
#  events stay in $run/last.events.  Arguments: platform mode mapping
#  repeat fault_every, then --set options.
timed () {
    platform=$1 mode=$2 mapping=$3 repeat=$4 run_every=$5; shift 5
    name=$(basename "$platform" .platform)
    tag="$name.$mode.$mapping.$repeat"
    set_mapping="--set job/mapping=$mapping"
    [ "${BENCH_MAPPING_SET:-1}" = 0 ] && set_mapping=""
    [ -n "${DISTRIBUTION:-}" ] &&
        set_mapping="$set_mapping --set scatter/distribution=$DISTRIBUTION"
    for setting in ${SETTINGS:-}; do
        set_mapping="$set_mapping --set $setting"
    done
    "$JACE_BUILDDIR/jace-grid" stop --run "$run/grid" >/dev/null 2>&1 || true
    rm -f "$run/last.events"
    status=ok seconds=NA crashes=NA
    sn=$("$JACE_BUILDDIR/jace-grid" start --platform "$platform" \
         --run "$run/grid" --daemon-arg=--heartbeat --daemon-arg=200 \
         2>"$out/$tag.err") || status=fail
    reviver=""
    if [ $status = ok ] && [ "$mode" = WF ] && [ "${REVIVE:-1}" = 1 ]; then
        while sleep "${REVIVE_EVERY:-1}"; do
            "$JACE_BUILDDIR/jace-grid" revive --run "$run/grid" >/dev/null ||
                true
        done &
        reviver=$!
    fi
    # shellcheck disable=SC2086
    [ $status = fail ] || timeout $(( ${max_seconds:-300} + 120 )) \
        "$JACE_BUILDDIR/jace-spawner" submit "$job" --supernode "$sn" -q \
        --events "$run/last.events" $set_mapping \
        --set job/heartbeat_timeout="${HEARTBEAT_TIMEOUT:-1000}" "$@" \
        >/dev/null 2>"$out/$tag.err" || status=fail
    if [ -n "$reviver" ]; then
        kill "$reviver" 2>/dev/null || true
        wait "$reviver" 2>/dev/null || true
    fi
    if [ $status = ok ]; then
        result=$(grep '"event":"result"' "$run/last.events" | tail -n 1)
        seconds=$(echo "$result" | jq -e .seconds) || status=fail
        crashes=$(echo "$result" | jq -r '.crashes // "NA"')
    fi
    if [ $status = ok ]; then
        rm -f "$out/$tag.err"
        if [ "${KEEP_EVENTS:-0}" = 1 ]; then
            cp "$run/last.events" "$out/$tag.events" 2>/dev/null || true
        fi
    else
        cp "$run/last.events" "$out/$tag.events" 2>/dev/null || true
        seconds=NA
        echo "bench_mapping: run $tag failed (error tail in $out/$tag.err):" >&2
        grep -v 'secret in' "$out/$tag.err" | tail -n 3 >&2 || true
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" \
        "$mapping" "$repeat" "$seconds" "$status" "$(hd_of "$platform")" \
        "$crashes" "$run_every" >>"$out/runs.tsv"
    echo "bench_mapping: $tag: $status $seconds s" >&2
}

#  Rounds of crashes: 0 (until the job ends) when crashed daemons come
#  back.  Without revival, those the platform's spare daemons can replace:
#  each round takes 2 daemons for good, and 2 are left over so that a late
#  replacement still finds one.
rounds_of () {
    if [ "${REVIVE:-1}" = 1 ]; then
        echo 0
        return
    fi
    daemons=$("$JACE_BUILDDIR/jace-map" --job "$job" --platform "$1" \
              --algo default --json | jq -r .daemons)
    echo $(( (daemons - tasks) / 2 - 1 < 1 ? 1 : (daemons - tasks) / 2 - 1 ))
}

#  T from a platform's first FF run under the reference mapping
#  (FAULT_EVERY overrides it).  The first round comes T seconds after the
#  submission, as the paper's first failure came 20 s into its runs; T is
#  measured on this machine, so the rounds land in the run whatever its
#  speed.
fault_schedule () {
    ff_seconds=$(tail -n 1 "$run/last.events" 2>/dev/null |
                 jq -e 'select(.event == "result") | .seconds' 2>/dev/null) ||
        ff_seconds=""
    if [ -n "${FAULT_EVERY:-}" ]; then
        every=$FAULT_EVERY
    elif [ -n "$ff_seconds" ]; then
        every=$(awk -v s="$ff_seconds" 'BEGIN { t = int (s * 20 / 75 + 0.5);
                                                print t < 2 ? 2 : t }')
    else
        every=8
        echo "bench_mapping: no fault-free reference run on $1; crashes" \
             "every $every s" >&2
    fi
}

printf 'platform\tmode\tmapping\trepeat\tseconds\tstatus\thd\tcrashes\tfault_every\n' \
    >"$out/runs.tsv"
reference=$(echo $mappings | awk '{ print $1 }')
for repeat in $(seq 1 "$repeats"); do
    for platform in $platforms; do
        name=$(basename "$platform" .platform)
        for mapping in $mappings; do
            timed "$platform" FF "$mapping" "$repeat" NA
            if [ "$repeat" = 1 ] && [ "$mapping" = "$reference" ]; then
                fault_schedule "$platform"
                echo "$every $(rounds_of "$platform")" \
                    >"$run/$name.schedule"
            fi
        done
        read -r every rounds <"$run/$name.schedule"
        for mapping in $mappings; do
            timed "$platform" WF "$mapping" "$repeat" "$every" \
                --set faults/every="$every" --set faults/count=2 \
                --set faults/rounds="$rounds" --set faults/seed="$repeat"
        done
    done
done

#  The table, from runs.tsv.
echo
echo "job $(basename "$job"), $repeats run(s) per cell, median seconds" \
     "(gain against $reference); runs in $out/runs.tsv"
awk -F '\t' -v mappings="$mappings" -v reference="$reference" '
function median (list,    values, count, i, j, swap) {
    count = split (list, values, " ")
    for (i = 2; i <= count; i++)
        for (j = i; j > 1 && values [j - 1] + 0 > values [j] + 0; j--) {
            swap = values [j]; values [j] = values [j - 1]; values [j - 1] = swap
        }
    return count % 2 ? values [(count + 1) / 2] \
                     : (values [count / 2] + values [count / 2 + 1]) / 2
}
NR > 1 {
    key = $1 SUBSEP $2 SUBSEP $3
    if (!(($1) in seen)) { seen [$1] = 1; order [++platforms] = $1; hd [$1] = $7 }
    if ($6 == "ok") times [key] = times [key] " " $5
    else failed [key]++
    runs [key]++
}
END {
    count = split (mappings, names, " ")
    printf "%-14s %-5s %-4s", "platform", "hd", ""
    for (m = 1; m <= count; m++) printf " %18s", names [m]
    printf "\n"
    for (p = 1; p <= platforms; p++)
        for (mode = 1; mode <= 2; mode++) {
            label = mode == 1 ? "FF" : "WF"
            printf "%-14s %-5s %-4s", order [p], hd [order [p]], label
            base_key = order [p] SUBSEP label SUBSEP reference
            base = times [base_key] != "" ? median (times [base_key]) : ""
            for (m = 1; m <= count; m++) {
                key = order [p] SUBSEP label SUBSEP names [m]
                if (runs [key] == 0) { cell = "-" }
                else if (times [key] == "") { cell = "fail" }
                else {
                    value = median (times [key])
                    cell = sprintf ("%.1f", value)
                    if (names [m] != reference && base != "")
                        cell = cell sprintf (" (%d%%)",
                                             (base - value) / base * 100 \
                                             + (base >= value ? 0.5 : -0.5))
                    if (failed [key]) cell = cell " !" failed [key]
                }
                printf " %18s", cell
            }
            printf "\n"
        }
}' "$out/runs.tsv"
if awk -F '\t' '$6 == "fail" { found = 1 } END { exit !found }' \
       "$out/runs.tsv"; then
    echo "!k: k runs of the cell failed (their error tails are in $out)"
    exit 1
fi
