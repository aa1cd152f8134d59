/*  =========================================================================
    supernode_registry - the daemons a super-node knows, and their leases

    Soft state: every entry is refreshed by the daemon's periodic HELLO and
    expires when the daemon falls silent, so a restarted super-node rebuilds
    its registry from re-registrations alone.  A lease reserves free daemons
    for one job; it lapses unless its holder renews it.
    =========================================================================
*/
#ifndef SUPERNODE_REGISTRY_H_INCLUDED
#define SUPERNODE_REGISTRY_H_INCLUDED

#include "jace_msg.h"

typedef struct _supernode_registry_t supernode_registry_t;

//  Create an empty registry for the super-node bound at endpoint.
supernode_registry_t *
    supernode_registry_new (const char *endpoint);

//  Destroy registry; nullifies the reference. Safe on NULL.
void
    supernode_registry_destroy (supernode_registry_t **self_p);

//  Insert or refresh the daemon `node` (as its HELLO describes it), alive
//  until expires_at (msec).  Returns true if it was not registered.
bool
    supernode_registry_refresh (supernode_registry_t *self,
                                const jace_node_t *node, int64_t expires_at);

//  Forget a daemon (it said BYE).  Returns true if it was registered.
bool
    supernode_registry_remove (supernode_registry_t *self, const char *id);

//  Remove daemons silent past their expiry, and lapse leases not renewed,
//  at time now.  Appends the ids of removed daemons to `expired` (a list
//  with autofree set, which copies them) when it is not NULL.  Returns the
//  number removed.
size_t
    supernode_registry_expire (supernode_registry_t *self, int64_t now,
                               zlist_t *expired);

//  Number of daemons, and of free ones.
size_t
    supernode_registry_size (supernode_registry_t *self);
size_t
    supernode_registry_free_count (supernode_registry_t *self);

//  Lease up to `count` free daemons to `lease` until expires_at: those of
//  cluster `preferred` first (when not empty), then the fastest; adds each
//  to msg's node list.  Returns the number leased.
size_t
    supernode_registry_lease (supernode_registry_t *self, const char *lease,
                              size_t count, int64_t expires_at,
                              const char *preferred, jace_msg_t *msg);

//  Extend every daemon held by `lease` until expires_at.  Returns how many.
size_t
    supernode_registry_renew (supernode_registry_t *self, const char *lease,
                              int64_t expires_at);

//  Give back daemon `id` held by `lease` (every one of the lease's daemons
//  when id is NULL).  Returns how many were released.
size_t
    supernode_registry_release (supernode_registry_t *self,
                                const char *lease, const char *id);

//  Append every registered daemon to msg's node list.
void
    supernode_registry_describe (supernode_registry_t *self,
                                 jace_msg_t *msg);

#endif
