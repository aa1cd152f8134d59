/*  =========================================================================
    spawner_stream - one task's data, sent to its daemon in chunks

    STREAM_WINDOW (4 chunks) keeps a loopback link busy (a chunk is
    acknowledged within a millisecond) without ever queueing more than a
    few MiB per daemon.
    =========================================================================
*/
#include "spawner_stream.h"

#define STREAM_WINDOW (4 * JACE_CHUNK_BYTES)

struct _spawner_stream_t {
    jace_msg_t *data;           //  The payloads to send
    size_t block;               //  Next block to send
    size_t offset;              //  Next element of that block
    int64_t sent;               //  Bytes sent
    int64_t acked;              //  Bytes the daemon said it received
    int64_t total;              //  Bytes in all
};

static size_t
s_element_size (jace_payload_kind_t kind)
{
    return kind == JACE_PAYLOAD_BYTES ? 1 : 8;
}

//  --------------------------------------------------------------------------

spawner_stream_t *
spawner_stream_new (jace_msg_t **data_p)
{
    assert (data_p && *data_p);
    if (jace_msg_payload_count (*data_p) == 0) {
        jace_msg_destroy (data_p);
        return NULL;
    }
    spawner_stream_t *self = (spawner_stream_t *) zmalloc (sizeof *self);
    self->data = *data_p;
    *data_p = NULL;
    for (size_t i = 0; i < jace_msg_payload_count (self->data); i++)
        self->total += (int64_t) (jace_msg_payload_length (self->data, i)
                       * s_element_size (jace_msg_payload_kind (self->data,
                                                                i)));
    return self;
}

void
spawner_stream_destroy (spawner_stream_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_msg_destroy (&(*self_p)->data);
        free (*self_p);
        *self_p = NULL;
    }
}

int64_t
spawner_stream_total (spawner_stream_t *self)
{
    assert (self);
    return self->total;
}

static void
s_set_number (jace_msg_t *msg, const char *key, int64_t value)
{
    char text [32];
    snprintf (text, sizeof text, "%" PRId64, value);
    jace_msg_set_param (msg, key, text);
}

void
spawner_stream_declare (spawner_stream_t *self, jace_msg_t *assign)
{
    assert (self && assign);
    size_t blocks = jace_msg_payload_count (self->data);
    s_set_number (assign, "block/data", (int64_t) blocks);
    char key [64];
    for (size_t i = 0; i < blocks; i++) {
        snprintf (key, sizeof key, "block/data/%zu/kind", i);
        s_set_number (assign, key, jace_msg_payload_kind (self->data, i));
        snprintf (key, sizeof key, "block/data/%zu/length", i);
        s_set_number (assign, key,
                      (int64_t) jace_msg_payload_length (self->data, i));
    }
    char digest [JACE_DIGEST_TEXT + 1];
    jace_msg_payload_digest (self->data, digest);
    jace_msg_set_param (assign, "block/data/digest", digest);
}

void
spawner_stream_send (spawner_stream_t *self, const char *job, int64_t task,
                     int64_t epoch, const unsigned char *key, zsock_t *link)
{
    assert (self && job && key && link);
    jace_msg_t *data = self->data;
    while (true) {
        //  An empty block has no chunk: the daemon skips it too.
        while (self->block < jace_msg_payload_count (data)
        &&     jace_msg_payload_length (data, self->block) == 0)
            self->block++;
        if (self->sent - self->acked >= STREAM_WINDOW
        ||  self->block == jace_msg_payload_count (data))
            break;
        jace_payload_kind_t kind = jace_msg_payload_kind (data, self->block);
        size_t element = s_element_size (kind);
        size_t length = jace_msg_payload_length (data, self->block);
        size_t count = length - self->offset;
        if (count * element > JACE_CHUNK_BYTES)
            count = JACE_CHUNK_BYTES / element;
        jace_msg_t *chunk = jace_msg_new (JACE_MSG_CHUNK);
        jace_msg_set_sender (chunk, job);
        jace_msg_set_job (chunk, job);
        jace_msg_set_task (chunk, task);
        jace_msg_set_epoch (chunk, epoch);
        jace_msg_set_block (chunk, (int64_t) self->block);
        jace_msg_set_offset (chunk, (int64_t) self->offset);
        void *space = jace_msg_add_payload_space (chunk, kind, count);
        memcpy (space, (const char *) jace_msg_payload_data (data,
                self->block) + self->offset * element, count * element);
        //  The daemon drops a chunk not sealed with the job key: only
        //  the job's spawner may feed it task data.
        jace_msg_seal (chunk, key);
        if (jace_msg_send (&chunk, link))
            return;             //  Queue full: the next call goes on
        self->sent += (int64_t) (count * element);
        self->offset += count;
        if (self->offset == length) {
            self->block++;
            self->offset = 0;
        }
    }
}

bool
spawner_stream_ack (spawner_stream_t *self, int64_t received)
{
    assert (self);
    if (received >= self->acked && received <= self->sent)
        self->acked = received;
    return self->acked == self->total;
}

bool
spawner_stream_sent_all (spawner_stream_t *self)
{
    assert (self);
    return self->sent == self->total;
}

void
spawner_stream_rewind (spawner_stream_t *self)
{
    assert (self);
    //  Acknowledged bytes end on a chunk's end (the daemon acknowledges
    //  whole chunks), so the chunks sent from there are the same pieces as
    //  before: any the daemon holds already are duplicates it ignores.
    int64_t left = self->acked;
    self->block = 0;
    self->offset = 0;
    while (self->block < jace_msg_payload_count (self->data)) {
        size_t element = s_element_size (jace_msg_payload_kind (self->data,
                                                                self->block));
        int64_t bytes = (int64_t) (jace_msg_payload_length (self->data,
                                                            self->block)
                                   * element);
        if (left < bytes) {
            self->offset = (size_t) left / element;
            break;
        }
        left -= bytes;
        self->block++;
    }
    self->sent = self->acked;
}
