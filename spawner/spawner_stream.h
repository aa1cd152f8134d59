/*  =========================================================================
    spawner_stream - one task's data, sent to its daemon in chunks

    The data a task needs and cannot build itself (its rows of a file
    matrix) never travels inside an ASSIGN, whose control socket caps
    frames at 4 MiB: the ASSIGN declares the blocks (`block/data`, each
    block's kind and length) and the bytes follow in CHUNKs of at most
    JACE_CHUNK_BYTES, with at most STREAM_WINDOW bytes not yet
    acknowledged (CHUNK_ACK), so a transfer of gigabytes never fills a
    queue and the daemon's heartbeats keep flowing beside it.
    =========================================================================
*/
#ifndef SPAWNER_STREAM_H_INCLUDED
#define SPAWNER_STREAM_H_INCLUDED

#include "jace_msg.h"

typedef struct _spawner_stream_t spawner_stream_t;

//  A stream of the payloads of *data_p (taken; its other fields are not
//  used).  Returns NULL, destroying the message, if it has no payload.
spawner_stream_t *
    spawner_stream_new (jace_msg_t **data_p);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    spawner_stream_destroy (spawner_stream_t **self_p);

//  Bytes in all.
int64_t
    spawner_stream_total (spawner_stream_t *self);

//  Declare the blocks in the params of `assign` ("block/data" = count,
//  "block/data/I/kind", "block/data/I/length").
void
    spawner_stream_declare (spawner_stream_t *self, jace_msg_t *assign);

//  Send on `link` the chunks the window allows, each a CHUNK of `job`
//  for task `task`, epoch `epoch`, sealed with the job key `key`
//  (JACE_KEY_BYTES).  Stops, to go on at the next call, when the window
//  is full or the link's queue is.
void
    spawner_stream_send (spawner_stream_t *self, const char *job,
                         int64_t task, int64_t epoch,
                         const unsigned char *key, zsock_t *link);

//  The daemon says it has `received` bytes.  Returns true once every byte
//  is acknowledged; an acknowledgement of bytes never sent is ignored.
bool
    spawner_stream_ack (spawner_stream_t *self, int64_t received);

//  True once every chunk has left (acknowledged or not).
bool
    spawner_stream_sent_all (spawner_stream_t *self);

//  Send again from the last acknowledged byte: the chunks after it went
//  through a relay that died and may never arrive.
void
    spawner_stream_rewind (spawner_stream_t *self);

#endif
