/*  =========================================================================
    daemon_transfer - a task's data arriving in CHUNKs

    An ASSIGN carries no payloads: when its task has data, its params
    declare it (block/data = K blocks, block/data/<i>/kind and
    block/data/<i>/length in elements) and the spawner sends it in CHUNKs
    of at most JACE_CHUNK_BYTES, in order: block 0 from offset 0, then on.
    The control actor checks the declaration, takes the ASSIGN, and fills
    its payloads (allocated once, jace_msg_add_payload_space) chunk by
    chunk; once every byte is in, the ASSIGN goes to the worker exactly as
    if its payloads had come with it, so applications read their blocks
    with the task API as before.
    =========================================================================
*/
#ifndef DAEMON_TRANSFER_H_INCLUDED
#define DAEMON_TRANSFER_H_INCLUDED

#include "jace_msg.h"

//  What daemon_transfer_add did with a chunk.
typedef enum {
    DAEMON_CHUNK_KEPT = 0,          //  Copied in
    DAEMON_CHUNK_DROPPED = -1,      //  Not ours, malformed or past the end
    DAEMON_CHUNK_OUT_OF_ORDER = -2, //  Ours, but not the piece expected
    DAEMON_CHUNK_DUPLICATE = -3     //  Ours, wholly before that piece
} daemon_chunk_result_t;

typedef struct _daemon_transfer_t daemon_transfer_t;

//  True if the ASSIGN declares task data to receive (a block/data param).
bool
    daemon_transfer_declared (const jace_msg_t *assign);

//  Check the ASSIGN's data declaration.  Returns 0 with the total bytes in
//  *bytes, or -1 with the REFUSE code and a reason: JACE_REFUSE_FAILED for
//  a declaration that makes no sense (no daemon could take it), and
//  JACE_REFUSE_BUSY for data over `limit` bytes (a bigger daemon may).
int
    daemon_transfer_check (const jace_msg_t *assign, uint64_t limit,
                           uint64_t *bytes, jace_refuse_code_t *code,
                           char *reason, size_t reason_size);

//  Start receiving the data of an ASSIGN daemon_transfer_check accepted;
//  takes the message and allocates its blocks.
daemon_transfer_t *
    daemon_transfer_new (jace_msg_t **assign_p);

//  Destroy transfer and its ASSIGN; nullifies the reference. Safe on NULL.
void
    daemon_transfer_destroy (daemon_transfer_t **self_p);

//  The ASSIGN being filled, for its ids.  Borrowed.
const jace_msg_t *
    daemon_transfer_assign (const daemon_transfer_t *self);

//  Copy one CHUNK in.  A chunk of another job, task or epoch, of the wrong
//  kind or size, or reaching past its block is dropped; one of ours that
//  lies wholly before the next piece is a duplicate (the spawner sent it
//  again when a relay died), any other that is not the next piece is out
//  of order.  Except when kept, reason says why.
daemon_chunk_result_t
    daemon_transfer_add (daemon_transfer_t *self, const jace_msg_t *chunk,
                         char *reason, size_t reason_size);

//  Bytes received so far, and bytes expected in all.
uint64_t
    daemon_transfer_received (const daemon_transfer_t *self);
uint64_t
    daemon_transfer_total (const daemon_transfer_t *self);

//  True once every byte has arrived.
bool
    daemon_transfer_complete (const daemon_transfer_t *self);

//  0 if the complete data hashes to the digest the ASSIGN declared
//  (block/data/digest), else -1 with the reason: something changed it on
//  the way.
int
    daemon_transfer_verify (const daemon_transfer_t *self, char *reason,
                            size_t reason_size);

//  The ASSIGN with all its blocks, for jace_task_new; destroys the
//  transfer.  The transfer must be complete.
jace_msg_t *
    daemon_transfer_finish (daemon_transfer_t **self_p);

#endif
