/*  =========================================================================
    supernode_registry - the daemons a super-node knows, and their leases

    Soft state: every entry is refreshed by the daemon's periodic HELLO and
    expires when the daemon falls silent, so a restarted super-node rebuilds
    its registry from re-registrations alone.  A lease reserves free daemons
    for one job; it lapses unless its holder renews it.

    Each record keeps the daemon's lease key (HELLO's token) and the key
    it authenticated with: only the same pair refreshes or removes a live
    record, so no one else can take over a daemon's id, and grants carry
    lease tokens made with it.  The lease key never leaves this class but
    as those tokens.  The registry holds at most max_daemons records.
    =========================================================================
*/
#ifndef SUPERNODE_REGISTRY_H_INCLUDED
#define SUPERNODE_REGISTRY_H_INCLUDED

#include "jace_msg.h"
#include "jace_auth.h"

//  Most daemons a registry holds by default (--max-daemons).
#define SUPERNODE_MAX_DAEMONS 4096

//  What became of a HELLO (supernode_registry_refresh).
typedef enum {
    SUPERNODE_REFRESHED,        //  A live daemon, same lease key and key
    SUPERNODE_JOINED,           //  A new daemon (or one whose record expired)
    SUPERNODE_FULL,             //  A new id, but the registry is full
    SUPERNODE_CLAIMED           //  A live id held with another lease key or
                                //  key: someone else's, refused
} supernode_refresh_t;

typedef struct _supernode_registry_t supernode_registry_t;

//  Create an empty registry for the super-node bound at endpoint, holding
//  at most max_daemons (0: SUPERNODE_MAX_DAEMONS).
supernode_registry_t *
    supernode_registry_new (const char *endpoint, size_t max_daemons);

//  Destroy registry; nullifies the reference. Safe on NULL.
void
    supernode_registry_destroy (supernode_registry_t **self_p);

//  Decides, for the daemon `id` whose record here appeared at
//  appeared_at (msec), whether a peer's record supersedes ours.
typedef bool
    (supernode_registry_filter_fn) (const char *id, int64_t appeared_at,
                                    void *arg);

//  Insert or refresh the daemon `node` (as its HELLO describes it, valid),
//  with its lease key and the key it authenticated with (user_id, "" on
//  plain links), heard at now, alive until expires_at (msec).
//  newest_elsewhere is when a peer last began to list it (-1 if none): a
//  HELLO after that means the daemon came back to us, so our record counts
//  as new again.  A live record with another lease key or user id is left
//  alone (SUPERNODE_CLAIMED), and so is a new id when the registry is full.
supernode_refresh_t
    supernode_registry_refresh (supernode_registry_t *self,
                                const jace_node_t *node,
                                const jace_key_t *lease_key,
                                const char *user_id, int64_t now,
                                int64_t expires_at, int64_t newest_elsewhere);

//  When daemon id's record appeared here (msec), or -1 if not registered.
int64_t
    supernode_registry_appeared_at (supernode_registry_t *self,
                                    const char *id);

//  Remove daemons that moved away: those for which `moved` holds and that
//  missed their last HELLO (silent over twice their HELLO period) at time
//  now.  Appends their ids to `dropped` (autofree list) when not NULL.
//  Returns the number removed.
size_t
    supernode_registry_drop_moved (supernode_registry_t *self, int64_t now,
                                   supernode_registry_filter_fn *moved,
                                   void *arg, zlist_t *dropped);

//  Forget a daemon (it said BYE) if lease_key and user_id are those it
//  registered with.  Returns 1 if removed, 0 if not registered, -1 if
//  registered with another lease key or user id (left alone).
int
    supernode_registry_remove (supernode_registry_t *self, const char *id,
                               const jace_key_t *lease_key,
                               const char *user_id);

//  Remove daemons silent past their expiry, and lapse leases not renewed,
//  at time now.  Appends the ids of removed daemons to `expired` (a list
//  with autofree set, which copies them) when it is not NULL.  Returns the
//  number removed.
size_t
    supernode_registry_expire (supernode_registry_t *self, int64_t now,
                               zlist_t *expired);

//  Number of daemons, and of free ones; the most it may hold.
size_t
    supernode_registry_size (supernode_registry_t *self);
size_t
    supernode_registry_free_count (supernode_registry_t *self);
size_t
    supernode_registry_max (supernode_registry_t *self);

//  Lease up to `count` free daemons to `lease` until expires_at: those of
//  cluster `preferred` first (when not empty), then the fastest; adds each
//  to msg's node list, with its lease token for (lease, spawner_id, its
//  id) in param token/<id>.  Skips daemons for which `exclude` (may be
//  NULL) holds, and those whose record does not list application app
//  (jace_node_has_app; "" for any).  Returns the number leased.
size_t
    supernode_registry_lease (supernode_registry_t *self, const char *lease,
                              const char *spawner_id, const char *app,
                              size_t count, int64_t expires_at,
                              const char *preferred,
                              supernode_registry_filter_fn *exclude,
                              void *arg, jace_msg_t *msg);

//  Lease to `lease` until expires_at exactly those of the `count` daemons
//  named in ids that are registered here, free, list application app
//  ("" for any), and for which `exclude` (may be NULL) does not hold; adds
//  each to msg's node list with its lease token, as
//  supernode_registry_lease.  Never leases a daemon not named.  Returns
//  the number leased.
size_t
    supernode_registry_lease_ids (supernode_registry_t *self,
                                  const char *lease, const char *spawner_id,
                                  const char *app,
                                  const char **ids, size_t count,
                                  int64_t expires_at,
                                  supernode_registry_filter_fn *exclude,
                                  void *arg, jace_msg_t *msg);


//  The lease holding daemon `id` ("" for none), or NULL if it is not
//  registered here.
const char *
    supernode_registry_lease_of (supernode_registry_t *self, const char *id);

//  The ids of the daemons whose lease changed (leased, freed, lapsed,
//  taken back) since the last call, each once: they are to be told.  The
//  caller destroys the list; NULL when there is none.
zlist_t *
    supernode_registry_untold (supernode_registry_t *self);

//  True if some daemon here is held by `lease`.
bool
    supernode_registry_holds (supernode_registry_t *self, const char *lease);

//  Hold again by `lease`, until expires_at, the daemons that report
//  working for job `lease` and that no lease holds (theirs lapsed while
//  the job had no spawner).  Returns how many.
size_t
    supernode_registry_take_back (supernode_registry_t *self,
                                  const char *lease, int64_t expires_at);

//  Extend every daemon held by `lease` until expires_at.  Returns how many.
size_t
    supernode_registry_renew (supernode_registry_t *self, const char *lease,
                              int64_t expires_at);

//  Give back daemon `id` held by `lease` (every one of the lease's daemons
//  when id is NULL).  Returns how many were released.
size_t
    supernode_registry_release (supernode_registry_t *self,
                                const char *lease, const char *id);

//  Give back the daemons held by `lease` that run none of its tasks: a
//  dead spawner's spares, once a resumed one took its lease over (the
//  job's id, which the new owner renews for its own daemons, kept them
//  leased for ever).  Returns how many were released.
size_t
    supernode_registry_release_idle (supernode_registry_t *self,
                                     const char *lease);

//  Append every registered daemon to msg's node list, but those for which
//  `exclude` (may be NULL) holds; a leased one's `job` is its lease's.
void
    supernode_registry_describe (supernode_registry_t *self,
                                 supernode_registry_filter_fn *exclude,
                                 void *arg, jace_msg_t *msg);

#endif
