/*  =========================================================================
    supernode_ended - jobs the grid knows are over

    A spawner that ends its job (verified, failed or cancelled) says so
    to its super-node before it gives its daemons back: a lease HEARTBEAT
    whose state is JACE_LEASE_OVER, its token the job's proof of it
    (jace_job_over_proof, under the job key).  The super-node passes it on
    to its peers, and keeps the job and its proof here, listed in every
    PEER_STATE, so that a super-node cut off when it happened learns it
    once it hears its peers again.  A daemon cut off with it still works
    for the job, which its spawner replaced and finished without it; its
    super-node gives it the proof in the WELCOME, and the daemon, which
    holds the job key, checks it and stops.  Without this such a daemon
    kept its task for job/orphan_timeout (600 s by default).  Super-nodes
    cannot check a proof: a record keeps the first one heard, so on a
    keyless grid a local process that says a job is over first, with a
    wrong proof, leaves its cut-off daemons to that timeout again (it
    cannot stop them).

    A spawner that dies never says it: its job may be resumed, and its
    daemons wait for that.  Records are kept ENDED_KEEP_MSEC, at most
    ENDED_MAX of them (the oldest go first).  On the wire a record is the
    param ended/<job> = "AGE PROOF": milliseconds since it ended, a space,
    and the proof (Z85).
    =========================================================================
*/
#ifndef SUPERNODE_ENDED_H_INCLUDED
#define SUPERNODE_ENDED_H_INCLUDED

#include "jace_msg.h"

typedef struct _supernode_ended_t supernode_ended_t;

//  How long a record is kept (msec), and how many at most.
#define SUPERNODE_ENDED_KEEP_MSEC (3600 * 1000)
#define SUPERNODE_ENDED_MAX 128

//  Create an empty set.
supernode_ended_t *
    supernode_ended_new (void);

//  Destroy the set; nullifies the reference.  Safe on NULL.
void
    supernode_ended_destroy (supernode_ended_t **self_p);

//  Job `job` ended at ended_at (msec, our clock), with that proof
//  (JACE_KEY_TEXT characters of Z85, not checked here).  A job already
//  known keeps the earlier time and its first proof.  Returns true if it
//  is new; false for it, or for a job id or proof that is not one.
bool
    supernode_ended_add (supernode_ended_t *self, const char *job,
                         int64_t ended_at, const char *proof);

//  The proof heard that job `job` is over, or NULL if it is not known to
//  be (borrowed).
const char *
    supernode_ended_proof (supernode_ended_t *self, const char *job);

//  Forget records older than SUPERNODE_ENDED_KEEP_MSEC at now.
void
    supernode_ended_expire (supernode_ended_t *self, int64_t now);

//  Add the records in msg's params (a peer's PEER_STATE) as of now;
//  others' params are left alone, and ages out of range are ignored.
//  Returns how many were new.
size_t
    supernode_ended_read (supernode_ended_t *self, jace_msg_t *msg,
                          int64_t now);

//  Write every record into msg's params as of now.
void
    supernode_ended_describe (supernode_ended_t *self, jace_msg_t *msg,
                              int64_t now);

//  Number of records.
size_t
    supernode_ended_size (supernode_ended_t *self);

#endif
