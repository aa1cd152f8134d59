/*  =========================================================================
    test_runtime_checkpoint - checkpoint messages and the holder's store

    A copy survives the wire with its seal (keyed BLAKE2b under the job
    key); any change to its bytes or tags is caught, and so is a copy
    sealed under another key (forged by someone without the job key, or
    of another job); the store keeps the newest valid copy per task, never
    lets a damaged, forged or older one replace it, stays within its
    memory limit, and forgets a job when it ends.
    =========================================================================
*/
#include "jace_checkpoint.h"
#include "daemon_checkpoints.h"
#include "../tests/tap.h"

static double s_state [256];
static jace_key_t s_key;            //  The job's key
static jace_key_t s_other_key;      //  Anyone else's

static jace_msg_t *
s_copy (int64_t task, int64_t epoch, int64_t iteration, size_t bytes)
{
    return jace_checkpoint_new ("d1", "job-a", task, epoch, iteration,
                                s_state, bytes, &s_key);
}

static jace_msg_t *
s_wire (jace_msg_t *msg)
{
    zmsg_t *zmsg = jace_msg_encode (msg);
    return jace_msg_decode (&zmsg, NULL, 0);
}

static void
test_checksums (void)
{
    char reason [256];
    jace_msg_t *copy = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_t *received = s_wire (copy);
    ok (received && jace_checkpoint_check (received, &s_key, reason,
                                           sizeof reason) == 0,
        "a copy survives the wire with a valid seal");
    jace_msg_t *forwarded = jace_checkpoint_forward (received, "d2");
    ok (jace_checkpoint_check (forwarded, &s_key, reason, sizeof reason) == 0
        && streq (jace_msg_sender (forwarded), "d2"),
        "a forwarded copy keeps its seal and names its new sender");
    jace_msg_set_iteration (forwarded, 41);
    ok (jace_checkpoint_check (forwarded, &s_key, reason, sizeof reason) == -1
        && strstr (reason, "fails its seal"),
        "a relabelled iteration is caught");
    jace_msg_t *damaged = s_copy (3, 2, 40, sizeof s_state);
    s_state [10] += 1;
    jace_msg_t *other = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_set_token (other, jace_msg_token (damaged));
    ok (jace_checkpoint_check (other, &s_key, reason, sizeof reason) == -1,
        "changed bytes are caught");
    jace_msg_t *none = jace_checkpoint_none ("d1", "job-a", 3, &s_key);
    ok (!jace_checkpoint_is_copy (none)
        && jace_checkpoint_check (none, &s_key, reason, sizeof reason) == -1,
        "\"no copy here\" is not a copy");
    ok (jace_checkpoint_newer (copy, NULL)
        && jace_checkpoint_newer (other, NULL), "anything beats nothing");
    jace_msg_t *later_epoch = s_copy (3, 3, 1, 8);
    ok (jace_checkpoint_newer (later_epoch, copy)
        && !jace_checkpoint_newer (copy, later_epoch),
        "a later epoch is newer than a later iteration");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&received);
    jace_msg_destroy (&forwarded);
    jace_msg_destroy (&damaged);
    jace_msg_destroy (&other);
    jace_msg_destroy (&none);
    jace_msg_destroy (&later_epoch);
}

//  What an attacker without the job key can make: nothing that validates.
static void
test_forgeries (void)
{
    char reason [256];
    jace_msg_t *forged = jace_checkpoint_new ("evil", "job-a", 3, 2,
        (int64_t) 1 << 62, s_state, sizeof s_state, &s_other_key);
    ok (jace_checkpoint_check (forged, &s_key, reason, sizeof reason) == -1
        && strstr (reason, "fails its seal"),
        "a copy sealed under another key is refused");
    ok (!jace_checkpoint_authentic (forged, &s_key),
        "and is not authentic for the job");
    jace_msg_t *relabelled = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_set_job (relabelled, "job-b");
    ok (jace_checkpoint_check (relabelled, &s_key, reason, sizeof reason)
        == -1, "a copy relabelled to another job is refused");
    jace_msg_destroy (&relabelled);
    relabelled = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_set_task (relabelled, 4);
    ok (jace_checkpoint_check (relabelled, &s_key, reason, sizeof reason)
        == -1, "a copy relabelled to another task is refused");
    jace_msg_destroy (&relabelled);
    relabelled = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_set_epoch (relabelled, 9);
    ok (jace_checkpoint_check (relabelled, &s_key, reason, sizeof reason)
        == -1, "a copy relabelled to a later epoch is refused");
    jace_msg_t *unsealed = jace_checkpoint_begin ("evil", "job-a", 3, 2, 40,
                                                  s_state, sizeof s_state);
    ok (jace_checkpoint_check (unsealed, &s_key, reason, sizeof reason)
        == -1, "an unsealed copy is refused");
    jace_msg_t *none = jace_checkpoint_none ("evil", "job-a", 3,
                                             &s_other_key);
    jace_msg_t *good_none = jace_checkpoint_none ("d1", "job-a", 3, &s_key);
    ok (!jace_checkpoint_authentic (none, &s_key)
        && jace_checkpoint_authentic (good_none, &s_key),
        "\"no copy here\" is authentic only under the job key");
    daemon_checkpoints_t *store = daemon_checkpoints_new (1 << 20);
    jace_msg_t *copy = s_copy (3, 1, 10, 1024);
    daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason);
    is_int (daemon_checkpoints_store (store, &forged, &s_key, reason,
                                      sizeof reason),
            -1, "the store refuses the forged newer copy");
    const jace_msg_t *held = daemon_checkpoints_find (store, "job-a", 3);
    ok (held && jace_msg_iteration (held) == 10,
        "and keeps the good one");
    daemon_checkpoints_destroy (&store);
    jace_msg_destroy (&forged);
    jace_msg_destroy (&relabelled);
    jace_msg_destroy (&unsealed);
    jace_msg_destroy (&none);
    jace_msg_destroy (&good_none);
}

static void
test_store (void)
{
    char reason [256];
    daemon_checkpoints_t *store = daemon_checkpoints_new (3000);
    jace_msg_t *copy = s_copy (1, 1, 10, 1024);
    is_int (daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason),
            1, "a valid copy is kept");
    ok (copy == NULL, "the store took it");
    copy = s_copy (1, 1, 5, 1024);
    is_int (daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason),
            0, "an older copy is dropped");
    copy = s_copy (1, 1, 20, 1024);
    jace_msg_set_iteration (copy, 99);
    is_int (daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason),
            -1, "a damaged newer copy is refused");
    const jace_msg_t *held = daemon_checkpoints_find (store, "job-a", 1);
    ok (held && jace_msg_iteration (held) == 10,
        "and the good one is still held");
    copy = s_copy (2, 1, 7, 1024);
    daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason);
    is_int ((long long) daemon_checkpoints_bytes (store), 2048,
            "the store counts the bytes it holds");
    copy = s_copy (4, 1, 7, 1024);
    is_int (daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason),
            -1, "a copy over the memory limit is refused");
    ok (strstr (reason, "limit 3000") != NULL, "saying the limit");
    copy = s_copy (1, 1, 30, 1536);
    is_int (daemon_checkpoints_store (store, &copy, &s_key, reason,
                                      sizeof reason),
            1, "a newer copy replacing an old one fits in the freed room");
    is_int ((long long) daemon_checkpoints_bytes (store), 2560,
            "and the count follows");
    ok (daemon_checkpoints_find (store, "job-b", 1) == NULL,
        "copies are per job");
    is_int ((long long) daemon_checkpoints_drop_job (store, "job-a"), 2,
            "a job's end drops its copies");
    is_int ((long long) daemon_checkpoints_bytes (store), 0,
            "and their memory");
    daemon_checkpoints_destroy (&store);
}

int
main (void)
{
    for (size_t i = 0; i < 256; i++)
        s_state [i] = (double) i * 0.5;
    jace_key_random (&s_key);
    jace_key_random (&s_other_key);
    tap_plan (29);
    test_checksums ();
    test_forgeries ();
    test_store ();
    return tap_done ();
}
