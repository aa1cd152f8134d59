#!/bin/sh
#  test_resume_drain - a spawner that dies in the middle of a drain is
#  resumed, and the resumed spawner carries the drain on to its end
#
#  The drain moves one task per step (drain/schedule = one), so it takes
#  several steps, each once the tasks have checkpointed (every 15
#  iterations).  The job is the exchange application, held before its
#  last round until the test creates a file: once the resumed spawner
#  has answered status and finished the drain, so that neither can come
#  after the job's end on any machine (status once found a job, resumed
#  4.2 s before, already over).  The spawner is killed (SIGKILL) once
#  the first step has moved its task, triggered by that event, not by a
#  clock.  A resumed
#  spawner used to know nothing of the drain: the job ended verified with
#  tasks left on the cluster being drained.  Now the spawner notes the
#  drain beside the job's secret, and the resume takes it up from there.
#  Two resumes are started at once: one must be refused.
. "$(dirname "$0")/lib.sh"
lib_init medium
plan 13

cat >"$RUN/two.platform" <<EOF
platform
    name = "two"
    backbone
        latency_us = 4000
        bandwidth_mbps = 100
    cluster
        name = "A"
        nodes = 8
    cluster
        name = "B"
        nodes = 8
        supernodes = 0
EOF
cat >"$RUN/p.job" <<EOF
job
    application = "exchange"
    tasks = 6
    mode = "async"
    tolerance = 0.5
    converge_iterations = 3
    max_seconds = 300
    heartbeat_timeout = 3000
    stall_snapshots = 0
exchange
    rounds = 20
    bytes = 2000
    pause_ms = 20
    hold_file = "$RUN/open"
drain
    schedule = "one"
checkpoint
    every_seconds = 0
    every_iterations = 15
EOF

"$BIN/jace-grid" start --platform "$RUN/two.platform" --run "$RUN/grid" \
    >"$RUN/grid.endpoint" 2>"$RUN/grid.err"
ok $? "a grid of two clusters starts"
sn=$(cat "$RUN/grid.endpoint")

"$BIN/jace-spawner" submit "$RUN/p.job" --supernode "$sn" -q \
    --events "$RUN/first.events" >"$RUN/first.out" 2>"$RUN/first.err" &
spawner=$!
wait_for 120 all_iterate "$RUN/first.events" 6
id=$(jq -r 'select(.event == "start") | .job' "$RUN/first.events")
busiest=$(busiest_cluster "$RUN/first.events")
on_busiest=$(jq -r "select(.event == \"assign\" and .cluster == \"$busiest\")
                    | .task" "$RUN/first.events" | sort -u | wc -l)
diag "job $id; draining cluster $busiest, running $on_busiest tasks"
"$BIN/jace-spawner" drain "$id" --cluster "$busiest" --supernode "$sn" \
    >"$RUN/drain.out" 2>&1
ok $? "jace-spawner drain --cluster $busiest is taken"

wait_for 60 grep -q '"event":"drain_move"' "$RUN/first.events"
kill -9 "$spawner"
wait "$spawner" 2>/dev/null
[ "$on_busiest" -ge 2 ] && [ -f "$JACE_SECRETS/$id.drain" ] &&
    ! grep -q '"event":"drained"' "$RUN/first.events"
ok $? "the spawner died mid-drain, its note of the drain beside the secret"

#  Two resumes typed at once: the first to hold the job's secret runs
#  the job, the other is refused at once (they used to fight over the
#  daemons until one failed the job)
timeout $((200 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    -q --events "$RUN/one.events" >"$RUN/one.out" 2>"$RUN/one.err" &
one=$!
timeout $((200 * SLOW)) "$BIN/jace-spawner" resume "$id" --supernode "$sn" \
    -q --events "$RUN/two.events" >"$RUN/two.out" 2>"$RUN/two.err" &
two=$!
#  The super-node's lease names the resumed spawner once it renews it:
#  status (and drain, cancel) reach it, not the dead one's endpoint.
#  Each try waits 1 s, not status's 5 s: the first goes to the dead
#  spawner, and in one CI run that try outlasted the resumed job (it
#  ended verified 4.2 s after the resume), so status found it over.
answers () {
    "$BIN/jace-spawner" status "$id" --supernode "$sn" --timeout 1000 \
        >"$RUN/status.out" 2>&1
}
wait_for 30 answers
ok $? "jace-spawner status reaches the resumed spawner"
#  Then the job may end, once the drain has.
drained () {
    cat "$RUN/one.events" "$RUN/two.events" 2>/dev/null |
        grep -q '"event":"drained"'
}
wait_for $((120 * SLOW)) drained
touch "$RUN/open"
wait $one; one_rc=$?
wait $two; two_rc=$?
refused=two
[ "$two_rc" -eq 0 ] && refused=one
grep -q "another spawner of job $id runs on this machine" \
    "$RUN/$refused.err" && [ ! -s "$RUN/$refused.events" ]
ok $? "of two resumes at once, one is refused and does nothing"
kept=$([ $refused = one ] && echo two || echo one)
for f in events out err; do mv "$RUN/$kept.$f" "$RUN/resume.$f"; done
[ $((one_rc + two_rc)) -eq 1 ]
ok $? "the other resumed job exits 0"
residual=$(job_residual resume)
[ -n "$residual" ]
ok $? "with a verified residual ($residual)"

jq -e -s --arg c "$busiest" 'any(.event == "drain" and .cluster == $c
                                 and .asked_by == "the resume")' \
    "$RUN/resume.events" >/dev/null
ok $? "the resumed spawner took the drain of $busiest up"
#  A resumed spawner has no listing of the grid at first: its plan waits
#  for one, so its moves are weighed in seconds over the links measured
jq -e -s 'map(select(.event == "drain_plan")) | length == 1
          and .[0].measured and .[0].predicted_at_once_s > 0' \
    "$RUN/resume.events" >/dev/null
ok $? "on the links as measured"
jq -e -s --arg c "$busiest" 'any(.event == "drained" and .cluster == $c)' \
    "$RUN/resume.events" >/dev/null
ok $? "and finished it"
before=$(grep -c '"event":"drain_move"' "$RUN/first.events")
after=$(grep -c '"event":"drain_move"' "$RUN/resume.events")
diag "tasks moved: $before before the spawner died, $after after the resume"
[ "$after" -ge 1 ]
ok $? "the resumed spawner moved the tasks still on $busiest"
[ ! -e "$JACE_SECRETS/$id.drain" ] && [ ! -e "$JACE_SECRETS/$id.secret" ]
ok $? "the note and the secret are gone once the job is over"
! grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
    "$RUN"/grid/logs/*.log "$RUN"/*.err >/dev/null 2>&1
ok $? "no sanitizer report in any log"
[ "$lib_failed" -eq 0 ]
