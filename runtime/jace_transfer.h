/*  =========================================================================
    jace_transfer - the DATA messages of a total exchange: pieces, pulls
    and "gone" answers

    A total exchange (jace_exchange) moves pieces: the buffer task S gives
    task D in exchange number R, M(S, D, R).  A transfer is one DATA that
    carries several pieces from one task to the next on their routes (LG
    packs the pieces that cross the backbone together), or one piece sent
    outside the schedule (a pull's answer, a late piece forwarded straight
    to its destination).  Two more kinds carry no pieces: a pull ("send me
    your piece of round R directly") and its negative answer ("round R is
    no longer in my log").

    On the wire a transfer is a DATA of the job (job, task = the sender's
    rank, epoch = its epoch, iteration -1, sealed with the job key like
    every DATA) with three payloads: an int64 descriptor [kind, round,
    step, count, then source, destination, size per piece], the pieces'
    bytes one after the other, and a 16-byte keyed BLAKE2b of job, sender,
    epoch, descriptor and bytes under the job key.  The seal covers the
    header only, as for vectors; the MAC binds the pieces to it, so no one
    without the job key can change what a piece holds or whom it is for.
    This module is the codec: it builds transfers and checks every field
    of one received, and nothing else.
    =========================================================================
*/
#ifndef JACE_TRANSFER_H_INCLUDED
#define JACE_TRANSFER_H_INCLUDED

#include "jace_msg.h"
#include "jace_auth.h"

#ifdef __cplusplus
extern "C" {
#endif

//  What a transfer carries.
typedef enum {
    JACE_TRANSFER_PIECES = 1,   //  Pieces, in a step or sent directly
    JACE_TRANSFER_PULL = 2,     //  Receiver asks for its piece of a round
    JACE_TRANSFER_GONE = 3      //  That round is no longer in the log
} jace_transfer_kind_t;

//  Step of pieces sent outside the schedule (a pull's answer, a late
//  piece forwarded to its destination), and of pulls and "gone" answers.
#define JACE_TRANSFER_DIRECT (-1)

//  Bytes of the MAC a transfer carries.
#define JACE_TRANSFER_MAC_BYTES 16

//  One piece: the buffer `source` gives `destination` in a round.
typedef struct {
    int64_t source;             //  Task whose buffer it is
    int64_t destination;        //  Task it is for
    const void *bytes;          //  Borrowed; NULL when size is 0
    size_t size;                //  Bytes
} jace_piece_t;

//  A received transfer, checked.  Its pieces' bytes are borrowed from the
//  message it was decoded from, which must outlive it.
typedef struct {
    jace_transfer_kind_t kind;  //  What it carries
    int64_t sender;             //  Rank of the task that sent it
    int64_t epoch;              //  Sender's epoch
    int64_t round;              //  Exchange number, >= 0
    int64_t step;               //  Step, or JACE_TRANSFER_DIRECT
    size_t count;               //  Pieces
    jace_piece_t *pieces;       //  count pieces, owned by the transfer
} jace_transfer_t;

//  A sealed DATA of job `job` from task `sender` (epoch `epoch`) carrying
//  `count` pieces (none for a pull or a "gone"), under the job key.
jace_msg_t *
    jace_transfer_encode (const char *job, const jace_key_t *key,
                          int64_t sender, int64_t epoch,
                          jace_transfer_kind_t kind, int64_t round,
                          int64_t step, const jace_piece_t *pieces,
                          size_t count);

//  The MAC of a transfer's first two payloads, bound to its job, sender
//  and epoch, under key: JACE_TRANSFER_MAC_BYTES into mac.  (Tests use it
//  to play a job member that sends nonsense.)
void
    jace_transfer_mac (const jace_msg_t *msg, const jace_key_t *key,
                       unsigned char *mac);

//  True if a DATA has the layout of a transfer (int64, bytes, bytes
//  payloads); says nothing of whether it is valid.
bool
    jace_transfer_is (const jace_msg_t *msg);

//  Check a transfer of a job of `tasks` tasks (the seal is the caller's:
//  jace_msg_sealed) and read it.  Returns NULL with the reason if any
//  field is out of bounds, the sizes do not add up to the bytes, or the
//  MAC does not hold under key.
jace_transfer_t *
    jace_transfer_decode (const jace_msg_t *msg, const jace_key_t *key,
                          int64_t tasks, char *reason, size_t reason_size);

//  Destroy a decoded transfer; nullifies the reference.  Safe on NULL.
void
    jace_transfer_destroy (jace_transfer_t **self_p);

#ifdef __cplusplus
}
#endif

#endif
