/*  =========================================================================
    spawner_lease - the spawner's side of the super-nodes: leases

    Holds the spawner's DEALER to its current super-node and the daemons
    leased for the job.  Asking for daemons never blocks: spawner_lease_want
    raises the number wanted, and every spawner_lease_tick sends what is
    due (a RESERVE for the shortfall, retried 200 ms after a short GRANT
    and 2 s after silence, which also fails over to the next super-node;
    lease renewals).  GRANTs are read by spawner_lease_recv as they come,
    de-duplicated by daemon id: a daemon already held, already used by the
    job or excluded (fenced) is released at once, never handed out twice.
    Daemons held and not yet taken are the job's spares.  Each GRANT
    carries, per daemon, the lease token the daemon will ask our ASSIGN
    for (docs/SECURITY.md); the lease keeps it beside the daemon.
    =========================================================================
*/
#ifndef SPAWNER_LEASE_H_INCLUDED
#define SPAWNER_LEASE_H_INCLUDED

#include "jace_msg.h"
#include "jace_security.h"
#include "jace_auth.h"

typedef struct _spawner_lease_t spawner_lease_t;

//  A lease for job `job` through the super-nodes `endpoints` (failover
//  order; copied, and the peers a listing names are added after them),
//  reached with `security` (borrowed).  `owner` is our status endpoint, told to the super-nodes so
//  `jace-spawner jobs` can find us.  Returns NULL with the reason if no
//  socket could be made.
spawner_lease_t *
    spawner_lease_new (const char *job, const char **endpoints,
                       size_t endpoint_count, jace_security_t *security,
                       const char *owner, char *reason, size_t reason_size);

//  Release everything still held and destroy; nullifies the reference.
//  Safe on NULL.
void
    spawner_lease_destroy (spawner_lease_t **self_p);

//  The socket to poll for the super-node's answers.
zsock_t *
    spawner_lease_socket (spawner_lease_t *self);

//  Endpoint of the current super-node.
const char *
    spawner_lease_endpoint (spawner_lease_t *self);

//  True when no super-node has said anything to us in the few seconds
//  since `since` (msec, zclock_mono) that a live one takes to answer,
//  with the reason naming them.
bool
    spawner_lease_unanswered (spawner_lease_t *self, int64_t since,
                              int64_t now, char *reason, size_t reason_size);

//  Lease only daemons that advertise application app (copied): the
//  RESERVEs name it, a granted daemon without it is given back, and the
//  listings (spawner_lease_listing) show daemons without it as taken.
void
    spawner_lease_set_app (spawner_lease_t *self, const char *app);

//  Read one message from the super-node (the socket had input).  Returns
//  the number of daemons newly held, or -1 for a malformed message.
int
    spawner_lease_recv (spawner_lease_t *self);

//  Send what is due at `now`: RESERVE for the daemons wanted and not
//  held, lease renewals.  Returns msec until the next thing is due.
int64_t
    spawner_lease_tick (spawner_lease_t *self, int64_t now);

//  The job waits for daemons and holds none: make it known to the grid
//  anyway, with a lease of no daemon (a RESERVE of none, then renewals),
//  so that `jobs` lists it and `status` and `cancel` reach its spawner.
//  Released with the rest (spawner_lease_release_all).
void
    spawner_lease_announce (spawner_lease_t *self);

//  Want `extra` more daemons than are held now and not taken, preferring
//  `cluster` ("" for any).
void
    spawner_lease_want (spawner_lease_t *self, size_t extra,
                        const char *cluster);

//  Daemons wanted and not yet granted.
size_t
    spawner_lease_wanted (spawner_lease_t *self);

//  Daemons held and not taken by a task (spares).
size_t
    spawner_lease_spare_count (spawner_lease_t *self);

//  Spare number `index`; borrowed until the next call that changes the
//  lease.
const jace_node_t *
    spawner_lease_spare (spawner_lease_t *self, size_t index);

//  Take spare number `index` for a task: it is used by the job from now
//  on, and no grant will hand it out again.  Writes it to node.
void
    spawner_lease_take (spawner_lease_t *self, size_t index,
                        jace_node_t *node);

//  Hold `node` as taken by a task without a grant (a resumed job takes
//  over the daemons of the job it resumes), so it is released at the end.
void
    spawner_lease_adopt (spawner_lease_t *self, const jace_node_t *node);

//  Never hand out daemon `id` again for this job (fenced, refused a
//  task); it stays held, so no grant offers it again, until the job's
//  lease ends.
void
    spawner_lease_exclude (spawner_lease_t *self, const char *id);

//  Daemon `id`, excluded, has said it dropped our task: it is a spare
//  again (still held).  Returns true if it was excluded and held.
bool
    spawner_lease_readmit (spawner_lease_t *self, const char *id);

//  Daemon `id`, excluded and not held, was told to drop our task by
//  someone we trust (a resume stopped the daemons that had no task to
//  adopt): once the grid lists it free, it may be granted to us again.
//  Does nothing to a daemon the lease holds.
void
    spawner_lease_forget (spawner_lease_t *self, const char *id);

//  Daemon `id` refused our task as leased to another job (REFUSE
//  LEASED): our lease on it lapsed, so it is no longer ours in any way.
//  It is released too (a no-op unless the grid still holds it for us);
//  once the grid lists it free it may be granted to us again.
void
    spawner_lease_drop (spawner_lease_t *self, const char *id);

//  Release every daemon held, taken or not.  Given the job key, say
//  first that the job is over (a lease HEARTBEAT of state
//  JACE_LEASE_OVER, its token the job's proof of it: jace_job_over_proof),
//  which tells daemons we lost; not when a resume fails before it took
//  the job, which another resume may still take.  The messages leave
//  even if the socket closes right after.
void
    spawner_lease_release_all (spawner_lease_t *self,
                               const jace_key_t *job_over);

//  The lease token of daemon `id` from its GRANT (params token/<id>), for
//  its ASSIGN; "" if the grant carried none (an adopted daemon).
//  Borrowed until the lease is destroyed.
const char *
    spawner_lease_token (spawner_lease_t *self, const char *id);

//  Total daemons held (taken or spare).
size_t
    spawner_lease_held (spawner_lease_t *self);

//  Want exactly the daemons `nodes` (count records; only ids count): the
//  next RESERVE names them.  Ids already held or known are skipped.
void
    spawner_lease_want_ids (spawner_lease_t *self, const jace_node_t *nodes,
                            size_t count);

//  Daemons wanted by id and not yet granted.
size_t
    spawner_lease_ids_wanted (spawner_lease_t *self);

//  Stop wanting any daemon by id.
void
    spawner_lease_forget_ids (spawner_lease_t *self);

//  Stop wanting daemon `id` (a grant of it that comes later is given
//  back).
void
    spawner_lease_forget_id (spawner_lease_t *self, const char *id);

//  The ids a GRANT answering our RESERVE by id lacked (taken meanwhile,
//  or gone) since the last call; the caller destroys the list.  They are
//  no longer wanted: the caller re-plans.
zlist_t *
    spawner_lease_refused (spawner_lease_t *self);

//  Index of daemon `id` among the spares, or -1.
int
    spawner_lease_find_spare (spawner_lease_t *self, const char *id);

//  Give spare number `index` back to the super-node (a new plan does
//  not use it).
void
    spawner_lease_release_spare (spawner_lease_t *self, size_t index);

//  True if the lease holds daemon `id` (spare, taken or excluded).
bool
    spawner_lease_is_held (spawner_lease_t *self, const char *id);

//  Ask the super-node for the grid's listing (STATUS); the answer is kept
//  for spawner_lease_listing.
void
    spawner_lease_ask_listing (spawner_lease_t *self);

//  The newest listing (a STATUS_REPLY) since the last call, or NULL; the
//  caller destroys it.
jace_msg_t *
    spawner_lease_listing (spawner_lease_t *self);

//  How many free daemons of the last listing lack the job's application
//  (shown taken in it)
size_t
    spawner_lease_lacking_app (spawner_lease_t *self);

//  Events worth logging since the last call: failovers.  Returns the
//  super-node given up, or NULL; the caller frees it.
char *
    spawner_lease_failover_event (spawner_lease_t *self);

#endif
