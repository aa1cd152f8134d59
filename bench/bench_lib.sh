#  bench_lib.sh - shell functions the grid benchmarks share (sourced)

#  wait_free COUNT: wait until the super-node $sn lists COUNT free
#  daemons.  The previous job's daemons leave it a moment after it ends,
#  and a job that had to wait for them would be charged for its
#  predecessor.
wait_free () {
    for _ in $(seq 1 200); do
        free=$("$JACE_BUILDDIR/jace-spawner" nodes --supernode "$sn" --json |
               jq '[.[] | select(.state == "free")] | length')
        [ "$free" -lt "$1" ] || return 0
        sleep 0.05
    done
    echo "$(basename "$0"): only $free of $1 daemons free after 10 s" >&2
}
