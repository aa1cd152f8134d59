#!/bin/sh
#  test_mapping_replace - a job mapped by MAHEVE on a live grid, and where
#  its tasks go when their daemons die
#
#  Cluster A: six daemons of power 2; cluster B: two of power 1.  MAHEVE
#  (section 3.3) keeps one spare in each cluster and puts the five tasks
#  on A, the best cluster.  Two of them are crashed at once, once the job
#  is iterating (progress, not time, triggers it): the first goes to A's
#  spare (a reserved node of the dead node's cluster); A has no node available
#  for the second, which goes to the best of the re-sorted clusters, B.
#  The events say so, with the reasons, and the job still ends with a
#  verified answer.
. "$(dirname "$0")/lib.sh"
lib_init
plan 11

start_supernode sn --heartbeat 200 --timeout 1000
for i in 1 2 3 4 5 6; do
    start_daemon "a$i" --supernode "$SN_sn" --cluster A --power 2
done
for i in 1 2; do
    start_daemon "b$i" --supernode "$SN_sn" --cluster B --power 1
done
check "8 daemons register" wait_for 15 count_is 8 "$SN_sn"

events () {         #  events NAME EVENT: the lines of that event
    grep "\"event\":\"$2\"" "$RUN/$1.events"
}

submit maheve "$JACE_SRCDIR/examples/poisson3d.job" "$SN_sn" \
    --set job/tasks=5 --set job/mapping=maheve --set problem/n=40 \
    --set solver/inner_tolerance=1e-12 --set job/tolerance=1e-10 \
    --set job/heartbeat_timeout=800 --set faults/count=2 \
    --set faults/first_iteration=10 --set faults/rounds=1
ok $? "MAHEVE, two of five daemons crashed at once: the job exits 0"
job_residual maheve >/dev/null
ok $? "with a verified residual"
events maheve plan | jq -e '.mapping == "maheve" and .daemons == 8
    and .clusters == 2 and (.spares | length) == 2' >/dev/null
ok $? "the plan is MAHEVE's on the 8 daemons of 2 clusters, with 2 spares"
events maheve assign | jq -s -e 'length == 5 and all(.cluster == "A")' \
    >/dev/null
ok $? "the five tasks run on A, the best cluster"
[ "$(events maheve replace | wc -l)" -eq 2 ]
ok $? "two replacements"
events maheve replace | jq -s -e 'map(select(.cluster == "A"))
    | length == 1 and (.[0].reason | test("reserved node of its cluster A"))' \
    >/dev/null
ok $? "one to A's spare: a reserved node of the dead node's cluster"
events maheve replace | jq -s -e 'map(select(.cluster == "B"))
    | length == 1 and (.[0].reason | test("re-sorted"))' >/dev/null
ok $? "the other to B: A has no node available, clusters re-sorted"
events maheve replace | jq -r .reason | while read -r line; do diag "$line"; done
tail -n 1 "$RUN/maheve.events" | jq -e '.replacements == 2' >/dev/null
ok $? "the result counts the two replacements"
lib_finish
