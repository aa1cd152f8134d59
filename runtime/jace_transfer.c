/*  =========================================================================
    jace_transfer - the DATA messages of a total exchange: pieces, pulls
    and "gone" answers
    =========================================================================
*/
#include "jace_transfer.h"

#include "jace_hash.h"

//  Descriptor: kind, round, step, count, then three words per piece.
#define HEAD_WORDS 4
#define PIECE_WORDS 3

//  Rounds beyond this are no exchange number a job reaches (a billion
//  exchanges a second for a century is under 2^62): refused as forged.
#define ROUND_MAX ((int64_t) 1 << 62)

//  Keyed BLAKE2b of what the seal leaves out: the descriptor and the
//  pieces' bytes, bound to the job, the sender and its epoch.  Read from
//  the message's payloads as they travel (wire order), so sender and
//  receiver hash the same bytes.
void
jace_transfer_mac (const jace_msg_t *msg, const jace_key_t *key,
                   unsigned char *mac)
{
    assert (msg && key && mac);
    assert (jace_msg_payload_count (msg) >= 2);
    jace_sodium_init ();
    crypto_generichash_state state;
    crypto_generichash_init (&state, key->bytes, sizeof key->bytes,
                             JACE_TRANSFER_MAC_BYTES);
    const char *job = jace_msg_job (msg);
    crypto_generichash_update (&state, (const unsigned char *) job,
                               strlen (job) + 1);
    jace_hash_update_int64 (&state, jace_msg_task (msg));
    jace_hash_update_int64 (&state, jace_msg_epoch (msg));
    size_t words = jace_msg_payload_length (msg, 0);
    size_t bytes = jace_msg_payload_length (msg, 1);
    jace_hash_update_int64 (&state, (int64_t) words);
    jace_hash_update_int64 (&state, (int64_t) bytes);
    if (words)
        crypto_generichash_update (&state, jace_msg_payload_data (msg, 0),
                                   words * sizeof (int64_t));
    if (bytes)
        crypto_generichash_update (&state, jace_msg_payload_data (msg, 1),
                                   bytes);
    crypto_generichash_final (&state, mac, JACE_TRANSFER_MAC_BYTES);
}

jace_msg_t *
jace_transfer_encode (const char *job, const jace_key_t *key, int64_t sender,
                      int64_t epoch, jace_transfer_kind_t kind, int64_t round,
                      int64_t step, const jace_piece_t *pieces, size_t count)
{
    assert (job && key);
    assert (pieces || count == 0);
    assert (kind == JACE_TRANSFER_PIECES || count == 0);
    assert (round >= 0 && step >= JACE_TRANSFER_DIRECT);
    size_t words = HEAD_WORDS + PIECE_WORDS * count;
    int64_t *descriptor = (int64_t *) zmalloc (words * sizeof (int64_t));
    descriptor [0] = kind;
    descriptor [1] = round;
    descriptor [2] = step;
    descriptor [3] = (int64_t) count;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t *word = descriptor + HEAD_WORDS + PIECE_WORDS * i;
        word [0] = pieces [i].source;
        word [1] = pieces [i].destination;
        word [2] = (int64_t) pieces [i].size;
        total += pieces [i].size;
    }
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, job);
    jace_msg_set_task (msg, sender);
    jace_msg_set_epoch (msg, epoch);
    jace_msg_set_iteration (msg, -1);
    jace_msg_add_payload (msg, JACE_PAYLOAD_I64, descriptor, words);
    free (descriptor);
    unsigned char *body = (unsigned char *) jace_msg_add_payload_space (
        msg, JACE_PAYLOAD_BYTES, total);
    for (size_t i = 0; i < count; i++) {
        if (pieces [i].size)
            memcpy (body, pieces [i].bytes, pieces [i].size);
        body += pieces [i].size;
    }
    unsigned char mac [JACE_TRANSFER_MAC_BYTES];
    jace_transfer_mac (msg, key, mac);
    jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, mac, sizeof mac);
    jace_msg_seal (msg, key->bytes);
    return msg;
}

bool
jace_transfer_is (const jace_msg_t *msg)
{
    assert (msg);
    return jace_msg_type (msg) == JACE_MSG_DATA
        && jace_msg_payload_count (msg) == 3
        && jace_msg_payload_kind (msg, 0) == JACE_PAYLOAD_I64
        && jace_msg_payload_kind (msg, 1) == JACE_PAYLOAD_BYTES
        && jace_msg_payload_kind (msg, 2) == JACE_PAYLOAD_BYTES;
}

//  The descriptor's head: a kind we know, a round and step in range, and
//  exactly as many words as its count announces.
static int
s_check_head (const int64_t *descriptor, size_t words, char *reason,
              size_t reason_size)
{
    int64_t kind = descriptor [0];
    int64_t count = descriptor [3];
    if (kind < JACE_TRANSFER_PIECES || kind > JACE_TRANSFER_GONE)
        snprintf (reason, reason_size, "unknown kind %" PRId64, kind);
    else
    if (descriptor [1] < 0 || descriptor [1] > ROUND_MAX)
        snprintf (reason, reason_size, "round %" PRId64 " out of range",
                  descriptor [1]);
    else
    if (descriptor [2] < JACE_TRANSFER_DIRECT || descriptor [2] > ROUND_MAX
    ||  (kind != JACE_TRANSFER_PIECES
         && descriptor [2] != JACE_TRANSFER_DIRECT))
        snprintf (reason, reason_size, "step %" PRId64 " out of range",
                  descriptor [2]);
    else
    if (count < 0 || (size_t) count != (words - HEAD_WORDS) / PIECE_WORDS
    ||  (words - HEAD_WORDS) % PIECE_WORDS
    ||  (kind != JACE_TRANSFER_PIECES && count != 0))
        snprintf (reason, reason_size, "%" PRId64 " pieces in a descriptor "
                  "of %zu words", count, words);
    else
        return 0;
    return -1;
}

//  Read the pieces: ranks of the job, sizes that add up to the bytes.
static int
s_read_pieces (jace_transfer_t *self, const int64_t *descriptor,
               const unsigned char *body, size_t bytes, int64_t tasks,
               char *reason, size_t reason_size)
{
    size_t offset = 0;
    for (size_t i = 0; i < self->count; i++) {
        const int64_t *word = descriptor + HEAD_WORDS + PIECE_WORDS * i;
        if (word [0] < 0 || word [0] >= tasks
        ||  word [1] < 0 || word [1] >= tasks
        ||  word [2] < 0 || (uint64_t) word [2] > bytes - offset) {
            snprintf (reason, reason_size, "piece %zu (%" PRId64 " -> %"
                      PRId64 ", %" PRId64 " bytes) does not fit the "
                      "transfer", i, word [0], word [1], word [2]);
            return -1;
        }
        size_t size = (size_t) word [2];
        self->pieces [i] = (jace_piece_t) {
            word [0], word [1], size ? body + offset : NULL, size
        };
        offset += size;
    }
    if (offset != bytes) {
        snprintf (reason, reason_size, "pieces hold %zu of the transfer's "
                  "%zu bytes", offset, bytes);
        return -1;
    }
    return 0;
}

static bool
s_mac_holds (const jace_msg_t *msg, const jace_key_t *key)
{
    if (jace_msg_payload_length (msg, 2) != JACE_TRANSFER_MAC_BYTES)
        return false;
    unsigned char mac [JACE_TRANSFER_MAC_BYTES];
    jace_transfer_mac (msg, key, mac);
    return sodium_memcmp (mac, jace_msg_payload_data (msg, 2),
                          sizeof mac) == 0;
}

jace_transfer_t *
jace_transfer_decode (const jace_msg_t *msg, const jace_key_t *key,
                      int64_t tasks, char *reason, size_t reason_size)
{
    assert (msg && key);
    assert (tasks >= 1);
    if (!jace_transfer_is (msg)) {
        snprintf (reason, reason_size, "not a transfer");
        return NULL;
    }
    size_t words = jace_msg_payload_length (msg, 0);
    if (words < HEAD_WORDS || (words - HEAD_WORDS) / PIECE_WORDS
                              > (size_t) tasks * (size_t) tasks) {
        snprintf (reason, reason_size, "descriptor of %zu words", words);
        return NULL;
    }
    if (jace_msg_task (msg) < 0 || jace_msg_task (msg) >= tasks
    ||  jace_msg_epoch (msg) < 0) {
        snprintf (reason, reason_size, "sender %" PRId64 " or epoch %"
                  PRId64 " out of range", jace_msg_task (msg),
                  jace_msg_epoch (msg));
        return NULL;
    }
    if (!s_mac_holds (msg, key)) {
        snprintf (reason, reason_size, "MAC does not hold under the job key");
        return NULL;
    }
    int64_t *descriptor = (int64_t *) malloc (words * sizeof (int64_t));
    assert (descriptor);
    jace_msg_payload_copy (msg, 0, descriptor);
    jace_transfer_t *self = NULL;
    if (s_check_head (descriptor, words, reason, reason_size) == 0) {
        self = (jace_transfer_t *) zmalloc (sizeof *self);
        self->kind = (jace_transfer_kind_t) descriptor [0];
        self->sender = jace_msg_task (msg);
        self->epoch = jace_msg_epoch (msg);
        self->round = descriptor [1];
        self->step = descriptor [2];
        self->count = (size_t) descriptor [3];
        self->pieces = (jace_piece_t *) zmalloc (
            (self->count + 1) * sizeof (jace_piece_t));
        if (s_read_pieces (self, descriptor,
                           (const unsigned char *) jace_msg_payload_data (msg, 1),
                           jace_msg_payload_length (msg, 1), tasks, reason,
                           reason_size))
            jace_transfer_destroy (&self);
    }
    free (descriptor);
    return self;
}

void
jace_transfer_destroy (jace_transfer_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free ((*self_p)->pieces);
        free (*self_p);
        *self_p = NULL;
    }
}
