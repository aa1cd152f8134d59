/*  =========================================================================
    jace_checkpoint - a task's saved state as it travels between daemons
    =========================================================================
*/
#include "jace_checkpoint.h"

#include "jace_hash.h"

//  Keyed BLAKE2b under the job key: a copy travels through daemons that
//  only keep it (the holders), so its tags and bytes are bound to the job
//  itself, not to the link it came on.  A holder, a stranger or a damaged
//  disk cannot make a copy that validates: the key is not theirs.  It
//  covers the tags (not the sender, which changes as copies are passed
//  on) and every payload (kind, length, bytes).
void
jace_checkpoint_mac (const jace_msg_t *copy, const jace_key_t *key,
                     unsigned char *mac)
{
    assert (copy && key && mac);
    jace_sodium_init ();
    crypto_generichash_state state;
    crypto_generichash_init (&state, key->bytes, sizeof key->bytes,
                             JACE_KEY_BYTES);
    const char *job = jace_msg_job (copy);
    crypto_generichash_update (&state, (const unsigned char *) job,
                               strlen (job) + 1);
    jace_hash_update_int64 (&state, jace_msg_task (copy));
    jace_hash_update_int64 (&state, jace_msg_epoch (copy));
    jace_hash_update_int64 (&state, jace_msg_iteration (copy));
    jace_hash_update_int64 (&state, (int64_t) jace_msg_payload_count (copy));
    for (size_t i = 0; i < jace_msg_payload_count (copy); i++) {
        size_t length = jace_msg_payload_length (copy, i);
        jace_payload_kind_t kind = jace_msg_payload_kind (copy, i);
        jace_hash_update_int64 (&state, (int64_t) kind);
        jace_hash_update_int64 (&state, (int64_t) length);
        if (length)
            crypto_generichash_update (&state,
                jace_msg_payload_data (copy, i),
                length * (kind == JACE_PAYLOAD_BYTES ? 1 : 8));
    }
    crypto_generichash_final (&state, mac, JACE_KEY_BYTES);
}

static bool
s_mac_holds (const jace_msg_t *copy, const jace_key_t *key)
{
    unsigned char presented [JACE_KEY_BYTES], mac [JACE_KEY_BYTES];
    const char *token = jace_msg_token (copy);
    if (strlen (token) != JACE_KEY_TEXT || !zmq_z85_decode (presented, token))
        return false;
    jace_checkpoint_mac (copy, key, mac);
    return sodium_memcmp (mac, presented, sizeof mac) == 0;
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
jace_checkpoint_seal (jace_msg_t *copy, const jace_key_t *key)
{
    assert (copy && key);
    unsigned char mac [JACE_KEY_BYTES];
    jace_checkpoint_mac (copy, key, mac);
    char text [JACE_KEY_TEXT + 1];
    zmq_z85_encode (text, mac, sizeof mac);
    jace_msg_set_token (copy, text);
}

jace_msg_t *
jace_checkpoint_new (const char *sender, const char *job, int64_t task,
                     int64_t epoch, int64_t iteration, const void *bytes,
                     size_t size, const jace_key_t *key)
{
    jace_msg_t *msg = jace_checkpoint_begin (sender, job, task, epoch,
                                             iteration, bytes, size);
    jace_checkpoint_seal (msg, key);
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
    jace_msg_set_token (msg, jace_msg_token (copy));
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
jace_checkpoint_none (const char *sender, const char *job, int64_t task,
                      const jace_key_t *key)
{
    jace_msg_t *msg = s_ckpt (sender, job, task);
    jace_msg_set_iteration (msg, -1);
    jace_checkpoint_seal (msg, key);
    return msg;
}

bool
jace_checkpoint_authentic (const jace_msg_t *msg, const jace_key_t *key)
{
    assert (msg && key);
    return jace_msg_type (msg) == JACE_MSG_CKPT && s_mac_holds (msg, key);
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
jace_checkpoint_check (const jace_msg_t *msg, const jace_key_t *key,
                       char *reason, size_t reason_size)
{
    assert (msg && key);
    size_t payloads = jace_msg_payload_count (msg);
    if (!jace_checkpoint_is_copy (msg) || payloads < 1
    ||  jace_msg_payload_kind (msg, 0) != JACE_PAYLOAD_BYTES) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64
                  " does not start with a byte payload", jace_msg_task (msg));
        return -1;
    }
    if (!s_mac_holds (msg, key)) {
        size_t size = 0;
        jace_checkpoint_bytes (msg, &size);
        snprintf (reason, reason_size, "checkpoint of task %" PRId64
                  " (epoch %" PRId64 ", iteration %" PRId64 ", %zu bytes) "
                  "fails its seal (forged, damaged or of another job)", jace_msg_task (msg),
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
