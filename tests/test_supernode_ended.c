/*  =========================================================================
    test_supernode_ended - the jobs a super-node knows are over: kept with
    the earliest time heard and the first proof, passed between peers in
    PEER_STATE params as "AGE PROOF", forgotten after an hour, bounded in
    number, and never taken from a param that is not a record; and the
    proof itself, which only the job key makes

    A daemon cut off from its spawner kept its task for job/orphan_timeout
    (600 s) after the job had ended without it; its super-node now tells
    it, from these records, with the spawner's proof
    (test_fault_partition runs it end to end).
    =========================================================================
*/
#include "tap.h"
#include "supernode_ended.h"
#include "jace_auth.h"

int
main (void)
{
    zsys_init ();
    tap_plan (12);
    jace_key_t job_key, other_key;
    jace_key_random (&job_key);
    jace_key_random (&other_key);
    char proof [JACE_KEY_TEXT + 1], forged [JACE_KEY_TEXT + 1];
    jace_job_over_proof (&job_key, "job-1", proof);
    jace_job_over_proof (&other_key, "job-1", forged);
    ok (jace_job_over_proof_valid (&job_key, "job-1", proof)
        && !jace_job_over_proof_valid (&job_key, "job-1", forged)
        && !jace_job_over_proof_valid (&job_key, "job-2", proof)
        && !jace_job_over_proof_valid (&job_key, "job-1", "short"),
        "a job's proof of being over holds for it under its key only");

    supernode_ended_t *ended = supernode_ended_new ();
    int64_t now = 10000000;
    ok (supernode_ended_add (ended, "job-1", now - 5000, proof)
        && supernode_ended_proof (ended, "job-1")
        && streq (supernode_ended_proof (ended, "job-1"), proof),
        "a job said to be over is known to be, with its proof");
    ok (!supernode_ended_proof (ended, "job-2")
        && !supernode_ended_proof (ended, ""), "another is not");
    ok (!supernode_ended_add (ended, "job-1", now - 9000, forged)
        && streq (supernode_ended_proof (ended, "job-1"), proof)
        && !supernode_ended_add (ended, "", now, proof)
        && !supernode_ended_add (ended, "job 3", now, proof)
        && !supernode_ended_add (ended, "job-4", now, "short")
        && supernode_ended_size (ended) == 1,
        "a job heard again keeps its first proof; a bad id or proof adds "
        "nothing");

    //  To a peer and back: the age is the earliest time heard.
    jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
    jace_msg_set_param (state, "lease/job-9/owner", "tcp://x:1");
    supernode_ended_describe (ended, state, now);
    char want [128];
    snprintf (want, sizeof want, "9000 %s", proof);
    const char *value = jace_msg_param (state, "ended/job-1");
    ok (value && streq (value, want), "its record goes out as ended/<job> "
        "= its age, the earliest time heard, and its proof");
    supernode_ended_t *peer = supernode_ended_new ();
    ok (supernode_ended_read (peer, state, now + 100) == 1
        && supernode_ended_proof (peer, "job-1")
        && streq (supernode_ended_proof (peer, "job-1"), proof)
        && !supernode_ended_proof (peer, "job-9"),
        "a peer takes it, and nothing from a lease's params");
    jace_msg_destroy (&state);

    state = jace_msg_new (JACE_MSG_PEER_STATE);
    char text [128];
    snprintf (text, sizeof text, "-1 %s", proof);
    jace_msg_set_param (state, "ended/job-4", text);
    snprintf (text, sizeof text, "12x %s", proof);
    jace_msg_set_param (state, "ended/job-5", text);
    snprintf (text, sizeof text, "99999999999 %s", proof);
    jace_msg_set_param (state, "ended/job-6", text);
    jace_msg_set_param (state, "ended/job-7", "10");
    jace_msg_set_param (state, "ended/job-7b", "10 short");
    snprintf (text, sizeof text, "10 %s", proof);
    jace_msg_set_param (state, "ended/", text);
    jace_msg_set_param (state, "ended/job 7", text);
    snprintf (text, sizeof text, "2000 %s", forged);
    jace_msg_set_param (state, "ended/job-8", text);
    ok (supernode_ended_read (peer, state, now) == 1
        && supernode_ended_proof (peer, "job-8")
        && supernode_ended_size (peer) == 2,
        "a bad age, an age past the hour, a missing or short proof and a "
        "bad id are left out");
    jace_msg_destroy (&state);

    //  A peer passing records back does not make them young again.
    state = jace_msg_new (JACE_MSG_PEER_STATE);
    supernode_ended_describe (peer, state, now + 100);
    ok (supernode_ended_read (ended, state, now + 100) == 1
        && supernode_ended_proof (ended, "job-8"),
        "records passed back: the one we lacked is taken");
    jace_msg_destroy (&state);
    supernode_ended_expire (ended, now - 9000 + SUPERNODE_ENDED_KEEP_MSEC);
    ok (supernode_ended_proof (ended, "job-1") != NULL,
        "a record is kept an hour");
    supernode_ended_expire (ended, now - 9000 + SUPERNODE_ENDED_KEEP_MSEC + 1);
    ok (!supernode_ended_proof (ended, "job-1")
        && supernode_ended_proof (ended, "job-8"),
        "then forgotten, each after its own hour, however often passed "
        "back and forth");
    supernode_ended_destroy (&peer);

    for (int i = 0; i < SUPERNODE_ENDED_MAX + 10; i++) {
        char job [32];
        snprintf (job, sizeof job, "job-%d", i);
        supernode_ended_add (ended, job, now + i, proof);
    }
    ok (supernode_ended_size (ended) == SUPERNODE_ENDED_MAX,
        "at most SUPERNODE_ENDED_MAX records");
    ok (!supernode_ended_proof (ended, "job-9")
        && supernode_ended_proof (ended, "job-10")
        && supernode_ended_proof (ended, "job-137"),
        "the oldest go first");
    supernode_ended_destroy (&ended);
    return tap_done ();
}
