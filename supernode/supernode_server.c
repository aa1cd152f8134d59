/*  =========================================================================
    supernode_server - the super-node: registry of daemons, leases, peering

    Timing: daemons send HELLO every heartbeat; one silent for `timeout` is
    dropped.  Peers send PEER_STATE every heartbeat; a peer silent for
    `timeout` has its daemons dropped from our view (they fail over to a
    live super-node and reappear).  A reservation waits at most
    PEER_WAIT_MSEC for its peers' grants before it is answered with what
    was gathered.
    =========================================================================
*/
#include "supernode_server.h"
#include "supernode_registry.h"
#include "jace_msg.h"
#include "jace_security.h"

//  Longest a reservation waits for peers before it is answered.
#define PEER_WAIT_MSEC 1000
//  RESERVE.state marking a request forwarded by a peer (never forwarded on).
#define RESERVE_FROM_PEER 1

//  One peer super-node.
typedef struct {
    char *endpoint;             //  Its ROUTER endpoint
    zsock_t *dealer;            //  Our connection to it
    jace_msg_t *state;          //  Its last PEER_STATE, or NULL
    int64_t expires_at;         //  Its state is stale after this
} peer_t;

//  A reservation waiting for peers' grants.
typedef struct {
    char job [JACE_ID_MAX];     //  Lease id
    zframe_t *routing_id;       //  Spawner to answer
    jace_msg_t *grant;          //  Grant gathered so far
    size_t wanted;              //  Daemons asked for
    size_t outstanding;         //  Peers yet to answer
    int64_t deadline;           //  Answer by then whatever happens
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
    zlistx_t *peers;            //  peer_t items, owned
    zlistx_t *pending;          //  pending_t items, owned
    int heartbeat_msec;         //  HELLO / PEER_STATE period
    int timeout_msec;           //  Silence before expiry
    int64_t next_tick;          //  Next housekeeping (msec)
    uint64_t malformed;         //  Malformed messages dropped
    bool verbose;               //  Log every message
    bool allow_crash;           //  Obey CRASH
    bool terminated;            //  $TERM received
} server_t;


//  --------------------------------------------------------------------------
//  Peers

static void
s_peer_destroy (void **item_p)
{
    peer_t *peer = (peer_t *) *item_p;
    if (peer) {
        zsock_destroy (&peer->dealer);
        jace_msg_destroy (&peer->state);
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

static peer_t *
s_peer_add (server_t *self, const char *endpoint)
{
    peer_t *peer = s_peer_find (self, endpoint);
    if (peer || (self->endpoint && streq (endpoint, self->endpoint)))
        return peer;
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, JACE_MSG_HEADER_MAX);
    if (jace_security_apply_client (self->security, dealer,
            jace_security_supernode_key (self->security))
    ||  zsock_connect (dealer, "%s", endpoint)) {
        zsys_warning ("supernode: cannot connect to peer %s", endpoint);
        zsock_destroy (&dealer);
        return NULL;
    }
    peer = (peer_t *) zmalloc (sizeof *peer);
    peer->endpoint = strdup (endpoint);
    peer->dealer = dealer;
    zlistx_add_end (self->peers, peer);
    zpoller_add (self->poller, dealer);
    zsys_notice ("supernode: peering with %s", endpoint);
    return peer;
}

//  Free daemons a peer last said it has.
static size_t
s_peer_free_count (peer_t *peer)
{
    size_t count = 0;
    if (!peer->state)
        return 0;
    for (size_t i = 0; i < jace_msg_node_count (peer->state); i++)
        if (jace_msg_node (peer->state, i)->state == JACE_NODE_FREE)
            count++;
    return count;
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
    jace_msg_prepare_socket (self->router, JACE_MSG_HEADER_MAX);
    jace_security_apply_server (self->security, self->router);
    if (zsock_bind (self->router, "%s", config->bind) < 0) {
        snprintf (reason, sizeof reason, "cannot bind %s: %s", config->bind,
                  zmq_strerror (zmq_errno ()));
        goto out_fail;
    }
    self->endpoint = zsock_last_endpoint (self->router);
    self->registry = supernode_registry_new (self->endpoint);
    zpoller_add (self->poller, self->router);
    for (size_t i = 0; i < config->peer_count; i++)
        s_peer_add (self, config->peers [i]);
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
    self->heartbeat_msec = config->heartbeat_msec > 0
                           ? config->heartbeat_msec : 500;
    self->timeout_msec = config->timeout_msec > 0
                         ? config->timeout_msec : 4 * self->heartbeat_msec;
    self->verbose = config->verbose;
    self->allow_crash = config->allow_crash;
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
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->router);
    supernode_registry_destroy (&self->registry);
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

static void
s_send_grant (server_t *self, pending_t *pending)
{
    jace_msg_set_routing_id (pending->grant, pending->routing_id);
    if (jace_msg_send (&pending->grant, self->router))
        zsys_warning ("supernode: grant for %s lost (spawner gone)",
                      pending->job);
}

//  --------------------------------------------------------------------------
//  Daemons

static void
s_on_hello (server_t *self, jace_msg_t *msg)
{
    if (jace_msg_node_count (msg) != 1
    ||  !streq (jace_msg_node (msg, 0)->id, jace_msg_sender (msg))
    ||  !*jace_msg_sender (msg)) {
        zsys_warning ("supernode: HELLO from '%s' without its own record, "
                      "dropped", jace_msg_sender (msg));
        self->malformed++;
        return;
    }
    const jace_node_t *node = jace_msg_node (msg, 0);
    int64_t expires_at = zclock_mono () + self->timeout_msec;
    if (supernode_registry_refresh (self->registry, node, expires_at))
        zsys_notice ("supernode: daemon %s joined (cluster %s, power %.2f, "
                     "%s)", node->id, node->cluster, node->power,
                     node->endpoint);
    jace_msg_t *welcome = jace_msg_new (JACE_MSG_WELCOME);
    jace_msg_set_sender (welcome, self->id);
    jace_msg_set_interval (welcome, self->heartbeat_msec);
    s_reply (self, msg, &welcome);
}

static void
s_on_bye (server_t *self, jace_msg_t *msg)
{
    if (supernode_registry_remove (self->registry, jace_msg_sender (msg)))
        zsys_notice ("supernode: daemon %s left", jace_msg_sender (msg));
}

//  --------------------------------------------------------------------------
//  Leases

//  Ask peers for what we lack; returns the number of peers asked.
static size_t
s_ask_peers (server_t *self, const char *job, size_t missing,
             int64_t lease_msec, const char *cluster)
{
    size_t asked = 0;
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers);
         peer && missing > 0; peer = (peer_t *) zlistx_next (self->peers)) {
        size_t available = s_peer_free_count (peer);
        if (available == 0)
            continue;
        size_t count = available < missing ? available : missing;
        jace_msg_t *reserve = jace_msg_new (JACE_MSG_RESERVE);
        jace_msg_set_sender (reserve, self->id);
        jace_msg_set_job (reserve, job);
        jace_msg_set_count (reserve, (int64_t) count);
        jace_msg_set_interval (reserve, lease_msec);
        jace_msg_set_forwarded (reserve, RESERVE_FROM_PEER);
        jace_msg_set_cluster (reserve, cluster);
        if (jace_msg_send (&reserve, peer->dealer) == 0) {
            missing -= count;
            asked++;
        }
    }
    return asked;
}

static void
s_on_reserve (server_t *self, jace_msg_t *msg)
{
    const char *job = jace_msg_job (msg);
    int64_t count = jace_msg_count (msg);
    int64_t lease_msec = jace_msg_interval (msg);
    if (!*job || count < 0 || count > JACE_NODES_MAX || lease_msec <= 0) {
        zsys_warning ("supernode: RESERVE from %s with job '%s', count "
                      "%" PRId64 ", lease %" PRId64 " ms, dropped",
                      jace_msg_sender (msg), job, count, lease_msec);
        self->malformed++;
        return;
    }
    pending_t *pending = (pending_t *) zmalloc (sizeof *pending);
    snprintf (pending->job, sizeof pending->job, "%s", job);
    pending->routing_id = zframe_dup (jace_msg_routing_id (msg));
    pending->grant = jace_msg_new (JACE_MSG_GRANT);
    jace_msg_set_sender (pending->grant, self->id);
    jace_msg_set_job (pending->grant, job);
    jace_msg_set_count (pending->grant, count);
    pending->wanted = (size_t) count;
    size_t leased = supernode_registry_lease (self->registry, job,
        (size_t) count, zclock_mono () + lease_msec, jace_msg_cluster (msg),
        pending->grant);
    if (leased < (size_t) count && jace_msg_forwarded (msg) != RESERVE_FROM_PEER)
        pending->outstanding = s_ask_peers (self, job, (size_t) count - leased,
                                            lease_msec,
                                            jace_msg_cluster (msg));
    zsys_info ("supernode: %s asks %" PRId64 " daemons for %s, %zu here, "
               "%zu peers asked", jace_msg_sender (msg), count, job, leased,
               pending->outstanding);
    if (pending->outstanding == 0) {
        s_send_grant (self, pending);
        s_pending_destroy (&pending);
        return;
    }
    pending->deadline = zclock_mono () + PEER_WAIT_MSEC;
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

//  A peer's grant: add it to the waiting reservation, or give the daemons
//  back if that reservation was already answered.
static void
s_on_peer_grant (server_t *self, peer_t *peer, jace_msg_t *msg)
{
    pending_t *pending = s_pending_find (self, jace_msg_job (msg));
    if (!pending) {
        if (jace_msg_node_count (msg) == 0)
            return;
        jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
        jace_msg_set_sender (release, self->id);
        jace_msg_set_job (release, jace_msg_job (msg));
        for (size_t i = 0; i < jace_msg_node_count (msg); i++)
            jace_msg_add_node (release, jace_msg_node (msg, i));
        jace_msg_send (&release, peer->dealer);
        return;
    }
    for (size_t i = 0; i < jace_msg_node_count (msg)
         && jace_msg_node_count (pending->grant) < pending->wanted; i++)
        jace_msg_add_node (pending->grant, jace_msg_node (msg, i));
    if (--pending->outstanding == 0)
        s_pending_finish (self, pending);
}

//  Forward a lease message (HEARTBEAT or RELEASE) from a spawner to every
//  peer, which may hold some of the lease's daemons.
static void
s_forward_to_peers (server_t *self, jace_msg_t *msg)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers)) {
        zmsg_t *zmsg = jace_msg_encode (msg);
        jace_msg_t *copy = jace_msg_decode (&zmsg, NULL, 0);
        jace_msg_set_forwarded (copy, RESERVE_FROM_PEER);
        jace_msg_send (&copy, peer->dealer);
    }
}

static void
s_on_lease_heartbeat (server_t *self, jace_msg_t *msg)
{
    int64_t expires_at = zclock_mono () + self->timeout_msec;
    supernode_registry_renew (self->registry, jace_msg_job (msg), expires_at);
    if (jace_msg_forwarded (msg) != RESERVE_FROM_PEER)
        s_forward_to_peers (self, msg);
}

static void
s_on_release (server_t *self, jace_msg_t *msg)
{
    size_t released = 0;
    for (size_t i = 0; i < jace_msg_node_count (msg); i++)
        released += supernode_registry_release (self->registry,
            jace_msg_job (msg), jace_msg_node (msg, i)->id);
    if (released)
        zsys_info ("supernode: %zu daemons of %s released", released,
                   jace_msg_job (msg));
    if (jace_msg_forwarded (msg) != RESERVE_FROM_PEER)
        s_forward_to_peers (self, msg);
}

//  --------------------------------------------------------------------------
//  Status and peering

static void
s_on_status (server_t *self, jace_msg_t *msg)
{
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, self->id);
    supernode_registry_describe (self->registry, reply);
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        for (size_t i = 0; peer->state
             && i < jace_msg_node_count (peer->state); i++)
            jace_msg_add_node (reply, jace_msg_node (peer->state, i));
    s_reply (self, msg, &reply);
}

static void
s_on_peer_state (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *msg = *msg_p;
    peer_t *peer = s_peer_add (self, jace_msg_endpoint (msg));
    if (!peer)
        return;
    if (!peer->state)
        zsys_notice ("supernode: peer %s reports %zu daemons",
                     peer->endpoint, jace_msg_node_count (msg));
    jace_msg_destroy (&peer->state);
    peer->state = msg;
    *msg_p = NULL;
    peer->expires_at = zclock_mono () + self->timeout_msec;
}

static void
s_send_peer_states (server_t *self)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers)) {
        jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
        jace_msg_set_sender (state, self->id);
        jace_msg_set_endpoint (state, self->endpoint);
        supernode_registry_describe (self->registry, state);
        jace_msg_send (&state, peer->dealer);
    }
}

//  --------------------------------------------------------------------------
//  Input

//  The crash tools' power cut, for grids whose processes we cannot
//  signal: die at once, telling no one.  Refused unless --allow-crash.
static void
s_on_crash (server_t *self, jace_msg_t *msg)
{
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
    switch (jace_msg_type (msg)) {
        case JACE_MSG_HELLO:        s_on_hello (self, msg); break;
        case JACE_MSG_BYE:          s_on_bye (self, msg); break;
        case JACE_MSG_RESERVE:      s_on_reserve (self, msg); break;
        case JACE_MSG_HEARTBEAT:    s_on_lease_heartbeat (self, msg); break;
        case JACE_MSG_RELEASE:      s_on_release (self, msg); break;
        case JACE_MSG_STATUS:       s_on_status (self, msg); break;
        case JACE_MSG_CRASH:        s_on_crash (self, msg); break;
        case JACE_MSG_PEER_STATE:   s_on_peer_state (self, msg_p); break;
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
    if (jace_msg_type (msg) == JACE_MSG_GRANT)
        s_on_peer_grant (self, peer, msg);
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

static void
s_expire_peers (server_t *self, int64_t now)
{
    for (peer_t *peer = (peer_t *) zlistx_first (self->peers); peer;
         peer = (peer_t *) zlistx_next (self->peers))
        if (peer->state && peer->expires_at < now) {
            zsys_notice ("supernode: peer %s silent, forgetting its %zu "
                         "daemons", peer->endpoint,
                         jace_msg_node_count (peer->state));
            jace_msg_destroy (&peer->state);
        }
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

static void
s_tick (server_t *self)
{
    int64_t now = zclock_mono ();
    zlist_t *expired = zlist_new ();
    zlist_autofree (expired);
    supernode_registry_expire (self->registry, now, expired);
    for (char *id = (char *) zlist_first (expired); id;
         id = (char *) zlist_next (expired))
        zsys_notice ("supernode: daemon %s silent for %d ms, removed", id,
                     self->timeout_msec);
    zlist_destroy (&expired);
    s_expire_peers (self, now);
    s_expire_pending (self, now);
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
        int64_t wait = self->next_tick - zclock_mono ();
        if (self->endpoint && wait <= 0) {
            s_tick (self);
            continue;
        }
        void *which = zpoller_wait (self->poller,
                                    self->endpoint ? (int) wait : -1);
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
