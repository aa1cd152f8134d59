/*  =========================================================================
    supernode_leases - the leases a super-node knows, as jobs

    A lease id is the job id of the spawner that asked for it.  For each
    lease we keep who owns it (the owner spawner's status endpoint, from
    RESERVE.endpoint, possibly "", and its public key, the RESERVE's user
    id, "" without keys) and when it began, so that STATUS can list the
    grid's jobs and where to reach their spawners, and so that only the
    owner key may extend or end it.  On the wire a lease is three params:
    lease/<job>/owner, lease/<job>/owner_key and lease/<job>/age_ms.
    =========================================================================
*/
#ifndef SUPERNODE_LEASES_H_INCLUDED
#define SUPERNODE_LEASES_H_INCLUDED

#include "jace_msg.h"

typedef struct _supernode_leases_t supernode_leases_t;

//  Largest age a peer may report (ten years, msec): keeps arithmetic on
//  ages far from overflow.
#define SUPERNODE_LEASE_AGE_MAX (10LL * 366 * 24 * 3600 * 1000)
//  Params one lease takes in a listing.
#define SUPERNODE_LEASE_PARAMS 3

//  Create an empty lease table.
supernode_leases_t *
    supernode_leases_new (void);

//  Destroy table; nullifies the reference. Safe on NULL.
void
    supernode_leases_destroy (supernode_leases_t **self_p);

//  Begin lease `job` (began_at, msec) owned by the spawner at `owner`
//  (may be "") with key owner_key (may be ""), alive until expires_at.  A
//  lease already known keeps its start and owner key, and takes the owner
//  if it had none.  Returns true if the lease is new.  (The caller has
//  checked that the asker holds the owner key.)
bool
    supernode_leases_begin (supernode_leases_t *self, const char *job,
                            const char *owner, const char *owner_key,
                            int64_t began_at, int64_t expires_at);

//  Key of lease job's owner ("" without keys; borrowed), or NULL if the
//  lease is unknown.
const char *
    supernode_leases_owner_key (supernode_leases_t *self, const char *job);

//  The owner of lease `job` answers at `owner` now (a HEARTBEAT from
//  the owner key naming it: a resumed spawner took the job over).  ""
//  changes nothing.  Returns true if the owner changed.
bool
    supernode_leases_move (supernode_leases_t *self, const char *job,
                           const char *owner);

//  Keep lease `job` alive until expires_at.  Returns false if unknown.
bool
    supernode_leases_renew (supernode_leases_t *self, const char *job,
                            int64_t expires_at);

//  Forget lease `job`.  Returns true if it was known.
bool
    supernode_leases_end (supernode_leases_t *self, const char *job);

//  Forget leases not renewed before now; appends their ids to `expired`
//  (autofree list) when not NULL.  Returns how many.
size_t
    supernode_leases_expire (supernode_leases_t *self, int64_t now,
                             zlist_t *expired);

//  Number of leases.
size_t
    supernode_leases_size (supernode_leases_t *self);

//  Replace the table by the leases in msg's params, as seen at now (a
//  peer's PEER_STATE); they never expire by themselves.  Entries with a
//  bad age count as just begun.  Returns how many were read.
size_t
    supernode_leases_read (supernode_leases_t *self, jace_msg_t *msg,
                           int64_t now);

//  Write every lease into msg's params as of now, at most `max` leases in
//  all in msg (msg holds only lease params so far).  A lease msg already
//  has keeps the greater age and a non-empty owner and owner key, so
//  several tables merge into one listing.  Returns the number of leases
//  left out for lack of room.
size_t
    supernode_leases_describe (supernode_leases_t *self, jace_msg_t *msg,
                               int64_t now, size_t max);

#endif
