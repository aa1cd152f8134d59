/*  =========================================================================
    daemon_server - a daemon: registers, heartbeats, runs one task

    Failover timing: a super-node that has not answered a HELLO for
    FAILOVER_HEARTBEATS heartbeats (at least FAILOVER_MIN_MSEC) is given up
    for the next one in the list, so with the default 1 s heartbeat a
    daemon is registered elsewhere about 3 s after its super-node dies.
    The period is 1 s rather than shorter because each HELLO and WELCOME
    costs the super-node about 0.3 ms of CPU (ZeroMQ wake-ups): at 500 ms,
    96 idle daemons kept 6 super-nodes at 6% of a core.

    Orphans: the spawner of our job sends a HEARTBEAT every second; any
    message of its for our job counts as a sign of life.  Silent for
    job/orphan_timeout seconds (default 600), it is presumed dead and its
    job failed: we stop the task as a STOP would and are free again,
    rather than iterate for nobody until someone kills us.  A job that
    ended while we were cut off from it is over for good: our super-node
    says so in a WELCOME (job_over), and we stop at once.

    Task data arrives in CHUNKs (daemon_transfer) here, not in the worker:
    this thread answers each with a CHUNK_ACK and keeps heartbeating, and
    the worker gets the ASSIGN whole, once, when the last byte is in.

    Trust (docs/SECURITY.md): an ASSIGN needs the lease token for (job,
    its sender's key, our id) under our lease key, which only our
    super-node has (HELLO's token); its `key` is the job key.  Every other
    message of the job, both ways, is sealed with that key: a process that
    knows only the job id (STATUS publishes it) can neither take us, nor
    stop, crash, adopt, remap or collect the job, nor keep an orphaned job
    alive with HEARTBEATs.  What fails a check is dropped and audited
    (jace_security_unauthorised: rate-limited log, counted).

    Receive limits: the control ROUTER takes frames of JACE_MSG_HEADER_MAX
    (4 MiB: an ASSIGN's header, a 1 MiB CHUNK) and queues CONTROL_RCVHWM
    messages per connection, so a peer can make us hold at most
    16 x 17 frames x 4 MiB (about 1 GiB; 80 MiB with one-payload
    messages, all a spawner sends) before ZeroMQ stops reading from it;
    more waits in the kernel and the sender's queue, nothing is lost.

    Memory between jobs: what a job frees is kept for the next one
    (allocations up to KEPT_ALLOCATION_MAX come from the heap, which is
    not trimmed), and given back once no job has run for TRIM_IDLE_MSEC.
    Fresh memory costs a page fault per 4 KiB: a 25,000-row NAS-CG-like
    block's set-up took 12.8 ms with 2,500 of them, 9.0 ms without
    (BENCHMARKS.md, "A daemon's set-up").
    =========================================================================
*/
#include "daemon_server.h"
#include "daemon_worker.h"
#include "daemon_power.h"
#include "daemon_transfer.h"
#include "daemon_relay.h"
#include "app_table.h"
#include "jace_msg.h"
#include "jace_security.h"
#include "jace_shaper.h"
#include "jace_task.h"
#include "platform.h"

#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define FAILOVER_HEARTBEATS 3
#define FAILOVER_MIN_MSEC 1500
//  A silent super-node with none to fail over to is logged after the same
//  delay, then again this often while it stays silent (not every beat)
#define SILENCE_REPORT_MSEC 60000
//  Super-nodes known at most: those given, then those learned from
//  WELCOMEs (the peers of the one we talk to), so that a daemon given one
//  super-node fails over when it dies.
#define SUPERNODES_KNOWN_MAX 64
//  How long the start-up benchmark runs.
#define POWER_BUDGET_MSEC 200
//  Silence of a spawner after which its job is abandoned, by default.
#define ORPHAN_TIMEOUT_SEC 600
//  Messages queued per control connection: a spawner keeps 4 MiB of
//  CHUNKs unacknowledged (4 of them) besides a few control messages.
#define CONTROL_RCVHWM 16
//  PONGs held for the emulated link at once; a super-node probes us once
//  a period, so more means a flood, and the excess is dropped.
#define PONGS_HELD_MAX 16
//  Allocations kept in the heap when freed (larger ones are mapped and
//  unmapped each time); glibc takes at most 32 MiB here
#define KEPT_ALLOCATION_MAX (32 * 1024 * 1024)
//  Idle time after which the memory a job freed goes back to the system
#define TRIM_IDLE_MSEC 10000

//  A PONG held for the emulated link to our super-node.
typedef struct {
    int64_t due;                //  Send then (usec, monotonic)
    jace_msg_t *msg;            //  Owned
} held_pong_t;

typedef struct {
    zsock_t *pipe;              //  Actor command pipe
    zsock_t *router;            //  Control endpoint: spawners talk here
    zsock_t *supernode;         //  DEALER to the current super-node
    zactor_t *worker;           //  Runs the task, owns the data socket
    zpoller_t *poller;          //  Pipe, router, super-node, worker
    jace_security_t *security;  //  Keys, or plain links
    char *failure;              //  Why we could not start, or NULL
    zlist_t *supernodes;        //  Endpoints (strings), failover order
    char *current;              //  Endpoint of the current super-node
    jace_node_t self_node;      //  Our record: id, endpoints, attributes
    double speed;               //  Emulated speed factor
    size_t checkpoint_memory;   //  Limit on neighbours' copies kept
    const jace_app_t *extra_app;    //  Borrowed: a test's application
    const char *platform_file;  //  Borrowed: platform file to emulate
    platform_t *platform;       //  Its links, or NULL: ours, lent to the
                                //  worker, destroyed after it
    const char *links_path;     //  Borrowed: grid's shared links file
    int heartbeat_msec;         //  HELLO / HEARTBEAT period
    int64_t last_welcome;       //  When the super-node last answered
    bool registered;            //  The current super-node answered once
    int64_t silence_reported;   //  When we last logged its silence, or 0
    int64_t next_heartbeat;     //  When to send the next HELLO
    zframe_t *spawner;          //  Routing id of our spawner, or NULL
    char job [JACE_ID_MAX];     //  Job we work for, or ""
    int64_t spawner_heard;      //  When our spawner last spoke (msec)
    int64_t orphan_msec;        //  Its silence that ends the job
    uint64_t task_memory;       //  Most bytes of task data we take
    jace_key_t lease_key;       //  Our super-node's lease tokens' key
    char held_for [JACE_ID_MAX];    //  Lease holding us, as our super-node
                                    //  last said (WELCOME), or ""
    char lease_text [JACE_KEY_TEXT + 1];    //  ... as HELLO carries it
    jace_key_t job_key;         //  Key of our job (valid while job set)
    daemon_transfer_t *transfer;    //  Task data arriving, or NULL
    int64_t worker_epoch;       //  Epoch of the task the worker was
                                //  handed last, or 0: older than ours
                                //  while a rebalance's block comes in
    daemon_relay_t *relay;      //  Passes our cluster's data on
    uint64_t malformed;         //  Bad messages dropped
    bool verbose;               //  Log every message
    bool terminated;            //  $TERM received
    zlistx_t *pongs;            //  held_pong_t, owned, oldest first
    zlistx_t *acks;             //  CHUNK_ACKs held (held_pong_t), oldest
                                //  first
    double data_mbps;           //  Emulated link the task data crosses
    int64_t data_latency_usec;  //  (from scatter/root), 0 and 0: none
    double local_mbps;          //  Emulated link inside our cluster, the
    int64_t local_latency_usec; //  one relayed data crosses
    int64_t data_arrival;       //  When its last chunk would be in (usec)
    int64_t handover_due;       //  Complete data held until then, or 0
    int64_t trim_due;           //  Give memory back then (msec), or 0
} server_t;


//  Count a bad message; true if it is worth a log line: the first few,
//  then one in a thousand, so that a flood cannot fill the log.
static bool
s_count_bad (server_t *self)
{
    self->malformed++;
    return self->verbose || self->malformed <= 10
        || self->malformed % 1000 == 0;
}

//  --------------------------------------------------------------------------
//  Set-up

//  Endpoint peers can reach: a wildcard host becomes the advertised host.
static char *
s_advertised (const char *bound, const char *advertise)
{
    const char *wildcard = strstr (bound, "://0.0.0.0:");
    if (!wildcard)
        return strdup (bound);
    char host [256] = "localhost";
    if (advertise)
        snprintf (host, sizeof host, "%s", advertise);
    else
        gethostname (host, sizeof host);
    return zsys_sprintf ("%.*s://%s%s", (int) (wildcard - bound), bound,
                         host, wildcard + 10);
}

//  The data endpoint binds the control endpoint's host on any port.
static char *
s_data_bind (const char *bind)
{
    const char *colon = strrchr (bind, ':');
    if (strncmp (bind, "tcp://", 6) == 0 && colon && colon > bind + 5)
        return zsys_sprintf ("%.*s:*", (int) (colon - bind), bind);
    return zsys_sprintf ("%s-data", bind);
}

static int
s_start_worker (server_t *self, const char *bind, const char *advertise)
{
    char *data_bind = s_data_bind (bind);
    daemon_worker_config_t worker_config = {
        .bind = data_bind, .cluster = self->self_node.cluster,
        .platform = self->platform, .links = self->links_path,
        .security = self->security,
        .speed = self->speed, .verbose = self->verbose,
        .checkpoint_memory = self->checkpoint_memory,
        .task_memory = self->task_memory, .app = self->extra_app
    };
    self->worker = zactor_new (daemon_worker_actor, &worker_config);
    zstr_free (&data_bind);
    char *data = daemon_worker_endpoint (self->worker);
    if (!data)
        return -1;
    char *reachable = s_advertised (data, advertise);
    snprintf (self->self_node.data, sizeof self->self_node.data, "%s",
              reachable);
    zstr_free (&reachable);
    zstr_free (&data);
    zpoller_add (self->poller, self->worker);
    return 0;
}

static int
s_bind_control (server_t *self, daemon_config_t *config, const char *bind,
                char *reason, size_t reason_size)
{
    if (jace_security_check_bind (self->security, bind, config->insecure,
                                  reason, reason_size))
        return -1;
    self->router = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (self->router, JACE_MSG_HEADER_MAX);
    zsock_set_rcvhwm (self->router, CONTROL_RCVHWM);
    jace_security_apply_server (self->security, self->router);
    if (jace_msg_bind (self->router, bind) < 0) {
        snprintf (reason, reason_size, "cannot bind %s: %s", bind,
                  zmq_strerror (zmq_errno ()));
        return -1;
    }
    char *bound = zsock_last_endpoint (self->router);
    char *reachable = s_advertised (bound, config->advertise);
    snprintf (self->self_node.endpoint, sizeof self->self_node.endpoint,
              "%s", reachable);
    zstr_free (&reachable);
    zstr_free (&bound);
    zpoller_add (self->poller, self->router);
    if (s_start_worker (self, bind, config->advertise)) {
        snprintf (reason, reason_size, "cannot bind a data endpoint beside "
                  "%s", bind);
        return -1;
    }
    return 0;
}

//  The applications we can run, as our record advertises them (the
//  super-nodes and spawners lease us only for those).
static void
s_describe_apps (server_t *self, jace_node_t *node)
{
    int rc = app_table_advertise (node->apps, sizeof node->apps);
    size_t used = strlen (node->apps);
    if (rc == 0 && self->extra_app) {
        int wrote = snprintf (node->apps + used, sizeof node->apps - used,
                              "%s%s", used ? " " : "", self->extra_app->name);
        if (wrote < 0 || (size_t) wrote >= sizeof node->apps - used) {
            node->apps [used] = 0;
            rc = -1;
        }
    }
    if (rc)
        zsys_warning ("daemon: the names of our applications exceed %d "
                      "bytes; advertising only '%s'", JACE_APPS_MAX,
                      node->apps);
}

static void
s_describe_node (server_t *self, daemon_config_t *config)
{
    jace_node_t *node = &self->self_node;
    if (config->id)
        snprintf (node->id, sizeof node->id, "%s", config->id);
    else {
        zuuid_t *uuid = zuuid_new ();
        snprintf (node->id, sizeof node->id, "d-%.12s", zuuid_str (uuid));
        zuuid_destroy (&uuid);
    }
    snprintf (node->cluster, sizeof node->cluster, "%s",
              config->cluster ? config->cluster : "default");
    snprintf (node->pubkey, sizeof node->pubkey, "%s",
              jace_security_public_key (self->security));
    node->cores = daemon_power_cores ();
    node->memory = daemon_power_memory_mib ();
    node->power = config->power > 0
                ? config->power
                : daemon_power_measure (POWER_BUDGET_MSEC) * self->speed;
    node->state = JACE_NODE_FREE;
    node->task = -1;
    s_describe_apps (self, node);
}

static int
s_start (server_t *self, daemon_config_t *config)
{
    char reason [512] = "";
    const char *bind = config->bind ? config->bind : "tcp://127.0.0.1:*";
    self->security = jace_security_new (config->keys_dir,
        config->cert ? config->cert : "daemon", reason, sizeof reason);
    if (!self->security)
        goto out_fail;
    s_describe_node (self, config);
    if (config->lease_key)
        self->lease_key = *config->lease_key;
    else
        jace_key_random (&self->lease_key);
    jace_key_encode (&self->lease_key, self->lease_text);
    //  Before the worker starts: a platform we cannot read is a bad
    //  command line, refused as the super-node refuses it, not a grid
    //  that silently runs unemulated.
    if (self->platform_file) {
        self->platform = platform_load (self->platform_file, reason,
                                        sizeof reason);
        if (!self->platform)
            goto out_fail;
    }
    if (s_bind_control (self, config, bind, reason, sizeof reason))
        goto out_fail;
    for (size_t i = 0; i < config->supernode_count; i++)
        zlist_append (self->supernodes, (void *) config->supernodes [i]);
    if (zlist_size (self->supernodes) == 0) {
        snprintf (reason, sizeof reason, "no super-node given");
        goto out_fail;
    }
    zsys_notice ("daemon %s: cluster %s, power %.2f GFLOP/s, control %s, "
                 "data %s", self->self_node.id, self->self_node.cluster,
                 self->self_node.power, self->self_node.endpoint,
                 self->self_node.data);
    zsys_notice ("daemon %s: applications %s", self->self_node.id,
                 self->self_node.apps);
    return 0;

out_fail:
    self->failure = strdup (reason);
    zsys_error ("daemon: %s", reason);
    return -1;
}

static void
s_held_pong_destroy (void **item_p)
{
    held_pong_t *held = (held_pong_t *) *item_p;
    if (held) {
        jace_msg_destroy (&held->msg);
        free (held);
        *item_p = NULL;
    }
}

static server_t *
s_server_new (zsock_t *pipe, daemon_config_t *config)
{
    server_t *self = (server_t *) zmalloc (sizeof *self);
    self->pipe = pipe;
    self->poller = zpoller_new (pipe, NULL);
    zpoller_set_nonstop (self->poller, true);
    self->supernodes = zlist_new ();
    zlist_autofree (self->supernodes);
    self->speed = config->speed > 0 && config->speed <= 1 ? config->speed : 1;
    self->checkpoint_memory = config->checkpoint_memory;
    self->extra_app = config->app;
    self->heartbeat_msec = config->heartbeat_msec > 0
                           ? config->heartbeat_msec : 1000;
    self->verbose = config->verbose;
    self->platform_file = config->platform;
    self->links_path = config->links;
    self->pongs = zlistx_new ();
    zlistx_set_destructor (self->pongs, s_held_pong_destroy);
    self->acks = zlistx_new ();
    zlistx_set_destructor (self->acks, s_held_pong_destroy);
    //  Half the node's memory: the application's set-up builds its own
    //  structures from the data, and the neighbours' copies need room.
    int64_t memory_mib = daemon_power_memory_mib ();
    self->task_memory = config->task_memory ? config->task_memory
                      : (uint64_t) (memory_mib > 0 ? memory_mib : 2048) << 19;
    s_start (self, config);
    self->relay = daemon_relay_new (self->security, self->poller);
    return self;
}

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    if (self->supernode) {
        jace_msg_t *bye = jace_msg_new (JACE_MSG_BYE);
        jace_msg_set_sender (bye, self->self_node.id);
        jace_msg_set_token (bye, self->lease_text);
        jace_msg_send (&bye, self->supernode);
    }
    jace_key_wipe (&self->lease_key);
    jace_key_wipe (&self->job_key);
    zactor_destroy (&self->worker);
    daemon_relay_destroy (&self->relay);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->supernode);
    zsock_destroy (&self->router);
    zframe_destroy (&self->spawner);
    daemon_transfer_destroy (&self->transfer);
    zlistx_destroy (&self->pongs);
    zlistx_destroy (&self->acks);
    platform_destroy (&self->platform);
    jace_security_destroy (&self->security);
    zlist_destroy (&self->supernodes);
    free (self->current);
    free (self->failure);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Super-node registration

//  Connect to the next super-node of the list (the first one at start).
static void
s_connect_supernode (server_t *self)
{
    if (self->supernode) {
        zpoller_remove (self->poller, self->supernode);
        zsock_destroy (&self->supernode);
        //  Held PONGs answered the super-node we leave.
        zlistx_purge (self->pongs);
        zsys_warning ("daemon %s: super-node %s silent, failing over",
                      self->self_node.id, self->current);
        //  Rotate: the silent one goes to the back of the list.
        char *silent = (char *) zlist_pop (self->supernodes);
        zlist_append (self->supernodes, silent);    //  Copied: autofree
        free (silent);
    }
    free (self->current);
    self->current = strdup ((char *) zlist_first (self->supernodes));
    self->supernode = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (self->supernode, JACE_MSG_HEADER_MAX);
    char reason [256] = "no valid key";
    if (jace_security_apply_client (self->security, self->supernode,
            jace_security_supernode_key (self->security, self->current,
                                         reason, sizeof reason))
    ||  zsock_connect (self->supernode, "%s", self->current))
        zsys_error ("daemon %s: cannot connect to super-node '%s': %s",
                    self->self_node.id, self->current, reason);
    zpoller_add (self->poller, self->supernode);
    self->last_welcome = zclock_mono ();
    self->registered = false;
    //  held_for stays the old one's last word until the new one speaks:
    //  a spare that fails over is still held for its job a while (its
    //  new super-node holds it again on the job's next renewal)
}

static void
s_send_hello (server_t *self)
{
    jace_msg_t *hello = jace_msg_new (JACE_MSG_HELLO);
    jace_msg_set_sender (hello, self->self_node.id);
    //  Only to our super-node (CURVE, or loopback): it issues the lease
    //  tokens we check on ASSIGN.
    jace_msg_set_token (hello, self->lease_text);
    jace_msg_add_node (hello, &self->self_node);
    jace_msg_send (&hello, self->supernode);
}

//  --------------------------------------------------------------------------
//  Probes: our super-node measures the link to us (docs/MAPPING.md 1)

//  How long our PONG waits on the emulated link to the super-node's
//  cluster (usec); 0 off a virtual grid or for a cluster not in it.
static int64_t
s_pong_hold (server_t *self, const char *remote, size_t bytes)
{
    if (!self->platform)
        return 0;
    int from = platform_cluster_index (self->platform,
                                       self->self_node.cluster);
    int to = platform_cluster_index (self->platform, remote);
    if (from < 0 || to < 0)
        return 0;
    return jace_shaper_delay_nsec (
        platform_latency_us (self->platform, (size_t) from, (size_t) to),
        platform_bandwidth_mbps (self->platform, (size_t) from, (size_t) to),
        bytes) / 1000;
}

//  A PING comes only on our super-node's connection (one on the control
//  socket is dropped as unexpected).  The PONG echoes its count and never
//  its padding.
static void
s_on_ping (server_t *self, jace_msg_t *ping)
{
    jace_msg_t *pong = jace_msg_new (JACE_MSG_PONG);
    jace_msg_set_iteration (pong, zclock_usecs ());    //  When it came
    jace_msg_set_sender (pong, self->self_node.id);
    jace_msg_set_cluster (pong, self->self_node.cluster);
    jace_msg_set_count (pong, jace_msg_count (ping));
    int64_t hold = s_pong_hold (self, jace_msg_cluster (ping), 64);
    if (hold <= 0) {
        jace_msg_send (&pong, self->supernode);
        return;
    }
    if (zlistx_size (self->pongs) >= PONGS_HELD_MAX) {
        jace_msg_destroy (&pong);
        return;
    }
    held_pong_t *held = (held_pong_t *) zmalloc (sizeof *held);
    held->due = zclock_usecs () + hold;
    held->msg = pong;
    zlistx_add_end (self->pongs, held);
}

//  The super-nodes a WELCOME names (the peers of ours) that we did not
//  know: they go to the back of the failover list, after those given.
static void
s_learn_supernodes (server_t *self, jace_msg_t *welcome)
{
    for (size_t i = 0; i < JACE_SUPERNODES_NAMED_MAX; i++) {
        const char *endpoint = jace_msg_named_supernode (welcome, i);
        if (!endpoint || zlist_size (self->supernodes) >= SUPERNODES_KNOWN_MAX)
            continue;
        bool known = false;
        for (char *item = (char *) zlist_first (self->supernodes); item;
             item = (char *) zlist_next (self->supernodes))
            known |= streq (item, endpoint);
        if (known)
            continue;
        zlist_append (self->supernodes, (void *) endpoint);   //  Copied
        zsys_info ("daemon %s: learned of super-node %s from %s",
                   self->self_node.id, endpoint, self->current);
    }
}

//  Send the held PONGs that are due; usec until the next one, or -1 when
//  none waits.  Holds are equal, so the oldest is first.
static int64_t
s_flush_pongs (server_t *self)
{
    int64_t now = zclock_usecs ();
    held_pong_t *held;
    while ((held = (held_pong_t *) zlistx_first (self->pongs))
       &&  held->due <= now) {
        jace_msg_send (&held->msg, self->supernode);
        zlistx_delete (self->pongs, zlistx_cursor (self->pongs));
    }
    return held ? held->due - now : -1;
}

static void s_stop_job (server_t *self, const char *reason);

//  A WELCOME may say that the job we work for is over: its spawner ended
//  it while we could not hear it (a partition), and replaced us.  It
//  will not come back for us, so we do not wait job/orphan_timeout.  The
//  super-node passes on the spawner's proof, made with the job key: only
//  the job's spawner can end it this way.
static void
s_check_job_over (server_t *self, jace_msg_t *welcome)
{
    const char *over = jace_msg_param (welcome, "job_over");
    const char *proof = jace_msg_param (welcome, "job_over_proof");
    if (!over || !*self->job || !streq (over, self->job))
        return;
    if (!proof || !jace_job_over_proof_valid (&self->job_key, self->job,
                                              proof)) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: super-node %s says job %s is over, "
                          "without its proof: ignored", self->self_node.id,
                          self->current, self->job);
        return;
    }
    zsys_notice ("daemon %s: job %s is over, says super-node %s (its "
                 "spawner ended it without us); dropping our task",
                 self->self_node.id, self->job, self->current);
    s_stop_job (self, "job over");
}

static void
s_recv_supernode (server_t *self)
{
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (self->supernode, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: malformed message from super-node "
                          "%s: %s", self->self_node.id, self->current,
                          reason);
        return;
    }
    if (jace_msg_type (msg) == JACE_MSG_WELCOME) {
        s_learn_supernodes (self, msg);
        if (!self->registered)
            zsys_notice ("daemon %s: registered with %s", self->self_node.id,
                         self->current);
        self->registered = true;
        self->last_welcome = zclock_mono ();
        self->silence_reported = 0;
        const char *held_for = jace_msg_param (msg, "held_for");
        snprintf (self->held_for, sizeof self->held_for, "%s",
                  held_for ? held_for : "");
        s_check_job_over (self, msg);
    }
    else
    if (jace_msg_type (msg) == JACE_MSG_PING)
        s_on_ping (self, msg);
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  Spawner

//  Everything we tell our spawner about the job leaves here, sealed with
//  the job key: it trusts no report it cannot check.
static void
s_send_to_spawner (server_t *self, jace_msg_t **msg_p)
{
    if (!self->spawner) {
        jace_msg_destroy (msg_p);
        return;
    }
    jace_msg_seal (*msg_p, self->job_key.bytes);
    jace_msg_set_routing_id (*msg_p, self->spawner);
    //  A vanished spawner is not our failure: the task goes on.
    jace_msg_send (msg_p, self->router);
}

static void
s_leave_job (server_t *self)
{
    *self->job = 0;
    jace_key_wipe (&self->job_key);
    *self->self_node.job = 0;
    self->self_node.state = JACE_NODE_FREE;
    self->self_node.task = -1;
    self->self_node.epoch = 0;
    self->worker_epoch = 0;
    zframe_destroy (&self->spawner);
    daemon_transfer_destroy (&self->transfer);
    daemon_relay_stop (self->relay);
    zlistx_purge (self->acks);
    self->handover_due = 0;
    self->trim_due = zclock_mono () + TRIM_IDLE_MSEC;
    //  Tell the super-node now, not at the next heartbeat: a spawner
    //  waiting for daemons gets this one at once.
    s_send_hello (self);
}

//  The worker drops the task (and the copies it kept for the job) as on
//  the spawner's STOP; we are free.
static void
s_stop_job (server_t *self, const char *reason)
{
    jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
    jace_msg_set_job (stop, self->job);
    jace_msg_set_reason (stop, reason);
    jace_msg_send (&stop, zactor_sock (self->worker));
    s_leave_job (self);
}

//  Answer a request (ASSIGN, CHUNK) with REFUSE, through its routing id,
//  sealed with `key` (the job key the request brought), or unsealed when
//  there is none to use.
static void
s_refuse (server_t *self, const jace_msg_t *request, jace_refuse_code_t code,
          const char *reason, const jace_key_t *key)
{
    jace_msg_t *refuse = jace_msg_new (JACE_MSG_REFUSE);
    jace_msg_set_sender (refuse, self->self_node.id);
    jace_msg_set_job (refuse, jace_msg_job (request));
    jace_msg_set_task (refuse, jace_msg_task (request));
    jace_msg_set_epoch (refuse, jace_msg_epoch (request));
    jace_msg_set_code (refuse, code);
    jace_msg_set_reason (refuse, reason);
    if (key)
        jace_msg_seal (refuse, key->bytes);
    jace_msg_set_routing_id (refuse, jace_msg_routing_id (request));
    jace_msg_send (&refuse, self->router);
}

//  Work for the ASSIGN's job from now on; key is its job key.
static void
s_take_job (server_t *self, jace_msg_t *assign, const jace_key_t *key)
{
    snprintf (self->job, sizeof self->job, "%s", jace_msg_job (assign));
    self->job_key = *key;
    snprintf (self->self_node.job, sizeof self->self_node.job, "%s",
              self->job);
    zframe_destroy (&self->spawner);    //  A rebalance's ASSIGN: ours again
    self->spawner = zframe_dup (jace_msg_routing_id (assign));
    self->self_node.state = JACE_NODE_WORKING;
    self->self_node.task = jace_msg_task (assign);
    self->self_node.epoch = jace_msg_epoch (assign);
    self->spawner_heard = zclock_mono ();
    double seconds;
    char reason [256];
    if (jace_param_number (jace_msg_params (assign), "job/orphan_timeout",
                           ORPHAN_TIMEOUT_SEC, 1, 1e9, &seconds, reason,
                           sizeof reason)) {
        zsys_warning ("daemon %s: job %s: %s; using %d s",
                      self->self_node.id, self->job, reason,
                      ORPHAN_TIMEOUT_SEC);
        seconds = ORPHAN_TIMEOUT_SEC;
    }
    self->orphan_msec = (int64_t) (seconds * 1000);
    daemon_relay_start (self->relay, assign, self->self_node.cluster,
                        key->bytes);
    zsys_notice ("daemon %s: assigned task %" PRId64 " of job %s",
                 self->self_node.id, jace_msg_task (assign), self->job);
    //  Tell the super-node now, not at the next heartbeat: `jobs`,
    //  `cancel` and `kill` find the job's daemons through it.
    s_send_hello (self);
}

//  The task's data is all here (or it had none): the worker sets it up.
static void
s_hand_over (server_t *self, jace_msg_t **assign_p)
{
    jace_msg_set_sender (*assign_p, self->self_node.id);
    self->worker_epoch = jace_msg_epoch (*assign_p);
    if (jace_msg_send (assign_p, zactor_sock (self->worker))) {
        zsys_error ("daemon %s: cannot hand task of job %s to the worker",
                    self->self_node.id, self->job);
        jace_msg_t *ids = jace_msg_new (JACE_MSG_ASSIGN);
        jace_msg_set_job (ids, self->job);
        jace_msg_set_task (ids, self->self_node.task);
        jace_msg_set_epoch (ids, self->self_node.epoch);
        jace_msg_set_routing_id (ids, self->spawner);
        s_refuse (self, ids, JACE_REFUSE_BUSY, "worker unreachable",
                  &self->job_key);
        jace_msg_destroy (&ids);
        s_leave_job (self);
    }
}

//  Name of this daemon in audit logs.
static const char *
s_who (server_t *self, char *who, size_t who_size)
{
    snprintf (who, who_size, "daemon %s", self->self_node.id);
    return who;
}

//  True if the ASSIGN may take us: keys on, a spawner sent it; keys on
//  or off, its token is the lease token our super-node issued for its
//  job to its sender on us.  Refuses (BUSY: another daemon, leased for
//  real, may take the task) and audits it otherwise.
static bool
s_lease_valid (server_t *self, const jace_msg_t *assign,
               const jace_key_t *key)
{
    char who [JACE_ID_MAX + 16];
    if (!jace_security_authorise (self->security, assign, JACE_ROLE_SPAWNER,
                                  s_who (self, who, sizeof who)))
        return false;
    if (jace_lease_token_valid (&self->lease_key, jace_msg_job (assign),
                                jace_msg_user_id (assign),
                                self->self_node.id, jace_msg_token (assign)))
        return true;
    jace_security_unauthorised (self->security, assign, who, "lease token "
                                "not valid for job '%s' on this daemon",
                                jace_msg_job (assign));
    s_refuse (self, assign, JACE_REFUSE_BUSY, "lease token not valid for "
              "this daemon", key);
    return false;
}

//  Every byte of the task's data is in: check it hashes as declared, and
//  give the task to the worker; data changed on the way is refused, so
//  the spawner sends it to another daemon.
static void
s_transfer_done (server_t *self)
{
    char reason [256];
    if (daemon_transfer_verify (self->transfer, reason, sizeof reason)) {
        zsys_warning ("daemon %s: %s; giving up task %" PRId64 " of job %s",
                      self->self_node.id, reason, self->self_node.task,
                      self->job);
        s_refuse (self, daemon_transfer_assign (self->transfer),
                  JACE_REFUSE_BUSY, reason, &self->job_key);
        s_leave_job (self);
        return;
    }
    jace_msg_t *assign = daemon_transfer_finish (&self->transfer);
    s_hand_over (self, &assign);
}

//  On a virtual grid, task data comes from the cluster the job names as
//  its scatter root (scatter/root) over the emulated link from there:
//  each chunk is taken to arrive when the link has carried it, its
//  CHUNK_ACK leaves a round trip later (so the spawner's window paces
//  itself to the link), and the task starts when the last byte is in.
//  Without a platform or a root, data is not delayed.  Data a relay of
//  our cluster passes on crosses our cluster's own link instead.
static void
s_emulate_data_link (server_t *self, const jace_msg_t *assign)
{
    self->data_mbps = 0;
    self->data_latency_usec = 0;
    self->local_mbps = 0;
    self->local_latency_usec = 0;
    self->data_arrival = 0;
    self->handover_due = 0;
    const char *root = jace_msg_param (assign, "scatter/root");
    if (!self->platform || !root)
        return;
    int from = platform_cluster_index (self->platform, root);
    int to = platform_cluster_index (self->platform,
                                     self->self_node.cluster);
    if (from < 0 || to < 0)
        return;
    self->data_mbps = platform_bandwidth_mbps (self->platform,
                                               (size_t) from, (size_t) to);
    self->data_latency_usec = jace_shaper_delay_nsec (
        platform_latency_us (self->platform, (size_t) from, (size_t) to),
        self->data_mbps, 0) / 1000;
    self->local_mbps = platform_bandwidth_mbps (self->platform, (size_t) to,
                                                (size_t) to);
    self->local_latency_usec = jace_shaper_delay_nsec (
        platform_latency_us (self->platform, (size_t) to, (size_t) to),
        self->local_mbps, 0) / 1000;
}

static bool
s_data_link_emulated (const server_t *self)
{
    return self->data_mbps > 0 || self->data_latency_usec > 0;
}

//  True if the chunk came from a daemon of our cluster that relays our
//  data (daemon_relay), not from our spawner itself.
static bool
s_relayed (const server_t *self, const jace_msg_t *chunk)
{
    return !self->spawner
        || !zframe_eq (jace_msg_routing_id ((jace_msg_t *) chunk),
                       self->spawner);
}

static size_t
s_chunk_bytes (const jace_msg_t *chunk)
{
    size_t bytes = 0;
    for (size_t i = 0; i < jace_msg_payload_count (chunk); i++)
        bytes += jace_msg_payload_length (chunk, i)
               * (jace_msg_payload_kind (chunk, i) == JACE_PAYLOAD_BYTES
                  ? 1 : 8);
    return bytes;
}

//  Carry the chunk's bytes over the emulated link they crossed: from the
//  scatter root, or inside our cluster from its relay.  One link into
//  the node takes them all, one after the other.  Returns when its last
//  byte is in (usec), with that link's latency in *latency_usec.
static int64_t
s_arrive (server_t *self, const jace_msg_t *chunk, bool relayed,
          int64_t *latency_usec)
{
    double mbps = relayed ? self->local_mbps : self->data_mbps;
    *latency_usec = relayed ? self->local_latency_usec
                            : self->data_latency_usec;
    int64_t now = zclock_usecs ();
    self->data_arrival = (self->data_arrival > now ? self->data_arrival
                                                   : now)
                       + jace_shaper_delay_nsec (0, mbps,
                                                 s_chunk_bytes (chunk))
                         / 1000;
    return self->data_arrival;
}

//  How much of our data we hold, for `routing_id`.
static jace_msg_t *
s_chunk_ack (server_t *self, zframe_t *routing_id)
{
    jace_msg_t *ack = jace_msg_new (JACE_MSG_CHUNK_ACK);
    jace_msg_set_sender (ack, self->self_node.id);
    jace_msg_set_job (ack, self->job);
    jace_msg_set_task (ack, self->self_node.task);
    jace_msg_set_epoch (ack, self->self_node.epoch);
    jace_msg_set_received (ack,
        (int64_t) daemon_transfer_received (self->transfer));
    jace_msg_seal (ack, self->job_key.bytes);
    jace_msg_set_routing_id (ack, routing_id);
    return ack;
}

//  Tell our spawner at once that we take the data the ASSIGN declared (a
//  CHUNK_ACK of 0 bytes, a round trip later on an emulated link): from
//  then on a relay may pass our chunks on, and none can overtake the
//  ASSIGN.
static void
s_acknowledge_open (server_t *self)
{
    jace_msg_t *ack = s_chunk_ack (self, self->spawner);
    if (!s_data_link_emulated (self)) {
        jace_msg_send (&ack, self->router);
        return;
    }
    held_pong_t *held = (held_pong_t *) zmalloc (sizeof *held);
    held->due = zclock_usecs () + 2 * self->data_latency_usec;
    held->msg = ack;
    zlistx_add_end (self->acks, held);
}

//  Acknowledge what we hold of our data to whoever sent the chunk (our
//  spawner, or the relay that passes it back).  Returns when the
//  acknowledgement leaves (usec): a round trip after the chunk is in on
//  an emulated link, 0 at once.
static int64_t
s_acknowledge_chunk (server_t *self, const jace_msg_t *chunk)
{
    jace_msg_t *ack = s_chunk_ack (self, jace_msg_routing_id (chunk));
    if (!s_data_link_emulated (self)) {
        jace_msg_send (&ack, self->router);
        return 0;
    }
    int64_t latency;
    int64_t arrival = s_arrive (self, chunk, s_relayed (self, chunk),
                                &latency);
    held_pong_t *held = (held_pong_t *) zmalloc (sizeof *held);
    held->due = arrival + 2 * latency;
    held->msg = ack;
    zlistx_add_end (self->acks, held);
    return held->due;
}

//  Send the held CHUNK_ACKs that are due, and hand over complete data
//  whose last byte is in; usec until the next, or -1 when none waits.
static int64_t
s_flush_data_link (server_t *self)
{
    int64_t now = zclock_usecs ();
    held_pong_t *held;
    while ((held = (held_pong_t *) zlistx_first (self->acks))
       &&  held->due <= now) {
        jace_msg_send (&held->msg, self->router);
        zlistx_delete (self->acks, zlistx_cursor (self->acks));
    }
    if (self->handover_due && self->handover_due <= now && self->transfer) {
        self->handover_due = 0;
        s_transfer_done (self);
    }
    int64_t next = held ? held->due : 0;
    if (self->handover_due && (!next || self->handover_due < next))
        next = self->handover_due;
    return next ? next - now : -1;
}

//  True if the ASSIGN gives the task we run a new block (a rebalance):
//  our job, its key, our task, a newer epoch.  The data of the old
//  placement still on its way is dropped; the worker replaces the task.
static bool
s_rebalanced (server_t *self, const jace_msg_t *assign, const jace_key_t *key)
{
    if (!streq (jace_msg_job (assign), self->job)
    ||  memcmp (key->bytes, self->job_key.bytes, sizeof key->bytes) != 0
    ||  jace_msg_task (assign) != self->self_node.task
    ||  jace_msg_epoch (assign) <= self->self_node.epoch)
        return false;
    zsys_info ("daemon %s: task %" PRId64 " of job %s assigned again, "
               "epoch %" PRId64 " (a rebalance)", self->self_node.id,
               self->self_node.task, self->job, jace_msg_epoch (assign));
    daemon_transfer_destroy (&self->transfer);
    zlistx_purge (self->acks);
    self->handover_due = 0;
    return true;
}

//  True if our super-node says a job other than `job` holds us.  Its
//  word may be on its way: the WELCOMEs that free us and lease us to
//  `job` leave before the GRANT that leads to this ASSIGN, but our
//  poller may hand us the ASSIGN first, so what is queued is read.
static bool
s_held_for_another (server_t *self, const char *job)
{
    for (int read = 0; read < 64 && *self->held_for
                       && !streq (self->held_for, job)
                       && (zsock_events (self->supernode) & ZMQ_POLLIN);
         read++)
        s_recv_supernode (self);
    return *self->held_for && !streq (self->held_for, job);
}

//  Refuse an ASSIGN whose lease token outlived its lease (REFUSE LEASED):
//  the spawner gives us up without counting it a failure.
static void
s_refuse_leased (server_t *self, const jace_msg_t *assign,
                 const char *reason, const jace_key_t *key)
{
    zsys_notice ("daemon %s: task %" PRId64 " of job %s refused: %s (its "
                 "lease here lapsed)", self->self_node.id,
                 jace_msg_task (assign), jace_msg_job (assign), reason);
    s_refuse (self, assign, JACE_REFUSE_LEASED, reason, key);
}

//  True if the ASSIGN is for the job we run and sealed with its key by a
//  spawner: a new block of our task from the spawner that resumed the
//  job, which adopted us with no lease token from our super-node.
//  s_rebalanced still decides whether it is ours to take.
static bool
s_sealed_by_our_job (server_t *self, const jace_msg_t *assign)
{
    char who [JACE_ID_MAX + 16];
    return *self->job && streq (jace_msg_job (assign), self->job)
        && jace_msg_sealed (assign, self->job_key.bytes)
        && jace_security_authorise (self->security, assign,
                                    JACE_ROLE_SPAWNER,
                                    s_who (self, who, sizeof who));
}

static void
s_on_assign (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *assign = *msg_p;
    char reason [256];
    jace_key_t key;
    bool keyed = jace_key_decode (&key, jace_msg_key (assign)) == 0;
    if (!s_sealed_by_our_job (self, assign)
    &&  !s_lease_valid (self, assign, keyed ? &key : NULL))
        goto out;
    if (!keyed) {
        s_refuse (self, assign, JACE_REFUSE_FAILED, "ASSIGN without a valid "
                  "job key", NULL);
        goto out;
    }
    //  A lease token stays valid after its lease lapsed: working for
    //  another job, or held for one, we are not the sender's any more
    if (*self->job && !streq (self->job, jace_msg_job (assign))) {
        snprintf (reason, sizeof reason, "working for task %" PRId64 " of "
                  "job %s", self->self_node.task, self->job);
        s_refuse_leased (self, assign, reason, &key);
        goto out;
    }
    if (*self->job && !s_rebalanced (self, assign, &key)) {
        snprintf (reason, sizeof reason, "busy with task %" PRId64 " of job "
                  "%s", self->self_node.task, self->job);
        s_refuse (self, assign, JACE_REFUSE_BUSY, reason, &key);
        goto out;
    }
    if (!*self->job && s_held_for_another (self, jace_msg_job (assign))) {
        snprintf (reason, sizeof reason, "leased to job %s by super-node "
                  "%s", self->held_for, self->current);
        s_refuse_leased (self, assign, reason, &key);
        goto out;
    }
    if (!*jace_msg_job (assign)) {
        s_refuse (self, assign, JACE_REFUSE_FAILED, "ASSIGN without a job id",
                  &key);
        goto out;
    }
    if (!daemon_transfer_declared (assign)) {
        s_take_job (self, assign, &key);
        s_hand_over (self, msg_p);
        goto out;
    }
    uint64_t bytes = 0;
    jace_refuse_code_t code;
    if (daemon_transfer_check (assign, self->task_memory, &bytes, &code,
                               reason, sizeof reason)) {
        zsys_warning ("daemon %s: task %" PRId64 " of job %s refused: %s",
                      self->self_node.id, jace_msg_task (assign),
                      jace_msg_job (assign), reason);
        s_refuse (self, assign, code, reason, &key);
        goto out;
    }
    s_take_job (self, assign, &key);
    s_emulate_data_link (self, assign);
    self->transfer = daemon_transfer_new (msg_p);
    if (daemon_transfer_complete (self->transfer))
        s_transfer_done (self);
    else
        s_acknowledge_open (self);
out:
    jace_key_wipe (&key);
}

//  A piece of our task's data (the job is ours: s_on_job_message checked).
static void
s_on_chunk (server_t *self, jace_msg_t *chunk)
{
    char reason [256];
    daemon_chunk_result_t result = self->transfer
        ? daemon_transfer_add (self->transfer, chunk, reason, sizeof reason)
        : DAEMON_CHUNK_DROPPED;
    if (!self->transfer)
        snprintf (reason, sizeof reason, "CHUNK of job %s while no data is "
                  "expected", self->job);
    //  Sent again after its relay was given up: say again what we hold.
    if (result == DAEMON_CHUNK_DUPLICATE) {
        s_acknowledge_chunk (self, chunk);
        return;
    }
    //  A relay given up may still pass on chunks the spawner has since
    //  sent us itself, or will: never a reason to give the task up.
    if (result == DAEMON_CHUNK_DROPPED
    ||  (result == DAEMON_CHUNK_OUT_OF_ORDER && s_relayed (self, chunk))) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: dropped %s%s", self->self_node.id,
                          reason, s_relayed (self, chunk)
                          ? " (passed on by a relay)" : "");
        return;
    }
    if (result == DAEMON_CHUNK_OUT_OF_ORDER) {
        zsys_warning ("daemon %s: %s; giving up task %" PRId64 " of job %s",
                      self->self_node.id, reason, self->self_node.task,
                      self->job);
        s_refuse (self, daemon_transfer_assign (self->transfer),
                  JACE_REFUSE_BUSY, "task data arrived out of order",
                  &self->job_key);
        s_leave_job (self);
        return;
    }
    int64_t acknowledged = s_acknowledge_chunk (self, chunk);
    if (daemon_transfer_complete (self->transfer)) {
        if (self->verbose)
            zsys_debug ("daemon %s: %" PRIu64 " bytes of task data in",
                        self->self_node.id,
                        daemon_transfer_total (self->transfer));
        //  Its last CHUNK_ACK leaves first (s_flush_data_link), as it
        //  would without the emulation.
        if (acknowledged)
            self->handover_due = acknowledged;
        else
            s_transfer_done (self);
    }
}

//  A chunk for another task of our cluster, from our spawner: pass it on
//  once it has crossed the emulated link from the scatter root.
static void
s_relay_chunk (server_t *self, jace_msg_t **chunk_p)
{
    char reason [256] = "";
    int64_t due = 0;
    if (s_relayed (self, *chunk_p))
        snprintf (reason, sizeof reason, "CHUNK for task %" PRId64 " from a "
                  "daemon: only the spawner's are passed on",
                  jace_msg_task (*chunk_p));
    else
    if (s_data_link_emulated (self)) {
        int64_t latency;
        due = s_arrive (self, *chunk_p, false, &latency) + latency;
    }
    if ((*reason
         || daemon_relay_chunk (self->relay, chunk_p, due, reason,
                                sizeof reason))
    &&  s_count_bad (self))
        zsys_warning ("daemon %s: dropped %s", self->self_node.id, reason);
}

//  A CHUNK_ACK of a daemon we relay to: back to our spawner, a backbone
//  latency later on an emulated link.
static void
s_recv_relay (server_t *self, void *link)
{
    char reason [256];
    jace_msg_t *ack = daemon_relay_recv (self->relay, link, reason,
                                         sizeof reason);
    if (!ack) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: dropped %s", self->self_node.id,
                          reason);
        return;
    }
    if (!self->spawner) {
        jace_msg_destroy (&ack);
        return;
    }
    jace_msg_set_routing_id (ack, self->spawner);
    if (!s_data_link_emulated (self)) {
        jace_msg_send (&ack, self->router);
        return;
    }
    held_pong_t *held = (held_pong_t *) zmalloc (sizeof *held);
    held->due = zclock_usecs () + self->data_latency_usec;
    held->msg = ack;
    zlistx_add_end (self->acks, held);
}

//  True if a message of our job may steer it: sealed with the job key
//  and, keys on, sent by one of `roles` (a spawner; for a CHUNK, a
//  daemon relaying it too: the seal is still the spawner's, and the
//  ASSIGN's digest covers the bytes).  Knowing the job id is not enough
//  (STATUS publishes it).  Otherwise it is audited.
static bool
s_sealed_for_job (server_t *self, const jace_msg_t *msg, unsigned roles)
{
    char who [JACE_ID_MAX + 16];
    if (!jace_security_authorise (self->security, msg, roles,
                                  s_who (self, who, sizeof who)))
        return false;
    if (jace_msg_sealed (msg, self->job_key.bytes))
        return true;
    jace_security_unauthorised (self->security, msg, who, "not sealed with "
                                "the key of job '%s'", self->job);
    return false;
}

//  A resumed spawner adopts us while a rebalance's new block is still
//  coming in (or its last byte is, but the emulated link has not carried
//  it yet): the spawner that sent it died, and nobody sends the rest.
//  The worker still runs the task on its old rows, so we go back to its
//  epoch and it answers the ADOPT with the cut it runs; every daemon
//  that was loading does the same, so they all answer on one cut.
//  Before, its answer was dropped as not of our (new) epoch: the resume
//  released us and placed the task anew, and when every daemon was
//  loading, it found none to adopt and failed the job.
static void
s_abandon_new_block (server_t *self)
{
    if (!self->transfer || self->worker_epoch <= 0
    ||  self->worker_epoch >= self->self_node.epoch)
        return;
    zsys_notice ("daemon %s: task %" PRId64 " of job %s: the rebalance's "
                 "block (epoch %" PRId64 ", %" PRIu64 " of %" PRIu64 " bytes "
                 "in) was still loading as its spawner died; back on epoch %"
                 PRId64,
                 self->self_node.id, self->self_node.task, self->job,
                 self->self_node.epoch,
                 daemon_transfer_received (self->transfer),
                 daemon_transfer_total (self->transfer), self->worker_epoch);
    daemon_transfer_destroy (&self->transfer);
    zlistx_purge (self->acks);
    self->handover_due = 0;
    self->self_node.epoch = self->worker_epoch;
}

//  Any sealed message of our job's spawner proves it alive.  A HEARTBEAT
//  says nothing else; one for a job we left (we refused, or gave it up)
//  is expected until its spawner notices, and needs no warning.
static void
s_on_job_message (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *msg = *msg_p;
    jace_msg_type_t type = jace_msg_type (msg);
    bool ours = *self->job && streq (jace_msg_job (msg), self->job);
    unsigned roles = type == JACE_MSG_CHUNK
                   ? JACE_ROLE_SPAWNER | JACE_ROLE_DAEMON : JACE_ROLE_SPAWNER;
    if (ours && !s_sealed_for_job (self, msg, roles))
        return;
    if (ours)
        self->spawner_heard = zclock_mono ();
    if (type == JACE_MSG_HEARTBEAT) {
        if (!ours && self->verbose)
            zsys_debug ("daemon %s: HEARTBEAT of job '%s' we do not run",
                        self->self_node.id, jace_msg_job (msg));
        return;
    }
    if (!ours) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: %s for job '%s' we do not run, "
                          "dropped", self->self_node.id,
                          jace_msg_type_name (type), jace_msg_job (msg));
        return;
    }
    if (type == JACE_MSG_CHUNK) {
        if (jace_msg_task (msg) == self->self_node.task)
            s_on_chunk (self, msg);
        else
            s_relay_chunk (self, msg_p);
        return;
    }
    //  A resumed spawner says so with ADOPT: answer where it speaks from
    //  now.  Nothing else moves our reports: a stale link of the spawner's
    //  (to a dead daemon whose port we reuse) may still reach us.
    if (type == JACE_MSG_ADOPT) {
        zframe_destroy (&self->spawner);
        self->spawner = zframe_dup (jace_msg_routing_id (msg));
        zsys_debug ("daemon %s: ADOPT of job %s from a resumed spawner",
                    self->self_node.id, self->job);
        s_abandon_new_block (self);
    }
    if (type == JACE_MSG_STOP) {
        zsys_notice ("daemon %s: job %s over", self->self_node.id, self->job);
        //  Say we dropped the task: a spawner that fenced us may then use
        //  us again, knowing we hold none of its tasks.
        jace_msg_t *left = jace_msg_new (JACE_MSG_HEARTBEAT);
        jace_msg_set_sender (left, self->self_node.id);
        jace_msg_set_job (left, self->job);
        jace_msg_set_state (left, JACE_NODE_FREE);
        jace_msg_seal (left, self->job_key.bytes);
        jace_msg_set_routing_id (left, jace_msg_routing_id (msg));
        jace_msg_send (&left, self->router);
        s_stop_job (self, jace_msg_reason (msg));
        return;
    }
    jace_msg_send (msg_p, zactor_sock (self->worker));
}

//  Our spawner has been silent too long: its job is presumed failed.
static void
s_check_orphan (server_t *self)
{
    int64_t silent = zclock_mono () - self->spawner_heard;
    if (!*self->job || silent <= self->orphan_msec)
        return;
    zsys_notice ("daemon %s: spawner of job %s silent for %" PRId64 " s, "
                 "abandoning the job", self->self_node.id, self->job,
                 silent / 1000);
    s_stop_job (self, "spawner silent");
}

//  The crash tools' power cut: die at once, no BYE, nothing flushed.
//  Only for the job we run, so a stray CRASH cannot take a free daemon,
//  and only sealed with its key, so only its spawner can.
static void
s_on_crash (server_t *self, jace_msg_t *msg, const char *sender)
{
    if (!*self->job || !streq (jace_msg_job (msg), self->job)) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: CRASH for job '%s' from %s ignored: we "
                          "run %s", self->self_node.id, jace_msg_job (msg),
                          sender, *self->job ? self->job : "no job");
        return;
    }
    if (!s_sealed_for_job (self, msg, JACE_ROLE_SPAWNER))
        return;
    zsys_notice ("daemon %s: crashed on purpose by %s (job %s)",
                 self->self_node.id, jace_msg_sender (msg), self->job);
    _exit (137);
}

static void
s_recv_router (server_t *self)
{
    char reason [256], sender [128];
    jace_msg_t *msg = jace_msg_recv (self->router, reason, sizeof reason,
                                     sender, sizeof sender);
    if (!msg) {
        if (s_count_bad (self))
            zsys_warning ("daemon %s: malformed message from %s: %s "
                          "(%" PRIu64 " bad messages so far)",
                          self->self_node.id, sender, reason, self->malformed);
        return;
    }
    switch (jace_msg_type (msg)) {
        case JACE_MSG_ASSIGN:
            s_on_assign (self, &msg);
            break;
        case JACE_MSG_START:
        case JACE_MSG_COLLECT:
        case JACE_MSG_STOP:
        case JACE_MSG_REMAP:
        case JACE_MSG_ADOPT:
        case JACE_MSG_CHUNK:
        case JACE_MSG_HEARTBEAT:
            s_on_job_message (self, &msg);
            break;
        case JACE_MSG_CRASH:
            s_on_crash (self, msg, sender);
            break;
        default:
            if (s_count_bad (self))
                zsys_warning ("daemon %s: unexpected %s from %s, dropped "
                              "(%" PRIu64 " bad messages so far)",
                              self->self_node.id, jace_msg_type_name (
                              jace_msg_type (msg)), sender, self->malformed);
    }
    jace_msg_destroy (&msg);
}

//  True if a worker's message is about the task we run now: one about a
//  task we already left (stopped, abandoned) crossed our STOP.
static bool
s_is_current (server_t *self, const jace_msg_t *msg)
{
    return *self->job && streq (jace_msg_job (msg), self->job)
        && jace_msg_task (msg) == self->self_node.task
        && jace_msg_epoch (msg) == self->self_node.epoch;
}

//  The worker's ACCEPT, REFUSE, PROGRESS, RESULT, RESTORED and ASSIGN go to
//  the spawner.
static void
s_recv_worker (server_t *self)
{
    jace_msg_t *msg = jace_msg_recv (zactor_sock (self->worker), NULL, 0,
                                     NULL, 0);
    assert (msg);
    if (!s_is_current (self, msg)) {
        jace_msg_destroy (&msg);
        return;
    }
    if (jace_msg_type (msg) == JACE_MSG_REFUSE) {
        zsys_warning ("daemon %s: task of job %s refused: %s",
                      self->self_node.id, jace_msg_job (msg),
                      jace_msg_reason (msg));
        s_send_to_spawner (self, &msg);
        s_leave_job (self);
        return;
    }
    s_send_to_spawner (self, &msg);
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
        zstr_send (self->pipe, self->failure ? "" : self->self_node.endpoint);
    else
        zsys_error ("daemon: invalid API command '%s'", command);
    zstr_free (&command);
}

//  --------------------------------------------------------------------------

static void
s_heartbeat (server_t *self)
{
    int64_t now = zclock_mono ();
    int64_t failover = FAILOVER_HEARTBEATS * self->heartbeat_msec;
    if (failover < FAILOVER_MIN_MSEC)
        failover = FAILOVER_MIN_MSEC;
    //  A heartbeat a period late or more is our own stall (a process
    //  starved on a loaded machine, or stopped): the super-node could not
    //  answer HELLOs we did not send, so that time is not its silence.
    //  Counted, daemons of a 128-daemon grid at load 150 failed over
    //  hundreds of times a minute.
    int64_t late = now - self->next_heartbeat;
    if (self->next_heartbeat > 0 && late > self->heartbeat_msec)
        self->last_welcome += late;
    if (now - self->last_welcome > failover) {
        if (zlist_size (self->supernodes) > 1)
            s_connect_supernode (self);
        else
        if (!self->silence_reported
        ||  now - self->silence_reported >= SILENCE_REPORT_MSEC) {
            zsys_warning ("daemon %s: super-node %s does not answer "
                          "(nothing heard in %.0f s): is it running, at "
                          "that endpoint%s? Still trying",
                          self->self_node.id, self->current,
                          (now - self->last_welcome) / 1000.0,
                          jace_security_enabled (self->security)
                          ? ", and does it accept our certificate" : "");
            self->silence_reported = now;
        }
    }
    s_send_hello (self);
    s_check_orphan (self);
    if (*self->job) {
        jace_msg_t *beat = jace_msg_new (JACE_MSG_HEARTBEAT);
        jace_msg_set_sender (beat, self->self_node.id);
        jace_msg_set_job (beat, self->job);
        jace_msg_set_state (beat, self->self_node.state);
        s_send_to_spawner (self, &beat);
    }
    self->next_heartbeat = now + self->heartbeat_msec;
}

//  --------------------------------------------------------------------------
//  Memory between jobs

static void
s_keep_freed_memory (void)
{
#ifdef __GLIBC__
    //  Fixed thresholds: glibc's own grow with what is freed, but only
    //  after a job has paid the faults, and the heap is trimmed at once
    if (!mallopt (M_MMAP_THRESHOLD, KEPT_ALLOCATION_MAX)
    ||  !mallopt (M_TRIM_THRESHOLD, INT_MAX))
        zsys_warning ("daemon: freed memory cannot be kept between jobs");
#endif
}

//  Give the memory kept since the last job back once idle long enough;
//  msec until then, or -1.
static int64_t
s_trim_when_idle (server_t *self)
{
    if (!self->trim_due || *self->job)
        return -1;
    int64_t wait = self->trim_due - zclock_mono ();
    if (wait > 0)
        return wait;
#ifdef __GLIBC__
    malloc_trim (0);
#endif
    self->trim_due = 0;
    return -1;
}

void
daemon_server_actor (zsock_t *pipe, void *args)
{
    s_keep_freed_memory ();
    server_t *self = s_server_new (pipe, (daemon_config_t *) args);
    zsock_signal (pipe, 0);
    if (!self->failure)
        s_connect_supernode (self);
    while (!self->terminated) {
        int64_t wait = self->next_heartbeat - zclock_mono ();
        if (!self->failure && wait <= 0) {
            s_heartbeat (self);
            continue;
        }
        //  In usec: the emulated links' holds are finer than a msec
        wait *= 1000;
        int64_t due = s_flush_pongs (self);
        if (due >= 0 && due < wait)
            wait = due;
        due = s_flush_data_link (self);
        if (due >= 0 && due < wait)
            wait = due;
        due = daemon_relay_flush (self->relay);
        if (due >= 0 && due < wait)
            wait = due;
        due = s_trim_when_idle (self);
        if (due >= 0 && due * 1000 < wait)
            wait = due * 1000;
        void *which = jace_shaper_wait (self->poller,
                                        self->failure ? -1 : wait);
        if (which == self->pipe)
            s_recv_api (self);
        else
        if (which && which == self->router)
            s_recv_router (self);
        else
        if (which && which == self->supernode)
            s_recv_supernode (self);
        else
        if (which && which == self->worker)
            s_recv_worker (self);
        else
        if (which && daemon_relay_owns (self->relay, which))
            s_recv_relay (self, which);
    }
    s_server_destroy (&self);
}

char *
daemon_server_endpoint (zactor_t *server)
{
    assert (server);
    zstr_send (server, "ENDPOINT");
    char *endpoint = zstr_recv (server);
    if (endpoint && !*endpoint)
        zstr_free (&endpoint);
    return endpoint;
}
