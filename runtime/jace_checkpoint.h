/*  =========================================================================
    jace_checkpoint - a task's saved state as it travels between daemons

    A checkpoint is a CKPT message: the task's job, number, epoch and
    iteration, the application's state as an opaque byte payload, the
    newest values the task held from its neighbours (two more payloads,
    jace_task_save_newest), its pieces of the last total exchanges it
    completed (two more, if its log held them: jace_task_save_pieces),
    and a seal over all of them: keyed BLAKE2b
    under the job key, in the CKPT's token.  The seal binds the bytes to
    their tags and to the job, so a copy that was damaged, truncated,
    relabelled or forged by anyone without the job key is never taken for
    a task's state.  Checkpoints are in the sender's byte order: a
    daemon only restores copies its application wrote.
    =========================================================================
*/
#ifndef JACE_CHECKPOINT_H_INCLUDED
#define JACE_CHECKPOINT_H_INCLUDED

#include "jace_msg.h"
#include "jace_auth.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Seal of a checkpoint's tags and payloads under key: JACE_KEY_BYTES
//  into mac.
void
    jace_checkpoint_mac (const jace_msg_t *copy, const jace_key_t *key,
                         unsigned char *mac);

//  A CKPT carrying `size` bytes of task `task`'s state at `iteration`,
//  not sealed yet: the runtime may add payloads (the neighbours' values)
//  before jace_checkpoint_seal.  `sender` is the daemon sending it.
jace_msg_t *
    jace_checkpoint_begin (const char *sender, const char *job, int64_t task,
                           int64_t epoch, int64_t iteration,
                           const void *bytes, size_t size);

//  Seal everything the copy carries under the job key (its token).
void
    jace_checkpoint_seal (jace_msg_t *copy, const jace_key_t *key);

//  jace_checkpoint_begin and jace_checkpoint_seal in one.
jace_msg_t *
    jace_checkpoint_new (const char *sender, const char *job, int64_t task,
                         int64_t epoch, int64_t iteration, const void *bytes,
                         size_t size, const jace_key_t *key);

//  A copy of `copy` to pass on, its tags and seal unchanged, sent by
//  `sender`.
jace_msg_t *
    jace_checkpoint_forward (const jace_msg_t *copy, const char *sender);

//  A CKPT saying "I hold no copy of task `task`" (iteration -1, no
//  bytes), sealed under key.
jace_msg_t *
    jace_checkpoint_none (const char *sender, const char *job, int64_t task,
                          const jace_key_t *key);

//  True if msg is a CKPT (copy or none) sealed under key.
bool
    jace_checkpoint_authentic (const jace_msg_t *msg, const jace_key_t *key);

//  True if msg is a CKPT holding a copy (not a "none").
bool
    jace_checkpoint_is_copy (const jace_msg_t *msg);

//  Check a CKPT copy: a byte payload first, and a seal under key that
//  matches the tags and payloads.  Returns 0, or -1 with the reason.
int
    jace_checkpoint_check (const jace_msg_t *msg, const jace_key_t *key,
                           char *reason, size_t reason_size);

//  True if copy `a` is newer than copy `b` (a later epoch, or the same
//  epoch and a later iteration); any copy is newer than NULL.
bool
    jace_checkpoint_newer (const jace_msg_t *a, const jace_msg_t *b);

//  The application's state bytes of a copy (payload 0); borrowed.
const void *
    jace_checkpoint_bytes (const jace_msg_t *msg, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
