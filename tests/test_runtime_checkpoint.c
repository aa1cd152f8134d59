/*  =========================================================================
    test_runtime_checkpoint - checkpoint messages and the holder's store

    A copy survives the wire with its checksum; any change to its bytes or
    tags is caught; the store keeps the newest valid copy per task, never
    lets a damaged or older one replace it, stays within its memory limit,
    and forgets a job when it ends.
    =========================================================================
*/
#include "jace_checkpoint.h"
#include "daemon_checkpoints.h"
#include "../tests/tap.h"

static double s_state [256];

static jace_msg_t *
s_copy (int64_t task, int64_t epoch, int64_t iteration, size_t bytes)
{
    return jace_checkpoint_new ("d1", "job-a", task, epoch, iteration,
                                s_state, bytes);
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
    ok (received && jace_checkpoint_check (received, reason,
                                           sizeof reason) == 0,
        "a copy survives the wire with a valid checksum");
    jace_msg_t *forwarded = jace_checkpoint_forward (received, "d2");
    ok (jace_checkpoint_check (forwarded, reason, sizeof reason) == 0
        && streq (jace_msg_sender (forwarded), "d2"),
        "a forwarded copy keeps its checksum and names its new sender");
    jace_msg_set_iteration (forwarded, 41);
    ok (jace_checkpoint_check (forwarded, reason, sizeof reason) == -1
        && strstr (reason, "fails its checksum"),
        "a relabelled iteration is caught");
    jace_msg_t *damaged = s_copy (3, 2, 40, sizeof s_state);
    s_state [10] += 1;
    jace_msg_t *other = s_copy (3, 2, 40, sizeof s_state);
    jace_msg_set_checksum (other, jace_msg_checksum (damaged));
    ok (jace_checkpoint_check (other, reason, sizeof reason) == -1,
        "changed bytes are caught");
    jace_msg_t *none = jace_checkpoint_none ("d1", "job-a", 3);
    ok (!jace_checkpoint_is_copy (none)
        && jace_checkpoint_check (none, reason, sizeof reason) == -1,
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

static void
test_store (void)
{
    char reason [256];
    daemon_checkpoints_t *store = daemon_checkpoints_new (3000);
    jace_msg_t *copy = s_copy (1, 1, 10, 1024);
    is_int (daemon_checkpoints_store (store, &copy, reason, sizeof reason),
            1, "a valid copy is kept");
    ok (copy == NULL, "the store took it");
    copy = s_copy (1, 1, 5, 1024);
    is_int (daemon_checkpoints_store (store, &copy, reason, sizeof reason),
            0, "an older copy is dropped");
    copy = s_copy (1, 1, 20, 1024);
    jace_msg_set_iteration (copy, 99);
    is_int (daemon_checkpoints_store (store, &copy, reason, sizeof reason),
            -1, "a damaged newer copy is refused");
    const jace_msg_t *held = daemon_checkpoints_find (store, "job-a", 1);
    ok (held && jace_msg_iteration (held) == 10,
        "and the good one is still held");
    copy = s_copy (2, 1, 7, 1024);
    daemon_checkpoints_store (store, &copy, reason, sizeof reason);
    is_int ((long long) daemon_checkpoints_bytes (store), 2048,
            "the store counts the bytes it holds");
    copy = s_copy (4, 1, 7, 1024);
    is_int (daemon_checkpoints_store (store, &copy, reason, sizeof reason),
            -1, "a copy over the memory limit is refused");
    ok (strstr (reason, "limit 3000") != NULL, "saying the limit");
    copy = s_copy (1, 1, 30, 1536);
    is_int (daemon_checkpoints_store (store, &copy, reason, sizeof reason),
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
    tap_plan (20);
    test_checksums ();
    test_store ();
    return tap_done ();
}
