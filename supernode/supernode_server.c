/*  =========================================================================
    supernode_server - the super-node: registry of daemons, leases, peering

    Timing: daemons send HELLO every heartbeat; one silent for `timeout` is
    dropped.  Peers send PEER_STATE every heartbeat; a peer silent for
    `timeout` has its daemons dropped from our view (they fail over to a
    live super-node and reappear), and is itself dropped unless it was
    configured.  A reservation waits at most PEER_WAIT_MSEC for its peers'
    grants before it is answered with what was gathered.

    Loops: a lease message (RESERVE, RELEASE, HEARTBEAT) forwarded to a
    peer carries forwarded = 1 and is never forwarded again, so one
    spawner message costs at most one message per peer.

    One record per daemon: a daemon talks to one super-node at a time, so
    of several records of a daemon the one that appeared last is the
    freshest (supernode_overlay).  Listings, PEER_STATEs and leases use
    only the freshest record; a record of ours that a peer's fresher one
    supersedes is dropped once its daemon misses a HELLO.
    =========================================================================
*/
#include "supernode_server.h"
#include "supernode_registry.h"
#include "supernode_overlay.h"
#include "supernode_leases.h"
#include "supernode_ended.h"
#include "supernode_probe.h"
#include "jace_msg.h"
#include "jace_shaper.h"
#include "jace_auth.h"
#include "jace_security.h"

#include <sodium.h>

//  Longest a reservation waits for peers before it is answered.
#define PEER_WAIT_MSEC 1000
//  `forwarded` of a lease message sent on by a super-node (never again).
#define FROM_PEER 1
//  Peer dealers queue at most this many messages: a peer that stops
//  reading costs us little memory, and what it missed is resent anyway.
#define PEER_SNDHWM 64
//  Super-nodes we refused to peer with and remember, so that each refusal
//  is logged once; past this many, refusals are only counted.
#define REFUSED_MAX 256
//  Params of a STATUS_REPLY that are not leases nor links (audit/...,
//  traffic/..., cluster).
#define AUDIT_PARAMS 6
//  Leases listed in one STATUS_REPLY or PEER_STATE: what fits in a params
//  map beside the audit and link params.
#define LEASES_LISTED_MAX \
    ((JACE_PARAMS_MAX - AUDIT_PARAMS - JACE_SUPERNODES_NAMED_MAX \
      - SUPERNODE_LINK_PARAMS_MAX) / SUPERNODE_LEASE_PARAMS)
//  A probe target not probed for this many periods is forgotten.
#define PROBE_FORGET_PERIODS 5
//  A cluster pair not measured for this many periods is forgotten: every
//  period probes each peer and a daemon of each cluster registered here
//  (s_probe_daemons), so a pair goes unmeasured only when no target of
//  its cluster answers (its daemons left, its peer is gone) or our
//  cluster changed, and its figure no longer describes any link.
//  A few periods, so that one lost round does not hide a link.
#define LINK_FORGET_PERIODS 5
//  Most daemons one RESERVE gets: each granted daemon takes a token param.
#define GRANT_MAX JACE_PARAMS_MAX
//  Reservations waiting for peers at once; past this a RESERVE is answered
//  at once with what we hold, so a flood of them holds no more memory.
#define PENDING_MAX 64
//  Messages one connection may have waiting for us.  Every message a
//  super-node takes is one header frame of at most JACE_MSG_HEADER_MAX
//  (4 MiB, ZMQ_MAXMSGSIZE, which libzmq applies per frame).  A client
//  sends one request at a time, a daemon a HELLO a heartbeat, a peer a
//  PEER_STATE a heartbeat, so 8 is ample: a connection sending such
//  messages makes us buffer at most 8 x 4 MiB = 32 MiB (ZeroMQ's default
//  of 1000 let it be 4 GiB).  A full queue stops reading that connection,
//  it drops nothing.  libzmq bounds neither the frames of one multipart
//  message nor lets us see one before it is whole, so a message of many
//  frames is only dropped (jace_msg_recv) once buffered.
#define RCVHWM 8
//  Who we are in refusal logs.
#define WHO "supernode"

//  One peer super-node.
typedef struct {
    char *endpoint;             //  Its ROUTER endpoint
    zsock_t *dealer;            //  Our connection to it
    bool configured;            //  From --peer: kept when silent
    bool heard;                 //  Its state is in the overlay
    char id [JACE_ID_MAX];      //  Its id (PEER_STATE sender), or ""
    char cluster [JACE_ID_MAX]; //  Its cluster (PEER_STATE, PONG), or ""
    size_t left_out;            //  Records its last PEER_STATE lost
    int64_t expires_at;         //  Its state is stale after this
} peer_t;

//  A reservation waiting for peers' grants.
typedef struct {
    char job [JACE_ID_MAX];     //  Lease id
    zframe_t *routing_id;       //  Spawner to answer
    jace_msg_t *grant;          //  Grant gathered so far
    size_t wanted;              //  Daemons asked for
    int64_t lease_msec;         //  Lease time, capped
    size_t outstanding;         //  Peers yet to answer
    int64_t deadline;           //  Answer by then whatever happens
    zhashx_t *wanted_ids;       //  By id: the daemons asked for (no
                                //  values), NULL for a count
    zhashx_t *granted;          //  Ids the grant names (no values): no
                                //  daemon is granted twice
} pending_t;

typedef struct {
    zsock_t *pipe;              //  Actor command pipe
    zsock_t *router;            //  Daemons, spawners, peers talk here
    zpoller_t *poller;          //  Pipe, router and peer dealers
    char *endpoint;             //  Our bound endpoint, or NULL
    char *failure;              //  Why we could not start, or NULL
    char id [JACE_ID_MAX];      //  Our id in messages
    jace_security_t *security;  //  Keys, or plain links
    supernode_registry_t *registry;  //  Our daemons
    supernode_overlay_t *overlay;    //  Our peers' daemons and leases
    supernode_leases_t *leases; //  Our leases, by job
    supernode_ended_t *ended;   //  Jobs the grid knows are over
    zlistx_t *peers;            //  peer_t items, owned
    zlistx_t *pending;          //  pending_t items, owned
    zhashx_t *refused;          //  Endpoints refused as peers (no values)
    uint64_t refusals;          //  Peerings refused, logged or not
    size_t max_peers;           //  Most peers at once
    size_t max_daemons;         //  Most daemons, here and per peer
    uint64_t registry_full;     //  New daemons refused for lack of room
    bool registry_full_logged;  //  Told since the registry last filled
    uint64_t pending_full;      //  RESERVEs not passed on for lack of room
    int64_t max_lease_msec;     //  Longest lease granted
    int heartbeat_msec;         //  HELLO / PEER_STATE period
    int timeout_msec;           //  Silence before expiry
    bool leases_cut_logged;     //  Told once that listings were cut
    int64_t next_tick;          //  Next housekeeping (msec)
    uint64_t malformed;         //  Malformed messages dropped
    uint64_t lease_messages;    //  RESERVE, HEARTBEAT, RELEASE, GRANT in
    bool verbose;               //  Log every message
    bool allow_crash;           //  Obey CRASH
    bool terminated;            //  $TERM received
    supernode_probe_t *probe;   //  Link measurements, emulated links
    bool cluster_given;         //  --cluster: never recomputed
    int probe_msec;             //  PING period, 0: no probes
    int64_t next_probe;         //  Next probe round (msec)
    zhashx_t *routes;           //  Daemon id -> routing id (zframe_t) of
                                //  its last accepted HELLO, owned
    zhashx_t *daemon_pings;     //  Daemon id -> when we last PINGed it
                                //  (int64_t msec, owned), ids of routes
} server_t;


//  A destructor for hash items that are plain allocations.
static void
s_free_item (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

//  --------------------------------------------------------------------------
//  Peers

static void
s_peer_destroy (void **item_p)
{
    peer_t *peer = (peer_t *) *item_p;
    if (peer) {
        zsock_destroy (&peer->dealer);
        free (peer->endpoint);
        free (peer);
        *item_p = NULL;
    }
}

static peer_t *
s_peer_find (server_t *self, const char *endpoint)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        if (streq (peer->endpoint, endpoint))
            return peer;
    return NULL;
}

//  Log a refused peering once per endpoint; after REFUSED_MAX endpoints,
//  only count, so that a stream of fake peers cannot fill the log.
static void
s_refuse_peer (server_t *self, const char *endpoint, const char *why)
{
    self->refusals++;
    if (zhashx_lookup (self->refused, endpoint))
        return;
    if (zhashx_size (self->refused) == REFUSED_MAX) {
        if (self->refusals % 1000 == 1)
            zsys_warning ("supernode: %" PRIu64 " peerings refused so far, "
                          "no longer logged one by one", self->refusals);
        return;
    }
    zhashx_insert (self->refused, endpoint, (void *) "");
    zsys_warning ("supernode: not peering with %s: %s", endpoint, why);
}

//  The peer at endpoint, connected now if it is new and within the bound;
//  NULL if it is us or refused.  A configured peer is reached with the key
//  of the super-node certificate for its endpoint; a learned one with
//  server_key, the key its PEER_STATE was authenticated with.
static peer_t *
s_peer_add (server_t *self, const char *endpoint, bool configured,
            const char *server_key)
{
    peer_t *peer = s_peer_find (self, endpoint);
    if (peer || !*endpoint
    ||  (self->endpoint && streq (endpoint, self->endpoint)))
        return peer;
    if (zlistx_size (self->peers) >= self->max_peers) {
        s_refuse_peer (self, endpoint, "--max-peers reached");
        return NULL;
    }
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, JACE_MSG_HEADER_MAX);
    //  Nothing queues for a peer we are not connected to.
    zsock_set_immediate (dealer, 1);
    zsock_set_sndhwm (dealer, PEER_SNDHWM);
    //  A peer only answers our RESERVEs (GRANTs, header frames): as on the
    //  ROUTER, at most RCVHWM x JACE_MSG_HEADER_MAX waiting.
    zsock_set_rcvhwm (dealer, RCVHWM);
    char reason [256] = "cannot connect";
    if (configured)
        server_key = jace_security_supernode_key (self->security, endpoint,
                                                  reason, sizeof reason);
    if (jace_security_apply_client (self->security, dealer, server_key)
    ||  zsock_connect (dealer, "%s", endpoint)) {
        zsock_destroy (&dealer);
        s_refuse_peer (self, endpoint, reason);
        return NULL;
    }
    peer = (peer_t *) zmalloc (sizeof *peer);
    peer->endpoint = strdup (endpoint);
    peer->dealer = dealer;
    peer->configured = configured;
    zlistx_add_end (self->peers, peer);
    zpoller_add (self->poller, dealer);
    zsys_notice ("supernode: peering with %s (%zu peers)", endpoint,
                 zlistx_size (self->peers));
    return peer;
}

//  Drop a peer (a learned one that fell silent): frees its slot.
static void
s_peer_remove (server_t *self, peer_t *peer)
{
    zpoller_remove (self->poller, peer->dealer);
    supernode_probe_forget_socket (self->probe, peer->dealer);
    supernode_probe_forget_peer (self->probe, peer->endpoint);
    void *handle = zlistx_find (self->peers, peer);
    assert (handle);
    zlistx_delete (self->peers, handle);
}

//  Filters over our records (supernode_registry_filter_fn).  A peer
//  lists the daemon from a record fresher than ours: it moved there.
static bool
s_moved_away (const char *id, int64_t appeared_at, void *arg)
{
    server_t *self = (server_t *) arg;
    return supernode_overlay_newest (self->overlay, id) > appeared_at;
}

//  Not ours to lease: it moved away, or a peer still has it leased or
//  working (a lease it granted before the daemon failed over to us).
static bool
s_not_leasable (const char *id, int64_t appeared_at, void *arg)
{
    server_t *self = (server_t *) arg;
    return s_moved_away (id, appeared_at, arg)
        || supernode_overlay_is_busy (self->overlay, id);
}

//  --------------------------------------------------------------------------
//  Set-up

static int
s_start (server_t *self, supernode_config_t *config)
{
    char reason [512] = "";
    self->security = jace_security_new (config->keys_dir,
        config->cert ? config->cert : JACE_SUPERNODE_CERT,
        reason, sizeof reason);
    if (!self->security)
        goto out_fail;
    if (jace_security_check_bind (self->security, config->bind,
                                  config->insecure, reason, sizeof reason))
        goto out_fail;
    self->router = zsock_new (ZMQ_ROUTER);
    //  Headers up to JACE_MSG_HEADER_MAX: PEER_STATE listings.
    jace_msg_prepare_socket (self->router, JACE_MSG_HEADER_MAX);
    zsock_set_rcvhwm (self->router, RCVHWM);
    jace_security_apply_server (self->security, self->router);
    if (jace_msg_bind (self->router, config->bind) < 0) {
        snprintf (reason, sizeof reason, "cannot bind %s: %s", config->bind,
                  zmq_strerror (zmq_errno ()));
        goto out_fail;
    }
    self->probe = supernode_probe_new (config->platform, reason,
                                       sizeof reason);
    if (!self->probe
    ||  (config->links
         && supernode_probe_share_links (self->probe, config->links, reason,
                                         sizeof reason)))
        goto out_fail;
    if (config->cluster) {
        supernode_probe_set_cluster (self->probe, config->cluster);
        self->cluster_given = true;
    }
    self->endpoint = zsock_last_endpoint (self->router);
    self->registry = supernode_registry_new (self->endpoint,
                                             self->max_daemons);
    zpoller_add (self->poller, self->router);
    for (size_t i = 0; i < config->peer_count; i++)
        s_peer_add (self, config->peers [i], true, NULL);
    zsys_notice ("supernode: serving on %s", self->endpoint);
    return 0;

out_fail:
    self->failure = strdup (reason);
    zsys_error ("supernode: %s", reason);
    return -1;
}

static server_t *
s_server_new (zsock_t *pipe, supernode_config_t *config)
{
    server_t *self = (server_t *) zmalloc (sizeof *self);
    self->pipe = pipe;
    self->poller = zpoller_new (pipe, NULL);
    zpoller_set_nonstop (self->poller, true);
    self->peers = zlistx_new ();
    zlistx_set_destructor (self->peers, s_peer_destroy);
    self->pending = zlistx_new ();
    self->refused = zhashx_new ();
    self->overlay = supernode_overlay_new ();
    self->leases = supernode_leases_new ();
    self->ended = supernode_ended_new ();
    self->max_peers = config->max_peers > 0 ? config->max_peers
                                            : SUPERNODE_MAX_PEERS;
    self->max_daemons = config->max_daemons > 0 ? config->max_daemons
                                                : SUPERNODE_MAX_DAEMONS;
    self->max_lease_msec = config->max_lease_msec > 0
                           ? config->max_lease_msec : SUPERNODE_MAX_LEASE_MSEC;
    self->heartbeat_msec = config->heartbeat_msec > 0
                           ? config->heartbeat_msec : 1000;
    self->timeout_msec = config->timeout_msec > 0
                         ? config->timeout_msec : 4 * self->heartbeat_msec;
    self->verbose = config->verbose;
    self->allow_crash = config->allow_crash;
    self->probe_msec = config->probe_msec > 0 ? config->probe_msec : 0;
    self->routes = zhashx_new ();
    zhashx_set_destructor (self->routes,
                           (zhashx_destructor_fn *) zframe_destroy);
    self->daemon_pings = zhashx_new ();
    zhashx_set_destructor (self->daemon_pings, s_free_item);
    zuuid_t *uuid = zuuid_new ();
    snprintf (self->id, sizeof self->id, "sn-%.8s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
    s_start (self, config);
    return self;
}

static void
s_pending_destroy (pending_t **pending_p)
{
    pending_t *pending = *pending_p;
    if (pending) {
        zframe_destroy (&pending->routing_id);
        jace_msg_destroy (&pending->grant);
        zhashx_destroy (&pending->wanted_ids);
        zhashx_destroy (&pending->granted);
        free (pending);
        *pending_p = NULL;
    }
}

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    for (pending_t *pending = (pending_t *) zlistx_first (self->pending);
         pending; pending = (pending_t *) zlistx_next (self->pending))
        s_pending_destroy (&pending);
    zlistx_destroy (&self->pending);
    zlistx_destroy (&self->peers);
    zhashx_destroy (&self->refused);
    supernode_overlay_destroy (&self->overlay);
    supernode_leases_destroy (&self->leases);
    supernode_ended_destroy (&self->ended);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->router);
    supernode_registry_destroy (&self->registry);
    supernode_probe_destroy (&self->probe);
    zhashx_destroy (&self->daemon_pings);
    zhashx_destroy (&self->routes);
    jace_security_destroy (&self->security);
    free (self->endpoint);
    free (self->failure);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Replies

static void
s_reply (server_t *self, jace_msg_t *request, jace_msg_t **reply_p)
{
    jace_msg_set_routing_id (*reply_p, jace_msg_routing_id (request));
    if (jace_msg_send (reply_p, self->router))
        zsys_warning ("supernode: reply to %s lost (peer gone)",
                      jace_msg_sender (request));
}

//  --------------------------------------------------------------------------
//  Daemons

//  A new daemon refused for lack of room: logged once each time the
//  registry fills, and counted (audit/registry_full).
static void
s_registry_full (server_t *self, const char *id)
{
    self->registry_full++;
    if (self->registry_full_logged)
        return;
    self->registry_full_logged = true;
    zsys_warning ("supernode: registry full (%zu daemons, --max-daemons): "
                  "daemon %s refused, as is every new daemon until one "
                  "leaves (counted in audit/registry_full)",
                  supernode_registry_size (self->registry), id);
}

//  HELLO's record, if it is the sender's own and within bounds; else
//  logged and counted as malformed.
static const jace_node_t *
s_hello_record (server_t *self, jace_msg_t *msg)
{
    char reason [64] = "not its own record";
    const jace_node_t *node = jace_msg_node_count (msg) == 1
                            ? jace_msg_node (msg, 0) : NULL;
    if (node && *jace_msg_sender (msg)
    &&  streq (node->id, jace_msg_sender (msg))
    &&  jace_node_valid (node, reason, sizeof reason))
        return node;
    zsys_warning ("supernode: HELLO from '%s' without its own record (%s), "
                  "dropped", jace_msg_sender (msg), reason);
    self->malformed++;
    return NULL;
}

//  The peers we hear from, named in msg: a daemon or spawner given only
//  us learns where to fail over to when we die.  Peers gone silent are
//  left out, and only configured ones (--peer) or ones that reached us
//  are peers at all.
static void
s_name_peers (server_t *self, jace_msg_t *msg)
{
    int64_t now = zclock_mono ();
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        if (peer->heard && peer->expires_at > now)
            jace_msg_name_supernode (msg, peer->endpoint);
}

//  The lease key a HELLO or BYE carries in its token, or -1 (unauthorised).
static int
s_lease_key (server_t *self, jace_msg_t *msg, jace_key_t *lease_key)
{
    if (jace_key_decode (lease_key, jace_msg_token (msg)) == 0)
        return 0;
    jace_security_unauthorised (self->security, msg, WHO, "daemon %s sent "
                                "no lease key", jace_msg_sender (msg));
    return -1;
}

//  A daemon that still works for a job that is over (it was cut off
//  while its spawner replaced it and ended the job) is told so in its
//  WELCOME, with the proof it checks, and its record here no longer
//  holds it for that lease.
static void
s_tell_job_over (server_t *self, const jace_node_t *node,
                 jace_msg_t *welcome)
{
    const char *proof = supernode_ended_proof (self->ended, node->job);
    if (!proof)
        return;
    jace_msg_set_param (welcome, "job_over", node->job);
    jace_msg_set_param (welcome, "job_over_proof", proof);
    if (supernode_registry_release (self->registry, node->job, node->id))
        zsys_notice ("supernode: daemon %s still works for job %s, which "
                     "is over: told to stop", node->id, node->job);
}

//  A WELCOME for daemon `id`: our heartbeat, our peers, and the lease
//  that holds it (held_for, "" for none), which a daemon checks every
//  ASSIGN against.
static jace_msg_t *
s_welcome (server_t *self, const char *id)
{
    jace_msg_t *welcome = jace_msg_new (JACE_MSG_WELCOME);
    jace_msg_set_sender (welcome, self->id);
    jace_msg_set_interval (welcome, self->heartbeat_msec);
    s_name_peers (self, welcome);
    //  Not held here: a spare that failed over to us is held by its old
    //  super-node still (we hold it again on its job's next renewal,
    //  once the old one forgets it); a token of a lease that lapsed
    //  took it meanwhile
    const char *lease = supernode_registry_lease_of (self->registry, id);
    if (!lease || !*lease)
        lease = supernode_overlay_held_for (self->overlay, id);
    jace_msg_set_param (welcome, "held_for", lease ? lease : "");
    return welcome;
}

//  Daemons whose lease changed hear of it now, not at their next HELLO
//  (up to a second later): a spawner whose lease lapsed may send one of
//  them an ASSIGN meanwhile, with a lease token that is still valid.
static void
s_tell_leases (server_t *self)
{
    zlist_t *ids = supernode_registry_untold (self->registry);
    if (!ids)
        return;
    for (char *id = (char *) zlist_first (ids); id;
         id = (char *) zlist_next (ids)) {
        zframe_t *route = (zframe_t *) zhashx_lookup (self->routes, id);
        if (!route || !supernode_registry_lease_of (self->registry, id))
            continue;
        jace_msg_t *welcome = s_welcome (self, id);
        jace_msg_set_routing_id (welcome, route);
        jace_msg_send (&welcome, self->router);
    }
    zlist_destroy (&ids);
}

static void
s_send_grant (server_t *self, pending_t *pending)
{
    //  The daemons granted hear whose they are first: the ASSIGN this
    //  grant leads to then finds them told.
    s_tell_leases (self);
    jace_msg_set_routing_id (pending->grant, pending->routing_id);
    if (jace_msg_send (&pending->grant, self->router))
        zsys_warning ("supernode: grant for %s lost (spawner gone)",
                      pending->job);
}

static void
s_on_hello (server_t *self, jace_msg_t *msg)
{
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_DAEMON,
                                  WHO))
        return;
    const jace_node_t *node = s_hello_record (self, msg);
    if (!node)
        return;
    //  Keys on: a daemon speaks only for its own key, so that a spawner
    //  reaching it with that key reaches it.
    if (jace_security_enabled (self->security)
    &&  !streq (node->pubkey, jace_msg_user_id (msg))) {
        jace_security_unauthorised (self->security, msg, WHO, "daemon %s "
                                    "claims key %s, not its own", node->id,
                                    node->pubkey);
        return;
    }
    jace_key_t lease_key;
    if (s_lease_key (self, msg, &lease_key))
        return;
    int64_t now = zclock_mono ();
    supernode_refresh_t result = supernode_registry_refresh (self->registry,
        node, &lease_key, jace_msg_user_id (msg), now,
        now + self->timeout_msec,
        supernode_overlay_newest (self->overlay, node->id));
    jace_key_wipe (&lease_key);
    if (result == SUPERNODE_CLAIMED)
        jace_security_unauthorised (self->security, msg, WHO, "daemon %s is "
                                    "live with another lease key or key",
                                    node->id);
    else
    if (result == SUPERNODE_FULL)
        s_registry_full (self, node->id);
    if (result == SUPERNODE_JOINED)
        zsys_notice ("supernode: daemon %s joined (cluster %s, power %.2f, "
                     "%s)", node->id, node->cluster, node->power,
                     node->endpoint);
    if (result != SUPERNODE_JOINED && result != SUPERNODE_REFRESHED)
        return;
    //  Where to PING it, and how to know its PONG.
    zhashx_update (self->routes, node->id,
                   zframe_dup (jace_msg_routing_id (msg)));
    jace_msg_t *welcome = s_welcome (self, node->id);
    s_tell_job_over (self, node, welcome);
    s_reply (self, msg, &welcome);
}

//  Only the daemon itself leaves: with its key and its lease key.
static void
s_on_bye (server_t *self, jace_msg_t *msg)
{
    jace_key_t lease_key;
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_DAEMON,
                                  WHO)
    ||  s_lease_key (self, msg, &lease_key))
        return;
    const char *id = jace_msg_sender (msg);
    int removed = supernode_registry_remove (self->registry, id, &lease_key,
                                             jace_msg_user_id (msg));
    jace_key_wipe (&lease_key);
    if (removed > 0)
        zsys_notice ("supernode: daemon %s left", id);
    else
    if (removed < 0)
        jace_security_unauthorised (self->security, msg, WHO, "daemon %s "
                                    "registered with another lease key or "
                                    "key", id);
}

//  --------------------------------------------------------------------------
//  Leases

//  Ask peers for what we lack; returns the number of peers asked.  Each
//  is asked only for daemons whose freshest record it holds, so a daemon
//  that just failed over is asked of the super-node it talks to.
//  True if one more reservation may wait for peers (PENDING_MAX); else
//  counted, and logged the first time and every 1000th.
static bool
s_may_wait (server_t *self)
{
    if (zlistx_size (self->pending) < PENDING_MAX)
        return true;
    if (self->pending_full++ % 1000 == 0)
        zsys_warning ("supernode: %d reservations wait for peers already: "
                      "answering with our daemons only (%" PRIu64 " so "
                      "far)", PENDING_MAX, self->pending_full);
    return false;
}

//  The RESERVE we pass on to a peer for `count` of request's daemons.
static jace_msg_t *
s_forwarded_reserve (server_t *self, jace_msg_t *request,
                     const char *owner_key, size_t count, int64_t lease_msec)
{
    jace_msg_t *reserve = jace_msg_new (JACE_MSG_RESERVE);
    jace_msg_set_sender (reserve, self->id);
    jace_msg_set_job (reserve, jace_msg_job (request));
    jace_msg_set_endpoint (reserve, jace_msg_endpoint (request));
    jace_msg_set_count (reserve, (int64_t) count);
    jace_msg_set_interval (reserve, lease_msec);
    jace_msg_set_forwarded (reserve, FROM_PEER);
    jace_msg_set_cluster (reserve, jace_msg_cluster (request));
    jace_msg_set_app (reserve, jace_msg_app (request));
    //  The peer makes the lease tokens for the spawner, not for us.
    jace_msg_set_pubkey (reserve, owner_key);
    return reserve;
}

static size_t
s_ask_peers (server_t *self, jace_msg_t *request, const char *owner_key,
             size_t missing, int64_t lease_msec)
{
    size_t asked = 0;
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers);
         peer && missing > 0; peer = (peer_t *) zlistx_next (self->peers)) {
        //  Only those that can run the job: a peer asked for daemons of
        //  another application grants none, and the others are not asked.
        size_t available = supernode_overlay_free_count (self->overlay,
            peer->endpoint, jace_msg_app (request));
        if (available == 0)
            continue;
        size_t count = available < missing ? available : missing;
        jace_msg_t *reserve = s_forwarded_reserve (self, request, owner_key,
                                                   count, lease_msec);
        if (jace_msg_send (&reserve, peer->dealer) == 0) {
            missing -= count;
            asked++;
        }
    }
    return asked;
}

//  By id: the RESERVE for each holder (by endpoint) of the daemons we did
//  not grant, naming those whose freshest record it holds, each once.
//  One pass over the ids, each one's holder looked up once: a pass per
//  peer, each id checked against the grant and the RESERVE being built,
//  kept our loop busy 35 to 55 ms for 1024 ids held by 32 peers.
static zhashx_t *
s_reserves_by_holder (server_t *self, jace_msg_t *request,
                      const char *owner_key, pending_t *pending,
                      int64_t lease_msec)
{
    zhashx_t *reserves = zhashx_new ();
    zhashx_t *named = zhashx_new ();    //  Ids put in a RESERVE (no values)
    for (size_t i = 0; i < jace_msg_node_count (request)
                       && i < pending->wanted; i++) {
        const jace_node_t *node = jace_msg_node (request, i);
        if (zhashx_lookup (pending->granted, node->id)
        ||  zhashx_lookup (named, node->id))
            continue;
        const char *holder = supernode_overlay_holder (self->overlay,
                                                       node->id);
        if (!holder)
            continue;
        jace_msg_t *reserve = (jace_msg_t *) zhashx_lookup (reserves,
                                                            holder);
        if (!reserve) {
            reserve = s_forwarded_reserve (self, request, owner_key, 0,
                                           lease_msec);
            zhashx_insert (reserves, holder, reserve);
        }
        jace_msg_add_node (reserve, node);
        zhashx_insert (named, node->id, (void *) "");
    }
    zhashx_destroy (&named);
    return reserves;
}

//  By id: ask each peer for the daemons we did not grant whose freshest
//  record it holds, in one RESERVE per peer naming only those; the others
//  (unknown, or listed by no peer) are simply not granted.  Returns the
//  number of peers asked.
static size_t
s_ask_peers_ids (server_t *self, jace_msg_t *request, const char *owner_key,
                 pending_t *pending, int64_t lease_msec)
{
    //  Holder's endpoint -> its RESERVE.  The hash frees no message:
    //  jace_msg_send takes those it sends, the loop below the others.
    zhashx_t *reserves = s_reserves_by_holder (self, request, owner_key,
                                               pending, lease_msec);
    size_t asked = 0;
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers)) {
        jace_msg_t *reserve = (jace_msg_t *) zhashx_lookup (reserves,
                                                            peer->endpoint);
        if (!reserve)
            continue;
        zhashx_delete (reserves, peer->endpoint);
        jace_msg_set_count (reserve,
                            (int64_t) jace_msg_node_count (reserve));
        if (jace_msg_send (&reserve, peer->dealer) == 0)
            asked++;
    }
    //  Left: holders that are no longer our peers.
    for (jace_msg_t *reserve = (jace_msg_t *) zhashx_first (reserves);
         reserve; reserve = (jace_msg_t *) zhashx_next (reserves))
        jace_msg_destroy (&reserve);
    zhashx_destroy (&reserves);
    return asked;
}

//  By id: lease those of request's daemons that are free here, and
//  remember which were asked for, so that no peer's grant adds another.
static size_t
s_lease_ids (server_t *self, jace_msg_t *request, const char *owner_key,
             pending_t *pending, int64_t expires_at)
{
    size_t count = jace_msg_node_count (request);
    if (count > pending->wanted)
        count = pending->wanted;
    const char **ids = (const char **) zmalloc ((count + 1)
                                                * sizeof (char *));
    pending->wanted_ids = zhashx_new ();
    for (size_t i = 0; i < count; i++) {
        ids [i] = jace_msg_node (request, i)->id;
        zhashx_update (pending->wanted_ids, ids [i], (void *) "");
    }
    size_t leased = supernode_registry_lease_ids (self->registry,
        pending->job, owner_key, jace_msg_app (request), ids, count,
        expires_at, s_not_leasable, self, pending->grant);
    free (ids);
    return leased;
}

//  The lease time asked for, within (0, max_lease_msec]: a lease of
//  INT64_MAX ms would overflow every deadline computed from it.
static int64_t
s_lease_msec (server_t *self, jace_msg_t *msg)
{
    int64_t lease_msec = jace_msg_interval (msg);
    if (lease_msec > 0 && lease_msec <= self->max_lease_msec)
        return lease_msec;
    zsys_warning ("supernode: %s asks a lease of %" PRId64 " ms for %s, "
                  "capped to %" PRId64 " ms", jace_msg_sender (msg),
                  lease_msec, jace_msg_job (msg), self->max_lease_msec);
    return self->max_lease_msec;
}

//  Key of lease job's owner, here or as a peer lists it, or NULL.
static const char *
s_lease_owner_key (server_t *self, const char *job)
{
    const char *key = supernode_leases_owner_key (self->leases, job);
    return key ? key : supernode_overlay_lease_owner_key (self->overlay, job);
}

//  True unless lease job is known with an owner key other than owner_key
//  (then the message is refused: logged and counted).
static bool
s_owner_may (server_t *self, jace_msg_t *msg, const char *job,
             const char *owner_key)
{
    const char *known = *job ? s_lease_owner_key (self, job) : NULL;
    if (!known || streq (known, owner_key))
        return true;
    jace_security_unauthorised (self->security, msg, WHO, "lease %s belongs "
                                "to key %s", job, *known ? known : "none");
    return false;
}

//  A RESERVE by id names as many daemons as its count, each by a
//  non-empty id; false (counted as malformed) otherwise.  Without records
//  it is a RESERVE by count.
static bool
s_reserve_ids_valid (server_t *self, jace_msg_t *msg)
{
    size_t records = jace_msg_node_count (msg);
    if (records == 0)
        return true;
    bool valid = (int64_t) records == jace_msg_count (msg);
    for (size_t i = 0; valid && i < records; i++)
        valid = *jace_msg_node (msg, i)->id != 0;
    if (valid)
        return true;
    zsys_warning ("supernode: RESERVE by id from %s for %s names %zu "
                  "daemons, count %" PRId64 " (or an empty id), dropped",
                  jace_msg_sender (msg), jace_msg_job (msg), records,
                  jace_msg_count (msg));
    self->malformed++;
    return false;
}

//  RESERVE's job and count, the count capped to GRANT_MAX; false (and
//  counted as malformed) if they make no sense.
static bool
s_reserve_valid (server_t *self, jace_msg_t *msg, int64_t *count)
{
    const char *job = jace_msg_job (msg);
    *count = jace_msg_count (msg);
    if (!*job || *count < 0 || *count > JACE_NODES_MAX) {
        zsys_warning ("supernode: RESERVE from %s with job '%s', count "
                      "%" PRId64 ", dropped", jace_msg_sender (msg), job,
                      *count);
        self->malformed++;
        return false;
    }
    if (*count > GRANT_MAX) {
        zsys_warning ("supernode: %s asks %" PRId64 " daemons for %s, "
                      "capped to %d", jace_msg_sender (msg), *count, job,
                      GRANT_MAX);
        *count = GRANT_MAX;
    }
    return s_reserve_ids_valid (self, msg);
}

//  Remember the ids our own registry granted, before peers add theirs.
static void
s_note_granted (pending_t *pending)
{
    for (size_t i = 0; i < jace_msg_node_count (pending->grant); i++)
        zhashx_update (pending->granted,
                       jace_msg_node (pending->grant, i)->id, (void *) "");
}

//  A lease message from its owner key naming another endpoint: a resumed
//  spawner took the job over.  Listings name it from now on, and the dead
//  spawner's spares go back to the grid (the new owner reserves its own).
static void
s_lease_moved (server_t *self, const char *job, const char *endpoint)
{
    if (!*job || !supernode_leases_move (self->leases, job, endpoint))
        return;
    size_t freed = supernode_registry_release_idle (self->registry, job);
    zsys_info ("supernode: the spawner of %s answers at %s now; %zu daemons "
               "its predecessor had leased and not used are free again",
               job, endpoint, freed);
}

//  A direct RESERVE comes from a spawner, whose key the lease tokens name;
//  a forwarded one from a super-node, naming the spawner's key in pubkey.
static void
s_on_reserve (server_t *self, jace_msg_t *msg)
{
    bool forwarded = jace_msg_forwarded (msg) != 0;
    int64_t count;
    if (!jace_security_authorise (self->security, msg, forwarded
            ? JACE_ROLE_SUPERNODE : JACE_ROLE_SPAWNER, WHO)
    ||  !s_reserve_valid (self, msg, &count))
        return;
    const char *job = jace_msg_job (msg);
    const char *owner_key = forwarded ? jace_msg_pubkey (msg)
                                      : jace_msg_user_id (msg);
    if (!s_owner_may (self, msg, job, owner_key))
        return;
    int64_t lease_msec = s_lease_msec (self, msg);
    int64_t now = zclock_mono ();
    //  Before anything is granted: the new owner's daemons stay its own
    s_lease_moved (self, job, jace_msg_endpoint (msg));
    pending_t *pending = (pending_t *) zmalloc (sizeof *pending);
    snprintf (pending->job, sizeof pending->job, "%s", job);
    pending->routing_id = zframe_dup (jace_msg_routing_id (msg));
    pending->grant = jace_msg_new (JACE_MSG_GRANT);
    jace_msg_set_sender (pending->grant, self->id);
    jace_msg_set_job (pending->grant, job);
    jace_msg_set_count (pending->grant, count);
    pending->wanted = (size_t) count;
    pending->lease_msec = lease_msec;
    pending->granted = zhashx_new ();
    bool by_id = jace_msg_node_count (msg) > 0;
    size_t leased = by_id
        ? s_lease_ids (self, msg, owner_key, pending, now + lease_msec)
        : supernode_registry_lease (self->registry, job, owner_key,
                                    jace_msg_app (msg), (size_t) count,
                                    now + lease_msec, jace_msg_cluster (msg),
                                    s_not_leasable, self, pending->grant);
    s_note_granted (pending);
    //  A peer's part of a lease is listed only while it holds daemons.
    bool begun = (!forwarded || leased > 0)
              && supernode_leases_begin (self->leases, job,
                                         jace_msg_endpoint (msg), owner_key,
                                         now, now + lease_msec);
    if (leased < (size_t) count && !forwarded && s_may_wait (self))
        pending->outstanding = by_id
            ? s_ask_peers_ids (self, msg, owner_key, pending, lease_msec)
            : s_ask_peers (self, msg, owner_key, (size_t) count - leased,
                           lease_msec);
    //  A RESERVE of none keeps a waiting job known (spawner_lease_announce)
    //  every few seconds: said once, when it begins the lease
    if (count == 0 && begun)
        zsys_info ("supernode: %s waits for daemons for %s: its lease "
                   "holds none yet", jace_msg_sender (msg), job);
    else
    if (count > 0)
        zsys_info ("supernode: %s asks %" PRId64 " daemons%s for %s, %zu "
                   "here, %zu peers asked", jace_msg_sender (msg), count,
                   by_id ? " by id" : "", job, leased,
                   pending->outstanding);
    if (pending->outstanding == 0) {
        s_send_grant (self, pending);
        s_pending_destroy (&pending);
        return;
    }
    pending->deadline = now + PEER_WAIT_MSEC;
    zlistx_add_end (self->pending, pending);
}

static pending_t *
s_pending_find (server_t *self, const char *job)
{
    for (pending_t *pending = (pending_t *) zlistx_first (self->pending);
         pending; pending = (pending_t *) zlistx_next (self->pending))
        if (streq (pending->job, job))
            return pending;
    return NULL;
}

static void
s_pending_finish (server_t *self, pending_t *pending)
{
    void *handle = zlistx_find (self->pending, pending);
    assert (handle);
    zlistx_detach (self->pending, handle);
    s_send_grant (self, pending);
    s_pending_destroy (&pending);
}

//  Add a daemon of a peer's grant to ours, with the lease token the peer
//  made for it.
static void
s_grant_add (pending_t *pending, jace_msg_t *peer_grant,
             const jace_node_t *node)
{
    char key [JACE_ID_MAX + 8];
    snprintf (key, sizeof key, "token/%s", node->id);
    const char *token = jace_msg_param (peer_grant, key);
    jace_msg_add_node (pending->grant, node);
    jace_msg_set_param (pending->grant, key, token ? token : "");
    zhashx_insert (pending->granted, node->id, (void *) "");
}

//  A peer's grant: add it to the waiting reservation, but for daemons it
//  already names (one that failed over is listed twice for a while) or
//  beyond what was asked; give those back, and the whole grant if that
//  reservation was already answered.  The RELEASE is marked forwarded:
//  the peer must not pass it on.
static void
s_on_peer_grant (server_t *self, peer_t *peer, jace_msg_t *msg)
{
    pending_t *pending = s_pending_find (self, jace_msg_job (msg));
    jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
    jace_msg_set_sender (release, self->id);
    jace_msg_set_job (release, jace_msg_job (msg));
    jace_msg_set_forwarded (release, FROM_PEER);
    for (size_t i = 0; i < jace_msg_node_count (msg); i++) {
        const jace_node_t *node = jace_msg_node (msg, i);
        if (pending && *node->id
        &&  jace_msg_node_count (pending->grant) < pending->wanted
        &&  !zhashx_lookup (pending->granted, node->id)
        &&  (!pending->wanted_ids
             || zhashx_lookup (pending->wanted_ids, node->id)))
            s_grant_add (pending, msg, node);
        else
            jace_msg_add_node (release, node);
    }
    if (jace_msg_node_count (release) > 0) {
        zsys_info ("supernode: %zu daemons of peer %s's grant for %s given "
                   "back", jace_msg_node_count (release), peer->endpoint,
                   jace_msg_job (msg));
        jace_msg_send (&release, peer->dealer);
    }
    jace_msg_destroy (&release);
    if (pending && --pending->outstanding == 0)
        s_pending_finish (self, pending);
}

//  Forward a lease message (HEARTBEAT or RELEASE) from a spawner to every
//  peer, which may hold some of the lease's daemons; marked forwarded, so
//  that no peer passes it on.
static void
s_forward_to_peers (server_t *self, jace_msg_t *msg)
{
    assert (jace_msg_forwarded (msg) == 0);
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers)) {
        zmsg_t *zmsg = jace_msg_encode (msg);
        jace_msg_t *copy = jace_msg_decode (&zmsg, NULL, 0);
        assert (copy);
        jace_msg_set_forwarded (copy, FROM_PEER);
        jace_msg_send (&copy, peer->dealer);
    }
}

//  A lease message (HEARTBEAT, RELEASE) comes from the lease's owner, or
//  from a super-node passing it on.
static bool
s_lease_message_allowed (server_t *self, jace_msg_t *msg)
{
    if (jace_msg_forwarded (msg))
        return jace_security_authorise (self->security, msg,
                                        JACE_ROLE_SUPERNODE, WHO);
    return jace_security_authorise (self->security, msg, JACE_ROLE_SPAWNER,
                                    WHO)
        && s_owner_may (self, msg, jace_msg_job (msg),
                        jace_msg_user_id (msg));
}

//  Lease again the free daemons a HEARTBEAT names as its spawner's spares;
//  returns how many.
static size_t
s_take_back_spares (server_t *self, jace_msg_t *msg, int64_t expires_at)
{
    size_t count = jace_msg_node_count (msg);
    if (count == 0)
        return 0;
    const char **ids = (const char **) zmalloc (count * sizeof (char *));
    for (size_t i = 0; i < count; i++)
        ids [i] = jace_msg_node (msg, i)->id;
    size_t leased = supernode_registry_lease_ids (self->registry,
        jace_msg_job (msg), jace_msg_user_id (msg), "", ids, count,
        expires_at, s_not_leasable, self, NULL);
    free (ids);
    return leased;
}

//  A HEARTBEAT for a lease we do not know: its spawner died, the lease
//  lapsed, and a resumed spawner renews it now (`resume` may come minutes
//  later).  Without the lease, `jobs` listed the job as orphaned, and
//  `cancel` stopped its daemons behind the live spawner's back, which
//  replaced them all and went on.  The daemons still working for the job
//  are held by it again; the spawner that renews it directly is its owner.
//  Only a job that some daemon of the grid works for: HEARTBEATs of made-up
//  job ids must not fill the lease table.
//  The HEARTBEAT names the spares the spawner holds: those still free
//  are held again too (a spawner stalled past the lease, or whose
//  super-node died, believed it held them while another job took them).
static void
s_lease_taken_back (server_t *self, jace_msg_t *msg, int64_t now,
                    int64_t expires_at)
{
    const char *job = jace_msg_job (msg);
    //  A renewal late behind the job's end (a peer's RELEASE and the old
    //  link's HEARTBEAT are not ordered) begins nothing
    if (supernode_ended_proof (self->ended, job))
        return;
    size_t daemons = supernode_registry_take_back (self->registry, job,
                                                   expires_at);
    bool works = daemons > 0
              || supernode_overlay_works_for (self->overlay, job);
    size_t spares = works ? s_take_back_spares (self, msg, expires_at) : 0;
    if (jace_msg_forwarded (msg) || !works)
        return;                 //  A peer's part is listed by its owner's
    supernode_leases_begin (self->leases, job, jace_msg_endpoint (msg),
                            jace_msg_user_id (msg), now, expires_at);
    zsys_info ("supernode: lease %s had lapsed; renewed by its spawner at "
               "%s, which holds it again (%zu of its daemons here, %zu "
               "spares)", job, jace_msg_endpoint (msg), daemons, spares);
}

//  The lease owner's last word: its job is over (supernode_ended), with
//  the proof its daemons will check.  Only from the key of a lease we
//  know: a lease that lapsed may be resumed, and its daemons wait for
//  that.
static void
s_on_job_over (server_t *self, jace_msg_t *msg, int64_t now)
{
    const char *job = jace_msg_job (msg);
    const char *owner_key = *job ? s_lease_owner_key (self, job) : NULL;
    if (jace_msg_forwarded (msg) == 0
    &&  (!owner_key || !streq (owner_key, jace_msg_user_id (msg)))) {
        jace_security_unauthorised (self->security, msg, WHO, "job over "
                                    "for lease '%s', which it does not "
                                    "hold", job);
        return;
    }
    if (supernode_ended_add (self->ended, job, now, jace_msg_token (msg)))
        zsys_info ("supernode: job %s is over, says its spawner%s", job,
                   jace_msg_forwarded (msg) ? " (through a peer)" : "");
    if (jace_msg_forwarded (msg) == 0)
        s_forward_to_peers (self, msg);
}

static void
s_on_lease_heartbeat (server_t *self, jace_msg_t *msg)
{
    if (!s_lease_message_allowed (self, msg))
        return;
    int64_t now = zclock_mono ();
    if (jace_msg_state (msg) == JACE_LEASE_OVER) {
        s_on_job_over (self, msg, now);
        return;
    }
    int64_t expires_at = now + self->timeout_msec;
    const char *job = jace_msg_job (msg);
    supernode_registry_renew (self->registry, job, expires_at);
    if (*job && !supernode_leases_renew (self->leases, job, expires_at))
        s_lease_taken_back (self, msg, now, expires_at);
    else
    if (*job && !supernode_ended_proof (self->ended, job))
        //  A spare that registered here after the lease moved (its
        //  super-node died with ours) is held again as it arrives
        s_take_back_spares (self, msg, expires_at);
    s_lease_moved (self, job, jace_msg_endpoint (msg));
    if (jace_msg_forwarded (msg) == 0) {
        //  Heard: a spawner whose super-node died fails over when these
        //  stop (it renewed into the void, and its lease lapsed
        //  everywhere while the job ran)
        jace_msg_t *heard = jace_msg_new (JACE_MSG_HEARTBEAT);
        jace_msg_set_sender (heard, self->id);
        jace_msg_set_job (heard, job);
        s_reply (self, msg, &heard);
        s_forward_to_peers (self, msg);
    }
}

static void
s_on_release (server_t *self, jace_msg_t *msg)
{
    if (!s_lease_message_allowed (self, msg))
        return;
    const char *job = jace_msg_job (msg);
    size_t released = 0;
    for (size_t i = 0; i < jace_msg_node_count (msg); i++)
        released += supernode_registry_release (self->registry, job,
                                                jace_msg_node (msg, i)->id);
    if (released)
        zsys_info ("supernode: %zu daemons of %s released", released, job);
    //  The lease as a job ends here with its last daemon here.
    if (*job && !supernode_registry_holds (self->registry, job)
    &&  supernode_leases_end (self->leases, job))
        zsys_info ("supernode: lease %s ended", job);
    if (jace_msg_forwarded (msg) == 0)
        s_forward_to_peers (self, msg);
}

//  --------------------------------------------------------------------------
//  Status and peering

//  Our leases, and with_peers our peers' too, into msg's params.
static void
s_describe_leases (server_t *self, jace_msg_t *msg, bool with_peers)
{
    int64_t now = zclock_mono ();
    size_t left_out = supernode_leases_describe (self->leases, msg, now,
                                                 LEASES_LISTED_MAX);
    if (with_peers)
        left_out += supernode_overlay_describe_leases (self->overlay, msg,
                                                       now, LEASES_LISTED_MAX);
    if (left_out && !self->leases_cut_logged) {
        zsys_warning ("supernode: %zu leases left out of a listing (at most "
                      "%d listed)", left_out, LEASES_LISTED_MAX);
        self->leases_cut_logged = true;
    }
}

static void
s_set_count (jace_msg_t *msg, const char *key, uint64_t value)
{
    char text [32];
    snprintf (text, sizeof text, "%" PRIu64, value);
    jace_msg_set_param (msg, key, text);
}

//  What we refused so far, and the lease traffic we received: a lease
//  forwarded in a loop between peers shows as a count that keeps growing
//  (AUDIT_PARAMS at most, after the leases).
static void
s_describe_audit (server_t *self, jace_msg_t *msg)
{
    s_set_count (msg, "audit/refused_connections",
                 jace_security_refused_count (self->security));
    s_set_count (msg, "audit/unauthorised",
                 jace_security_unauthorised_count (self->security));
    s_set_count (msg, "audit/registry_full", self->registry_full);
    s_set_count (msg, "audit/malformed", self->malformed);
    s_set_count (msg, "traffic/lease_messages", self->lease_messages);
}

//  From anyone: the registry is what clients choose daemons from.
static void
s_on_status (server_t *self, jace_msg_t *msg)
{
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, self->id);
    supernode_registry_describe (self->registry, s_moved_away, self, reply);
    supernode_overlay_describe (self->overlay, self->registry, reply);
    s_describe_leases (self, reply, true);
    s_describe_audit (self, reply);
    supernode_probe_describe (self->probe, reply, true);
    s_name_peers (self, reply);
    s_reply (self, msg, &reply);
}

//  Only a super-node peers; we reach a peer we learn of here with the key
//  it spoke with.  At most max_daemons of its records are taken.
static void
s_on_peer_state (server_t *self, jace_msg_t *msg)
{
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_SUPERNODE,
                                  WHO))
        return;
    peer_t *peer = s_peer_add (self, jace_msg_endpoint (msg), false,
                               jace_msg_user_id (msg));
    if (!peer)
        return;
    if (!peer->heard)
        zsys_notice ("supernode: peer %s reports %zu daemons",
                     peer->endpoint, jace_msg_node_count (msg));
    int64_t now = zclock_mono ();
    size_t left_out = supernode_overlay_update (self->overlay,
        peer->endpoint, msg, now, self->max_daemons);
    if (left_out && left_out != peer->left_out)
        zsys_warning ("supernode: %zu records of peer %s left out (invalid, "
                      "or beyond --max-daemons %zu)", left_out,
                      peer->endpoint, self->max_daemons);
    peer->left_out = left_out;
    peer->heard = true;
    snprintf (peer->id, sizeof peer->id, "%s", jace_msg_sender (msg));
    const char *cluster = jace_msg_param (msg, "cluster");
    if (cluster && jace_name_plain (cluster))
        snprintf (peer->cluster, sizeof peer->cluster, "%s", cluster);
    supernode_probe_learn (self->probe, peer->endpoint, msg);
    supernode_ended_read (self->ended, msg, now);
    peer->expires_at = now + self->timeout_msec;
}

//  Every peer gets our daemons (but those a fresher record elsewhere
//  supersedes) and our leases.
static void
s_send_peer_states (server_t *self)
{
    if (zlistx_size (self->peers) == 0)
        return;
    jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
    jace_msg_set_sender (state, self->id);
    jace_msg_set_endpoint (state, self->endpoint);
    supernode_registry_describe (self->registry, s_moved_away, self, state);
    s_describe_leases (self, state, false);
    supernode_ended_describe (self->ended, state, zclock_mono ());
    //  Our cluster, for peers to emulate the link to us.
    jace_msg_set_param (state, "cluster",
                        supernode_probe_cluster (self->probe));
    //  Only what we measured: relayed figures would outlive their
    //  measurer, passed back and forth between its survivors.
    supernode_probe_describe (self->probe, state, false);
    //  Encoded once for all peers: a header frame and no payload.
    zmsg_t *encoded = jace_msg_encode (state);
    jace_msg_destroy (&state);
    assert (zmsg_size (encoded) == 1);
    zframe_t *header = zmsg_first (encoded);
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        zmq_send (zsock_resolve (peer->dealer), zframe_data (header),
                  zframe_size (header), ZMQ_DONTWAIT);
    zmsg_destroy (&encoded);
}

//  --------------------------------------------------------------------------
//  Probes (docs/MAPPING.md, section 1)

static peer_t *
s_peer_by_id (server_t *self, const char *id)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        if (*id && streq (peer->id, id))
            return peer;
    return NULL;
}

//  True if msg comes from the connection daemon `sender` last registered
//  on: a PONG or PING naming a daemon from elsewhere is forged.
static bool
s_from_registered_daemon (server_t *self, jace_msg_t *msg)
{
    zframe_t *route = (zframe_t *) zhashx_lookup (self->routes,
                                                  jace_msg_sender (msg));
    return route && jace_msg_routing_id (msg)
        && zframe_eq (route, jace_msg_routing_id (msg))
        && supernode_registry_appeared_at (self->registry,
                                           jace_msg_sender (msg)) >= 0;
}

//  A peer's PING gets a PONG, held for the
//  emulated link back; it never carries the padding, so a probe costs us
//  no more than it cost its sender.
static void
s_on_ping (server_t *self, jace_msg_t *msg)
{
    //  Only peers probe us (daemons only answer): anyone else would just
    //  fill our queue of held answers.
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_SUPERNODE,
                                  WHO))
        return;
    peer_t *peer = s_peer_by_id (self, jace_msg_sender (msg));
    if (!peer) {
        jace_security_unauthorised (self->security, msg, WHO, "PING from "
                                    "'%s', not a peer", jace_msg_sender (msg));
        return;
    }
    const char *remote = *peer->cluster ? peer->cluster
                       : jace_name_plain (jace_msg_cluster (msg))
                       ? jace_msg_cluster (msg) : "";
    jace_msg_t *pong = jace_msg_new (JACE_MSG_PONG);
    jace_msg_set_iteration (pong, zclock_usecs ());    //  When it came
    jace_msg_set_sender (pong, self->id);
    jace_msg_set_cluster (pong, supernode_probe_cluster (self->probe));
    jace_msg_set_count (pong, jace_msg_count (msg));
    jace_msg_set_routing_id (pong, jace_msg_routing_id (msg));
    supernode_probe_send (self->probe, self->router, remote, &pong);
}

//  A PONG that answers no probe of ours (forged, duplicate, too late) is
//  dropped and counted.
static void
s_bad_pong (server_t *self, jace_msg_t *msg, const char *from)
{
    self->malformed++;
    if (self->verbose || self->malformed <= 10
    ||  self->malformed % 1000 == 0)
        zsys_warning ("supernode: PONG %" PRId64 " from %s answers no probe "
                      "of ours, dropped (%" PRIu64 " bad messages so far)",
                      jace_msg_count (msg), from, self->malformed);
}

static void
s_on_daemon_pong (server_t *self, jace_msg_t *msg)
{
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_DAEMON,
                                  WHO))
        return;
    if (!s_from_registered_daemon (self, msg)) {
        jace_security_unauthorised (self->security, msg, WHO, "PONG from "
                                    "'%s', not a registered daemon",
                                    jace_msg_sender (msg));
        return;
    }
    //  Its cluster is the one it registered with, not what it says now.
    if (!supernode_probe_pong (self->probe, jace_msg_sender (msg),
                               jace_msg_count (msg), "",
                               jace_msg_iteration (msg)))
        s_bad_pong (self, msg, jace_msg_sender (msg));
}

static void
s_on_peer_pong (server_t *self, peer_t *peer, jace_msg_t *msg)
{
    char target [JACE_ENDPOINT_MAX + 8];
    snprintf (target, sizeof target, "peer:%s", peer->endpoint);
    if (!supernode_probe_pong (self->probe, target, jace_msg_count (msg),
                               jace_msg_cluster (msg),
                               jace_msg_iteration (msg))) {
        s_bad_pong (self, msg, peer->endpoint);
        return;
    }
    if (*jace_msg_cluster (msg) && jace_name_plain (jace_msg_cluster (msg)))
        snprintf (peer->cluster, sizeof peer->cluster, "%s",
                  jace_msg_cluster (msg));
}

//  The cluster most of our daemons (in msg) name; ties: the smallest
//  name; "" with none.
static void
s_majority_cluster (jace_msg_t *daemons, char *cluster, size_t size)
{
    zhashx_t *counts = zhashx_new ();
    zhashx_set_destructor (counts, s_free_item);
    size_t best = 0;
    *cluster = 0;
    for (size_t i = 0; i < jace_msg_node_count (daemons); i++) {
        const char *name = jace_msg_node (daemons, i)->cluster;
        size_t *count = (size_t *) zhashx_lookup (counts, name);
        if (!count) {
            count = (size_t *) zmalloc (sizeof *count);
            zhashx_insert (counts, name, count);
        }
        ++*count;
        if (*count > best || (*count == best && strcmp (name, cluster) < 0)) {
            best = *count;
            snprintf (cluster, size, "%s", name);
        }
    }
    zhashx_destroy (&counts);
}

//  The daemon of one cluster to PING this period: the one probed longest
//  ago (never probed: first of all).
typedef struct {
    const jace_node_t *node;
    int64_t probed_at;
} probe_pick_t;

static void
s_ping_daemon (server_t *self, const jace_node_t *node)
{
    int64_t *pinged = (int64_t *) zhashx_lookup (self->daemon_pings,
                                                 node->id);
    if (!pinged) {
        pinged = (int64_t *) zmalloc (sizeof *pinged);
        zhashx_insert (self->daemon_pings, node->id, pinged);
    }
    *pinged = zclock_mono ();
    zframe_t *route = (zframe_t *) zhashx_lookup (self->routes, node->id);
    //  Bulk too: a cluster with no super-node of its own has no peer to
    //  measure its bandwidth by, and was mapped on a default.
    jace_msg_t *pings [SUPERNODE_PROBE_BURST];
    size_t count = supernode_probe_pings (self->probe, node->id,
                                          node->cluster, true, pings);
    for (size_t i = 0; i < count; i++) {
        jace_msg_set_sender (pings [i], self->id);
        jace_msg_set_routing_id (pings [i], route);
        supernode_probe_send (self->probe, self->router, node->cluster,
                              &pings [i]);
    }
}

//  A PING, on its HELLO's connection, to one daemon of each cluster
//  registered here, the one probed longest ago, so that every daemon is
//  probed in turn; routes of daemons no longer registered here are
//  dropped.  A link is a cluster pair: a second sample of the same pair
//  in one period adds nothing to its figure, and each PING and PONG costs
//  this super-node thread wake-ups (0.1-0.3 ms of CPU each on a VM): 16
//  daemons probed every period cost more than all else it does idle.
static void
s_probe_daemons (server_t *self, jace_msg_t *daemons, bool send)
{
    zhashx_t *listed = zhashx_new ();
    zhashx_t *picks = zhashx_new ();
    zhashx_set_destructor (picks, s_free_item);
    for (size_t i = 0; i < jace_msg_node_count (daemons); i++) {
        const jace_node_t *node = jace_msg_node (daemons, i);
        zhashx_update (listed, node->id, (void *) "");
        if (!send || !zhashx_lookup (self->routes, node->id))
            continue;
        int64_t *pinged = (int64_t *) zhashx_lookup (self->daemon_pings,
                                                     node->id);
        int64_t probed_at = pinged ? *pinged : -1;
        probe_pick_t *pick = (probe_pick_t *) zhashx_lookup (picks,
                                                             node->cluster);
        if (!pick) {
            pick = (probe_pick_t *) zmalloc (sizeof *pick);
            zhashx_insert (picks, node->cluster, pick);
        }
        else
        if (pick->probed_at <= probed_at)
            continue;
        pick->node = node;
        pick->probed_at = probed_at;
    }
    for (probe_pick_t *pick = (probe_pick_t *) zhashx_first (picks); pick;
         pick = (probe_pick_t *) zhashx_next (picks))
        s_ping_daemon (self, pick->node);
    zhashx_destroy (&picks);
    zlist_t *gone = zlist_new ();
    zlist_autofree (gone);
    for (void *route = zhashx_first (self->routes); route;
         route = zhashx_next (self->routes))
        if (!zhashx_lookup (listed, zhashx_cursor (self->routes)))
            zlist_append (gone, (void *) zhashx_cursor (self->routes));
    for (char *id = (char *) zlist_first (gone); id;
         id = (char *) zlist_next (gone)) {
        zhashx_delete (self->routes, id);
        zhashx_delete (self->daemon_pings, id);
    }
    zlist_destroy (&gone);
    zhashx_destroy (&listed);
}

static void
s_probe_peers (server_t *self)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers)) {
        char target [JACE_ENDPOINT_MAX + 8];
        snprintf (target, sizeof target, "peer:%s", peer->endpoint);
        jace_msg_t *pings [SUPERNODE_PROBE_BURST];
        size_t count = supernode_probe_pings (self->probe, target,
                                              peer->cluster, true, pings);
        for (size_t i = 0; i < count; i++) {
            jace_msg_set_sender (pings [i], self->id);
            supernode_probe_send (self->probe, peer->dealer, peer->cluster,
                                  &pings [i]);
        }
    }
}

//  Every probe period: our cluster (unless given), then a PING to every
//  peer and daemon.  Run every heartbeat too, without PINGs, when probes
//  are off: the routes and the cluster still follow the registry.
static void
s_probe (server_t *self, bool ping)
{
    jace_msg_t *daemons = jace_msg_new (JACE_MSG_STATUS_REPLY);
    supernode_registry_describe (self->registry, s_moved_away, self,
                                 daemons);
    if (!self->cluster_given) {
        char cluster [JACE_ID_MAX];
        s_majority_cluster (daemons, cluster, sizeof cluster);
        supernode_probe_set_cluster (self->probe, cluster);
    }
    s_probe_daemons (self, daemons, ping);
    jace_msg_destroy (&daemons);
    if (!ping)
        return;
    s_probe_peers (self);
    int64_t now = zclock_mono ();
    supernode_probe_prune (self->probe,
                           now - PROBE_FORGET_PERIODS * self->probe_msec);
    supernode_probe_forget_links (self->probe,
                                  now - LINK_FORGET_PERIODS
                                        * self->probe_msec);
    //  A quarter either way: super-nodes started together probed in step,
    //  so their bulk probes (and bursts) crossed a shared backbone at the
    //  same moment and each measured the others' (a 20 Mb/s KPBS backbone
    //  of 2 lanes read 10.5 Mb/s, and 1 transfer at full speed)
    self->next_probe = now + self->probe_msec * 3 / 4
                     + randombytes_uniform ((uint32_t) self->probe_msec / 2
                                            + 1);
}

//  --------------------------------------------------------------------------
//  Input

//  The crash tools' power cut, for grids whose processes we cannot
//  signal: die at once, telling no one.  Refused unless --allow-crash.
static void
s_on_crash (server_t *self, jace_msg_t *msg)
{
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_SPAWNER,
                                  WHO))
        return;
    if (!self->allow_crash) {
        self->malformed++;
        zsys_warning ("supernode: CRASH from %s refused (start with "
                      "--allow-crash to obey it)", jace_msg_sender (msg));
        return;
    }
    zsys_notice ("supernode: crashed on purpose by %s",
                 jace_msg_sender (msg));
    _exit (137);
}

static void
s_on_router_message (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *msg = *msg_p;
    if (self->verbose)
        zsys_debug ("supernode: %s from %s", jace_msg_type_name (
                    jace_msg_type (msg)), jace_msg_sender (msg));
    int type = jace_msg_type (msg);
    if (type == JACE_MSG_RESERVE || type == JACE_MSG_HEARTBEAT
    ||  type == JACE_MSG_RELEASE)
        self->lease_messages++;
    switch (type) {
        case JACE_MSG_HELLO:        s_on_hello (self, msg); break;
        case JACE_MSG_BYE:          s_on_bye (self, msg); break;
        case JACE_MSG_RESERVE:      s_on_reserve (self, msg); break;
        case JACE_MSG_HEARTBEAT:    s_on_lease_heartbeat (self, msg); break;
        case JACE_MSG_RELEASE:      s_on_release (self, msg); break;
        case JACE_MSG_STATUS:       s_on_status (self, msg); break;
        case JACE_MSG_CRASH:        s_on_crash (self, msg); break;
        case JACE_MSG_PEER_STATE:   s_on_peer_state (self, msg); break;
        case JACE_MSG_PING:         s_on_ping (self, msg); break;
        case JACE_MSG_PONG:         s_on_daemon_pong (self, msg); break;
        default:
            self->malformed++;
            zsys_warning ("supernode: unexpected %s from %s, dropped "
                          "(%" PRIu64 " bad messages so far)",
                          jace_msg_type_name (jace_msg_type (msg)),
                          jace_msg_sender (msg), self->malformed);
    }
}

static void
s_recv_router (server_t *self)
{
    char reason [256], sender [128];
    jace_msg_t *msg = jace_msg_recv (self->router, reason, sizeof reason,
                                     sender, sizeof sender);
    if (!msg) {
        self->malformed++;
        zsys_warning ("supernode: malformed message from %s: %s "
                      "(%" PRIu64 " bad messages so far)", sender, reason,
                      self->malformed);
        return;
    }
    s_on_router_message (self, &msg);
    jace_msg_destroy (&msg);
}

static void
s_recv_peer (server_t *self, zsock_t *dealer)
{
    peer_t *peer = NULL;
    for (peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        if (peer->dealer == dealer)
            break;
    assert (peer);
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (dealer, reason, sizeof reason, NULL, 0);
    if (!msg) {
        self->malformed++;
        zsys_warning ("supernode: malformed message from peer %s: %s",
                      peer->endpoint, reason);
        return;
    }
    if (jace_msg_type (msg) == JACE_MSG_GRANT) {
        self->lease_messages++;
        s_on_peer_grant (self, peer, msg);
    }
    else
    if (jace_msg_type (msg) == JACE_MSG_PONG)
        s_on_peer_pong (self, peer, msg);
    else {
        self->malformed++;
        zsys_warning ("supernode: unexpected %s from peer %s, dropped",
                      jace_msg_type_name (jace_msg_type (msg)),
                      peer->endpoint);
    }
    jace_msg_destroy (&msg);
}

static void
s_recv_api (server_t *self)
{
    char *command = zstr_recv (self->pipe);
    if (!command)
        return;
    if (streq (command, "$TERM"))
        self->terminated = true;
    else
    if (streq (command, "ENDPOINT"))
        zstr_send (self->pipe, self->endpoint ? self->endpoint : "");
    else
        zsys_error ("supernode: invalid API command '%s'", command);
    zstr_free (&command);
}

//  --------------------------------------------------------------------------
//  Housekeeping, every heartbeat

//  A silent peer's daemons are forgotten (they fail over and reappear);
//  a silent peer we only learned of is dropped, freeing its slot.  A
//  removal moves the list's cursor (s_peer_remove finds the peer), so
//  the walk starts again from the first: those seen are no longer heard.
//  (Kept the next item instead, and two learned peers falling silent
//  together, as a cluster cut off saw them, read the second after it
//  was freed.)
static void
s_expire_peers (server_t *self, int64_t now)
{
    peer_t *peer = (peer_t *) zlistx_first (self->peers);
    while (peer) {
        bool removed = false;
        if (peer->heard && peer->expires_at < now) {
            zsys_notice ("supernode: peer %s silent, forgetting its %zu "
                         "daemons", peer->endpoint, supernode_overlay_forget (
                         self->overlay, peer->endpoint));
            peer->heard = false;
            supernode_probe_forget_peer (self->probe, peer->endpoint);
            if (!peer->configured) {
                s_peer_remove (self, peer);
                removed = true;
            }
        }
        peer = (peer_t *) (removed ? zlistx_first (self->peers)
                                   : zlistx_next (self->peers));
    }
}

//  Our leases not renewed in time, and our records of daemons that moved
//  to a peer.
static void
s_expire_leases_and_moves (server_t *self, int64_t now)
{
    zlist_t *gone = zlist_new ();
    zlist_autofree (gone);
    supernode_leases_expire (self->leases, now, gone);
    supernode_ended_expire (self->ended, now);
    for (char *job = (char *) zlist_first (gone); job;
         job = (char *) zlist_next (gone))
        zsys_info ("supernode: lease %s not renewed, ended", job);
    zlist_purge (gone);
    supernode_registry_drop_moved (self->registry, now, s_moved_away, self,
                                   gone);
    for (char *id = (char *) zlist_first (gone); id;
         id = (char *) zlist_next (gone))
        zsys_notice ("supernode: daemon %s moved to another super-node, "
                     "removed", id);
    zlist_destroy (&gone);
}

static void
s_expire_pending (server_t *self, int64_t now)
{
    pending_t *pending = (pending_t *) zlistx_first (self->pending);
    while (pending) {
        pending_t *next = (pending_t *) zlistx_next (self->pending);
        if (pending->deadline < now)
            s_pending_finish (self, pending);
        pending = next;
    }
}

//  Daemons, peers and leases silent past their time are dropped; not on
//  a tick a heartbeat late or more: then we did not run (a process
//  starved on a loaded machine, or stopped), and what they sent meanwhile
//  waits unread.  Judged on the next tick, once it is read: at load 150
//  the super-nodes of a 128-daemon grid removed hundreds of live daemons
//  a minute, which failed over and came back.
static void
s_expire_silent (server_t *self, int64_t now)
{
    zlist_t *expired = zlist_new ();
    zlist_autofree (expired);
    supernode_registry_expire (self->registry, now, expired);
    for (char *id = (char *) zlist_first (expired); id;
         id = (char *) zlist_next (expired))
        zsys_notice ("supernode: daemon %s silent for %d ms, removed", id,
                     self->timeout_msec);
    zlist_destroy (&expired);
    //  Room again: the next refusal is worth a line.
    if (supernode_registry_size (self->registry)
        < supernode_registry_max (self->registry))
        self->registry_full_logged = false;
    s_expire_peers (self, now);
    s_expire_leases_and_moves (self, now);
}

static void
s_tick (server_t *self)
{
    int64_t now = zclock_mono ();
    if (now - self->next_tick <= self->heartbeat_msec)
        s_expire_silent (self, now);
    s_expire_pending (self, now);
    if (self->probe_msec == 0)
        s_probe (self, false);
    s_send_peer_states (self);
    self->next_tick = now + self->heartbeat_msec;
}

//  --------------------------------------------------------------------------

void
supernode_server_actor (zsock_t *pipe, void *args)
{
    server_t *self = s_server_new (pipe, (supernode_config_t *) args);
    zsock_signal (pipe, 0);
    while (!self->terminated) {
        s_tell_leases (self);
        int64_t wait = self->next_tick - zclock_mono ();
        if (self->endpoint && wait <= 0) {
            s_tick (self);
            continue;
        }
        if (self->endpoint && self->probe_msec > 0) {
            int64_t probe_wait = self->next_probe - zclock_mono ();
            if (probe_wait <= 0) {
                s_probe (self, true);
                continue;
            }
            wait = probe_wait < wait ? probe_wait : wait;
        }
        //  In usec: the emulated links' holds are finer than a msec
        wait *= 1000;
        if (self->endpoint) {
            int64_t due = supernode_probe_flush (self->probe);
            wait = due >= 0 && due < wait ? due : wait;
        }
        void *which = jace_shaper_wait (self->poller,
                                        self->endpoint ? wait : -1);
        if (which == self->pipe)
            s_recv_api (self);
        else
        if (which && which == self->router)
            s_recv_router (self);
        else
        if (which)
            s_recv_peer (self, (zsock_t *) which);
    }
    s_server_destroy (&self);
}

char *
supernode_server_endpoint (zactor_t *server)
{
    assert (server);
    zstr_send (server, "ENDPOINT");
    char *endpoint = zstr_recv (server);
    if (endpoint && !*endpoint)
        zstr_free (&endpoint);
    return endpoint;
}
