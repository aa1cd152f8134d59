#!/bin/sh
#  test_resume_scatter - a spawner that dies while its data streams out is
#  resumed: the daemons still taking their data are freed and used again,
#  and the job ends verified; a resume while the spawner lives is refused
#
#  Two clusters: the data in A, six daemons in B behind a slow backbone,
#  with a relay there.  `jace-spawner resume` while the job's spawner
#  lives is refused (two spawners of one job replace each other's tasks):
#  on this machine by the lock it holds on the job's secret, from another
#  secrets folder because the spawner answers for the job.  The spawner
#  is then killed (SIGKILL) once the relay passes on the data of two
#  tasks, seconds before the last task's data is in (the backbone's rate,
#  not the machine, sets when).  The daemons still taking
#  their data do not answer the resume; they used to wait for the rest
#  until their orphan timeout, neither adoptable nor free, and the resumed
#  job failed for want of daemons.  Now the resume stops them, they are
#  free again, and their tasks are placed anew, from the file.
. "$(dirname "$0")/lib.sh"
lib_init light
plan 13

cat >"$RUN/far.platform" <<EOF
platform
    name = "far"
    backbone
        latency_us = 5000
        bandwidth_mbps = 5
    cluster
        name = "A"
        nodes = 2
    cluster
        name = "B"
        nodes = 6
        supernodes = 0
EOF
#  7 MB of task data (12 bytes an entry): about 10 s on the backbone
"$BIN/jace-mmgen" convection2d 346 "$RUN/c.mtx" >/dev/null
cat >"$RUN/c.job" <<EOF
job
    application = "multisplit"
    tasks = 7
    tolerance = 1e-8
    max_seconds = 200
    heartbeat_timeout = 3000
problem
    kind = "matrix"
    matrix = "c.mtx"
solver
    inner = "bicgstab"
scatter
    root = "A"
    distribution = "uniform"
EOF

"$BIN/jace-grid" start --platform "$RUN/far.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of two clusters starts"
sn=$(cat "$RUN/grid.endpoint")

"$BIN/jace-spawner" submit "$RUN/c.job" --supernode "$sn" -q \
    --events "$RUN/first.events" >"$RUN/first.out" 2>"$RUN/first.err" &
spawner=$!
job_id () { jq -r 'select(.event == "plan") | .job' "$RUN/first.events"; }
wait_for 30 grep -q '"event":"plan"' "$RUN/first.events"
id=$(job_id)
relayed () {        #  relayed COUNT: the relay passed on COUNT tasks' data
    [ "$(cat "$RUN"/grid/logs/B-*.log |
         grep -c "relay: passing task .* of job $id")" -ge "$1" ]
}
wait_for 60 relayed 2

timeout $((60 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    -q --events "$RUN/early.events" >"$RUN/early.out" 2>&1
[ $? -ne 0 ] && grep -q "another spawner of job $id runs on this machine" \
    "$RUN/early.out" && [ ! -s "$RUN/early.events" ]
ok $? "a resume while the job's spawner lives is refused, and does nothing"
#  The secret copied to another folder (as to another machine): no lock
#  to find, but the job's spawner still answers the super-node's listing
mkdir -m 700 "$RUN/elsewhere"
cp -p "$JACE_SECRETS/$id.secret" "$RUN/elsewhere/"
timeout $((60 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    --secrets "$RUN/elsewhere" -q --events "$RUN/other.events" \
    >"$RUN/other.out" 2>&1
[ $? -ne 0 ] && grep -q "its spawner at .* still answers for it" \
    "$RUN/other.out" && [ ! -s "$RUN/other.events" ]
ok $? "so is one from another secrets folder: the spawner answers for it"

kill -9 "$spawner"
wait "$spawner" 2>/dev/null
! grep -q '"event":"start"' "$RUN/first.events"
ok $? "the spawner died before every task had its data"

timeout $((200 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    -q --events "$RUN/resume.events" >"$RUN/resume.out" 2>"$RUN/resume.err"
ok $? "the resumed job exits 0"
residual=$(job_residual resume)
[ -n "$residual" ]
ok $? "with a verified residual ($residual)"

#  The daemons the resume found taking their data, and where their tasks
#  went.
silent=$(jq -r 'select(.event == "unadopted") | .daemon' \
         "$RUN/resume.events" | sort)
placed=$(jq -r 'select(.event == "replace") | .daemon' "$RUN/resume.events" |
         sort)
diag "did not answer the resume: $(echo $silent); replacements: $(echo $placed)"
[ -n "$silent" ]
ok $? "some daemons were still taking their data"
#  Stopped, not lost: each task goes back to its own daemon, free again
#  in its cluster (the mapping took the others' old daemons for busy, and
#  the first task placed left for cluster A).
jq -s -e '(map(select(.event == "replace") | "\(.task) \(.daemon)")) as $r
    | map(select(.event == "unadopted") | "\(.task) \(.daemon)")
    | length > 0 and all(. as $u | $r | index($u))' "$RUN/resume.events" \
    >/dev/null
ok $? "the resume freed them, and put each task back on its own daemon"
jq -s -e '(map(select(.event == "replace") | .task) | unique) as $placed
    | map(select(.event == "unadopted") | .task)
    | all(. as $t | $placed | index($t))' "$RUN/resume.events" >/dev/null
ok $? "every task they held was placed anew"
#  They were alive: no failure of theirs is recorded, nor said lost
! grep -q '"event":"dead"' "$RUN/resume.events" &&
    ! grep -q "lost" "$RUN/resume.out" &&
    grep -q "not taken back by the resume" "$RUN/resume.out"
ok $? "the summary says they were not taken back, not that they were lost"
grep -q "^  time .* s since the resume, [0-9.]* s since the job was submitted" \
    "$RUN/resume.out"
ok $? "the summary's time says it is the resumed part's, and the job's whole"
diag "$(grep "^  time" "$RUN/resume.out")"

free_all () {
    [ "$("$BIN/jace-spawner" nodes --supernode "$sn" --json |
         jq '[.[] | select(.state != "free")] | length')" -eq 0 ]
}
wait_for 30 free_all
ok $? "every daemon is free after the job"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
