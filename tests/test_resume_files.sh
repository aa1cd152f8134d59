#!/bin/sh
#  test_resume_files - a job whose matrix file changed is not resumed
#
#  A job reads a Matrix Market system; its spawner is killed, and the
#  right-hand side rewritten (every value doubled).  The resume read the
#  new file, took the old daemons back on it, and the job failed 90 s
#  later "does not converge", pointing at the solver.  The spawner now
#  stamps the files it reads at submit (size, modification time), and a
#  resume refuses a file that changed, naming it.  The file put back as
#  it was, the same resume takes the job back.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 5

"$BIN/jace-mmgen" --rhs "$RUN/b.mtx" poisson2d 40 "$RUN/a.mtx" \
    >/dev/null 2>&1
cp -p "$RUN/b.mtx" "$RUN/b.kept"
cat >"$RUN/m.job" <<EOF2
job
    application = "multisplit"
    tasks = 2
    tolerance = 1e-300
    stall_snapshots = 0
    max_seconds = 120
problem
    kind = "matrix"
    matrix = "a.mtx"
    rhs = "b.mtx"
EOF2
start_supernode sn
start_daemon d1 --cluster A --supernode "$SN"
start_daemon d2 --cluster A --supernode "$SN"
wait_for 15 count_is 2 "$SN"
exec_job () {
    exec "$BIN/jace-spawner" submit "$RUN/m.job" --supernode "$SN" -q \
        --events "$RUN/job.events" >"$RUN/job.out" 2>"$RUN/job.err"
}
exec_job &
spawner=$!
check "the job's 2 tasks iterate" wait_for 60 all_iterate "$RUN/job.events" 2
id=$(jq -r 'select(.event == "submit") | .job' "$RUN/job.events")
crash "$spawner"

awk '/^%/ || !data { print; if (!/^%/) data = 1; next } { print 2 * $1 }' \
    "$RUN/b.kept" >"$RUN/b.mtx"
timeout 60 "$BIN/jace-spawner" resume "$id" --supernode "$SN" -q \
    --events "$RUN/resumed.events" >"$RUN/resume.out" 2>"$RUN/resume.err"
[ $? -ne 0 ] && grep -q "problem/rhs = $RUN/b.mtx changed since the job was submitted" \
    "$RUN/resume.err"
rc=$?
[ $rc -ne 0 ] && diag "$(tail -n 3 "$RUN/resume.err")"
ok $rc "the resume refuses the rewritten right-hand side, naming it"

cp -p "$RUN/b.kept" "$RUN/b.mtx"
timeout 60 "$BIN/jace-spawner" resume "$id" --supernode "$SN" -q \
    --events "$RUN/resumed.events" >"$RUN/resume2.out" 2>"$RUN/resume2.err" &
resumed=$!
resumed_iterates () {
    [ -n "$(jq -c 'select(.event == "progress" and .iteration >= 3)' \
            "$RUN/resumed.events" 2>/dev/null)" ]
}
check "put back as it was, the job is resumed" wait_for 60 resumed_iterates
"$BIN/jace-spawner" cancel "$id" --supernode "$SN" >/dev/null 2>&1
wait "$resumed"
lib_finish
