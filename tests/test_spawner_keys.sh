#!/bin/sh
#  tests/test_spawner_keys.sh - strict inputs: a typo is an error, never a
#  silently ignored setting
#
#  An unknown key in a job file, in --set, or in a platform file is refused
#  with FILE:LINE (or the --set argument) and the nearest known key; a ZPL
#  syntax error carries its line; every key the sources read is declared
#  by its owner (so no key can be forgotten); every example job and
#  platform still loads.  Nothing here needs a grid: jace-map loads a job
#  and a platform and plans, the checks come first.
. "$(dirname "$0")/lib.sh"
plan 17
DIR=$(mktemp -d "${TMPDIR:-/tmp}/jace-keys.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
PLATFORM=$JACE_SRCDIR/examples/platforms/local8.platform

#  jace-map --job FILE [--set ...] on the small platform; stderr in $DIR/err
map () {
    job=$1; shift
    timeout 20 "$BIN/jace-map" --job "$job" --platform "$PLATFORM" "$@" \
        >/dev/null 2>"$DIR/err"
}
refused_with () {   #  refused_with TEXT: exit 1 and TEXT in the message
    [ "$1" -ne 0 ] && grep -qF -- "$2" "$DIR/err" \
        || { diag "got: $(cat "$DIR/err")"; return 1; }
}

cat >"$DIR/good.job" <<'JOB'
job
    application = "jacobi2d"
    tasks = 2
    tolerance = 1e-6
problem
    n = 16
JOB
map "$DIR/good.job"
ok $? "a job file with known keys loads"

sed 's/tolerance/tolerence/' "$DIR/good.job" >"$DIR/typo.job"
map "$DIR/typo.job"
refused_with $? "typo.job:4: unknown key 'job/tolerence' (did you mean job/tolerance?)"
ok $? "a mistyped key in a job file: FILE:LINE and the nearest key"

map "$DIR/good.job" --set job/task=2
refused_with $? "--set job/task=2: unknown key 'job/task' (did you mean job/tasks?)"
ok $? "a mistyped --set key: the argument and the nearest key"

map "$DIR/good.job" --set problem/nn=8
refused_with $? "unknown key 'problem/nn' (did you mean problem/n?)"
ok $? "an application's keys are checked too (jacobi2d reads problem/n)"

map "$DIR/good.job" --set job/watch_links=maybe
refused_with $? "job/watch_links = 'maybe' is neither on nor off"
switch=$?
map "$DIR/good.job" --set checkpoint/offsite=yes
refused_with $? "checkpoint/offsite = 'yes' is neither on nor off" &&
    [ $switch -eq 0 ]
ok $? "a known key with a value it does not take is refused, naming both"

printf 'checkpiont\n    copies = 1\n' | cat "$DIR/good.job" - >"$DIR/section.job"
map "$DIR/section.job"
refused_with $? "section.job:7: unknown section 'checkpiont' (did you mean checkpoint?)"
ok $? "a mistyped section: its line and the nearest section"

printf 'tasks = 2\n' | cat - "$DIR/good.job" >"$DIR/outside.job"
map "$DIR/outside.job"
refused_with $? "outside.job:1: 'tasks = 2' is outside any section"
ok $? "a key outside any section is refused"

printf 'job\n    application = "jacobi2d"\n    tasks = 2\n    tasks = 3\n' \
    >"$DIR/twice.job"
map "$DIR/twice.job"
refused_with $? "twice.job:4: 'job/tasks' is given twice (first at $DIR/twice.job:3)"
ok $? "a key given twice in a job file: both lines (the last used to win)"

printf 'faults\n    count = 1\n' | cat "$DIR/good.job" - >"$DIR/faults.job"
map "$DIR/faults.job"
refused_with $? "faults.job:8: faults/count needs faults/every"
ok $? "a count of crashes that no schedule would run is refused, with its line"

printf 'job\n    application = "jacobi2d"\n  tasks = 2\n' >"$DIR/indent.job"
map "$DIR/indent.job"
refused_with $? "indent.job:3: indentation must be a multiple of 4 spaces"
ok $? "a ZPL syntax error in a job file carries its line"

printf 'job\n    application = "jacobi2d"\n    mode = "sync\n' >"$DIR/quote.job"
map "$DIR/quote.job"
refused_with $? "quote.job:3: unterminated quoted value"
ok $? "an unterminated quote carries its line"

cat >"$DIR/typo.platform" <<'PLATFORM'
platform
    name = "typo"
    cluster
        name = "A"
        nodes = 4
        sped = 0.5
PLATFORM
timeout 20 "$BIN/jace-map" --job "$DIR/good.job" \
    --platform "$DIR/typo.platform" >/dev/null 2>"$DIR/err"
refused_with $? "typo.platform:6: unknown item 'sped' in cluster (did you mean speed?)"
ok $? "a mistyped platform item: FILE:LINE and the nearest item"

printf 'platfrom\n    name = "x"\n' >"$DIR/top.platform"
timeout 20 "$BIN/jace-map" --job "$DIR/good.job" \
    --platform "$DIR/top.platform" >/dev/null 2>"$DIR/err"
refused_with $? "top.platform:1: unknown item 'platfrom' in the file (did you mean platform?)"
ok $? "a mistyped top item of a platform file is refused"

#  Every "section/key" the daemon, runtime, spawner and applications read
#  is in a declaration (an array named *_keys or s_keys): the job checker
#  knows exactly the keys the code reads.  job/elapsed_seconds is the
#  spawner's own note to resumed tasks, never a user's key.
undeclared=$(cd "$JACE_SRCDIR" && awk '
    /_keys \[\] = \{/ { declaring = 1 }
    {
        line = $0
        while (match (line, /"(job|problem|solver|checkpoint|faults|report|scatter|exchange)\/[a-z_0-9]+"/)) {
            key = substr (line, RSTART + 1, RLENGTH - 2)
            if (declaring) declared [key] = 1
            else used [key] = FILENAME
            line = substr (line, RSTART + RLENGTH)
        }
    }
    declaring && /\};/ { declaring = 0 }
    END {
        for (key in used)
            if (!(key in declared) && key != "job/elapsed_seconds" \
                && key != "job/task")
                print key " (" used [key] ")"
    }' runtime/*.c solvers/*.c spawner/*.c daemon/*.c)
[ -z "$undeclared" ] || diag "read but not declared: $undeclared"
[ -z "$undeclared" ]
ok $? "every job key the sources read is declared by its owner"

failed=""
for job in "$JACE_SRCDIR"/examples/*.job "$JACE_SRCDIR"/bench/*.job; do
    #  Plan small: only the checks matter here.
    map "$job" --set job/tasks=2 || failed="$failed $job"
done
[ -z "$failed" ] || diag "refused:$failed: $(cat "$DIR/err")"
[ -z "$failed" ]
ok $? "every example and benchmark job file loads"

failed=""
for platform in "$JACE_SRCDIR"/examples/platforms/*.platform \
                "$JACE_SRCDIR"/bench/*.platform; do
    [ -e "$platform" ] || continue
    timeout 20 "$BIN/jace-map" --job "$DIR/good.job" --platform "$platform" \
        >/dev/null 2>"$DIR/err" || failed="$failed $platform"
done
[ -z "$failed" ] || diag "refused:$failed: $(cat "$DIR/err")"
[ -z "$failed" ]
ok $? "every example and benchmark platform file loads"

#  The one platform the tests keep broken on purpose stays refused.
timeout 20 "$BIN/jace-map" --job "$DIR/good.job" --platform \
    "$JACE_SRCDIR/tests/data/planning/bad-speed.platform" >/dev/null \
    2>"$DIR/err"
refused_with $? "bad-speed.platform:"
ok $? "a broken platform is refused with its file and line"
