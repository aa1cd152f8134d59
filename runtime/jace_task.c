/*  =========================================================================
    jace_task - the task API: what an application writer implements and
    calls

    The runtime side of a task: its identity and parameters from ASSIGN,
    one PUSH socket per neighbour it sends to (connected on first use, with
    a small high-water mark so stale vectors never queue up), and the
    newest vector received from each neighbour.
    =========================================================================
*/
#include "jace_task.h"
#include "jace_task_runtime.h"
#include "jace_exchange.h"

#include <errno.h>
#include <math.h>

//  Bytes queued per link before sends are dropped: a newer vector is
//  always coming, so a deep queue would only deliver stale values late,
//  but a shallow one drops vectors the wire could have carried.
#define LINK_QUEUE_BYTES (8 * 1024 * 1024)
#define LINK_QUEUE_MIN 4
#define LINK_QUEUE_MAX 1000
//  Queue of a link first used for an empty request, vector size unknown.
#define LINK_QUEUE_UNKNOWN 16
//  A fresh link (asynchronous values to another cluster) keeps one vector
//  queued and a socket buffer of two, at least FRESH_BUFFER_MIN bytes:
//  what TCP holds unacknowledged is what a slow link delivers late.  The
//  kernel doubles the figure; 32 KiB then hold 26 ms of a 20 Mb/s link.
#define FRESH_QUEUE 1
#define FRESH_BUFFER_MIN (32 * 1024)

//  Iterations per second no real task reaches: a DATA whose iteration is
//  further ahead of the sender's last one than this rate allows (plus one
//  second of slack for queueing and latency) is refused, so no one holding
//  the job key can pin a neighbour's values with an iteration like 2^62.
//  Every iteration of a daemon's worker polls its data socket and pipe
//  (each a ZeroMQ system call, about 1 us: bench_latency) and a DATA it
//  sends is encoded, sealed (keyed BLAKE2b) and queued, so a task with
//  neighbours stays well under a million iterations a second whatever its
//  size; the fastest we measured (one unknown per task) do tens of
//  thousands.  A sender caught up at this rate for a whole year would be
//  at about 2^45: far from what pins a job for good.
#define MAX_ITERATION_RATE 1000000

//  The copies whose exchange counts we remember: enough to know how many
//  rounds a copy's pieces must cover (s_first_saved_round).
#define COPY_ROUNDS_KEPT 3

//  A vector of one task's values: the newest received from a neighbour,
//  or the newest a full link refused to take to it.
typedef struct {
    double *values;             //  Values, owned
    size_t capacity;            //  Allocated values
    size_t count;               //  Values held
    int64_t first;              //  First unknown they stand for
    int64_t iteration;          //  Sender's iteration, -1 if none yet
    int64_t epoch;              //  Sender's epoch
} vector_t;

//  A list of unknowns one task asks another for.
typedef struct {
    int64_t *indices;           //  Global unknown numbers, owned
    size_t count;               //  Entries
    bool known;                 //  Set (sent by us, or received)
} request_t;

//  One other task of the job.
typedef struct {
    jace_node_t node;           //  Its daemon (data endpoint, key, epoch)
    zsock_t *link;              //  PUSH to its data endpoint, or NULL
    zsock_t *fresh;             //  PUSH for values only, when they must
                                //  not queue (jace_task_keep_remote_fresh)
    vector_t newest;            //  Newest values received from it
    vector_t unsent;            //  Our newest values for it that its full
                                //  link refused, iteration -1 if none
    int64_t heard_iteration;    //  Iteration of its last accepted DATA
    int64_t heard_msec;         //  When it came (zclock_mono), 0 if never
    int64_t row;                //  First row it owns
    request_t asked;            //  What we ask it for
    request_t requested;        //  What it asks us for
    bool sink;                  //  START named it as asking us for values
} peer_task_t;

struct _jace_task_t {
    char job [JACE_ID_MAX];     //  Job id
    int64_t rank;               //  Our task number
    int64_t count;              //  Tasks in the job
    int64_t epoch;              //  Our epoch (bumped on each placement)
    int64_t iteration;          //  Completed iterations
    bool restored;              //  Resumes a job under way (a checkpoint,
                                //  an iterate, or a replacement's start)
    double change;              //  Local change of the last iteration
    double work;                //  Work reported since last taken
    bool converged;             //  The application says the job's answer
                                //  meets its tolerance (this iteration)
    char failure [320];         //  Why iterate gave up, if it said ("")
    int source_wait_msec;       //  Async: longest wait for every source
    int64_t first_row;          //  First row we own
    int64_t row_count;          //  Rows we own
    int64_t rows;               //  Rows in the job
    zhash_t *params;            //  Job parameters, owned
    peer_task_t *peers;         //  One per task (ours unused)
    jace_security_t *security;  //  Borrowed; keys for links, or plain
    jace_msg_t *assign;         //  The ASSIGN, for its payload blocks
    int64_t preload_block;      //  Its first payload holding the iterate
                                //  (a rebalance), or -1
    int64_t preload_payloads;   //  1: every unknown; 3: our rows, and the
                                //  unknowns we read of the others' with
                                //  their values
    int64_t preload_iteration;  //  The iteration that iterate goes on from
    jace_key_t job_key;         //  Seals every message of the job
    jace_msg_t *data;           //  DATA fields every vector is sent with
    jace_shaper_t *shaper;      //  Borrowed emulated network, or NULL
    bool keep_remote_fresh;     //  Values to other clusters: fresh links
    uint64_t dropped;           //  Sends dropped on full links
    uint64_t stale;             //  Received vectors discarded as stale
    uint64_t out_of_reach;      //  Refused: iteration too far ahead
    int64_t started_msec;       //  When the job started, as we reckon it
    bool sinks_given;           //  START listed our sinks: trade request
                                //  lists with neighbours only
    jace_exchange_t *exchange;  //  Our side of the job's total exchanges:
                                //  round 0 trades request lists, round k
                                //  is the k-th jace_task_alltoallv
    int64_t exchanges;          //  jace_task_alltoallv calls completed
    int64_t copy_rounds [COPY_ROUNDS_KEPT];
                                //  Exchange counts of our last copies,
                                //  oldest first
    size_t copy_round_count;    //  ... how many (fewer before the third)
    size_t send_failures;       //  Sends that failed (counted per round 0)
    jace_task_wait_fn *wait;    //  The daemon's wait for input, or NULL
    void *wait_arg;             //  Its argument
    int64_t waited_usecs;       //  Time jace_task_alltoallv spent waiting
};

const char *const jace_task_runtime_keys [] = {
    "job/mode",                     //  daemon_worker: async or sync
    "job/tolerance",                //  daemon_worker: local convergence
    "job/local_tolerance",          //  daemon_worker: overrides it
    "job/converge_iterations",      //  daemon_worker
    "job/max_iterations",           //  daemon_worker
    "job/orphan_timeout",           //  daemon_server
    "checkpoint/copies",            //  daemon_worker
    "checkpoint/offsite",           //  daemon_worker
    "checkpoint/every_iterations",  //  daemon_worker
    "checkpoint/every_seconds",     //  daemon_worker
    "exchange/algorithm",           //  daemon_worker
    "exchange/fallback_seconds",    //  here
    "exchange/log_mib",             //  here
    "scatter/root",                 //  daemon_server
    NULL
};

const char *const jace_task_exchange_algorithms [] = {
    "lg", "direct", "flat", NULL
};

//  A key's value is one of the NULL-terminated names, or unset.
static int
s_check_choice (zhash_t *params, const char *key, const char *const *names,
                char *reason, size_t reason_size)
{
    const char *text = (const char *) zhash_lookup (params, key);
    if (!text)
        return 0;
    char known [128] = "";
    for (size_t index = 0; names [index]; index++) {
        if (streq (text, names [index]))
            return 0;
        snprintf (known + strlen (known), sizeof known - strlen (known),
                  "%s%s", index ? ", " : "", names [index]);
    }
    snprintf (reason, reason_size, "%s = '%s' is unknown (known: %s)", key,
              text, known);
    return -1;
}

int
jace_task_runtime_check (zhash_t *params, char *reason, size_t reason_size)
{
    assert (params);
    static const char *const modes [] = { "async", "sync", NULL };
    double value;
    return s_check_choice (params, "job/mode", modes, reason, reason_size)
        || s_check_choice (params, "exchange/algorithm",
                           jace_task_exchange_algorithms, reason,
                           reason_size)
        || jace_param_number (params, "job/local_tolerance", 1e-6, 1e-300,
                              1, &value, reason, reason_size)
        || jace_param_integer (params, "job/converge_iterations", 10, 1,
                               1e9, &value, reason, reason_size)
        || jace_param_number (params, "exchange/fallback_seconds", 5, 0.01,
                              86400, &value, reason, reason_size)
        || jace_param_number (params, "exchange/log_mib", 256, 0,
                              1024 * 1024, &value, reason, reason_size)
        ? -1 : 0;
}

//  --------------------------------------------------------------------------
//  Row ownership comes in the params: "block/rows" rows in the job, and
//  "block/first/R" the first row of task R, for R = 0 .. count (the last
//  one equal to block/rows).

static int
s_read_layout (jace_task_t *self, jace_msg_t *assign, char *reason,
               size_t reason_size)
{
    self->rows = jace_task_param_int (self, "block/rows", -1);
    if (self->rows < self->count) {
        snprintf (reason, reason_size, "ASSIGN lacks block/rows");
        return -1;
    }
    for (int64_t rank = 0; rank <= self->count; rank++) {
        char key [64];
        snprintf (key, sizeof key, "block/first/%" PRId64, rank);
        int64_t row = jace_task_param_int (self, key, -1);
        int64_t previous = rank ? self->peers [rank - 1].row : 0;
        if (row < previous || row > self->rows
        ||  (rank == self->count && row != self->rows)) {
            snprintf (reason, reason_size, "ASSIGN has bad %s", key);
            return -1;
        }
        if (rank < self->count)
            self->peers [rank].row = row;
    }
    self->first_row = self->peers [self->rank].row;
    self->row_count = jace_task_row_of (self, self->rank + 1)
                    - self->first_row;
    return 0;
}

//  A rebalance sends the job's iterate with the ASSIGN, after the task's
//  blocks, and "block/restore_iteration" the iteration it goes on from;
//  the application never sees those payloads among its blocks.  Either
//  every unknown of the job in one payload, or, when the application
//  says which unknowns a task reads ("block/restore_reads" = their
//  count), three: our rows' unknowns, the numbers of those we read of
//  the others' (I64), and their values.
static int
s_read_preload (jace_task_t *self, jace_msg_t *assign, char *reason,
                size_t reason_size)
{
    self->preload_block = -1;
    self->preload_payloads = 0;
    if (!jace_task_param (self, "block/restore_iteration"))
        return 0;
    size_t blocks = jace_msg_payload_count (assign);
    int64_t per_row = jace_task_param_int (self, "block/unknowns_per_row", 1);
    int64_t unknowns = self->rows * per_row;
    int64_t reads = jace_task_param_int (self, "block/restore_reads", -1);
    bool sparse = jace_task_param (self, "block/restore_reads") != NULL;
    self->preload_iteration = jace_task_param_int (self,
        "block/restore_iteration", -1);
    size_t payloads = sparse ? 3 : 1;
    bool fits = blocks >= payloads && self->preload_iteration >= 0;
    if (fits && !sparse)
        fits = jace_msg_payload_kind (assign, blocks - 1) == JACE_PAYLOAD_F64
            && (int64_t) jace_msg_payload_length (assign, blocks - 1)
               == unknowns;
    if (fits && sparse)
        fits = reads >= 0
            && jace_msg_payload_kind (assign, blocks - 3) == JACE_PAYLOAD_F64
            && (int64_t) jace_msg_payload_length (assign, blocks - 3)
               == self->row_count * per_row
            && jace_msg_payload_kind (assign, blocks - 2) == JACE_PAYLOAD_I64
            && (int64_t) jace_msg_payload_length (assign, blocks - 2) == reads
            && jace_msg_payload_kind (assign, blocks - 1) == JACE_PAYLOAD_F64
            && (int64_t) jace_msg_payload_length (assign, blocks - 1) == reads;
    if (!fits) {
        snprintf (reason, reason_size, "ASSIGN with block/restore_iteration "
                  "lacks the job's iterate as its last payloads (the %" PRId64
                  " unknowns, or our rows' and the %" PRId64 " we read), or "
                  "the iteration is not a number >= 0", unknowns, reads);
        return -1;
    }
    self->preload_block = (int64_t) (blocks - payloads);
    self->preload_payloads = (int64_t) payloads;
    return 0;
}

static int
s_read_table (jace_task_t *self, jace_msg_t *assign, char *reason,
              size_t reason_size)
{
    if ((int64_t) jace_msg_node_count (assign) != self->count) {
        snprintf (reason, reason_size, "ASSIGN lists %zu tasks, job has %"
                  PRId64, jace_msg_node_count (assign), self->count);
        return -1;
    }
    for (size_t i = 0; i < jace_msg_node_count (assign); i++) {
        const jace_node_t *node = jace_msg_node (assign, i);
        if (node->task < 0 || node->task >= self->count
        ||  self->peers [node->task].node.id [0]) {
            snprintf (reason, reason_size, "ASSIGN table has bad task %"
                      PRId64, node->task);
            return -1;
        }
        self->peers [node->task].node = *node;
        self->peers [node->task].newest.iteration = -1;
        self->peers [node->task].unsent.iteration = -1;
    }
    return 0;
}

static int s_exchange_send (void *arg, int64_t to, jace_msg_t **msg_p);
static void s_exchange_piece (void *arg, int64_t round, int64_t source,
                              const void *bytes, size_t size);

//  Our side of the job's exchanges.  exchange/fallback_seconds bounds a
//  round's wait on its schedule before it pulls what it misses;
//  exchange/log_mib bounds the pieces kept for others' pulls.
static int
s_new_exchange (jace_task_t *self, char *reason, size_t reason_size)
{
    double fallback, log_mib;
    if (jace_param_number (self->params, "exchange/fallback_seconds", 5,
                           0.01, 86400, &fallback, reason, reason_size)
    ||  jace_param_number (self->params, "exchange/log_mib", 256, 0,
                           1024 * 1024, &log_mib, reason, reason_size))
        return -1;
    self->exchange = jace_exchange_new (self->job, &self->job_key,
                                        self->rank, self->count,
                                        s_exchange_send, s_exchange_piece,
                                        self);
    jace_exchange_set_epoch (self->exchange, self->epoch);
    jace_exchange_set_fallback (self->exchange, (int64_t) (fallback * 1000));
    jace_exchange_set_log_limit (self->exchange,
                                 (size_t) (log_mib * 1024 * 1024));
    return 0;
}

jace_task_t *
jace_task_new (jace_msg_t **assign_p, jace_security_t *security,
               char *reason, size_t reason_size)
{
    assert (assign_p && *assign_p);
    jace_msg_t *assign = *assign_p;
    *assign_p = NULL;
    jace_task_t *self = (jace_task_t *) zmalloc (sizeof *self);
    self->assign = assign;
    snprintf (self->job, sizeof self->job, "%s", jace_msg_job (assign));
    self->rank = jace_msg_task (assign);
    self->count = jace_msg_count (assign);
    self->epoch = jace_msg_epoch (assign);
    self->security = security;
    self->params = zhash_dup (jace_msg_params (assign));
    self->data = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (self->data, self->job);
    jace_msg_set_task (self->data, self->rank);
    //  A replacement placed late in a long job is told how long the job
    //  has run (job/elapsed_seconds), so that its neighbours' iterations
    //  are within reach from the first DATA; without it, from now.
    double elapsed = jace_task_param_double (self, "job/elapsed_seconds", 0);
    if (!(elapsed >= 0 && elapsed <= 1e9))
        elapsed = 0;
    self->started_msec = zclock_mono () - (int64_t) (elapsed * 1000);
    if (jace_key_decode (&self->job_key, jace_msg_key (assign))) {
        snprintf (reason, reason_size, "ASSIGN without a valid job key");
        jace_task_destroy (&self);
        return NULL;
    }
    if (self->count < 1 || self->count > JACE_NODES_MAX
    ||  self->rank < 0 || self->rank >= self->count) {
        snprintf (reason, reason_size, "ASSIGN of task %" PRId64 " of %"
                  PRId64, self->rank, self->count);
        jace_task_destroy (&self);
        return NULL;
    }
    self->peers = (peer_task_t *) zmalloc (self->count * sizeof (peer_task_t));
    if (s_read_table (self, assign, reason, reason_size)
    ||  s_read_layout (self, assign, reason, reason_size)
    ||  s_read_preload (self, assign, reason, reason_size)
    ||  jace_task_runtime_check (self->params, reason, reason_size)
    ||  s_new_exchange (self, reason, reason_size))
        jace_task_destroy (&self);
    return self;
}

void
jace_task_linger (jace_task_t *self, int msec)
{
    assert (self);
    for (int64_t i = 0; self->peers && i < self->count; i++) {
        if (self->peers [i].link)
            zsock_set_linger (self->peers [i].link, msec);
        if (self->peers [i].fresh)
            zsock_set_linger (self->peers [i].fresh, msec);
    }
}

void
jace_task_destroy (jace_task_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_task_t *self = *self_p;
        for (int64_t i = 0; self->peers && i < self->count; i++) {
            zsock_destroy (&self->peers [i].link);
            zsock_destroy (&self->peers [i].fresh);
            free (self->peers [i].newest.values);
            free (self->peers [i].unsent.values);
            free (self->peers [i].asked.indices);
            free (self->peers [i].requested.indices);
        }
        free (self->peers);
        jace_exchange_destroy (&self->exchange);
        jace_msg_destroy (&self->assign);
        jace_msg_destroy (&self->data);
        zhash_destroy (&self->params);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Application side

int64_t
jace_task_rank (const jace_task_t *self)
{
    assert (self);
    return self->rank;
}

int64_t
jace_task_count (const jace_task_t *self)
{
    assert (self);
    return self->count;
}

const char *
jace_task_param (const jace_task_t *self, const char *key)
{
    assert (self);
    return (const char *) zhash_lookup (self->params, key);
}

zhash_t *
jace_task_params (const jace_task_t *self)
{
    assert (self);
    return self->params;
}

int
jace_param_number (zhash_t *params, const char *key, double fallback,
                   double min, double max, double *value, char *reason,
                   size_t reason_size)
{
    assert (params && key && value);
    const char *text = (const char *) zhash_lookup (params, key);
    if (!text) {
        *value = fallback;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double number = strtod (text, &end);
    //  strtod reads hexadecimal too: "tasks = 0x10" is a mistake more
    //  likely than a way to write 16
    if (errno || end == text || *end || !isfinite (number)
    ||  strpbrk (text, "xX") || number < min || number > max) {
        snprintf (reason, reason_size, "%s = '%s' is not a number in "
                  "[%g, %g]", key, text, min, max);
        return -1;
    }
    *value = number;
    return 0;
}

int
jace_param_integer (zhash_t *params, const char *key, double fallback,
                    double min, double max, double *value, char *reason,
                    size_t reason_size)
{
    assert (fallback == floor (fallback));
    const char *text = (const char *) zhash_lookup (params, key);
    if (jace_param_number (params, key, fallback, min, max, value, reason,
                           reason_size) == 0
    &&  *value == floor (*value))
        return 0;
    snprintf (reason, reason_size, "%s = '%s' is not an integer in [%.0f, "
              "%.0f]", key, text ? text : "", min, max);
    return -1;
}

int64_t
jace_task_param_int (const jace_task_t *self, const char *key,
                     int64_t fallback)
{
    const char *text = jace_task_param (self, key);
    char *end = NULL;
    long long value = text ? strtoll (text, &end, 10) : 0;
    return text && end != text && *end == 0 ? (int64_t) value : fallback;
}

double
jace_task_param_double (const jace_task_t *self, const char *key,
                        double fallback)
{
    const char *text = jace_task_param (self, key);
    char *end = NULL;
    double value = text ? strtod (text, &end) : 0;
    return text && end != text && *end == 0 ? value : fallback;
}

int64_t
jace_task_first_row (const jace_task_t *self)
{
    assert (self);
    return self->first_row;
}

int64_t
jace_task_row_count (const jace_task_t *self)
{
    assert (self);
    return self->row_count;
}

int64_t
jace_task_row_of (const jace_task_t *self, int64_t rank)
{
    assert (self);
    assert (rank >= 0 && rank <= self->count);
    return rank == self->count ? self->rows : self->peers [rank].row;
}

int64_t
jace_task_iteration (const jace_task_t *self)
{
    assert (self);
    return self->iteration;
}

void
jace_task_set_change (jace_task_t *self, double change)
{
    assert (self);
    self->change = change;
}

void
jace_task_set_work (jace_task_t *self, double work)
{
    assert (self);
    if (isfinite (work) && work > 0)
        self->work += work;
}

double
jace_task_take_work (jace_task_t *self)
{
    assert (self);
    double work = self->work;
    self->work = 0;
    return work;
}

void
jace_task_set_converged (jace_task_t *self)
{
    assert (self);
    self->converged = true;
}

void
jace_task_set_failure (jace_task_t *self, const char *reason)
{
    assert (self);
    snprintf (self->failure, sizeof self->failure, "%s", reason ? reason : "");
}

void
jace_task_set_source_wait (jace_task_t *self, int msec)
{
    assert (self && msec >= 0);
    self->source_wait_msec = msec;
}

int
jace_task_source_wait (const jace_task_t *self)
{
    assert (self);
    return self->source_wait_msec;
}

//  --------------------------------------------------------------------------

//  A PUSH to a peer task's data endpoint keeping at most `queue` messages
//  and, if `buffer` is not 0, that many bytes in the kernel, or NULL.
static zsock_t *
s_connect (jace_task_t *self, peer_task_t *peer, size_t queue, size_t buffer)
{
    zsock_t *link = zsock_new (ZMQ_PUSH);
    jace_msg_prepare_socket (link, 0);
    zsock_set_sndhwm (link, (int) queue);
    if (buffer)
        zsock_set_sndbuf (link, (int) buffer);
    if (jace_security_apply_client (self->security, link, peer->node.pubkey)
    ||  zsock_connect (link, "%s", peer->node.data)) {
        zsys_warning ("task %" PRId64 ": cannot connect to task %" PRId64
                      " at '%s'", self->rank, peer->node.task,
                      peer->node.data);
        zsock_destroy (&link);
    }
    return link;
}

//  The link to a peer task, connected on first use with a queue sized for
//  vectors of `bytes`.
static zsock_t *
s_link (jace_task_t *self, peer_task_t *peer, size_t bytes)
{
    if (!peer->link) {
        size_t queue = bytes ? LINK_QUEUE_BYTES / bytes : LINK_QUEUE_UNKNOWN;
        queue = queue < LINK_QUEUE_MIN ? LINK_QUEUE_MIN
              : queue > LINK_QUEUE_MAX ? LINK_QUEUE_MAX : queue;
        peer->link = s_connect (self, peer, queue, 0);
    }
    return peer->link;
}

//  The link values of `bytes` go to task `to` on: a fresh link of its own
//  when they must not queue (asynchronous, to another cluster), else the
//  peer's one link, which also carries what must all arrive (checkpoints,
//  request lists, exchanges).
static zsock_t *
s_values_link (jace_task_t *self, int64_t to, size_t bytes)
{
    peer_task_t *peer = &self->peers [to];
    if (!self->keep_remote_fresh
    ||  streq (peer->node.cluster, self->peers [self->rank].node.cluster))
        return s_link (self, peer, bytes);
    if (!peer->fresh) {
        size_t buffer = 2 * bytes > FRESH_BUFFER_MIN ? 2 * bytes
                      : FRESH_BUFFER_MIN;
        peer->fresh = s_connect (self, peer, FRESH_QUEUE, buffer);
    }
    return peer->fresh;
}

//  Send on a peer's link, through the emulated network if there is one.
static int
s_send (jace_task_t *self, int64_t to, zsock_t *link, jace_msg_t **msg_p)
{
    if (self->shaper)
        return jace_shaper_send (self->shaper, link, to,
                                 self->peers [to].node.cluster, msg_p);
    return jace_msg_send (msg_p, link);
}

//  Copy `count` values into vector, growing it as needed.
static void
s_vector_set (vector_t *vector, const double *values, size_t count,
              int64_t first, int64_t iteration, int64_t epoch)
{
    if (count > vector->capacity) {
        free (vector->values);
        vector->values = (double *) malloc (count * sizeof (double));
        assert (vector->values);
        vector->capacity = count;
    }
    if (count)
        memcpy (vector->values, values, count * sizeof (double));
    vector->count = count;
    vector->first = first;
    vector->iteration = iteration;
    vector->epoch = epoch;
}

//  Send `count` values of our iteration `iteration` to task `to`; -1 if
//  its link is full (or cannot be made).
static int
s_send_values (jace_task_t *self, int64_t to, const double *values,
               size_t count, int64_t first, int64_t iteration)
{
    zsock_t *link = s_values_link (self, to, count * sizeof (double));
    if (!link)
        return -1;
    if (self->shaper) {
        //  The emulated network holds a message of its own until it is due
        jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
        jace_msg_set_job (msg, self->job);
        jace_msg_set_task (msg, self->rank);
        jace_msg_set_epoch (msg, self->epoch);
        jace_msg_set_iteration (msg, iteration);
        jace_msg_set_first (msg, first);
        jace_msg_add_payload (msg, JACE_PAYLOAD_F64, values, count);
        jace_msg_seal (msg, self->job_key.bytes);
        return s_send (self, to, link, &msg);
    }
    jace_msg_set_epoch (self->data, self->epoch);
    jace_msg_set_iteration (self->data, iteration);
    jace_msg_set_first (self->data, first);
    jace_msg_seal (self->data, self->job_key.bytes);
    return jace_msg_send_payload (self->data, JACE_PAYLOAD_F64, values,
                                  count, link);
}

int
jace_task_send (jace_task_t *self, int64_t to, const double *values,
                size_t count, int64_t first)
{
    assert (self);
    assert (to >= 0 && to < self->count && to != self->rank);
    peer_task_t *peer = &self->peers [to];
    if (s_send_values (self, to, values, count, first, self->iteration)) {
        //  Kept to send again: a synchronous task may now wait for the
        //  very task it could not reach, and then no newer vector comes.
        self->dropped++;
        s_vector_set (&peer->unsent, values, count, first, self->iteration,
                      self->epoch);
        return -1;
    }
    peer->unsent.iteration = -1;    //  Newer values went
    return 0;
}

bool
jace_task_send_unsent (jace_task_t *self)
{
    assert (self);
    bool left = false;
    for (int64_t i = 0; i < self->count; i++) {
        vector_t *unsent = &self->peers [i].unsent;
        if (i == self->rank || unsent->iteration < 0)
            continue;
        if (unsent->epoch == self->epoch
        &&  s_send_values (self, i, unsent->values, unsent->count,
                           unsent->first, unsent->iteration) != 0)
            left = true;
        else
            unsent->iteration = -1;
    }
    return left;
}

const double *
jace_task_newest (jace_task_t *self, int64_t from, size_t *count,
                  int64_t *first, int64_t *iteration)
{
    assert (self);
    assert (from >= 0 && from < self->count);
    vector_t *newest = &self->peers [from].newest;
    if (newest->iteration < 0)
        return NULL;
    if (count)
        *count = newest->count;
    if (first)
        *first = newest->first;
    if (iteration)
        *iteration = newest->iteration;
    return newest->values;
}

//  --------------------------------------------------------------------------
//  Runtime side

const char *
jace_task_job (const jace_task_t *self)
{
    assert (self);
    return self->job;
}

const jace_key_t *
jace_task_job_key (const jace_task_t *self)
{
    assert (self);
    return &self->job_key;
}

int64_t
jace_task_epoch (const jace_task_t *self)
{
    assert (self);
    return self->epoch;
}

double
jace_task_change (const jace_task_t *self)
{
    assert (self);
    return self->change;
}

bool
jace_task_take_converged (jace_task_t *self)
{
    assert (self);
    bool converged = self->converged;
    self->converged = false;
    return converged;
}

const char *
jace_task_failure (const jace_task_t *self)
{
    assert (self);
    return *self->failure ? self->failure : NULL;
}

void
jace_task_count_iteration (jace_task_t *self)
{
    assert (self);
    self->iteration++;
}

static void
s_request_set (request_t *request, const int64_t *indices, size_t count)
{
    free (request->indices);
    request->indices = count
                     ? (int64_t *) malloc (count * sizeof (int64_t)) : NULL;
    if (count) {
        assert (request->indices);
        memcpy (request->indices, indices, count * sizeof (int64_t));
    }
    request->count = count;
    request->known = true;
}

//  A request list from another task (a piece of exchange round 0: int64
//  little-endian): every index must be one of our rows' unknowns, or the
//  list is refused whole.
static int
s_store_request (jace_task_t *self, peer_task_t *peer, const void *bytes,
                 size_t size, char *reason, size_t reason_size)
{
    if (size % sizeof (int64_t)) {
        snprintf (reason, reason_size, "request list of task %" PRId64
                  " is %zu bytes, not whole int64s", peer->node.task, size);
        return -1;
    }
    size_t count = size / sizeof (int64_t);
    int64_t *indices = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    assert (indices);
    const unsigned char *at = (const unsigned char *) bytes;
    for (size_t i = 0; i < count; i++) {
        uint64_t value = 0;
        for (int byte = 7; byte >= 0; byte--)
            value = value << 8 | at [i * 8 + (size_t) byte];
        indices [i] = (int64_t) value;
    }
    int64_t per_row = jace_task_param_int (self, "block/unknowns_per_row", 1);
    int64_t first = self->first_row * per_row;
    int64_t last = (self->first_row + self->row_count) * per_row;
    for (size_t i = 0; i < count; i++)
        if (indices [i] < first || indices [i] >= last) {
            snprintf (reason, reason_size, "task %" PRId64 " asks for "
                      "unknown %" PRId64 ", outside our rows",
                      peer->node.task, indices [i]);
            free (indices);
            return -1;
        }
    s_request_set (&peer->requested, indices, count);
    free (indices);
    return 0;
}

//  The largest iteration this task knows of: its own (restored or not)
//  and any neighbour's.
static int64_t
s_largest_iteration (const jace_task_t *self)
{
    int64_t largest = self->iteration;
    for (int64_t i = 0; i < self->count; i++) {
        const peer_task_t *peer = &self->peers [i];
        if (peer->newest.iteration > largest)
            largest = peer->newest.iteration;
        if (peer->heard_msec && peer->heard_iteration > largest)
            largest = peer->heard_iteration;
    }
    return largest;
}

//  True if the sender of `data` could have reached its iteration: at most
//  MAX_ITERATION_RATE a second more than its last accepted DATA, or, for
//  its first, than anything we know since the job started.  A task's
//  iteration only goes back (a replacement restores an older copy), never
//  jumps ahead, so legitimate progress always passes.
static bool
s_within_reach (const jace_task_t *self, const peer_task_t *peer,
                int64_t iteration, int64_t now)
{
    int64_t base = peer->heard_msec ? peer->heard_iteration
                                    : s_largest_iteration (self);
    int64_t since = now - (peer->heard_msec ? peer->heard_msec
                                            : self->started_msec);
    if (since < 0)
        since = 0;
    //  Both terms stay far from overflow: since is a few 10^12 ms at most.
    int64_t reach = (since / 1000 + 1) * MAX_ITERATION_RATE
                  + since % 1000 * (MAX_ITERATION_RATE / 1000);
    return iteration <= base || iteration - base <= reach;
}

//  A transfer of one of the job's exchanges (jace_transfer): not from an
//  epoch its sender has left, then to our side of the exchange.
static int
s_deliver_transfer (jace_task_t *self, jace_msg_t *data, char *reason,
                    size_t reason_size)
{
    int64_t from = jace_msg_task (data);
    if (jace_msg_epoch (data) < self->peers [from].node.epoch) {
        self->stale++;
        return 0;
    }
    return jace_exchange_receive (self->exchange, data, zclock_mono (),
                                  reason, reason_size);
}

int
jace_task_deliver (jace_task_t *self, jace_msg_t *data, char *reason,
                   size_t reason_size)
{
    assert (self);
    assert (data);
    int64_t from = jace_msg_task (data);
    if (!streq (jace_msg_job (data), self->job)
    ||  from < 0 || from >= self->count || from == self->rank) {
        snprintf (reason, reason_size, "DATA for job '%s' from task %"
                  PRId64 " does not belong here", jace_msg_job (data), from);
        return -1;
    }
    if (jace_transfer_is (data))
        return s_deliver_transfer (self, data, reason, reason_size);
    if (jace_msg_payload_count (data) != 1
    ||  jace_msg_payload_kind (data, 0) != JACE_PAYLOAD_F64) {
        snprintf (reason, reason_size, "DATA from task %" PRId64 " is "
                  "neither a vector nor an exchange's transfer", from);
        return -1;
    }
    peer_task_t *peer = &self->peers [from];
    vector_t *newest = &peer->newest;
    //  Older epochs come from a daemon that was replaced: never use them.
    if (jace_msg_epoch (data) < peer->node.epoch
    ||  (jace_msg_epoch (data) == newest->epoch
         && jace_msg_iteration (data) <= newest->iteration)) {
        self->stale++;
        return 0;
    }
    int64_t now = zclock_mono ();
    if (!s_within_reach (self, peer, jace_msg_iteration (data), now)) {
        self->out_of_reach++;
        snprintf (reason, reason_size, "DATA of task %" PRId64 " at "
                  "iteration %" PRId64 ", out of its reach (last heard at %"
                  PRId64 ")", from, jace_msg_iteration (data),
                  peer->heard_msec ? peer->heard_iteration : -1);
        return -1;
    }
    peer->heard_iteration = jace_msg_iteration (data);
    peer->heard_msec = now;
    size_t count = jace_msg_payload_length (data, 0);
    if (count > newest->capacity) {
        free (newest->values);
        newest->values = (double *) malloc (count * sizeof (double));
        assert (newest->values);
        newest->capacity = count;
    }
    jace_msg_payload_copy (data, 0, newest->values);
    newest->count = count;
    newest->first = jace_msg_first (data);
    newest->iteration = jace_msg_iteration (data);
    newest->epoch = jace_msg_epoch (data);
    return 0;
}

void
jace_task_set_shaper (jace_task_t *self, jace_shaper_t *shaper)
{
    assert (self);
    self->shaper = shaper;
}

void
jace_task_keep_remote_fresh (jace_task_t *self)
{
    assert (self);
    self->keep_remote_fresh = true;
}

uint64_t
jace_task_dropped (const jace_task_t *self)
{
    assert (self);
    return self->dropped;
}

uint64_t
jace_task_out_of_reach (const jace_task_t *self)
{
    assert (self);
    return self->out_of_reach;
}

//  --------------------------------------------------------------------------
//  Requests and blocks

void
jace_task_request (jace_task_t *self, int64_t from, const int64_t *indices,
                   size_t count)
{
    assert (self);
    assert (from >= 0 && from < self->count && from != self->rank);
    assert (indices || count == 0);
    s_request_set (&self->peers [from].asked, indices, count);
}

const int64_t *
jace_task_requested (jace_task_t *self, int64_t to, size_t *count)
{
    assert (self);
    assert (to >= 0 && to < self->count);
    request_t *requested = &self->peers [to].requested;
    if (count)
        *count = requested->count;
    return requested->count ? requested->indices : NULL;
}

//  True if task `to` must hear our request list: one of our sources, or
//  anyone when START did not say who our sinks are (the old exchange, in
//  which every task waits for every other's list).
static bool
s_wants_request (const jace_task_t *self, int64_t to)
{
    return !self->sinks_given || self->peers [to].asked.count > 0;
}

//  Our request list to `to` as the bytes of its piece: int64s,
//  little-endian.  The caller frees them.
static unsigned char *
s_request_bytes (const request_t *asked, size_t *size)
{
    *size = asked->count * sizeof (int64_t);
    unsigned char *bytes = (unsigned char *) malloc (*size + 1);
    assert (bytes);
    for (size_t i = 0; i < asked->count; i++)
        for (int byte = 0; byte < 8; byte++)
            bytes [i * 8 + (size_t) byte] =
                (unsigned char) ((uint64_t) asked->indices [i] >> (8 * byte));
    return bytes;
}

size_t
jace_task_send_requests (jace_task_t *self)
{
    assert (self);
    size_t count = (size_t) self->count;
    unsigned char **buffers = (unsigned char **) zmalloc (count
                                                          * sizeof (void *));
    size_t *sizes = (size_t *) zmalloc (count * sizeof (size_t));
    bool *send = (bool *) zmalloc (count * sizeof (bool));
    bool *expect = (bool *) zmalloc (count * sizeof (bool));
    for (int64_t rank = 0; rank < self->count; rank++) {
        buffers [rank] = s_request_bytes (&self->peers [rank].asked,
                                          &sizes [rank]);
        send [rank] = rank != self->rank && s_wants_request (self, rank);
        expect [rank] = !self->sinks_given || self->peers [rank].sink;
    }
    self->send_failures = 0;
    jace_exchange_begin (self->exchange, 0, (const void *const *) buffers,
                         sizes, send, expect, zclock_mono ());
    for (size_t rank = 0; rank < count; rank++)
        free (buffers [rank]);
    free (buffers);
    free (sizes);
    free (send);
    free (expect);
    return self->send_failures;
}

size_t
jace_task_sources (const jace_task_t *self, int64_t *ranks)
{
    assert (self);
    size_t count = 0;
    for (int64_t rank = 0; rank < self->count; rank++)
        if (rank != self->rank && self->peers [rank].asked.count > 0) {
            if (ranks)
                ranks [count] = rank;
            count++;
        }
    return count;
}

int
jace_task_set_sinks (jace_task_t *self, const int64_t *ranks, size_t count,
                     char *reason, size_t reason_size)
{
    assert (self);
    assert (ranks || count == 0);
    for (size_t i = 0; i < count; i++)
        if (ranks [i] < 0 || ranks [i] >= self->count
        ||  ranks [i] == self->rank || (i > 0 && ranks [i] <= ranks [i - 1])) {
            snprintf (reason, reason_size, "sink list of task %" PRId64
                      " is not sorted ranks of other tasks (entry %zu is %"
                      PRId64 ")", self->rank, i, ranks [i]);
            return -1;
        }
    for (int64_t rank = 0; rank < self->count; rank++)
        self->peers [rank].sink = false;
    for (size_t i = 0; i < count; i++)
        self->peers [ranks [i]].sink = true;
    //  A task that is no sink asks us nothing: its list is known, empty,
    //  unless one already came (then it is kept: we serve what it asked).
    for (int64_t rank = 0; rank < self->count; rank++) {
        request_t *requested = &self->peers [rank].requested;
        if (rank != self->rank && !self->peers [rank].sink
        &&  !requested->known)
            requested->known = true;
    }
    self->sinks_given = true;
    return 0;
}

int
jace_task_remap (jace_task_t *self, const jace_node_t *node)
{
    assert (self);
    assert (node);
    int64_t rank = node->task;
    if (rank < 0 || rank >= self->count || rank == self->rank
    ||  node->epoch <= self->peers [rank].node.epoch)
        return -1;
    peer_task_t *peer = &self->peers [rank];
    //  Its values so far stay the newest we have until the new daemon
    //  sends; anything still signed with the old epoch is dropped.
    peer->node = *node;
    if (self->shaper)
        jace_shaper_drop (self->shaper, rank);
    zsock_destroy (&peer->link);
    zsock_destroy (&peer->fresh);
    //  Its new daemon gets our pieces for it again (our request list
    //  among them) and we pull what went through the old one.
    jace_exchange_moved (self->exchange, rank, zclock_mono ());
    return 0;
}

bool
jace_task_requests_complete (const jace_task_t *self)
{
    assert (self);
    int64_t round = jace_exchange_round (self->exchange);
    if (round < 0 || (round == 0 && !jace_exchange_done (self->exchange)))
        return false;
    for (int64_t i = 0; i < self->count; i++)
        if (i != self->rank && !self->peers [i].requested.known)
            return false;
    return true;
}

void
jace_task_requests_missing (const jace_task_t *self, char *text,
                            size_t size)
{
    assert (self && text && size > 0);
    int64_t round = jace_exchange_round (self->exchange);
    char missing [192];
    jace_exchange_missing (self->exchange, missing, sizeof missing);
    int used = snprintf (text, size, "exchange round %" PRId64 "%s%s%s",
                         round, jace_exchange_done (self->exchange)
                         ? " done" : " under way", *missing ? ": " : "",
                         missing);
    const char *heading = ", request lists of tasks";
    for (int64_t i = 0; i < self->count && used > 0 && (size_t) used < size;
         i++)
        if (i != self->rank && !self->peers [i].requested.known) {
            used += snprintf (text + used, size - (size_t) used,
                              "%s %" PRId64, heading, i);
            heading = "";
        }
}

bool
jace_task_sources_ready (const jace_task_t *self)
{
    assert (self);
    //  A task restored from a checkpoint is behind its neighbours, which
    //  wait for its newer values and send nothing meanwhile: until every
    //  source has sent to this daemon, it iterates on the values its
    //  checkpoint saved, and so catches up.
    bool unheard = false;
    for (int64_t i = 0; i < self->count; i++)
        if (i != self->rank && self->peers [i].asked.count > 0
        &&  self->peers [i].heard_msec == 0)
            unheard = true;
    if (self->restored && unheard)
        return true;
    for (int64_t i = 0; i < self->count; i++) {
        const peer_task_t *peer = &self->peers [i];
        if (i != self->rank && peer->asked.count > 0
        &&  peer->newest.iteration < self->iteration - 1)
            return false;
    }
    return true;
}

bool
jace_task_sources_ahead (const jace_task_t *self)
{
    assert (self);
    for (int64_t i = 0; i < self->count; i++) {
        const peer_task_t *peer = &self->peers [i];
        if (i != self->rank && peer->asked.count > 0
        &&  peer->newest.iteration >= self->iteration)
            return true;
    }
    return false;
}

size_t
jace_task_block_count (const jace_task_t *self)
{
    assert (self);
    return jace_msg_payload_count (self->assign)
         - (size_t) self->preload_payloads;
}

int
jace_task_block_kind (const jace_task_t *self, size_t index)
{
    assert (self);
    return (int) jace_msg_payload_kind (self->assign, index);
}

size_t
jace_task_block_length (const jace_task_t *self, size_t index)
{
    assert (self);
    return jace_msg_payload_length (self->assign, index);
}

void
jace_task_block_copy (const jace_task_t *self, size_t index, void *dest)
{
    assert (self);
    jace_msg_payload_copy (self->assign, index, dest);
}

//  --------------------------------------------------------------------------
//  Total exchanges

static int
s_exchange_send (void *arg, int64_t to, jace_msg_t **msg_p)
{
    jace_task_t *self = (jace_task_t *) arg;
    int rc = jace_task_send_msg (self, to, msg_p);
    if (rc)
        self->send_failures++;
    return rc;
}

//  A piece for us: round 0 brings request lists, kept at once; a round of
//  jace_task_alltoallv stays in the exchange until the call returns.
static void
s_exchange_piece (void *arg, int64_t round, int64_t source, const void *bytes,
                  size_t size)
{
    jace_task_t *self = (jace_task_t *) arg;
    if (round != 0 || source == self->rank)
        return;
    char reason [256];
    if (s_store_request (self, &self->peers [source], bytes, size, reason,
                         sizeof reason))
        zsys_warning ("task %" PRId64 ": %s", self->rank, reason);
}

//  On an emulated network our pieces wait in the shaper until it is
//  flushed.  A round whose other pieces were already in ends without a
//  wait, and ours used to leave only at the task's next wait, after its
//  next computation: on two daemons 50 us apart, CG on 3D Poisson 40^3
//  took 0.30-0.31 s, and 0.23-0.24 s flushing here.
static void
s_flush_shaper (jace_task_t *self)
{
    if (self->shaper)
        jace_shaper_flush (self->shaper);
}

int
jace_task_alltoallv (jace_task_t *self, const void *const *buffers,
                     const size_t *sizes, const void **received,
                     size_t *received_sizes)
{
    assert (self);
    assert (buffers && sizes && received && received_sizes);
    //  Only a task that started (round 0 begun) and whose daemon waits for
    //  it can take part: setup runs before the job's exchanges do.
    if (!self->wait || jace_exchange_round (self->exchange) < 0)
        return -1;
    jace_exchange_begin (self->exchange, self->exchanges + 1, buffers, sizes,
                         NULL, NULL, zclock_mono ());
    s_flush_shaper (self);
    while (!jace_exchange_done (self->exchange)) {
        int64_t due = jace_exchange_tick (self->exchange, zclock_mono ());
        s_flush_shaper (self);
        if (jace_exchange_done (self->exchange))
            break;
        if (jace_exchange_failure (self->exchange))
            return -1;
        int msec = due < 0 || due > 100 ? 100 : (int) due;
        int64_t waiting = zclock_usecs ();
        int rc = self->wait (self->wait_arg, msec);
        self->waited_usecs += zclock_usecs () - waiting;
        if (rc)
            return -1;
    }
    for (int64_t source = 0; source < self->count; source++)
        received [source] = jace_exchange_received (self->exchange, source,
                                                    &received_sizes [source],
                                                    NULL);
    self->exchanges++;
    return 0;
}

int64_t
jace_task_waited_usecs (const jace_task_t *self)
{
    assert (self);
    return self->waited_usecs;
}

int64_t
jace_task_exchanges (const jace_task_t *self)
{
    assert (self);
    return self->exchanges;
}

int
jace_task_replay_exchanges (jace_task_t *self, int64_t count)
{
    assert (self);
    //  The engine numbers rounds upwards: a round it began is never begun
    //  again, so rewinding is only for a task that began none past count.
    if (count < 0 || count > self->exchanges
    ||  jace_exchange_round (self->exchange) > count)
        return -1;
    self->exchanges = count;
    return 0;
}

int
jace_task_set_routes (jace_task_t *self, const jace_route_t *routes,
                      size_t count, char *reason, size_t reason_size)
{
    assert (self);
    return jace_exchange_set_routes (self->exchange, routes, count,
                                     zclock_mono (), reason, reason_size);
}

void
jace_task_set_waiter (jace_task_t *self, jace_task_wait_fn *wait, void *arg)
{
    assert (self);
    self->wait = wait;
    self->wait_arg = arg;
}

int64_t
jace_task_exchange_tick (jace_task_t *self)
{
    assert (self);
    return jace_exchange_tick (self->exchange, zclock_mono ());
}

const char *
jace_task_exchange_failure (const jace_task_t *self)
{
    assert (self);
    return jace_exchange_failure (self->exchange);
}

//  --------------------------------------------------------------------------
//  Checkpoints and moves

int
jace_task_send_msg (jace_task_t *self, int64_t to, jace_msg_t **msg_p)
{
    assert (self && msg_p && *msg_p);
    assert (to >= 0 && to < self->count && to != self->rank);
    zsock_t *link = s_link (self, &self->peers [to], 0);
    if (!link) {
        jace_msg_destroy (msg_p);
        return -1;
    }
    return s_send (self, to, link, msg_p);
}

//  A neighbour asks us for values or is asked: a source or a sink.  START
//  names the sinks, so they count before their request lists arrive (a
//  replacement's FETCH goes out before them).
static bool
s_is_neighbour (const jace_task_t *self, int64_t rank)
{
    const peer_task_t *peer = &self->peers [rank];
    return rank != self->rank
        && (peer->asked.count > 0 || peer->requested.count > 0
            || peer->sink);
}

//  Nearness for checkpoint holders: our own cluster first (its links are
//  the fast ones), then the closest rank, the lower one on a tie.
static int64_t
s_distance (const jace_task_t *self, int64_t rank)
{
    const jace_node_t *ours = &self->peers [self->rank].node;
    bool remote = !streq (self->peers [rank].node.cluster, ours->cluster);
    int64_t gap = rank > self->rank ? rank - self->rank : self->rank - rank;
    return (remote ? self->count * 2 : 0) + gap * 2 + (rank > self->rank);
}

//  Append the tasks with `neighbour` status to list, nearest first.
static size_t
s_add_by_distance (const jace_task_t *self, bool neighbour, int64_t *list,
                   size_t length)
{
    size_t first = length;
    for (int64_t rank = 0; rank < self->count; rank++)
        if (rank != self->rank && s_is_neighbour (self, rank) == neighbour)
            list [length++] = rank;
    //  Insertion sort: a handful of neighbours, rarely more.
    for (size_t i = first + 1; i < length; i++) {
        int64_t rank = list [i];
        size_t j = i;
        while (j > first && s_distance (self, list [j - 1])
                            > s_distance (self, rank)) {
            list [j] = list [j - 1];
            j--;
        }
        list [j] = rank;
    }
    return length;
}

//  The nearest task whose daemon is in another cluster than `ours`:
//  neighbours first (we already talk to them), then the nearest rank,
//  the lower one on a tie.  -1 if every task runs in that cluster.
static int64_t
s_offsite_holder (const jace_task_t *self, const char *ours)
{
    int64_t best = -1;
    bool best_neighbour = false;
    int64_t best_gap = 0;
    for (int64_t rank = 0; rank < self->count; rank++) {
        if (rank == self->rank || streq (self->peers [rank].node.cluster,
                                         ours))
            continue;
        bool neighbour = s_is_neighbour (self, rank);
        int64_t gap = rank > self->rank ? rank - self->rank
                                        : self->rank - rank;
        if (best < 0 || (neighbour && !best_neighbour)
        ||  (neighbour == best_neighbour && gap < best_gap)) {
            best = rank;
            best_neighbour = neighbour;
            best_gap = gap;
        }
    }
    return best;
}

size_t
jace_task_checkpoint_holders (const jace_task_t *self, size_t copies,
                              bool offsite, int64_t round, int64_t *holders)
{
    assert (self && holders);
    int64_t *candidates = (int64_t *) zmalloc ((size_t) self->count
                                               * sizeof (int64_t));
    size_t length = s_add_by_distance (self, true, candidates, 0);
    //  Too few neighbours: the nearest other tasks make up the number.
    if (length < copies) {
        size_t all = s_add_by_distance (self, false, candidates, length);
        length = all < copies ? all : copies;
    }
    size_t chosen = copies < length ? copies : length;
    //  Rotate through the neighbours so older copies stay spread out: if
    //  the newest ones die with their holders, an older one survives.
    size_t start = length > copies && round > 0
                 ? (size_t) ((uint64_t) round * copies % length) : 0;
    for (size_t i = 0; i < chosen; i++)
        holders [i] = candidates [(start + i) % length];
    free (candidates);
    //  Copies all in our cluster die with it (a site cut off, its power
    //  gone): the last one goes to the nearest task elsewhere, if any.
    if (!offsite || chosen < 2)
        return chosen;
    const char *ours = self->peers [self->rank].node.cluster;
    for (size_t i = 0; i < chosen; i++)
        if (!streq (self->peers [holders [i]].node.cluster, ours))
            return chosen;
    int64_t elsewhere = s_offsite_holder (self, ours);
    if (elsewhere >= 0)
        holders [chosen - 1] = elsewhere;
    return chosen;
}

bool
jace_task_is_holder (const jace_task_t *self, size_t copies, bool offsite,
                     int64_t rank)
{
    assert (self);
    if (copies == 0 || rank < 0 || rank >= self->count || rank == self->rank)
        return false;
    int64_t *holders = (int64_t *) zmalloc ((size_t) self->count
                                            * sizeof (int64_t));
    bool found = false;
    //  The rotation comes back to its start within count rounds
    for (int64_t round = 0; round < self->count && !found; round++) {
        size_t held = jace_task_checkpoint_holders (self, copies, offsite,
                                                    round, holders);
        for (size_t i = 0; i < held && !found; i++)
            found = holders [i] == rank;
    }
    free (holders);
    return found;
}

size_t
jace_task_fetch_targets (const jace_task_t *self, size_t copies,
                         bool offsite, int64_t *targets)
{
    assert (self && targets);
    if (copies == 0)
        return 0;
    //  An off-site copy went to the task nearest our predecessor outside
    //  its cluster, as the tasks were placed then: since, they may have
    //  moved (a whole cluster's tasks do when it is cut off), and which
    //  task it was cannot be told from here.  Ask them all: only a
    //  replacement does, once.
    if (offsite && copies >= 2) {
        size_t count = 0;
        for (int64_t rank = 0; rank < self->count; rank++)
            if (rank != self->rank)
                targets [count++] = rank;
        return count;
    }
    //  Holders rotate over the neighbours when there are enough of them,
    //  so any neighbour may hold a copy; with fewer, the holder set is
    //  fixed and includes tasks that are no neighbours.
    size_t neighbours = s_add_by_distance (self, true, targets, 0);
    if (neighbours >= copies)
        return neighbours;
    return jace_task_checkpoint_holders (self, copies, false, 0, targets);
}

//  Per neighbour in a checkpoint: from, first, iteration, epoch, count.
//  A first record with from = SAVED_EXCHANGES holds our exchange count
//  (in `first`): a task restored from the copy runs its next exchange
//  with the number its application is at.
#define SAVED_FIELDS 5
#define SAVED_EXCHANGES (-1)

void
jace_task_save_newest (const jace_task_t *self, jace_msg_t *copy)
{
    assert (self && copy);
    size_t peers = 0, values = 0;
    for (int64_t i = 0; i < self->count; i++)
        if (i != self->rank && self->peers [i].newest.iteration >= 0) {
            peers++;
            values += self->peers [i].newest.count;
        }
    int64_t *meta = (int64_t *) zmalloc (((peers + 1) * SAVED_FIELDS + 1)
                                         * sizeof (int64_t));
    double *all = (double *) zmalloc ((values + 1) * sizeof (double));
    int64_t exchanges [SAVED_FIELDS] = { SAVED_EXCHANGES, self->exchanges };
    memcpy (meta, exchanges, sizeof exchanges);
    size_t m = SAVED_FIELDS, v = 0;
    for (int64_t i = 0; i < self->count; i++) {
        const vector_t *newest = &self->peers [i].newest;
        if (i == self->rank || newest->iteration < 0)
            continue;
        int64_t fields [SAVED_FIELDS] = { i, newest->first,
            newest->iteration, newest->epoch, (int64_t) newest->count };
        memcpy (meta + m, fields, sizeof fields);
        m += SAVED_FIELDS;
        memcpy (all + v, newest->values, newest->count * sizeof (double));
        v += newest->count;
    }
    jace_msg_add_payload (copy, JACE_PAYLOAD_I64, meta, m);
    jace_msg_add_payload (copy, JACE_PAYLOAD_F64, all, v);
    free (meta);
    free (all);
}

//  Keep one saved vector of neighbour `from` unless we already hold
//  something from it (anything received since is newer).
static void
s_restore_newest (jace_task_t *self, const int64_t *fields,
                  const double *values)
{
    vector_t *newest = &self->peers [fields [0]].newest;
    size_t count = (size_t) fields [4];
    if (newest->iteration >= 0)
        return;
    if (count > newest->capacity) {
        free (newest->values);
        newest->values = (double *) malloc (count * sizeof (double) + 1);
        assert (newest->values);
        newest->capacity = count;
    }
    memcpy (newest->values, values, count * sizeof (double));
    newest->count = count;
    newest->first = fields [1];
    newest->iteration = fields [2];
    newest->epoch = fields [3];
}

size_t
jace_task_restore_newest (jace_task_t *self, const jace_msg_t *copy)
{
    assert (self && copy);
    if ((jace_msg_payload_count (copy) != 3
         && jace_msg_payload_count (copy) != 5)
    ||  jace_msg_payload_kind (copy, 1) != JACE_PAYLOAD_I64
    ||  jace_msg_payload_kind (copy, 2) != JACE_PAYLOAD_F64
    ||  jace_msg_payload_length (copy, 1) % SAVED_FIELDS)
        return 0;
    size_t m_count = jace_msg_payload_length (copy, 1);
    size_t v_count = jace_msg_payload_length (copy, 2);
    int64_t *meta = (int64_t *) malloc ((m_count + 1) * sizeof (int64_t));
    double *values = (double *) malloc ((v_count + 1) * sizeof (double));
    assert (meta && values);
    jace_msg_payload_copy (copy, 1, meta);
    jace_msg_payload_copy (copy, 2, values);
    size_t restored = 0, v = 0;
    for (size_t m = 0; m < m_count; m += SAVED_FIELDS) {
        const int64_t *fields = meta + m;
        if (m == 0 && fields [0] == SAVED_EXCHANGES) {
            if (fields [1] >= 0 && fields [4] == 0)
                self->exchanges = fields [1];
            continue;
        }
        if (fields [0] < 0 || fields [0] >= self->count
        ||  fields [0] == self->rank || fields [4] < 0
        ||  (size_t) fields [4] > v_count - v)
            break;              //  Not ours to trust any further
        s_restore_newest (self, fields, values + v);
        v += (size_t) fields [4];
        restored++;
    }
    free (meta);
    free (values);
    return restored;
}

//  Largest round of pieces a checkpoint copy carries.  Holders bound the
//  copies they keep (1 GiB by default): one refused for its pieces would
//  lose the task's state with them.  A larger round is not saved (the
//  others fail, saying so, if the task dies before they have it).
#define SAVED_PIECES_MAX ((size_t) 64 << 20)
//  The older rounds a copy carries besides, together: as many bytes as
//  the task's state, or this many for a smaller one.  Every copy carries
//  them again, so they add no more than the state itself: with TSIRM's
//  exchanges (about 310 KB a round, 12 a second, beside a state of 216
//  KB), a copy carried 7.5 MB of rounds when they were bounded by 8 MiB
//  only.
#define SAVED_OLDER_MIN ((size_t) 1 << 20)

//  The oldest round a copy made now should carry.  Tasks lost together
//  restart from copies of different rounds, and one restored at round a
//  must give one restored at b < a its pieces of rounds b + 1 to a: its
//  log died with its daemon, and it will not run them again.  The
//  others' copies lie as many rounds apart as ours (a period in seconds,
//  the same for every task, or in iterations), and a holder may keep the
//  copy before the newest: from the round of our copy three back, b is
//  covered with a period to spare.  Before our third copy, from round 1.
static int64_t
s_first_saved_round (const jace_task_t *self)
{
    if (self->copy_round_count < COPY_ROUNDS_KEPT
    ||  self->copy_rounds [0] < 1)
        return 1;
    return self->copy_rounds [0];
}

static void
s_remember_copy_round (jace_task_t *self)
{
    if (self->copy_round_count == COPY_ROUNDS_KEPT) {
        memmove (self->copy_rounds, self->copy_rounds + 1,
                 (COPY_ROUNDS_KEPT - 1) * sizeof (int64_t));
        self->copy_round_count--;
    }
    self->copy_rounds [self->copy_round_count++] = self->exchanges;
}

static size_t
s_round_bytes (const size_t *sizes, size_t tasks)
{
    size_t bytes = 0;
    for (size_t task = 0; task < tasks; task++)
        bytes += sizes [task];
    return bytes;
}

//  The oldest round of the window our log still holds, newest first
//  while they fit; last + 1 when not even the last round does.  The
//  bytes of the rounds taken go to *total.
static int64_t
s_oldest_saved_round (const jace_task_t *self, int64_t first,
                      size_t older_max, size_t *total)
{
    size_t tasks = (size_t) self->count;
    int64_t last = self->exchanges;
    int64_t oldest = last + 1;
    size_t older = 0;
    *total = 0;
    for (int64_t round = last; round >= first; round--) {
        const unsigned char *const *buffers;
        const size_t *sizes;
        if (jace_exchange_logged (self->exchange, round, &buffers, &sizes))
            break;
        size_t bytes = s_round_bytes (sizes, tasks);
        if (round == last ? bytes > SAVED_PIECES_MAX
                          : older + bytes > older_max)
            break;
        if (round < last)
            older += bytes;
        *total += bytes;
        oldest = round;
    }
    return oldest;
}

void
jace_task_save_pieces (jace_task_t *self, jace_msg_t *copy)
{
    assert (self && copy);
    int64_t first = s_first_saved_round (self);
    s_remember_copy_round (self);
    int64_t last = self->exchanges;
    size_t state = jace_msg_payload_count (copy) >= 1
                && jace_msg_payload_kind (copy, 0) == JACE_PAYLOAD_BYTES
                 ? jace_msg_payload_length (copy, 0) : 0;
    size_t older_max = state > SAVED_OLDER_MIN ? state : SAVED_OLDER_MIN;
    size_t total = 0;
    int64_t oldest = last >= 1
                   ? s_oldest_saved_round (self, first, older_max, &total)
                   : last + 1;
    if (oldest > last)
        return;
    size_t tasks = (size_t) self->count;
    size_t rounds = (size_t) (last - oldest + 1);
    size_t length = 2 + rounds * tasks;
    int64_t *shape = (int64_t *) malloc (length * sizeof (int64_t));
    unsigned char *bytes = (unsigned char *) malloc (total + 1);
    assert (shape && bytes);
    shape [0] = (int64_t) rounds;
    shape [1] = oldest;
    size_t at = 0;
    for (size_t index = 0; index < rounds; index++) {
        const unsigned char *const *buffers;
        const size_t *sizes;
        int rc = jace_exchange_logged (self->exchange,
                                       oldest + (int64_t) index, &buffers,
                                       &sizes);
        assert (rc == 0);
        for (size_t task = 0; task < tasks; task++) {
            shape [2 + index * tasks + task] = (int64_t) sizes [task];
            if (sizes [task])
                memcpy (bytes + at, buffers [task], sizes [task]);
            at += sizes [task];
        }
    }
    jace_msg_add_payload (copy, JACE_PAYLOAD_I64, shape, length);
    jace_msg_add_payload (copy, JACE_PAYLOAD_BYTES, bytes, total);
    free (shape);
    free (bytes);
}

int
jace_task_restore_pieces (jace_task_t *self, const jace_msg_t *copy)
{
    assert (self && copy);
    size_t tasks = (size_t) self->count;
    if (jace_msg_payload_count (copy) != 5
    ||  jace_msg_payload_kind (copy, 3) != JACE_PAYLOAD_I64
    ||  jace_msg_payload_kind (copy, 4) != JACE_PAYLOAD_BYTES)
        return -1;
    size_t length = jace_msg_payload_length (copy, 3);
    if (length < 2 + tasks || (length - 2) % tasks)
        return -1;
    size_t rounds = (length - 2) / tasks;
    int64_t *shape = (int64_t *) malloc (length * sizeof (int64_t));
    assert (shape);
    jace_msg_payload_copy (copy, 3, shape);
    //  Consecutive rounds, the last the one the restored count says we
    //  completed last.
    bool fits = shape [0] == (int64_t) rounds && shape [1] >= 1
             && shape [1] <= self->exchanges
             && self->exchanges - shape [1] + 1 == (int64_t) rounds;
    size_t total = jace_msg_payload_length (copy, 4);
    size_t sum = 0;
    for (size_t index = 2; fits && index < length; index++) {
        fits = shape [index] >= 0 && (uint64_t) shape [index] <= total - sum;
        if (fits)
            sum += (size_t) shape [index];
    }
    int rc = -1;
    if (fits && sum == total) {
        const unsigned char *bytes = (const unsigned char *)
            jace_msg_payload_data (copy, 4);
        const void **buffers = (const void **) zmalloc (tasks
                                                        * sizeof (void *));
        size_t *sizes = (size_t *) zmalloc (tasks * sizeof (size_t));
        size_t at = 0;
        rc = 0;
        for (size_t index = 0; index < rounds; index++) {
            for (size_t task = 0; task < tasks; task++) {
                sizes [task] = (size_t) shape [2 + index * tasks + task];
                buffers [task] = sizes [task] ? bytes + at : NULL;
                at += sizes [task];
            }
            if (jace_exchange_relog (self->exchange,
                                     shape [1] + (int64_t) index, buffers,
                                     sizes))
                rc = -1;
        }
        free (buffers);
        free (sizes);
    }
    free (shape);
    return rc;
}

//  --------------------------------------------------------------------------
//  A rebalance's iterate

//  One unknown the spawner sent beside our rows
typedef struct {
    int64_t index;
    double value;
} preload_read_t;

struct _jace_preload_t {
    int64_t iteration;          //  The job goes on from it
    int64_t unknowns;           //  The job's
    double *whole;              //  Every unknown (an older spawner's), or
                                //  NULL
    double *rows;               //  Our rows' unknowns: owned, or in whole
    size_t row_count;           //  ... how many
    int64_t first;              //  Index of the first
    preload_read_t *reads;      //  The others we read, by index
    size_t read_count;          //  ... how many
};

static int
s_compare_reads (const void *left, const void *right)
{
    int64_t a = ((const preload_read_t *) left)->index;
    int64_t b = ((const preload_read_t *) right)->index;
    return (a > b) - (a < b);
}

//  The unknowns we read, sorted for lookups; those out of the job dropped.
static void
s_preload_reads (jace_preload_t *preload, const jace_msg_t *assign,
                 size_t index)
{
    size_t count = jace_msg_payload_length (assign, index);
    int64_t *numbers = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    double *values = (double *) malloc ((count + 1) * sizeof (double));
    preload->reads = (preload_read_t *) malloc ((count + 1)
                                                * sizeof (preload_read_t));
    assert (numbers && values && preload->reads);
    jace_msg_payload_copy (assign, index, numbers);
    jace_msg_payload_copy (assign, index + 1, values);
    bool sorted = true;
    for (size_t k = 0; k < count; k++) {
        if (numbers [k] < 0 || numbers [k] >= preload->unknowns)
            continue;
        preload_read_t *read = &preload->reads [preload->read_count++];
        read->index = numbers [k];
        read->value = values [k];
        if (preload->read_count > 1 && read [-1].index > read->index)
            sorted = false;
    }
    if (!sorted)
        qsort (preload->reads, preload->read_count, sizeof (preload_read_t),
               s_compare_reads);
    free (numbers);
    free (values);
}

jace_preload_t *
jace_task_preloaded (const jace_task_t *self)
{
    assert (self);
    if (self->preload_block < 0)
        return NULL;
    size_t index = (size_t) self->preload_block;
    int64_t per_row = jace_task_param_int (self, "block/unknowns_per_row", 1);
    jace_preload_t *preload = (jace_preload_t *) zmalloc (sizeof *preload);
    preload->iteration = self->preload_iteration;
    preload->unknowns = self->rows * per_row;
    preload->first = self->first_row * per_row;
    preload->row_count = (size_t) (self->row_count * per_row);
    //  The payloads' lengths were checked against these when the ASSIGN
    //  came (s_read_preload)
    if (self->preload_payloads == 1) {
        preload->whole = (double *) malloc (((size_t) preload->unknowns + 1)
                                            * sizeof (double));
        assert (preload->whole);
        jace_msg_payload_copy (self->assign, index, preload->whole);
        preload->rows = preload->whole + preload->first;
        return preload;
    }
    preload->rows = (double *) malloc ((preload->row_count + 1)
                                       * sizeof (double));
    assert (preload->rows);
    jace_msg_payload_copy (self->assign, index, preload->rows);
    s_preload_reads (preload, self->assign, index + 1);
    return preload;
}

void
jace_preload_destroy (jace_preload_t **self_p)
{
    assert (self_p);
    jace_preload_t *self = *self_p;
    if (self) {
        if (self->whole)
            free (self->whole);
        else
            free (self->rows);
        free (self->reads);
        free (self);
        *self_p = NULL;
    }
}

int64_t
jace_preload_iteration (const jace_preload_t *self)
{
    assert (self);
    return self->iteration;
}

const double *
jace_preload_rows (const jace_preload_t *self, size_t *count)
{
    assert (self && count);
    *count = self->row_count;
    return self->rows;
}

double
jace_preload_value (const jace_preload_t *self, int64_t index)
{
    assert (self);
    if (index < 0 || index >= self->unknowns)
        return 0;
    if (self->whole)
        return self->whole [index];
    if (index >= self->first && index < self->first
                                        + (int64_t) self->row_count)
        return self->rows [index - self->first];
    preload_read_t key = { index, 0 };
    const preload_read_t *read = (const preload_read_t *) bsearch (&key,
        self->reads, self->read_count, sizeof (preload_read_t),
        s_compare_reads);
    return read ? read->value : 0;
}

void
jace_task_seed_newest (jace_task_t *self, const jace_preload_t *preload)
{
    assert (self && preload);
    int64_t iteration = preload->iteration;
    for (int64_t from = 0; from < self->count; from++) {
        peer_task_t *peer = &self->peers [from];
        vector_t *newest = &peer->newest;
        const request_t *asked = &peer->asked;
        if (from == self->rank || asked->count == 0
        ||  newest->iteration >= 0)
            continue;
        bool inside = true;
        for (size_t k = 0; k < asked->count; k++)
            if (asked->indices [k] < 0
            ||  asked->indices [k] >= preload->unknowns)
                inside = false;
        if (!inside)
            continue;
        double *values = (double *) malloc (asked->count * sizeof (double)
                                            + 1);
        assert (values);
        //  Values asked as a range stand for unknowns first.. (as a
        //  source sending a block says: jacobi2d's ghost rows, which it
        //  took for zeros when they said 0, and the residual of a job
        //  rebalanced jumped 5 to 60 times); a list, in its order, says 0
        bool range = true;
        for (size_t k = 0; k < asked->count; k++) {
            values [k] = jace_preload_value (preload, asked->indices [k]);
            range = range
                 && asked->indices [k] == asked->indices [0] + (int64_t) k;
        }
        free (newest->values);
        newest->values = values;
        newest->capacity = asked->count;
        newest->count = asked->count;
        newest->first = range ? asked->indices [0] : 0;
        newest->iteration = iteration > 0 ? iteration - 1 : 0;
        newest->epoch = peer->node.epoch;
    }
}

//  --------------------------------------------------------------------------
//  A rebalance's iterate, from the old cut's owners

//  What we ask one old owner for
typedef struct {
    int64_t *ranges;            //  begin, end pairs of unknowns, sorted
    size_t pairs;               //  ... how many
    size_t length;              //  Values they cover
    bool taken;                 //  Its answer is in (or we need nothing)
} handoff_owner_t;

struct _jace_handoff_t {
    int64_t count;              //  Tasks
    int64_t iteration;          //  The job goes on from it
    int64_t unknowns;           //  The job's
    int64_t first;              //  Our rows' first unknown
    size_t row_count;           //  Our rows' unknowns
    double *rows;               //  Their values, gathered
    int64_t *reads;             //  Unknowns we read of others, sorted
    double *read_values;        //  ... their values, gathered
    size_t read_count;
    handoff_owner_t *owners;    //  One per task of the old cut
    size_t missing;             //  Owners not answered yet
};

static int
s_compare_int64 (const void *left, const void *right)
{
    int64_t a = *(const int64_t *) left, b = *(const int64_t *) right;
    return (a > b) - (a < b);
}

//  Every unknown we asked a source for, outside our rows and inside the
//  job, once each, sorted.
static void
s_handoff_reads (jace_handoff_t *self, const jace_task_t *task)
{
    size_t total = 0;
    for (int64_t from = 0; from < task->count; from++)
        total += task->peers [from].asked.count;
    self->reads = (int64_t *) malloc ((total + 1) * sizeof (int64_t));
    assert (self->reads);
    size_t kept = 0;
    int64_t end = self->first + (int64_t) self->row_count;
    for (int64_t from = 0; from < task->count; from++) {
        const request_t *asked = &task->peers [from].asked;
        for (size_t k = 0; k < asked->count; k++) {
            int64_t index = asked->indices [k];
            if (index >= 0 && index < self->unknowns
            &&  (index < self->first || index >= end))
                self->reads [kept++] = index;
        }
    }
    qsort (self->reads, kept, sizeof (int64_t), s_compare_int64);
    size_t distinct = 0;
    for (size_t k = 0; k < kept; k++)
        if (distinct == 0 || self->reads [distinct - 1] != self->reads [k])
            self->reads [distinct++] = self->reads [k];
    self->read_count = distinct;
    self->read_values = (double *) calloc (distinct + 1, sizeof (double));
    assert (self->read_values);
}

//  Add [begin, end) to an owner's ranges, joining it to the last one
//  when they touch (the caller adds them in order).
static void
s_handoff_add_range (handoff_owner_t *owner, size_t capacity, int64_t begin,
                     int64_t end)
{
    if (owner->pairs > 0 && owner->ranges [2 * owner->pairs - 1] == begin)
        owner->ranges [2 * owner->pairs - 1] = end;
    else {
        assert (owner->pairs < capacity);
        owner->ranges [2 * owner->pairs] = begin;
        owner->ranges [2 * owner->pairs + 1] = end;
        owner->pairs++;
    }
    owner->length += (size_t) (end - begin);
}

//  What old owner `index`, holding [begin, end), gives us: the part of
//  our rows it held, and the unknowns we read of its, in ranges.
static void
s_handoff_owner (jace_handoff_t *self, handoff_owner_t *owner, int64_t begin,
                 int64_t end)
{
    int64_t rows_begin = self->first > begin ? self->first : begin;
    int64_t rows_end = self->first + (int64_t) self->row_count;
    rows_end = rows_end < end ? rows_end : end;
    size_t reads_begin = 0;
    while (reads_begin < self->read_count && self->reads [reads_begin] < begin)
        reads_begin++;
    size_t reads_end = reads_begin;
    while (reads_end < self->read_count && self->reads [reads_end] < end)
        reads_end++;
    size_t capacity = reads_end - reads_begin + 1;
    owner->ranges = (int64_t *) malloc (2 * capacity * sizeof (int64_t));
    assert (owner->ranges);
    bool rows_added = rows_begin >= rows_end;
    for (size_t k = reads_begin; k < reads_end; k++) {
        if (!rows_added && rows_begin < self->reads [k]) {
            s_handoff_add_range (owner, capacity, rows_begin, rows_end);
            rows_added = true;
        }
        s_handoff_add_range (owner, capacity, self->reads [k],
                             self->reads [k] + 1);
    }
    if (!rows_added)
        s_handoff_add_range (owner, capacity, rows_begin, rows_end);
    owner->taken = owner->pairs == 0;
    if (!owner->taken)
        self->missing++;
}

jace_handoff_t *
jace_handoff_new (jace_task_t *task, const int64_t *old_first,
                  int64_t iteration, char *reason, size_t reason_size)
{
    assert (task && old_first);
    bool cut = old_first [0] == 0 && old_first [task->count] == task->rows
            && iteration >= 0;
    for (int64_t i = 0; cut && i < task->count; i++)
        cut = old_first [i] <= old_first [i + 1];
    if (!cut) {
        snprintf (reason, reason_size, "the old cut of a rebalance's slices "
                  "is not a cut of the job's %" PRId64 " rows", task->rows);
        return NULL;
    }
    int64_t per_row = jace_task_param_int (task, "block/unknowns_per_row", 1);
    jace_handoff_t *self = (jace_handoff_t *) zmalloc (sizeof *self);
    self->count = task->count;
    self->iteration = iteration;
    self->unknowns = task->rows * per_row;
    self->first = task->first_row * per_row;
    self->row_count = (size_t) (task->row_count * per_row);
    self->rows = (double *) calloc (self->row_count + 1, sizeof (double));
    assert (self->rows);
    s_handoff_reads (self, task);
    self->owners = (handoff_owner_t *) zmalloc ((size_t) task->count
                                                * sizeof (handoff_owner_t));
    for (int64_t i = 0; i < task->count; i++)
        s_handoff_owner (self, &self->owners [i], old_first [i] * per_row,
                         old_first [i + 1] * per_row);
    return self;
}

void
jace_handoff_destroy (jace_handoff_t **self_p)
{
    assert (self_p);
    jace_handoff_t *self = *self_p;
    if (self) {
        for (int64_t i = 0; i < self->count; i++)
            free (self->owners [i].ranges);
        free (self->owners);
        free (self->rows);
        free (self->reads);
        free (self->read_values);
        free (self);
        *self_p = NULL;
    }
}

const int64_t *
jace_handoff_asks (const jace_handoff_t *self, int64_t owner, size_t *pairs)
{
    assert (self && pairs);
    assert (owner >= 0 && owner < self->count);
    *pairs = self->owners [owner].pairs;
    return *pairs ? self->owners [owner].ranges : NULL;
}

size_t
jace_handoff_ask_length (const jace_handoff_t *self, int64_t owner)
{
    assert (self);
    assert (owner >= 0 && owner < self->count);
    return self->owners [owner].length;
}

//  Where unknown `index` of the gathered iterate goes.
static double *
s_handoff_slot (jace_handoff_t *self, int64_t index)
{
    if (index >= self->first && index < self->first + (int64_t) self->row_count)
        return &self->rows [index - self->first];
    const int64_t *found = (const int64_t *) bsearch (&index, self->reads,
        self->read_count, sizeof (int64_t), s_compare_int64);
    assert (found);
    return &self->read_values [found - self->reads];
}

int
jace_handoff_take (jace_handoff_t *self, int64_t owner, const double *values,
                   size_t count, char *reason, size_t reason_size)
{
    assert (self);
    if (owner < 0 || owner >= self->count) {
        snprintf (reason, reason_size, "slices from task %" PRId64 ", not "
                  "of the job's %" PRId64, owner, self->count);
        return -1;
    }
    handoff_owner_t *from = &self->owners [owner];
    if (from->taken) {
        snprintf (reason, reason_size, "slices from task %" PRId64 ", which "
                  "we %s", owner, from->pairs ? "had already"
                                               : "asked nothing");
        return -1;
    }
    if (count != from->length) {
        snprintf (reason, reason_size, "%zu values from task %" PRId64
                  " where we asked %zu", count, owner, from->length);
        return -1;
    }
    size_t at = 0;
    for (size_t pair = 0; pair < from->pairs; pair++)
        for (int64_t index = from->ranges [2 * pair];
             index < from->ranges [2 * pair + 1]; index++)
            *s_handoff_slot (self, index) = values [at++];
    from->taken = true;
    self->missing--;
    return 0;
}

size_t
jace_handoff_missing (const jace_handoff_t *self)
{
    assert (self);
    return self->missing;
}

int64_t
jace_handoff_count (const jace_handoff_t *self)
{
    assert (self);
    return self->count;
}

bool
jace_handoff_waits_for (const jace_handoff_t *self, int64_t owner)
{
    assert (self);
    assert (owner >= 0 && owner < self->count);
    return !self->owners [owner].taken;
}

jace_preload_t *
jace_handoff_preload (jace_handoff_t *self)
{
    assert (self);
    if (self->missing)
        return NULL;
    jace_preload_t *preload = (jace_preload_t *) zmalloc (sizeof *preload);
    preload->iteration = self->iteration;
    preload->unknowns = self->unknowns;
    preload->first = self->first;
    preload->row_count = self->row_count;
    preload->rows = (double *) malloc ((self->row_count + 1) * sizeof (double));
    assert (preload->rows);
    memcpy (preload->rows, self->rows, self->row_count * sizeof (double));
    preload->reads = (preload_read_t *) malloc ((self->read_count + 1)
                                                * sizeof (preload_read_t));
    assert (preload->reads);
    for (size_t k = 0; k < self->read_count; k++) {
        preload->reads [k].index = self->reads [k];
        preload->reads [k].value = self->read_values [k];
    }
    preload->read_count = self->read_count;
    return preload;
}

int64_t
jace_handoff_serve (const int64_t *ranges, size_t pairs, int64_t first,
                    const double *block, size_t count, double *out)
{
    assert (ranges || pairs == 0);
    //  Sorted and apart, inside the block: never more than `count` values
    int64_t copied = 0, last_end = first;
    for (size_t pair = 0; pair < pairs; pair++) {
        int64_t begin = ranges [2 * pair], end = ranges [2 * pair + 1];
        if (begin >= end || begin < last_end || end > first + (int64_t) count)
            return -1;
        last_end = end;
        memcpy (out + copied, block + (begin - first),
                (size_t) (end - begin) * sizeof (double));
        copied += end - begin;
    }
    return copied;
}

void
jace_task_set_iteration (jace_task_t *self, int64_t iteration)
{
    assert (self);
    assert (iteration >= 0);
    self->iteration = iteration;
    //  Whatever the iteration, even 0 (a replacement from its initial
    //  state), a task set here resumes a job under way: its sources are
    //  ahead, waiting for it (jace_task_sources_ready)
    self->restored = true;
}

const jace_node_t *
jace_task_node (const jace_task_t *self, int64_t rank)
{
    assert (self);
    assert (rank >= 0 && rank < self->count);
    return &self->peers [rank].node;
}
