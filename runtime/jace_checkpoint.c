/*  =========================================================================
    jace_checkpoint - a task's saved state as it travels between daemons
    =========================================================================
*/
#include "jace_checkpoint.h"

#include <xxhash.h>

static void
s_update_int (XXH3_state_t *state, int64_t value)
{
    uint8_t bytes [8];
    for (int i = 0; i < 8; i++)
        bytes [i] = (uint8_t) ((uint64_t) value >> (8 * i));
    XXH3_64bits_update (state, bytes, sizeof bytes);
}

//  XXH3: a checksum that keeps up with memory (GB/s), so checkpointing
//  a large state stays cheap; authenticity is CURVE's job, not this one's.
//  It covers the tags and every payload (kind, length, bytes).
int64_t
jace_checkpoint_checksum (const jace_msg_t *copy)
{
    assert (copy);
    XXH3_state_t *state = XXH3_createState ();
    assert (state);
    XXH3_64bits_reset (state);
    const char *job = jace_msg_job (copy);
    XXH3_64bits_update (state, job, strlen (job) + 1);
    s_update_int (state, jace_msg_task (copy));
    s_update_int (state, jace_msg_epoch (copy));
    s_update_int (state, jace_msg_iteration (copy));
    s_update_int (state, (int64_t) jace_msg_payload_count (copy));
    for (size_t i = 0; i < jace_msg_payload_count (copy); i++) {
        size_t length = jace_msg_payload_length (copy, i);
        jace_payload_kind_t kind = jace_msg_payload_kind (copy, i);
        s_update_int (state, (int64_t) kind);
        s_update_int (state, (int64_t) length);
        if (length)
            XXH3_64bits_update (state, jace_msg_payload_data (copy, i),
                                length * (kind == JACE_PAYLOAD_BYTES ? 1 : 8));
    }
    uint64_t checksum = XXH3_64bits_digest (state);
    XXH3_freeState (state);
    return (int64_t) checksum;
}

static jace_msg_t *
s_ckpt (const char *sender, const char *job, int64_t task)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_CKPT);
    jace_msg_set_sender (msg, sender);
    jace_msg_set_job (msg, job);
    jace_msg_set_task (msg, task);
    return msg;
}

jace_msg_t *
jace_checkpoint_begin (const char *sender, const char *job, int64_t task,
                       int64_t epoch, int64_t iteration, const void *bytes,
                       size_t size)
{
    assert (iteration >= 0);
    jace_msg_t *msg = s_ckpt (sender, job, task);
    jace_msg_set_epoch (msg, epoch);
    jace_msg_set_iteration (msg, iteration);
    jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, bytes, size);
    return msg;
}

void
jace_checkpoint_seal (jace_msg_t *copy)
{
    assert (copy);
    jace_msg_set_checksum (copy, jace_checkpoint_checksum (copy));
}

jace_msg_t *
jace_checkpoint_new (const char *sender, const char *job, int64_t task,
                     int64_t epoch, int64_t iteration, const void *bytes,
                     size_t size)
{
    jace_msg_t *msg = jace_checkpoint_begin (sender, job, task, epoch,
                                             iteration, bytes, size);
    jace_checkpoint_seal (msg);
    return msg;
}

jace_msg_t *
jace_checkpoint_forward (const jace_msg_t *copy, const char *sender)
{
    assert (copy && jace_checkpoint_is_copy (copy));
    jace_msg_t *msg = s_ckpt (sender, jace_msg_job (copy),
                              jace_msg_task (copy));
    jace_msg_set_epoch (msg, jace_msg_epoch (copy));
    jace_msg_set_iteration (msg, jace_msg_iteration (copy));
    jace_msg_set_checksum (msg, jace_msg_checksum (copy));
    for (size_t i = 0; i < jace_msg_payload_count (copy); i++) {
        jace_payload_kind_t kind = jace_msg_payload_kind (copy, i);
        size_t length = jace_msg_payload_length (copy, i);
        void *data = malloc (length * (kind == JACE_PAYLOAD_BYTES ? 1 : 8) + 1);
        assert (data);
        jace_msg_payload_copy (copy, i, data);
        jace_msg_add_payload (msg, kind, data, length);
        free (data);
    }
    return msg;
}

jace_msg_t *
jace_checkpoint_none (const char *sender, const char *job, int64_t task)
{
    jace_msg_t *msg = s_ckpt (sender, job, task);
    jace_msg_set_iteration (msg, -1);
    return msg;
}

bool
jace_checkpoint_is_copy (const jace_msg_t *msg)
{
    assert (msg);
    return jace_msg_type (msg) == JACE_MSG_CKPT
        && jace_msg_iteration (msg) >= 0;
}

const void *
jace_checkpoint_bytes (const jace_msg_t *msg, size_t *size)
{
    assert (msg && size);
    if (jace_msg_payload_count (msg) < 1
    ||  jace_msg_payload_kind (msg, 0) != JACE_PAYLOAD_BYTES) {
        *size = 0;
        return NULL;
    }
    *size = jace_msg_payload_length (msg, 0);
    return jace_msg_payload_data (msg, 0);
}

int
jace_checkpoint_check (const jace_msg_t *msg, char *reason,
                       size_t reason_size)
{
    assert (msg);
    size_t payloads = jace_msg_payload_count (msg);
    if (!jace_checkpoint_is_copy (msg) || payloads < 1
    ||  jace_msg_payload_kind (msg, 0) != JACE_PAYLOAD_BYTES) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64
                  " does not start with a byte payload", jace_msg_task (msg));
        return -1;
    }
    if (jace_checkpoint_checksum (msg) != jace_msg_checksum (msg)) {
        size_t size = 0;
        jace_checkpoint_bytes (msg, &size);
        snprintf (reason, reason_size, "checkpoint of task %" PRId64
                  " (epoch %" PRId64 ", iteration %" PRId64 ", %zu bytes) "
                  "fails its checksum", jace_msg_task (msg),
                  jace_msg_epoch (msg), jace_msg_iteration (msg), size);
        return -1;
    }
    return 0;
}

bool
jace_checkpoint_newer (const jace_msg_t *a, const jace_msg_t *b)
{
    assert (a);
    if (!b)
        return true;
    if (jace_msg_epoch (a) != jace_msg_epoch (b))
        return jace_msg_epoch (a) > jace_msg_epoch (b);
    return jace_msg_iteration (a) > jace_msg_iteration (b);
}
