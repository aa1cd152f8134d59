/*  =========================================================================
    daemon_worker - the thread that runs a daemon's task
    =========================================================================
*/
#include "daemon_worker.h"
#include "daemon_checkpoints.h"
#include "daemon_handoff.h"
#include "daemon_exchange.h"
#include "jace_checkpoint.h"
#include "jace_task_runtime.h"
#include "app_table.h"
#include "platform.h"
#include "shared_links.h"

#include <math.h>
#include <time.h>

//  Longest gap between two PROGRESS reports while iterating.
#define PROGRESS_MSEC 100
//  Longest wait for neighbours' news when locally converged and nothing
//  new has arrived: iterating again would only repeat the same values,
//  and on a shared core it would starve the tasks that have work to do.
#define IDLE_WAIT_MSEC 5

//  Longest wait for a newer neighbour vector before iterating anyway, for
//  applications that gain nothing from an iteration without one (a lost
//  or late vector must not stall the task)
#define NEWS_WAIT_MSEC 50
//  Longest pause of a synchronous task whose application found the
//  residual under the tolerance, until another task's values show it went
//  on: when every task found it (a Krylov method's residual, TSIRM's:
//  global), none goes on, the spawner's COLLECT is answered at once rather
//  than after another iteration, and its verification has the cores the
//  tasks would have taken.  Once per convergence; a verification that
//  fails costs this much.
#define VERIFY_PAUSE_MSEC 20
//  How soon values a full link refused are tried again: the poller waits
//  for input only, so waits are cut to this while any are held.
#define UNSENT_RETRY_USEC 1000
//  Longest single sleep when emulating a slower node; the pipe and inbox
//  are drained between sleeps.
#define SLOWDOWN_SLICE_USEC 20000

typedef enum {
    WORKER_IDLE,                //  No task
    WORKER_GATHERING,           //  Task set up, gathering a rebalance's
                                //  slices of the iterate
    WORKER_READY,               //  Task set up, waiting for START
    WORKER_EXCHANGING,          //  Started: trading request lists
    WORKER_RUNNING,             //  Iterating
    WORKER_HALTED               //  Stopped iterating (max iterations)
} worker_state_t;

//  Longest wait after START with nothing new from the set-up exchange
//  (request lists, pieces of its first round, copies): job/setup_timeout
//  seconds, by default this.  It counts from the last news, not from
//  START: under a load of 25-100, healthy daemons of a 576 MB job gave
//  their tasks up after a fixed 30 s while one slow task still built its
//  block, their replacements waited on the same task, and the job failed
//  for want of daemons.
#define SETUP_TIMEOUT_SECONDS 60
//  A set-up that waits this long says in the log what for, and again
//  each time as long: one replacement sat 5 s before its first
//  iteration, and nothing said why.
#define EXCHANGE_REPORT_MSEC 2000
//  Waits for the other tasks' answers to a replacement's FETCH; the dead
//  never answer.  A holder answers between two of its own iterations, so
//  a live one may take as long as an iteration: on a loaded machine
//  that passed 500 ms, and drained tasks restarted from their initial
//  state ("no valid copy survived") while a live neighbour held their
//  copy.  So the task waits up to FETCH_LONGEST_MSEC for a first valid
//  copy, then FETCH_WAIT_MSEC more for a newer one.
#define FETCH_WAIT_MSEC 500
#define FETCH_LONGEST_MSEC 10000
//  Longest wait for a rebalance's slices from the old owners: those alive
//  answer within a round trip; past this the task gives up, and the
//  spawner assigns it again with the iterate it gathered itself.
#define GATHER_WAIT_MSEC 10000
//  How long the links of a task assigned again keep sending what they
//  queue once closed.
#define RETIRED_LINGER_MSEC 2000
//  Most checkpoint copies a task sends.
#define COPIES_MAX 16

typedef struct {
    zsock_t *pipe;              //  To the control actor
    zsock_t *inbox;             //  PULL: neighbours' DATA
    zpoller_t *poller;          //  Pipe and inbox, when not iterating
    char *endpoint;             //  Bound data endpoint, or NULL
    jace_security_t *security;  //  Borrowed
    char *cluster;              //  Our cluster
    platform_t *platform;       //  Borrowed: links to emulate, or NULL
    jace_links_t *links;        //  The grid's shared links, or NULL
    jace_shaper_t *shaper;      //  The running task's emulated links
    jace_task_t *retired;       //  A task of the job assigned again,
    jace_shaper_t *retired_shaper;  //  and its links, kept until what
                                //  they hold for the emulated network
                                //  (a rebalance's slices) is sent
    double speed;               //  Compute slow-down factor
    bool verbose;               //  Log every message
    bool terminated;            //  $TERM received
    worker_state_t state;       //  What we are doing
    uint64_t task_serial;       //  Bumped whenever a task goes: code that
                                //  drained messages compares it to know
                                //  its task is still the one it had
    const jace_app_t *app;      //  Application of the task
    const jace_app_t *extra_app;    //  Borrowed: a test's application
    jace_task_t *task;          //  The task, or NULL
    void *app_state;            //  Application's state for the task
    char sender [JACE_ID_MAX];  //  Daemon id, for messages we emit
    double tolerance;           //  Local convergence threshold
    int64_t converge_iterations;   //  Iterations under it to converge
    int64_t max_iterations;     //  Iteration cap, or 0
    bool synchronous;           //  job/mode = sync: wait for neighbours
    int64_t exchange_deadline;  //  Give up the request exchange then
    int64_t setup_timeout_msec; //  ... that long after its last news
    char exchange_missing [256];    //  What it waited for at that news
    int64_t exchange_reported;  //  Last said what it waits for
    int64_t quiet_iterations;   //  Consecutive iterations under tolerance
    bool verify_pause;          //  Pause before the next iteration: the
                                //  job's residual just fell under the
                                //  tolerance
    int64_t last_progress;      //  When we last reported (msec)
    int64_t reported_state;     //  State in the last report
    double slowdown_debt;       //  Microseconds of emulated slowness owed
    uint64_t rejected;          //  DATA messages that did not belong
    uint64_t received;          //  Neighbour vectors received for the task
    uint64_t received_before;   //  ... when the last iteration began
    daemon_checkpoints_t *copies;   //  Neighbours' checkpoints we keep
    size_t checkpoint_copies;   //  Copies of each of our checkpoints
    bool checkpoint_offsite;    //  One copy outside our cluster (on)
    int64_t checkpoint_iterations;  //  Checkpoint every so many, or 0
    int64_t checkpoint_msec;    //  ... or every so long, or 0
    int64_t last_checkpoint_iteration;
    int64_t last_checkpoint_time;   //  msec
    int64_t checkpoint_round;   //  Checkpoints sent so far
    uint64_t copies_dropped;    //  Copies a full link refused
    bool fetching;              //  A replacement gathering its copies
    int64_t fetch_started;      //  When (msec)
    int64_t fetch_copy_at;      //  When the first valid copy came (msec)
    size_t fetch_pending;       //  Tasks yet to answer
    bool *fetch_waiting;        //  Per task: asked, not answered yet
    jace_msg_t *best_copy;      //  Newest valid copy received, or NULL
    int64_t best_holder;        //  Task whose daemon sent it
    const char *algorithm;      //  exchange/algorithm: borrowed from the
                                //  task's params, NULL for the default
    zlistx_t *deferred;         //  Commands that came while the task was
                                //  in a collective: run once it returns
    bool collective;            //  Reading the pipe from a collective
    bool interrupted;           //  A command in deferred ends the task
    bool preloaded;             //  Restored from the iterate a rebalance
                                //  sent with the ASSIGN (a replacement
                                //  still fetches: copies may be newer)
    int64_t preload_iteration;  //  ... the iteration it went on from, or
                                //  -1 if the application refused it
    daemon_handoff_t *handoff;  //  A rebalance's slices: the block we
                                //  keep, those we gather
    int64_t gather_deadline;    //  Give up gathering then (msec)
    jace_msg_t *early_start;    //  START that came while gathering, run
                                //  once gathered, or NULL
    int64_t generation_epoch;   //  Our copies of an older epoch are of
                                //  another partition: never restored
    int64_t busy_usecs;         //  Computing since the last PROGRESS
    int64_t busy_iterations;    //  Iterations they were spent on
    double busy_work;           //  Work they reported (jace_task_set_work)
    bool busy_unweighed;        //  One of them reported none
} worker_t;


//  --------------------------------------------------------------------------

//  Messages queued per data connection (one per neighbour daemon).
#define DATA_RCVHWM 64

//  Frames on the data socket are at most what a task can need: a vector
//  of its neighbour's values or a checkpoint of its state, both smaller
//  than the task data a daemon takes (--max-task-memory).  So a peer can
//  make us hold at most DATA_RCVHWM x 17 frames x that limit; what a job
//  really queues is DATA_RCVHWM vectors of one neighbour's values.
static int
s_bind_inbox (worker_t *self, const char *bind, uint64_t frame_max)
{
    self->inbox = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (self->inbox,
        frame_max && frame_max < JACE_MSG_FRAME_MAX
        ? (int64_t) frame_max : JACE_MSG_FRAME_MAX);
    //  A few vectors per neighbour at most: the loop drains the inbox
    //  every iteration, so a deeper queue would only hold stale values.
    zsock_set_rcvhwm (self->inbox, DATA_RCVHWM);
    jace_security_apply_server (self->security, self->inbox);
    if (jace_msg_bind (self->inbox, bind) < 0) {
        zsys_error ("daemon: cannot bind data endpoint %s: %s", bind,
                    zmq_strerror (zmq_errno ()));
        return -1;
    }
    self->endpoint = zsock_last_endpoint (self->inbox);
    zpoller_add (self->poller, self->inbox);
    return 0;
}

//  The daemon server loaded the platform (once, for its PONGs too); our
//  tasks' links are emulated only if our cluster is in it.
static void
s_use_platform (worker_t *self, platform_t *platform)
{
    if (platform_cluster_index (platform, self->cluster) >= 0)
        self->platform = platform;
    else
        zsys_error ("daemon: cluster %s is not in the platform; links are "
                    "not emulated", self->cluster);
}

//  True if the links file holds the resources the platform declares: a
//  file of another grid or platform would make us reserve the wrong ones.
static bool
s_links_match (worker_t *self)
{
    size_t count = shared_links_count (self->platform);
    if (jace_links_count (self->links) != count)
        return false;
    for (size_t index = 0; index < count; index++) {
        double mbps;
        size_t transfers;
        shared_links_resource (self->platform, index, &mbps, &transfers);
        jace_links_resource_t resource = jace_links_resource (self->links,
                                                              index);
        if (resource.bandwidth_mbps != mbps
        ||  resource.transfers != transfers)
            return false;
    }
    return true;
}

//  Map the grid's shared links; without them each flow has its own link.
static void
s_load_links (worker_t *self, const char *path)
{
    char reason [512];
    self->links = jace_links_open (path, reason, sizeof reason);
    if (!self->links)
        zsys_error ("daemon: %s; links are not shared", reason);
    else
    if (!s_links_match (self)) {
        zsys_error ("daemon: %s does not match the platform's shared links;"
                    " links are not shared", path);
        jace_links_destroy (&self->links);
    }
    else
        zsys_notice ("daemon: %zu shared links in %s",
                     jace_links_count (self->links), path);
}

//  The links from our cluster to every cluster, for one task.
static jace_shaper_t *
s_new_shaper (worker_t *self)
{
    if (!self->platform)
        return NULL;
    jace_shaper_t *shaper = jace_shaper_new (self->cluster);
    jace_shaper_set_verbose (shaper, self->verbose);
    size_t local = (size_t) platform_cluster_index (self->platform,
                                                    self->cluster);
    for (size_t c = 0; c < platform_cluster_count (self->platform); c++) {
        const char *name = platform_cluster_name (self->platform, c);
        jace_shaper_set_link (shaper, name,
            platform_latency_us (self->platform, local, c),
            platform_bandwidth_mbps (self->platform, local, c));
        size_t path [SHARED_LINKS_PATH_MAX];
        size_t hops = shared_links_path (self->platform, local, c, path);
        if (self->links && hops)
            jace_shaper_set_shared (shaper, name, self->links, path, hops);
    }
    return shaper;
}

static void
s_msg_destroy (void **item_p)
{
    jace_msg_destroy ((jace_msg_t **) item_p);
}

static worker_t *
s_worker_new (zsock_t *pipe, daemon_worker_config_t *config)
{
    worker_t *self = (worker_t *) zmalloc (sizeof *self);
    self->pipe = pipe;
    self->cluster = strdup (config->cluster ? config->cluster : "default");
    if (config->platform)
        s_use_platform (self, config->platform);
    if (self->platform && config->links)
        s_load_links (self, config->links);
    self->security = config->security;
    self->speed = config->speed > 0 && config->speed <= 1 ? config->speed : 1;
    self->verbose = config->verbose;
    self->extra_app = config->app;
    self->poller = zpoller_new (pipe, NULL);
    zpoller_set_nonstop (self->poller, true);
    self->deferred = zlistx_new ();
    zlistx_set_destructor (self->deferred, s_msg_destroy);
    self->copies = daemon_checkpoints_new (config->checkpoint_memory);
    self->handoff = daemon_handoff_new ();
    s_bind_inbox (self, config->bind, config->task_memory);
    return self;
}

static void
s_drop_task (worker_t *self)
{
    if (self->app && self->app_state)
        self->app->destroy (&self->app_state);
    jace_shaper_destroy (&self->shaper);
    jace_task_destroy (&self->task);
    jace_msg_destroy (&self->best_copy);
    jace_msg_destroy (&self->early_start);
    self->fetching = false;
    free (self->fetch_waiting);
    self->fetch_waiting = NULL;
    if (self->handoff)
        daemon_handoff_abandon (self->handoff);
    self->app = NULL;
    self->state = WORKER_IDLE;
    self->task_serial++;
}

//  The job assigns our task again (a rebalance): messages its links
//  still hold, such as the slices we answered other tasks with, must
//  leave all the same.  Those its emulated network holds keep the old
//  task and its links until they are sent (s_wait); those its sockets
//  queue are sent after they close.  Its application state goes now.
static void
s_retire_task (worker_t *self)
{
    //  What its links queue leaves after they close (they would drop it)
    jace_task_linger (self->task, RETIRED_LINGER_MSEC);
    if (!self->shaper || jace_shaper_flush (self->shaper) < 0) {
        s_drop_task (self);
        return;
    }
    jace_shaper_destroy (&self->retired_shaper);
    jace_task_destroy (&self->retired);
    self->retired = self->task;
    self->retired_shaper = self->shaper;
    self->task = NULL;
    self->shaper = NULL;
    s_drop_task (self);
}

//  Send what the retired task's links hold that is due; the task goes
//  once they hold nothing.  Returns usec until the next is due, or -1.
static int64_t
s_flush_retired (worker_t *self)
{
    if (!self->retired_shaper)
        return -1;
    int64_t next = jace_shaper_flush (self->retired_shaper);
    if (next < 0) {
        jace_shaper_destroy (&self->retired_shaper);
        jace_task_destroy (&self->retired);
    }
    return next;
}

static void
s_worker_destroy (worker_t **self_p)
{
    worker_t *self = *self_p;
    s_drop_task (self);
    jace_shaper_destroy (&self->retired_shaper);
    jace_task_destroy (&self->retired);
    zlistx_destroy (&self->deferred);
    zpoller_destroy (&self->poller);
    zsock_destroy (&self->inbox);
    daemon_checkpoints_destroy (&self->copies);
    daemon_handoff_destroy (&self->handoff);
    jace_links_destroy (&self->links);
    free (self->cluster);
    free (self->endpoint);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Messages to the control actor

static jace_msg_t *
s_task_msg (worker_t *self, jace_msg_type_t type)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, self->sender);
    jace_msg_set_job (msg, jace_task_job (self->task));
    jace_msg_set_task (msg, jace_task_rank (self->task));
    jace_msg_set_epoch (msg, jace_task_epoch (self->task));
    return msg;
}

static void
s_refuse (worker_t *self, jace_msg_t *request, jace_refuse_code_t code,
          const char *reason)
{
    jace_msg_t *refuse = jace_msg_new (JACE_MSG_REFUSE);
    jace_msg_set_sender (refuse, self->sender);
    jace_msg_set_job (refuse, jace_msg_job (request));
    jace_msg_set_task (refuse, jace_msg_task (request));
    jace_msg_set_epoch (refuse, jace_msg_epoch (request));
    jace_msg_set_code (refuse, code);
    jace_msg_set_reason (refuse, reason);
    jace_msg_send (&refuse, self->pipe);
}

//  The running task gives up: tell the spawner why, then drop it.
static void
s_give_up (worker_t *self, jace_refuse_code_t code, const char *reason)
{
    jace_msg_t *failed = s_task_msg (self, JACE_MSG_REFUSE);
    jace_msg_set_code (failed, code);
    jace_msg_set_reason (failed, reason);
    jace_msg_send (&failed, self->pipe);
    s_drop_task (self);
}

//  Microseconds one iteration's computing took, over the iterations with
//  news since the last report, 0 for none.  When the application reports
//  its work, the time is that of WORK_PER_ROW units per row of ours: a
//  rebalance then cuts rows by work per second, the node's speed, not by
//  iterations per second (a block whose inner solve had converged did
//  little per iteration, and a tester's rebalance gave such a block on a
//  half-speed node 54% of the rows).
#define WORK_PER_ROW 100.0
static int64_t
s_busy_usecs (worker_t *self)
{
    if (self->busy_iterations == 0)
        return 0;
    double usecs = (double) self->busy_usecs / (double) self->busy_iterations;
    int64_t rows = jace_task_row_count (self->task);
    if (!self->busy_unweighed && self->busy_work > 0 && rows > 0)
        usecs = (double) self->busy_usecs * (double) rows * WORK_PER_ROW
              / self->busy_work;
    return usecs >= 1 ? (int64_t) llround (usecs) : 1;
}

//  Append our sources (the tasks we ask for values) as one int64 payload:
//  ACCEPT carries them, and the ASSIGN answering ADOPT, so the spawner can
//  tell every task its sinks.
static void
s_add_sources (worker_t *self, jace_msg_t *msg)
{
    int64_t *ranks = (int64_t *) zmalloc (
        (size_t) jace_task_count (self->task) * sizeof (int64_t));
    size_t count = jace_task_sources (self->task, ranks);
    jace_msg_add_payload (msg, JACE_PAYLOAD_I64, ranks, count);
    free (ranks);
}

static void
s_report_progress (worker_t *self, int64_t state)
{
    jace_msg_t *progress = s_task_msg (self, JACE_MSG_PROGRESS);
    jace_msg_set_iteration (progress, jace_task_iteration (self->task));
    jace_msg_set_value (progress, jace_task_change (self->task));
    jace_msg_set_state (progress, state);
    jace_msg_set_count (progress,
                        (int64_t) daemon_checkpoints_bytes (self->copies));
    //  What computing one iteration costs this node, for a rebalance (its
    //  waits for news and in collectives are the others' slowness), over
    //  the iterations with news since the last report.  None: 0, no
    //  figure; repeating the last one would count as a new measurement,
    //  and an asynchronous task that seldom hears news would report one
    //  early sample (a cold start, a loaded machine) over and over.
    jace_msg_set_interval (progress, s_busy_usecs (self));
    self->busy_usecs = 0;
    self->busy_iterations = 0;
    self->busy_work = 0;
    self->busy_unweighed = false;
    jace_msg_set_exchanges (progress, jace_task_exchanges (self->task));
    jace_msg_send (&progress, self->pipe);
    self->last_progress = zclock_mono ();
    self->reported_state = state;
}

//  --------------------------------------------------------------------------
//  The job's total exchanges

//  The exchange algorithm the job asks for (exchange/algorithm): one we
//  plan, as jace_task_new checked (jace_task_runtime_check).
static void
s_read_exchange (worker_t *self)
{
    self->algorithm = jace_task_param (self->task, "exchange/algorithm");
    assert (daemon_exchange_known (self->algorithm));
}

//  Plan the job's exchanges from where its tasks run now: every daemon
//  of the job plans the same routes from the same table, so a REMAP that
//  moves a task to another cluster changes them everywhere alike.
static void
s_update_routes (worker_t *self)
{
    int64_t tasks = jace_task_count (self->task);
    const char **clusters = (const char **) zmalloc ((size_t) tasks
                                                     * sizeof (char *));
    for (int64_t rank = 0; rank < tasks; rank++)
        clusters [rank] = jace_task_node (self->task, rank)->cluster;
    size_t count = 0;
    jace_route_t *routes = daemon_exchange_routes (clusters, tasks,
        jace_task_rank (self->task), self->algorithm, &count);
    char reason [256] = "";
    int rc = jace_task_set_routes (self->task, routes, count, reason,
                                   sizeof reason);
    if (rc)
        zsys_error ("daemon %s: planned routes refused: %s", self->sender,
                    reason);
    assert (rc == 0);
    free (routes);
    free (clusters);
}

static void s_recv_inbox_all (worker_t *self, void *ready);
static void *s_wait (worker_t *self, int msec);
static void s_recv_pipe (worker_t *self);
static void s_on_command (worker_t *self, jace_msg_t **msg_p);

//  A command that comes while the application waits in a collective:
//  a REMAP is applied at once (the exchange needs it to recover), and an
//  ADOPT answered at once (a task waiting for a partner that died with
//  the spawner waits until the resumed spawner replaces it: unanswered,
//  the resume replaced this task too, and its restore needed pieces the
//  partner's new daemon no longer logged); the rest waits until the
//  application returns, as a command between two iterations would; a
//  STOP or ASSIGN ends the wait.
static void
s_defer_command (worker_t *self, jace_msg_t **msg_p)
{
    jace_msg_type_t type = jace_msg_type (*msg_p);
    if ((type == JACE_MSG_REMAP || type == JACE_MSG_ADOPT) && self->task
    &&  streq (jace_msg_job (*msg_p), jace_task_job (self->task))) {
        s_on_command (self, msg_p);
        jace_msg_destroy (msg_p);
        return;
    }
    if (type == JACE_MSG_STOP || type == JACE_MSG_ASSIGN)
        self->interrupted = true;
    zlistx_add_end (self->deferred, *msg_p);
    *msg_p = NULL;
}

//  The waiter jace_task_alltoallv calls: the worker's loop, for msec at
//  most.  Returns -1 once the task must stop.
static int
s_collective_wait (void *arg, int msec)
{
    worker_t *self = (worker_t *) arg;
    void *ready = s_wait (self, msec);
    s_recv_inbox_all (self, ready);
    self->collective = true;
    if (ready == self->pipe && !self->terminated)
        s_recv_pipe (self);
    while (!self->terminated && !self->interrupted
    &&     (zsock_events (self->pipe) & ZMQ_POLLIN))
        s_recv_pipe (self);
    self->collective = false;
    return self->interrupted || self->terminated ? -1 : 0;
}

//  Run the commands deferred during the iteration, in order.
static void
s_run_deferred (worker_t *self)
{
    self->interrupted = false;
    jace_msg_t *msg;
    while ((msg = (jace_msg_t *) zlistx_detach (self->deferred, NULL))) {
        if (!self->terminated)
            s_on_command (self, &msg);
        jace_msg_destroy (&msg);
    }
}

//  --------------------------------------------------------------------------
//  Commands from the control actor

//  A rebalance sent the job's iterate with the ASSIGN: our rows of it are
//  our state (the application's checkpoint format must be its block of
//  the iterate, as multisplitting's is), and the rest seeds what our
//  sources would send.  An application that refuses the bytes starts from
//  its initial state, and RESTORED says so.
static void
s_restore_preload (worker_t *self, jace_preload_t *preload)
{
    self->preloaded = true;
    self->preload_iteration = -1;
    size_t mine = 0;
    const double *rows = jace_preload_rows (preload, &mine);
    int64_t iteration = jace_preload_iteration (preload);
    char reason [256] = "the application keeps no checkpoints";
    if (self->app->restore
    &&  self->app->restore (self->task, self->app_state, rows,
                            mine * sizeof (double), reason,
                            sizeof reason) == 0) {
        jace_task_set_iteration (self->task, iteration);
        jace_task_seed_newest (self->task, preload);
        self->preload_iteration = iteration;
        self->last_checkpoint_iteration = iteration;
    }
    else
        zsys_warning ("daemon %s: the iterate sent with task %" PRId64
                      " does not restore it (%s); starting from the "
                      "initial state", self->sender,
                      jace_task_rank (self->task), reason);
    jace_preload_destroy (&preload);
}

//  Restore from the iterate our ASSIGN brought, if it brought one.
static void
s_preload (worker_t *self)
{
    self->preloaded = false;
    jace_preload_t *preload = jace_task_preloaded (self->task);
    if (preload)
        s_restore_preload (self, preload);
}

//  Set up: tell the spawner, with the tasks we ask values from.
static void
s_accept (worker_t *self)
{
    self->state = WORKER_READY;
    jace_msg_t *accept = s_task_msg (self, JACE_MSG_ACCEPT);
    s_add_sources (self, accept);
    jace_msg_send (&accept, self->pipe);
}

static void s_on_start (worker_t *self, jace_msg_t *start);

//  Every slice of the rebalance's iterate came: restore from them.
static void
s_finish_gathering (worker_t *self)
{
    self->preloaded = false;
    size_t values, from_others, slices;
    jace_preload_t *preload = daemon_handoff_finish (self->handoff, &values,
                                                     &from_others, &slices);
    if (preload) {
        zsys_info ("daemon %s: task %" PRId64 " took the rebalance's iterate:"
                   " %zu values, %zu of them in %zu slices from other "
                   "daemons", self->sender, jace_task_rank (self->task),
                   values, from_others, slices);
        s_restore_preload (self, preload);
    }
    s_accept (self);
    jace_msg_t *start = self->early_start;
    self->early_start = NULL;
    if (start)
        s_on_start (self, start);
    jace_msg_destroy (&start);
}

//  Tell the spawner how a preloaded task restarted: from the ASSIGN's
//  iterate (holder JACE_RESTORED_FROM_ASSIGN), or from its initial state.
static void
s_report_preload (worker_t *self)
{
    jace_msg_t *restored = s_task_msg (self, JACE_MSG_RESTORED);
    jace_msg_set_iteration (restored, self->preload_iteration < 0
                                      ? 0 : self->preload_iteration);
    jace_msg_set_count (restored, self->preload_iteration < 0
                                  ? -1 : JACE_RESTORED_FROM_ASSIGN);
    jace_msg_set_value (restored, 0);
    jace_msg_send (&restored, self->pipe);
}

static void
s_on_assign (worker_t *self, jace_msg_t **assign_p)
{
    jace_msg_t *assign = *assign_p;
    char reason [256] = "";
    //  The same job assigning us again is a rebalance: the copies we keep
    //  are of the old partition, and must never restore a task of the new
    //  one (the spawner holds what restores them until they checkpoint).
    if (self->task
    &&  streq (jace_task_job (self->task), jace_msg_job (assign))) {
        size_t dropped = daemon_checkpoints_drop_job (self->copies,
                                                      jace_msg_job (assign));
        zsys_info ("daemon %s: job %s assigns us again (epoch %" PRId64
                   "): dropped %zu copies of its old partition", self->sender,
                   jace_msg_job (assign), jace_msg_epoch (assign), dropped);
        s_retire_task (self);
    }
    s_drop_task (self);
    daemon_handoff_forget_other (self->handoff, jace_msg_job (assign));
    snprintf (self->sender, sizeof self->sender, "%s",
              jace_msg_sender (assign));
    self->app = self->extra_app
                && streq (self->extra_app->name, jace_msg_app (assign))
              ? self->extra_app : app_table_find (jace_msg_app (assign));
    if (!self->app) {
        snprintf (reason, sizeof reason, "%s application '%s' (known: %s)",
                  app_table_is_path (jace_msg_app (assign))
                  ? "daemons load no code a message names: no" : "unknown",
                  jace_msg_app (assign), app_table_names ());
        s_refuse (self, assign, JACE_REFUSE_FAILED, reason);
        return;
    }
    //  The refusal needs the ASSIGN's ids; keep a header-only copy.
    jace_msg_t *ids = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (ids, jace_msg_job (assign));
    jace_msg_set_task (ids, jace_msg_task (assign));
    jace_msg_set_epoch (ids, jace_msg_epoch (assign));
    self->task = jace_task_new (assign_p, self->security, reason,
                                sizeof reason);
    if (self->task) {
        s_read_exchange (self);
        self->app_state = self->app->setup (self->task, reason,
                                            sizeof reason);
    }
    if (!self->app_state) {
        s_refuse (self, ids, JACE_REFUSE_FAILED, reason);
        jace_msg_destroy (&ids);
        s_drop_task (self);
        return;
    }
    jace_msg_destroy (&ids);
    self->shaper = s_new_shaper (self);
    jace_task_set_shaper (self->task, self->shaper);
    s_update_routes (self);
    jace_task_set_waiter (self->task, s_collective_wait, self);
    const char *mode = jace_task_param (self->task, "job/mode");
    self->synchronous = mode && streq (mode, "sync");
    if (!self->synchronous)
        jace_task_keep_remote_fresh (self->task);
    self->tolerance = jace_task_param_double (self->task,
        "job/local_tolerance",
        jace_task_param_double (self->task, "job/tolerance", 1e-6));
    self->converge_iterations = jace_task_param_int (self->task,
        "job/converge_iterations", 10);
    self->max_iterations = jace_task_param_int (self->task,
        "job/max_iterations", 0);
    self->setup_timeout_msec = (int64_t) (1000 * jace_task_param_double (
        self->task, "job/setup_timeout", SETUP_TIMEOUT_SECONDS));
    int64_t copies = jace_task_param_int (self->task, "checkpoint/copies", 2);
    self->checkpoint_copies = copies < 0 ? 0 : copies > COPIES_MAX
                            ? COPIES_MAX : (size_t) copies;
    const char *offsite = jace_task_param (self->task, "checkpoint/offsite");
    self->checkpoint_offsite = !offsite || !streq (offsite, "off");
    self->checkpoint_iterations = jace_task_param_int (self->task,
        "checkpoint/every_iterations", 0);
    self->checkpoint_msec = (int64_t) (1000 * jace_task_param_double (
        self->task, "checkpoint/every_seconds", 2));
    self->checkpoint_round = 0;
    self->last_checkpoint_iteration = 0;
    self->last_checkpoint_time = zclock_mono ();
    self->quiet_iterations = 0;
    self->verify_pause = false;
    self->slowdown_debt = 0;
    self->received = 0;
    self->received_before = 0;
    self->busy_usecs = 0;
    self->busy_iterations = 0;
    self->busy_work = 0;
    self->busy_unweighed = false;
    self->generation_epoch = jace_task_param_int (self->task,
        "block/generation_epoch", 0);
    //  A rebalance's iterate comes with the ASSIGN, or in slices from
    //  the tasks that held it.
    int gathering = daemon_handoff_begin (self->handoff, self->task,
                                          self->sender, reason,
                                          sizeof reason);
    if (gathering < 0) {
        s_give_up (self, JACE_REFUSE_BUSY, reason);
        return;
    }
    if (gathering > 0) {
        self->state = WORKER_GATHERING;
        self->gather_deadline = zclock_mono () + GATHER_WAIT_MSEC;
        if (daemon_handoff_complete (self->handoff))
            s_finish_gathering (self);
        return;
    }
    s_preload (self);
    s_accept (self);
}

static void
s_on_collect (worker_t *self, jace_msg_t *collect)
{
    if (!self->task)
        return;
    int64_t first = 0;
    size_t count = 0;
    const double *values = self->app->solution (self->app_state, &first,
                                                &count);
    //  A rebalance's new tasks may ask us for slices of this snapshot.
    daemon_handoff_keep (self->handoff, jace_task_job (self->task),
                         jace_msg_count (collect), first, values, count);
    jace_msg_t *result = s_task_msg (self, JACE_MSG_RESULT);
    jace_msg_set_iteration (result, jace_task_iteration (self->task));
    jace_msg_set_first (result, first);
    jace_msg_set_count (result, jace_msg_count (collect));
    jace_msg_add_payload (result, JACE_PAYLOAD_F64, values, count);
    jace_msg_send (&result, self->pipe);
}

//  Task `rank` answered our FETCH, or cannot any more (its daemon was
//  replaced: the copies it held died with it).
static void
s_fetch_answered (worker_t *self, int64_t rank)
{
    if (self->fetching && self->fetch_waiting && rank >= 0
    &&  rank < jace_task_count (self->task) && self->fetch_waiting [rank]) {
        self->fetch_waiting [rank] = false;
        self->fetch_pending--;
    }
}

//  The task whose daemon is `sender`, or -1.
static int64_t
s_rank_of (worker_t *self, const char *sender)
{
    for (int64_t rank = 0; rank < jace_task_count (self->task); rank++)
        if (streq (jace_task_node (self->task, rank)->id, sender))
            return rank;
    return -1;
}

//  Another task moved to a new daemon (its old one died).
static void
s_on_remap (worker_t *self, jace_msg_t *remap)
{
    if (!self->task || jace_msg_node_count (remap) != 1)
        return;
    const jace_node_t *node = jace_msg_node (remap, 0);
    if (node->task >= 0 && node->task < jace_task_count (self->task)
    &&  node->epoch == jace_task_node (self->task, node->task)->epoch)
        return;                 //  Known already (a rebalance's start)
    if (jace_task_remap (self->task, node))
        zsys_warning ("daemon %s: REMAP of task %" PRId64 " to epoch %"
                      PRId64 " not applied", self->sender, node->task,
                      node->epoch);
    else {
        s_fetch_answered (self, node->task);
        zsys_info ("daemon %s: task %" PRId64 " moved to %s (epoch %"
                   PRId64 ")", self->sender, node->task, node->id,
                   node->epoch);
        s_update_routes (self);
    }
}

//  A replacement asks the tasks that may hold copies of its state (the
//  holders' own rule, jace_task_fetch_targets) for them; the FETCH carries
//  our record so a holder that has not heard of the move yet answers
//  here, not to the dead daemon.
static void
s_begin_fetch (worker_t *self)
{
    int64_t rank = jace_task_rank (self->task);
    int64_t *targets = (int64_t *) zmalloc (
        (size_t) jace_task_count (self->task) * sizeof (int64_t));
    size_t count = jace_task_fetch_targets (self->task,
        self->checkpoint_copies, self->checkpoint_offsite, targets);
    self->fetch_pending = 0;
    free (self->fetch_waiting);
    self->fetch_waiting = (bool *) zmalloc (
        (size_t) jace_task_count (self->task) * sizeof (bool));
    for (size_t i = 0; i < count; i++) {
        jace_msg_t *fetch = s_task_msg (self, JACE_MSG_FETCH);
        jace_msg_add_node (fetch, jace_task_node (self->task, rank));
        jace_msg_seal (fetch, jace_task_job_key (self->task)->bytes);
        if (jace_task_send_msg (self->task, targets [i], &fetch) == 0
        &&  !self->fetch_waiting [targets [i]]) {
            self->fetch_waiting [targets [i]] = true;
            self->fetch_pending++;
        }
    }
    free (targets);
    self->fetch_started = zclock_mono ();
    self->best_holder = -1;
    self->fetching = true;
}

//  When a fetch stops waiting for the holders still silent: a newer
//  copy may follow the first valid one for FETCH_WAIT_MSEC.
static int64_t
s_fetch_deadline (worker_t *self)
{
    return self->best_copy ? self->fetch_copy_at + FETCH_WAIT_MSEC
                           : self->fetch_started + FETCH_LONGEST_MSEC;
}

//  START lists our sinks (one int64 payload): we await their request
//  lists only.  Without it (an older spawner) every other task is a sink
//  and hears our list, so no task waits for a list that never comes.
static void
s_read_sinks (worker_t *self, jace_msg_t *start)
{
    if (jace_msg_payload_count (start) == 0)
        return;
    char reason [256] = "START payload is not one int64 list";
    size_t count = jace_msg_payload_length (start, 0);
    int64_t *sinks = (int64_t *) zmalloc ((count + 1) * sizeof (int64_t));
    int rc = -1;
    if (jace_msg_payload_count (start) == 1
    &&  jace_msg_payload_kind (start, 0) == JACE_PAYLOAD_I64) {
        jace_msg_payload_copy (start, 0, sinks);
        rc = jace_task_set_sinks (self->task, sinks, count, reason,
                                  sizeof reason);
    }
    if (rc)
        zsys_warning ("daemon %s: %s; waiting for every task's request "
                      "list", self->sender, reason);
    free (sinks);
}

//  Every task tells its sources what it needs from them, so owners know
//  what to send before the first iteration.
static void
s_on_start (worker_t *self, jace_msg_t *start)
{
    if (self->state != WORKER_READY)
        return;
    s_read_sinks (self, start);
    size_t failed = jace_task_send_requests (self->task);
    if (failed)
        zsys_warning ("daemon %s: request lists to %zu tasks not sent",
                      self->sender, failed);
    //  A task replaced after the rebalance's own ASSIGN (its epoch is
    //  past the partition's) gets the rebalance's iterate too, until every
    //  task has checkpointed on its new rows; but its own copies of those
    //  rows may be far newer.  Under crashes every few seconds the
    //  rebalance never settled, and every replacement went back to the
    //  rebalance's iteration (1, on table1-hd072), a whole job's work.
    //  (A rebalance's ASSIGN without block/generation_epoch, from an
    //  older spawner, is taken as the rebalance's own.)
    bool replaced = self->generation_epoch > 0
                 && jace_task_epoch (self->task) > self->generation_epoch;
    if (self->preloaded && !replaced)
        s_report_preload (self);
    else
    if (jace_task_epoch (self->task) > 1)
        s_begin_fetch (self);
    self->exchange_deadline = zclock_mono () + self->setup_timeout_msec;
    *self->exchange_missing = 0;
    self->exchange_reported = zclock_mono ();
    self->state = WORKER_EXCHANGING;
}

static int64_t s_task_state (worker_t *self);

//  A spawner that lost track of the job (it crashed and was started
//  again) asks what we run: answer with our ASSIGN as it stands now.
static void
s_on_adopt (worker_t *self)
{
    if (!self->task)
        return;
    //  The ASSIGN as it stands, but for its data: the spawner has that;
    //  what it lacks is the graph, so our sources are the payload.
    jace_msg_t *assign = s_task_msg (self, JACE_MSG_ASSIGN);
    jace_msg_set_count (assign, jace_task_count (self->task));
    jace_msg_set_app (assign, self->app->name);
    //  The spawner checks it is its job's key: proof we run its task.
    char key [JACE_KEY_TEXT + 1];
    jace_key_encode (jace_task_job_key (self->task), key);
    jace_msg_set_key (assign, key);
    zhash_t *params = jace_task_params (self->task);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params))
        jace_msg_set_param (assign, zhash_cursor (params), value);
    for (int64_t rank = 0; rank < jace_task_count (self->task); rank++)
        jace_msg_add_node (assign, jace_task_node (self->task, rank));
    //  A rebalance's task set up but not STARTed: if other daemons still
    //  run the old cut, the resume assigns us our old rows again
    //  (spawner_resume_unstarted_cut).
    jace_msg_set_param (assign, "block/started",
                        self->state == WORKER_GATHERING
                        || self->state == WORKER_READY ? "0" : "1");
    s_add_sources (self, assign);
    jace_msg_send (&assign, self->pipe);
    s_report_progress (self, s_task_state (self));
    zsys_debug ("daemon: task %" PRId64 " answered a resumed spawner's "
                "ADOPT%s", jace_task_rank (self->task),
                self->collective ? " from inside a total exchange" : "");
}

//  The job is over for us: our task and the copies we kept for it go.
static void
s_on_stop (worker_t *self)
{
    daemon_handoff_forget (self->handoff);
    if (self->task) {
        size_t dropped = daemon_checkpoints_drop_job (self->copies,
                                                      jace_task_job (self->task));
        if (dropped)
            zsys_info ("daemon %s: dropped %zu checkpoint copies of job %s",
                       self->sender, dropped, jace_task_job (self->task));
    }
    s_drop_task (self);
}

static void
s_on_command (worker_t *self, jace_msg_t **msg_p)
{
    jace_msg_t *msg = *msg_p;
    jace_msg_type_t type = jace_msg_type (msg);
    if (type == JACE_MSG_ASSIGN) {
        s_on_assign (self, msg_p);
        return;
    }
    //  The control actor ends a job before it takes the next, but a
    //  message for the old one may cross: never let it touch another
    //  job's task.
    if (!self->task || !streq (jace_msg_job (msg), jace_task_job (self->task)))
        return;
    //  Only a resumed spawner STARTs a task still gathering: it adopted
    //  every task on the new cut, and starts them all at once.  Ignored,
    //  the START left the task waiting, set up, for one that never came.
    if (type == JACE_MSG_START && self->state == WORKER_GATHERING) {
        jace_msg_destroy (&self->early_start);
        self->early_start = *msg_p;
        *msg_p = NULL;
        return;
    }
    switch (type) {
        case JACE_MSG_START: s_on_start (self, msg); break;
        case JACE_MSG_REMAP: s_on_remap (self, msg); break;
        case JACE_MSG_COLLECT: s_on_collect (self, msg); break;
        case JACE_MSG_ADOPT: s_on_adopt (self); break;
        case JACE_MSG_STOP: s_on_stop (self); break;
        default: assert (false);
    }
}

static void
s_recv_pipe (worker_t *self)
{
    zmsg_t *zmsg = zmsg_recv (self->pipe);
    if (!zmsg)
        return;
    char *command = zframe_strdup (zmsg_first (zmsg));
    if (streq (command, "$TERM"))
        self->terminated = true;
    else
    if (streq (command, "ENDPOINT"))
        zstr_send (self->pipe, self->endpoint ? self->endpoint : "");
    else {
        //  Everything else is a Jace message the control actor checked.
        jace_msg_t *msg = jace_msg_decode (&zmsg, NULL, 0);
        assert (msg);
        if (self->collective)
            s_defer_command (self, &msg);
        else
            s_on_command (self, &msg);
        jace_msg_destroy (&msg);
    }
    free (command);
    zmsg_destroy (&zmsg);
}

//  --------------------------------------------------------------------------
//  Neighbours' data

//  A copy of our own state, answering our FETCH: keep the newest valid.
static void
s_consider_copy (worker_t *self, jace_msg_t **msg_p, char *reason,
                 size_t reason_size)
{
    jace_msg_t *msg = *msg_p;
    const jace_key_t *key = jace_task_job_key (self->task);
    //  Only what the job sealed counts as an answer: a forged "none held
    //  here" or copy would end our wait before the real copies arrive.
    if (!jace_checkpoint_is_copy (msg)) {
        if (jace_checkpoint_authentic (msg, key))
            s_fetch_answered (self, s_rank_of (self, jace_msg_sender (msg)));
        return;
    }
    if (jace_checkpoint_check (msg, key, reason, reason_size)) {
        zsys_warning ("daemon %s: copy from %s ignored: %s", self->sender,
                      jace_msg_sender (msg), reason);
        return;
    }
    s_fetch_answered (self, s_rank_of (self, jace_msg_sender (msg)));
    if (jace_msg_epoch (msg) < self->generation_epoch) {
        zsys_info ("daemon %s: copy from %s is of epoch %" PRId64 ", before "
                   "the partition we run (epoch %" PRId64 "): ignored",
                   self->sender, jace_msg_sender (msg), jace_msg_epoch (msg),
                   self->generation_epoch);
        return;
    }
    if (!jace_checkpoint_newer (msg, self->best_copy))
        return;
    if (!self->best_copy)
        self->fetch_copy_at = zclock_mono ();
    self->best_holder = s_rank_of (self, jace_msg_sender (msg));
    jace_msg_destroy (&self->best_copy);
    self->best_copy = msg;
    *msg_p = NULL;
}

//  A CKPT: a neighbour's copy to keep, or an answer to our FETCH.
static void
s_on_checkpoint (worker_t *self, jace_msg_t **msg_p, char *reason,
                 size_t reason_size)
{
    jace_msg_t *msg = *msg_p;
    int64_t task = jace_msg_task (msg);
    *reason = 0;
    if (task == jace_task_rank (self->task)) {
        if (self->fetching)
            s_consider_copy (self, msg_p, reason, reason_size);
        *reason = 0;            //  A late answer is no fault of the sender
        return;
    }
    if (task < 0 || task >= jace_task_count (self->task)
    ||  !jace_checkpoint_is_copy (msg)) {
        snprintf (reason, reason_size, "CKPT of task %" PRId64 " from %s "
                  "does not belong here", task, jace_msg_sender (msg));
        return;
    }
    //  A refused copy is logged every time: it is rare, and it is what
    //  a user looks for after a crash during a checkpoint.
    char sender [JACE_ID_MAX];
    snprintf (sender, sizeof sender, "%s", jace_msg_sender (msg));
    if (daemon_checkpoints_store (self->copies, msg_p,
                                  jace_task_job_key (self->task), reason,
                                  reason_size) < 0)
        zsys_warning ("daemon %s: copy from %s refused: %s", self->sender,
                      sender, reason);
    *reason = 0;
}

static void s_send_checkpoint (worker_t *self, const int64_t *holders,
                               size_t count);

//  A new daemon of task `task` (a replacement, a moved task) holds none
//  of the copies its predecessor held.  If it is one of our holders, it
//  gets a copy of our state now, not at our next checkpoint: a drain step
//  moves both neighbours of a task at once, and until its next
//  checkpoint reached them a crash of that task found no copy anywhere.
static void
s_copy_to_new_holder (worker_t *self, int64_t task)
{
    if ((self->state != WORKER_RUNNING && self->state != WORKER_HALTED)
    ||  !self->checkpoint_copies || !self->app->checkpoint)
        return;
    if (jace_task_is_holder (self->task, self->checkpoint_copies,
                             self->checkpoint_offsite, task))
        s_send_checkpoint (self, &task, 1);
}

//  A replacement asks for the copy we keep of its state.
static void
s_on_fetch (worker_t *self, jace_msg_t *msg, char *reason,
            size_t reason_size)
{
    int64_t task = jace_msg_task (msg);
    *reason = 0;
    if (task < 0 || task >= jace_task_count (self->task)
    ||  task == jace_task_rank (self->task)
    ||  jace_msg_node_count (msg) != 1
    ||  jace_msg_node (msg, 0)->task != task) {
        snprintf (reason, reason_size, "FETCH of task %" PRId64 " from %s "
                  "does not belong here", task, jace_msg_sender (msg));
        return;
    }
    //  Not newer than what we know: the REMAP came first, nothing to do.
    if (jace_task_remap (self->task, jace_msg_node (msg, 0)) == 0)
        s_update_routes (self);
    const jace_msg_t *copy = daemon_checkpoints_find (self->copies,
        jace_msg_job (msg), task);
    jace_msg_t *answer = copy
        ? jace_checkpoint_forward (copy, self->sender)
        : jace_checkpoint_none (self->sender, jace_msg_job (msg), task,
                                jace_task_job_key (self->task));
    jace_task_send_msg (self->task, task, &answer);
    s_copy_to_new_holder (self, task);
}

//  A new task of a rebalance asks for our block of its snapshot.
static void
s_on_slice_ask (worker_t *self, jace_msg_t *ask, char *reason,
                size_t reason_size)
{
    *reason = 0;
    jace_msg_t *slice = daemon_handoff_answer (self->handoff, ask,
                                               self->sender, self->task,
                                               reason, reason_size);
    if (slice)
        jace_task_send_msg (self->task, jace_msg_task (ask), &slice);
}

//  An old owner's slice of the iterate we gather.
static void
s_on_slice (worker_t *self, jace_msg_t *slice, char *reason,
            size_t reason_size)
{
    *reason = 0;
    if (self->state != WORKER_GATHERING)
        snprintf (reason, reason_size, "SLICE from %s while we gather none",
                  jace_msg_sender (slice));
    else
    if (daemon_handoff_take (self->handoff, self->task, self->sender, slice,
                             reason, reason_size) == 0
    &&  daemon_handoff_complete (self->handoff))
        s_finish_gathering (self);
}

//  True if a message of our task's job may be used: keys on, a daemon
//  sent it; DATA and FETCH are sealed with the job key (a CKPT carries
//  its own seal, checked where it is used).  Otherwise it is audited
//  (rate-limited log, counted) and dropped.
static bool
s_trusted (worker_t *self, const jace_msg_t *msg)
{
    char who [JACE_ID_MAX + 16];
    snprintf (who, sizeof who, "daemon %s (data)", self->sender);
    if (!jace_security_authorise (self->security, msg, JACE_ROLE_DAEMON, who))
        return false;
    if (jace_msg_type (msg) == JACE_MSG_CKPT
    ||  jace_msg_sealed (msg, jace_task_job_key (self->task)->bytes))
        return true;
    jace_security_unauthorised (self->security, msg, who, "task %" PRId64
                                " of job '%s': not sealed with the job key",
                                jace_msg_task (msg), jace_msg_job (msg));
    return false;
}

//  Receive one message from the inbox; returns true if it was DATA for
//  our task.
static bool
s_recv_inbox (worker_t *self)
{
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (self->inbox, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        self->rejected++;
        zsys_warning ("daemon %s: malformed data message: %s "
                      "(%" PRIu64 " so far)", self->sender, reason,
                      self->rejected);
        return false;
    }
    jace_msg_type_t type = jace_msg_type (msg);
    bool used = false;
    if (type != JACE_MSG_DATA && type != JACE_MSG_CKPT
    &&  type != JACE_MSG_FETCH && type != JACE_MSG_SLICE_ASK
    &&  type != JACE_MSG_SLICE)
        snprintf (reason, sizeof reason, "%s on the data socket",
                  jace_msg_type_name (type));
    else
    if (!self->task || !streq (jace_msg_job (msg), jace_task_job (self->task)))
        snprintf (reason, sizeof reason, "%s for job '%s' we have no task "
                  "of", jace_msg_type_name (type), jace_msg_job (msg));
    else
    if (!s_trusted (self, msg))
        *reason = 0;            //  Audited already
    else
    if (type == JACE_MSG_CKPT)
        s_on_checkpoint (self, &msg, reason, sizeof reason);
    else
    if (type == JACE_MSG_FETCH)
        s_on_fetch (self, msg, reason, sizeof reason);
    else
    if (type == JACE_MSG_SLICE_ASK)
        s_on_slice_ask (self, msg, reason, sizeof reason);
    else
    if (type == JACE_MSG_SLICE)
        s_on_slice (self, msg, reason, sizeof reason);
    else
    if (jace_task_deliver (self->task, msg, reason, sizeof reason) == 0) {
        *reason = 0;
        used = true;
    }
    if (*reason) {
        self->rejected++;
        if (self->verbose || self->rejected % 1000 == 1)
            zsys_warning ("daemon %s: dropped %s (%" PRIu64 " so far)",
                          self->sender, reason, self->rejected);
    }
    jace_msg_destroy (&msg);
    return used;
}

static bool
s_has_input (zsock_t *sock)
{
    return (zsock_events (sock) & ZMQ_POLLIN) != 0;
}

//  Send the emulated network's due messages, then wait for input at most
//  `msec` (-1: no limit) or until the next emulated message is due.
static void *
s_wait (worker_t *self, int msec)
{
    int64_t next = self->shaper ? jace_shaper_flush (self->shaper) : -1;
    int64_t retired = s_flush_retired (self);
    if (next < 0 || (retired >= 0 && retired < next))
        next = retired;
    if (self->task && jace_task_send_unsent (self->task)
    &&  (next < 0 || next > UNSENT_RETRY_USEC))
        next = UNSENT_RETRY_USEC;
    int64_t usec = msec < 0 ? -1 : (int64_t) msec * 1000;
    if (next >= 0 && (usec < 0 || next < usec))
        usec = next;
    return jace_shaper_wait (self->poller, usec);
}

//  Read everything waiting on the data socket, without blocking.
//  `ready` is the socket a wait just reported, or NULL: it is read at
//  once, as asking it for its events first costs libzmq a system call
//  (about 1 us a message, bench_latency).
static void
s_recv_inbox_all (worker_t *self, void *ready)
{
    size_t received = 0;
    if (ready == self->inbox)
        received += s_recv_inbox (self);
    while (s_has_input (self->inbox))
        received += s_recv_inbox (self);
    self->received += received;
}

//  Handle whatever is waiting, without blocking; returns the number of
//  neighbour messages received (`ready` as for s_recv_inbox_all).
static size_t
s_drain (worker_t *self, void *ready)
{
    uint64_t before = self->received;
    s_recv_inbox_all (self, ready);
    size_t received = (size_t) (self->received - before);
    if (ready == self->pipe && !self->terminated)
        s_recv_pipe (self);
    while (!self->terminated && s_has_input (self->pipe))
        s_recv_pipe (self);
    return received;
}

//  Wait as s_wait does, then handle whatever is waiting.
static size_t
s_wait_and_drain (worker_t *self, int msec)
{
    return s_drain (self, s_wait (self, msec));
}

//  True while the task that was running when `serial` was read still is:
//  every drain may have ended it (STOP) or replaced it (STOP, ASSIGN).
static bool
s_still_running (worker_t *self, uint64_t serial)
{
    return self->task_serial == serial && self->state == WORKER_RUNNING
        && !self->terminated;
}

//  Serve messages until `done` holds or msec have passed.  A drain may end
//  or replace the task: whether it still runs is asked before `done`,
//  which may look at it.
typedef bool (worker_condition_fn) (worker_t *self, const void *arg);

static void
s_wait_until (worker_t *self, int msec, worker_condition_fn *done,
              const void *arg)
{
    int64_t deadline = zclock_mono () + msec;
    uint64_t serial = self->task_serial;
    while (s_still_running (self, serial) && !done (self, arg)) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0)
            break;
        s_wait_and_drain (self, (int) left);
    }
}

static bool
s_news_arrived (worker_t *self, const void *received_before)
{
    return self->received != *(const uint64_t *) received_before;
}

//  Every source has sent the values of our previous iteration or newer
//  (jace_task_set_source_wait).
static bool
s_sources_ready (worker_t *self, const void *unused)
{
    (void) unused;
    return jace_task_sources_ready (self->task);
}

static bool
s_sources_ahead (worker_t *self, const void *unused)
{
    (void) unused;
    return jace_task_sources_ahead (self->task);
}

//  Wait until a neighbour vector arrives, at most msec.
static void
s_wait_for_news (worker_t *self, int msec)
{
    uint64_t before = self->received;
    s_wait_until (self, msec, s_news_arrived, &before);
}

//  --------------------------------------------------------------------------
//  Iterating

//  Microseconds of CPU this thread has used: the work of an iteration,
//  which the time it took on the wall is not on a loaded machine
static int64_t
s_thread_cpu_usecs (void)
{
    struct timespec now;
    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &now))
        return zclock_usecs ();
    return (int64_t) now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

//  Emulate a slower node: after computing for `busy` microseconds, stay
//  away for busy * (1/speed - 1) more, serving messages meanwhile.
static void
s_slow_down (worker_t *self, int64_t busy)
{
    if (self->speed >= 1)
        return;
    self->slowdown_debt += (double) busy * (1 / self->speed - 1);
    uint64_t serial = self->task_serial;
    while (self->slowdown_debt >= 1000 && s_still_running (self, serial)) {
        int64_t slice = self->slowdown_debt < SLOWDOWN_SLICE_USEC
                        ? (int64_t) self->slowdown_debt : SLOWDOWN_SLICE_USEC;
        int64_t start = zclock_usecs ();
        s_wait_and_drain (self, (int) (slice / 1000));
        self->slowdown_debt -= (double) (zclock_usecs () - start);
    }
}

static int64_t
s_task_state (worker_t *self)
{
    if (self->state == WORKER_HALTED)
        return JACE_TASK_EXHAUSTED;
    return self->quiet_iterations >= self->converge_iterations
           ? JACE_TASK_CONVERGED : JACE_TASK_RUNNING;
}

//  What a copy weighs: the state, and the exchange rounds it carries
//  (jace_task_save_pieces: payload 3 is [rounds, first round, sizes...]).
static void
s_log_copy (worker_t *self, jace_msg_t *copy, size_t state, size_t holders)
{
    int64_t head [2] = { 0, 0 };
    size_t bytes = 0;
    if (jace_msg_payload_count (copy) == 5) {
        int64_t *shape = (int64_t *) malloc (jace_msg_payload_length (copy, 3)
                                             * sizeof (int64_t));
        assert (shape);
        jace_msg_payload_copy (copy, 3, shape);
        head [0] = shape [0];
        head [1] = shape [1];
        free (shape);
        bytes = jace_msg_payload_length (copy, 4);
    }
    zsys_debug ("%s: copy at iteration %" PRId64 " to %zu holders: state "
                "%zu bytes, exchange rounds %" PRId64 " from %" PRId64
                " (%zu bytes)", self->sender, jace_task_iteration (self->task),
                holders, state, head [0], head [1], bytes);
}

//  Send a copy of our state to each of `count` holders.
static void
s_send_checkpoint (worker_t *self, const int64_t *holders, size_t count)
{
    int64_t iteration = jace_task_iteration (self->task);
    size_t size = 0;
    const void *bytes = self->app->checkpoint (self->app_state, &size);
    jace_msg_t *copy = jace_checkpoint_begin (self->sender,
        jace_task_job (self->task), jace_task_rank (self->task),
        jace_task_epoch (self->task), iteration, bytes, size);
    jace_task_save_newest (self->task, copy);
    jace_task_save_pieces (self->task, copy);
    if (self->verbose)
        s_log_copy (self, copy, size, count);
    jace_checkpoint_seal (copy, jace_task_job_key (self->task));
    for (size_t i = 0; i < count; i++) {
        jace_msg_t *msg = i + 1 < count
                        ? jace_checkpoint_forward (copy, self->sender)
                        : copy;
        if (i + 1 == count)
            copy = NULL;
        if (jace_task_send_msg (self->task, holders [i], &msg))
            self->copies_dropped++;
    }
    jace_msg_destroy (&copy);
}

//  Send our state to this round's holders, if a checkpoint is due.
static void
s_checkpoint (worker_t *self)
{
    int64_t iteration = jace_task_iteration (self->task);
    int64_t now = zclock_mono ();
    bool due = (self->checkpoint_iterations > 0
                && iteration - self->last_checkpoint_iteration
                   >= self->checkpoint_iterations)
            || (self->checkpoint_msec > 0
                && now - self->last_checkpoint_time >= self->checkpoint_msec);
    if (!due || !self->checkpoint_copies || !self->app->checkpoint)
        return;
    int64_t holders [COPIES_MAX];
    size_t count = jace_task_checkpoint_holders (self->task,
        self->checkpoint_copies, self->checkpoint_offsite,
        self->checkpoint_round++, holders);
    s_send_checkpoint (self, holders, count);
    self->last_checkpoint_iteration = iteration;
    self->last_checkpoint_time = now;
}

//  The application's iteration gave up: an exchange that cannot complete
//  fails the job with its reason; anything else with the application's
//  reason, or as divergence.
static void
s_iteration_failed (worker_t *self)
{
    char reason [400];
    const char *failure = jace_task_exchange_failure (self->task);
    if (failure) {
        snprintf (reason, sizeof reason, "exchange %" PRId64 " cannot "
                  "complete: %s", jace_task_exchanges (self->task) + 1,
                  failure);
        s_give_up (self, JACE_REFUSE_FAILED, reason);
        return;
    }
    //  The application may know which solver broke down, and why
    const char *why = jace_task_failure (self->task);
    snprintf (reason, sizeof reason, "iteration %" PRId64 " failed: %s",
              jace_task_iteration (self->task) + 1, why ? why
              : "values no longer finite or the inner solver broke down "
                "(the method diverges on this system)");
    s_give_up (self, JACE_REFUSE_DIVERGED, reason);
}

static void
s_iterate (worker_t *self)
{
    int64_t start = zclock_usecs ();
    int64_t cpu_start = s_thread_cpu_usecs ();
    int64_t waited = jace_task_waited_usecs (self->task);
    //  An iteration on the same neighbour values as the last costs next
    //  to nothing when the local solve is warm-started (Krylov): only
    //  those with news (or of a task that hears from nobody) say what an
    //  iteration of our rows costs.
    bool telling = self->received != self->received_before
                || self->received == 0;
    self->received_before = self->received;
    jace_task_take_work (self->task);
    int rc = self->app->iterate (self->task, self->app_state);
    double work = jace_task_take_work (self->task);
    //  A collective may have been cut short by a STOP or ASSIGN (or
    //  $TERM): the iteration's result means nothing, the commands run.
    bool interrupted = self->interrupted || self->terminated;
    s_run_deferred (self);
    if (interrupted)
        return;
    if (rc) {
        s_iteration_failed (self);
        return;
    }
    jace_task_count_iteration (self->task);
    double change = jace_task_change (self->task);
    if (jace_task_take_converged (self->task)) {
        //  The application computed the job's residual: under tolerance
        if (self->quiet_iterations < self->converge_iterations) {
            self->quiet_iterations = self->converge_iterations;
            //  Asynchronous tasks idle without news already (s_run)
            self->verify_pause = self->synchronous;
        }
        else
            self->quiet_iterations++;
    }
    else
    if (isfinite (change) && change < self->tolerance)
        self->quiet_iterations++;
    else
        self->quiet_iterations = 0;
    if (self->max_iterations > 0
    &&  jace_task_iteration (self->task) >= self->max_iterations)
        self->state = WORKER_HALTED;
    s_checkpoint (self);
    //  A slower node computes slower; it does not wait longer for the
    //  others in a collective (counting that would feed on itself), nor
    //  for the cores other processes hold: the slowness owed is in
    //  proportion to the CPU the iteration used.  Taken from the wall
    //  clock, every second other processes held the core cost a node of
    //  speed 0.05 19 s more: sharing its core with 8 CPU-bound processes
    //  it iterated at a third to a half of its twin's pace
    //  (test_daemon_speed_load), and on a machine at load 150 slow
    //  nodes' tasks stood still for up to two minutes (the scale audit).
    uint64_t serial = self->task_serial;
    s_slow_down (self, s_thread_cpu_usecs () - cpu_start);
    if (self->task_serial != serial || self->terminated)
        return;                 //  Ended or replaced while slowed down
    if (telling) {
        self->busy_usecs += zclock_usecs () - start
                          - (jace_task_waited_usecs (self->task) - waited);
        self->busy_iterations++;
        self->busy_work += work;
        self->busy_unweighed |= work <= 0;
    }
    int64_t state = s_task_state (self);
    if (state != self->reported_state
    ||  zclock_mono () - self->last_progress >= PROGRESS_MSEC)
        s_report_progress (self, state);
}

//  Restart from the newest valid copy gathered, or from the initial
//  state, and tell the spawner which.
static void
s_finish_fetch (worker_t *self)
{
    char reason [256] = "";
    int64_t iteration = 0;
    int64_t holder = -1;
    //  A replacement given a rebalance's iterate keeps it unless a copy is
    //  newer
    if (self->preloaded && self->preload_iteration >= 0 && self->best_copy
    &&  jace_msg_iteration (self->best_copy) <= self->preload_iteration)
        jace_msg_destroy (&self->best_copy);
    if (self->preloaded && self->preload_iteration >= 0
    &&  !self->best_copy) {
        self->fetching = false;
        s_report_preload (self);
        return;
    }
    if (self->best_copy && self->app->restore) {
        size_t size = 0;
        const void *bytes = jace_checkpoint_bytes (self->best_copy, &size);
        if (self->app->restore (self->task, self->app_state, bytes, size,
                                reason, sizeof reason) == 0) {
            iteration = jace_msg_iteration (self->best_copy);
            holder = self->best_holder;
            jace_task_set_iteration (self->task, iteration);
            jace_task_restore_newest (self->task, self->best_copy);
            jace_task_restore_pieces (self->task, self->best_copy);
        }
        else
            zsys_warning ("daemon %s: %s; starting from the initial state",
                          self->sender, reason);
    }
    //  From its initial state a replacement is as far behind as from a
    //  checkpoint: in sync mode its sources wait for it and do not send
    //  first (it waited for them for ever: a deadlock)
    if (holder < 0)
        jace_task_set_iteration (self->task, 0);
    jace_msg_destroy (&self->best_copy);
    self->fetching = false;
    double seconds = (zclock_mono () - self->fetch_started) / 1000.0;
    if (holder >= 0)
        zsys_notice ("daemon %s: task %" PRId64 " restarts from the "
                     "checkpoint of iteration %" PRId64 " kept by task %"
                     PRId64 " (%.3f s gathering copies)", self->sender,
                     jace_task_rank (self->task), iteration, holder, seconds);
    else
        zsys_notice ("daemon %s: task %" PRId64 " restarts from its initial "
                     "state: no valid copy survived (%.3f s asking)",
                     self->sender, jace_task_rank (self->task), seconds);
    jace_msg_t *restored = s_task_msg (self, JACE_MSG_RESTORED);
    jace_msg_set_iteration (restored, iteration);
    jace_msg_set_count (restored, holder);
    jace_msg_set_value (restored, seconds);
    jace_msg_send (&restored, self->pipe);
    self->last_checkpoint_iteration = iteration;
}

//  Wait for a rebalance's slices of the iterate (s_on_slice ends it), but
//  not for ever: an old owner may have died.
static void
s_gather (worker_t *self)
{
    uint64_t serial = self->task_serial;
    s_wait_and_drain (self, 100);
    if (self->task_serial != serial || self->state != WORKER_GATHERING
    ||  self->terminated || zclock_mono () < self->gather_deadline)
        return;
    char missing [128], reason [256];
    daemon_handoff_missing (self->handoff, missing, sizeof missing);
    snprintf (reason, sizeof reason, "the slices of the rebalance's iterate "
              "from tasks %s did not come within %d s", missing,
              GATHER_WAIT_MSEC / 1000);
    s_give_up (self, JACE_REFUSE_BUSY, reason);
}

//  Wait for our sinks' request lists (and a replacement's copies), then
//  iterate.
static void
s_exchange (worker_t *self)
{
    uint64_t serial = self->task_serial;
    int64_t due = jace_task_exchange_tick (self->task);
    s_wait_and_drain (self, due >= 0 && due < 100 ? (int) due : 100);
    if (self->task_serial != serial || self->state != WORKER_EXCHANGING
    ||  self->terminated)
        return;                 //  Stopped or replaced meanwhile
    jace_task_exchange_tick (self->task);
    if (self->fetching && (self->fetch_pending == 0
                           || zclock_mono () >= s_fetch_deadline (self)))
        s_finish_fetch (self);
    if (jace_task_requests_complete (self->task) && !self->fetching) {
        self->state = WORKER_RUNNING;
        return;
    }
    int64_t now = zclock_mono ();
    char missing [sizeof self->exchange_missing];
    jace_task_requests_missing (self->task, missing, sizeof missing);
    if (self->fetching && strlen (missing) + 20 < sizeof missing)
        strcat (missing, ", checkpoint copies");
    if (!streq (missing, self->exchange_missing)) {
        self->exchange_deadline = now + self->setup_timeout_msec;
        snprintf (self->exchange_missing, sizeof self->exchange_missing,
                  "%s", missing);
    }
    if (now >= self->exchange_reported + EXCHANGE_REPORT_MSEC) {
        zsys_info ("daemon %s: task %" PRId64 " waits to iterate: %s",
                   self->sender, jace_task_rank (self->task), missing);
        self->exchange_reported = now;
    }
    //  Another daemon may well get through: the set-up of a replacement
    //  goes the same way with fresh links.
    if (now > self->exchange_deadline) {
        char why [sizeof missing + 96];
        snprintf (why, sizeof why, "nothing new in the set-up exchange "
                  "for %.0f s (job/setup_timeout); waiting for: %s",
                  self->setup_timeout_msec / 1000.0, missing);
        s_give_up (self, JACE_REFUSE_BUSY, why);
    }
}

//  Serve the spawner's commands (COLLECT, STOP) while the answer just
//  reached is verified, unless the other tasks go on (VERIFY_PAUSE_MSEC).
static void
s_pause_for_verification (worker_t *self)
{
    self->verify_pause = false;
    s_wait_until (self, VERIFY_PAUSE_MSEC, s_sources_ahead, NULL);
}

//  One pass of a running task: take the news, wait a little for more when
//  iterating now would only repeat the last answer, iterate.  Each drain
//  may end the task or replace it, so the task is looked at again after
//  every one, never through what was read before.
static void
s_run (worker_t *self)
{
    uint64_t serial = self->task_serial;
    size_t news = s_drain (self, NULL);
    if (!s_still_running (self, serial))
        return;
    if (self->verify_pause) {
        s_pause_for_verification (self);
        if (!s_still_running (self, serial))
            return;
    }
    //  A task that never hears from anyone has no news to wait for.
    if (news == 0 && self->received > 0 && !self->synchronous) {
        if (self->quiet_iterations >= self->converge_iterations)
            s_wait_and_drain (self, IDLE_WAIT_MSEC);
        else
        if (self->app->idle_without_news
        &&  self->received == self->received_before)
            s_wait_for_news (self, NEWS_WAIT_MSEC);
        if (!s_still_running (self, serial))
            return;
    }
    int source_wait = self->synchronous ? 0
                    : jace_task_source_wait (self->task);
    if (source_wait > 0) {
        s_wait_until (self, source_wait, s_sources_ready, NULL);
        if (!s_still_running (self, serial))
            return;
    }
    s_iterate (self);
    if (self->shaper)
        jace_shaper_flush (self->shaper);
}

//  --------------------------------------------------------------------------

void
daemon_worker_actor (zsock_t *pipe, void *args)
{
    worker_t *self = s_worker_new (pipe, (daemon_worker_config_t *) args);
    zsock_signal (pipe, 0);
    while (!self->terminated) {
        if (self->state == WORKER_GATHERING) {
            s_gather (self);
            continue;
        }
        if (self->state == WORKER_EXCHANGING) {
            s_exchange (self);
            continue;
        }
        if (self->state == WORKER_RUNNING && self->synchronous
        &&  !jace_task_sources_ready (self->task)) {
            s_wait_and_drain (self, 100);
            continue;
        }
        if (self->state == WORKER_RUNNING) {
            s_run (self);
            continue;
        }
        void *which = s_wait (self, -1);
        if (which == self->pipe)
            s_recv_pipe (self);
        else
        if (which == self->inbox)
            s_recv_inbox (self);
    }
    s_worker_destroy (&self);
}

char *
daemon_worker_endpoint (zactor_t *worker)
{
    assert (worker);
    zstr_send (worker, "ENDPOINT");
    char *endpoint = zstr_recv (worker);
    if (endpoint && !*endpoint)
        zstr_free (&endpoint);
    return endpoint;
}
