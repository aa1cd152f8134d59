/*  =========================================================================
    supernode_probe - measured links between clusters (PING / PONG)

    A super-node probes its peers and its daemons (docs/MAPPING.md,
    section 1).  This class keeps what the probes need and what they
    found: for each target (a peer or a daemon) the probes still awaiting
    their PONG, and for each pair of clusters the round-trip times of the
    last LINK_SAMPLES small and bulk probes.  Latency is half the smallest
    small round trip; bandwidth is the padding's bits over the extra time
    of the smallest bulk round trip.  Each pair has an age, the time since
    its last round trip, published with it; a pair no longer measured (no
    target of that cluster answers, or our cluster changed) is forgotten
    after a while rather than published forever.  It also keeps what
    peers published of their own links, so that a listing carries the
    grid's links, ours first.

    On a virtual grid it holds every probe we send for the emulated link
    (latency + size / bandwidth between our cluster and the destination's,
    from the platform file) in a small delay queue that the server's loop
    flushes: sends never block.  Given the grid's shared links file, a
    probe also reserves the uplinks and backbone it crosses, as the
    daemons' data does, so a bulk probe measures what they leave.
    =========================================================================
*/
#ifndef SUPERNODE_PROBE_H_INCLUDED
#define SUPERNODE_PROBE_H_INCLUDED

#include "jace_msg.h"

//  Padding of a bulk probe (bytes, in PING.reason): the first to a
//  cluster carries the least, the next ones what takes the link about
//  5 ms by the last measure, within these bounds.
#define SUPERNODE_PROBE_PADDING_MIN 1024
#define SUPERNODE_PROBE_PADDING (32 * 1024)
//  Every this many probes of a target (peer or daemon), one is bulk.
#define SUPERNODE_PROBE_BULK_EVERY 4
//  Bulk probes sent at once to count the transfers a link carries at
//  full speed (link/A/B/transfers, KPBS k)
#define SUPERNODE_PROBE_BURST JACE_PROBE_BURST
//  Link params one listing carries at most (5 per direction of a pair:
//  16 pairs both ways).
#define SUPERNODE_LINK_PARAMS_MAX 160

typedef struct _supernode_probe_t supernode_probe_t;

//  Create; platform is a platform file to emulate (may be NULL).  NULL if
//  the file cannot be loaded, with the reason.
supernode_probe_t *
    supernode_probe_new (const char *platform, char *reason,
                         size_t reason_size);

//  Hold our probes also for the grid's shared links (uplinks, backbone):
//  map the links file at path, which must declare the platform's shared
//  resources, so that a bulk probe waits, as the daemons' data does,
//  while their transfers fill a backbone, and measures the bandwidth
//  left.  Returns 0, or -1 with the reason (nothing changed).  Without a
//  platform there is nothing to share: -1.
int
    supernode_probe_share_links (supernode_probe_t *self, const char *path,
                                 char *reason, size_t reason_size);

//  Destroy; delayed sends are dropped. Safe on NULL.
void
    supernode_probe_destroy (supernode_probe_t **self_p);

//  Our cluster ("" while unknown: nothing is emulated nor published).
void
    supernode_probe_set_cluster (supernode_probe_t *self, const char *cluster);
const char *
    supernode_probe_cluster (supernode_probe_t *self);

//  Send msg (routing id set for a ROUTER) on sock, held first for the
//  emulated link to cluster `remote` when there is a platform; takes the
//  message.  Never blocks: a full delay queue drops the probe.
void
    supernode_probe_send (supernode_probe_t *self, zsock_t *sock,
                          const char *remote, jace_msg_t **msg_p);

//  Send what is due.  Returns the usec until the next delayed send is
//  due, or -1 when none waits.
int64_t
    supernode_probe_flush (supernode_probe_t *self);

//  Drop delayed sends on sock (a peer connection about to close).
void
    supernode_probe_forget_socket (supernode_probe_t *self, zsock_t *sock);

//  A PING to target (a key naming a peer or a daemon) in cluster remote,
//  bulk or not: remembers it and returns the message, ready to send
//  (sender and routing id left to the caller).  Bulk every
//  SUPERNODE_PROBE_BULK_EVERY probes of its cluster when may_bulk (its
//  daemons are probed in turn).
jace_msg_t *
    supernode_probe_ping (supernode_probe_t *self, const char *target,
                          const char *remote, bool may_bulk);

//  The PINGs to send target now, into pings (room for
//  SUPERNODE_PROBE_BURST), as supernode_probe_ping; returns how many.
//  One, but on a burst's turn (may_bulk, the link's bandwidth measured)
//  SUPERNODE_PROBE_BURST bulk ones, to be sent together.
size_t
    supernode_probe_pings (supernode_probe_t *self, const char *target,
                           const char *remote, bool may_bulk,
                           jace_msg_t **pings);

//  A PONG from target, echoing count, naming its cluster, saying when
//  the PING came by target's clock (usec, 0: not said): true and the
//  round trip counted if it answers a probe of ours still awaited; false
//  (forged, duplicate or too late) otherwise.
bool
    supernode_probe_pong (supernode_probe_t *self, const char *target,
                          int64_t count, const char *remote, int64_t came);

//  Forget targets not probed since before `before` (msec, monotonic):
//  daemons that left, peers dropped.
void
    supernode_probe_prune (supernode_probe_t *self, int64_t before);

//  Forget the links we have not measured since `before` (msec,
//  monotonic): their figures no longer describe the links.
void
    supernode_probe_forget_links (supernode_probe_t *self, int64_t before);

//  Take the link params (link/A/B/...) a peer published; replaces what
//  that peer said before.  Values that are not sound numbers are left out.
void
    supernode_probe_learn (supernode_probe_t *self, const char *peer,
                           jace_msg_t *state);

//  Forget what peer published.
void
    supernode_probe_forget_peer (supernode_probe_t *self, const char *peer);

//  Write links into msg's params: ours (both directions of each pair),
//  then, with_peers, what peers published for other pairs, at most
//  SUPERNODE_LINK_PARAMS_MAX params.
void
    supernode_probe_describe (supernode_probe_t *self, jace_msg_t *msg,
                              bool with_peers);

#endif
