#!/bin/sh
#  test_apps_plugin - an application written outside Jace, against an
#  installed Jace, runs on a virtual grid with a crash to a verified answer
#
#  Jace is installed into a staging folder (make install DESTDIR=), the
#  example plugin examples/apps is built from there with nothing but its
#  Makefile and pkg-config, and installed where `pkg-config --variable=
#  appsdir jace` says.  A grid of the installed binaries finds it through
#  JACE_APPS.  One more daemon, without the plugin and far faster than the
#  others (a super-node leases the fastest first, a plan prefers them),
#  joins the grid: it must never be leased for the job.  A daemon of the
#  job is crashed once its tasks iterate; the job must still end with
#  the verified answer.  A job naming a path instead of an application, and
#  a plugin of another ABI, are refused with what was wrong.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 24

trap '[ -n "${inst_bin:-}" ] && "$inst_bin/jace-grid" stop --run "$RUN/grid" \
    >/dev/null 2>&1; lib_cleanup' EXIT

#  Install, as a user would (the prefix configure was given, staged).
stage=$RUN/stage
make -s -C "$JACE_BUILDDIR" install DESTDIR="$stage" >"$RUN/install.log" 2>&1
pc=$(find "$stage" -name jace.pc | head -n 1)
inst_bin=$(dirname "$(find "$stage" -name jace-daemon -type f | head -n 1)")
[ -n "$pc" ] && [ -x "$inst_bin/jace-daemon" ] &&
    find "$stage" -name 'libjace.so*' | grep -q .
ok $? "make install puts the programs, the shared libjace and jace.pc in place"

#  The staged jace.pc names the configured prefix: --define-prefix reads it
#  from where the file is.  The staged libjace is not where the programs
#  look (the configured prefix): LD_LIBRARY_PATH says where it is.
PKG_CONFIG_PATH=$(dirname "$pc"); export PKG_CONFIG_PATH
pkgconf="pkg-config --define-prefix"
LD_LIBRARY_PATH=$($pkgconf --variable=libdir jace); export LD_LIBRARY_PATH
appsdir=$($pkgconf --variable=appsdir jace)
[ -d "$appsdir" ]
ok $? "pkg-config --variable=appsdir jace names the installed apps folder"

#  Build and install the example from a copy, outside the tree.
cp -r "$JACE_SRCDIR/examples/apps" "$RUN/advdiff"
chmod -R u+w "$RUN/advdiff"     #  make distcheck's sources are read-only
rm -f "$RUN/advdiff/advdiff.so" #  one built in the sources is not ours
make -C "$RUN/advdiff" PKG_CONFIG="$pkgconf" install >"$RUN/build.log" 2>&1 &&
    [ -f "$appsdir/advdiff.so" ]
built=$?
ok $built "the example builds with its Makefile and installs into appsdir"
[ $built -eq 0 ] || cat "$RUN/build.log" >&2

JACE_APPS=$appsdir; export JACE_APPS
"$inst_bin/jace-daemon" --list-apps >"$RUN/list.out" 2>&1 &&
    grep -q "^advdiff  *$appsdir/advdiff.so\$" "$RUN/list.out" &&
    grep -q "^jacobi2d  *built in\$" "$RUN/list.out"
ok $? "jace-daemon --list-apps lists the plugin and the built-ins"

#  A plugin of another ABI is refused at load, naming both versions.
mkdir "$RUN/future"
cat >"$RUN/future/future.c" <<'EOC'
#include <jace.h>
static const jace_app_t s_future = { .abi = JACE_APP_ABI + 1,
                                     .name = "future" };
const jace_app_t *jace_app (void) { return &s_future; }
EOC
abi=$(sed -n 's/^#define JACE_APP_ABI \([0-9]*\).*/\1/p' \
      "$($pkgconf --variable=includedir jace)/jace.h")
${CC:-cc} -shared -fPIC $($pkgconf --cflags jace) -o "$RUN/future/future.so" \
    "$RUN/future/future.c" 2>"$RUN/future.log"
"$inst_bin/jace-daemon" --apps "$RUN/future" --list-apps >"$RUN/future.out" 2>&1
[ $? -ne 0 ] && grep -q "future.so: built for application ABI $((abi + 1)), this Jace loads ABI $abi" \
    "$RUN/future.out"
refused=$?
ok $refused "a plugin of another ABI is refused, with its file and both ABIs"
[ $refused -eq 0 ] || cat "$RUN/future.out" "$RUN/future.log" >&2

#  Other libraries that are no application, each refused naming what is
#  wrong; a second plugin of a taken name is skipped, not an error.
bad_plugin () {     #  bad_plugin NAME C-SOURCE
    mkdir -p "$RUN/bad-$1"
    echo "#include <jace.h>
$2" >"$RUN/bad-$1/$1.c"
    ${CC:-cc} -shared -fPIC $($pkgconf --cflags jace) \
        -o "$RUN/bad-$1/$1.so" "$RUN/bad-$1/$1.c" 2>>"$RUN/future.log"
    "$inst_bin/jace-daemon" --apps "$RUN/bad-$1" --list-apps \
        >"$RUN/bad-$1.out" 2>&1
}
bad_plugin nosymbol "int jace_nothing (void); int jace_nothing (void) { return 0; }"
[ $? -ne 0 ] && grep -q "nosymbol.so: not an application plugin: it exports no jace_app" \
    "$RUN/bad-nosymbol.out"
nosymbol=$?
bad_plugin noiterate "static const jace_app_t s = { .abi = JACE_APP_ABI, .name = \"half\" };
const jace_app_t *jace_app (void) { return &s; }"
[ $? -ne 0 ] && grep -q "noiterate.so: application 'half' has no load callback" \
    "$RUN/bad-noiterate.out"
noiterate=$?
mkdir "$RUN/twice"
cp "$appsdir/advdiff.so" "$RUN/twice/another.so"
"$inst_bin/jace-daemon" --apps "$RUN/twice" --list-apps >"$RUN/twice.out" 2>&1
#  --apps comes first: the installed advdiff.so is the one skipped.
[ $? -eq 0 ] && grep -q "advdiff.so: application 'advdiff' is already loaded ($RUN/twice/another.so)" \
    "$RUN/twice.out" && [ "$(grep -c '^advdiff ' "$RUN/twice.out")" -eq 1 ]
ok $(( nosymbol + noiterate + $? )) \
    "no jace_app, a missing callback: refused; a taken name: skipped, said"

cat >"$RUN/one.platform" <<EOC
platform
    name = "one"
    cluster
        name = "A"
        nodes = 4
EOC
"$inst_bin/jace-grid" start --platform "$RUN/one.platform" --run "$RUN/grid" \
    --bin "$inst_bin" --daemon-arg=--heartbeat --daemon-arg=300 \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of the installed programs starts"
sn=$(cat "$RUN/grid.endpoint")

#  The daemon without the plugin: no JACE_APPS, the fastest of the grid.
BIN=$inst_bin
unset JACE_APPS
start_daemon noapp --supernode "$sn" --cluster A --power 1000 \
    --heartbeat 300
JACE_APPS=$appsdir; export JACE_APPS
noapp_listed () {
    nodes_json "$sn" | jq -e '[.[] | select(.id == "noapp")] | length == 1'
}
wait_for 10 noapp_listed
nodes_json "$sn" >"$RUN/nodes.json"
jq -e '[.[] | select(.id != "noapp") | .apps | index("advdiff")] |
       length == 4 and all' "$RUN/nodes.json" >/dev/null &&
    jq -e '.[] | select(.id == "noapp") | .apps | index("advdiff") | not' \
        "$RUN/nodes.json" >/dev/null
ok $? "the daemons advertise their applications: advdiff but on noapp"

#  The super-node leases for an application only the daemons that have
#  it: by count (noapp, the fastest, would come first) and by id.
"$JACE_BUILDDIR/tests/snclient" --app advdiff "$sn" reserve probe 5 5000 \
    >"$RUN/probe.out" 2>&1
by_count=$?
"$JACE_BUILDDIR/tests/snclient" "$sn" release probe $(cat "$RUN/probe.out") \
    >/dev/null 2>&1
"$JACE_BUILDDIR/tests/snclient" --app advdiff --ids noapp "$sn" reserve \
    probe-id 1 5000 >"$RUN/probe-id.out" 2>&1
[ $by_count -eq 0 ] && [ $? -eq 0 ] && [ "$(wc -l <"$RUN/probe.out")" -eq 4 ] &&
    ! grep -q noapp "$RUN/probe.out" && [ ! -s "$RUN/probe-id.out" ]
ok $? "a RESERVE for advdiff, by count or by id, never gets noapp"

#  jace-map places a job of the plugin as the spawner would.
"$inst_bin/jace-map" --job "$RUN/advdiff/advdiff.job" \
    --platform "$RUN/one.platform" >"$RUN/map.out" 2>&1
ok $? "jace-map maps a job of the plugin"
env -u JACE_APPS "$inst_bin/jace-map" --apps "$appsdir" \
    --job "$RUN/advdiff/advdiff.job" --platform "$RUN/one.platform" \
    >"$RUN/map-apps.out" 2>&1
ok $? "... found with --apps DIR as well as through JACE_APPS"
#  ... on the live grid too, leaving out noapp, the fastest, as the
#  spawner does (it placed a task there, where the spawner could not)
"$inst_bin/jace-map" --job "$RUN/advdiff/advdiff.job" --supernode "$sn" \
    --tasks 4 --json >"$RUN/map-live.json" 2>&1
jq -e '.without_app == 1 and (.results [0].mapping | length == 4
       and (index("noapp") | not))' "$RUN/map-live.json" >/dev/null
ok $? "jace-map --supernode leaves out the daemon without the plugin"
#  A job the grid's daemons with the plugin cannot hold says why
submit short "$RUN/advdiff/advdiff.job" "$sn" --set job/tasks=5 \
    --set job/spares=0 --set job/reserve_timeout=2
[ $? -ne 0 ] && grep -q "1 more free daemon lacks application 'advdiff'" \
    "$RUN/short.err" && ! grep -q "held by other jobs" "$RUN/short.err"
ok $? "a job short of daemons with its application says that is why"

#  A job names an application; it never ships code.
job=$RUN/advdiff/advdiff.job
submit path "$job" "$sn" --set job/application="$appsdir/advdiff.so"
[ $? -ne 0 ] && grep -q "looks like a path" "$RUN/path.err"
ok $? "a job naming a path instead of an application is refused"

#  The daemon of task 1 crashes (the spawner's CRASH: it exits at once)
#  once a task has done 1500 of its 3000 to 10000 iterations, after a few
#  checkpoints (every 200): progress, not time, triggers both, so the crash
#  hits the running job on any machine.
submit advdiff "$job" "$sn" --set job/tasks=3 --set problem/n=80 \
    --set job/tolerance=1e-10 --set checkpoint/every_iterations=200 \
    --set job/heartbeat_timeout=1500 --set faults/first_iteration=1500 \
    --set faults/tasks=1 --set faults/rounds=1 &
submitted=$!
wait $submitted
ok $? "the job exits 0"
grep -q '"event":"crash",.*"task":1' "$RUN/advdiff.events"
ok $? "the daemon of task 1 crashed while the job iterated"
residual=$(job_residual advdiff)
verified=$?
ok $verified "with a verified residual ($residual) after the crash"
[ $verified -eq 0 ] || tail -n 5 "$RUN/advdiff.err" >&2
#  Its residual is not ||b - Ax||: the summary says what the plugin says
grep -q "^  residual .* (relative, ||b - G(x)|| / ||b||; tolerance" \
    "$RUN/advdiff.out"
ok $? "the summary names what the plugin's residual measures"
#  The discrete solution is known: the answer is it, to the tolerance.
error=$(jq -e 'select(.event == "result" and .error < 1e-6) | .error' \
        "$RUN/advdiff.events")
ok $? "and the known solution, to $error in max-norm"

! grep -q '"noapp"' "$RUN/advdiff.events" &&
    ! grep -q "ASSIGN\|task" "$RUN/noapp.log"
ok $? "the daemon without the plugin was never leased for the job"
grep -q '"event":"dead"' "$RUN/advdiff.events" &&
    grep -q '"event":"replace",.*"task":1' "$RUN/advdiff.events"
ok $? "the crash was detected and the task replaced"
diag "$(jq -r 'select(.event == "restored") | "task \(.task) restarted from \(.from), iteration \(.iteration)"' "$RUN/advdiff.events")"

"$inst_bin/jace-grid" stop --run "$RUN/grid" >/dev/null 2>&1
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log >/dev/null 2>&1
ok $? "no sanitizer report in the grid's logs"
lib_finish
