/*  =========================================================================
    daemon_transfer - a task's data arriving in CHUNKs

    Chunks are copied straight into the ASSIGN's payload frames, in wire
    order (the order CHUNK payloads and the task's blocks both use), so
    the data is held once, and a 1 MiB chunk costs one memcpy.
    =========================================================================
*/
#include "daemon_transfer.h"

#include <errno.h>
#include <inttypes.h>

//  One declared block and how far it is filled.
typedef struct {
    jace_payload_kind_t kind;   //  Kind of its elements
    size_t length;              //  Elements declared
    size_t element;             //  Bytes per element
    uint8_t *data;              //  Borrowed: the ASSIGN's payload storage
} block_t;

struct _daemon_transfer_t {
    jace_msg_t *assign;         //  The ASSIGN being filled, owned
    block_t blocks [JACE_MSG_PAYLOADS_MAX];    //  Declared blocks
    size_t block_count;         //  Entries in blocks
    size_t block;               //  Block the next chunk must fill
    size_t offset;              //  Element it must start at
    uint64_t received;          //  Bytes copied in so far
    uint64_t total;             //  Bytes declared
};


//  --------------------------------------------------------------------------
//  Bytes of one element of kind, or 0 for a kind we do not know.

static size_t
s_element_size (int64_t kind)
{
    return kind == JACE_PAYLOAD_F64 || kind == JACE_PAYLOAD_I64 ? 8
         : kind == JACE_PAYLOAD_BYTES ? 1 : 0;
}

//  Read integer param key in [min, max]; -1 with the reason if it is
//  absent, not an integer, or out of range.
static int
s_param_int (const jace_msg_t *assign, const char *key, int64_t min,
             int64_t max, int64_t *value, char *reason, size_t reason_size)
{
    const char *text = jace_msg_param (assign, key);
    char *end = NULL;
    errno = 0;
    long long number = text ? strtoll (text, &end, 10) : 0;
    if (!text || errno || end == text || *end || number < min
    ||  number > max) {
        snprintf (reason, reason_size, "%s = '%s' is not an integer in "
                  "[%" PRId64 ", %" PRId64 "]", key, text ? text : "",
                  min, max);
        return -1;
    }
    *value = (int64_t) number;
    return 0;
}

//  Read the declaration into blocks; returns the number of blocks, or -1
//  with the reason.
static int
s_read_blocks (const jace_msg_t *assign, block_t *blocks, char *reason,
               size_t reason_size)
{
    int64_t count = 0;
    if (s_param_int (assign, "block/data", 1, JACE_MSG_PAYLOADS_MAX, &count,
                     reason, reason_size))
        return -1;
    for (int64_t i = 0; i < count; i++) {
        char key [64];
        int64_t kind = 0, length = 0;
        snprintf (key, sizeof key, "block/data/%" PRId64 "/kind", i);
        if (s_param_int (assign, key, JACE_PAYLOAD_F64, JACE_PAYLOAD_BYTES,
                         &kind, reason, reason_size))
            return -1;
        size_t element = s_element_size (kind);
        //  One block is one payload frame: the codec's bound is ours.
        snprintf (key, sizeof key, "block/data/%" PRId64 "/length", i);
        if (s_param_int (assign, key, 0,
                         (int64_t) (JACE_MSG_FRAME_MAX / element), &length,
                         reason, reason_size))
            return -1;
        blocks [i] = (block_t) { (jace_payload_kind_t) kind, (size_t) length,
                                 element, NULL };
    }
    return (int) count;
}

//  --------------------------------------------------------------------------

bool
daemon_transfer_declared (const jace_msg_t *assign)
{
    assert (assign);
    return jace_msg_param (assign, "block/data") != NULL;
}

int
daemon_transfer_check (const jace_msg_t *assign, uint64_t limit,
                       uint64_t *bytes, jace_refuse_code_t *code,
                       char *reason, size_t reason_size)
{
    assert (assign && bytes && code);
    *code = JACE_REFUSE_FAILED;
    if (jace_msg_payload_count (assign) > 0) {
        snprintf (reason, reason_size, "ASSIGN declares block/data and "
                  "carries %zu payloads", jace_msg_payload_count (assign));
        return -1;
    }
    block_t blocks [JACE_MSG_PAYLOADS_MAX];
    int count = s_read_blocks (assign, blocks, reason, reason_size);
    if (count < 0)
        return -1;
    const char *digest = jace_msg_param (assign, "block/data/digest");
    if (!digest || strlen (digest) != JACE_DIGEST_TEXT
    ||  strspn (digest, "0123456789abcdef") != JACE_DIGEST_TEXT) {
        snprintf (reason, reason_size, "ASSIGN declares block/data without "
                  "a block/data/digest of %d hex digits", JACE_DIGEST_TEXT);
        return -1;
    }
    uint64_t total = 0;
    for (int i = 0; i < count; i++)
        total += (uint64_t) blocks [i].length * blocks [i].element;
    if (total > limit) {
        *code = JACE_REFUSE_BUSY;
        snprintf (reason, reason_size, "task data of %" PRIu64 " bytes "
                  "(%.1f MiB) in %d blocks exceeds this daemon's limit of %"
                  PRIu64 " bytes (%.1f MiB)", total, total / 1048576.0,
                  count, limit, limit / 1048576.0);
        return -1;
    }
    *bytes = total;
    return 0;
}

daemon_transfer_t *
daemon_transfer_new (jace_msg_t **assign_p)
{
    assert (assign_p && *assign_p);
    daemon_transfer_t *self = (daemon_transfer_t *) zmalloc (sizeof *self);
    self->assign = *assign_p;
    *assign_p = NULL;
    char reason [256];
    int count = s_read_blocks (self->assign, self->blocks, reason,
                               sizeof reason);
    assert (count > 0);         //  The caller checked the declaration
    self->block_count = (size_t) count;
    for (size_t i = 0; i < self->block_count; i++) {
        block_t *block = &self->blocks [i];
        block->data = (uint8_t *) jace_msg_add_payload_space (self->assign,
            block->kind, block->length);
        self->total += (uint64_t) block->length * block->element;
    }
    //  Empty blocks get no chunk: the first one to fill may be further on.
    while (self->block < self->block_count
    &&     self->blocks [self->block].length == 0)
        self->block++;
    return self;
}

void
daemon_transfer_destroy (daemon_transfer_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        daemon_transfer_t *self = *self_p;
        jace_msg_destroy (&self->assign);
        free (self);
        *self_p = NULL;
    }
}

const jace_msg_t *
daemon_transfer_assign (const daemon_transfer_t *self)
{
    assert (self);
    return self->assign;
}

//  Why a chunk is not ours at all, or "" if it is.
static void
s_check_owner (const daemon_transfer_t *self, const jace_msg_t *chunk,
               char *reason, size_t reason_size)
{
    const jace_msg_t *assign = self->assign;
    *reason = 0;
    if (!streq (jace_msg_job (chunk), jace_msg_job (assign))
    ||  jace_msg_task (chunk) != jace_msg_task (assign)
    ||  jace_msg_epoch (chunk) != jace_msg_epoch (assign))
        snprintf (reason, reason_size, "CHUNK of job %s task %" PRId64
                  " epoch %" PRId64 " is for no task we receive",
                  jace_msg_job (chunk), jace_msg_task (chunk),
                  jace_msg_epoch (chunk));
    else
    if (jace_msg_payload_count (chunk) != 1)
        snprintf (reason, reason_size, "CHUNK with %zu payloads",
                  jace_msg_payload_count (chunk));
}

daemon_chunk_result_t
daemon_transfer_add (daemon_transfer_t *self, const jace_msg_t *chunk,
                     char *reason, size_t reason_size)
{
    assert (self && chunk);
    s_check_owner (self, chunk, reason, reason_size);
    if (*reason)
        return DAEMON_CHUNK_DROPPED;
    int64_t index = jace_msg_block (chunk);
    int64_t offset = jace_msg_offset (chunk);
    size_t length = jace_msg_payload_length (chunk, 0);
    if (index < 0 || (uint64_t) index >= self->block_count) {
        snprintf (reason, reason_size, "CHUNK for block %" PRId64 " of %zu",
                  index, self->block_count);
        return DAEMON_CHUNK_DROPPED;
    }
    block_t *block = &self->blocks [index];
    if ((int) jace_msg_payload_kind (chunk, 0) != (int) block->kind
    ||  length == 0 || length * block->element > JACE_CHUNK_BYTES) {
        snprintf (reason, reason_size, "CHUNK for block %" PRId64 " holds "
                  "%zu elements of kind %d (block kind %d, at most %d bytes)",
                  index, length, (int) jace_msg_payload_kind (chunk, 0),
                  (int) block->kind, JACE_CHUNK_BYTES);
        return DAEMON_CHUNK_DROPPED;
    }
    if (offset < 0 || (uint64_t) offset > block->length
    ||  length > block->length - (size_t) offset) {
        snprintf (reason, reason_size, "CHUNK of %zu elements at %" PRId64
                  " runs past the end of block %" PRId64 " (%zu elements)",
                  length, offset, index, block->length);
        return DAEMON_CHUNK_DROPPED;
    }
    //  A piece we already hold: sent again after its relay died
    //  (spawner_stream_rewind) while its acknowledgement was lost.
    if ((size_t) index < self->block
    ||  ((size_t) index == self->block
         && (size_t) offset + length <= self->offset)) {
        snprintf (reason, reason_size, "CHUNK for block %" PRId64 " at %"
                  PRId64 " is already in", index, offset);
        return DAEMON_CHUNK_DUPLICATE;
    }
    if ((size_t) index != self->block || (size_t) offset != self->offset) {
        snprintf (reason, reason_size, "CHUNK for block %" PRId64 " at %"
                  PRId64 " while block %zu at %zu is expected", index,
                  offset, self->block, self->offset);
        return DAEMON_CHUNK_OUT_OF_ORDER;
    }
    memcpy (block->data + (size_t) offset * block->element,
            jace_msg_payload_data (chunk, 0), length * block->element);
    self->received += (uint64_t) length * block->element;
    self->offset += length;
    while (self->block < self->block_count
    &&     self->offset == self->blocks [self->block].length) {
        self->block++;
        self->offset = 0;
    }
    return DAEMON_CHUNK_KEPT;
}

uint64_t
daemon_transfer_received (const daemon_transfer_t *self)
{
    assert (self);
    return self->received;
}

uint64_t
daemon_transfer_total (const daemon_transfer_t *self)
{
    assert (self);
    return self->total;
}

bool
daemon_transfer_complete (const daemon_transfer_t *self)
{
    assert (self);
    return self->received == self->total;
}

int
daemon_transfer_verify (const daemon_transfer_t *self, char *reason,
                        size_t reason_size)
{
    assert (self && daemon_transfer_complete (self));
    char digest [JACE_DIGEST_TEXT + 1];
    jace_msg_payload_digest (self->assign, digest);
    const char *declared = jace_msg_param (self->assign, "block/data/digest");
    if (declared && streq (digest, declared))
        return 0;
    snprintf (reason, reason_size, "task data of %" PRIu64 " bytes does not "
              "hash to its declared digest (BLAKE2b %.16s..., declared "
              "%.16s...)", self->total, digest, declared ? declared : "");
    return -1;
}

jace_msg_t *
daemon_transfer_finish (daemon_transfer_t **self_p)
{
    assert (self_p && *self_p);
    daemon_transfer_t *self = *self_p;
    assert (daemon_transfer_complete (self));
    jace_msg_t *assign = self->assign;
    self->assign = NULL;
    daemon_transfer_destroy (self_p);
    return assign;
}
