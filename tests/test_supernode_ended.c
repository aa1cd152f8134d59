/*  =========================================================================
    test_supernode_ended - the jobs a super-node knows are over: kept with
    the earliest time heard, passed between peers in PEER_STATE params as
    ages, forgotten after an hour, bounded in number, and never taken from
    a param that is not a record

    A daemon cut off from its spawner kept its task for job/orphan_timeout
    (600 s) after the job had ended without it; its super-node now tells
    it, from these records (test_fault_partition runs it end to end).
    =========================================================================
*/
#include "tap.h"
#include "supernode_ended.h"

int
main (void)
{
    zsys_init ();
    tap_plan (11);
    supernode_ended_t *ended = supernode_ended_new ();
    int64_t now = 10000000;
    ok (supernode_ended_add (ended, "job-1", now - 5000)
        && supernode_ended_has (ended, "job-1"),
        "a job said to be over is known to be");
    ok (!supernode_ended_has (ended, "job-2") && !supernode_ended_has (ended, ""),
        "another is not");
    ok (!supernode_ended_add (ended, "job-1", now - 9000)
        && !supernode_ended_add (ended, "", now)
        && !supernode_ended_add (ended, "job 3", now)
        && supernode_ended_size (ended) == 1,
        "a job heard again, an empty id and one with a space add nothing");

    //  To a peer and back: the age is the earliest time heard.
    jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
    jace_msg_set_param (state, "lease/job-9/owner", "tcp://x:1");
    supernode_ended_describe (ended, state, now);
    const char *age = jace_msg_param (state, "ended/job-1");
    ok (age && streq (age, "9000"), "its record goes out as ended/<job> "
        "= its age, the earliest time heard");
    supernode_ended_t *peer = supernode_ended_new ();
    ok (supernode_ended_read (peer, state, now + 100) == 1
        && supernode_ended_has (peer, "job-1")
        && !supernode_ended_has (peer, "job-9"),
        "a peer takes it, and nothing from a lease's params");
    jace_msg_destroy (&state);

    state = jace_msg_new (JACE_MSG_PEER_STATE);
    jace_msg_set_param (state, "ended/job-4", "-1");
    jace_msg_set_param (state, "ended/job-5", "12x");
    jace_msg_set_param (state, "ended/job-6", "99999999999");
    jace_msg_set_param (state, "ended/", "10");
    jace_msg_set_param (state, "ended/job 7", "10");
    jace_msg_set_param (state, "ended/job-8", "2000");
    ok (supernode_ended_read (peer, state, now) == 1
        && supernode_ended_has (peer, "job-8")
        && supernode_ended_size (peer) == 2,
        "a bad age, an age past the hour kept and a bad id are left out");
    jace_msg_destroy (&state);

    //  A peer passing records back does not make them young again.
    state = jace_msg_new (JACE_MSG_PEER_STATE);
    supernode_ended_describe (peer, state, now + 100);
    ok (supernode_ended_read (ended, state, now + 100) == 1
        && supernode_ended_has (ended, "job-8"),
        "records passed back: the one we lacked is taken");
    jace_msg_destroy (&state);
    supernode_ended_expire (ended, now - 9000 + SUPERNODE_ENDED_KEEP_MSEC);
    ok (supernode_ended_has (ended, "job-1"), "a record is kept an hour");
    supernode_ended_expire (ended, now - 9000 + SUPERNODE_ENDED_KEEP_MSEC + 1);
    ok (!supernode_ended_has (ended, "job-1")
        && supernode_ended_has (ended, "job-8"),
        "then forgotten, each after its own hour, however often passed "
        "back and forth");
    supernode_ended_destroy (&peer);

    for (int i = 0; i < SUPERNODE_ENDED_MAX + 10; i++) {
        char job [32];
        snprintf (job, sizeof job, "job-%d", i);
        supernode_ended_add (ended, job, now + i);
    }
    ok (supernode_ended_size (ended) == SUPERNODE_ENDED_MAX,
        "at most SUPERNODE_ENDED_MAX records");
    ok (!supernode_ended_has (ended, "job-9")
        && supernode_ended_has (ended, "job-10")
        && supernode_ended_has (ended, "job-137"),
        "the oldest go first");
    supernode_ended_destroy (&ended);
    supernode_ended_destroy (&ended);
    return tap_done ();
}
