#!/bin/sh
#  demo.sh - Jace in two minutes: a virtual grid, a crash, a verified solve
#
#  Run by `make demo`.  Starts a local virtual grid of two heterogeneous
#  clusters (examples/platforms/two-clusters.platform) as real processes,
#  shows the registered daemons, crashes a free daemon and shows the
#  super-nodes notice, submits examples/poisson3d.job and prints the
#  verified residual of the answer.  While the job runs it crashes
#  JACE_DEMO_CRASHES working daemons (default 2) with `jace-spawner kill`;
#  their tasks move to free daemons and restart from the checkpoints their
#  neighbours kept.  Prints the job's failure report.  The grid is stopped
#  on any exit, and every step is bounded in time.  Exits non-zero if the
#  job did not produce a verified answer.
set -u

builddir=${JACE_BUILDDIR:-$(pwd)}
srcdir=${JACE_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
crashes=${JACE_DEMO_CRASHES:-2}
grid="$builddir/jace-grid"
spawner="$builddir/jace-spawner"
job="$srcdir/examples/poisson3d.job"
platform="$srcdir/examples/platforms/two-clusters.platform"
[ -f "$platform" ] || platform="$srcdir/examples/platforms/demo.platform"

say () {
    printf '\n== %s\n' "$*"
}

fail () {
    echo "demo: $*" >&2
    exit 1
}

for binary in "$grid" "$spawner" "$builddir/jace-supernode" \
              "$builddir/jace-daemon"; do
    [ -x "$binary" ] || fail "$binary is not built (run make first)"
done
[ -f "$job" ] || fail "$job is missing"
[ -f "$platform" ] || fail "no platform file in $srcdir/examples/platforms"

run=$(mktemp -d "${TMPDIR:-/tmp}/jace-demo.XXXXXX") || fail "no temp dir"
watcher=""
status=1

#  Whatever happens, stop the grid.  Keep the run folder if the demo
#  failed, for its logs.
cleanup () {
    [ -z "$watcher" ] || kill "$watcher" 2>/dev/null
    timeout 30 "$grid" stop --run "$run" --grace 3 2>/dev/null
    if [ $status -eq 0 ]; then
        rm -rf "$run"
    else
        echo "demo: logs kept in $run/logs" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

#  Number of daemons the first super-node lists
count_nodes () {
    timeout 20 "$spawner" nodes --supernode "$sn" --json 2>/dev/null |
        grep -o '"id"' | wc -l | tr -d ' '
}

say "Starting a virtual grid from ${platform#"$srcdir"/}"
#  Quick heartbeats, so that a crash shows within a couple of seconds.
sn=$(timeout 120 "$grid" start --platform "$platform" --run "$run" \
     --timeout 90 \
     --supernode-arg=--heartbeat --supernode-arg=250 \
     --supernode-arg=--timeout --supernode-arg=2000 \
     --daemon-arg=--heartbeat --daemon-arg=250) ||
    fail "the grid did not start"
timeout 10 "$grid" status --run "$run"
echo "first super-node: $sn"

say "Daemons registered"
timeout 20 "$spawner" nodes --supernode "$sn" || fail "nodes failed"
before=$(count_nodes)

say "Crashing one free daemon (SIGKILL)"
victim=$(timeout 10 "$grid" kill --run "$run" --random 1) ||
    fail "could not kill a daemon"
echo "killed $victim; waiting for the super-nodes to notice"
after=$before
for attempt in $(seq 1 40); do
    after=$(count_nodes)
    [ "$after" -lt "$before" ] && break
    sleep 0.5
done
[ "$after" -lt "$before" ] ||
    fail "$victim still listed after 20 s"
echo "$victim is gone: $before daemons before, $after now"

#  Kill working daemons once the job has started, if asked to.
if [ "$crashes" -gt 0 ]; then
    (
        #  On progress, not on the clock: once a task has done 120
        #  iterations (hundreds remain), so two checkpoints (every 50) are
        #  kept by its neighbours and the crashed tasks go on from them,
        #  whatever the machine's speed.  At 10 they restarted from
        #  scratch: the demo never showed a checkpoint restored.
        for attempt in $(seq 1 1200); do
            grep -q -E '"event":"progress".*"iteration":(1[2-9][0-9]|[2-9][0-9][0-9]|[0-9]{4,})[,}]' \
                "$run/events.jsonl" 2>/dev/null && break
            sleep 0.1
        done
        job_id=$(head -n 1 "$run/events.jsonl" |
                 sed -n 's/.*"job":"\([^"]*\)".*/\1/p')
        echo "demo: crashing $crashes working daemons of $job_id" >&2
        timeout 20 "$spawner" kill --job "$job_id" --supernode "$sn" \
            --random "$crashes" --run "$run" >&2
    ) &
    watcher=$!
fi

say "Submitting ${job#"$srcdir"/}"
#  A 3D Poisson solve long enough for a crash to land while it runs; the
#  dead daemon's task moves to a free one and the job goes on.
timeout 600 "$spawner" submit "$job" --supernode "$sn" \
    --set job/tasks=6 --set problem/n=48 --set job/heartbeat_timeout=1000 \
    --set job/tolerance=1e-10 --set report/sample_seconds=1 \
    --set checkpoint/every_iterations=50 \
    --events "$run/events.jsonl" --out "$run/solution" \
    --report "$run/report.txt"
job_status=$?
[ -z "$watcher" ] || wait "$watcher" 2>/dev/null
watcher=""

say "Result"
last=$(tail -n 1 "$run/events.jsonl" 2>/dev/null)
residual=$(echo "$last" | sed -n 's/.*"residual": *\([-+0-9.eE]*\).*/\1/p')
echo "events: $(wc -l < "$run/events.jsonl" 2>/dev/null || echo 0)"
if [ $job_status -ne 0 ] || [ -z "$residual" ]; then
    echo "the job failed (exit status $job_status); last event: $last"
    exit 1
fi
echo "verified relative residual: $residual"

say "Failure report"
cat "$run/report.txt"
status=0
