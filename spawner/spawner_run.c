/*  =========================================================================
    spawner_run - one job from reservation to a verified answer

    Timing: a RESERVE the super-node does not answer within
    GRANT_WAIT_MSEC goes to the next super-node; one answered short is
    asked again after GRANT_RETRY_MSEC. The lease on our daemons is
    renewed every LEASE_RENEW_MSEC; a task whose daemon has been silent
    (no HEARTBEAT, PROGRESS or RESULT) for job/heartbeat_timeout is
    declared dead. A verification snapshot follows a failed one after
    VERIFY_BACKOFF_MIN_MSEC while the residual falls by a quarter or more
    (VERIFY_PROGRESS) from one to the next, and backs off by doubling to
    VERIFY_BACKOFF_MAX_MSEC when it does not, so a job closing in is
    checked often and a stuck one never floods the daemons.
    =========================================================================
*/
#include "spawner_run.h"
#include "spawner_events.h"
#include "spawner_output.h"
#include "spawner_nodes.h"
#include "jace_msg.h"
#include "jace_security.h"

#include <math.h>

#define LEASE_RENEW_MSEC 500
#define LEASE_MSEC 5000
#define GRANT_WAIT_MSEC 2000
#define GRANT_RETRY_MSEC 200
#define ACCEPT_WAIT_MSEC 15000
#define PROGRESS_PRINT_MSEC 2000
#define PROGRESS_EVENT_MSEC 1000
#define LIVE_TABLE_MSEC 250
#define VERIFY_BACKOFF_MIN_MSEC 100
#define VERIFY_BACKOFF_MAX_MSEC 2000
#define VERIFY_PROGRESS 0.75    //  Residual ratio that keeps checks frequent

//  One task of the job and the daemon running it.
typedef struct {
    jace_node_t daemon;         //  Daemon running the task
    zsock_t *link;              //  DEALER to its control endpoint
    int64_t epoch;              //  Epoch of this placement
    int64_t iteration;          //  Last reported iteration
    double change;              //  Last reported local change
    int64_t state;              //  Last reported state, -1 before any
    int64_t last_heard;         //  When the daemon last spoke (msec)
    bool accepted;              //  ACCEPT received
    bool started;               //  START sent
    bool collected;             //  RESULT of the current snapshot in
    bool restoring;             //  A replacement not yet restarted
    int64_t held_bytes;         //  Neighbours' checkpoints its daemon keeps
} task_t;

typedef struct {
    spawner_job_t *job;         //  Borrowed
    const spawner_options_t *options;  //  Borrowed
    char id [JACE_ID_MAX];      //  Job id, also the lease id
    jace_security_t *security;  //  Keys, or plain links
    zsock_t *supernode;         //  DEALER to the current super-node
    size_t supernode_index;     //  Its place in options->supernodes
    bool grant_heard;           //  It answered our last RESERVE
    zsock_t *status;            //  ROUTER answering STATUS
    char *status_endpoint;      //  Where it is bound
    zpoller_t *poller;          //  Everything we listen to
    spawner_events_t *events;   //  The event log
    jace_msg_t *leased;         //  Daemons we hold, as a node list
    size_t lease_target;        //  Daemons we want to hold
    zlist_t *fenced;            //  Links to replaced daemons (zsock_t)
    zhash_t *used;              //  Ids of every daemon a task ran on
    int64_t replacements;       //  Tasks moved to another daemon
    int64_t crashes;            //  Daemons the job's schedule crashed
    int64_t from_checkpoint;    //  Replacements restored from a copy
    int64_t from_initial;       //  Replacements that started over
    int64_t next_sample;        //  Next residual sample (msec), or 0
    bool running;               //  START sent to the first placement
    bool resumed;               //  We took over from a dead spawner
    task_t *tasks;              //  One per task
    size_t task_count;          //  Tasks in the job
    int64_t *first_row;         //  Block starts, task_count + 1
    int64_t started;            //  Submission time (msec)
    int64_t next_lease_renewal; //  Next lease HEARTBEAT (msec)
    int64_t next_print;         //  Next progress line (msec)
    int64_t next_progress_event;   //  Next progress events (msec)
    int64_t snapshot;           //  Id of the snapshot being gathered, or 0
    int64_t snapshots;          //  Snapshots taken so far
    int64_t next_verify;        //  Earliest next snapshot (msec)
    int64_t verify_backoff;     //  Current back-off (msec)
    double *x;                  //  The answer being gathered
    int64_t unknowns;           //  Length of x
    double residual;            //  Residual of the last snapshot
    bool verified;              //  The last snapshot passed
    bool convergence_reported;  //  Every task converged locally once
    uint64_t malformed;         //  Bad messages dropped
    bool live_table;            //  stderr is a terminal: redraw a table
    size_t table_lines;         //  Lines of the table drawn last time
    char failure [1024];        //  Why the job failed, or ""
} run_t;


//  --------------------------------------------------------------------------
//  Failure: recorded once, with the first reason

static void
s_fail (run_t *self, const char *format, ...) CHECK_PRINTF (2);

static void
s_fail (run_t *self, const char *format, ...)
{
    if (*self->failure)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (self->failure, sizeof self->failure, format, args);
    va_end (args);
}

static bool
s_stopping (run_t *self)
{
    if (zsys_interrupted)
        s_fail (self, "interrupted by a signal");
    return *self->failure != 0;
}

//  --------------------------------------------------------------------------
//  Set-up and tear-down

static const char *
s_supernode_endpoint (run_t *self)
{
    const spawner_options_t *options = self->options;
    return options->supernode_count
         ? options->supernodes [self->supernode_index]
         : options->supernode;
}

//  (Re)connect to the current super-node of the list.
static int
s_connect_supernode (run_t *self)
{
    if (self->supernode) {
        zpoller_remove (self->poller, self->supernode);
        zsock_destroy (&self->supernode);
    }
    self->supernode = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (self->supernode, JACE_MSG_HEADER_MAX);
    if (jace_security_apply_client (self->security, self->supernode,
            jace_security_supernode_key (self->security))
    ||  zsock_connect (self->supernode, "%s", s_supernode_endpoint (self))) {
        s_fail (self, "cannot connect to super-node '%s'",
                s_supernode_endpoint (self));
        return -1;
    }
    zpoller_add (self->poller, self->supernode);
    self->next_lease_renewal = 0;
    return 0;
}

//  The super-node did not answer: go on with the next one given.  The
//  daemons fail over too, so the grid is still reachable there.
static void
s_fail_over (run_t *self)
{
    if (self->options->supernode_count < 2)
        return;
    const char *silent = s_supernode_endpoint (self);
    self->supernode_index = (self->supernode_index + 1)
                          % self->options->supernode_count;
    zsys_warning ("spawner: super-node %s does not answer, failing over to "
                  "%s", silent, s_supernode_endpoint (self));
    spawner_events_write (self->events, "failover", ",\"from\":\"%s\","
                          "\"to\":\"%s\"", silent,
                          s_supernode_endpoint (self));
    s_connect_supernode (self);
}

static int
s_connect (run_t *self)
{
    char reason [512] = "";
    const spawner_options_t *options = self->options;
    const char *bind = options->bind ? options->bind : "tcp://127.0.0.1:*";
    self->security = jace_security_new (options->keys_dir,
        options->cert ? options->cert : "spawner", reason, sizeof reason);
    if (!self->security
    ||  jace_security_check_bind (self->security, bind, options->insecure,
                                  reason, sizeof reason)) {
        s_fail (self, "%s", reason);
        return -1;
    }
    if (s_connect_supernode (self))
        return -1;
    self->status = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (self->status, JACE_MSG_HEADER_MAX);
    jace_security_apply_server (self->security, self->status);
    if (zsock_bind (self->status, "%s", bind) < 0) {
        s_fail (self, "cannot bind status endpoint %s", bind);
        return -1;
    }
    self->status_endpoint = zsock_last_endpoint (self->status);
    zpoller_add (self->poller, self->status);
    return 0;
}

static run_t *
s_run_new (spawner_job_t *job, const spawner_options_t *options)
{
    run_t *self = (run_t *) zmalloc (sizeof *self);
    self->job = job;
    self->options = options;
    zuuid_t *uuid = zuuid_new ();
    snprintf (self->id, sizeof self->id, "job-%.8s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
    for (char *c = self->id; *c; c++)
        *c = (char) tolower (*c);
    self->poller = zpoller_new (NULL);
    self->leased = jace_msg_new (JACE_MSG_RELEASE);
    self->fenced = zlist_new ();
    self->used = zhash_new ();
    self->task_count = (size_t) spawner_job_tasks (job);
    self->tasks = (task_t *) zmalloc (self->task_count * sizeof (task_t));
    self->first_row = (int64_t *) zmalloc ((self->task_count + 1)
                                           * sizeof (int64_t));
    self->unknowns = spawner_job_rows (job)
                   * spawner_job_unknowns_per_row (job);
    self->x = (double *) zmalloc ((size_t) self->unknowns * sizeof (double));
    self->started = zclock_mono ();
    self->live_table = !options->quiet && isatty (STDERR_FILENO);
    self->verify_backoff = VERIFY_BACKOFF_MIN_MSEC;
    self->residual = INFINITY;
    return self;
}

static void
s_run_destroy (run_t **self_p)
{
    run_t *self = *self_p;
    for (size_t i = 0; i < self->task_count; i++)
        zsock_destroy (&self->tasks [i].link);
    free (self->tasks);
    free (self->first_row);
    free (self->x);
    jace_msg_destroy (&self->leased);
    while (zlist_size (self->fenced)) {
        zsock_t *link = (zsock_t *) zlist_pop (self->fenced);
        zsock_destroy (&link);
    }
    zlist_destroy (&self->fenced);
    zhash_destroy (&self->used);
    spawner_events_destroy (&self->events);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->supernode);
    zsock_destroy (&self->status);
    zstr_free (&self->status_endpoint);
    jace_security_destroy (&self->security);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Lease

static void
s_renew_lease (run_t *self)
{
    int64_t now = zclock_mono ();
    if (now < self->next_lease_renewal)
        return;
    jace_msg_t *beat = jace_msg_new (JACE_MSG_HEARTBEAT);
    jace_msg_set_sender (beat, self->id);
    jace_msg_set_job (beat, self->id);
    jace_msg_send (&beat, self->supernode);
    self->next_lease_renewal = now + LEASE_RENEW_MSEC;
}

static void
s_release_lease (run_t *self)
{
    if (jace_msg_node_count (self->leased) == 0 || !self->supernode)
        return;
    jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
    jace_msg_set_sender (release, self->id);
    jace_msg_set_job (release, self->id);
    for (size_t i = 0; i < jace_msg_node_count (self->leased); i++)
        jace_msg_add_node (release, jace_msg_node (self->leased, i));
    //  Our sockets drop unsent messages on close; this one must leave.
    zsock_set_linger (self->supernode, 1000);
    jace_msg_send (&release, self->supernode);
}

static void
s_on_grant (run_t *self, jace_msg_t *grant)
{
    for (size_t i = 0; i < jace_msg_node_count (grant); i++) {
        const jace_node_t *node = jace_msg_node (grant, i);
        if (jace_msg_node_count (self->leased) < self->lease_target)
            jace_msg_add_node (self->leased, node);
        else {
            //  More than we need (a late grant): give it back.
            jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
            jace_msg_set_sender (release, self->id);
            jace_msg_set_job (release, self->id);
            jace_msg_add_node (release, node);
            jace_msg_send (&release, self->supernode);
        }
    }
}

static void
s_recv_supernode (run_t *self)
{
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (self->supernode, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        self->malformed++;
        zsys_warning ("spawner: malformed message from the super-node: %s",
                      reason);
        return;
    }
    if (jace_msg_type (msg) == JACE_MSG_GRANT
    &&  streq (jace_msg_job (msg), self->id)) {
        self->grant_heard = true;
        s_on_grant (self, msg);
    }
    jace_msg_destroy (&msg);
}

static void s_recv_status (run_t *self);

//  Poll everything once, up to `wait` msec; returns the socket that had
//  input (already handled when it was the super-node or status socket).
static void *
s_poll (run_t *self, int wait)
{
    void *which = zpoller_wait (self->poller, wait);
    //  The poller names one ready socket; daemons' links we are not
    //  reading (while leasing) would always win, so the super-node and
    //  status sockets are drained whatever it picked.
    while (zsock_events (self->supernode) & ZMQ_POLLIN)
        s_recv_supernode (self);
    while (zsock_events (self->status) & ZMQ_POLLIN)
        s_recv_status (self);
    s_renew_lease (self);
    return which;
}

//  Lease daemons until we hold `target`, preferring `cluster` (may be "")
//  and giving up at deadline.  Returns 0, or -1 if short.
static int
s_lease (run_t *self, size_t target, const char *cluster, int64_t deadline)
{
    self->lease_target = target;
    int64_t next_request = 0;
    while (jace_msg_node_count (self->leased) < target && !s_stopping (self)) {
        int64_t now = zclock_mono ();
        if (now >= deadline && next_request)
            return -1;
        if (now >= next_request && next_request && !self->grant_heard)
            s_fail_over (self);
        //  A short grant: daemons may be on their way back from the last
        //  job, so ask again soon rather than after the silence timeout.
        if (self->grant_heard && next_request > now + GRANT_RETRY_MSEC)
            next_request = now + GRANT_RETRY_MSEC;
        if (now >= next_request) {
            self->grant_heard = false;
            jace_msg_t *reserve = jace_msg_new (JACE_MSG_RESERVE);
            jace_msg_set_sender (reserve, self->id);
            jace_msg_set_job (reserve, self->id);
            jace_msg_set_count (reserve, (int64_t) (target
                                - jace_msg_node_count (self->leased)));
            jace_msg_set_interval (reserve, LEASE_MSEC);
            jace_msg_set_cluster (reserve, cluster);
            jace_msg_send (&reserve, self->supernode);
            next_request = now + GRANT_WAIT_MSEC;
        }
        s_poll (self, 100);
    }
    return *self->failure ? -1 : 0;
}

static int
s_reserve (run_t *self)
{
    int64_t deadline = self->started
                     + (int64_t) (spawner_job_reserve_timeout (self->job) * 1000);
    size_t wanted = self->task_count
                  + (size_t) spawner_job_spares (self->job);
    if (s_lease (self, wanted, "", deadline) && !*self->failure)
        s_fail (self, "not enough daemons: %zu of %zu leased from %s "
                "after %.0f s (start more daemons, or lower job/tasks or "
                "job/spares)", jace_msg_node_count (self->leased), wanted,
                s_supernode_endpoint (self),
                spawner_job_reserve_timeout (self->job));
    spawner_events_write (self->events, "lease", ",\"daemons\":%zu,"
                          "\"wanted\":%zu", jace_msg_node_count (self->leased),
                          wanted);
    return *self->failure ? -1 : 0;
}

//  --------------------------------------------------------------------------
//  Placement

//  Neighbouring tasks talk most: keep a cluster's daemons together, the
//  fastest first, so that consecutive blocks share a cluster.
static int
s_compare_placement (const void *a, const void *b)
{
    const jace_node_t *left = (const jace_node_t *) a;
    const jace_node_t *right = (const jace_node_t *) b;
    int by_cluster = strcmp (left->cluster, right->cluster);
    if (by_cluster)
        return by_cluster;
    if (left->power != right->power)
        return left->power > right->power ? -1 : 1;
    return strcmp (left->id, right->id);
}

static jace_msg_t *
s_assign_msg (run_t *self, size_t rank, jace_msg_t *table)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_sender (assign, self->id);
    jace_msg_set_job (assign, self->id);
    jace_msg_set_task (assign, (int64_t) rank);
    jace_msg_set_epoch (assign, self->tasks [rank].epoch);
    jace_msg_set_count (assign, (int64_t) self->task_count);
    jace_msg_set_app (assign, spawner_job_app (self->job)->name);
    zhash_t *params = spawner_job_params (self->job);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params))
        jace_msg_set_param (assign, zhash_cursor (params), value);
    char key [64], value [32];
    snprintf (value, sizeof value, "%" PRId64, spawner_job_rows (self->job));
    jace_msg_set_param (assign, "block/rows", value);
    snprintf (value, sizeof value, "%" PRId64,
              spawner_job_unknowns_per_row (self->job));
    jace_msg_set_param (assign, "block/unknowns_per_row", value);
    for (size_t i = 0; i <= self->task_count; i++) {
        snprintf (key, sizeof key, "block/first/%zu", i);
        snprintf (value, sizeof value, "%" PRId64, self->first_row [i]);
        jace_msg_set_param (assign, key, value);
    }
    for (size_t i = 0; i < jace_msg_node_count (table); i++)
        jace_msg_add_node (assign, jace_msg_node (table, i));
    const jace_app_t *app = spawner_job_app (self->job);
    if (app->attach
    &&  app->attach (spawner_job_problem (self->job), self->first_row,
                     (int64_t) self->task_count, (int64_t) rank, assign)) {
        s_fail (self, "cannot attach the data of task %zu", rank);
        jace_msg_destroy (&assign);
    }
    return assign;
}

static int
s_link_task (run_t *self, task_t *task)
{
    task->link = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (task->link, 0);
    if (jace_security_apply_client (self->security, task->link,
                                    task->daemon.pubkey)
    ||  zsock_connect (task->link, "%s", task->daemon.endpoint)) {
        s_fail (self, "cannot connect to daemon %s at '%s'", task->daemon.id,
                task->daemon.endpoint);
        return -1;
    }
    zpoller_add (self->poller, task->link);
    return 0;
}

static int
s_place (run_t *self)
{
    size_t count = self->task_count;
    size_t held = jace_msg_node_count (self->leased);
    jace_node_t *nodes = (jace_node_t *) zmalloc (held * sizeof (jace_node_t));
    double *power = (double *) zmalloc (count * sizeof (double));
    for (size_t i = 0; i < held; i++)
        nodes [i] = *jace_msg_node (self->leased, i);
    //  The tasks take the first daemons in placement order; the rest are
    //  the job's spares.
    qsort (nodes, held, sizeof (jace_node_t), s_compare_placement);
    jace_msg_t *table = jace_msg_new (JACE_MSG_ASSIGN);
    for (size_t rank = 0; rank < count; rank++) {
        task_t *task = &self->tasks [rank];
        task->daemon = nodes [rank];
        task->daemon.task = (int64_t) rank;
        task->daemon.epoch = task->epoch = 1;
        task->state = -1;
        task->last_heard = zclock_mono ();
        zhash_insert (self->used, task->daemon.id, (void *) "task");
        power [rank] = nodes [rank].power;
        jace_msg_add_node (table, &task->daemon);
    }
    spawner_job_partition (self->job, power, count, self->first_row);
    int rc = 0;
    for (size_t rank = 0; rank < count && rc == 0; rank++) {
        task_t *task = &self->tasks [rank];
        rc = s_link_task (self, task);
        jace_msg_t *assign = rc == 0 ? s_assign_msg (self, rank, table)
                                     : NULL;
        if (!assign)
            rc = -1;
        if (rc == 0) {
            jace_msg_send (&assign, task->link);
            spawner_events_write (self->events, "assign", ",\"task\":%zu,"
                "\"daemon\":\"%s\",\"cluster\":\"%s\",\"power\":%.3f,"
                "\"rows\":%" PRId64, rank, task->daemon.id,
                task->daemon.cluster, task->daemon.power,
                self->first_row [rank + 1] - self->first_row [rank]);
        }
    }
    jace_msg_destroy (&table);
    free (nodes);
    free (power);
    return rc;
}

//  --------------------------------------------------------------------------
//  Messages from daemons

static task_t *
s_task_of (run_t *self, void *link)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].link == link)
            return &self->tasks [i];
    return NULL;
}

static void
s_on_result (run_t *self, task_t *task, jace_msg_t *msg)
{
    size_t rank = (size_t) (task - self->tasks);
    int64_t per_row = spawner_job_unknowns_per_row (self->job);
    int64_t first = self->first_row [rank] * per_row;
    int64_t count = (self->first_row [rank + 1] - self->first_row [rank])
                  * per_row;
    if (jace_msg_count (msg) != self->snapshot || self->snapshot == 0)
        return;                 //  A late answer to an older snapshot
    if (jace_msg_payload_count (msg) != 1
    ||  jace_msg_payload_kind (msg, 0) != JACE_PAYLOAD_F64
    ||  jace_msg_first (msg) != first
    ||  (int64_t) jace_msg_payload_length (msg, 0) != count) {
        self->malformed++;
        zsys_warning ("spawner: RESULT of task %zu does not match its block "
                      "(first %" PRId64 ", %zu values), dropped", rank,
                      jace_msg_first (msg), jace_msg_payload_count (msg)
                      ? jace_msg_payload_length (msg, 0) : 0);
        return;
    }
    jace_msg_payload_copy (msg, 0, self->x + first);
    task->collected = true;
}

static void s_announce_move (run_t *self, size_t rank);

//  A replacement accepted its task: tell the others where it is, and let
//  it go.
static void
s_start_task (run_t *self, task_t *task)
{
    s_announce_move (self, (size_t) (task - self->tasks));
    jace_msg_t *start = jace_msg_new (JACE_MSG_START);
    jace_msg_set_job (start, self->id);
    jace_msg_set_epoch (start, task->epoch);
    jace_msg_send (&start, task->link);
    task->started = true;
    spawner_events_write (self->events, "restart", ",\"task\":%td,"
                          "\"daemon\":\"%s\",\"epoch\":%" PRId64,
                          task - self->tasks, task->daemon.id, task->epoch);
}

//  A replacement restarted: from a neighbour's copy, or from scratch.
static void
s_on_restored (run_t *self, task_t *task, jace_msg_t *msg)
{
    size_t rank = (size_t) (task - self->tasks);
    int64_t holder = jace_msg_count (msg);
    if (!task->restoring)
        return;
    task->restoring = false;
    task->iteration = jace_msg_iteration (msg);
    if (holder >= 0)
        self->from_checkpoint++;
    else {
        self->from_initial++;
        zsys_notice ("spawner: task %zu restarts from its initial state: "
                     "no copy of its checkpoints survived", rank);
    }
    spawner_events_write (self->events, "restored", ",\"task\":%zu,"
        "\"daemon\":\"%s\",\"epoch\":%" PRId64 ",\"from\":\"%s\","
        "\"iteration\":%" PRId64 ",\"holder\":%" PRId64 ",\"fetch_ms\":%.1f",
        rank, task->daemon.id, task->epoch,
        holder >= 0 ? "checkpoint" : "initial", jace_msg_iteration (msg),
        holder, jace_msg_value (msg) * 1000);
}

static void
s_on_task_message (run_t *self, task_t *task, jace_msg_t *msg)
{
    size_t rank = (size_t) (task - self->tasks);
    //  HEARTBEAT names only its sender; the rest name task and epoch.
    bool heartbeat = jace_msg_type (msg) == JACE_MSG_HEARTBEAT;
    if (!heartbeat && (jace_msg_epoch (msg) != task->epoch
                       || jace_msg_task (msg) != (int64_t) rank))
        return;                 //  From an older placement of this task
    //  A daemon started on the port of a dead one is reached by the dead
    //  one's link: its word says nothing of our task's daemon.
    if (*jace_msg_sender (msg)
    &&  !streq (jace_msg_sender (msg), task->daemon.id)) {
        self->malformed++;
        zsys_warning ("spawner: %s answers on the link to %s (task %zu), "
                      "ignored", jace_msg_sender (msg), task->daemon.id,
                      rank);
        return;
    }
    task->last_heard = zclock_mono ();
    switch (jace_msg_type (msg)) {
        case JACE_MSG_ACCEPT:
            task->accepted = true;
            if (self->running && !task->started)
                s_start_task (self, task);
            break;
        case JACE_MSG_REFUSE:
            s_fail (self, "daemon %s refused task %zu: %s", task->daemon.id,
                    rank, jace_msg_reason (msg));
            break;
        case JACE_MSG_PROGRESS:
            task->iteration = jace_msg_iteration (msg);
            task->change = jace_msg_value (msg);
            task->state = jace_msg_state (msg);
            task->held_bytes = jace_msg_count (msg);
            break;
        case JACE_MSG_RESTORED:
            s_on_restored (self, task, msg);
            break;
        case JACE_MSG_RESULT:
            s_on_result (self, task, msg);
            break;
        default:
            break;              //  HEARTBEAT: last_heard is all it says
    }
}

//  A daemon we replaced speaks again (it was only slow, or cut off): it
//  is fenced, and told to drop its task and go back to its super-node.
static void
s_recv_fenced (run_t *self, zsock_t *link)
{
    jace_msg_t *msg = jace_msg_recv (link, NULL, 0, NULL, 0);
    if (!msg)
        return;
    zsys_notice ("spawner: replaced daemon %s speaks again (epoch %" PRId64
                 "): told to stop", jace_msg_sender (msg),
                 jace_msg_epoch (msg));
    spawner_events_write (self->events, "fenced", ",\"task\":%" PRId64
                          ",\"epoch\":%" PRId64, jace_msg_task (msg),
                          jace_msg_epoch (msg));
    jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
    jace_msg_set_job (stop, self->id);
    jace_msg_set_reason (stop, "fenced: your task runs elsewhere now");
    jace_msg_send (&stop, link);
    jace_msg_destroy (&msg);
}

static void
s_recv_task (run_t *self, void *link)
{
    task_t *task = s_task_of (self, link);
    if (!task) {
        s_recv_fenced (self, (zsock_t *) link);
        return;
    }
    char reason [256];
    jace_msg_t *msg = jace_msg_recv ((zsock_t *) link, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        self->malformed++;
        zsys_warning ("spawner: malformed message from daemon %s: %s",
                      task->daemon.id, reason);
        return;
    }
    if (streq (jace_msg_job (msg), self->id))
        s_on_task_message (self, task, msg);
    jace_msg_destroy (&msg);
}

//  Anyone may ask where the job stands; garbage is counted and dropped.
static void
s_recv_status (run_t *self)
{
    char reason [256], sender [128];
    jace_msg_t *msg = jace_msg_recv (self->status, reason, sizeof reason,
                                     sender, sizeof sender);
    if (!msg || jace_msg_type (msg) != JACE_MSG_STATUS) {
        self->malformed++;
        zsys_warning ("spawner: dropped %s from %s: %s (%" PRIu64
                      " bad messages so far)", msg ? jace_msg_type_name (
                      jace_msg_type (msg)) : "message", sender,
                      msg ? "not a STATUS" : reason, self->malformed);
        jace_msg_destroy (&msg);
        return;
    }
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, self->id);
    for (size_t i = 0; i < self->task_count; i++) {
        jace_node_t node = self->tasks [i].daemon;
        node.state = self->tasks [i].state;
        jace_msg_add_node (reply, &node);
    }
    jace_msg_set_routing_id (reply, jace_msg_routing_id (msg));
    jace_msg_send (&reply, self->status);
    jace_msg_destroy (&msg);
}

static void
s_poll_tasks (run_t *self, int wait)
{
    void *which = s_poll (self, wait);
    if (which && which != self->supernode && which != self->status)
        s_recv_task (self, which);
}

//  --------------------------------------------------------------------------
//  Start

static void
s_send_all (run_t *self, jace_msg_type_t type, const char *reason)
{
    for (size_t i = 0; i < self->task_count; i++) {
        if (!self->tasks [i].link)
            continue;
        jace_msg_t *msg = jace_msg_new (type);
        jace_msg_set_job (msg, self->id);
        jace_msg_set_epoch (msg, self->tasks [i].epoch);
        jace_msg_set_count (msg, self->snapshot);
        if (reason)
            jace_msg_set_reason (msg, reason);
        jace_msg_send (&msg, self->tasks [i].link);
    }
}

static void s_replace (run_t *self, size_t rank, int64_t silent);

//  Replace the daemons that went silent before accepting their task: a
//  daemon that died after the super-node last heard from it is still
//  leased until it expires there.  Returns how many were replaced.
static size_t
s_replace_silent_unaccepted (run_t *self, int64_t now)
{
    int64_t timeout = spawner_job_heartbeat_timeout (self->job);
    size_t replaced = 0;
    for (size_t i = 0; i < self->task_count && !*self->failure; i++)
        if (!self->tasks [i].accepted
        &&  now - self->tasks [i].last_heard > timeout) {
            s_replace (self, i, now - self->tasks [i].last_heard);
            replaced++;
        }
    return replaced;
}

static int
s_start_tasks (run_t *self)
{
    int64_t deadline = zclock_mono () + ACCEPT_WAIT_MSEC;
    size_t accepted = 0;
    while (accepted < self->task_count && !s_stopping (self)) {
        if (zclock_mono () > deadline) {
            s_fail (self, "only %zu of %zu daemons accepted their task "
                    "within %d s", accepted, self->task_count,
                    ACCEPT_WAIT_MSEC / 1000);
            break;
        }
        s_poll_tasks (self, 100);
        if (s_replace_silent_unaccepted (self, zclock_mono ()))
            deadline = zclock_mono () + ACCEPT_WAIT_MSEC;
        accepted = 0;
        for (size_t i = 0; i < self->task_count; i++)
            accepted += self->tasks [i].accepted;
    }
    if (*self->failure)
        return -1;
    //  The first ASSIGNs named the daemons first placed: tell everyone
    //  where a task replaced before the start now is.
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].epoch > 1)
            s_announce_move (self, i);
    s_send_all (self, JACE_MSG_START, NULL);
    for (size_t i = 0; i < self->task_count; i++)
        self->tasks [i].started = true;
    self->running = true;
    spawner_events_write (self->events, "start", ",\"tasks\":%zu,"
                          "\"status\":\"%s\"", self->task_count,
                          self->status_endpoint);
    return 0;
}

//  --------------------------------------------------------------------------
//  Monitoring

static void
s_iteration_range (run_t *self, int64_t *min, int64_t *max)
{
    *min = INT64_MAX;
    *max = 0;
    for (size_t i = 0; i < self->task_count; i++) {
        int64_t iteration = self->tasks [i].iteration;
        *min = iteration < *min ? iteration : *min;
        *max = iteration > *max ? iteration : *max;
    }
}

static size_t
s_count_state (run_t *self, int64_t state)
{
    size_t count = 0;
    for (size_t i = 0; i < self->task_count; i++)
        count += self->tasks [i].state == state;
    return count;
}

static const char *
s_task_state_name (int64_t state)
{
    switch (state) {
        case JACE_TASK_RUNNING:   return "running";
        case JACE_TASK_CONVERGED: return "converged";
        case JACE_TASK_EXHAUSTED: return "at cap";
        default:                  return "starting";
    }
}

//  Redraw the task table in place (ANSI: cursor up, clear line).
static void
s_draw_table (run_t *self, int64_t now)
{
    if (self->table_lines)
        fprintf (stderr, "\033[%zuA", self->table_lines);
    fprintf (stderr, "\033[2K%s  %.1f s  snapshots %" PRId64 "  last "
             "residual %.2e\n", self->id, (now - self->started) / 1000.0,
             self->snapshots, self->residual);
    fprintf (stderr, "\033[2K%5s  %-16s %-10s %12s %12s  %s\n", "TASK",
             "DAEMON", "CLUSTER", "ITERATION", "CHANGE", "STATE");
    for (size_t i = 0; i < self->task_count; i++) {
        task_t *task = &self->tasks [i];
        fprintf (stderr, "\033[2K%5zu  %-16s %-10s %12" PRId64 " %12.3e  "
                 "%s\n", i, task->daemon.id, task->daemon.cluster,
                 task->iteration, task->change, task->restoring
                 ? "restoring" : s_task_state_name (task->state));
    }
    self->table_lines = self->task_count + 2;
}

static void
s_report_progress (run_t *self, int64_t now)
{
    if (now >= self->next_progress_event) {
        for (size_t i = 0; i < self->task_count; i++) {
            task_t *task = &self->tasks [i];
            spawner_events_write (self->events, "progress", ",\"task\":%zu,"
                "\"daemon\":\"%s\",\"iteration\":%" PRId64 ",\"change\":%.6e,"
                "\"state\":%" PRId64 ",\"held_bytes\":%" PRId64, i,
                task->daemon.id, task->iteration,
                isfinite (task->change) ? task->change : -1.0, task->state,
                task->held_bytes);
        }
        self->next_progress_event = now + PROGRESS_EVENT_MSEC;
    }
    if (self->live_table && now >= self->next_print) {
        s_draw_table (self, now);
        self->next_print = now + LIVE_TABLE_MSEC;
    }
    else
    if (now >= self->next_print && !self->options->quiet) {
        int64_t min, max;
        s_iteration_range (self, &min, &max);
        double change = 0;
        for (size_t i = 0; i < self->task_count; i++)
            change = fmax (change, self->tasks [i].change);
        fprintf (stderr, "%s: %.1f s, iterations %" PRId64 "..%" PRId64
                 ", max change %.2e, locally converged %zu/%zu\n", self->id,
                 (now - self->started) / 1000.0, min, max, change,
                 s_count_state (self, JACE_TASK_CONVERGED), self->task_count);
        self->next_print = now + PROGRESS_PRINT_MSEC;
    }
}

//  Every task's daemon, as the ASSIGN of a (re)placed task lists them.
static jace_msg_t *
s_task_table (run_t *self)
{
    jace_msg_t *table = jace_msg_new (JACE_MSG_ASSIGN);
    for (size_t i = 0; i < self->task_count; i++)
        jace_msg_add_node (table, &self->tasks [i].daemon);
    return table;
}

//  Tell every other task where task `rank` runs now.
static void
s_announce_move (run_t *self, size_t rank)
{
    for (size_t i = 0; i < self->task_count; i++) {
        if (i == rank || !self->tasks [i].link)
            continue;
        jace_msg_t *remap = jace_msg_new (JACE_MSG_REMAP);
        jace_msg_set_job (remap, self->id);
        jace_msg_set_task (remap, (int64_t) rank);
        jace_msg_set_epoch (remap, self->tasks [rank].epoch);
        jace_msg_add_node (remap, &self->tasks [rank].daemon);
        jace_msg_send (&remap, self->tasks [i].link);
    }
}

//  The spare the job's replacement policy picks for a task whose daemon
//  `dead` died, among the leased daemons no task used yet; or NULL.
static jace_node_t *
s_take_spare (run_t *self, const jace_node_t *dead,
              const spawner_replacement_t *policy, jace_node_t *spare)
{
    size_t held = jace_msg_node_count (self->leased);
    jace_node_t *spares = (jace_node_t *) zmalloc ((held + 1)
                                                   * sizeof (jace_node_t));
    size_t count = 0;
    for (size_t i = 0; i < held; i++) {
        const jace_node_t *node = jace_msg_node (self->leased, i);
        if (!zhash_lookup (self->used, node->id))
            spares [count++] = *node;
    }
    int chosen = policy->pick_spare (dead, spares, count);
    if (chosen >= 0 && (size_t) chosen < count)
        *spare = spares [chosen];
    free (spares);
    return chosen >= 0 && (size_t) chosen < count ? spare : NULL;
}

//  The daemon of task `rank` is dead: take a spare or lease another,
//  nearest first, place the task there with a new epoch (it restarts from
//  the newest checkpoint its neighbours kept, or from its initial state),
//  and fence the old daemon in case it was only slow.
static void
s_replace (run_t *self, size_t rank, int64_t silent)
{
    task_t *task = &self->tasks [rank];
    int64_t detected = zclock_mono ();
    zsys_notice ("spawner: daemon %s (task %zu, cluster %s) silent for %"
                 PRId64 " ms: replacing it", task->daemon.id, rank,
                 task->daemon.cluster, silent);
    spawner_events_write (self->events, "dead", ",\"task\":%zu,"
                          "\"daemon\":\"%s\",\"silent_ms\":%" PRId64,
                          rank, task->daemon.id, silent);
    if (task->link)
        zlist_append (self->fenced, task->link);
    task->link = NULL;
    const spawner_replacement_t *policy = spawner_job_replacement (self->job);
    jace_node_t chosen;
    const jace_node_t *spare = s_take_spare (self, &task->daemon, policy,
                                             &chosen);
    if (!spare) {
        size_t held = jace_msg_node_count (self->leased);
        int64_t deadline = detected
            + (int64_t) (spawner_job_reserve_timeout (self->job) * 1000);
        if (s_lease (self, held + 1, policy->lease_cluster (&task->daemon),
                     deadline)) {
            s_fail (self, "daemon %s of task %zu died and no free daemon "
                    "took its place within %.0f s", task->daemon.id, rank,
                    spawner_job_reserve_timeout (self->job));
            return;
        }
        spare = jace_msg_node (self->leased, held);
    }
    jace_node_t node = *spare;
    zhash_insert (self->used, node.id, (void *) "task");
    node.task = (int64_t) rank;
    node.epoch = task->epoch + 1;
    *task = (task_t) { .daemon = node, .epoch = node.epoch, .state = -1,
                       .last_heard = zclock_mono (), .restoring = true };
    if (s_link_task (self, task))
        return;
    jace_msg_t *table = s_task_table (self);
    jace_msg_t *assign = s_assign_msg (self, rank, table);
    jace_msg_destroy (&table);
    if (!assign)
        return;
    jace_msg_send (&assign, task->link);
    //  The others hear of the move once the task is set up (its ACCEPT):
    //  their request lists would be dropped by a daemon without the task.
    //  We read no daemon's messages while leasing: that time is ours, not
    //  their silence.  (A daemon that died meanwhile is still detected.)
    int64_t deaf = zclock_mono () - detected;
    for (size_t i = 0; i < self->task_count; i++)
        if (i != rank)
            self->tasks [i].last_heard += deaf;
    self->snapshot = 0;
    self->replacements++;
    spawner_events_write (self->events, "replace", ",\"task\":%zu,"
        "\"daemon\":\"%s\",\"cluster\":\"%s\",\"epoch\":%" PRId64
        ",\"seconds\":%.3f", rank, node.id, node.cluster, node.epoch,
        (zclock_mono () - detected) / 1000.0);
}

static void
s_check_liveness (run_t *self, int64_t now)
{
    int64_t timeout = spawner_job_heartbeat_timeout (self->job);
    for (size_t i = 0; i < self->task_count && !*self->failure; i++)
        if (now - self->tasks [i].last_heard > timeout)
            s_replace (self, i, now - self->tasks [i].last_heard);
    double limit = spawner_job_max_seconds (self->job);
    if (now - self->started > (int64_t) (limit * 1000))
        s_fail (self, "wall-time limit job/max_seconds = %g s reached before "
                "convergence (last verified residual %.3e, tolerance %.1e)",
                limit, self->residual, spawner_job_tolerance (self->job));
}

//  --------------------------------------------------------------------------
//  Verification

static bool
s_all_settled (run_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].state != JACE_TASK_CONVERGED
        &&  self->tasks [i].state != JACE_TASK_EXHAUSTED)
            return false;
    return true;
}

static void
s_begin_snapshot (run_t *self)
{
    self->snapshot = ++self->snapshots;
    for (size_t i = 0; i < self->task_count; i++)
        self->tasks [i].collected = false;
    s_send_all (self, JACE_MSG_COLLECT, NULL);
}

//  When to take the next snapshot after one failed.  A residual that fell
//  by a quarter or more since the last snapshot is closing in on the
//  tolerance: check again soon.  One that did not is slow or stuck: back
//  off, so that a job that cannot converge never floods its daemons.
static void
s_back_off (run_t *self, int64_t now, double previous)
{
    if (self->residual <= VERIFY_PROGRESS * previous)
        self->verify_backoff = VERIFY_BACKOFF_MIN_MSEC;
    else
        self->verify_backoff = self->verify_backoff * 2
                             > VERIFY_BACKOFF_MAX_MSEC
                             ? VERIFY_BACKOFF_MAX_MSEC
                             : self->verify_backoff * 2;
    self->next_verify = now + self->verify_backoff;
}

static void
s_verify_snapshot (run_t *self, int64_t now)
{
    const jace_app_t *app = spawner_job_app (self->job);
    double previous = self->residual;
    self->residual = app->residual (spawner_job_problem (self->job), self->x,
                                    self->unknowns);
    double tolerance = spawner_job_tolerance (self->job);
    self->verified = isfinite (self->residual) && self->residual <= tolerance;
    spawner_events_write (self->events, "verification", ",\"snapshot\":%"
                          PRId64 ",\"residual\":%.6e,\"passed\":%s",
                          self->snapshot, isfinite (self->residual)
                          ? self->residual : -1.0,
                          self->verified ? "true" : "false");
    self->snapshot = 0;
    if (self->verified)
        return;
    if (s_count_state (self, JACE_TASK_EXHAUSTED) == self->task_count)
        s_fail (self, "no convergence within job/max_iterations = %" PRId64
                ": relative residual %.3e, tolerance %.1e",
                spawner_job_max_iterations (self->job), self->residual,
                tolerance);
    else
    if (!isfinite (self->residual))
        s_fail (self, "the iteration diverges: the residual is not finite");
    s_back_off (self, now, previous);
}

static void
s_step_verification (run_t *self, int64_t now)
{
    if (self->snapshot) {
        for (size_t i = 0; i < self->task_count; i++)
            if (!self->tasks [i].collected)
                return;
        s_verify_snapshot (self, now);
    }
    else
    if (s_all_settled (self) && now >= self->next_verify) {
        if (!self->convergence_reported)
            spawner_events_write (self->events, "convergence",
                                  ",\"detected\":\"local\"");
        self->convergence_reported = true;
        s_begin_snapshot (self);
    }
}

//  Crash the daemons the job file's schedule picks for this moment, as a
//  power cut would: a CRASH makes the daemon exit at once.
static void
s_inject_faults (run_t *self, int64_t now)
{
    spawner_faults_t *faults = spawner_job_faults (self->job);
    if (self->resumed)
        return;                 //  The schedule was the first spawner's
    size_t due = spawner_faults_due (faults, now - self->started);
    if (due == 0)
        return;
    int64_t *candidates = (int64_t *) zmalloc (self->task_count
                                               * sizeof (int64_t));
    int64_t *victims = (int64_t *) zmalloc ((due + self->task_count)
                                            * sizeof (int64_t));
    size_t candidate_count = 0;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].link && self->tasks [i].started
        &&  !self->tasks [i].restoring)
            candidates [candidate_count++] = (int64_t) i;
    size_t picked = spawner_faults_pick (faults, candidates, candidate_count,
                                         due, victims);
    for (size_t i = 0; i < picked; i++) {
        task_t *task = &self->tasks [victims [i]];
        jace_msg_t *crash = jace_msg_new (JACE_MSG_CRASH);
        jace_msg_set_sender (crash, self->id);
        jace_msg_set_job (crash, self->id);
        jace_msg_send (&crash, task->link);
        self->crashes++;
        zsys_notice ("spawner: crashing daemon %s of task %" PRId64
                     " (job file schedule)", task->daemon.id, victims [i]);
        spawner_events_write (self->events, "crash", ",\"task\":%" PRId64
                              ",\"daemon\":\"%s\",\"how\":\"scheduled\"",
                              victims [i], task->daemon.id);
    }
    if (picked < due)
        zsys_warning ("spawner: %zu crashes scheduled, only %zu daemons "
                      "could be picked", due, picked);
    free (candidates);
    free (victims);
}

//  With report/sample_seconds, gather a snapshot that often to follow the
//  true residual over time (a passing one ends the job like any other).
static void
s_sample_residual (run_t *self, int64_t now)
{
    double period = spawner_job_sample_seconds (self->job);
    if (period <= 0 || self->snapshot || now < self->next_sample)
        return;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].state < 0 || self->tasks [i].restoring)
            return;             //  Not every task iterates yet
    s_begin_snapshot (self);
    self->next_sample = now + (int64_t) (period * 1000);
}

static int
s_monitor (run_t *self)
{
    while (!self->verified && !s_stopping (self)) {
        s_poll_tasks (self, 50);
        int64_t now = zclock_mono ();
        s_report_progress (self, now);
        s_inject_faults (self, now);
        s_check_liveness (self, now);
        s_sample_residual (self, now);
        s_step_verification (self, now);
    }
    return self->verified ? 0 : -1;
}

//  --------------------------------------------------------------------------
//  Outcome

static void
s_print_summary (run_t *self, double seconds, double error)
{
    int64_t min, max;
    s_iteration_range (self, &min, &max);
    printf ("job %s: verified answer\n", self->id);
    printf ("  application    %s, %zu tasks, %" PRId64 " unknowns\n",
            spawner_job_app (self->job)->name, self->task_count,
            self->unknowns);
    printf ("  daemons       ");
    for (size_t i = 0; i < self->task_count; i++)
        printf (" %s@%s", self->tasks [i].daemon.id,
                self->tasks [i].daemon.cluster);
    printf ("\n  time           %.3f s\n", seconds);
    printf ("  iterations     %" PRId64 "..%" PRId64 " per task\n", min, max);
    printf ("  residual       %.3e (relative, true ||b - Ax|| / ||b||; "
            "tolerance %.1e)\n", self->residual,
            spawner_job_tolerance (self->job));
    if (!isnan (error))
        printf ("  error          %.3e (max-norm, against the known "
                "solution)\n", error);
    if (self->crashes)
        printf ("  crashed        %" PRId64 " daemons on purpose (job file "
                "schedule)\n", self->crashes);
    if (self->replacements)
        printf ("  replaced       %" PRId64 " dead daemons during the job: "
                "%" PRId64 " restarted from a checkpoint, %" PRId64 " from "
                "the initial state\n", self->replacements,
                self->from_checkpoint, self->from_initial);
    if (self->options->out_path)
        printf ("  solution       %s\n", self->options->out_path);
    fflush (stdout);
}

static int
s_finish (run_t *self)
{
    s_send_all (self, JACE_MSG_STOP, *self->failure ? self->failure
                                                    : "job done");
    s_release_lease (self);
    double seconds = (zclock_mono () - self->started) / 1000.0;
    if (!*self->failure && self->options->out_path) {
        char reason [512];
        if (spawner_output_write (self->options->out_path, self->x,
                                  self->unknowns, reason, sizeof reason))
            s_fail (self, "%s", reason);
    }
    if (*self->failure) {
        char escaped [2048];
        spawner_events_escape (escaped, sizeof escaped, self->failure);
        spawner_events_write (self->events, "failure", ",\"reason\":\"%s\"",
                              escaped);
        fprintf (stderr, "jace-spawner: %s: job %s failed: %s\n",
                 self->options->job_file, self->id, self->failure);
        return 1;
    }
    int64_t min, max;
    s_iteration_range (self, &min, &max);
    const jace_app_t *app = spawner_job_app (self->job);
    double error = app->error ? app->error (spawner_job_problem (self->job),
                                            self->x, self->unknowns)
                              : NAN;
    char error_field [64] = "";
    if (!isnan (error))
        snprintf (error_field, sizeof error_field, ",\"error\":%.6e", error);
    spawner_events_write (self->events, "result", ",\"seconds\":%.3f,"
        "\"tasks\":%zu,\"iterations_min\":%" PRId64 ",\"iterations_max\":%"
        PRId64 ",\"unknowns\":%" PRId64 ",\"replacements\":%" PRId64
        ",\"crashes\":%" PRId64 ",\"from_checkpoint\":%" PRId64
        ",\"from_initial\":%" PRId64 "%s,\"tolerance\":%.3e,"
        "\"residual\":%.6e", seconds, self->task_count, min, max,
        self->unknowns, self->replacements, self->crashes,
        self->from_checkpoint, self->from_initial, error_field,
        spawner_job_tolerance (self->job), self->residual);
    s_print_summary (self, seconds, error);
    return 0;
}

int
spawner_run (spawner_job_t *job, const spawner_options_t *options)
{
    assert (job && options && options->supernode);
    run_t *self = s_run_new (job, options);
    self->events = spawner_events_new (options->events_path, self->id);
    if (!self->events) {
        fprintf (stderr, "jace-spawner: cannot write events to %s: %s\n",
                 options->events_path, strerror (errno));
        s_run_destroy (&self);
        return 1;
    }
    if (s_connect (self) == 0
    &&  s_reserve (self) == 0
    &&  s_place (self) == 0
    &&  s_start_tasks (self) == 0)
        s_monitor (self);
    int rc = s_finish (self);
    s_run_destroy (&self);
    return rc;
}

//  --------------------------------------------------------------------------
//  Resuming a job whose spawner died

#define ADOPT_WAIT_MSEC 5000

//  Connect to every daemon working for the job and ask each what it runs.
//  Returns the ASSIGN answers (a list of jace_msg_t), possibly empty.
static zlist_t *
s_adopt_daemons (const char *job_id, const spawner_options_t *options,
                 jace_security_t *security, char *reason, size_t reason_size)
{
    zlist_t *answers = zlist_new ();
    jace_msg_t *registry = spawner_nodes_query (options->supernode, security,
                                                ADOPT_WAIT_MSEC);
    if (!registry) {
        snprintf (reason, reason_size, "super-node %s does not answer",
                  options->supernode);
        return answers;
    }
    zpoller_t *poller = zpoller_new (NULL);
    zlist_t *links = zlist_new ();
    for (size_t i = 0; i < jace_msg_node_count (registry); i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        if (node->state != JACE_NODE_WORKING || !streq (node->job, job_id))
            continue;
        zsock_t *link = zsock_new (ZMQ_DEALER);
        jace_msg_prepare_socket (link, 0);
        if (jace_security_apply_client (security, link, node->pubkey)
        ||  zsock_connect (link, "%s", node->endpoint)) {
            zsock_destroy (&link);
            continue;
        }
        jace_msg_t *adopt = jace_msg_new (JACE_MSG_ADOPT);
        jace_msg_set_sender (adopt, "jace-spawner-resume");
        jace_msg_set_job (adopt, job_id);
        jace_msg_send (&adopt, link);
        zpoller_add (poller, link);
        zlist_append (links, link);
    }
    size_t wanted = zlist_size (links);
    int64_t deadline = zclock_mono () + ADOPT_WAIT_MSEC;
    while (zlist_size (answers) < wanted && zclock_mono () < deadline
           && !zsys_interrupted) {
        zsock_t *which = (zsock_t *) zpoller_wait (poller, 100);
        jace_msg_t *msg = which ? jace_msg_recv (which, NULL, 0, NULL, 0)
                                : NULL;
        if (msg && jace_msg_type (msg) == JACE_MSG_ASSIGN
        &&  streq (jace_msg_job (msg), job_id))
            zlist_append (answers, msg);
        else
            jace_msg_destroy (&msg);
    }
    if (wanted == 0)
        snprintf (reason, reason_size, "no daemon works for job %s (as %s "
                  "sees it)", job_id, options->supernode);
    zpoller_destroy (&poller);
    while (zlist_size (links)) {
        zsock_t *link = (zsock_t *) zlist_pop (links);
        zsock_destroy (&link);
    }
    zlist_destroy (&links);
    jace_msg_destroy (&registry);
    return answers;
}

//  The answer with the newest placement of each task, in task order, and
//  the block starts the job was cut with.
static int
s_rebuild_tasks (run_t *self, zlist_t *answers)
{
    for (size_t i = 0; i < self->task_count; i++) {
        task_t *task = &self->tasks [i];
        task->state = -1;
        task->accepted = task->started = true;
        task->last_heard = 0;      //  Silent until it speaks: replaced
    }
    //  Every table has every task's daemon; the newest epoch wins.
    for (jace_msg_t *answer = (jace_msg_t *) zlist_first (answers); answer;
         answer = (jace_msg_t *) zlist_next (answers))
        for (size_t i = 0; i < jace_msg_node_count (answer); i++) {
            const jace_node_t *node = jace_msg_node (answer, i);
            if (node->task < 0 || node->task >= (int64_t) self->task_count)
                return -1;
            task_t *task = &self->tasks [node->task];
            if (node->epoch > task->epoch) {
                task->daemon = *node;
                task->epoch = node->epoch;
            }
        }
    for (jace_msg_t *answer = (jace_msg_t *) zlist_first (answers); answer;
         answer = (jace_msg_t *) zlist_next (answers)) {
        task_t *task = &self->tasks [jace_msg_task (answer)];
        if (jace_msg_epoch (answer) == task->epoch && !task->link) {
            task->last_heard = zclock_mono ();
            zhash_insert (self->used, task->daemon.id, (void *) "task");
            jace_msg_add_node (self->leased, &task->daemon);
            if (s_link_task (self, task))
                return -1;
            //  The daemon answers whoever spoke last: make that us, here.
            jace_msg_t *adopt = jace_msg_new (JACE_MSG_ADOPT);
            jace_msg_set_sender (adopt, self->id);
            jace_msg_set_job (adopt, self->id);
            jace_msg_send (&adopt, task->link);
        }
    }
    for (size_t i = 0; i <= self->task_count; i++) {
        char key [64];
        snprintf (key, sizeof key, "block/first/%zu", i);
        const char *row = (const char *) zhash_lookup (
            spawner_job_params (self->job), key);
        if (!row)
            return -1;
        self->first_row [i] = atoll (row);
        //  The answer is gathered into x by these rows: they must cut
        //  exactly the job's rows, in order.
        if ((i == 0 && self->first_row [0] != 0)
        ||  (i > 0 && self->first_row [i] < self->first_row [i - 1]))
            return -1;
    }
    return self->first_row [self->task_count] == spawner_job_rows (self->job)
         ? 0 : -1;
}

static spawner_job_t *
s_adopted_job (zlist_t *answers, const char *job_id, char *reason,
               size_t reason_size)
{
    jace_msg_t *first = (jace_msg_t *) zlist_first (answers);
    char what [128];
    snprintf (what, sizeof what, "job %s (as its daemons describe it)",
              job_id);
    return spawner_job_adopt (jace_msg_params (first), what, reason,
                              reason_size);
}

int
spawner_resume (const char *job_id, const spawner_options_t *options)
{
    assert (job_id && options && options->supernode);
    char reason [1024] = "";
    jace_security_t *security = jace_security_new (options->keys_dir,
        options->cert ? options->cert : "spawner", reason, sizeof reason);
    zlist_t *answers = security ? s_adopt_daemons (job_id, options, security,
                                                   reason, sizeof reason)
                                : zlist_new ();
    jace_security_destroy (&security);
    spawner_job_t *job = zlist_size (answers)
        ? s_adopted_job (answers, job_id, reason, sizeof reason) : NULL;
    int rc = 1;
    if (job) {
        run_t *self = s_run_new (job, options);
        snprintf (self->id, sizeof self->id, "%s", job_id);
        self->resumed = self->running = true;
        self->events = options->events_path
                     ? spawner_events_append (options->events_path, job_id)
                     : spawner_events_new (NULL, job_id);
        if (!self->events)
            s_fail (self, "cannot write events to %s: %s",
                    options->events_path, strerror (errno));
        else
        if (s_connect (self) == 0 && s_rebuild_tasks (self, answers))
            s_fail (self, "the daemons of job %s describe it inconsistently",
                    job_id);
        if (!*self->failure) {
            spawner_events_write (self->events, "resume", ",\"tasks\":%zu,"
                                  "\"daemons\":%zu", self->task_count,
                                  zlist_size (answers));
            if (!options->quiet)
                fprintf (stderr, "jace-spawner: resumed job %s: %zu of its "
                         "%zu tasks answered\n", job_id,
                         zlist_size (answers), self->task_count);
            s_monitor (self);
        }
        rc = self->events ? s_finish (self) : 1;
        s_run_destroy (&self);
        spawner_job_destroy (&job);
    }
    else
        fprintf (stderr, "jace-spawner: cannot resume job %s: %s\n", job_id,
                 reason);
    while (zlist_size (answers)) {
        jace_msg_t *answer = (jace_msg_t *) zlist_pop (answers);
        jace_msg_destroy (&answer);
    }
    zlist_destroy (&answers);
    return rc;
}
