#  bench_lib.sh - shell functions the grid benchmarks share (sourced)

#  private_secrets RUN: keep the jobs' secrets in RUN/secrets (mode 700),
#  for every jace-spawner this script starts, so that a benchmark neither
#  reads nor leaves anything in the user's own secrets folder.
private_secrets () {
    JACE_SECRETS=$1/secrets
    export JACE_SECRETS
    mkdir -m 700 "$JACE_SECRETS"
}

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

#  median_column FILE KEY COLUMN STATUS_COLUMN: the median of COLUMN over
#  the tab-separated rows of FILE whose first field is KEY and whose
#  STATUS_COLUMN is "ok" (the mean of the middle two for an even count),
#  or "-" when there is none.
median_column () {
    awk -F '\t' -v key="$2" -v col="$3" -v status="$4" \
        '$1 == key && $status == "ok" { print $col }' "$1" |
        sort -g | awk '{ v [NR] = $1 }
            END {
                if (NR == 0) print "-"
                else if (NR % 2) print v [(NR + 1) / 2]
                else print (v [NR / 2] + v [NR / 2 + 1]) / 2
            }'
}
