/*  =========================================================================
    daemon_checkpoints - the copies of neighbours' state a daemon keeps

    One copy per (job, task): the newest valid one received.  A copy is
    checked (its seal, under the job key) before it may replace another,
    so a damaged or forged copy never displaces a good one.  Memory is bounded: a copy that would take
    the store over its limit is refused (the task's other holders still
    have theirs), and what is held is reported.
    =========================================================================
*/
#ifndef DAEMON_CHECKPOINTS_H_INCLUDED
#define DAEMON_CHECKPOINTS_H_INCLUDED

#include "jace_msg.h"
#include "jace_auth.h"

typedef struct _daemon_checkpoints_t daemon_checkpoints_t;

//  Create an empty store holding at most memory_max bytes of state.
daemon_checkpoints_t *
    daemon_checkpoints_new (size_t memory_max);

//  Destroy the store; nullifies the reference.  Safe on NULL.
void
    daemon_checkpoints_destroy (daemon_checkpoints_t **self_p);

//  Keep the CKPT copy *msg_p (taken, and nullified) if it is valid and
//  newer than the copy held for its task.  Returns 1 if kept, 0 if an
//  older or equal copy was dropped, -1 with the reason if it was invalid
//  or over the memory limit.
int
    daemon_checkpoints_store (daemon_checkpoints_t *self, jace_msg_t **msg_p,
                              const jace_key_t *job_key, char *reason,
                              size_t reason_size);

//  The copy held for task `task` of job `job`, or NULL.  Borrowed.
const jace_msg_t *
    daemon_checkpoints_find (daemon_checkpoints_t *self, const char *job,
                             int64_t task);

//  Forget every copy of job `job` (it is over); returns how many.
size_t
    daemon_checkpoints_drop_job (daemon_checkpoints_t *self, const char *job);

//  Bytes of state the copies held take.
size_t
    daemon_checkpoints_bytes (daemon_checkpoints_t *self);

#endif
