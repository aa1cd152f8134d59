#!/bin/sh
#  test_jobs_ended - `jobs` says a job ended while its daemons are freed
#
#  A job's spawner ends it (here on SIGTERM) while one of its daemons is
#  frozen: the super-node lists that daemon at work for the job until it
#  speaks again.  `jobs` called such a job "orphaned", as one whose
#  spawner died (so, after every submit, for a moment); this machine's
#  record of the job's end makes it "ended".  A job whose spawner died
#  without a word is still "orphaned".
. "$(dirname "$0")/lib.sh"
lib_init light
plan 5

#  The frozen daemon stays listed however long the spawner takes to end
start_supernode sn --timeout 60000
start_daemon d1 --cluster A --supernode "$SN"
start_daemon d2 --cluster A --supernode "$SN"
wait_for 15 count_is 2 "$SN"
state_of () {       #  state_of JOB: its row's state in `jobs --json`
    timeout 10 "$BIN/jace-spawner" jobs --supernode "$SN" --json |
        jq -r ".[] | select(.job == \"$1\") | .state"
}

endless_job one "$SN" --set job/tasks=2 --set job/heartbeat_timeout=60000 &
one=$!
check "job one's 2 tasks iterate" wait_for 60 all_iterate "$RUN/one.events" 2
id=$(jq -r 'select(.event == "submit") | .job' "$RUN/one.events")
frozen=$(daemon_of one 1)
eval "kill -STOP \$PID_$frozen"
kill -TERM "$one"
wait "$one"
st=$(state_of "$id")
#  The frozen daemon may have been dropped by then (a slow build's
#  spawner takes seconds to end): the job is then not listed at all
listed=$(nodes_json "$SN" | jq -r ".[] | select(.id == \"$frozen\")
                                     | .job")
if [ "$listed" = "$id" ]; then [ "$st" = ended ]; else [ -z "$st" ]; fi
rc=$?
[ $rc -ne 0 ] && diag "state '$st' of $id, $frozen listed for '$listed'"
ok $rc "ended by its spawner, a daemon still listed at work: ended (not orphaned)"
eval "kill -CONT \$PID_$frozen"
wait_for 30 count_is 2 "$SN" '.state == "free"'

endless_job two "$SN" --set job/tasks=2 &
two=$!
wait_for 60 all_iterate "$RUN/two.events" 2
id=$(jq -r 'select(.event == "submit") | .job' "$RUN/two.events")
crash "$two"
[ "$(state_of "$id")" = orphaned ]
ok $? "its spawner killed: orphaned"
"$BIN/jace-spawner" cancel "$id" --supernode "$SN" >/dev/null 2>&1
lib_finish
