/*  =========================================================================
    daemon_server - a daemon: registers, heartbeats, runs one task

    Failover timing: a super-node that has not answered a HELLO for
    FAILOVER_HEARTBEATS heartbeats (at least FAILOVER_MIN_MSEC) is given up
    for the next one in the list, so with the default 500 ms heartbeat a
    daemon is registered elsewhere about 2 s after its super-node dies.
    =========================================================================
*/
#include "daemon_server.h"
#include "daemon_worker.h"
#include "daemon_power.h"
#include "jace_msg.h"
#include "jace_security.h"

#define FAILOVER_HEARTBEATS 3
#define FAILOVER_MIN_MSEC 1500
//  How long the start-up benchmark runs.
#define POWER_BUDGET_MSEC 200

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
    const char *platform;       //  Borrowed: platform file to emulate
    int heartbeat_msec;         //  HELLO / HEARTBEAT period
    int64_t last_welcome;       //  When the super-node last answered
    bool registered;            //  The current super-node answered once
    int64_t next_heartbeat;     //  When to send the next HELLO
    zframe_t *spawner;          //  Routing id of our spawner, or NULL
    char job [JACE_ID_MAX];     //  Job we work for, or ""
    uint64_t malformed;         //  Bad messages dropped
    bool verbose;               //  Log every message
    bool terminated;            //  $TERM received
} server_t;


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
        .platform = self->platform, .security = self->security,
        .speed = self->speed, .verbose = self->verbose,
        .checkpoint_memory = self->checkpoint_memory
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
    jace_security_apply_server (self->security, self->router);
    if (zsock_bind (self->router, "%s", bind) < 0) {
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
    return 0;

out_fail:
    self->failure = strdup (reason);
    zsys_error ("daemon: %s", reason);
    return -1;
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
    self->heartbeat_msec = config->heartbeat_msec > 0
                           ? config->heartbeat_msec : 500;
    self->verbose = config->verbose;
    self->platform = config->platform;
    s_start (self, config);
    return self;
}

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    if (self->supernode) {
        jace_msg_t *bye = jace_msg_new (JACE_MSG_BYE);
        jace_msg_set_sender (bye, self->self_node.id);
        jace_msg_send (&bye, self->supernode);
    }
    zactor_destroy (&self->worker);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->supernode);
    zsock_destroy (&self->router);
    zframe_destroy (&self->spawner);
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
    if (jace_security_apply_client (self->security, self->supernode,
            jace_security_supernode_key (self->security))
    ||  zsock_connect (self->supernode, "%s", self->current))
        zsys_error ("daemon %s: cannot connect to super-node '%s'",
                    self->self_node.id, self->current);
    zpoller_add (self->poller, self->supernode);
    self->last_welcome = zclock_mono ();
    self->registered = false;
}

static void
s_send_hello (server_t *self)
{
    jace_msg_t *hello = jace_msg_new (JACE_MSG_HELLO);
    jace_msg_set_sender (hello, self->self_node.id);
    jace_msg_add_node (hello, &self->self_node);
    jace_msg_send (&hello, self->supernode);
}

static void
s_recv_supernode (server_t *self)
{
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (self->supernode, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        self->malformed++;
        zsys_warning ("daemon %s: malformed message from super-node %s: %s",
                      self->self_node.id, self->current, reason);
        return;
    }
    if (jace_msg_type (msg) == JACE_MSG_WELCOME) {
        if (!self->registered)
            zsys_notice ("daemon %s: registered with %s", self->self_node.id,
                         self->current);
        self->registered = true;
        self->last_welcome = zclock_mono ();
    }
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  Spawner

static void
s_send_to_spawner (server_t *self, jace_msg_t **msg_p)
{
    if (!self->spawner) {
        jace_msg_destroy (msg_p);
        return;
    }
    jace_msg_set_routing_id (*msg_p, self->spawner);
    //  A vanished spawner is not our failure: the task goes on.
    jace_msg_send (msg_p, self->router);
}

static void
s_leave_job (server_t *self)
{
    *self->job = 0;
    *self->self_node.job = 0;
    self->self_node.state = JACE_NODE_FREE;
    self->self_node.task = -1;
    self->self_node.epoch = 0;
    zframe_destroy (&self->spawner);
    //  Tell the super-node now, not at the next heartbeat: a spawner
    //  waiting for daemons gets this one at once.
    s_send_hello (self);
}

static void
s_refuse (server_t *self, jace_msg_t *assign, const char *reason)
{
    jace_msg_t *refuse = jace_msg_new (JACE_MSG_REFUSE);
    jace_msg_set_sender (refuse, self->self_node.id);
    jace_msg_set_job (refuse, jace_msg_job (assign));
    jace_msg_set_task (refuse, jace_msg_task (assign));
    jace_msg_set_epoch (refuse, jace_msg_epoch (assign));
    jace_msg_set_reason (refuse, reason);
    jace_msg_set_routing_id (refuse, jace_msg_routing_id (assign));
    jace_msg_send (&refuse, self->router);
}

static void
s_on_assign (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *assign = *msg_p;
    if (*self->job) {
        s_refuse (self, assign, "busy with another task");
        return;
    }
    if (!*jace_msg_job (assign)) {
        s_refuse (self, assign, "ASSIGN without a job id");
        return;
    }
    snprintf (self->job, sizeof self->job, "%s", jace_msg_job (assign));
    snprintf (self->self_node.job, sizeof self->self_node.job, "%s",
              self->job);
    self->spawner = zframe_dup (jace_msg_routing_id (assign));
    self->self_node.state = JACE_NODE_WORKING;
    self->self_node.task = jace_msg_task (assign);
    self->self_node.epoch = jace_msg_epoch (assign);
    zsys_notice ("daemon %s: assigned task %" PRId64 " of job %s",
                 self->self_node.id, jace_msg_task (assign), self->job);
    jace_msg_set_sender (assign, self->self_node.id);
    jace_msg_send (msg_p, zactor_sock (self->worker));
}

static void
s_on_job_message (server_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *msg = *msg_p;
    if (!*self->job || !streq (jace_msg_job (msg), self->job)) {
        self->malformed++;
        zsys_warning ("daemon %s: %s for job '%s' we do not run, dropped",
                      self->self_node.id, jace_msg_type_name (
                      jace_msg_type (msg)), jace_msg_job (msg));
        return;
    }
    //  A resumed spawner says so with ADOPT: answer where it speaks from
    //  now.  Nothing else moves our reports: a stale link of the spawner's
    //  (to a dead daemon whose port we reuse) may still reach us.
    if (jace_msg_type (msg) == JACE_MSG_ADOPT) {
        zframe_destroy (&self->spawner);
        self->spawner = zframe_dup (jace_msg_routing_id (msg));
    }
    bool stop = jace_msg_type (msg) == JACE_MSG_STOP;
    jace_msg_send (msg_p, zactor_sock (self->worker));
    if (stop) {
        zsys_notice ("daemon %s: job %s over", self->self_node.id, self->job);
        s_leave_job (self);
        s_send_hello (self);
    }
}

//  The crash tools' power cut: die at once, no BYE, nothing flushed.
//  Only for the job we run, so a stray CRASH cannot take a free daemon.
static void
s_on_crash (server_t *self, jace_msg_t *msg, const char *sender)
{
    if (!*self->job || !streq (jace_msg_job (msg), self->job)) {
        self->malformed++;
        zsys_warning ("daemon %s: CRASH for job '%s' from %s ignored: we "
                      "run %s", self->self_node.id, jace_msg_job (msg),
                      sender, *self->job ? self->job : "no job");
        return;
    }
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
        self->malformed++;
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
            s_on_job_message (self, &msg);
            break;
        case JACE_MSG_CRASH:
            s_on_crash (self, msg, sender);
            break;
        default:
            self->malformed++;
            zsys_warning ("daemon %s: unexpected %s from %s, dropped "
                          "(%" PRIu64 " bad messages so far)",
                          self->self_node.id, jace_msg_type_name (
                          jace_msg_type (msg)), sender, self->malformed);
    }
    jace_msg_destroy (&msg);
}

//  The worker's ACCEPT, REFUSE, PROGRESS and RESULT go to the spawner.
static void
s_recv_worker (server_t *self)
{
    jace_msg_t *msg = jace_msg_recv (zactor_sock (self->worker), NULL, 0,
                                     NULL, 0);
    assert (msg);
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
    if (now - self->last_welcome > failover
    &&  zlist_size (self->supernodes) > 1)
        s_connect_supernode (self);
    s_send_hello (self);
    if (*self->job) {
        jace_msg_t *beat = jace_msg_new (JACE_MSG_HEARTBEAT);
        jace_msg_set_sender (beat, self->self_node.id);
        jace_msg_set_job (beat, self->job);
        jace_msg_set_state (beat, self->self_node.state);
        s_send_to_spawner (self, &beat);
    }
    self->next_heartbeat = now + self->heartbeat_msec;
}

void
daemon_server_actor (zsock_t *pipe, void *args)
{
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
        void *which = zpoller_wait (self->poller,
                                    self->failure ? -1 : (int) wait);
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
