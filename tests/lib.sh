#  tests/lib.sh - what the multi-process shell tests share
#
#  TAP output, a private run folder, super-nodes and daemons started as
#  real processes on loopback (free ports only), bounded waits, and a
#  cleanup that stops every process and every grid started in the run
#  folder, checks each exited cleanly and that no sanitizer reported
#  anything.  Source it, then call lib_init.

: "${JACE_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${JACE_SRCDIR:=$JACE_BUILDDIR}"
BIN=$JACE_BUILDDIR
#  Sanitizer builds run several times slower: tests that race the clock
#  (crashes every few seconds) stretch their schedules by SLOW.
SLOW=1
grep -q '^SANITIZER_FLAGS = -f' "$JACE_BUILDDIR/Makefile" 2>/dev/null && SLOW=3
export OPENBLAS_NUM_THREADS=1

lib_test_count=0
lib_failed=0
lib_pids=""

plan () { echo "1..$1"; }

ok () {     #  ok CONDITION-EXIT-STATUS NAME
    lib_test_count=$((lib_test_count + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $lib_test_count - $2"
    else
        echo "not ok $lib_test_count - $2"
        lib_failed=$((lib_failed + 1))
    fi
}

skip () {   #  skip REASON: a check that cannot run here
    lib_test_count=$((lib_test_count + 1))
    echo "ok $lib_test_count # SKIP $1"
}

diag () { echo "# $*" >&2; }

#  Skip the whole test, before its plan ("1..0 # SKIP", which the TAP
#  driver reports as SKIP).
skip_all () {   #  skip_all REASON
    echo "1..0 # SKIP $1"
    exit 0
}

#  Skip the whole test unless network namespaces can be made here, and
#  CHECK (a command run with $probe naming a fresh namespace) succeeds.
require_netns () {  #  require_netns WHY-NOT CHECK...
    [ "$(id -u)" = 0 ] || skip_all "not root: network namespaces need root"
    command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 ||
        skip_all "no ip or tc (iproute2)"
    probe=jace-probe-$$
    ip netns add "$probe" >/dev/null 2>&1 ||
        skip_all "ip netns add fails here (no CAP_SYS_ADMIN, or no netns)"
    why_not=$1; shift
    "$@" >/dev/null 2>&1
    probed=$?
    ip netns del "$probe"
    [ $probed -eq 0 ] || skip_all "$why_not"
}

#  Run a command, report it as one check.
check () {  #  check NAME COMMAND...
    name=$1; shift
    if "$@" >/dev/null 2>&1; then ok 0 "$name"; else ok 1 "$name"; fi
}

#  Grids of spinning daemons share two cores badly, yet most grid tests
#  mostly wait.  A test says what its grid weighs, as measured alone on
#  two cores (CPU time over wall time): light, under half a core; medium,
#  up to one core; heavy (the default), more.  The machine has three
#  slots, taken by 1, 2 and 3 of them: two light tests, or a light and a
#  medium one, run side by side (no more than one hog beside either, and
#  every test is written to bear two); a heavy one runs alone.  Unit tests
#  run beside any of them under make -j.  Slots are locks on files, taken
#  without waiting and given back if not enough are free, so that no
#  test holds one while it waits for another; tests queue for them at a
#  turnstile, first come first served (a heavy test polling for its three
#  slots lost them, each time, to the tests started after it).
grid_slots_take () {    #  grid_slots_take COUNT
    while :; do
        taken=""
        for fd in 7 8 9; do
            [ "$(echo $taken | wc -w)" -ge "$1" ] && break
            flock -n "$fd" && taken="$taken $fd"
        done
        [ "$(echo $taken | wc -w)" -ge "$1" ] && return 0
        for fd in $taken; do flock -u "$fd"; done
        sleep 0.2
    done
}

lib_init () {   #  lib_init [light|medium|heavy]
    case "${1:-heavy}" in
        light)  weight=1 ;;
        medium) weight=2 ;;
        heavy)  weight=3 ;;
        *)      echo "lib_init: unknown weight '$1'" >&2; exit 99 ;;
    esac
    mkdir -p "$JACE_BUILDDIR/tests"
    exec 6>"$JACE_BUILDDIR/tests/.grid-turnstile" \
         7>"$JACE_BUILDDIR/tests/.grid-slot.1" \
         8>"$JACE_BUILDDIR/tests/.grid-slot.2" \
         9>"$JACE_BUILDDIR/tests/.grid-slot.3"
    lib_queued=$(date +%s%N)
    flock 6
    grid_slots_take "$weight"
    flock -u 6
    lib_started=$(date +%s%N)
    RUN=$(mktemp -d "${TMPDIR:-/tmp}/jace-test.XXXXXX")
    #  Job secrets (submit writes them, resume, cancel and kill read them)
    #  stay in the run folder, never in the user's home.
    JACE_SECRETS=$RUN/secrets
    export JACE_SECRETS
    mkdir -m 700 "$JACE_SECRETS"
    trap lib_cleanup EXIT
    trap 'exit 1' INT TERM
}

now_msec () { echo $(( $(date +%s%N) / 1000000 )); }

#  Poll a command until it succeeds or `seconds` (may be fractional) pass.
wait_for () {   #  wait_for SECONDS COMMAND...
    limit=$(awk "BEGIN { printf \"%d\", $1 * 1000 }")
    deadline=$(( $(now_msec) + limit )); shift
    while ! "$@" >/dev/null 2>&1; do
        [ "$(now_msec)" -ge "$deadline" ] && return 1
        sleep 0.05
    done
    return 0
}

#  Start a super-node; sets SN to its endpoint.
start_supernode () {    #  start_supernode NAME [ARGS...]
    name=$1; shift
    rm -f "$RUN/$name.endpoint"
    "$BIN/jace-supernode" --bind 'tcp://127.0.0.1:*' \
        --endpoint-file "$RUN/$name.endpoint" "$@" 2>"$RUN/$name.log" &
    pid=$!
    lib_pids="$lib_pids $pid"
    eval "PID_$name=$pid"
    if ! wait_for 10 test -s "$RUN/$name.endpoint"; then
        diag "super-node $name did not start:"; cat "$RUN/$name.log" >&2
        return 1
    fi
    SN=$(cat "$RUN/$name.endpoint")
    eval "SN_$name=$SN"
}

#  Start a daemon with --power 1 (no benchmark) unless ARGS say otherwise.
start_daemon () {   #  start_daemon NAME ARGS...
    name=$1; shift
    "$BIN/jace-daemon" --id "$name" --power 1 --heartbeat 200 "$@" \
        2>"$RUN/$name.log" &
    pid=$!
    lib_pids="$lib_pids $pid"
    eval "PID_$name=$pid"
}

#  Daemons a super-node lists (JSON array on stdout).
nodes_json () {     #  nodes_json SUPERNODE [ARGS...]
    sn=$1; shift
    timeout 10 "$BIN/jace-spawner" nodes --supernode "$sn" --json "$@"
}

node_count () {     #  node_count SUPERNODE [JQ-FILTER [NODES-ARGS...]]
    sn=$1; filter=${2:-true}
    [ $# -ge 2 ] && shift 2 || shift $#
    nodes_json "$sn" "$@" | jq "[.[] | select($filter)] | length"
}

count_is () {       #  count_is N SUPERNODE [JQ-FILTER [NODES-ARGS...]]
    want=$1; shift
    [ "$(node_count "$@")" = "$want" ]
}

#  Submit a job; output in $RUN/NAME.out, events in $RUN/NAME.events.
submit () {         #  submit NAME JOBFILE SUPERNODE [ARGS...]
    name=$1; job=$2; sn=$3; shift 3
    timeout $((120 * SLOW)) "$BIN/jace-spawner" submit "$job" --supernode "$sn" -q \
        --events "$RUN/$name.events" "$@" >"$RUN/$name.out" 2>"$RUN/$name.err"
}

#  Events of the job submitted as NAME, one JSON object a line
event () {          #  event NAME EVENT
    jq -c "select(.event == \"$2\")" "$RUN/$1.events" 2>/dev/null
}
has_event () {      #  has_event NAME EVENT
    [ -n "$(event "$1" "$2")" ]
}
#  The first event EVENT of task T of job NAME (a JSON line), if any
task_event () {     #  task_event NAME EVENT T
    event "$1" "$2" | jq -c "select(.task == $3)" | head -n 1
}
has_task_event () {     #  has_task_event NAME EVENT T
    [ -n "$(task_event "$1" "$2" "$3")" ]
}
#  A job that runs until cancelled (no reachable tolerance; bounded by
#  job/max_seconds), run by the spawner itself so that $! of
#  `endless_job ... &` is the spawner's pid, to stop it.  Events in
#  $RUN/NAME.events.
endless_job () {    #  endless_job NAME SUPERNODE ARGS...
    name=$1; sn=$2; shift 2
    exec "$BIN/jace-spawner" submit "$JACE_SRCDIR/examples/poisson2d.job" \
        --supernode "$sn" -q --events "$RUN/$name.events" \
        --set problem/n=64 --set job/tolerance=1e-300 \
        --set job/stall_snapshots=0 --set job/max_seconds=240 \
        --set job/reserve_timeout=200 "$@" \
        >"$RUN/$name.out" 2>"$RUN/$name.err"
}
#  A daemon's state and the job it works for or is leased to, as
#  super-node SN lists it ("leased job-1a2b3c4d", "free ")
held_state () {     #  held_state SN DAEMON
    nodes_json "$1" | jq -r ".[] | select(.id == \"$2\")
                             | \"\\(.state) \\(.job)\\(.held_for)\""
}
#  The daemon task T of job NAME ran on last
daemon_of () {      #  daemon_of NAME T
    jq -r "select((.event == \"assign\" or .event == \"replace\")
                  and .task == $2) | .daemon" "$RUN/$1.events" | tail -n 1
}
#  True once task T of job NAME reported iteration N or more, on the
#  daemon it runs on now
iterated () {       #  iterated NAME T N
    d=$(daemon_of "$1" "$2")
    [ -n "$(jq -c "select(.event == \"progress\" and .task == $2
                          and .daemon == \"$d\" and .iteration >= $3)" \
            "$RUN/$1.events" 2>/dev/null)" ]
}

#  True once TASKS tasks have reported iteration 3 or more in the event
#  log FILE: the job certainly runs, whatever the machine's speed.
all_iterate () {    #  all_iterate FILE TASKS
    [ "$(jq -r 'select(.event == "progress" and .iteration >= 3) | .task' \
         "$1" 2>/dev/null | sort -u | wc -l)" -eq "$2" ]
}

#  Start a virtual grid of the platform FILE in $RUN/grid, with more
#  jace-grid ARGS, and set $sn to its first super-node.
start_grid () {     #  start_grid FILE [ARGS...]
    file=$1; shift
    "$BIN/jace-grid" start --platform "$file" --run "$RUN/grid" "$@" \
        >"$RUN/grid.endpoint" 2>"$RUN/grid.err" || return 1
    sn=$(cat "$RUN/grid.endpoint")
}

#  The cluster most tasks were first assigned to, by the event log FILE.
busiest_cluster () {    #  busiest_cluster FILE
    jq -r 'select(.event == "assign") | .cluster' "$1" | sort | uniq -c |
        sort -rn | awk 'NR == 1 { print $2 }'
}

#  The verified residual of a job's last event, or nothing.
#  (jq 1.6 -e answers 0 on no input: a job that wrote no events passed)
job_residual () {   #  job_residual NAME
    last=$(tail -n 1 "$RUN/$1.events" 2>/dev/null)
    [ -n "$last" ] || return 1
    printf '%s\n' "$last" | jq -e 'select(.event == "result") | .residual'
}

#  Stop a process with SIGTERM and check it exits 0 within 10 s.
stop_cleanly () {   #  stop_cleanly PID
    kill -TERM "$1" 2>/dev/null || return 1
    for _ in $(seq 1 100); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1" 2>/dev/null
        return 1
    fi
    wait "$1"
}

#  Stop every process still running and check that all of them stopped
#  cleanly and no sanitizer complained.
stop_all () {
    #  All at once: one by one, each process cost at least one poll, and
    #  test_scale_128's 130 took 14.7 s to stop (0.8 s at once).  Each
    #  still has 10 s to exit 0.
    status=0 stopping=""
    for pid in $lib_pids; do
        kill -0 "$pid" 2>/dev/null || continue
        if kill -TERM "$pid" 2>/dev/null; then
            stopping="$stopping $pid"
        else
            status=1
        fi
    done
    for _ in $(seq 1 100); do
        alive=""
        for pid in $stopping; do
            kill -0 "$pid" 2>/dev/null && alive="$alive $pid"
        done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for pid in $stopping; do
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null
            status=1
        fi
        wait "$pid" || status=1
    done
    lib_pids=""
    return $status
}

sanitizers_quiet () {
    ! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
        "$RUN"/*.log "$RUN"/*.err 2>/dev/null
}

#  Stop every virtual grid a test started in the run folder (RUN/NAME),
#  however the test ended: a grid's idle daemons outlive the test and its
#  deleted folder otherwise.
stop_grids () {
    for pids in "$RUN"/*/pids; do
        if [ -f "$pids" ]; then
            timeout 60 "$BIN/jace-grid" stop --run "${pids%/pids}" \
                >/dev/null 2>&1
        fi
    done
}

lib_cleanup () {
    for pid in $lib_pids; do
        kill -KILL "$pid" 2>/dev/null
    done
    stop_grids
    if [ "$lib_failed" -ne 0 ] || [ -n "${KEEP_RUN:-}" ]; then
        diag "logs kept in $RUN"
    else
        rm -rf "$RUN"
    fi
    lib_report_time
}

#  The two checks every multi-process test ends with.
lib_finish () {
    stop_all
    ok $? "every process exits 0 on SIGTERM"
    sanitizers_quiet
    ok $? "no sanitizer report in any log"
    [ "$lib_failed" -eq 0 ]
}

#  How long the test held its grid slots, and how long it queued for
#  them: the suite's budget is spent by the first figure.
lib_report_time () {
    lib_ended=$(date +%s%N)
    awk -v q="$lib_queued" -v s="$lib_started" -v e="$lib_ended" -v w="$weight" \
        'BEGIN { printf "# ran %.1f s at weight %d, after %.1f s queued\n",
                 (e - s) / 1e9, w, (s - q) / 1e9 }'
}

#  True if PID is a live process (not gone, not a zombie).
running () {        #  running PID
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

#  Reap the processes of lib_pids that died (crashed on purpose by a
#  CRASH message); sets REAPED to how many.  Not in a subshell: it
#  updates lib_pids.
reap_dead () {
    REAPED=0
    for pid in $lib_pids; do
        running "$pid" && continue
        wait "$pid" 2>/dev/null
        lib_pids=$(echo "$lib_pids" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
        REAPED=$((REAPED + 1))
    done
}

#  Start COUNT more daemons, named d1, d2, ... across calls, registered
#  with SUPERNODE, with ARGS added (a test that crashes daemons calls it
#  again with REAPED after reap_dead).
lib_next_daemon=0
add_daemons () {    #  add_daemons COUNT SUPERNODE [ARGS...]
    count=$1; supernode=$2; shift 2
    for _ in $(seq 1 "$count"); do
        lib_next_daemon=$((lib_next_daemon + 1))
        start_daemon "d$lib_next_daemon" --supernode "$supernode" "$@"
    done
}

#  Crash a process the way a power cut would, and reap it.
crash () {          #  crash PID
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    lib_pids=$(echo "$lib_pids" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ')
}
