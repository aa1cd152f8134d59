/*  =========================================================================
    spawner_server - one job, from leasing to a verified answer, as an actor

    Costs: each pass of the loop polls every socket once (zmq_poll over an
    array rebuilt only when links change) and reads every socket that has
    input, at most DRAIN_MAX messages each, so a busy task cannot starve
    the others nor the super-node.  Work over all tasks (liveness, console,
    progress events, heartbeats to daemons) runs on timers, not per
    message, so the spawner's work per second grows linearly with the
    tasks: each reports PROGRESS every 100 ms at most and a HEARTBEAT every
    heartbeat period.

    Task data (a file matrix's rows) streams in chunks (spawner_stream),
    with at most STREAM_BUDGET bytes of tasks' data prepared at once,
    so the spawner holds the problem once plus one task's data, or
    STREAM_BUDGET bytes of several tasks', being sent (measured: a 260 MB
    file on 2 tasks peaked at 401 MiB for a 209 MiB CSR, BENCHMARKS.md).
    =========================================================================
*/
#include "spawner_server.h"
#include "spawner_console.h"
#include "spawner_detector.h"
#include "spawner_drain.h"
#include "spawner_handoff.h"
#include "spawner_events.h"
#include "spawner_lease.h"
#include "spawner_mapper.h"
#include "spawner_output.h"
#include "spawner_rebalance.h"
#include "spawner_resume.h"
#include "spawner_scatter.h"
#include "spawner_secret.h"
#include "spawner_stall.h"
#include "spawner_task.h"
#include "spawner_verify.h"
#include "jace_security.h"

#include <float.h>
#include <math.h>
#include <sys/resource.h>

//  Longest wait of one pass; timers are checked at least this often.
#define PASS_MAX_MSEC 100
//  Most messages read from one socket in one pass.
#define DRAIN_MAX 64
//  HEARTBEAT to every daemon this often: they abandon a job whose spawner
//  stays silent for job/orphan_timeout.
#define DAEMON_HEARTBEAT_MSEC 1000
//  Progress events (one per task) this often.
#define PROGRESS_EVENT_MSEC 1000
//  Residual samples of a job that never settles and has no
//  report/sample_seconds, so that a stall shows (job/stall_snapshots):
//  rare enough that gathering a large answer costs little
#define STALL_SAMPLE_SECONDS 5
//  Tasks' data prepared and not yet acknowledged, in all.
#define STREAM_BUDGET (64LL * 1024 * 1024)
//  Receive limits.  A daemon reports a PROGRESS every 100 ms at most and
//  one RESULT a snapshot: 64 messages queued per link is plenty, and the
//  largest frame is a RESULT of the whole job's unknowns (a task owns
//  fewer), so a daemon can make us buffer 64 such results at most.  The
//  status endpoint takes small requests (STATUS, CANCEL) from anyone:
//  16 of 128 KiB (a reason is under 64 KiB), 2 MiB per client.
#define LINK_RCVHWM 64
#define STATUS_RCVHWM 16
#define STATUS_FRAME_MAX (128 * 1024)
//  Daemons that may refuse one task in a row before the job gives up.
#define REFUSALS_MAX 8
//  PROGRESS reports with a measured rate each task must have sent, on its
//  present daemon and rows, before a rebalance may judge it: one report
//  can catch a task in its set-up, and five keep a rebalance from
//  reacting to the rows it has just cut.
#define RATE_REPORTS_MIN 5
//  Weight of a new rate report in a task's smoothed rate.
#define RATE_SMOOTHING 0.3
//  How far a rebalance goes towards the fair cut once the job was cut
//  on the same daemons (spawner_rebalance.h: a full step can overshoot).
#define REBALANCE_DAMPED_STEP 0.5
//  job/rebalance = auto holds the tasks still at most a tenth of the
//  job's time: after a rebalance, auto looks again only once this many
//  times its pause (from the new ASSIGNs to the START, when no task
//  iterates) has passed.  Rates measured on a loaded machine stay noisy,
//  and without it auto cut the rows about once a second for little gain
//  (wan.platform, two CPU hogs beside).
#define REBALANCE_AUTO_COST_FACTOR 9
//  auto cuts again only if its last cut took the drift below this share
//  of what it was; else the rates measured are noise the rows cannot
//  follow (64 daemons on two cores: the measured speeds of one platform
//  spread 90 to 1 from one look to the next, and auto cut the rows 25
//  times in 160 s), and the next look waits twice as long, up to
//  2^REBALANCE_BACKOFF_MAX times.
#define REBALANCE_AUTO_PROGRESS 0.8
#define REBALANCE_BACKOFF_MAX 6

//  Where a rebalance stands (s_rebalance_step).
typedef enum {
    REBALANCE_NONE,             //  None runs
    REBALANCE_GATHERING,        //  Decided; a snapshot gathers the iterate
    REBALANCE_ASSIGNING,        //  Every task assigned again, new rows
    REBALANCE_SETTLING          //  Running; the iterate is kept until
                                //  every task checkpointed on its rows
} rebalance_phase_t;
//  The grid's listing is asked for only when a decision waits for it (a
//  plan, a replacement: chosen on the grid as it is now), again this often
//  until it comes; a running job with no task between daemons costs the
//  super-node nothing.
#define LISTING_RETRY_MSEC 300
//  Daemons refused by id stay out of plans until a listing asked this
//  long after the refusal comes.
#define REFUSED_KEEP_MSEC 2000
//  A replacement waits this long for a listing taken after the loss,
//  then chooses on the last one it has.
#define STALE_LISTING_MSEC 3000

typedef enum {
    JOB_LEASING, JOB_ASSIGNING, JOB_RUNNING, JOB_REPLACING, JOB_VERIFYING,
    JOB_FINISHING, JOB_DONE
} job_state_t;

static const char *s_state_names [] = {
    "leasing", "assigning", "running", "replacing", "verifying",
    "finishing", "done"
};

//  What a poll item belongs to.
//  A line that would repeat with every message is logged the first time,
//  then at most once every REPEAT_LOG_MSEC with the count held back.
#define REPEAT_LOG_MSEC 10000

typedef struct {
    int64_t logged;             //  When the line was last logged, or 0
    uint64_t held;              //  Occurrences since, not logged
} repeat_t;

//  A link to a daemon we fenced: kept to tell it again, and to hear it
//  say it dropped our task.  Kept until it says so, and at most
//  FENCED_EXTRA more than the job has tasks, the oldest going first: most
//  fenced daemons are dead, and each link held a descriptor (and retried
//  its connection ten times a second) for the rest of the job; a spawner
//  limited to 100 descriptors aborted after 52 replacements.  A daemon
//  whose link was let go and that still runs our task hears that the job
//  moved on from its neighbours' epochs, and leaves it at job/
//  orphan_timeout, or when its super-node says the job is over.
#define FENCED_EXTRA 8
typedef struct {
    zsock_t *link;              //  DEALER to its control endpoint
    char id [JACE_ID_MAX];      //  Its daemon
    int64_t task;               //  The task it ran for us
    int64_t epoch;              //  Of that placement
    int64_t told;               //  Last STOP sent (msec), or 0
} fenced_t;

#define ITEM_PIPE -1
#define ITEM_SUPERNODE -2
#define ITEM_STATUS -3
#define ITEM_FENCED -4
//  Owners from here on are task links' watches: ITEM_WATCH + rank
#define ITEM_WATCH (1LL << 32)

typedef struct {
    zsock_t *pipe;              //  Actor command pipe
    spawner_job_t *job;         //  Borrowed
    const spawner_options_t *options;   //  Borrowed
    char id [JACE_ID_MAX];      //  Job id, also the lease id
    job_state_t state;          //  Where the job stands
    jace_security_t *security;  //  Keys, or plain links
    jace_key_t job_key;         //  Seals the job's messages
    char *secrets_dir;          //  Where the job's secret file is
    double submitted_before;    //  A resumed job: seconds from its
                                //  submission to the resume, or NAN
    bool secret_ours;           //  Remove the secret file when the job ends
    int secret_held;            //  Our flock on it (a submit's), or -1
    spawner_lease_t *lease;     //  Daemons leased from the super-nodes
    spawner_mapper_t *mapper;   //  The job's mapping on the live grid
    bool planned;               //  A plan is being leased
    int64_t next_listing;       //  When to ask for the grid's listing
    int64_t refused_at;         //  Last refusal of a daemon by id (msec)
    int64_t listing_asked_at;   //  When the last listing was asked
    zlist_t *refused;           //  Daemons wanted by id and taken by others
    zlist_t *dead;              //  Daemons the job lost
    char plan_failure [256];    //  Why the last plan could not be made
    int64_t plan_tried_at;      //  Listing time of the last plan tried
    int64_t listing_asked_usec; //  When the last listing was asked (usec)
    double listing_msec;        //  Round trip of the first listing
    zsock_t *status;            //  ROUTER answering STATUS and CANCEL
    char *status_endpoint;      //  Where it is bound
    spawner_events_t *events;   //  The event log
    spawner_detector_t *detector;   //  Who is silent too long
    spawner_verify_t *verify;   //  Snapshots and the answer
    spawner_console_t *console; //  Table or progress lines
    spawner_task_t *tasks;      //  One per task
    size_t task_count;          //  Tasks in the job
    int64_t *first_row;         //  Block starts, task_count + 1
    fenced_t *fenced;           //  Links to daemons we fenced
    size_t fenced_count;        //  Entries in fenced
    zmq_pollitem_t *items;      //  Poll set
    int64_t *item_owner;        //  Per item: rank, or ITEM_*
    size_t item_count;          //  Entries in items
    bool items_dirty;           //  Links changed since the last rebuild
    int64_t started;            //  Submission time (msec)
    int64_t lease_deadline;     //  LEASING gives up then
    int64_t stream_bytes;       //  Task data prepared and not yet acked
    spawner_scatter_t *scatter; //  How the data went out, or NULL
    char draining [JACE_ID_MAX];    //  Cluster being drained, or ""
    char drain_waiting [512];   //  Why the drain waits (room, a silent
                                //  holder), or ""
    char drain_wait_note [64];  //  ... in a few words, for the table
    int64_t drain_ready_at;     //  When the next step was first ready to
                                //  go (settled, room), or 0
    int64_t drain_unsettled;    //  A task the next step waits to see
                                //  checkpoint where it runs, or -1
    jace_msg_t *drain_request;  //  The DRAIN to answer, or NULL
    bool drain_deciding;        //  Begun, not yet decided on a listing
    bool total_exchanges;       //  The tasks have run jace_task_alltoallv
    int64_t drain_started;      //  When (msec)
    int64_t drain_ran;          //  When every task ran after its last step
    size_t drain_moved;         //  Tasks moved off it so far
    spawner_drain_t *drain;     //  Its steps, while draining
    size_t drain_step;          //  Next step to take
    int64_t *drain_mark_at;     //  When each task was seen running
                                //  since the last step (msec), or 0
    int64_t *drain_marks;       //  Each task's iteration then
    int64_t *drain_period_marks;    //  Each task's iteration a checkpoint
                                //  period later, or -1 before
    double data_bytes_per_row;  //  Of the data we send with the rows
                                //  (a file matrix's), or 0
    bool scattering;            //  Its single port is busy: one stream
    rebalance_phase_t rebalance;    //  Where a rebalance stands
    int64_t rebalance_started;  //  When it was decided (msec)
    int64_t rebalance_assigned; //  When the tasks stopped for it (msec)
    int64_t rebalance_pause;    //  How long they stood still (msec)
    bool rebalance_resumed;     //  ... known: every task iterated again
    int64_t *rebalance_first;   //  The new block starts (task_count + 1)
    int64_t rebalance_snapshot; //  Snapshot gathering the iterate, or 0
    double *rebalance_x;        //  The iterate the new blocks restore
                                //  (or, during a drain, the tasks it
                                //  moves that have no copies)
    int64_t *handoff_first;     //  The old cut, while the new tasks take
                                //  their iterate from its owners
    size_t *handoff_step;       //  [owner * tasks + task]: when the task
                                //  asks the owner (spawner_handoff)
                                //  from, kept until they checkpointed
    int64_t rebalance_unknowns; //  Values in it
    int64_t rebalance_sent;     //  Numbers of it sent to the tasks
    int64_t rebalance_iteration;    //  The iteration it goes on from
    int64_t rebalances;         //  Rebalances done
    bool rebalanced_here;       //  The rows were cut on these daemons:
                                //  the next cut takes half a step
    int64_t next_rebalance_check;   //  job/rebalance = auto (msec)
    double auto_drift;          //  Drift auto last cut the rows on, or 0
                                //  (none yet, or new daemons since)
    int auto_backoff;           //  auto's looks wait 2^this longer
    int64_t next_daemon_heartbeat;  //  msec
    int64_t next_progress_event;    //  msec
    int64_t next_sample;        //  Next residual sample (msec), or 0
    int64_t replacements;       //  Tasks moved to another daemon
    int64_t drain_moves;        //  ... of them moved by drains
    int64_t resume_moves;       //  ... of them not adopted by a resume
    int64_t drain_snapshot;     //  Snapshot gathering the state of a
                                //  step's tasks without copies, or 0
    int64_t crashes;            //  Daemons the job's schedule crashed
    int64_t from_checkpoint;    //  Replacements restored from a copy
    int64_t from_initial;       //  Replacements that started over
    int64_t from_rebalance;     //  Tasks restored from a rebalance's
                                //  iterate
    int64_t from_drain;         //  ... from the iterate a drain gathered
    uint64_t malformed;         //  Bad messages dropped
    repeat_t strangers;         //  Log of messages on a task's link from
                                //  another daemon (a revived one reusing
                                //  a dead one's port speaks every beat)
    repeat_t garbled;           //  Log of malformed messages from daemons
    bool resumed;               //  We took over from a dead spawner
    bool convergence_reported;  //  Every task converged locally once
    bool mass_silence;          //  Most daemons were silent at once
    bool verified;              //  A snapshot passed
    bool terminated;            //  $TERM received
    char failure [1024];        //  Why the job failed, or ""
} server_t;


//  --------------------------------------------------------------------------
//  Failure: recorded once, with the first reason

static void
s_fail (server_t *self, const char *format, ...) CHECK_PRINTF (2);

static void
s_fail (server_t *self, const char *format, ...)
{
    if (*self->failure)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (self->failure, sizeof self->failure, format, args);
    va_end (args);
}

static int64_t
s_elapsed (server_t *self)
{
    return zclock_mono () - self->started;
}

//  --------------------------------------------------------------------------
//  Set-up and tear-down

static int
s_bind_status (server_t *self)
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
    self->status = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (self->status, STATUS_FRAME_MAX);
    zsock_set_rcvhwm (self->status, STATUS_RCVHWM);
    jace_security_apply_server (self->security, self->status);
    if (jace_msg_bind (self->status, bind) < 0) {
        s_fail (self, "cannot bind status endpoint %s", bind);
        return -1;
    }
    self->status_endpoint = zsock_last_endpoint (self->status);
    return 0;
}

static int
s_connect (server_t *self)
{
    if (s_bind_status (self))
        return -1;
    const spawner_options_t *options = self->options;
    const char *only [1] = { options->supernode };
    char reason [512] = "";
    self->lease = spawner_lease_new (self->id,
        options->supernode_count ? options->supernodes : only,
        options->supernode_count ? options->supernode_count : 1,
        self->security, self->status_endpoint, reason, sizeof reason);
    if (!self->lease) {
        s_fail (self, "%s", reason);
        return -1;
    }
    spawner_lease_set_app (self->lease, spawner_job_app (self->job)->name);
    return 0;
}

//  A new job's secret is made and saved before anything is leased; a
//  resumed job's key comes from the secret file its tools loaded.
static int
s_open_secret (server_t *self, const jace_key_t *resumed_key)
{
    self->secrets_dir = spawner_secret_dir (self->options->secrets_dir);
    //  Read before the job ends and its secret goes
    self->submitted_before = self->resumed
        ? spawner_secret_age (self->secrets_dir, self->id) : NAN;
    if (resumed_key) {
        self->job_key = *resumed_key;
        return 0;
    }
    char reason [1024] = "";
    char *path = spawner_secret_make (self->secrets_dir, self->id,
                                      &self->job_key, reason, sizeof reason);
    if (!path) {
        s_fail (self, "cannot keep the job's secret: %s", reason);
        return -1;
    }
    self->secret_ours = true;
    //  Held while we run: a resume on this machine is refused at once
    self->secret_held = spawner_secret_hold (self->secrets_dir, self->id,
                                             reason, sizeof reason);
    if (self->secret_held < 0)
        zsys_warning ("spawner: %s", reason);
    zsys_info ("spawner: job %s: secret in %s (resume, cancel and kill "
               "need it)", self->id, path);
    free (path);
    return 0;
}

static void
s_make_id (server_t *self, const char *job_id)
{
    if (job_id) {
        snprintf (self->id, sizeof self->id, "%s", job_id);
        return;
    }
    zuuid_t *uuid = zuuid_new ();
    snprintf (self->id, sizeof self->id, "job-%.8s", zuuid_str (uuid));
    zuuid_destroy (&uuid);
    for (char *c = self->id; *c; c++)
        *c = (char) tolower (*c);
}

//  Ask the super-nodes for the grid's listing (one STATUS).
static void
s_ask_listing (server_t *self, int64_t now)
{
    spawner_lease_ask_listing (self->lease);
    self->listing_asked_at = now;
    self->listing_asked_usec = zclock_usecs ();
    self->next_listing = now + LISTING_RETRY_MSEC;
}

//  The job's task graph, and a first look at the grid to plan on.
static void
s_new_mapper (server_t *self)
{
    char reason [512] = "";
    self->mapper = spawner_mapper_new (self->job, self->task_count, reason,
                                       sizeof reason);
    if (!self->mapper) {
        s_fail (self, "cannot map the job: %s", reason);
        return;
    }
    self->refused = zlist_new ();
    zlist_autofree (self->refused);
    zlist_comparefn (self->refused, (zlist_compare_fn *) strcmp);
    self->dead = zlist_new ();
    zlist_autofree (self->dead);
    zlist_comparefn (self->dead, (zlist_compare_fn *) strcmp);
}

static server_t *
s_server_new (zsock_t *pipe, spawner_server_config_t *config)
{
    server_t *self = (server_t *) zmalloc (sizeof *self);
    self->pipe = pipe;
    self->job = config->job;
    self->options = config->options;
    self->resumed = config->job_id != NULL;
    self->secret_held = -1;     //  The driver holds a resumed job's
    s_make_id (self, config->job_id);
    self->started = zclock_mono ();
    self->task_count = (size_t) spawner_job_tasks (self->job);
    self->tasks = (spawner_task_t *) zmalloc (self->task_count
                                              * sizeof (spawner_task_t));
    for (size_t i = 0; i < self->task_count; i++) {
        self->tasks [i].state = -1;
        self->tasks [i].relay = -1;
    }
    self->first_row = (int64_t *) zmalloc ((self->task_count + 1)
                                           * sizeof (int64_t));
    self->rebalance_first = (int64_t *) zmalloc ((self->task_count + 1)
                                                 * sizeof (int64_t));
    self->drain_mark_at = (int64_t *) zmalloc (self->task_count
                                               * sizeof (int64_t));
    self->drain_marks = (int64_t *) zmalloc (self->task_count
                                             * sizeof (int64_t));
    self->drain_period_marks = (int64_t *) zmalloc (self->task_count
                                                    * sizeof (int64_t));
    self->fenced = (fenced_t *) zmalloc (sizeof (fenced_t));
    self->detector = spawner_detector_new (self->task_count,
        spawner_job_heartbeat_timeout (self->job),
        spawner_job_adaptive_detector (self->job));
    self->verify = spawner_verify_new (self->job, self->task_count,
                                       self->first_row);
    self->console = spawner_console_new (self->id, self->options->quiet);
    self->items_dirty = true;
    self->lease_deadline = self->started
        + (int64_t) (spawner_job_reserve_timeout (self->job) * 1000);
    const char *events_path = self->options->events_path;
    self->events = self->resumed && events_path
                 ? spawner_events_append (events_path, self->id)
                 : spawner_events_new (events_path, self->id);
    if (spawner_job_tolerance (self->job) < DBL_EPSILON)
        zsys_warning ("spawner: job/tolerance = %.1e is below double "
                      "precision's epsilon (%.1e): no residual reaches it, "
                      "and the job ends by its stall check, job/max_seconds "
                      "or cancel", spawner_job_tolerance (self->job),
                      DBL_EPSILON);
    if (!self->events)
        s_fail (self, "cannot write events to %s: %s", events_path,
                strerror (errno));
    else
    if (s_open_secret (self, config->job_key) == 0
    &&  s_connect (self) == 0) {
        //  The grid's listing comes back while the task graph is built
        //  (3-5 ms for 50,000 rows): the first plan waits for neither
        //  one after the other.
        if (!self->resumed)
            s_ask_listing (self, zclock_mono ());
        s_new_mapper (self);
    }
    return self;
}

static void s_refuse_request (server_t *self, jace_msg_t *request,
                              const char *format, ...);
static void s_stop_drain (server_t *self, const char *why);
static bool s_all_iterating (server_t *self);

static void
s_server_destroy (server_t **self_p)
{
    server_t *self = *self_p;
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_watch_destroy (&self->tasks [i].watch);
        zsock_destroy (&self->tasks [i].link);
        free (self->tasks [i].sources);
        spawner_stream_destroy (&self->tasks [i].stream);
    }
    for (size_t i = 0; i < self->fenced_count; i++)
        zsock_destroy (&self->fenced [i].link);
    free (self->fenced);
    free (self->tasks);
    free (self->first_row);
    free (self->rebalance_first);
    free (self->rebalance_x);
    free (self->handoff_first);
    free (self->handoff_step);
    spawner_drain_destroy (&self->drain);
    if (self->drain_request)    //  The job ended before it was decided
        s_refuse_request (self, self->drain_request, "DRAIN refused: job %s "
                          "ended before the drain could start", self->id);
    jace_msg_destroy (&self->drain_request);
    free (self->drain_mark_at);
    free (self->drain_marks);
    free (self->drain_period_marks);
    spawner_scatter_destroy (&self->scatter);
    free (self->items);
    free (self->item_owner);
    spawner_lease_destroy (&self->lease);
    spawner_mapper_destroy (&self->mapper);
    zlist_destroy (&self->refused);
    zlist_destroy (&self->dead);
    spawner_detector_destroy (&self->detector);
    spawner_verify_destroy (&self->verify);
    spawner_console_destroy (&self->console);
    spawner_events_destroy (&self->events);
    zsock_destroy (&self->status);
    zstr_free (&self->status_endpoint);
    jace_security_destroy (&self->security);
    jace_key_wipe (&self->job_key);
    spawner_secret_let_go (&self->secret_held);
    free (self->secrets_dir);
    free (self);
    *self_p = NULL;
}

//  --------------------------------------------------------------------------
//  Messages to daemons

static jace_msg_t *
s_job_msg (server_t *self, jace_msg_type_t type, const spawner_task_t *task)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, self->id);
    jace_msg_set_job (msg, self->id);
    jace_msg_set_epoch (msg, task->epoch);
    return msg;
}

//  Seal a job message, every field set, and send it on link: a daemon
//  obeys only what is sealed with the job key.
static int
s_send_job (server_t *self, jace_msg_t **msg_p, zsock_t *link)
{
    return spawner_secret_send (msg_p, &self->job_key, link);
}

//  Send to every task whose daemon has its ASSIGN; `count` goes in the
//  count field (a snapshot id), reason in reason when not NULL.
static void
s_send_all (server_t *self, jace_msg_type_t type, int64_t count,
            const char *reason)
{
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_task_t *task = &self->tasks [i];
        if (!task->link || task->phase == SPAWNER_TASK_WAITING)
            continue;
        jace_msg_t *msg = s_job_msg (self, type, task);
        jace_msg_set_count (msg, count);
        if (reason)
            jace_msg_set_reason (msg, reason);
        s_send_job (self, &msg, task->link);
    }
}

//  True if a repeated line may be logged now; *held gets the occurrences
//  not logged since the last one.
static bool
s_repeat_due (repeat_t *repeat, uint64_t *held)
{
    int64_t now = zclock_mono ();
    if (repeat->logged && now - repeat->logged < REPEAT_LOG_MSEC) {
        repeat->held++;
        return false;
    }
    *held = repeat->held;
    repeat->held = 0;
    repeat->logged = now;
    return true;
}

//  Close the link to fenced daemon `index`: it dropped our task, or it
//  is the oldest of too many
static void
s_let_fenced_go (server_t *self, size_t index)
{
    assert (index < self->fenced_count);
    zsock_destroy (&self->fenced [index].link);
    memmove (&self->fenced [index], &self->fenced [index + 1],
             (self->fenced_count - index - 1) * sizeof (fenced_t));
    self->fenced_count--;
    self->items_dirty = true;
}

//  The daemon of `task` is no longer the task's: tell it to stop (it may
//  be frozen and read it later), keep its link to answer it with STOP
//  again if it speaks, and never lease it again for this job.
static void
s_fence (server_t *self, spawner_task_t *task, const char *reason)
{
    spawner_watch_destroy (&task->watch);
    if (task->link) {
        jace_msg_t *stop = s_job_msg (self, JACE_MSG_STOP, task);
        jace_msg_set_reason (stop, reason);
        s_send_job (self, &stop, task->link);
        if (self->fenced_count >= self->task_count + FENCED_EXTRA)
            s_let_fenced_go (self, 0);
        self->fenced = (fenced_t *) realloc (self->fenced,
            (self->fenced_count + 1) * sizeof (fenced_t));
        assert (self->fenced);
        fenced_t *fenced = &self->fenced [self->fenced_count++];
        fenced->link = task->link;
        snprintf (fenced->id, sizeof fenced->id, "%s", task->daemon.id);
        fenced->task = task - self->tasks;
        fenced->epoch = task->epoch;
        fenced->told = 0;       //  Not heard since
        task->link = NULL;
        self->items_dirty = true;
    }
    if (*task->daemon.id)
        spawner_lease_exclude (self->lease, task->daemon.id);
}

//  --------------------------------------------------------------------------
//  Placement

//  The table of every task's daemon, as ASSIGN and REMAP carry it.
static void
s_add_table (server_t *self, jace_msg_t *msg)
{
    for (size_t i = 0; i < self->task_count; i++)
        jace_msg_add_node (msg, &self->tasks [i].daemon);
}

static void
s_set_number (jace_msg_t *msg, const char *key, int64_t value)
{
    char text [32];
    snprintf (text, sizeof text, "%" PRId64, value);
    jace_msg_set_param (msg, key, text);
}

//  A task that takes its part of a rebalance's iterate from the old
//  owners: the snapshot they keep, the old cut, where the job goes on.
static void
s_set_handoff (server_t *self, size_t rank, jace_msg_t *assign)
{
    s_set_number (assign, "block/handoff_snapshot", self->rebalance_snapshot);
    s_set_number (assign, "block/handoff_iteration",
                  self->rebalance_iteration);
    char key [64];
    for (size_t i = 0; i <= self->task_count; i++) {
        snprintf (key, sizeof key, "block/handoff_first/%zu", i);
        s_set_number (assign, key, self->handoff_first [i]);
    }
    //  Only the owners asked after the first step are named
    for (size_t i = 0; self->handoff_step && i < self->task_count; i++) {
        size_t step = self->handoff_step [i * self->task_count + rank];
        snprintf (key, sizeof key, "block/handoff_step/%zu", i);
        if (step > 0)
            s_set_number (assign, key, (int64_t) step);
    }
}

//  True if task `rank`'s ASSIGN carries the iterate we hold: during a
//  rebalance, every task not gathering it from the old owners itself;
//  during a drain, the tasks it moved that have no copies anywhere.
static bool
s_takes_iterate (server_t *self, size_t rank)
{
    const spawner_task_t *task = &self->tasks [rank];
    return self->rebalance_x && !task->handoff
        && (self->rebalance != REBALANCE_NONE || task->drain_iterate);
}

//  The ASSIGN of task `rank`, declaring the blocks of `stream` (may be
//  NULL) that follow in CHUNKs.
static jace_msg_t *
s_assign_msg (server_t *self, size_t rank, spawner_stream_t *stream)
{
    spawner_task_t *task = &self->tasks [rank];
    jace_msg_t *assign = s_job_msg (self, JACE_MSG_ASSIGN, task);
    jace_msg_set_task (assign, (int64_t) rank);
    jace_msg_set_count (assign, (int64_t) self->task_count);
    jace_msg_set_app (assign, spawner_job_app (self->job)->name);
    zhash_t *params = spawner_job_params (self->job);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params))
        if (strncmp (zhash_cursor (params), "block/", 6) != 0)
            jace_msg_set_param (assign, zhash_cursor (params), value);
    s_set_number (assign, "block/rows", spawner_job_rows (self->job));
    s_set_number (assign, "block/unknowns_per_row",
                  spawner_job_unknowns_per_row (self->job));
    //  How long the job has run: a replacement's daemons bound how far
    //  ahead a neighbour's iteration may be by the time it had to get
    //  there (jace_task), from the start of the job, not of the task.
    s_set_number (assign, "job/elapsed_seconds",
                  (zclock_mono () - self->started) / 1000);
    char key [64];
    for (size_t i = 0; i <= self->task_count; i++) {
        snprintf (key, sizeof key, "block/first/%zu", i);
        s_set_number (assign, key, self->first_row [i]);
    }
    //  After a rebalance: copies of an older epoch are of the old rows,
    //  and while the new rows have no copies yet, the iterate comes with
    //  the ASSIGN (s_task_data).
    if (task->generation_epoch > 0)
        s_set_number (assign, "block/generation_epoch",
                      task->generation_epoch);
    if (self->rebalance_x && task->handoff)
        s_set_handoff (self, rank, assign);
    if (s_takes_iterate (self, rank))
        s_set_number (assign, "block/restore_iteration",
                      self->rebalance_iteration);
    if (s_takes_iterate (self, rank) && task->restore_reads >= 0)
        s_set_number (assign, "block/restore_reads", task->restore_reads);
    if (stream)
        spawner_stream_declare (stream, assign);
    s_add_table (self, assign);
    //  Not sealed when we hold a token: the daemon checks the lease token
    //  the super-node gave us for it, and learns the job key from this
    //  message.
    const char *token = spawner_lease_token (self->lease, task->daemon.id);
    jace_msg_set_token (assign, token);
    char job_key [JACE_KEY_TEXT + 1];
    jace_key_encode (&self->job_key, job_key);
    jace_msg_set_key (assign, job_key);
    //  A daemon adopted on resume runs our task, and the super-node gave
    //  this spawner no token for it: a new block of that task (a
    //  rebalance) is sealed with the job key instead, which the daemon
    //  holds.
    if (!*token)
        jace_msg_seal (assign, self->job_key.bytes);
    return assign;
}

//  A rebalance's iterate for task `rank`, into data: its rows and the
//  unknowns it reads of the others' when the application says which
//  (JACE_APP_ABI 2's `reads`), else every unknown.  Every task receiving
//  all of it made the spawner send tasks x unknowns x 8 bytes.
static void
s_add_iterate (server_t *self, size_t rank, jace_msg_t *data)
{
    spawner_task_t *task = &self->tasks [rank];
    const jace_app_t *app = spawner_job_app (self->job);
    int64_t *numbers = NULL;
    size_t count = 0;
    task->restore_reads = -1;
    if (app->reads
    &&  app->reads (spawner_job_problem (self->job), self->first_row,
                    (int64_t) self->task_count, (int64_t) rank, &numbers,
                    &count) == 0) {
        int64_t per_row = spawner_job_unknowns_per_row (self->job);
        int64_t first = self->first_row [rank] * per_row;
        int64_t mine = self->first_row [rank + 1] * per_row - first;
        double *values = (double *) malloc ((count + 1) * sizeof (double));
        assert (values);
        size_t kept = 0;
        for (size_t k = 0; k < count; k++)
            if (numbers [k] >= 0 && numbers [k] < self->rebalance_unknowns) {
                numbers [kept] = numbers [k];
                values [kept++] = self->rebalance_x [numbers [k]];
            }
        jace_msg_add_payload (data, JACE_PAYLOAD_F64,
                              self->rebalance_x + first, (size_t) mine);
        jace_msg_add_payload (data, JACE_PAYLOAD_I64, numbers, kept);
        jace_msg_add_payload (data, JACE_PAYLOAD_F64, values, kept);
        task->restore_reads = (int64_t) kept;
        self->rebalance_sent += mine + 2 * (int64_t) kept;
        free (values);
        free (numbers);
        return;
    }
    free (numbers);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, self->rebalance_x,
                          (size_t) self->rebalance_unknowns);
    self->rebalance_sent += self->rebalance_unknowns;
}

//  The data task `rank` needs and cannot build itself (its rows of a
//  file matrix), and during a rebalance the job's iterate last, ready to
//  stream; or NULL when it needs none.
static spawner_stream_t *
s_task_data (server_t *self, size_t rank)
{
    const jace_app_t *app = spawner_job_app (self->job);
    bool iterate = s_takes_iterate (self, rank);
    if (!app->attach && !iterate)
        return NULL;
    jace_msg_t *data = jace_msg_new (JACE_MSG_CHUNK);
    if (app->attach
    &&  app->attach (spawner_job_problem (self->job), self->first_row,
                     (int64_t) self->task_count, (int64_t) rank, data)) {
        s_fail (self, "cannot prepare the data of task %zu", rank);
        jace_msg_destroy (&data);
        return NULL;
    }
    if (iterate) {
        if (jace_msg_payload_count (data) + 3 > JACE_MSG_PAYLOADS_MAX) {
            s_fail (self, "cannot send task %zu the iterate of a rebalance: "
                    "its data fills every payload", rank);
            jace_msg_destroy (&data);
            return NULL;
        }
        s_add_iterate (self, rank, data);
    }
    return spawner_stream_new (&data);
}

//  True if every task whose data is on its way goes through the same
//  relay as task `rank`'s: the cluster's data goes in one run, and its
//  ASSIGN may leave now (s_stream_data sends its chunks in turn).
static bool
s_joins_relay_run (server_t *self, size_t rank)
{
    int64_t relay = self->tasks [rank].relay;
    if (relay < 0)
        return false;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].stream && self->tasks [i].relay != relay)
            return false;
    return true;
}

//  Send task `rank` its ASSIGN, and start streaming its data, if the
//  stream budget allows (else it waits for a later pass).  Returns true
//  when the ASSIGN left.
static bool
s_send_assign (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    if (self->stream_bytes >= STREAM_BUDGET)
        return false;           //  Others' data first; at least one flows
    if (self->scattering && self->stream_bytes > 0
    &&  !s_joins_relay_run (self, rank))
        return false;           //  The scatter's single port is busy
    if (self->scatter)
        spawner_scatter_started (self->scatter, zclock_mono ());
    spawner_stream_t *stream = s_task_data (self, rank);
    if (*self->failure)
        return false;
    jace_msg_t *assign = s_assign_msg (self, rank, stream);
    jace_msg_send (&assign, task->link);
    task->stream = stream;
    if (stream)
        self->stream_bytes += spawner_stream_total (stream);
    task->assigned_at = zclock_mono ();
    task->phase = stream ? SPAWNER_TASK_SENDING : SPAWNER_TASK_ASSIGNED;
    //  From now on the daemon reports to us: its silence counts.
    spawner_detector_reset (self->detector, rank, zclock_mono ());
    return true;
}

//  Largest frame a daemon of the job may send us: a RESULT of every
//  unknown of the job, or a header.
static int64_t
s_link_frame_max (server_t *self)
{
    int64_t unknowns = spawner_job_rows (self->job)
                     * spawner_job_unknowns_per_row (self->job);
    int64_t bytes = unknowns * (int64_t) sizeof (double);
    return bytes > JACE_MSG_HEADER_MAX ? bytes : JACE_MSG_HEADER_MAX;
}

//  Place task `rank` on daemon `node` with the task's next epoch.
static int
s_place (server_t *self, size_t rank, const jace_node_t *node)
{
    spawner_task_t *task = &self->tasks [rank];
    task->daemon = *node;
    task->daemon.task = (int64_t) rank;
    task->daemon.epoch = ++task->epoch;
    task->relay = -1;           //  s_place_all sets the first placements'
    task->data_open = false;
    task->handoff = false;      //  A new daemon keeps no block: our iterate
    task->state = -1;
    task->crash_sent = false;
    task->mass_silent = false;
    task->assigned_at = 0;
    task->usecs_per_iteration = 0;  //  Another daemon: its own rate
    task->rate_reports = 0;
    task->link = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (task->link, s_link_frame_max (self));
    zsock_set_rcvhwm (task->link, LINK_RCVHWM);
    self->items_dirty = true;
    //  Watched before it connects: a fast connection's CONNECTED event
    //  would come before the monitor, which would take the link for one
    //  not yet connected
    if (spawner_job_watch_links (self->job))
        task->watch = spawner_watch_new (task->link);
    if (jace_security_apply_client (self->security, task->link,
                                    task->daemon.pubkey)
    ||  zsock_connect (task->link, "%s", task->daemon.endpoint)) {
        zsys_warning ("spawner: cannot connect to daemon %s at '%s'",
                      task->daemon.id, task->daemon.endpoint);
        return -1;
    }
    //  Marked SENDING without an ASSIGN: s_stream_data sends it when the
    //  stream budget allows.
    task->phase = SPAWNER_TASK_SENDING;
    spawner_detector_reset (self->detector, rank, zclock_mono ());
    return 0;
}

//  Bytes of task data per row: the application attaches the rows of
//  `count` equal blocks, one block at a time (the spawner holds one
//  block's copy at most, as when it streams them).  0 when the tasks
//  build their data themselves.
static double
s_data_bytes_per_row (server_t *self, size_t count)
{
    const jace_app_t *app = spawner_job_app (self->job);
    if (!app->attach)
        return 0;
    int64_t rows = spawner_job_rows (self->job);
    int64_t *first = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    assert (first);
    for (size_t i = 0; i <= count; i++)
        first [i] = rows * (int64_t) i / (int64_t) count;
    double bytes = 0;
    for (size_t block = 0; block < count && bytes >= 0; block++) {
        jace_msg_t *data = jace_msg_new (JACE_MSG_CHUNK);
        if (app->attach (spawner_job_problem (self->job), first,
                         (int64_t) count, (int64_t) block, data))
            bytes = -1;
        for (size_t i = 0; bytes >= 0 && i < jace_msg_payload_count (data);
             i++)
            bytes += (double) jace_msg_payload_length (data, i)
                   * (jace_msg_payload_kind (data, i) == JACE_PAYLOAD_BYTES
                      ? 1 : 8);
        jace_msg_destroy (&data);
    }
    free (first);
    return bytes > 0 ? bytes / (double) rows : 0;
}

//  The blocks of the tasks on `nodes`: a scatter of the data when the
//  spawner holds it (spawner_scatter), else in proportion to power, or
//  the same to each with `scatter/distribution = uniform`.  Uniform is
//  the MAHEVE paper's setting (JaceP2P's tasks are equal blocks and the
//  mapping puts the heavy ones on the powerful nodes), and a way out
//  when a slow node's small block slows the method down: on the
//  NAS-CG-like matrix, a first block narrower than the band took
//  synchronous block Jacobi from 41 to 130 iterations (BENCHMARKS.md,
//  issue 13).
static void
s_partition (server_t *self, const jace_node_t *nodes, size_t count)
{
    double bytes_per_row = s_data_bytes_per_row (self, count);
    self->data_bytes_per_row = bytes_per_row > 0 ? bytes_per_row : 0;
    if (bytes_per_row > 0) {
        spawner_scatter_load_t load = {
            .rows = spawner_job_rows (self->job),
            .bytes_per_row = bytes_per_row,
            .flops_per_row = spawner_mapper_work (self->mapper)
                           / (double) spawner_job_rows (self->job)
        };
        spawner_live_t *live = spawner_mapper_live (self->mapper);
        char reason [256];
        self->scatter = spawner_scatter_new (spawner_job_scatter (self->job),
            &load, nodes, count, live ? spawner_live_platform (live) : NULL,
            self->first_row, reason, sizeof reason);
        if (self->scatter) {
            char *plan = spawner_scatter_plan_json (self->scatter);
            spawner_events_write (self->events, "scatter",
                                  ",\"bytes_per_row\":%.1f%s",
                                  bytes_per_row, plan);
            free (plan);
            self->scattering = true;
            return;
        }
        zsys_warning ("spawner: %s; rows in proportion to power", reason);
    }
    bool uniform = spawner_job_scatter (self->job)->distribution
                == SPAWNER_SCATTER_UNIFORM;
    double *power = (double *) zmalloc (count * sizeof (double));
    for (size_t rank = 0; rank < count; rank++)
        power [rank] = !uniform && nodes [rank].power > 0
                     ? nodes [rank].power : 1;
    spawner_job_partition (self->job, power, count, self->first_row);
    free (power);
}

//  Every daemon of the plan is leased: place each task on the daemon the
//  mapping chose for it, with its block of rows; the plan's other daemons
//  are the spares.
static void
s_place_all (server_t *self)
{
    size_t count = self->task_count;
    jace_node_t *nodes = (jace_node_t *) zmalloc (count
                                                  * sizeof (jace_node_t));
    for (size_t rank = 0; rank < count; rank++) {
        const jace_node_t *chosen = spawner_mapper_task_node (self->mapper,
                                                               rank);
        int index = spawner_lease_find_spare (self->lease, chosen->id);
        assert (index >= 0);    //  s_plan_leased checked them all
        spawner_lease_take (self->lease, (size_t) index, &nodes [rank]);
    }
    s_partition (self, nodes, count);
    for (size_t rank = 0; rank < count; rank++) {
        s_place (self, rank, &nodes [rank]);
        if (self->scatter)
            self->tasks [rank].relay = spawner_scatter_relay_of (self->scatter,
                                                                 rank);
        spawner_events_write (self->events, "assign", ",\"task\":%zu,"
            "\"daemon\":\"%s\",\"cluster\":\"%s\",\"power\":%.3f,"
            "\"rows\":%" PRId64, rank, nodes [rank].id, nodes [rank].cluster,
            nodes [rank].power,
            self->first_row [rank + 1] - self->first_row [rank]);
    }
    free (nodes);
}

//  --------------------------------------------------------------------------
//  Task data in chunks

//  ASSIGNs waiting for the stream budget, and chunks the windows allow.
//  A task whose data a relay passes on gets its chunks through the
//  relay's link once its daemon took the ASSIGN (a chunk must not pass
//  it), and after the tasks before it in the run have all theirs sent:
//  one stream at a time, as the scatter's model has it.
static void
s_stream_data (server_t *self)
{
    int64_t run_busy = -1;      //  Relay whose run waits on a stream
    for (size_t k = 0; k < self->task_count && !*self->failure; k++) {
        size_t i = self->scatter ? spawner_scatter_rank_at (self->scatter, k)
                                 : k;
        spawner_task_t *task = &self->tasks [i];
        if (task->phase != SPAWNER_TASK_SENDING)
            continue;
        if (!task->assigned_at && !s_send_assign (self, i))
            continue;
        if (!task->stream)
            continue;
        zsock_t *link = task->link;
        if (task->relay >= 0 && task->relay != (int64_t) i) {
            if (!task->data_open || run_busy == task->relay)
                continue;
            link = self->tasks [task->relay].link;
        }
        spawner_stream_send (task->stream, self->id, (int64_t) i,
                             task->epoch, self->job_key.bytes, link);
        if (task->relay >= 0 && !spawner_stream_sent_all (task->stream))
            run_busy = task->relay;
    }
}

//  Every byte of the task's data is in its daemon: free its share of the
//  stream budget (and the scatter's port).
static void
s_stream_done (server_t *self, spawner_task_t *task)
{
    self->stream_bytes -= spawner_stream_total (task->stream);
    spawner_stream_destroy (&task->stream);
    if (self->scatter
    &&  spawner_scatter_data_in (self->scatter, (size_t) (task - self->tasks),
                                 zclock_mono ())) {
        self->scattering = false;
        spawner_events_write (self->events, "scatter_data",
            ",\"measured_seconds\":%.3f,\"predicted_seconds\":%.3f",
            spawner_scatter_measured_transfer (self->scatter),
            spawner_scatter_predicted_transfer (self->scatter));
    }
}

static void
s_on_chunk_ack (server_t *self, spawner_task_t *task, jace_msg_t *msg)
{
    task->data_open = true;
    if (task->phase != SPAWNER_TASK_SENDING || !task->stream
    ||  !spawner_stream_ack (task->stream, jace_msg_received (msg)))
        return;
    s_stream_done (self, task);
    task->phase = SPAWNER_TASK_ASSIGNED;
}

//  --------------------------------------------------------------------------
//  Starting tasks

//  The tasks that ask task `rank` for values: its sinks.  NULL (count 0)
//  means every other task, when some task's sources are unknown.
static int64_t *
s_sinks_of (server_t *self, size_t rank, size_t *count, bool *known)
{
    int64_t *sinks = (int64_t *) zmalloc (self->task_count
                                          * sizeof (int64_t));
    *count = 0;
    *known = true;
    for (size_t i = 0; i < self->task_count; i++) {
        const spawner_task_t *task = &self->tasks [i];
        if (i == rank)
            continue;
        if (!task->sources_known)
            *known = false;
        for (size_t k = 0; k < task->source_count; k++)
            if (task->sources [k] == (int64_t) rank)
                sinks [(*count)++] = (int64_t) i;
    }
    return sinks;
}

static void
s_send_start (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    size_t count;
    bool known;
    int64_t *sinks = s_sinks_of (self, rank, &count, &known);
    jace_msg_t *start = s_job_msg (self, JACE_MSG_START, task);
    if (known)
        jace_msg_add_payload (start, JACE_PAYLOAD_I64, sinks, count);
    s_send_job (self, &start, task->link);
    free (sinks);
    task->phase = SPAWNER_TASK_RUNNING;
}

//  Tell task `to` where task `rank` runs now.
static void
s_send_remap (server_t *self, spawner_task_t *to, size_t rank)
{
    spawner_task_t *moved = &self->tasks [rank];
    jace_msg_t *remap = s_job_msg (self, JACE_MSG_REMAP, to);
    jace_msg_set_task (remap, (int64_t) rank);
    jace_msg_set_epoch (remap, moved->epoch);
    jace_msg_add_node (remap, &moved->daemon);
    s_send_job (self, &remap, to->link);
}

//  Tell every other task where task `rank` runs now.
static void
s_announce_move (server_t *self, size_t rank)
{
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_task_t *task = &self->tasks [i];
        if (i != rank && task->link && task->phase != SPAWNER_TASK_WAITING)
            s_send_remap (self, task, rank);
    }
}

//  Every task accepted: the job starts.  Tasks moved before the start
//  were named by their first daemon in the others' ASSIGNs.
static void
s_start_all (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].epoch > 1)
            s_announce_move (self, i);
    for (size_t i = 0; i < self->task_count; i++)
        s_send_start (self, i);
    self->state = JOB_RUNNING;
    char secret [1024];
    spawner_events_escape (secret, sizeof secret, self->secrets_dir);
    spawner_events_write (self->events, "start", ",\"tasks\":%zu,"
                          "\"status\":\"%s\",\"setup_seconds\":%.3f,"
                          "\"secret\":\"%s/%s.secret\"",
                          self->task_count, self->status_endpoint,
                          s_elapsed (self) / 1000.0, secret, self->id);
}

//  Tell task `rank` where every other moved task runs now.  Its ASSIGN
//  named the daemons of that moment, and a REMAP sent to it before its
//  daemon took the task (while its data streamed in) was dropped there:
//  several tasks replaced at once (a drain's step, crashes of one round)
//  would otherwise route their set-up exchange to dead daemons and wait
//  for ever.  A REMAP the task knows already is a no-op.
static void
s_tell_moves (server_t *self, size_t rank)
{
    for (size_t i = 0; i < self->task_count; i++) {
        const spawner_task_t *moved = &self->tasks [i];
        //  Only moves whose daemon has the task: one still taking its
        //  ASSIGN would drop what we send it, and its own start tells
        //  us again (s_announce_move), which we would ignore as known.
        if (i != rank && moved->epoch > 1
        &&  (moved->phase == SPAWNER_TASK_ACCEPTED
             || moved->phase == SPAWNER_TASK_RUNNING))
            s_send_remap (self, &self->tasks [rank], i);
    }
}

//  A replacement accepted its task while the job runs: tell it where the
//  others are, tell the others where it is, and let it go.
static void
s_start_replacement (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    s_tell_moves (self, rank);
    s_announce_move (self, rank);
    s_send_start (self, rank);
    spawner_events_write (self->events, "restart", ",\"task\":%zu,"
                          "\"daemon\":\"%s\",\"epoch\":%" PRId64, rank,
                          task->daemon.id, task->epoch);
}

//  --------------------------------------------------------------------------
//  Replacement

//  Task `rank`'s daemon relayed others' data and is given up: theirs goes
//  straight to them from now on, from the last byte they acknowledged
//  (what the relay still held may never arrive).
static void
s_lose_relay (server_t *self, size_t rank)
{
    size_t moved = 0;
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_task_t *task = &self->tasks [i];
        if (task->relay != (int64_t) rank)
            continue;
        task->relay = -1;
        if (i == rank || !task->stream)
            continue;
        spawner_stream_rewind (task->stream);
        moved++;
    }
    if (moved)
        spawner_events_write (self->events, "relay_lost", ",\"task\":%zu,"
                              "\"daemon\":\"%s\",\"streams\":%zu", rank,
                              self->tasks [rank].daemon.id, moved);
}

//  Take task `rank` off its daemon (fenced, never used again by the job)
//  and put it back in line for a daemon its mapping chooses; a running
//  one restarts from its neighbours' copies of its checkpoint.
static void
s_unplace (server_t *self, size_t rank, const char *why)
{
    spawner_task_t *task = &self->tasks [rank];
    if (*task->daemon.id && self->dead)
        zlist_append (self->dead, task->daemon.id);
    *task->wanted = 0;
    task->tried_listing = 0;
    s_fence (self, task, why);
    if (task->stream) {
        self->stream_bytes -= spawner_stream_total (task->stream);
        spawner_stream_destroy (&task->stream);
    }
    s_lose_relay (self, rank);
    bool was_running = task->phase == SPAWNER_TASK_RUNNING;
    task->phase = SPAWNER_TASK_WAITING;
    task->restoring = was_running || task->restoring;
    task->assigned_at = zclock_mono ();     //  Waiting since
    //  Its block, if it came, is as good as the others': a crash while
    //  the last RESULTs were on their way cost the job the snapshot
    if (!spawner_verify_has_block (self->verify, rank))
        spawner_verify_abandon (self->verify);
}

//  Assign task `rank` again on the daemon it runs on, with a new epoch.
static void
s_assign_again (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    //  Relays serve the first placement only: a relay's table names the
    //  epochs of then, and a new ASSIGN must be taken before its data
    s_lose_relay (self, rank);
    task->relay = -1;
    task->data_open = false;
    task->daemon.epoch = ++task->epoch;
    task->phase = SPAWNER_TASK_SENDING;
    task->assigned_at = 0;
    task->restoring = true;
    task->state = -1;
    task->usecs_per_iteration = 0;
    task->rate_reports = 0;
    spawner_detector_reset (self->detector, rank, zclock_mono ());
}

//  A task gathering a rebalance's iterate from the old owners cannot get
//  it all (one of them died, or it gave up waiting): assign it again on
//  its daemon with the iterate we gathered.
static void
s_handoff_fall_back (server_t *self, size_t rank, const char *why)
{
    spawner_task_t *task = &self->tasks [rank];
    task->handoff = false;
    s_assign_again (self, rank);
    char escaped [512];
    spawner_events_escape (escaped, sizeof escaped, why);
    spawner_events_write (self->events, "rebalance_fallback", ",\"task\":"
                          "%zu,\"reason\":\"%s\"", rank, escaped);
    zsys_notice ("spawner: task %zu takes the rebalance's iterate from us: "
                 "%s", rank, why);
}

//  Give task `rank`'s daemon up, recording it as `event` ("dead", or
//  "unadopted" for a daemon a resume could not take its task back from,
//  alive or not), and find the task another.
static void
s_give_up_daemon (server_t *self, size_t rank, const char *event,
                  int64_t silent, const char *why)
{
    spawner_task_t *task = &self->tasks [rank];
    zsys_notice ("spawner: daemon %s (task %zu, cluster %s) %s: replacing "
                 "it", task->daemon.id, rank, task->daemon.cluster, why);
    char reason [2 * sizeof task->lost];
    snprintf (task->lost, sizeof task->lost, "%s", why);
    spawner_events_escape (reason, sizeof reason, why);
    spawner_events_write (self->events, event, ",\"task\":%zu,"
                          "\"daemon\":\"%s\",\"silent_ms\":%" PRId64
                          ",\"reason\":\"%s\"", rank, task->daemon.id, silent,
                          reason);
    s_unplace (self, rank, "fenced: your task runs elsewhere now");
    //  Its daemon held a block of the old cut that others may be waiting
    //  for: whoever still gathers takes the iterate from us instead.
    if (self->rebalance != REBALANCE_ASSIGNING)
        return;
    char fallback [128];
    snprintf (fallback, sizeof fallback, "the daemon of task %zu, an old "
              "owner, was lost", rank);
    for (size_t i = 0; i < self->task_count; i++)
        if (i != rank && self->tasks [i].handoff
        &&  self->tasks [i].phase != SPAWNER_TASK_ACCEPTED)
            s_handoff_fall_back (self, i, fallback);
}

//  The daemon of task `rank` is lost (suspected, refused, vanished):
//  fence it and put the task back in line for a daemon.  `silent` is the
//  silence that condemned it, or -1.
static void
s_lose_daemon (server_t *self, size_t rank, int64_t silent, const char *why)
{
    s_give_up_daemon (self, rank, "dead", silent, why);
}

//  Task `rank` runs on `node` now, in place of its lost daemon.
static void
s_place_replacement (server_t *self, size_t rank, const jace_node_t *node)
{
    spawner_task_t *task = &self->tasks [rank];
    //  The clock now, not a pass's start: a loss found later in the same
    //  pass (a long one, under load) gave 0.000 for 0.2 s waited
    int64_t waited = zclock_mono () - task->assigned_at;
    *task->lost = 0;            //  Its next loss says its own reason
    s_place (self, rank, node);
    self->replacements++;
    self->rebalanced_here = false;  //  A new node: its speed is news
    self->auto_drift = 0;
    self->auto_backoff = 0;
    char why [256];
    spawner_events_escape (why, sizeof why, task->why);
    spawner_events_write (self->events, "replace", ",\"task\":%zu,"
        "\"daemon\":\"%s\",\"cluster\":\"%s\",\"epoch\":%" PRId64
        ",\"seconds\":%.3f,\"mapping\":\"%s\",\"reason\":\"%s\"", rank,
        node->id, node->cluster, task->epoch, waited / 1000.0,
        spawner_job_mapping (self->job), why);
    *task->wanted = 0;
}

//  The simple mapping with job/replacement = any: a spare the policy
//  picks, else one more daemon leased, preferring the policy's cluster.
static bool
s_replace_by_policy (server_t *self, size_t rank)
{
    const spawner_replacement_t *policy = spawner_job_replacement (self->job);
    spawner_task_t *task = &self->tasks [rank];
    size_t count = spawner_lease_spare_count (self->lease);
    jace_node_t *spares = (jace_node_t *) zmalloc ((count + 1)
                                                   * sizeof (jace_node_t));
    for (size_t i = 0; i < count; i++)
        spares [i] = *spawner_lease_spare (self->lease, i);
    int chosen = policy->pick_spare (&task->daemon, spares, count);
    free (spares);
    if (chosen < 0 || (size_t) chosen >= count)
        return false;
    jace_node_t node;
    spawner_lease_take (self->lease, (size_t) chosen, &node);
    snprintf (task->why, sizeof task->why, "job/replacement = %s",
              policy->name);
    s_place_replacement (self, rank, &node);
    return true;
}

//  Ids a replacement must not take: refused by the super-node, or asked
//  for another waiting task.  The caller destroys the list.
static zlist_t *
s_unavailable (server_t *self)
{
    zlist_t *ids = zlist_dup (self->refused);
    zlist_autofree (ids);
    for (size_t i = 0; i < self->task_count; i++)
        if (*self->tasks [i].wanted)
            zlist_append (ids, self->tasks [i].wanted);
    return ids;
}

//  A task that has found no daemon off the clusters drained before for
//  half its job/reserve_timeout may go back to them: their daemons still
//  run, and a job failed for want of daemons loses all the drain kept.
//  A drain under way gives way at once, on the first listing taken since
//  the task lost its daemon (`fresh`): a drain short of room leaves its
//  tasks running where they are, but this one runs nowhere, and the job
//  with it.  A spare a drain moved a task to, since leased to another
//  job, left the task without a daemon for 47 s while its old one sat
//  free on the drained cluster.
static void
s_readmit_drained (server_t *self, size_t rank, bool fresh, int64_t now)
{
    char names [256];
    spawner_mapper_excluded_names (self->mapper, names, sizeof names);
    double limit = spawner_job_reserve_timeout (self->job);
    bool waited = now - self->tasks [rank].assigned_at
               >= (int64_t) (limit * 500);
    if (!*names || !(waited || (*self->draining && fresh)))
        return;
    char how [64];
    if (waited)
        snprintf (how, sizeof how, "in %.0f s", limit / 2);
    else
        snprintf (how, sizeof how, "on the grid as it is since it lost "
                  "its own");
    if (*self->draining) {
        char why [128];
        snprintf (why, sizeof why, "task %zu found no daemon off it %s",
                  rank, how);
        s_stop_drain (self, why);
    }
    zsys_warning ("spawner: task %zu found no daemon off drained %s %s: "
                  "their daemons may take tasks again, rather than the job "
                  "fail", rank, names, how);
    spawner_events_write (self->events, "drain_undone", ",\"task\":%zu,"
                          "\"clusters\":\"%s\"", rank, names);
    spawner_mapper_readmit_all (self->mapper);
    self->tasks [rank].tried_listing = 0;       //  Choose again at once
}

//  The mapping's replacement: the daemon its policy chooses on the grid
//  as it is now; a spare we hold is taken at once, another daemon is
//  reserved by id (and chosen again if someone took it meanwhile).
//  Returns true once the task is placed.
//  Stop asking for the replacements asked for STALE_LISTING_MSEC ago or
//  more: those tasks choose again (wants made since are left alone).
static void
s_drop_wants (server_t *self, int64_t now)
{
    for (size_t rank = 0; rank < self->task_count; rank++) {
        spawner_task_t *task = &self->tasks [rank];
        if (*task->wanted && now - task->wanted_at >= STALE_LISTING_MSEC) {
            spawner_lease_forget_id (self->lease, task->wanted);
            *task->wanted = 0;
            task->tried_listing = 0;
            task->ungranted_at = now;
        }
    }
}

static bool
s_replace_by_mapping (server_t *self, size_t rank, int64_t now)
{
    spawner_task_t *task = &self->tasks [rank];
    if (*task->wanted) {
        int index = spawner_lease_find_spare (self->lease, task->wanted);
        if (index >= 0) {
            jace_node_t node;
            spawner_lease_take (self->lease, (size_t) index, &node);
            s_place_replacement (self, rank, &node);
            return true;
        }
        //  A grant comes in milliseconds: none for STALE_LISTING_MSEC,
        //  the super-node asked may be gone, and the job's spares need
        //  none.  A grant that comes later is given back.
        if (now - task->wanted_at < STALE_LISTING_MSEC)
            return false;       //  Still asked for
        zsys_warning ("spawner: daemon %s, asked for task %zu, not granted "
                      "in %d ms: choosing again", task->wanted, rank,
                      STALE_LISTING_MSEC);
        s_drop_wants (self, now);
    }
    //  Chosen on the grid as it is since the daemon was lost, and once per
    //  listing: a choice that failed waits for the grid to change.  When
    //  no listing comes (no super-node answers), on the last one after
    //  STALE_LISTING_MSEC, among the spares we hold: they need no
    //  super-node, and waiting for one failed a job whose spare of the
    //  dead daemon's cluster was alive.  A listing taken before a daemon
    //  we asked for went ungranted is stale too.
    int64_t listed = spawner_mapper_listing_time (self->mapper);
    bool fresh = listed >= task->assigned_at && listed > task->ungranted_at;
    if (listed == 0 || listed == task->tried_listing
    ||  (!fresh && now - task->assigned_at < STALE_LISTING_MSEC))
        return false;
    task->tried_listing = listed;
    zlist_t *unavailable = s_unavailable (self);
    jace_node_t chosen;
    char why [192];
    int rc = spawner_mapper_replace (self->mapper, self->lease, self->tasks,
                                     self->task_count, rank, self->dead,
                                     unavailable, fresh, &chosen, why,
                                     sizeof why);
    zlist_destroy (&unavailable);
    if (rc) {
        if (!streq (why, task->why)) {
            zsys_notice ("spawner: no daemon for task %zu yet: %s", rank,
                         why);
            snprintf (task->why, sizeof task->why, "%s", why);
        }
        s_readmit_drained (self, rank, fresh, now);
        return false;
    }
    snprintf (task->why, sizeof task->why, "%s", why);
    int index = spawner_lease_find_spare (self->lease, chosen.id);
    if (index >= 0) {
        jace_node_t node;
        spawner_lease_take (self->lease, (size_t) index, &node);
        s_place_replacement (self, rank, &node);
        return true;
    }
    snprintf (task->wanted, sizeof task->wanted, "%s", chosen.id);
    task->wanted_at = now;
    spawner_lease_want_ids (self->lease, &chosen, 1);
    return false;
}

//  Give every waiting task the daemon its mapping chooses; fail the job
//  when one waits longer than job/reserve_timeout.
static void
s_place_waiting (server_t *self, int64_t now)
{
    //  simple's same-cluster policy is its mapping's replacement, chosen
    //  on the live grid.  By the policy alone, with no spare left, the
    //  lease took whatever daemon the super-node granted: a node of power
    //  0.01 while one of power 100 was free.  `any` is JaceP2P-V2's
    //  blind policy, kept as it is.
    bool simple = streq (spawner_job_mapping (self->job), "simple")
               && !streq (spawner_job_replacement (self->job)->name,
                          "same-cluster");
    size_t waiting = 0;
    for (size_t rank = 0; rank < self->task_count && !*self->failure;
         rank++) {
        spawner_task_t *task = &self->tasks [rank];
        if (task->phase != SPAWNER_TASK_WAITING)
            continue;
        if (simple ? s_replace_by_policy (self, rank)
                   : s_replace_by_mapping (self, rank, now))
            continue;
        waiting++;
        double limit = spawner_job_reserve_timeout (self->job);
        if (now - task->assigned_at > (int64_t) (limit * 1000))
            s_fail (self, "daemon %s of task %zu was lost (%s) and no "
                    "free daemon took its place within %.0f s%s%s",
                    task->daemon.id, rank, *task->lost ? task->lost
                    : "dead", limit, *task->why ? ": " : "", task->why);
        else
        if (simple && spawner_lease_spare_count (self->lease) == 0
        &&  waiting > spawner_lease_wanted (self->lease))
            spawner_lease_want (self->lease, 1, spawner_job_replacement (
                self->job)->lease_cluster (&task->daemon));
    }
}

//  Tasks whose daemon has been silent past its bound.  Before the daemon
//  has its ASSIGN it cannot know whom to report to: it is not judged.
//  When more than half the judged daemons (two at least) fall silent at
//  once, the likelier cause is a stall of the whole machine or network
//  (memory pressure, a saturated host), not that many independent
//  crashes: they are given MASS_SILENCE_FACTOR times their bound before
//  they are declared dead, so a job survives a machine that froze for a
//  few seconds, and a real mass failure is still handled, later.  "At
//  once" counts the daemons silent for half their bound: the silences of
//  one stall differ by milliseconds, and counting only those past the
//  whole bound let each check see a few, lose them, and judge the rest
//  against fewer.  A daemon keeps the longer bound until it is heard
//  again: when a stall ends, the first daemons to speak would otherwise
//  end the mass silence for the others, whose messages are on the way.
#define MASS_SILENCE_FACTOR 3

//  How long task `rank`'s daemon has been silent.  A message waiting
//  unread in its link means it spoke: a spawner slower than its daemons
//  (128 of them under a sanitizer on two cores) reads each socket seconds
//  late, and judged by the messages it had read, it declared 62 live
//  daemons dead at once.
static int64_t
s_silence (server_t *self, size_t rank, int64_t now)
{
    zsock_t *link = self->tasks [rank].link;
    if (link && (zsock_events (link) & ZMQ_POLLIN))
        return 0;
    return spawner_detector_silence (self->detector, rank, now);
}

static void
s_check_liveness (server_t *self, int64_t now)
{
    //  The work of this pass so far (a verification of a large system
    //  takes a second) was deaf time: the daemons' messages wait unread
    //  in the sockets.  Left uncounted, 11 of 16 healthy daemons of a
    //  6.4-million-row job were declared dead right after one, a few at
    //  each check, so that none of the checks saw a mass silence.
    spawner_detector_tick (self->detector, now, 0);
    size_t judged = 0, quiet = 0;
    for (size_t rank = 0; rank < self->task_count; rank++) {
        spawner_task_t *task = &self->tasks [rank];
        if (task->phase == SPAWNER_TASK_WAITING || !task->assigned_at)
            continue;
        judged++;
        quiet += 2 * s_silence (self, rank, now)
               > spawner_detector_bound (self->detector, rank);
    }
    bool mass = quiet >= 2 && 2 * quiet > judged
             && spawner_job_adaptive_detector (self->job);
    if (mass && !self->mass_silence)
        zsys_warning ("spawner: %zu of %zu daemons silent at once: a stall "
                      "of the machine or network?  waiting %d times longer "
                      "before declaring them dead", quiet, judged,
                      MASS_SILENCE_FACTOR);
    self->mass_silence = mass;
    for (size_t rank = 0; rank < self->task_count && !*self->failure;
         rank++) {
        spawner_task_t *task = &self->tasks [rank];
        if (task->phase == SPAWNER_TASK_WAITING || !task->assigned_at)
            continue;
        int64_t silent = s_silence (self, rank, now);
        int64_t bound = spawner_detector_bound (self->detector, rank);
        if (2 * silent <= bound)
            task->mass_silent = false;      //  Heard again
        else
        if (mass)
            task->mass_silent = true;
        if (silent <= (task->mass_silent ? MASS_SILENCE_FACTOR * bound
                                         : bound))
            continue;
        char why [128];
        snprintf (why, sizeof why, "silent for %" PRId64 " ms (bound %"
                  PRId64 " ms%s)", silent, bound, task->mass_silent
                  ? ", mass silence" : "");
        task->mass_silent = false;
        s_lose_daemon (self, rank, silent, why);
    }
}

//  --------------------------------------------------------------------------
//  Messages from daemons

static void
s_on_accept (server_t *self, size_t rank, jace_msg_t *msg)
{
    spawner_task_t *task = &self->tasks [rank];
    if (task->phase != SPAWNER_TASK_ASSIGNED
    &&  task->phase != SPAWNER_TASK_SENDING)
        return;
    //  Set up, so its data is in, whether or not its last CHUNK_ACK
    //  came first.
    if (task->stream)
        s_stream_done (self, task);
    free (task->sources);
    task->sources = NULL;
    task->source_count = 0;
    if (jace_msg_payload_count (msg) == 1
    &&  jace_msg_payload_kind (msg, 0) == JACE_PAYLOAD_I64) {
        size_t count = jace_msg_payload_length (msg, 0);
        int64_t *sources = (int64_t *) zmalloc ((count + 1)
                                                * sizeof (int64_t));
        jace_msg_payload_copy (msg, 0, sources);
        for (size_t i = 0; i < count; i++)
            if (sources [i] >= 0 && sources [i] < (int64_t) self->task_count
            &&  sources [i] != (int64_t) rank)
                sources [task->source_count++] = sources [i];
        task->sources = sources;
        task->sources_known = true;
    }
    task->refusals = 0;
    task->phase = SPAWNER_TASK_ACCEPTED;
    //  A rebalance starts its tasks together, once all accepted.
    if (self->state != JOB_LEASING && self->state != JOB_ASSIGNING
    &&  self->rebalance != REBALANCE_ASSIGNING)
        s_start_replacement (self, rank);
}

static void
s_on_refuse (server_t *self, size_t rank, jace_msg_t *msg)
{
    spawner_task_t *task = &self->tasks [rank];
    int64_t code = jace_msg_code (msg);
    if (code != JACE_REFUSE_BUSY && code != JACE_REFUSE_LEASED) {
        s_fail (self, "daemon %s refused task %zu: %s", task->daemon.id,
                rank, jace_msg_reason (msg));
        return;
    }
    if (task->handoff && self->rebalance == REBALANCE_ASSIGNING
    &&  task->phase != SPAWNER_TASK_ACCEPTED) {
        s_handoff_fall_back (self, rank, jace_msg_reason (msg));
        return;
    }
    //  A spare our lease lapsed on, since leased to another job: the
    //  others of ours may be too, and are tried in turn, however many.
    if (code != JACE_REFUSE_LEASED && ++task->refusals >= REFUSALS_MAX) {
        s_fail (self, "%d daemons in a row refused task %zu, the last "
                "one (%s): %s", REFUSALS_MAX, rank, task->daemon.id,
                jace_msg_reason (msg));
        return;
    }
    char why [256];
    snprintf (why, sizeof why, "refused its task (%s)",
              jace_msg_reason (msg));
    char id [JACE_ID_MAX];
    snprintf (id, sizeof id, "%s", task->daemon.id);
    s_lose_daemon (self, rank, -1, why);
    //  Not dead, and not ours: free again once its job ends, it may
    //  take this task then
    if (code == JACE_REFUSE_LEASED) {
        zlist_remove (self->dead, id);
        spawner_lease_drop (self->lease, id);
    }
}

static void
s_on_progress (server_t *self, spawner_task_t *task, jace_msg_t *msg)
{
    task->iteration = jace_msg_iteration (msg);
    task->change = jace_msg_value (msg);
    task->state = jace_msg_state (msg);
    task->held_bytes = jace_msg_count (msg);
    if (jace_msg_exchanges (msg) > 0)
        self->total_exchanges = true;
    double usecs = (double) jace_msg_interval (msg);
    if (usecs > 0) {
        task->usecs_per_iteration = task->usecs_per_iteration > 0
            ? (1 - RATE_SMOOTHING) * task->usecs_per_iteration
              + RATE_SMOOTHING * usecs
            : usecs;
        task->rate_reports++;
    }
    if (self->scatter
    &&  spawner_scatter_progress (self->scatter, (size_t) (task - self->tasks),
                                  task->iteration, zclock_mono ()))
        spawner_events_write (self->events, "scatter_makespan",
            ",\"measured_seconds\":%.3f,\"predicted_seconds\":%.3f",
            spawner_scatter_measured (self->scatter),
            spawner_scatter_predicted (self->scatter));
}

//  A replacement restarted: from a neighbour's copy, or from scratch.
static void
s_on_restored (server_t *self, size_t rank, jace_msg_t *msg)
{
    spawner_task_t *task = &self->tasks [rank];
    int64_t holder = jace_msg_count (msg);
    if (!task->restoring)
        return;
    task->restoring = false;
    task->iteration = jace_msg_iteration (msg);
    spawner_verify_disturbed (self->verify, zclock_mono ());
    //  An iterate during a drain is the drain's (a rebalance waits)
    bool drained = holder == JACE_RESTORED_FROM_ASSIGN && task->drain_iterate
                && self->rebalance == REBALANCE_NONE;
    if (holder >= 0)
        self->from_checkpoint++;
    else
    if (drained)
        self->from_drain++;
    else
    if (holder == JACE_RESTORED_FROM_ASSIGN)
        self->from_rebalance++;
    else {
        self->from_initial++;
        zsys_notice ("spawner: task %zu restarts from its initial state: "
                     "no copy of its checkpoints survived", rank);
    }
    spawner_events_write (self->events, "restored", ",\"task\":%zu,"
        "\"daemon\":\"%s\",\"epoch\":%" PRId64 ",\"from\":\"%s\","
        "\"iteration\":%" PRId64 ",\"holder\":%" PRId64 ",\"fetch_ms\":%.1f",
        rank, task->daemon.id, task->epoch,
        holder >= 0 ? "checkpoint" : drained ? "drain"
        : holder == JACE_RESTORED_FROM_ASSIGN ? "rebalance" : "initial",
        jace_msg_iteration (msg),
        holder, jace_msg_value (msg) * 1000);
}

//  A CHUNK_ACK that task `relay`'s daemon passes back from a daemon it
//  relays to: it counts if it names that task's current daemon and epoch.
static void
s_on_relayed_ack (server_t *self, size_t relay, jace_msg_t *msg)
{
    int64_t rank = jace_msg_task (msg);
    if (rank < 0 || rank >= (int64_t) self->task_count
    ||  self->tasks [rank].relay != (int64_t) relay
    ||  jace_msg_epoch (msg) != self->tasks [rank].epoch
    ||  !streq (jace_msg_sender (msg), self->tasks [rank].daemon.id)) {
        self->malformed++;
        return;
    }
    self->tasks [rank].heard_at = zclock_mono ();
    spawner_detector_heard (self->detector, (size_t) rank,
                            self->tasks [rank].heard_at);
    s_on_chunk_ack (self, &self->tasks [rank], msg);
}

static void
s_on_task_message (server_t *self, size_t rank, jace_msg_t *msg)
{
    spawner_task_t *task = &self->tasks [rank];
    if (jace_msg_type (msg) == JACE_MSG_CHUNK_ACK
    &&  jace_msg_task (msg) != (int64_t) rank) {
        s_on_relayed_ack (self, rank, msg);
        return;
    }
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
        uint64_t held;
        if (s_repeat_due (&self->strangers, &held))
            zsys_warning ("spawner: %s answers on the link to %s (task %zu),"
                          " ignored (%" PRIu64 " such messages not logged "
                          "in the last %d s)", jace_msg_sender (msg),
                          task->daemon.id, rank, held,
                          REPEAT_LOG_MSEC / 1000);
        return;
    }
    task->heard_at = zclock_mono ();
    spawner_detector_heard (self->detector, rank, task->heard_at);
    switch (jace_msg_type (msg)) {
        case JACE_MSG_CHUNK_ACK: s_on_chunk_ack (self, task, msg); break;
        case JACE_MSG_ACCEPT:    s_on_accept (self, rank, msg); break;
        case JACE_MSG_REFUSE:    s_on_refuse (self, rank, msg); break;
        case JACE_MSG_PROGRESS:  s_on_progress (self, task, msg); break;
        case JACE_MSG_RESTORED:  s_on_restored (self, rank, msg); break;
        case JACE_MSG_RESULT:
            if (spawner_verify_on_result (self->verify, rank, msg))
                self->malformed++;
            break;
        default:
            break;              //  HEARTBEAT: being heard is all it says
    }
}

static void
s_recv_task (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (task->link, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        self->malformed++;
        uint64_t held;
        if (s_repeat_due (&self->garbled, &held))
            zsys_warning ("spawner: malformed message from daemon %s: %s "
                          "(%" PRIu64 " malformed messages not logged in the "
                          "last %d s)", task->daemon.id, reason, held,
                          REPEAT_LOG_MSEC / 1000);
        return;
    }
    //  What is not sealed with the job key did not come from the daemon
    //  we gave it to: dropped before it can move the job.
    if (streq (jace_msg_job (msg), self->id)
    &&  spawner_secret_check (self->security, msg, &self->job_key,
                              "spawner"))
        s_on_task_message (self, rank, msg);
    jace_msg_destroy (&msg);
}

//  A daemon we fenced speaks.  If it says it dropped our task (its answer
//  to our STOP), it is one of our spares again: it holds none of our
//  tasks, so placing one there is safe, and the job does not lose a
//  daemon to every false suspicion.  Otherwise (it was only slow, or had
//  not read our STOP yet) we tell it again, and log it, at once and then
//  at most once a second (a frozen daemon that wakes up has a backlog of
//  reports, each of which would ask for a STOP).
static void
s_recv_fenced (server_t *self, size_t index)
{
    fenced_t *fenced = &self->fenced [index];
    zsock_t *link = fenced->link;
    jace_msg_t *msg = jace_msg_recv (link, NULL, 0, NULL, 0);
    if (!msg)
        return;
    if (streq (jace_msg_job (msg), self->id)
    &&  !spawner_secret_check (self->security, msg, &self->job_key,
                               "spawner")) {
        jace_msg_destroy (&msg);
        return;                 //  Neither a readmission nor worth a STOP
    }
    bool ours = streq (jace_msg_job (msg), self->id)
             && streq (jace_msg_sender (msg), fenced->id);
    if (ours && jace_msg_type (msg) == JACE_MSG_HEARTBEAT
    &&  jace_msg_state (msg) != JACE_NODE_WORKING) {
        //  Alive and free, in its own sealed word: no longer dead to the
        //  mapping, and a spare again if the lease holds it, else one
        //  the grid may grant us again (a resumed spawner holds none).
        if (!spawner_lease_readmit (self->lease, fenced->id))
            spawner_lease_forget (self->lease, fenced->id);
        if (self->dead)
            zlist_remove (self->dead, fenced->id);
        if (spawner_lease_is_held (self->lease, fenced->id))
            spawner_events_write (self->events, "fenced", ",\"daemon\":"
                                  "\"%s\",\"stopped\":true",
                                  fenced->id);
        jace_msg_destroy (&msg);
        s_let_fenced_go (self, index);      //  Nothing left to tell it
        return;
    }
    int64_t now = zclock_mono ();
    if (fenced->told == 0
    ||  now - fenced->told >= 1000) {
        fenced->told = now;
        jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
        jace_msg_set_sender (stop, self->id);
        jace_msg_set_job (stop, self->id);
        jace_msg_set_reason (stop, "fenced: your task runs elsewhere now");
        s_send_job (self, &stop, link);
        //  The task and epoch it was fenced from: its message may carry
        //  neither (a HEARTBEAT named task 0 of epoch 0)
        spawner_events_write (self->events, "fenced", ",\"task\":%" PRId64
                              ",\"epoch\":%" PRId64 ",\"daemon\":\"%s\"",
                              fenced->task, fenced->epoch, fenced->id);
    }
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  The status endpoint: STATUS and CANCEL

//  Tasks of the job whose daemon is in `cluster`
static size_t
s_tasks_in (server_t *self, const char *cluster)
{
    size_t count = 0;
    for (size_t i = 0; i < self->task_count; i++)
        count += streq (self->tasks [i].daemon.cluster, cluster);
    return count;
}

//  Where the job stands, as STATUS_REPLY answers `request`.
static jace_msg_t *
s_status_msg (server_t *self, jace_msg_t *request)
{
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, self->id);
    for (size_t i = 0; i < self->task_count; i++) {
        jace_node_t node = self->tasks [i].daemon;
        node.task = (int64_t) i;
        node.state = self->tasks [i].state;
        jace_msg_add_node (reply, &node);
        //  What the live table shows, for `jace-spawner status`: one
        //  param per task, as many as the params map holds beside ours:
        //  "ITERATION CHANGE ROWS STATE"
        if (i + 16 < JACE_PARAMS_MAX) {
            char key [64], text [128];
            snprintf (key, sizeof key, "task/%zu", i);
            snprintf (text, sizeof text, "%" PRId64 " %.6e %" PRId64 " %s",
                      self->tasks [i].iteration, self->tasks [i].change,
                      self->first_row [i + 1] - self->first_row [i],
                      spawner_console_state_name (&self->tasks [i]));
            jace_msg_set_param (reply, key, text);
        }
    }
    jace_msg_set_param (reply, "job", self->id);
    jace_msg_set_param (reply, "state", *self->failure && self->state
                        < JOB_FINISHING ? "failing"
                        : s_state_names [self->state]);
    s_set_number (reply, "tasks", (int64_t) self->task_count);
    s_set_number (reply, "age_ms", s_elapsed (self));
    s_set_number (reply, "snapshots", spawner_verify_count (self->verify));
    char residual [32];
    snprintf (residual, sizeof residual, "%.6e",
              spawner_verify_residual (self->verify));
    jace_msg_set_param (reply, "residual", residual);
    //  A drain under way, for `status`: which cluster, how far, and why it
    //  waits when it does
    if (*self->draining) {
        jace_msg_set_param (reply, "drain/cluster", self->draining);
        s_set_number (reply, "drain/moved", (int64_t) self->drain_moved);
        s_set_number (reply, "drain/left",
                      (int64_t) s_tasks_in (self, self->draining));
        char waiting [256];
        if (*self->drain_waiting)
            jace_msg_set_param (reply, "drain/waiting", self->drain_waiting);
        else
        if (self->drain_ran)
            jace_msg_set_param (reply, "drain/waiting", "every task to "
                                "checkpoint where it runs now");
        else
        if (self->drain_unsettled >= 0) {
            size_t rank = (size_t) self->drain_unsettled;
            snprintf (waiting, sizeof waiting, "task %zu (daemon %s) to "
                      "checkpoint where it runs now, before the next step",
                      rank, self->tasks [rank].daemon.id);
            jace_msg_set_param (reply, "drain/waiting", waiting);
        }
    }
    //  A job that cannot be placed yet says why it waits
    if (self->state == JOB_LEASING && *self->plan_failure)
        jace_msg_set_param (reply, "unplaced", self->plan_failure);
    s_set_number (reply, "audit/unauthorised", (int64_t)
                  jace_security_unauthorised_count (self->security));
    s_set_number (reply, "audit/refused_connections", (int64_t)
                  jace_security_refused_count (self->security));
    jace_msg_set_routing_id (reply, jace_msg_routing_id (request));
    return reply;
}

static void
s_status_reply (server_t *self, jace_msg_t *request)
{
    jace_msg_t *reply = s_status_msg (self, request);
    jace_msg_send (&reply, self->status);
}

//  A request refused is answered with an ERROR, so an honest client (the
//  wrong secret, a request that cannot be met) hears why.
static void
s_refuse_request (server_t *self, jace_msg_t *request, const char *format,
                  ...)
{
    char reason [512];
    va_list args;
    va_start (args, format);
    vsnprintf (reason, sizeof reason, format, args);
    va_end (args);
    jace_msg_t *error = jace_msg_new (JACE_MSG_ERROR);
    jace_msg_set_sender (error, self->id);
    jace_msg_set_reason (error, reason);
    jace_msg_set_routing_id (error, jace_msg_routing_id (request));
    jace_msg_send (&error, self->status);
}

//  Why a request that needs a running job is refused now: the job's
//  state, and before it runs how far its start is, so that the user of a
//  long start (a large file's scatter) knows to wait, not that something
//  is wrong.
static void
s_not_running_why (server_t *self, const char *request, char *why,
                   size_t size)
{
    if (self->state >= JOB_RUNNING || *self->failure) {
        snprintf (why, size, "%s refused: job %s is %s, not running",
                  request, self->id, *self->failure && self->state
                  < JOB_FINISHING ? "failing" : s_state_names [self->state]);
        return;
    }
    size_t started = 0;
    for (size_t rank = 0; rank < self->task_count; rank++)
        started += self->tasks [rank].phase >= SPAWNER_TASK_ASSIGNED;
    snprintf (why, size, "%s refused: job %s is still starting (%s; %zu of "
              "%zu tasks have their data); try again once it runs "
              "(jace-spawner status %s)", request, self->id,
              s_state_names [self->state], started, self->task_count,
              self->id);
}

//  --------------------------------------------------------------------------
//  Drain

//  True if tasks `first` and `second` exchange values, as their ACCEPTs
//  said (either asks the other), or the tasks run total exchanges: each
//  then recovers from every other's log, which a task moved with it
//  loses (the drain of an application of jace_task_alltoallv failed so:
//  "task 2 no longer holds its piece of exchange 14 for task 1").
static bool
s_exchange_values (size_t first, size_t second, void *arg)
{
    server_t *self = (server_t *) arg;
    if (self->total_exchanges)
        return true;
    const spawner_task_t *a = &self->tasks [first];
    const spawner_task_t *b = &self->tasks [second];
    for (size_t i = 0; i < a->source_count; i++)
        if (a->sources [i] == (int64_t) second)
            return true;
    for (size_t i = 0; i < b->source_count; i++)
        if (b->sources [i] == (int64_t) first)
            return true;
    return false;
}

//  The backbone out of `cluster` as measured: k, the transfers its best
//  link out carries at full speed (as the overlay's bursts of probes
//  measured it; else the platform's KPBS limit; else how many of the
//  cluster's own links fill that link), its bandwidth and its latency.
//  False when the live model does not know the cluster.
static bool
s_backbone_out (server_t *self, const char *cluster, size_t *k,
                double *mbps, double *latency_us)
{
    platform_t *platform = spawner_mapper_platform (self->mapper);
    int from = platform ? platform_cluster_index (platform, cluster) : -1;
    if (from < 0)
        return false;
    *mbps = 0;
    *latency_us = 0;
    size_t measured = 0;
    for (size_t c = 0; c < platform_cluster_count (platform); c++) {
        const char *name = platform_cluster_name (platform, c);
        if (c == (size_t) from || spawner_mapper_excluded (self->mapper, name))
            continue;
        double out = platform_bandwidth_mbps (platform, (size_t) from, c);
        if (out > *mbps) {
            *mbps = out;
            *latency_us = platform_latency_us (platform, (size_t) from, c);
            measured = platform_measured_transfers (platform, (size_t) from,
                                                    c);
        }
    }
    double inside = platform_bandwidth_mbps (platform, (size_t) from,
                                             (size_t) from);
    size_t kpbs = platform_backbone_transfers (platform);
    *k = measured ? measured
       : kpbs ? kpbs
       : inside > 0 && *mbps > inside ? (size_t) (*mbps / inside) : 1;
    return *mbps > 0;
}

//  Every task counts again from its next report (a step was taken, or
//  some task stopped running).
static void
s_drain_settle_again (server_t *self)
{
    memset (self->drain_mark_at, 0, self->task_count * sizeof (int64_t));
}

//  Plan the drain of `cluster`: each task's state (its iterate) over the
//  backbone out of it, grouped by the job's drain/schedule
static void
s_plan_drain (server_t *self, const char *cluster)
{
    size_t *ranks = (size_t *) calloc (self->task_count, sizeof (size_t));
    double *seconds = (double *) calloc (self->task_count, sizeof (double));
    assert (ranks && seconds);
    size_t k = 1, count = 0;
    double mbps = 0, latency_us = 0, data_bytes = 0;
    bool measured = s_backbone_out (self, cluster, &k, &mbps, &latency_us);
    for (size_t i = 0; i < self->task_count; i++)
        if (streq (self->tasks [i].daemon.cluster, cluster)) {
            double rows = (double) (self->first_row [i + 1]
                                    - self->first_row [i]);
            double bytes = 8.0 * rows
                         * (double) spawner_job_unknowns_per_row (self->job);
            seconds [count] = measured ? bytes * 8 / (mbps * 1e6) : bytes;
            ranks [count++] = i;
            data_bytes += rows * self->data_bytes_per_row;
        }
    const char *schedule = spawner_job_drain_schedule (self->job);
    self->drain = spawner_drain_new (schedule, ranks, seconds, count, k,
                                     latency_us / 1e6, s_exchange_values,
                                     self);
    assert (self->drain);       //  The job file's check knew the schedule
    self->drain_step = 0;
    s_drain_settle_again (self);
    //  Unmeasured, the moves are weighed in bytes: no seconds to predict
    double scheduled, at_once;
    spawner_drain_predicted (self->drain, &scheduled, &at_once);
    char predicted [128] = "null,\"predicted_at_once_s\":null";
    if (measured)
        snprintf (predicted, sizeof predicted, "%.6f,"
                  "\"predicted_at_once_s\":%.6f", scheduled, at_once);
    spawner_events_write (self->events, "drain_plan", ",\"cluster\":\"%s\","
        "\"schedule\":\"%s\",\"used\":\"%s\",\"steps\":%zu,\"k\":%zu,"
        "\"beta_s\":%.6f,\"backbone_mbps\":%.3f,\"measured\":%s,"
        "\"predicted_scheduled_s\":%s,\"data_bytes\":%.0f", cluster,
        schedule, spawner_drain_used (self->drain),
        spawner_drain_step_count (self->drain), k, latency_us / 1e6, mbps,
        measured ? "true" : "false", predicted, data_bytes);
    free (ranks);
    free (seconds);
}

//  How many of the `count` tasks `ranks` the mapping finds a daemon off
//  the drained cluster for, now, each choice made unavailable to the
//  next; writes why into `why` for the first that finds none.
static size_t
s_drain_fit (server_t *self, const size_t *ranks, size_t count, char *why,
             size_t why_size)
{
    zlist_t *unavailable = s_unavailable (self);
    size_t placed = 0;
    for (size_t i = 0; i < count; i++) {
        jace_node_t chosen;
        char reason [192];
        if (spawner_mapper_replace (self->mapper, self->lease, self->tasks,
                                    self->task_count, ranks [i], self->dead,
                                    unavailable, true, &chosen, reason,
                                    sizeof reason) == 0) {
            zlist_append (unavailable, chosen.id);
            placed++;
        }
        else
        if (placed == i)
            snprintf (why, why_size, "no daemon off cluster %s for task "
                      "%zu: %s", self->draining, ranks [i], reason);
    }
    zlist_destroy (&unavailable);
    return placed;
}

//  True if the mapping finds a daemon off the drained cluster for each of
//  the `count` tasks `ranks`.  A drain moves tasks only then: a moved
//  task's daemon is fenced at once, and with no successor the job used to
//  fail 30 s later.  Writes why not.
static bool
s_drain_has_room (server_t *self, const size_t *ranks, size_t count,
                  char *why, size_t why_size)
{
    return s_drain_fit (self, ranks, count, why, why_size) == count;
}

//  How many of the tasks still on the drained cluster the mapping finds
//  daemons off it for
static size_t
s_drain_room (server_t *self)
{
    size_t *ranks = (size_t *) zmalloc ((self->task_count + 1)
                                        * sizeof (size_t));
    size_t count = 0;
    for (size_t i = 0; i < self->task_count; i++)
        if (streq (self->tasks [i].daemon.cluster, self->draining))
            ranks [count++] = i;
    char why [512];
    size_t placed = s_drain_fit (self, ranks, count, why, sizeof why);
    free (ranks);
    return placed;
}

//  The tasks of drain step `step` still on the drained cluster, into
//  ranks (room for every task); returns their number.
static size_t
s_drain_step_ranks (server_t *self, size_t step, size_t *ranks)
{
    size_t count = 0;
    for (size_t i = 0; i < spawner_drain_step_size (self->drain, step); i++) {
        size_t rank = spawner_drain_step_task (self->drain, step, i);
        if (streq (self->tasks [rank].daemon.cluster, self->draining))
            ranks [count++] = rank;
    }
    return count;
}

//  Note the drain beside the job's secret, where a resume finds it
//  (cluster NULL: no drain).  A note that cannot be written costs only
//  that: the drain goes on.
static void
s_note_drain (server_t *self, const char *cluster)
{
    char reason [512];
    if (spawner_resume_note_drain (self->secrets_dir, self->id, cluster,
                                   reason, sizeof reason))
        zsys_warning ("spawner: %s; a resume would not carry the drain "
                      "on", reason);
}

//  A new drain is decided on a listing of the grid taken after it came
//  (daemons may have come and gone since the job's plan): refused, and
//  forgotten, when its first step finds no daemon off the cluster, else
//  taken, and its DRAIN (if a user asked for it, not a resume) answered.
//  Until then no step runs.  Returns true once it is decided.
static bool
s_drain_answer (server_t *self)
{
    if (!self->drain_deciding)
        return true;
    if (spawner_mapper_listing_time (self->mapper) < self->drain_started)
        return false;
    self->drain_deciding = false;
    //  Planned on this listing: its links are the grid's as it is now
    s_plan_drain (self, self->draining);
    size_t *ranks = (size_t *) zmalloc (self->task_count * sizeof (size_t));
    size_t count = s_drain_step_ranks (self, 0, ranks);
    char why [512];
    bool room = s_drain_has_room (self, ranks, count, why, sizeof why);
    free (ranks);
    if (room) {
        if (self->drain_request)
            s_status_reply (self, self->drain_request);
    }
    else {
        char cluster [JACE_ID_MAX];
        snprintf (cluster, sizeof cluster, "%s", self->draining);
        //  Say how far off the grid is: the first task found no daemon,
        //  but a user has to know how many daemons to start
        char reason [sizeof why + 128];
        snprintf (reason, sizeof reason, "%s; the grid has daemons off "
                  "%s for %zu of its %zu tasks", why, cluster,
                  s_drain_room (self), s_tasks_in (self, cluster));
        spawner_mapper_readmit_cluster (self->mapper, cluster);
        *self->draining = 0;
        spawner_drain_destroy (&self->drain);
        zsys_notice ("spawner: drain of cluster %s refused: %s", cluster,
                     reason);
        char escaped [2 * sizeof reason];
        spawner_events_escape (escaped, sizeof escaped, reason);
        spawner_events_write (self->events, "drain_refused", ",\"cluster\":"
                              "\"%s\",\"why\":\"%s\"", cluster, escaped);
        s_note_drain (self, NULL);
        if (self->drain_request)
            s_refuse_request (self, self->drain_request, "DRAIN refused: "
                              "%s; start daemons elsewhere first", reason);
    }
    jace_msg_destroy (&self->drain_request);
    return true;
}

//  Begin draining `cluster`, which runs some task, for `asker`: the
//  mapping keeps off it from now on, and it is noted for a resume.  It is
//  planned and decided on the next listing (s_drain_answer).
static void
s_begin_drain (server_t *self, const char *cluster, const char *asker)
{
    snprintf (self->draining, sizeof self->draining, "%s", cluster);
    self->drain_started = zclock_mono ();
    self->drain_ran = 0;
    self->drain_moved = 0;
    self->drain_ready_at = 0;
    self->drain_unsettled = -1;
    self->drain_deciding = true;
    spawner_mapper_exclude_cluster (self->mapper, cluster);
    size_t tasks = s_tasks_in (self, cluster);
    zsys_notice ("spawner: draining cluster %s (%zu tasks), asked by %s",
                 cluster, tasks, asker);
    char who [2 * JACE_ID_MAX];
    spawner_events_escape (who, sizeof who, asker);
    spawner_events_write (self->events, "drain", ",\"cluster\":\"%s\","
                          "\"tasks\":%zu,\"asked_by\":\"%s\"", cluster,
                          tasks, who);
    s_note_drain (self, cluster);
}

//  DRAIN naming no cluster: stop the drain under way, and answer with the
//  job's status and what the drain did (drain/stopped, moved, left).
static void
s_stop_drain_request (server_t *self, jace_msg_t *request)
{
    if (!*self->draining) {
        s_refuse_request (self, request, "DRAIN stop refused: no drain of "
                          "job %s is under way", self->id);
        return;
    }
    char cluster [JACE_ID_MAX], why [JACE_ID_MAX + 32];
    snprintf (cluster, sizeof cluster, "%s", self->draining);
    size_t moved = self->drain_moved;
    snprintf (why, sizeof why, "asked by %s", jace_msg_sender (request));
    s_stop_drain (self, why);
    jace_msg_t *reply = s_status_msg (self, request);
    jace_msg_set_param (reply, "drain/stopped", cluster);
    s_set_number (reply, "drain/moved", (int64_t) moved);
    s_set_number (reply, "drain/left", (int64_t) s_tasks_in (self, cluster));
    jace_msg_send (&reply, self->status);
}

//  DRAIN: move every task off a cluster, through the job's mapping
//  (s_drain_step), the job going on.
static void
s_start_drain (server_t *self, jace_msg_t **request_p)
{
    jace_msg_t *request = *request_p;
    const char *cluster = jace_msg_cluster (request);
    size_t tasks = *cluster ? s_tasks_in (self, cluster) : 0;
    if (!*cluster)
        s_stop_drain_request (self, request);
    else
    if (streq (spawner_job_mapping (self->job), "simple"))
        s_refuse_request (self, request, "DRAIN refused: job %s maps with "
                          "'simple', whose replacement policy cannot keep "
                          "tasks off a cluster; use another job/mapping",
                          self->id);
    else
    if (self->state < JOB_RUNNING || self->state >= JOB_FINISHING
    ||  *self->failure) {
        char why [512];
        s_not_running_why (self, "DRAIN", why, sizeof why);
        s_refuse_request (self, request, "%s", why);
    }
    else
    //  A cluster the job does not use is refused for that first: waiting
    //  for another drain to end would not help
    if (tasks == 0 && !streq (self->draining, cluster))
        s_refuse_request (self, request, "DRAIN refused: no task of job "
                          "%s runs on a cluster named '%s'", self->id,
                          cluster);
    else
    if (*self->draining && !streq (self->draining, cluster))
        s_refuse_request (self, request, "DRAIN refused: cluster %s is "
                          "being drained; wait until it is done, or stop it "
                          "(jace-spawner drain %s --stop)", self->draining,
                          self->id);
    else
    if (self->rebalance != REBALANCE_NONE)
        s_refuse_request (self, request, "DRAIN refused: job %s is being "
                          "rebalanced; wait until it is done", self->id);
    else
    if (tasks == 0)
        s_refuse_request (self, request, "DRAIN refused: no task of job "
                          "%s runs on cluster %s any more: its drain is "
                          "ending", self->id, cluster);
    else {
        if (!*self->draining) {
            s_begin_drain (self, cluster, jace_msg_sender (request));
            //  Answered on the next listing (s_drain_answer)
            self->drain_request = request;
            *request_p = NULL;
            return;
        }
        if (self->drain_deciding)
            s_refuse_request (self, request, "DRAIN refused: the drain of "
                              "cluster %s is being decided; ask again",
                              self->draining);
        else {
            //  The same drain asked again is no new drain: say so, with
            //  how far it has come, rather than refuse a harmless repeat
            jace_msg_t *reply = s_status_msg (self, request);
            jace_msg_set_param (reply, "drain/repeat", "1");
            jace_msg_send (&reply, self->status);
        }
    }
}

//  Move task `rank` off the drained cluster
static void
s_drain_move (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    spawner_events_write (self->events, "drain_move", ",\"task\":%zu,"
                          "\"daemon\":\"%s\",\"cluster\":\"%s\","
                          "\"step\":%zu", rank, task->daemon.id,
                          task->daemon.cluster, self->drain_step);
    snprintf (task->why, sizeof task->why, "cluster %s is drained",
              self->draining);
    snprintf (task->lost, sizeof task->lost, "moved off drained cluster %s",
              self->draining);
    s_unplace (self, rank, "drained: your cluster is being drained");
    self->drain_moved++;
    self->drain_moves++;
}

//  True if the task runs on its daemon and has reported iterating
static bool
s_task_iterating (const spawner_task_t *task)
{
    return task->phase == SPAWNER_TASK_RUNNING && task->state >= 0
        && !task->restoring;
}

//  True if no task of the job has a copy of its state on another daemon:
//  its only task, or checkpoints off (checkpoint/copies = 0, or neither
//  period set).
static bool
s_copies_nowhere (server_t *self)
{
    return self->task_count == 1
        || spawner_job_checkpoint_copies (self->job) == 0
        || (spawner_job_checkpoint_iterations (self->job) == 0
            && spawner_job_checkpoint_seconds (self->job) == 0);
}

//  True if every task of `cluster` (every task, when NULL) iterates: a
//  task moved a moment ago is still on the cluster until it is placed
static bool
s_judged_iterating (server_t *self, const char *cluster)
{
    self->drain_unsettled = -1;     //  No checkpoint to wait for
    for (size_t i = 0; i < self->task_count; i++)
        if ((!cluster || streq (self->tasks [i].daemon.cluster, cluster))
        &&  !s_task_iterating (&self->tasks [i]))
            return false;
    return true;
}

//  True once the tasks still to move have each checkpointed since it ran
//  after the last step (or since the drain began: a job just started may
//  have no copies yet); a task's count starts when it is seen iterating,
//  and again after it stopped (replaced).  A moved task's new daemon
//  holds no copies yet: the tasks of later steps whose copies its old
//  daemon held must send their next checkpoint to it first, or they would
//  restart from scratch.  A task checkpoints at the end of an iteration, once
//  checkpoint/every_iterations iterations or checkpoint/every_seconds
//  have gone by: so each must have done more than that many iterations,
//  or two more iterations once that long has gone by (one that ends due,
//  one for the copies to arrive), whatever an iteration lasts.  The
//  tasks judged are `cluster`'s (a drain's), or every task when NULL (a
//  rebalance's, whose every task needs copies of its new rows).
static bool
s_drain_settled (server_t *self, int64_t now, const char *cluster)
{
    int64_t iterations = spawner_job_checkpoint_iterations (self->job);
    double seconds = spawner_job_checkpoint_seconds (self->job);
    if (s_copies_nowhere (self))      //  No copies to wait for
        return s_judged_iterating (self, cluster);
    bool settled = true;
    for (size_t i = 0; i < self->task_count; i++) {
        const spawner_task_t *task = &self->tasks [i];
        if (cluster && !streq (task->daemon.cluster, cluster))
            continue;
        //  A task replaced since its mark counts again from when it runs
        if (!s_task_iterating (task))
            self->drain_mark_at [i] = 0;
        else
        if (!self->drain_mark_at [i]) {
            self->drain_mark_at [i] = now;
            self->drain_marks [i] = task->iteration;
            self->drain_period_marks [i] = -1;
        }
        else
        if (seconds > 0 && self->drain_period_marks [i] < 0
        &&  now - self->drain_mark_at [i] >= (int64_t) (1000 * seconds))
            self->drain_period_marks [i] = task->iteration;
        bool by_iterations = self->drain_mark_at [i] && iterations > 0
            && task->iteration > self->drain_marks [i] + iterations;
        bool by_time = self->drain_mark_at [i]
            && self->drain_period_marks [i] >= 0
            && task->iteration >= self->drain_period_marks [i] + 2;
        if (!by_iterations && !by_time && settled) {
            settled = false;
            self->drain_unsettled = (int64_t) i;    //  For `status`
        }
    }
    if (settled)
        self->drain_unsettled = -1;
    return settled;
}

static void s_drain_moves (server_t *self, const size_t *ranks,
                           size_t count, int64_t now, bool whole);
static void s_drained (server_t *self, int64_t now);
static void s_end_drain (server_t *self);

//  True if task `task` has no neighbour (as its ACCEPT said): its copies
//  then sit on the nearest other tasks, whichever they are
static bool
s_isolated (server_t *self, size_t task)
{
    for (size_t other = 0; other < self->task_count; other++)
        if (other != task && s_exchange_values (task, other, self))
            return false;
    return true;
}

//  A task not iterating (crashed, moved, restoring) lost the copies its
//  daemon held: its neighbours, which checkpoint to it, count again from
//  when it runs.  So do tasks without neighbours, whose holders it may be.
static void
s_drain_forget_lost (server_t *self)
{
    bool *isolated = NULL;      //  Found once, when some task is lost
    for (size_t lost = 0; lost < self->task_count; lost++) {
        if (s_task_iterating (&self->tasks [lost]))
            continue;
        if (!isolated) {
            isolated = (bool *) zmalloc (self->task_count * sizeof (bool));
            for (size_t i = 0; i < self->task_count; i++)
                isolated [i] = s_isolated (self, i);
        }
        for (size_t i = 0; i < self->task_count; i++)
            if (i == lost || isolated [i]
            ||  s_exchange_values (lost, i, self))
                self->drain_mark_at [i] = 0;
    }
    free (isolated);
}

//  A drain takes its steps in order, each once the tasks still to move
//  and their neighbours run, and those tasks have checkpointed since
//  their neighbours last started: a moved task restarts from its
//  neighbours' copies of its checkpoint, and no step moves two
//  neighbours, so those copies are on running daemons.  A loss elsewhere
//  in the job holds nothing up (every task had to run: under two crashes
//  every three seconds, a drain once waited 19 s for its first step).
//  The mapping chooses each new daemon, the drained cluster counted
//  dead.  A task of the cluster the plan did not know moves
//  last, on its own.
static void
s_drain_step (server_t *self, int64_t now)
{
    //  Answering a new DRAIN may refuse it, and end the draining
    if (!*self->draining || !s_drain_answer (self) || !*self->draining)
        return;
    //  Between steps the tasks still to move must have sent copies to the
    //  moved ones' new daemons.  After the last step, once every task
    //  runs (drained), every task must checkpoint once more before the
    //  drain is over, so that each has copies on the daemons that run
    //  now: a moved task killed right after its holders moved restarted
    //  from scratch.  Task by task: a task replaced meanwhile counts again
    //  from when it runs, and the others keep their count (a count that
    //  every loss restarted took 87 s under two crashes every 3 s).
    bool remaining = s_tasks_in (self, self->draining) > 0;
    if (remaining)
        s_drain_forget_lost (self);
    else
    if (!self->drain_ran && s_all_iterating (self))
        s_drained (self, now);
    if (!remaining && !self->drain_ran)
        return;                 //  Moved tasks still restore
    if (!s_drain_settled (self, now, remaining ? self->draining : NULL)) {
        self->drain_ready_at = 0;   //  Ready again later, heard again
        return;
    }
    size_t *ranks = (size_t *) zmalloc ((self->task_count + 1)
                                        * sizeof (size_t));
    size_t count = 0;
    while (self->drain_step < spawner_drain_step_count (self->drain)
    &&     !(count = s_drain_step_ranks (self, self->drain_step, ranks)))
        self->drain_step++;
    //  A task of the cluster the plan did not know moves last, alone
    for (size_t i = 0; i < self->task_count && !count; i++)
        if (streq (self->tasks [i].daemon.cluster, self->draining))
            ranks [count++] = i;
    //  Planned before the tasks said they run total exchanges (a resumed
    //  spawner's first PROGRESS may come later): one at a time, the rest
    //  of the step after it
    bool whole = !self->total_exchanges || count <= 1;
    if (count)
        s_drain_moves (self, ranks, whole ? count : 1, now, whole);
    free (ranks);
    if (!count)
        s_end_drain (self);
}

//  A wait for a holder to speak this long is told (drain_wait)
#define DRAIN_QUIET_HOLDER_MSEC 500

//  True if a task whose copies the daemons of `ranks` hold has not been
//  heard from since the step was ready to go (at drain_ready_at), with
//  why.  Moving them would drop those copies; were it dead and not yet
//  declared so, its replacement would find none left and restart from
//  scratch.  Seen under crashes: a step moved both neighbours of a task
//  killed 1.6 s before, and its replacement restarted from iteration 0
//  after 18 s of work.  A live task speaks within one of its gaps; a
//  dead one is declared so within the detector's bound, and restores
//  from the copies still there.  No silence threshold: a slow task is
//  not a dead one, and the step only waits for it to speak.
static bool
s_drain_holder_unheard (server_t *self, const size_t *ranks, size_t count,
                        int64_t now, char *why, size_t why_size)
{
    //  The cheap test first: most tasks were heard since
    for (size_t other = 0; other < self->task_count; other++) {
        const spawner_task_t *task = &self->tasks [other];
        if (task->heard_at > self->drain_ready_at || !s_task_iterating (task))
            continue;
        bool moves = false;
        for (size_t i = 0; i < count && !moves; i++)
            moves = ranks [i] == other;
        bool isolated = !moves && s_isolated (self, other);
        for (size_t i = 0; i < count && !moves; i++)
            if (isolated || s_exchange_values (ranks [i], other, self)) {
                snprintf (why, why_size, "task %zu (daemon %s) has not been "
                          "heard from since the step was ready, and task "
                          "%zu's daemon holds its copies: waiting to hear "
                          "from it, or to replace it", other,
                          task->daemon.id, ranks [i]);
                return true;
            }
    }
    return false;
}

//  The drain waits, saying why once per reason (`note`: in a few words)
static void
s_drain_wait (server_t *self, const char *why, const char *note)
{
    snprintf (self->drain_wait_note, sizeof self->drain_wait_note, "%s",
              note);
    if (streq (why, self->drain_waiting))
        return;
    zsys_notice ("spawner: the drain of %s waits: %s", self->draining, why);
    char escaped [1024];
    spawner_events_escape (escaped, sizeof escaped, why);
    spawner_events_write (self->events, "drain_wait", ",\"cluster\":\"%s\","
                          "\"why\":\"%s\"", self->draining, escaped);
    snprintf (self->drain_waiting, sizeof self->drain_waiting, "%s", why);
}

static void s_begin_snapshot (server_t *self);

//  Keep the vector of the last snapshot checked as the iterate that
//  tasks placed from now on restore (s_takes_iterate says which)
static void
s_keep_iterate (server_t *self)
{
    int64_t unknowns = 0;
    const double *x = spawner_verify_answer (self->verify, &unknowns);
    free (self->rebalance_x);
    self->rebalance_x = (double *) malloc ((size_t) unknowns * sizeof (double)
                                           + 1);
    assert (self->rebalance_x);
    memcpy (self->rebalance_x, x, (size_t) unknowns * sizeof (double));
    self->rebalance_unknowns = unknowns;
}

//  The iterate is in: keep it for the tasks of the step, which restore
//  their rows of it on their new daemons.
static void
s_keep_drain_iterate (server_t *self, const size_t *ranks, size_t count)
{
    s_keep_iterate (self);
    for (size_t i = 0; i < count; i++)
        self->tasks [ranks [i]].drain_iterate = true;
    self->drain_snapshot = 0;
    spawner_events_write (self->events, "drain_gathered", ",\"cluster\":"
                          "\"%s\",\"iteration\":%" PRId64 ",\"unknowns\":%"
                          PRId64, self->draining, self->rebalance_iteration,
                          self->rebalance_unknowns);
}

//  True once the tasks of a step may move without losing their state.  A
//  task with no copy of its state anywhere (s_copies_nowhere) restarted
//  from its initial state on its new daemon (a one-task job drained after
//  3.6 s): the step first gathers the iterate with a snapshot (the one
//  verification takes, which may end the job) and hands each moved task
//  its rows of it, as a rebalance does.  The iteration they go on from is
//  the least the tasks that take it (this step's, and an earlier step's
//  should their daemons fail meanwhile) had reported when the snapshot
//  began: each answered it later, so none goes on from further than it
//  got.
static bool
s_drain_gathered (server_t *self, const size_t *ranks, size_t count)
{
    if (!s_copies_nowhere (self) || !spawner_job_app (self->job)->restore)
        return true;
    if (self->drain_snapshot
    &&  spawner_verify_last_checked (self->verify) == self->drain_snapshot) {
        s_keep_drain_iterate (self, ranks, count);
        return true;
    }
    //  Ours is under way; or another is (a verification's), and ours
    //  follows it; or ours was abandoned (a task moved): again
    if (spawner_verify_snapshot (self->verify) == 0
    &&  s_all_iterating (self)) {
        int64_t least = INT64_MAX;
        for (size_t i = 0; i < self->task_count; i++) {
            bool moves = self->tasks [i].drain_iterate;
            for (size_t j = 0; j < count; j++)
                moves |= ranks [j] == i;
            if (moves && self->tasks [i].iteration < least)
                least = self->tasks [i].iteration;
        }
        self->rebalance_iteration = least > 1 ? least : 1;
        s_begin_snapshot (self);
        self->drain_snapshot = spawner_verify_snapshot (self->verify);
    }
    s_drain_wait (self, "gathering the iterate: the tasks to move have no "
                  "copy of their state on another daemon", "for the iterate");
    return false;
}

//  The iterate a drain gathered is no longer needed
static void
s_drop_drain_iterate (server_t *self)
{
    if (self->drain_snapshot
    &&  spawner_verify_snapshot (self->verify) == self->drain_snapshot)
        spawner_verify_abandon (self->verify);
    self->drain_snapshot = 0;
    for (size_t i = 0; i < self->task_count; i++)
        self->tasks [i].drain_iterate = false;
    if (self->rebalance == REBALANCE_NONE) {
        free (self->rebalance_x);
        self->rebalance_x = NULL;
    }
}

//  Move the tasks of a drain step once the grid has room for them all
//  and every task whose copies they hold has spoken since; until then
//  the drain waits.  Only part of the step (not `whole`): the next pass
//  takes it again for the rest.
static void
s_drain_moves (server_t *self, const size_t *ranks, size_t count,
               int64_t now, bool whole)
{
    char why [512];
    if (!s_drain_has_room (self, ranks, count, why, sizeof why)) {
        self->drain_ready_at = 0;
        s_drain_wait (self, why, "for a daemon");
        return;                 //  A drain asks for listings meanwhile
    }
    if (!self->drain_ready_at)
        self->drain_ready_at = now;
    if (s_drain_holder_unheard (self, ranks, count, now, why, sizeof why)) {
        if (now - self->drain_ready_at > DRAIN_QUIET_HOLDER_MSEC)
            s_drain_wait (self, why, "for a silent task");
        return;
    }
    if (!s_drain_gathered (self, ranks, count))
        return;
    self->drain_ready_at = 0;
    *self->drain_waiting = 0;
    s_drain_settle_again (self);    //  The next step counts from now
    for (size_t i = 0; i < count; i++)
        s_drain_move (self, ranks [i]);
    if (whole && self->drain_step < spawner_drain_step_count (self->drain))
        self->drain_step++;
}

//  Every task is off the drained cluster
static void
s_drained (server_t *self, int64_t now)
{
    self->drain_ran = now;
    double seconds = (now - self->drain_started) / 1000.0;
    zsys_notice ("spawner: cluster %s drained: %zu tasks moved in %.1f s",
                 self->draining, self->drain_moved, seconds);
    spawner_events_write (self->events, "drained", ",\"cluster\":\"%s\","
                          "\"tasks\":%zu,\"seconds\":%.3f,\"steps\":%zu",
                          self->draining, self->drain_moved, seconds,
                          self->drain_step);
    s_note_drain (self, NULL);  //  Nothing left for a resume to move
}

//  ... and every task has checkpointed since: the drain is over
static void
s_end_drain (server_t *self)
{
    double seconds = (zclock_mono () - self->drain_started) / 1000.0;
    spawner_events_write (self->events, "drain_copied", ",\"cluster\":"
                          "\"%s\",\"seconds\":%.3f", self->draining,
                          seconds);
    *self->draining = 0;
    spawner_drain_destroy (&self->drain);
    s_drop_drain_iterate (self);
}

//  End the drain under way before it is done (`jace-spawner drain --stop`,
//  or a task that found no daemon elsewhere): the tasks moved stay where
//  they run, the others stay on the cluster, which takes tasks again.
//  A DRAIN still being decided is refused, saying why.
static void
s_stop_drain (server_t *self, const char *why)
{
    size_t left = s_tasks_in (self, self->draining);
    zsys_notice ("spawner: drain of cluster %s stopped (%zu tasks moved, "
                 "%zu left on it): %s", self->draining, self->drain_moved,
                 left, why);
    char text [512];
    spawner_events_escape (text, sizeof text, why);
    spawner_events_write (self->events, "drain_stopped", ",\"cluster\":"
                          "\"%s\",\"moved\":%zu,\"left\":%zu,"
                          "\"why\":\"%s\"", self->draining,
                          self->drain_moved, left, text);
    if (self->drain_request)
        s_refuse_request (self, self->drain_request, "DRAIN of cluster %s "
                          "stopped before it began: %s", self->draining, why);
    jace_msg_destroy (&self->drain_request);
    spawner_mapper_readmit_cluster (self->mapper, self->draining);
    *self->draining = 0;
    *self->drain_waiting = 0;
    self->drain_deciding = false;
    spawner_drain_destroy (&self->drain);
    s_drop_drain_iterate (self);
    s_note_drain (self, NULL);
}

//  --------------------------------------------------------------------------
//  Rebalance
//
//  The rows change at a generation: the spawner gathers the iterate (a
//  snapshot, the one verification takes), cuts the rows again in
//  proportion to the rates the tasks measured, and assigns every task
//  again on the daemon it runs on, a new epoch, its new rows (a file
//  matrix's streamed again by `attach`) and the iterate (its rows and
//  what it reads, s_add_iterate), which restores its block and seeds its
//  sources' values.  The daemons drop their copies of the old rows.
//  Until every task has checkpointed on its new rows the spawner keeps
//  the iterate, and a task whose daemon dies meanwhile is replaced with
//  it: nothing restores from the old partition, and nothing is lost.

static bool s_all_accepted (server_t *self);

//  True if every task runs, has measured its rate on its rows, and was
//  heard lately: a task silent for half its suspicion bound may have
//  crashed unseen yet, and its last rate must not draw the rows to it.
static bool
s_rates_known (server_t *self)
{
    int64_t now = zclock_mono ();
    for (size_t i = 0; i < self->task_count; i++) {
        const spawner_task_t *task = &self->tasks [i];
        if (task->phase != SPAWNER_TASK_RUNNING || task->restoring
        ||  task->rate_reports < RATE_REPORTS_MIN
        ||  task->usecs_per_iteration <= 0
        ||  2 * s_silence (self, i, now)
            > spawner_detector_bound (self->detector, i))
            return false;
    }
    return true;
}

//  The tasks' rows in `first` as a JSON array, for the events; the caller
//  frees it.  32 characters a task hold any count.
static char *
s_rows_json (server_t *self, const int64_t *first)
{
    size_t size = 32 * self->task_count + 64;
    char *text = (char *) zmalloc (size);
    size_t used = 0;
    for (size_t i = 0; i < self->task_count; i++)
        used += (size_t) snprintf (text + used, size - used, "%s%" PRId64,
                                   i ? "," : "[", first [i + 1] - first [i]);
    snprintf (text + used, size - used, "%s]", self->task_count ? "" : "[");
    return text;
}

//  The rebalance_plan event: old and new rows, what the tasks measured,
//  and why.
static void
s_rebalance_event (server_t *self, const char *trigger, double drift,
                   double step, const char *why)
{
    char *old_rows = s_rows_json (self, self->first_row);
    char *new_rows = s_rows_json (self, self->rebalance_first);
    size_t size = 32 * self->task_count + 64;
    char *usecs = (char *) zmalloc (size);
    size_t used = 0;
    for (size_t i = 0; i < self->task_count && used + 24 < size; i++)
        used += (size_t) snprintf (usecs + used, size - used, "%s%.0f",
                                   i ? "," : "[",
                                   self->tasks [i].usecs_per_iteration);
    snprintf (usecs + used, size - used, "]");
    char escaped [1024];
    spawner_events_escape (escaped, sizeof escaped, why);
    spawner_events_write (self->events, "rebalance_plan", ",\"trigger\":"
        "\"%s\",\"old_rows\":%s,\"new_rows\":%s,\"usecs_per_iteration\":%s,"
        "\"drift\":%.4f,\"threshold\":%.4f,\"step\":%.2f,\"why\":\"%s\"",
        trigger, old_rows, new_rows, usecs, drift,
        spawner_job_rebalance_threshold (self->job), step, escaped);
    free (old_rows);
    free (new_rows);
    free (usecs);
}

//  auto's last cut, on these daemons, did not take the drift well below
//  what it was: the rates measured vary faster than rows can follow, and
//  cutting again would only stop the tasks once more.  Back off: the
//  next look waits twice as long (rebalance_backoff).  A cut that did
//  reduce the drift keeps auto looking as often as it did.
static bool
s_auto_backs_off (server_t *self, double drift, char *answer,
                  size_t answer_size)
{
    if (self->auto_drift <= 0
    ||  drift < REBALANCE_AUTO_PROGRESS * self->auto_drift) {
        self->auto_drift = drift;
        self->auto_backoff = 0;
        return false;
    }
    if (self->auto_backoff < REBALANCE_BACKOFF_MAX)
        self->auto_backoff++;
    int64_t wait = (REBALANCE_AUTO_COST_FACTOR * self->rebalance_pause)
                 << self->auto_backoff;
    self->next_rebalance_check = zclock_mono () + wait;
    snprintf (answer, answer_size, "rows kept: the last cut left the drift "
              "at %.3f, not below %.0f%% of the %.3f it was cut on, so the "
              "measured rates vary faster than the rows can follow; next "
              "look in %.1f s", drift, 100 * REBALANCE_AUTO_PROGRESS,
              self->auto_drift, wait / 1000.0);
    zsys_notice ("spawner: job %s: %s", self->id, answer);
    spawner_events_write (self->events, "rebalance_backoff", ",\"drift\":"
                          "%.4f,\"cut_drift\":%.4f,\"next_auto_seconds\":%.3f",
                          drift, self->auto_drift, wait / 1000.0);
    return true;
}

//  Cut the rows again if the measured rates say so (job/rebalance_threshold).
//  `trigger` is "request" or "auto"; answer gets what was decided.
//  Returns true when a rebalance starts.
static bool
s_decide_rebalance (server_t *self, const char *trigger, char *answer,
                    size_t answer_size)
{
    double *usecs = (double *) zmalloc (self->task_count * sizeof (double));
    for (size_t i = 0; i < self->task_count; i++)
        usecs [i] = self->tasks [i].usecs_per_iteration;
    double drift = 0;
    double threshold = spawner_job_rebalance_threshold (self->job);
    double step = self->rebalanced_here ? REBALANCE_DAMPED_STEP : 1;
    bool change = spawner_rebalance_plan (self->first_row, usecs,
        self->task_count, threshold, step, self->rebalance_first, &drift);
    free (usecs);
    if (!change) {
        snprintf (answer, answer_size, "rows kept: no task's rows differ "
                  "from its fair share by more than job/rebalance_threshold "
                  "= %g (largest drift %.3f)", threshold, drift);
        return false;
    }
    if (streq (trigger, "auto") && s_auto_backs_off (self, drift, answer,
                                                     answer_size))
        return false;
    //  The task furthest from its new rows, to say why
    size_t worst = 0;
    double furthest = -1;
    for (size_t i = 0; i < self->task_count; i++) {
        double fair = (double) (self->rebalance_first [i + 1]
                                - self->rebalance_first [i]);
        double own = (double) (self->first_row [i + 1] - self->first_row [i]);
        if (fabs (own - fair) / fair > furthest) {
            furthest = fabs (own - fair) / fair;
            worst = i;
        }
    }
    snprintf (answer, answer_size, "rebalancing: task %zu holds %" PRId64
              " rows, its rate's share is %" PRId64 " (drift %.3f over "
              "job/rebalance_threshold = %g)", worst,
              self->first_row [worst + 1] - self->first_row [worst],
              self->rebalance_first [worst + 1]
              - self->rebalance_first [worst], drift, threshold);
    zsys_notice ("spawner: job %s: %s", self->id, answer);
    s_rebalance_event (self, trigger, drift, step, answer);
    self->rebalance = REBALANCE_GATHERING;
    self->rebalance_started = zclock_mono ();
    self->rebalance_snapshot = 0;
    return true;
}

//  REBALANCE: cut the rows again now if the rates say so, the job going
//  on; the answer says what was decided.
static void
s_start_rebalance (server_t *self, jace_msg_t *request)
{
    char answer [512];
    if (self->state < JOB_RUNNING || self->state >= JOB_FINISHING
    ||  *self->failure) {
        char why [512];
        s_not_running_why (self, "REBALANCE", why, sizeof why);
        s_refuse_request (self, request, "%s", why);
    }
    else
    if (*self->draining)
        s_refuse_request (self, request, "REBALANCE refused: cluster %s is "
                          "being drained; wait until it is done, or stop "
                          "it (jace-spawner drain %s --stop)",
                          self->draining, self->id);
    else
    if (self->rebalance != REBALANCE_NONE)
        s_refuse_request (self, request, "REBALANCE refused: job %s is "
                          "being rebalanced already", self->id);
    else
    if (!spawner_job_app (self->job)->restore)
        s_refuse_request (self, request, "REBALANCE refused: application "
                          "'%s' does not restore checkpoints, so its tasks "
                          "would start over",
                          spawner_job_app (self->job)->name);
    else
    if (!s_rates_known (self))
        s_refuse_request (self, request, "REBALANCE refused: not every task "
                          "of job %s has measured its rate on its rows yet "
                          "(%d reports each); ask again shortly", self->id,
                          RATE_REPORTS_MIN);
    else {
        s_decide_rebalance (self, "request", answer, sizeof answer);
        jace_msg_t *reply = s_status_msg (self, request);
        jace_msg_set_param (reply, "rebalance", answer);
        jace_msg_send (&reply, self->status);
    }
}

//  The bytes each old owner gives each new task (rows x unknowns x 8,
//  and the unknowns the task reads, when the application says which),
//  into bytes [owner * tasks + task].
static void
s_handoff_traffic (server_t *self, double *bytes)
{
    size_t n = self->task_count;
    int64_t per_row = spawner_job_unknowns_per_row (self->job);
    const jace_app_t *app = spawner_job_app (self->job);
    for (size_t j = 0; j < n; j++) {
        int64_t begin = self->first_row [j], end = self->first_row [j + 1];
        size_t owner = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t from = self->handoff_first [i] > begin
                         ? self->handoff_first [i] : begin;
            int64_t to = self->handoff_first [i + 1] < end
                       ? self->handoff_first [i + 1] : end;
            if (to > from)
                bytes [i * n + j] += 8.0 * (double) ((to - from) * per_row);
        }
        int64_t *numbers = NULL;
        size_t count = 0;
        if (!app->reads
        ||  app->reads (spawner_job_problem (self->job), self->first_row,
                        (int64_t) n, (int64_t) j, &numbers, &count)) {
            free (numbers);
            continue;
        }
        //  The numbers come sorted from multisplitting; any order is
        //  right, sorted is quick.
        for (size_t k = 0; k < count; k++) {
            int64_t row = numbers [k] / per_row;
            if (row >= begin && row < end)
                continue;
            if (row < self->handoff_first [owner])
                owner = 0;
            while (owner + 1 < n && row >= self->handoff_first [owner + 1])
                owner++;
            bytes [owner * n + j] += 8.0;
        }
        free (numbers);
    }
}

//  Schedule the slices that cross between clusters (spawner_handoff),
//  with the links, k and beta of the live model, into handoff_step.
static void
s_plan_handoff (server_t *self)
{
    size_t n = self->task_count;
    platform_t *platform = spawner_mapper_platform (self->mapper);
    size_t clusters = platform ? platform_cluster_count (platform) : 0;
    double *bytes = (double *) calloc (n * n + 1, sizeof (double));
    double *pace = (double *) calloc (clusters * clusters + 1,
                                      sizeof (double));
    size_t *cluster = (size_t *) calloc (n + 1, sizeof (size_t));
    assert (bytes && pace && cluster);
    s_handoff_traffic (self, bytes);
    bool known = platform != NULL;
    for (size_t i = 0; known && i < n; i++) {
        int index = platform_cluster_index (platform,
                                            self->tasks [i].daemon.cluster);
        known = index >= 0;
        cluster [i] = known ? (size_t) index : 0;
    }
    //  Every task in one cluster when the model does not know them all:
    //  nothing is scheduled then
    if (!known)
        memset (cluster, 0, n * sizeof (size_t));
    double beta = 0;
    size_t k = 0;               //  The drain's rule, below
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = 0; b < clusters; b++) {
            double mbps = platform_bandwidth_mbps (platform, a, b);
            pace [a * clusters + b] = mbps > 0 ? 8 / (mbps * 1e6) : 0;
            if (a != b && platform_latency_us (platform, a, b) / 1e6 > beta)
                beta = platform_latency_us (platform, a, b) / 1e6;
        }
    //  The drain's rule (measured, else the KPBS limit, else as many
    //  transfers as one cluster's own links take to fill the link out),
    //  the least of them
    for (size_t a = 0; a < clusters; a++) {
        size_t out;
        double mbps, latency_us;
        if (s_backbone_out (self, platform_cluster_name (platform, a), &out,
                            &mbps, &latency_us))
            k = k == 0 || out < k ? out : k;
    }
    free (self->handoff_step);
    self->handoff_step = (size_t *) calloc (n * n + 1, sizeof (size_t));
    assert (self->handoff_step);
    spawner_handoff_plan_t plan;
    spawner_handoff_plan (spawner_job_rebalance_schedule (self->job), bytes,
                          cluster, n, clusters ? pace : bytes,
                          clusters ? clusters : 1, k ? k : 1, beta,
                          self->handoff_step, &plan);
    spawner_events_write (self->events, "rebalance_schedule",
        ",\"schedule\":\"%s\",\"used\":\"%s\",\"steps\":%zu,\"k\":%zu,"
        "\"beta_s\":%.6f,\"transfers_between_clusters\":%zu,"
        "\"bytes_between_clusters\":%.0f,\"predicted_scheduled_s\":%.6f,"
        "\"predicted_at_once_s\":%.6f",
        spawner_job_rebalance_schedule (self->job), plan.used, plan.steps,
        k ? k : 1, beta, plan.transfers, plan.bytes, plan.scheduled_s,
        plan.at_once_s);
    free (bytes);
    free (pace);
    free (cluster);
}

//  The snapshot is in: keep the iterate, take the new rows, and assign
//  every task again where it runs.
static void
s_reassign_all (server_t *self)
{
    s_keep_iterate (self);
    int64_t unknowns = self->rebalance_unknowns;
    self->rebalance_sent = 0;
    //  Every task goes on from one iteration: synchronous tasks wait for
    //  their neighbours' previous one, and job/max_iterations still holds.
    int64_t least = INT64_MAX;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].iteration < least)
            least = self->tasks [i].iteration;
    self->rebalance_iteration = least > 1 ? least : 1;
    //  Each daemon keeps its block of the snapshot: with direct handoff
    //  the new tasks ask the old cut's owners for their parts of it.
    bool direct = spawner_job_rebalance_direct (self->job);
    free (self->handoff_first);
    self->handoff_first = (int64_t *) malloc ((self->task_count + 1)
                                              * sizeof (int64_t));
    assert (self->handoff_first);
    memcpy (self->handoff_first, self->first_row,
            (self->task_count + 1) * sizeof (int64_t));
    memcpy (self->first_row, self->rebalance_first,
            (self->task_count + 1) * sizeof (int64_t));
    if (direct)
        s_plan_handoff (self);
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_task_t *task = &self->tasks [i];
        //  A task waiting for a daemon gets its epoch, rows and the
        //  iterate when it is placed (s_place, s_task_data)
        task->generation_epoch = task->epoch + 1;
        task->handoff = false;
        if (task->phase == SPAWNER_TASK_WAITING)
            continue;
        task->handoff = direct;
        s_assign_again (self, i);
    }
    spawner_verify_abandon (self->verify);
    self->rebalance = REBALANCE_ASSIGNING;
    self->rebalance_assigned = zclock_mono ();
    self->rebalanced_here = true;
    spawner_events_write (self->events, "rebalance_assign", ",\"iteration\":"
                          "%" PRId64 ",\"unknowns\":%" PRId64 ",\"handoff\":"
                          "\"%s\"", self->rebalance_iteration, unknowns,
                          direct ? "direct" : "spawner");
}

//  Every task accepted its new rows: they start together, each told
//  where every other runs (the ASSIGNs of some named the old daemons of
//  tasks replaced while assigning; a REMAP a task knows already is a
//  no-op).
static void
s_start_generation (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        s_announce_move (self, i);
    for (size_t i = 0; i < self->task_count; i++)
        s_send_start (self, i);
    s_drain_settle_again (self);
    self->rebalance = REBALANCE_SETTLING;
    self->rebalance_pause = zclock_mono () - self->rebalance_assigned;
    self->rebalance_resumed = false;
}

//  The tasks stood still from their new ASSIGN until every one iterated
//  again, not until START: after START each sets up its exchange and
//  solves its first iteration on its new rows.  Counted to START, a
//  pause was 2.2 s while a task sat 15 s without iterating, and auto
//  looked again 9 x too soon.
static void
s_note_resumed (server_t *self)
{
    if (self->rebalance_resumed || !s_all_iterating (self))
        return;
    self->rebalance_pause = zclock_mono () - self->rebalance_assigned;
    self->rebalance_resumed = true;
}

//  Every task checkpointed on its new rows: the iterate is no longer
//  needed to restore any of them.
static void
s_end_rebalance (server_t *self)
{
    int64_t now = zclock_mono ();
    double seconds = (now - self->rebalance_started) / 1000.0;
    int64_t wait = (REBALANCE_AUTO_COST_FACTOR * self->rebalance_pause)
                 << self->auto_backoff;
    self->next_rebalance_check = now + wait;
    char *rows = s_rows_json (self, self->first_row);
    spawner_events_write (self->events, "rebalance_done", ",\"seconds\":"
                          "%.3f,\"paused_seconds\":%.3f,\"rows\":%s,"
                          "\"iteration\":%" PRId64 ",\"next_auto_seconds\":"
                          "%.3f,\"iterate_sent\":%" PRId64, seconds,
                          self->rebalance_pause / 1000.0, rows,
                          self->rebalance_iteration, wait / 1000.0,
                          self->rebalance_sent);
    zsys_notice ("spawner: job %s rebalanced in %.1f s", self->id, seconds);
    free (rows);
    free (self->rebalance_x);
    self->rebalance_x = NULL;
    free (self->handoff_first);
    self->handoff_first = NULL;
    free (self->handoff_step);
    self->handoff_step = NULL;
    for (size_t i = 0; i < self->task_count; i++)
        self->tasks [i].handoff = false;
    self->rebalance = REBALANCE_NONE;
    self->rebalances++;
}

//  job/rebalance = auto: look at the rates once a second, when nothing
//  else moves the tasks.
static void
s_rebalance_auto (server_t *self, int64_t now)
{
    if (!spawner_job_rebalance_auto (self->job) || *self->draining
    ||  now < self->next_rebalance_check || !s_rates_known (self))
        return;
    self->next_rebalance_check = now + PROGRESS_EVENT_MSEC;
    char answer [512];
    s_decide_rebalance (self, "auto", answer, sizeof answer);
}

//  The iterate comes with a snapshot: one being gathered serves (it is
//  checked all the same), else one begins once every task iterates; an
//  abandoned one (a task moved) is begun again.
static void
s_gather_iterate (server_t *self)
{
    int64_t flying = spawner_verify_snapshot (self->verify);
    if (self->rebalance_snapshot
    &&  spawner_verify_last_checked (self->verify)
        == self->rebalance_snapshot)
        s_reassign_all (self);
    else
    if (flying)
        self->rebalance_snapshot = flying;
    else
    if (s_all_iterating (self)) {
        s_begin_snapshot (self);
        self->rebalance_snapshot = spawner_verify_snapshot (self->verify);
    }
}

//  A rebalance's phases, one step a pass.
static void
s_rebalance_step (server_t *self, int64_t now)
{
    switch (self->rebalance) {
        case REBALANCE_NONE:
            s_rebalance_auto (self, now);
            break;
        case REBALANCE_GATHERING:
            if (self->verified)
                break;          //  The snapshot passed: the job ends
            s_gather_iterate (self);
            break;
        case REBALANCE_ASSIGNING:
            if (s_all_accepted (self))
                s_start_generation (self);
            break;
        case REBALANCE_SETTLING:
            s_note_resumed (self);
            //  Task by task: under crashes every few seconds, a count
            //  that every loss restarted never ended
            if (s_drain_settled (self, now, NULL))
                s_end_rebalance (self);
            break;
    }
}

//  Anyone who can reach the status endpoint may ask where the job stands;
//  only a CANCEL sealed with the job key (its sender holds the job's
//  secret) ends it.  Anything else is counted and dropped.
static void
s_recv_status (server_t *self)
{
    char reason [256], sender [128];
    jace_msg_t *msg = jace_msg_recv (self->status, reason, sizeof reason,
                                     sender, sizeof sender);
    jace_msg_type_t type = msg ? jace_msg_type (msg) : 0;
    bool ours = msg && streq (jace_msg_job (msg), self->id);
    bool cancel = ours && type == JACE_MSG_CANCEL;
    bool drain = ours && type == JACE_MSG_DRAIN;
    bool rebalance = ours && type == JACE_MSG_REBALANCE;
    if ((cancel || drain || rebalance)
    &&  !spawner_secret_check (self->security, msg, &self->job_key,
                               "spawner"))
        s_refuse_request (self, msg, "%s refused: not sealed with the key "
                          "of the job's secret", jace_msg_type_name (type));
    else
    if (drain)
        s_start_drain (self, &msg);
    else
    if (rebalance)
        s_start_rebalance (self, msg);
    else
    if (cancel) {
        zsys_notice ("spawner: job %s cancelled by %s: %s", self->id,
                     jace_msg_sender (msg), jace_msg_reason (msg));
        s_fail (self, "cancelled by %s%s%s", *jace_msg_sender (msg)
                ? jace_msg_sender (msg) : sender, *jace_msg_reason (msg)
                ? ": " : "", jace_msg_reason (msg));
        s_status_reply (self, msg);
    }
    else
    if (type == JACE_MSG_STATUS)
        s_status_reply (self, msg);
    else {
        self->malformed++;
        zsys_warning ("spawner: dropped %s from %s: %s (%" PRIu64
                      " bad messages so far)", msg ? jace_msg_type_name (
                      type) : "message", sender, msg ? "not a STATUS, "
                      "CANCEL, DRAIN or REBALANCE of this job" : reason,
                      self->malformed);
    }
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  The poll set

static void
s_add_item (server_t *self, zsock_t *sock, int64_t owner)
{
    self->items [self->item_count] = (zmq_pollitem_t) {
        .socket = zsock_resolve (sock), .events = ZMQ_POLLIN };
    self->item_owner [self->item_count++] = owner;
}

static void
s_rebuild_poll (server_t *self)
{
    size_t most = 3 + 2 * self->task_count + self->fenced_count;
    self->items = (zmq_pollitem_t *) realloc (self->items,
                                              most * sizeof (zmq_pollitem_t));
    self->item_owner = (int64_t *) realloc (self->item_owner,
                                            most * sizeof (int64_t));
    assert (self->items && self->item_owner);
    self->item_count = 0;
    s_add_item (self, self->pipe, ITEM_PIPE);
    if (self->lease)
        s_add_item (self, spawner_lease_socket (self->lease),
                    ITEM_SUPERNODE);
    if (self->status)
        s_add_item (self, self->status, ITEM_STATUS);
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].link)
            s_add_item (self, self->tasks [i].link, (int64_t) i);
    for (size_t i = 0; i < self->fenced_count; i++)
        s_add_item (self, self->fenced [i].link, ITEM_FENCED - (int64_t) i);
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].watch)
            s_add_item (self, spawner_watch_socket (self->tasks [i].watch),
                        ITEM_WATCH + (int64_t) i);
    self->items_dirty = false;
}

static void
s_recv_api (server_t *self)
{
    zmsg_t *request = zmsg_recv (self->pipe);
    if (!request)
        return;
    char *command = zmsg_popstr (request);
    if (streq (command, "$TERM"))
        self->terminated = true;
    else
    if (streq (command, "CANCEL")) {
        char *reason = zmsg_popstr (request);
        s_fail (self, "%s", reason && *reason ? reason : "cancelled");
        zstr_free (&reason);
    }
    else
    if (streq (command, "JOB"))
        zstr_send (self->pipe, self->id);
    else
        zsys_error ("spawner: invalid API command '%s'", command);
    zstr_free (&command);
    zmsg_destroy (&request);
}

//  An event of task `rank`'s link.  A daemon whose link dropped and whose
//  port then refused us is dead now, not after its silence: a killed
//  daemon's task waited the detector's bound (1 to 3.5 s measured) for
//  nothing.  That holds too for a daemon whose ASSIGN waits for its turn
//  in the scatter: left to the detector, it was declared dead 5.5-13 s
//  late, its turn and a whole bound after the kill.  A loss before the
//  job places its tasks is said again by each refused retry for
//  SPAWNER_WATCH_REFUSED_MSEC, then left to the detector.
static void
s_recv_watch (server_t *self, size_t rank)
{
    spawner_task_t *task = &self->tasks [rank];
    int64_t now = zclock_mono ();
    if (!spawner_watch_recv (task->watch, now)
    ||  self->state < JOB_ASSIGNING || self->state >= JOB_FINISHING
    ||  *self->failure || self->verified
    ||  task->phase == SPAWNER_TASK_WAITING)
        return;
    //  Before its ASSIGN the daemon owed us nothing: its silence is the
    //  time since its link dropped
    int64_t silent = task->assigned_at
                   ? s_silence (self, rank, now)
                   : spawner_watch_dropped_for (task->watch, now);
    s_lose_daemon (self, rank, silent, "its link dropped and its port "
                   "refused us: the process is gone");
}

//  Read what socket number `index` has, at most DRAIN_MAX messages.
static void
s_drain_item (server_t *self, size_t index)
{
    int64_t owner = self->item_owner [index];
    if (owner >= ITEM_WATCH) {
        s_recv_watch (self, (size_t) (owner - ITEM_WATCH));
        return;
    }
    for (int count = 0; count < DRAIN_MAX && !self->items_dirty; count++) {
        if (owner == ITEM_PIPE) {
            s_recv_api (self);
            return;             //  One command a pass is plenty
        }
        zsock_t *sock = owner == ITEM_SUPERNODE
                      ? spawner_lease_socket (self->lease)
                      : owner == ITEM_STATUS ? self->status
                      : owner <= ITEM_FENCED
                      ? self->fenced [ITEM_FENCED - owner].link
                      : self->tasks [owner].link;
        if (count > 0 && !(zsock_events (sock) & ZMQ_POLLIN))
            return;
        if (owner == ITEM_SUPERNODE) {
            if (spawner_lease_recv (self->lease) < 0)
                self->malformed++;
        }
        else
        if (owner == ITEM_STATUS)
            s_recv_status (self);
        else
        if (owner <= ITEM_FENCED)
            s_recv_fenced (self, (size_t) (ITEM_FENCED - owner));
        else
            s_recv_task (self, (size_t) owner);
    }
}

//  --------------------------------------------------------------------------
//  Timers

//  Every daemon hears from us every DAEMON_HEARTBEAT_MSEC: a daemon whose
//  spawner stays silent past job/orphan_timeout leaves the job.
static void
s_heartbeat_daemons (server_t *self, int64_t now)
{
    if (now < self->next_daemon_heartbeat)
        return;
    s_send_all (self, JACE_MSG_HEARTBEAT, 0, NULL);
    self->next_daemon_heartbeat = now + DAEMON_HEARTBEAT_MSEC;
}

static void
s_progress_events (server_t *self, int64_t now)
{
    if (now < self->next_progress_event || self->state < JOB_RUNNING)
        return;
    for (size_t i = 0; i < self->task_count; i++) {
        spawner_task_t *task = &self->tasks [i];
        spawner_events_write (self->events, "progress", ",\"task\":%zu,"
            "\"daemon\":\"%s\",\"iteration\":%" PRId64 ",\"change\":%.6e,"
            "\"state\":%" PRId64 ",\"held_bytes\":%" PRId64, i,
            task->daemon.id, task->iteration,
            isfinite (task->change) ? task->change : -1.0, task->state,
            task->held_bytes);
    }
    self->next_progress_event = now + PROGRESS_EVENT_MSEC;
}

//  Crash the daemons the job file's schedule picks for this moment, as a
//  power cut would: a CRASH makes the daemon exit at once.
static void
s_inject_faults (server_t *self, int64_t now)
{
    spawner_faults_t *faults = spawner_job_faults (self->job);
    if (self->resumed || !spawner_faults_enabled (faults))
        return;                 //  The schedule was the first spawner's
    int64_t min, max;
    spawner_console_iteration_range (self->tasks, self->task_count, &min,
                                     &max);
    size_t due = spawner_faults_due (faults, now - self->started, min, max);
    if (due == 0)
        return;
    int64_t *candidates = (int64_t *) zmalloc (self->task_count
                                               * sizeof (int64_t));
    int64_t *victims = (int64_t *) zmalloc ((due + self->task_count)
                                            * sizeof (int64_t));
    size_t candidate_count = 0;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].phase == SPAWNER_TASK_RUNNING
        &&  !self->tasks [i].restoring && !self->tasks [i].crash_sent)
            candidates [candidate_count++] = (int64_t) i;
    size_t picked = spawner_faults_pick (faults, candidates, candidate_count,
                                         due, victims);
    for (size_t i = 0; i < picked; i++) {
        spawner_task_t *task = &self->tasks [victims [i]];
        jace_msg_t *crash = s_job_msg (self, JACE_MSG_CRASH, task);
        s_send_job (self, &crash, task->link);
        task->crash_sent = true;    //  Not picked again before replaced
        self->crashes++;
        zsys_notice ("spawner: crashing daemon %s of task %" PRId64
                     " (job file schedule)", task->daemon.id, victims [i]);
        spawner_events_write (self->events, "crash", ",\"task\":%" PRId64
                              ",\"daemon\":\"%s\",\"how\":\"scheduled\","
                              "\"iteration\":%" PRId64, victims [i],
                              task->daemon.id, task->iteration);
    }
    if (picked < due)
        zsys_warning ("spawner: %zu crashes scheduled, only %zu daemons "
                      "could be picked", due, picked);
    free (candidates);
    free (victims);
}

//  --------------------------------------------------------------------------
//  Verification

static bool
s_all_settled (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].state != JACE_TASK_CONVERGED
        &&  self->tasks [i].state != JACE_TASK_EXHAUSTED)
            return false;
    return true;
}

static bool
s_all_iterating (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (!s_task_iterating (&self->tasks [i]))
            return false;
    return true;
}

static void
s_begin_snapshot (server_t *self)
{
    int64_t snapshot = spawner_verify_begin (self->verify);
    s_send_all (self, JACE_MSG_COLLECT, snapshot, NULL);
}

//  A job whose verified residual stopped falling ends now, saying what
//  was seen and what to try, rather than at its time cap.
//  Whether a link between the clusters the tasks run on is too slow for
//  them, on the platform as last measured; `why` says which.
static bool
s_stall_link (server_t *self, char *why, size_t why_size)
{
    platform_t *platform = spawner_mapper_platform (self->mapper);
    tig_t *tig = spawner_mapper_graph (self->mapper);
    if (!platform || !tig || tig_count (tig) != self->task_count)
        return false;
    size_t *cluster = (size_t *) zmalloc (self->task_count * sizeof (size_t));
    double *usecs = (double *) zmalloc (self->task_count * sizeof (double));
    for (size_t i = 0; i < self->task_count; i++) {
        int index = platform_cluster_index (platform,
                                            self->tasks [i].daemon.cluster);
        cluster [i] = index < 0 ? SIZE_MAX : (size_t) index;
        usecs [i] = self->tasks [i].usecs_per_iteration;
    }
    bool slow = spawner_stall_slow_link (platform, tig, cluster, usecs, why,
                                         why_size);
    free (cluster);
    free (usecs);
    return slow;
}

//  A relative residual this small stopped by rounding, not by the
//  method: double precision leaves about eps x cond(A) of it, and advice
//  to change solvers would send the user after the wrong cause.
#define STALL_ROUNDING_RESIDUAL 1e-12

static void
s_check_stall (server_t *self)
{
    int64_t window = spawner_job_stall_snapshots (self->job);
    double mark;
    bool growing;
    if (!spawner_verify_stalled (self->verify, window, &mark, &growing))
        return;
    double residual = spawner_verify_residual (self->verify);
    if (residual < STALL_ROUNDING_RESIDUAL) {
        s_fail (self, "the verified residual stopped falling at %.1e "
                "(%.1e before the last %" PRId64 " snapshots), about where "
                "double precision's rounding leaves it for this matrix: "
                "job/tolerance = %.1e asks for more than it can give; "
                "raise it", residual, mark, window,
                spawner_job_tolerance (self->job));
        return;
    }
    const jace_app_t *app = spawner_job_app (self->job);
    const char *advice = app->stall_advice
        ? app->stall_advice (spawner_job_problem (self->job)) : NULL;
    //  A link too slow for the iteration stalls it as a matrix it does
    //  not suit would: named first, the application's advice after it
    char link [640];
    bool slow = s_stall_link (self, link, sizeof link);
    s_fail (self, "%s%s%s: the verified residual %s over the last %" PRId64
            " snapshots (now %.3e, %.3e before them; tolerance %.1e, "
            "job/stall_snapshots = %" PRId64 ")", slow ? link : "",
            slow ? "; if not that, " : "",
            advice ? advice : "the iteration does not converge on this "
            "problem", growing ? "grows" : "stopped falling", window,
            spawner_verify_residual (self->verify), mark,
            spawner_job_tolerance (self->job), window);
}

static void
s_check_snapshot (server_t *self, int64_t now)
{
    bool passed = spawner_verify_check (self->verify, now);
    double residual = spawner_verify_residual (self->verify);
    spawner_events_write (self->events, "verification", ",\"snapshot\":%"
                          PRId64 ",\"residual\":%.6e,\"passed\":%s",
                          spawner_verify_count (self->verify),
                          isfinite (residual) ? residual : -1.0,
                          passed ? "true" : "false");
    if (passed) {
        self->verified = true;
        return;
    }
    size_t exhausted = 0;
    for (size_t i = 0; i < self->task_count; i++)
        exhausted += self->tasks [i].state == JACE_TASK_EXHAUSTED;
    if (exhausted == self->task_count)
        s_fail (self, "no convergence within job/max_iterations = %" PRId64
                ": relative residual %.3e, tolerance %.1e",
                spawner_job_max_iterations (self->job), residual,
                spawner_job_tolerance (self->job));
    else
    if (!isfinite (residual))
        s_fail (self, "the iteration diverges: the residual is not finite");
    else
        s_check_stall (self);
}

//  Snapshots: when every task converged locally (after the back-off of a
//  failed one), or every report/sample_seconds to follow the residual.
static void
s_step_verification (server_t *self, int64_t now)
{
    if (spawner_verify_snapshot (self->verify)) {
        if (spawner_verify_gathered (self->verify))
            s_check_snapshot (self, now);
        return;
    }
    if (!s_all_iterating (self))
        return;
    //  Without report/sample_seconds, a job that never settles is still
    //  sampled (STALL_SAMPLE_SECONDS) so that a stall is seen.
    double period = spawner_job_sample_seconds (self->job);
    if (period == 0 && spawner_job_stall_snapshots (self->job) > 0) {
        period = STALL_SAMPLE_SECONDS;
        //  The first one a period in: at the start the residual is the
        //  initial guess's, and the snapshot would only hold back the
        //  next one, that of convergence (spawner_verify's back-off)
        if (self->next_sample == 0)
            self->next_sample = now + (int64_t) (period * 1000);
    }
    bool sample = period > 0 && now >= self->next_sample;
    bool settled = s_all_settled (self)
                && spawner_verify_may_begin (self->verify, now);
    if (settled && !self->convergence_reported) {
        spawner_events_write (self->events, "convergence",
                              ",\"detected\":\"local\"");
        self->convergence_reported = true;
    }
    if (settled || sample)
        s_begin_snapshot (self);
    if (sample)
        self->next_sample = now + (int64_t) (period * 1000);
}

//  --------------------------------------------------------------------------
//  The job's state machine

static bool
s_all_accepted (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].phase != SPAWNER_TASK_ACCEPTED)
            return false;
    return true;
}

//  Whether every task runs, and a snapshot is out: the state a running
//  job shows.
static job_state_t
s_running_state (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].phase != SPAWNER_TASK_RUNNING)
            return JOB_REPLACING;
    return spawner_verify_snapshot (self->verify) ? JOB_VERIFYING
                                                  : JOB_RUNNING;
}

static void s_finish (server_t *self);

//  --------------------------------------------------------------------------
//  The live grid: listings, plans and refusals

//  True if some task waits for its mapping to choose its next daemon.
static bool
s_any_undecided (server_t *self)
{
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].phase == SPAWNER_TASK_WAITING
        &&  !*self->tasks [i].wanted)
            return true;
    return false;
}

//  When the latest of the tasks waiting for a choice lost its daemon, or 0.
static int64_t
s_latest_undecided_loss (server_t *self)
{
    int64_t latest = 0;
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].phase == SPAWNER_TASK_WAITING
        &&  !*self->tasks [i].wanted
        &&  self->tasks [i].assigned_at > latest)
            latest = self->tasks [i].assigned_at;
    return latest;
}

//  Daemons we asked for by id and someone else took: a plan being leased
//  is made again, a replacement chosen again.
static void
s_on_refused (server_t *self, int64_t now)
{
    zlist_t *refused = spawner_lease_refused (self->lease);
    if (zlist_size (refused) == 0) {
        zlist_destroy (&refused);
        return;
    }
    char ids [1024] = "";
    for (char *id = (char *) zlist_first (refused); id;
         id = (char *) zlist_next (refused)) {
        if (!zlist_exists (self->refused, id))
            zlist_append (self->refused, id);
        char escaped [2 * JACE_ID_MAX];
        spawner_events_escape (escaped, sizeof escaped, id);
        if (strlen (ids) + strlen (escaped) + 4 < sizeof ids)
            snprintf (ids + strlen (ids), sizeof ids - strlen (ids),
                      "%s\"%s\"", *ids ? "," : "", escaped);
        for (size_t i = 0; i < self->task_count; i++)
            if (streq (self->tasks [i].wanted, id)) {
                *self->tasks [i].wanted = 0;
                self->tasks [i].tried_listing = 0;
            }
    }
    zlist_destroy (&refused);
    self->refused_at = now;
    self->next_listing = now;   //  The grid changed under us: look again
    if (self->state == JOB_LEASING && self->planned) {
        self->planned = false;
        spawner_events_write (self->events, "replan", ",\"taken\":[%s]",
                              ids);
    }
}

//  Take the newest listing, and ask for the next one when it is due.
static void
s_refresh_listing (server_t *self, int64_t now)
{
    jace_msg_t *listing = spawner_lease_listing (self->lease);
    if (listing) {
        //  The round trip of the listing the plan waits for.
        if (spawner_mapper_listing_time (self->mapper) == 0)
            self->listing_msec = (zclock_usecs () - self->listing_asked_usec)
                               / 1000.0;
        spawner_mapper_set_listing (self->mapper, &listing, now);
        //  Asked after the last refusal (s_on_refused runs first in a
        //  pass), it says who took those daemons; not at once, though: a
        //  super-node lists its peers' daemons as their last PEER_STATE
        //  said, and a listing that still showed the taken daemons free
        //  made a tester's three jobs submitted together ask for them
        //  again, four times over.
        if (self->listing_asked_at >= self->refused_at + REFUSED_KEEP_MSEC)
            zlist_purge (self->refused);
    }
    bool needed = (self->state == JOB_LEASING && !self->planned)
               || s_any_undecided (self) || *self->draining;
    //  A daemon lost since the last listing was asked waits for a newer
    //  one (a replacement chooses on the grid as it is since the loss):
    //  ask now.  Held to LISTING_RETRY_MSEC, the second of two daemons
    //  lost 50 ms apart waited 250 ms for a spare the job already held.
    bool news = s_latest_undecided_loss (self) > self->listing_asked_at;
    if (!needed || (now < self->next_listing && !news))
        return;
    s_ask_listing (self, now);
}

static void
s_plan_event (server_t *self)
{
    const spawner_plan_t *plan = spawner_mapper_current (self->mapper);
    spawner_live_t *live = spawner_mapper_live (self->mapper);
    char spares [2048] = "";
    for (size_t i = 0; i < plan->spare_count; i++) {
        char id [2 * JACE_ID_MAX];
        spawner_events_escape (id, sizeof id,
                               spawner_live_node (live, plan->spares [i])->id);
        if (strlen (spares) + strlen (id) + 4 < sizeof spares)
            snprintf (spares + strlen (spares), sizeof spares
                      - strlen (spares), "%s\"%s\"", i ? "," : "", id);
    }
    spawner_events_write (self->events, "plan", ",\"mapping\":\"%s\","
        "\"hd\":%.4f,\"predicted_seconds\":%.6e,\"plan_ms\":%.3f,"
        "\"graph_ms\":%.3f,\"listing_ms\":%.3f,"
        "\"daemons\":%zu,\"clusters\":%zu,\"links_measured\":%zu,"
        "\"links\":%zu,\"skipped\":%zu,\"spares\":[%s],"
        "\"spares_wanted\":%" PRId64, plan->mapping,
        plan->hd,
        plan->predicted_seconds, plan->plan_msec,
        spawner_mapper_graph_msec (self->mapper), self->listing_msec,
        spawner_live_count (live),
        platform_cluster_count (spawner_live_platform (live)),
        spawner_live_links_measured (live), spawner_live_links_total (live),
        spawner_live_skipped (live, NULL), spares,
        spawner_job_spares (self->job));
    if ((int64_t) plan->spare_count < spawner_job_spares (self->job))
        zsys_warning ("spawner: job %s: %" PRId64 " spares wanted "
                      "(job/spares), the grid had free daemons for %zu",
                      self->id, spawner_job_spares (self->job),
                      plan->spare_count);
    const char *why;
    if (spawner_live_skipped (live, &why))
        zsys_warning ("spawner: job %s: %zu daemon records of the listing "
                      "left out, the first: %s", self->id,
                      spawner_live_skipped (live, NULL), why);
}

//  True if the lease holds every daemon of the plan.
static bool
s_plan_leased (server_t *self)
{
    for (size_t rank = 0; rank < self->task_count; rank++)
        if (spawner_lease_find_spare (self->lease, spawner_mapper_task_node (
                self->mapper, rank)->id) < 0)
            return false;
    return true;
}

//  A scatter/root that names no cluster of the grid fails the job before
//  any task is placed: a typo ran the job with no relay and every link
//  taken as equal, said only in a warning.  Returns -1 then.
static int
s_check_scatter_root (server_t *self)
{
    const char *root = spawner_job_scatter (self->job)->root;
    spawner_live_t *live = spawner_mapper_live (self->mapper);
    platform_t *platform = live ? spawner_live_platform (live) : NULL;
    if (!*root || !platform || platform_cluster_index (platform, root) >= 0)
        return 0;
    char names [512] = "";
    for (size_t c = 0; c < platform_cluster_count (platform); c++)
        snprintf (names + strlen (names), sizeof names - strlen (names),
                  "%s%s", c ? ", " : "", platform_cluster_name (platform, c));
    s_fail (self, "scatter/root = '%s' is no cluster of the grid (its "
            "clusters: %s)", root, names);
    return -1;
}

//  A plan that failed on a grid whose free daemons lack the job's
//  application says so: "4 free daemons" of 97 listed free sent users
//  looking for jobs that were not there.
static void
s_add_lacking_app (server_t *self, char *reason, size_t size)
{
    size_t lacking = spawner_lease_lacking_app (self->lease);
    size_t used = strlen (reason);
    if (lacking && used < size)
        snprintf (reason + used, size - used, "; %zu more free daemon%s "
                  "lack%s application '%s' (jace-daemon --apps)", lacking,
                  lacking == 1 ? "" : "s", lacking == 1 ? "s" : "",
                  spawner_job_app (self->job)->name);
}

//  LEASING: plan on the newest listing (again when a planned daemon was
//  taken), lease the plan's daemons by id, and place the tasks once they
//  are all held.
static void
s_lease_step (server_t *self, int64_t now)
{
    if (!self->planned) {
        int64_t listed = spawner_mapper_listing_time (self->mapper);
        if (listed == 0 || listed == self->plan_tried_at)
            return;             //  Planned on this listing already
        self->plan_tried_at = listed;
        char reason [256] = "";
        if (spawner_mapper_plan (self->mapper, self->lease, self->refused,
                                 reason, sizeof reason)) {
            s_add_lacking_app (self, reason, sizeof reason);
            if (!streq (reason, self->plan_failure)) {
                zsys_notice ("spawner: job %s cannot be placed yet: %s",
                             self->id, reason);
                //  The events said nothing while a job waited for daemons
                char escaped [512];
                spawner_events_escape (escaped, sizeof escaped, reason);
                spawner_events_write (self->events, "unplaced",
                                      ",\"reason\":\"%s\"", escaped);
            }
            snprintf (self->plan_failure, sizeof self->plan_failure, "%s",
                      reason);
            //  Listed while it waits: `cancel` could not reach it
            spawner_lease_announce (self->lease);
            return;
        }
        self->planned = true;
        *self->plan_failure = 0;
        s_plan_event (self);
        return;
    }
    if (spawner_lease_ids_wanted (self->lease) > 0 || !s_plan_leased (self))
        return;
    if (s_check_scatter_root (self))
        return;
    spawner_events_write (self->events, "lease", ",\"daemons\":%zu,"
                          "\"wanted\":%zu",
                          spawner_lease_spare_count (self->lease),
                          self->task_count
                          + spawner_mapper_current (self->mapper)
                            ->spare_count);
    s_place_all (self);
    self->state = JOB_ASSIGNING;
}

//  Everything the job does between messages; one pass over the tasks at
//  most, whatever state it is in.
static void
s_step (server_t *self, int64_t now)
{
    if (zsys_interrupted)
        s_fail (self, "interrupted by a signal");
    if (*self->failure || self->verified) {
        if (self->state < JOB_FINISHING) {
            self->state = JOB_FINISHING;
            s_finish (self);
        }
        return;
    }
    if (self->mapper) {
        s_on_refused (self, now);
        s_refresh_listing (self, now);
    }
    switch (self->state) {
        case JOB_LEASING: {
            s_lease_step (self, now);
            char silent [1024];
            if (self->state == JOB_LEASING
            &&  spawner_lease_unanswered (self->lease, self->started, now,
                                          silent, sizeof silent))
                s_fail (self, "%s", silent);
            else
            if (self->state == JOB_LEASING && now > self->lease_deadline) {
                //  Daemons other jobs hold (their spares too) come back
                //  when those end: waiting longer may be the answer
                size_t busy = self->mapper ? spawner_mapper_busy_elsewhere (
                    self->mapper, self->id) : 0;
                char others [160] = "";
                if (busy)
                    snprintf (others, sizeof others, "; %zu daemons are "
                              "held by other jobs, spares included: "
                              "raise job/reserve_timeout to wait for them",
                              busy);
                s_fail (self, "not enough daemons for job %s after %.0f s "
                        "(%zu held; %s): start more daemons, or lower "
                        "job/tasks or job/spares%s", self->id,
                        spawner_job_reserve_timeout (self->job),
                        spawner_lease_spare_count (self->lease),
                        *self->plan_failure ? self->plan_failure
                        : "the planned daemons were not all granted",
                        others);
            }
            return;
        }
        case JOB_ASSIGNING:
            s_stream_data (self);
            s_check_liveness (self, now);
            s_place_waiting (self, now);
            if (s_all_accepted (self))
                s_start_all (self);
            return;
        default:
            s_stream_data (self);
            s_check_liveness (self, now);
            s_drain_step (self, now);
            s_place_waiting (self, now);
            s_inject_faults (self, now);
            s_step_verification (self, now);
            s_rebalance_step (self, now);
            self->state = s_running_state (self);
            break;
    }
    double limit = spawner_job_max_seconds (self->job);
    if (now - self->started > (int64_t) (limit * 1000)) {
        //  No snapshot verified yet reads as such, not as a residual of
        //  inf, which looks like divergence
        double residual = spawner_verify_residual (self->verify);
        char last [64] = "no residual verified yet";
        if (isfinite (residual))
            snprintf (last, sizeof last, "last verified residual %.3e",
                      residual);
        s_fail (self, "wall-time limit job/max_seconds = %g s reached before "
                "convergence (%s, tolerance %.1e)", limit, last,
                spawner_job_tolerance (self->job));
    }
}

//  --------------------------------------------------------------------------
//  Outcome

//  The spawner's peak resident memory so far, MiB (the whole process:
//  in-process tests count their daemons too).
static double
s_peak_rss_mib (void)
{
    struct rusage usage;
    if (getrusage (RUSAGE_SELF, &usage))
        return -1;
    return usage.ru_maxrss / 1024.0;
}

static void
s_write_result (server_t *self, double seconds)
{
    int64_t min, max, unknowns;
    spawner_console_iteration_range (self->tasks, self->task_count, &min,
                                     &max);
    const double *x = spawner_verify_answer (self->verify, &unknowns);
    const jace_app_t *app = spawner_job_app (self->job);
    double error = app->error ? app->error (spawner_job_problem (self->job),
                                            x, unknowns)
                              : NAN;
    char error_field [64] = "";
    if (!isnan (error))
        snprintf (error_field, sizeof error_field, ",\"error\":%.6e", error);
    double residual = spawner_verify_residual (self->verify);
    spawner_events_write (self->events, "result", ",\"seconds\":%.3f,"
        "\"tasks\":%zu,\"iterations_min\":%" PRId64 ",\"iterations_max\":%"
        PRId64 ",\"unknowns\":%" PRId64 ",\"replacements\":%" PRId64
        ",\"crashes\":%" PRId64 ",\"drain_moves\":%" PRId64
        ",\"resume_moves\":%" PRId64 ",\"from_checkpoint\":%" PRId64
        ",\"from_initial\":%" PRId64 ",\"rebalances\":%" PRId64
        ",\"from_rebalance\":%" PRId64 ",\"from_drain\":%" PRId64
        "%s,\"tolerance\":%.3e,"
        "\"residual\":%.6e,\"peak_rss_mib\":%.1f", seconds,
        self->task_count, min, max, unknowns, self->replacements,
        self->crashes, self->drain_moves, self->resume_moves,
        self->from_checkpoint,
        self->from_initial, self->rebalances, self->from_rebalance,
        self->from_drain, error_field,
        spawner_job_tolerance (self->job), residual, s_peak_rss_mib ());
    spawner_summary_t summary = {
        .job = self->id, .application = app->name,
        .residual_meaning = app->residual_meaning, .unknowns = unknowns,
        .seconds = seconds, .residual = residual,
        .since_submit = self->resumed ? self->submitted_before + seconds
                                      : NAN,
        .tolerance = spawner_job_tolerance (self->job), .error = error,
        .crashes = self->crashes, .replacements = self->replacements,
        .drain_moves = self->drain_moves,
        .resume_moves = self->resume_moves,
        .draining = *self->draining && !self->drain_ran ? self->draining
                                                         : NULL,
        .drain_waiting = self->drain_waiting,
        .from_checkpoint = self->from_checkpoint,
        .from_initial = self->from_initial,
        .from_drain = self->from_drain,
        .out_path = self->options->out_path
    };
    spawner_console_summary (&summary, self->tasks, self->task_count);
}

//  Stop every daemon the job used (fenced ones again: they may have been
//  frozen when first told), give the lease back, write the outcome, and
//  tell the driver.
static void
s_finish (server_t *self)
{
    const char *why = *self->failure ? self->failure : "job done";
    s_send_all (self, JACE_MSG_STOP, 0, why);
    for (size_t i = 0; i < self->fenced_count; i++) {
        jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
        jace_msg_set_sender (stop, self->id);
        jace_msg_set_job (stop, self->id);
        jace_msg_set_reason (stop, why);
        s_send_job (self, &stop, self->fenced [i].link);
    }
    //  The STOPs must leave before the links close.
    for (size_t i = 0; i < self->task_count; i++)
        if (self->tasks [i].link)
            zsock_set_linger (self->tasks [i].link, 1000);
    for (size_t i = 0; i < self->fenced_count; i++)
        zsock_set_linger (self->fenced [i].link, 1000);
    //  A resume that failed before it took the job over does not end it:
    //  another resume may.
    if (self->lease)
        spawner_lease_release_all (self->lease, self->secret_ours
                                                ? &self->job_key : NULL);
    //  The job is over and its daemons told: nothing can use the secret
    //  any more.  (A spawner that crashes never gets here: resume needs
    //  the file.)
    if (self->secret_ours) {
        char outcome [sizeof self->failure + 16];
        snprintf (outcome, sizeof outcome, "%s%s",
                  *self->failure ? "failed: " : "", *self->failure
                  ? self->failure : "verified");
        jace_secret_retire (self->secrets_dir, self->id, outcome);
        s_note_drain (self, NULL);
    }
    double seconds = s_elapsed (self) / 1000.0;
    int64_t unknowns;
    const double *x = spawner_verify_answer (self->verify, &unknowns);
    if (!*self->failure && self->options->out_path) {
        char reason [512];
        if (spawner_output_write (self->options->out_path, x, unknowns,
                                  reason, sizeof reason))
            s_fail (self, "%s", reason);
    }
    spawner_console_finish (self->console, s_elapsed (self), self->tasks,
                            self->task_count, self->first_row,
                            spawner_verify_residual (self->verify),
                            spawner_job_tolerance (self->job),
                            *self->failure ? self->failure : NULL);
    int rc = 0;
    if (*self->failure) {
        char escaped [2048];
        spawner_events_escape (escaped, sizeof escaped, self->failure);
        if (self->events)       //  Else the failure is that it is not
            spawner_events_write (self->events, "failure", ",\"reason\":"
                                  "\"%s\",\"peak_rss_mib\":%.1f", escaped,
                                  s_peak_rss_mib ());
        fprintf (stderr, "jace-spawner: %s: job %s failed: %s\n",
                 self->options->job_file ? self->options->job_file : "job",
                 self->id, self->failure);
        rc = 1;
    }
    else
        s_write_result (self, seconds);
    self->state = JOB_DONE;
    zstr_sendm (self->pipe, "DONE");
    zstr_sendf (self->pipe, "%d", rc);
}

//  --------------------------------------------------------------------------
//  A resumed job: the tasks as its daemons describe them

//  The newest placement of each task from the daemons' answers, and the
//  block starts the job was cut with.  Returns 0, or -1 if the answers
//  are inconsistent.
static int
s_rebuild_tasks (server_t *self, zlist_t *answers)
{
    for (jace_msg_t *answer = (jace_msg_t *) zlist_first (answers); answer;
         answer = (jace_msg_t *) zlist_next (answers))
        for (size_t i = 0; !spawner_resume_off_cut (answer)
                           && i < jace_msg_node_count (answer); i++) {
            const jace_node_t *node = jace_msg_node (answer, i);
            if (node->task < 0 || node->task >= (int64_t) self->task_count)
                return -1;
            spawner_task_t *task = &self->tasks [node->task];
            if (node->epoch > task->epoch) {
                task->daemon = *node;
                task->epoch = node->epoch;
            }
        }
    zhash_t *params = spawner_job_params (self->job);
    for (size_t i = 0; i <= self->task_count; i++) {
        char key [64];
        snprintf (key, sizeof key, "block/first/%zu", i);
        const char *row = (const char *) zhash_lookup (params, key);
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

//  Task `rank`'s daemon answered on a rebalance's cut it never started
//  on, while the others run the old one (spawner_resume_off_cut): assign
//  it its rows of the old cut again there, as to a replacement, at an
//  epoch past the one it holds.  It restores from the copies of its state
//  the others' daemons keep, and starts when it accepts.
static int
s_reassign_off_cut (server_t *self, size_t rank, const jace_msg_t *answer)
{
    spawner_task_t *task = &self->tasks [rank];
    jace_node_t node = task->daemon;
    for (size_t i = 0; i < jace_msg_node_count (answer); i++)
        if (jace_msg_node (answer, i)->task == (int64_t) rank)
            node = *jace_msg_node (answer, i);
    if (jace_msg_epoch (answer) > task->epoch)
        task->epoch = jace_msg_epoch (answer);
    if (s_place (self, rank, &node))
        return -1;
    spawner_lease_adopt (self->lease, &node);
    task->generation_epoch = 0;
    task->restoring = true;
    zsys_notice ("spawner: task %zu on %s held a rebalance's rows it never "
                 "started on: assigned its old rows again (epoch %" PRId64
                 ")", rank, node.id, task->epoch);
    return 0;
}

//  Link to the daemon that answered with task `rank`'s newest placement,
//  and make it report to us.
static int
s_adopt_task (server_t *self, size_t rank, const jace_msg_t *answer)
{
    spawner_task_t *task = &self->tasks [rank];
    jace_node_t node = task->daemon;
    task->epoch--;              //  s_place gives it back its epoch
    if (s_place (self, rank, &node))
        return -1;
    spawner_lease_adopt (self->lease, &node);
    //  Copies older than its generation are of another cut: a later
    //  replacement of the task must not fetch them.
    const char *generation = jace_msg_param (answer,
                                             "block/generation_epoch");
    if (generation)
        task->generation_epoch = atoll (generation);
    jace_msg_t *adopt = s_job_msg (self, JACE_MSG_ADOPT, task);
    s_send_job (self, &adopt, task->link);
    task->phase = SPAWNER_TASK_RUNNING;
    task->assigned_at = zclock_mono ();
    if (jace_msg_payload_count (answer) == 1
    &&  jace_msg_payload_kind (answer, 0) == JACE_PAYLOAD_I64) {
        size_t count = jace_msg_payload_length (answer, 0);
        task->sources = (int64_t *) zmalloc ((count + 1) * sizeof (int64_t));
        jace_msg_payload_copy (answer, 0, task->sources);
        task->source_count = count;
        task->sources_known = true;
    }
    return 0;
}

//  Link to each daemon that answered with the newest placement of its
//  task and make it report to us; the other tasks are replaced, but for
//  those whose daemon answered off the cut, assigned again where they
//  are.  Returns the daemons adopted.
static size_t
s_adopt_tasks (server_t *self, zlist_t *answers, zlist_t *listed,
               size_t *reassigned)
{
    size_t adopted = 0;
    *reassigned = 0;
    for (jace_msg_t *answer = (jace_msg_t *) zlist_first (answers); answer;
         answer = (jace_msg_t *) zlist_next (answers)) {
        int64_t rank = jace_msg_task (answer);
        if (rank < 0 || rank >= (int64_t) self->task_count)
            continue;
        spawner_task_t *task = &self->tasks [rank];
        if (spawner_resume_off_cut (answer)) {
            if (!task->link && s_reassign_off_cut (self, (size_t) rank,
                                                   answer) == 0)
                (*reassigned)++;
            continue;
        }
        if (jace_msg_epoch (answer) == task->epoch && !task->link
        &&  s_adopt_task (self, (size_t) rank, answer) == 0)
            adopted++;
    }
    //  The dead spawner's STARTs may have died with it, still queued in
    //  its sockets: a task that accepted and never got one waits for ever,
    //  and so does every task's set-up exchange.  START every adopted
    //  task again; one already started ignores it.  Not one assigned
    //  again (still SENDING): it would start the rows it is taken off.
    for (size_t rank = 0; rank < self->task_count; rank++)
        if (self->tasks [rank].link
        &&  self->tasks [rank].phase == SPAWNER_TASK_RUNNING)
            s_send_start (self, rank);
    for (size_t rank = 0; rank < self->task_count; rank++)
        if (!self->tasks [rank].link) {
            self->tasks [rank].phase = SPAWNER_TASK_RUNNING;
            char id [JACE_ID_MAX];
            snprintf (id, sizeof id, "%s", self->tasks [rank].daemon.id);
            //  Not listed working for the job: the super-nodes forgot it,
            //  silent past their timeout while the job had no spawner.
            //  A failure of the job, not a daemon the resume let go.
            if (listed && !zlist_exists (listed, id))
                s_give_up_daemon (self, rank, "dead", -1, "gone from the "
                                  "grid while the job had no spawner");
            else {
                s_give_up_daemon (self, rank, "unadopted", -1,
                                  "did not answer the resume");
                self->resume_moves++;
            }
            //  Not dead to the mapping: if it lives, the resume told it to
            //  stop (spawner_resume_gather), and it may replace a task if
            //  the grid lists it free.  A spawner killed during the
            //  scatter left daemons leased but never assigned: free once
            //  its lease lapsed, and kept dead, they were not used again,
            //  and the resumed job failed "for want of daemons" beside
            //  five of them.
            zlist_remove (self->dead, id);
            spawner_lease_forget (self->lease, id);
        }
    self->state = JOB_REPLACING;
    return adopted;
}

//  A drain the dead spawner had begun goes on, from the note it left
//  beside the secret.  Tasks its steps moved already run elsewhere; those
//  still on the cluster move in new steps.
static void
s_resume_drain (server_t *self)
{
    char cluster [JACE_ID_MAX], reason [512];
    int found = spawner_resume_drain (self->secrets_dir, self->id, cluster,
                                      reason, sizeof reason);
    if (found < 0)
        zsys_warning ("spawner: %s; no drain is carried on", reason);
    if (found != 1)
        return;
    if (s_tasks_in (self, cluster) == 0) {
        zsys_notice ("spawner: the drain of cluster %s had moved every task",
                     cluster);
        s_note_drain (self, NULL);
    }
    else
        s_begin_drain (self, cluster, "the resume");
}

static void
s_resume (server_t *self, zlist_t *answers, zlist_t *listed)
{
    if (s_rebuild_tasks (self, answers)) {
        s_fail (self, "the daemons of job %s describe it inconsistently",
                self->id);
        return;
    }
    size_t reassigned;
    size_t adopted = s_adopt_tasks (self, answers, listed, &reassigned);
    //  From here on this spawner ends the job, and removes its secret.
    self->secret_ours = true;
    char *rows = s_rows_json (self, self->first_row);
    spawner_events_write (self->events, "resume", ",\"tasks\":%zu,"
                          "\"daemons\":%zu,\"answered\":%zu,"
                          "\"reassigned\":%zu,\"rows\":%s", self->task_count,
                          adopted, zlist_size (answers), reassigned, rows);
    free (rows);
    char again [128] = "";
    if (reassigned)
        snprintf (again, sizeof again, ", %zu assigned their old rows again "
                  "(a rebalance that never started)", reassigned);
    if (!self->options->quiet)
        fprintf (stderr, "jace-spawner: resumed job %s: %zu of its %zu tasks "
                 "adopted where they ran%s; %zu daemons answered\n",
                 self->id, adopted, self->task_count, again,
                 zlist_size (answers));
    s_resume_drain (self);
}

//  --------------------------------------------------------------------------

//  What the live table says the job does besides iterating: why it is
//  not placed yet, or a drain under way (NULL when neither)
static const char *
s_console_note (server_t *self, char *note, size_t size)
{
    if (!self->planned && *self->plan_failure) {
        snprintf (note, size, "waiting: %s", self->plan_failure);
        return note;
    }
    if (!*self->draining || self->drain_ran)
        return NULL;
    snprintf (note, size, "draining %s: %zu moved, %zu left%s%s",
              self->draining, self->drain_moved,
              s_tasks_in (self, self->draining),
              *self->drain_waiting ? ", waiting " : "",
              *self->drain_waiting ? self->drain_wait_note
              : self->drain_unsettled >= 0 ? ", waiting for checkpoints"
              : "");
    return note;
}

//  How long the next pass may wait: until the next timer, at most
//  PASS_MAX_MSEC.
static int64_t
s_next_wait (server_t *self, int64_t now)
{
    if (self->state == JOB_DONE)
        return -1;
    int64_t wait = PASS_MAX_MSEC;
    if (self->lease) {
        int64_t lease = spawner_lease_tick (self->lease, now);
        wait = lease < wait ? lease : wait;
    }
    //  Settled tasks report again only every 100 ms (PROGRESS_MSEC): the
    //  next snapshot after a failed one is our own timer.
    if (self->state >= JOB_RUNNING && self->state < JOB_FINISHING
    &&  s_all_settled (self)) {
        int64_t verify = spawner_verify_wait (self->verify, now);
        wait = verify >= 0 && verify < wait ? verify : wait;
    }
    char note [320];
    int64_t console = spawner_console_update (self->console,
        now - self->started, self->tasks, self->task_count, self->first_row,
        spawner_verify_count (self->verify),
        spawner_verify_residual (self->verify),
        s_console_note (self, note, sizeof note));
    return console < wait ? console : wait;
}

//  A pass of the state machine may leave work to the next one: a lease
//  that placed the tasks sends their ASSIGNs in the next state, a checked
//  snapshot finishes the job at the next pass.  Passes run until the
//  state holds, so that none of that waits for the poll's timeout (it
//  did, twice a job, PASS_MAX_MSEC each time).
static void
s_step_until_steady (server_t *self)
{
    for (int pass = 0; pass < 8 && self->state < JOB_DONE; pass++) {
        job_state_t state = self->state;
        bool verified = self->verified, failed = *self->failure != 0;
        s_step (self, zclock_mono ());
        if (self->state == state && self->verified == verified
        &&  (*self->failure != 0) == failed)
            break;
    }
}

void
spawner_server_actor (zsock_t *pipe, void *args)
{
    spawner_server_config_t *config = (spawner_server_config_t *) args;
    server_t *self = s_server_new (pipe, config);
    if (!*self->failure && config->adopted)
        s_resume (self, config->adopted, config->listed);
    zsock_signal (pipe, 0);
    while (!self->terminated) {
        int64_t now = zclock_mono ();
        if (self->state < JOB_FINISHING && self->lease) {
            s_heartbeat_daemons (self, now);
            s_progress_events (self, now);
        }
        int64_t wait = s_next_wait (self, now);
        char *moved = self->lease
                    ? spawner_lease_failover_event (self->lease) : NULL;
        if (moved) {
            spawner_events_write (self->events, "failover", ",\"from\":"
                                  "\"%s\",\"to\":\"%s\"", moved,
                                  spawner_lease_endpoint (self->lease));
            self->items_dirty = true;
            free (moved);
        }
        if (self->items_dirty)
            s_rebuild_poll (self);
        int ready = zmq_poll (self->items, (int) self->item_count,
                              (long) wait);
        if (ready < 0 && zmq_errno () == ETERM)
            break;
        now = zclock_mono ();
        spawner_detector_tick (self->detector, now, wait < 0 ? 0 : wait);
        for (size_t i = 0; ready > 0 && i < self->item_count
             && !self->items_dirty; i++)
            if (self->items [i].revents & ZMQ_POLLIN)
                s_drain_item (self, i);
        s_step_until_steady (self);
    }
    s_server_destroy (&self);
}

char *
spawner_server_job_id (zactor_t *server)
{
    assert (server);
    zstr_send (server, "JOB");
    return zstr_recv (server);
}
