/*  =========================================================================
    supernode_overlay - what the peer super-nodes report: daemons, leases

    Each peer sends its own registry and leases every heartbeat
    (PEER_STATE); we keep the last one of each peer.  A daemon that fails
    over from one super-node to another is listed for a while by both (and
    by our copies of both), so every record remembers when this peer began
    to list it, on our clock: the record that appeared last is the
    freshest, since a daemon talks to one super-node at a time.  Listings
    built here name each daemon once, from its freshest record.
    =========================================================================
*/
#ifndef SUPERNODE_OVERLAY_H_INCLUDED
#define SUPERNODE_OVERLAY_H_INCLUDED

#include "jace_msg.h"
#include "supernode_registry.h"
#include "supernode_leases.h"

typedef struct _supernode_overlay_t supernode_overlay_t;

//  Create an overlay that knows no peer.
supernode_overlay_t *
    supernode_overlay_new (void);

//  Destroy overlay; nullifies the reference. Safe on NULL.
void
    supernode_overlay_destroy (supernode_overlay_t **self_p);

//  Take peer's PEER_STATE, heard at now: its daemons, the first max_nodes
//  valid records (jace_node_valid), and its leases.  Returns the
//  number of records left out (invalid or beyond max_nodes).
size_t
    supernode_overlay_update (supernode_overlay_t *self, const char *peer,
                              jace_msg_t *state, int64_t now,
                              size_t max_nodes);

//  Forget what peer reported.  Returns the number of daemons forgotten.
size_t
    supernode_overlay_forget (supernode_overlay_t *self, const char *peer);

//  When a peer last began to list daemon id (msec), or -1 if none does.
int64_t
    supernode_overlay_newest (supernode_overlay_t *self, const char *id);

//  True if a peer lists daemon id as leased or working.
bool
    supernode_overlay_is_busy (supernode_overlay_t *self, const char *id);

//  True if a peer lists a daemon working for job.
bool
    supernode_overlay_works_for (supernode_overlay_t *self, const char *job);

//  The job a peer lists daemon id leased to (borrowed), or NULL: a spare
//  that failed over to us is still held there until that peer forgets it.
const char *
    supernode_overlay_held_for (supernode_overlay_t *self, const char *id);

//  Endpoint of the peer whose record of daemon id is the freshest (the
//  super-node it talks to; borrowed), or NULL if no peer lists it.
const char *
    supernode_overlay_holder (supernode_overlay_t *self, const char *id);

//  Free daemons peer lists whose record is the freshest of the overlay
//  and lists application app ("" for any).
size_t
    supernode_overlay_free_count (supernode_overlay_t *self,
                                  const char *peer, const char *app);

//  Append to msg the freshest peer record of each daemon whose record in
//  registry (may be NULL) is not fresher.
void
    supernode_overlay_describe (supernode_overlay_t *self,
                                supernode_registry_t *registry,
                                jace_msg_t *msg);

//  Key of the owner of lease job as the first peer listing it says ("" if
//  it names none; borrowed), or NULL if no peer lists it.
const char *
    supernode_overlay_lease_owner_key (supernode_overlay_t *self,
                                       const char *job);

//  Merge every peer's leases into msg's params as of now, at most `max`
//  leases in all (supernode_leases_describe).  Returns how many were left
//  out.
size_t
    supernode_overlay_describe_leases (supernode_overlay_t *self,
                                       jace_msg_t *msg, int64_t now,
                                       size_t max);

#endif
