/*  =========================================================================
    test_daemon_protocol - play the spawner against a real daemon

    One daemon_server actor in this process, a ROUTER playing its
    super-node (we read the daemon's state in its HELLOs), a DEALER playing
    its spawner, and a PULL standing for the data endpoints of the job's
    other tasks.  The daemon runs a test application, "probe", whose
    solution is a checksum of the data it was given.

    Covered: 20 MiB of task data in 1 MiB CHUNKs reaching the application
    intact while the daemon keeps heartbeating; a chunk out of order
    (REFUSE BUSY); data over --max-task-memory (REFUSE BUSY) and nonsense
    declarations (REFUSE FAILED); ACCEPT's sources; the orphan timeout
    freeing the daemon; and STOP, REMAP, COLLECT, ADOPT, ASSIGN, START and
    neighbour data fired at random moments of set-up, exchange, fetch and
    iterations, hundreds of times, with the daemon usable after each.

    Trust (protocol 3): we play the spawner with the daemon's lease key
    (daemon_config_t.lease_key) and seal every job message; every message
    of the daemon must be sealed.  Then an attacker that knows the
    endpoints and the job id only: ASSIGN without a valid lease token;
    STOP, CRASH, ADOPT, REMAP, COLLECT, HEARTBEAT, CHUNK, START unsealed or
    sealed with its own key; FETCH on behalf of a task; unsealed DATA; an
    insider's DATA at iteration 2^62; forged, relabelled and unsealed
    checkpoints offered to a replacement.  None may take effect, and the
    job beside them goes on.  A rebalance's slices: the block kept for a
    snapshot served to a good ask only, a gathering task taking only the
    slice it asked for, and giving up, saying so, when none comes.  A
    resumed spawner's ADOPT while a rebalance's block is still loading
    (answered with the task running, the block given up), and its START
    while the new task still gathers (kept until the slices are in).
    =========================================================================
*/
#include "daemon_server.h"
#include "jace_task.h"
#include "jace_auth.h"
#include "jace_checkpoint.h"
#include "jace_transfer.h"
#include "tap.h"

#include <inttypes.h>

//  Rounds of the random storm; each ends with a STOP.
#define STORM_ROUNDS 300
//  Tasks in the storm's job: the daemon runs task 0, we stand for 1 and 2.
#define STORM_TASKS 3

//  --------------------------------------------------------------------------
//  The probe application: checksums its blocks, iterates a little.

typedef struct {
    double answer [5];          //  FNV-1a high and low 32 bits, bytes,
                                //  blocks, and task 1's newest value
    double x;                   //  Our one unknown
} probe_t;

static uint64_t
s_fnv (uint64_t hash, const uint8_t *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ bytes [i]) * 1099511628211ULL;
    return hash;
}

static void *
s_probe_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    if (jace_task_param (task, "probe/fail")) {
        snprintf (reason, reason_size, "probe told to fail");
        return NULL;
    }
    probe_t *probe = (probe_t *) zmalloc (sizeof *probe);
    uint64_t hash = 14695981039346656037ULL, bytes = 0;
    for (size_t i = 0; i < jace_task_block_count (task); i++) {
        size_t element = jace_task_block_kind (task, i) == 3 ? 1 : 8;
        size_t size = jace_task_block_length (task, i) * element;
        uint8_t *data = (uint8_t *) malloc (size + 1);
        jace_task_block_copy (task, i, data);
        hash = s_fnv (hash, data, size);
        bytes += size;
        free (data);
    }
    probe->answer [0] = (double) (hash >> 32);
    probe->answer [1] = (double) (hash & 0xffffffffu);
    probe->answer [2] = (double) bytes;
    probe->answer [3] = (double) jace_task_block_count (task);
    //  Ask the task after us for its unknown: task 0 has source 1.
    int64_t from = (jace_task_rank (task) + 1) % jace_task_count (task);
    if (from != jace_task_rank (task)) {
        int64_t unknown = jace_task_row_of (task, from);
        jace_task_request (task, from, &unknown, 1);
    }
    return probe;
}

static int
s_probe_iterate (jace_task_t *task, void *state)
{
    probe_t *probe = (probe_t *) state;
    double sum = 0;
    for (int64_t from = 0; from < jace_task_count (task); from++) {
        size_t count = 0;
        const double *values = from == jace_task_rank (task) ? NULL
            : jace_task_newest (task, from, &count, NULL, NULL);
        for (size_t i = 0; values && i < count; i++)
            sum += values [i];
        if (from == 1 && values && count)
            probe->answer [4] = values [0];
    }
    //  A little work, so that messages land in the middle of iterations.
    for (int i = 0; i < 20000; i++)
        sum = sum * 0.999999 + 1e-9 * i;
    probe->x = 0.5 * probe->x + 1e-3 * sum;
    for (int64_t to = 0; to < jace_task_count (task); to++) {
        size_t count = 0;
        if (to != jace_task_rank (task)
        &&  jace_task_requested (task, to, &count))
            jace_task_send (task, to, &probe->x, 1,
                            jace_task_first_row (task));
    }
    jace_task_set_change (task, 1.0);
    return 0;
}

static const double *
s_probe_solution (void *state, int64_t *first, size_t *count)
{
    *first = 0;
    *count = 5;
    return ((probe_t *) state)->answer;
}

static void
s_probe_destroy (void **state_p)
{
    free (*state_p);
    *state_p = NULL;
}

static const void *
s_probe_checkpoint (void *state, size_t *size)
{
    *size = sizeof (probe_t);
    return state;
}

static int
s_probe_restore (jace_task_t *task, void *state, const void *bytes,
                 size_t size, char *reason, size_t reason_size)
{
    //  A rebalance's iterate brings our one unknown
    if (size == sizeof (double)) {
        memcpy (&((probe_t *) state)->x, bytes, size);
        return 0;
    }
    if (size != sizeof (probe_t)) {
        snprintf (reason, reason_size, "probe state of %zu bytes", size);
        return -1;
    }
    memcpy (state, bytes, size);
    return 0;
}

static const jace_app_t s_probe = {
    .name = "probe",
    .setup = s_probe_setup,
    .iterate = s_probe_iterate,
    .solution = s_probe_solution,
    .destroy = s_probe_destroy,
    .checkpoint = s_probe_checkpoint,
    .restore = s_probe_restore,
    .idle_without_news = true
};

//  --------------------------------------------------------------------------
//  The rig: a daemon and the sockets that play everyone else

typedef struct {
    zactor_t *daemon;           //  The daemon under test
    zsock_t *supernode;         //  ROUTER: its super-node
    zsock_t *spawner;           //  DEALER to its control endpoint
    zsock_t *others;            //  PULL: data endpoint of tasks 1, 2
    zsock_t *push;              //  PUSH to its data endpoint
    jace_key_t lease_key;       //  The daemon's, as its super-node has it
    jace_key_t job_key;         //  Every job's key, in this test
    int64_t unsealed;           //  Job messages from it not sealed so
    char others_endpoint [256]; //  Where others is bound
    jace_node_t node;           //  Its record, from its last HELLO
    int64_t hellos;             //  HELLOs received
    int64_t hellos_keyed;       //  ... carrying the daemon's lease key
    int64_t heartbeats;         //  HEARTBEATs it sent the spawner
    int64_t refused_busy;       //  REFUSEs with code BUSY
    int64_t refused_leased;     //  REFUSEs with code LEASED
    int64_t refused_other;      //  REFUSEs with another code
    int64_t results;            //  RESULTs received
    int64_t adopt_answers;      //  ASSIGNs with the job key received
                                //  (answers to ADOPT)
    int64_t acked;              //  Highest CHUNK_ACK received
    int64_t acks;               //  CHUNK_ACKs received
    bool acks_grow;             //  Each CHUNK_ACK above the one before
} rig_t;

static void
s_serve_supernode (rig_t *rig)
{
    while (zsock_events (rig->supernode) & ZMQ_POLLIN) {
        jace_msg_t *msg = jace_msg_recv (rig->supernode, NULL, 0, NULL, 0);
        if (msg && jace_msg_type (msg) == JACE_MSG_HELLO
        &&  jace_msg_node_count (msg) == 1) {
            rig->node = *jace_msg_node (msg, 0);
            rig->hellos++;
            char lease [JACE_KEY_TEXT + 1];
            jace_key_encode (&rig->lease_key, lease);
            rig->hellos_keyed += streq (jace_msg_token (msg), lease);
            jace_msg_t *welcome = jace_msg_new (JACE_MSG_WELCOME);
            jace_msg_set_routing_id (welcome, jace_msg_routing_id (msg));
            jace_msg_send (&welcome, rig->supernode);
        }
        jace_msg_destroy (&msg);
    }
    while (zsock_events (rig->others) & ZMQ_POLLIN) {
        zmsg_t *data = zmsg_recv (rig->others);
        zmsg_destroy (&data);
    }
}

//  Count what a message from the daemon says about it.
static void
s_note (rig_t *rig, const jace_msg_t *msg)
{
    //  Every word of the daemon about a job is sealed with its key.
    if (!jace_msg_sealed (msg, rig->job_key.bytes))
        rig->unsealed++;
    char key [JACE_KEY_TEXT + 1];
    jace_key_encode (&rig->job_key, key);
    switch (jace_msg_type (msg)) {
        case JACE_MSG_HEARTBEAT: rig->heartbeats++; break;
        case JACE_MSG_RESULT: rig->results++; break;
        case JACE_MSG_ASSIGN:
            rig->adopt_answers += streq (jace_msg_key (msg), key);
            break;
        case JACE_MSG_CHUNK_ACK:
            //  The first says the daemon took the declaration: 0 bytes
            rig->acks++;
            rig->acks_grow &= jace_msg_received (msg) > rig->acked
                           || (rig->acks == 1 && jace_msg_received (msg) == 0);
            rig->acked = jace_msg_received (msg);
            break;
        case JACE_MSG_REFUSE:
            if (jace_msg_code (msg) == JACE_REFUSE_BUSY)
                rig->refused_busy++;
            else
            if (jace_msg_code (msg) == JACE_REFUSE_LEASED)
                rig->refused_leased++;
            else
                rig->refused_other++;
            break;
        default: break;
    }
}

//  Serve everyone for msec; returns the first message of `type` from the
//  daemon (caller destroys), or NULL.  Other messages are counted only.
static jace_msg_t *
s_expect (rig_t *rig, jace_msg_type_t type, int msec)
{
    int64_t deadline = zclock_mono () + msec;
    zpoller_t *poller = zpoller_new (rig->spawner, rig->supernode,
                                     rig->others, NULL);
    jace_msg_t *found = NULL;
    while (!found) {
        int64_t left = deadline - zclock_mono ();
        if (left <= 0)
            break;
        void *which = zpoller_wait (poller, (int) left);
        s_serve_supernode (rig);
        if (which != rig->spawner)
            continue;
        jace_msg_t *msg = jace_msg_recv (rig->spawner, NULL, 0, NULL, 0);
        if (!msg)
            continue;
        s_note (rig, msg);
        if (jace_msg_type (msg) == type)
            found = msg;
        else
            jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return found;
}

static void
s_pump (rig_t *rig, int msec)
{
    jace_msg_t *none = s_expect (rig, JACE_MSG_TYPE_COUNT, msec);
    assert (!none);
}

//  As the job's spawner: everything but ASSIGN sealed with the job key,
//  once its fields are set.
static void
s_send (rig_t *rig, jace_msg_t *msg)
{
    if (jace_msg_type (msg) != JACE_MSG_ASSIGN)
        jace_msg_seal (msg, rig->job_key.bytes);
    int rc = jace_msg_send (&msg, rig->spawner);
    assert (rc == 0);
}

static int
s_rig_start (rig_t *rig, uint64_t task_memory)
{
    memset (rig, 0, sizeof *rig);
    jace_key_random (&rig->lease_key);
    jace_key_random (&rig->job_key);
    rig->supernode = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (rig->supernode, JACE_MSG_HEADER_MAX);
    zsock_bind (rig->supernode, "tcp://127.0.0.1:*");
    char *supernode = zsock_last_endpoint (rig->supernode);
    rig->others = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (rig->others, 0);
    zsock_bind (rig->others, "tcp://127.0.0.1:*");
    char *others = zsock_last_endpoint (rig->others);
    snprintf (rig->others_endpoint, sizeof rig->others_endpoint, "%s",
              others);
    zstr_free (&others);
    const char *supernodes [] = { supernode };
    daemon_config_t config = {
        .supernodes = supernodes, .supernode_count = 1, .id = "d-probe",
        .power = 1, .speed = 0.5, .heartbeat_msec = 100,
        .checkpoint_memory = 64 << 20, .task_memory = task_memory,
        .app = &s_probe, .lease_key = &rig->lease_key
    };
    rig->daemon = zactor_new (daemon_server_actor, &config);
    char *control = daemon_server_endpoint (rig->daemon);
    zstr_free (&supernode);
    if (!control)
        return -1;
    rig->spawner = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (rig->spawner, JACE_MSG_HEADER_MAX);
    zsock_set_sndhwm (rig->spawner, 0);
    zsock_connect (rig->spawner, "%s", control);
    zstr_free (&control);
    int64_t deadline = zclock_mono () + 10000;
    while (rig->hellos == 0 && zclock_mono () < deadline)
        s_pump (rig, 50);
    if (rig->hellos == 0)
        return -1;
    rig->push = zsock_new (ZMQ_PUSH);
    jace_msg_prepare_socket (rig->push, 0);
    zsock_connect (rig->push, "%s", rig->node.data);
    return 0;
}

static void
s_rig_stop (rig_t *rig)
{
    zactor_destroy (&rig->daemon);
    zsock_destroy (&rig->spawner);
    zsock_destroy (&rig->push);
    zsock_destroy (&rig->others);
    zsock_destroy (&rig->supernode);
}

//  Wait until the daemon's HELLO says `state`; returns msec waited or -1.
static int64_t
s_wait_state (rig_t *rig, int64_t state, int msec)
{
    int64_t start = zclock_mono ();
    while (zclock_mono () - start < msec) {
        if (rig->node.state == state)
            return zclock_mono () - start;
        s_pump (rig, 20);
    }
    return rig->node.state == state ? zclock_mono () - start : -1;
}

//  --------------------------------------------------------------------------
//  Messages of the spawner

//  The ASSIGN of task 0, with the lease token the super-node would have
//  issued us (no keys: our user id is "") and the job key.
static jace_msg_t *
s_assign (rig_t *rig, const char *job, int64_t tasks, int64_t epoch)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_sender (assign, job);
    jace_msg_set_job (assign, job);
    char text [JACE_KEY_TEXT + 1];
    jace_lease_token (&rig->lease_key, job, "", rig->node.id, text);
    jace_msg_set_token (assign, text);
    jace_key_encode (&rig->job_key, text);
    jace_msg_set_key (assign, text);
    jace_msg_set_task (assign, 0);
    jace_msg_set_epoch (assign, epoch);
    jace_msg_set_count (assign, tasks);
    jace_msg_set_app (assign, "probe");
    char value [32];
    snprintf (value, sizeof value, "%" PRId64, tasks);
    jace_msg_set_param (assign, "block/rows", value);
    jace_msg_set_param (assign, "checkpoint/every_iterations", "5");
    for (int64_t rank = 0; rank <= tasks; rank++) {
        char key [32];
        snprintf (key, sizeof key, "block/first/%" PRId64, rank);
        snprintf (value, sizeof value, "%" PRId64, rank);
        jace_msg_set_param (assign, key, value);
    }
    for (int64_t rank = 0; rank < tasks; rank++) {
        jace_node_t node = rig->node;
        node.task = rank;
        node.epoch = rank == 0 ? epoch : 1;
        if (rank > 0) {
            snprintf (node.id, sizeof node.id, "fake-%" PRId64, rank);
            snprintf (node.data, sizeof node.data, "%s",
                      rig->others_endpoint);
        }
        jace_msg_add_node (assign, &node);
    }
    return assign;
}

static jace_msg_t *
s_job_msg (jace_msg_type_t type, const char *job)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, job);
    jace_msg_set_job (msg, job);
    return msg;
}

static void
s_declare (jace_msg_t *assign, int index, int kind, size_t length)
{
    char key [64], value [32];
    snprintf (key, sizeof key, "block/data/%d/kind", index);
    snprintf (value, sizeof value, "%d", kind);
    jace_msg_set_param (assign, key, value);
    snprintf (key, sizeof key, "block/data/%d/length", index);
    snprintf (value, sizeof value, "%zu", length);
    jace_msg_set_param (assign, key, value);
}

//  Declare the digest of `count` blocks of raw (wire order) bytes.
static void
s_declare_digest (jace_msg_t *assign, const int *kinds,
                  uint8_t *const *blocks, const size_t *lengths, int count)
{
    jace_msg_t *data = jace_msg_new (JACE_MSG_CHUNK);
    for (int i = 0; i < count; i++) {
        size_t element = kinds [i] == 3 ? 1 : 8;
        void *space = jace_msg_add_payload_space (data,
                          (jace_payload_kind_t) kinds [i], lengths [i]);
        memcpy (space, blocks [i], lengths [i] * element);
    }
    char digest [JACE_DIGEST_TEXT + 1];
    jace_msg_payload_digest (data, digest);
    jace_msg_set_param (assign, "block/data/digest", digest);
    jace_msg_destroy (&data);
}

//  A digest of the right form, for declarations refused before it counts
static void
s_declare_any_digest (jace_msg_t *assign)
{
    char digest [JACE_DIGEST_TEXT + 1];
    memset (digest, '0', JACE_DIGEST_TEXT);
    digest [JACE_DIGEST_TEXT] = 0;
    jace_msg_set_param (assign, "block/data/digest", digest);
}

static jace_msg_t *
s_chunk (const char *job, int64_t block, size_t offset, int kind,
         const void *data, size_t count)
{
    jace_msg_t *chunk = s_job_msg (JACE_MSG_CHUNK, job);
    jace_msg_set_task (chunk, 0);
    jace_msg_set_epoch (chunk, 1);
    jace_msg_set_block (chunk, block);
    jace_msg_set_offset (chunk, (int64_t) offset);
    jace_msg_add_payload (chunk, (jace_payload_kind_t) kind, data, count);
    return chunk;
}

static jace_msg_t *
s_start (const char *job, const int64_t *sinks, size_t count, bool payload)
{
    jace_msg_t *start = s_job_msg (JACE_MSG_START, job);
    jace_msg_set_epoch (start, 1);
    if (payload)
        jace_msg_add_payload (start, JACE_PAYLOAD_I64, sinks, count);
    return start;
}

static void
s_stop (rig_t *rig, const char *job)
{
    jace_msg_t *stop = s_job_msg (JACE_MSG_STOP, job);
    jace_msg_set_reason (stop, "test over");
    s_send (rig, stop);
}

//  --------------------------------------------------------------------------
//  20 MiB of data in 1 MiB chunks, a window of 4 MiB unacknowledged.

#define DATA_BLOCKS 3

static void
s_test_chunks (rig_t *rig)
{
    size_t lengths [DATA_BLOCKS] = { 1500000, 500000, 4 * 1048576 + 123 };
    int kinds [DATA_BLOCKS] = { 1, 2, 3 };
    size_t sizes [DATA_BLOCKS], total = 0;
    uint8_t *blocks [DATA_BLOCKS];
    uint64_t hash = 14695981039346656037ULL;
    uint64_t seed = 42;
    for (int i = 0; i < DATA_BLOCKS; i++) {
        sizes [i] = lengths [i] * (kinds [i] == 3 ? 1 : 8);
        blocks [i] = (uint8_t *) malloc (sizes [i]);
        for (size_t b = 0; b < sizes [i]; b++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            blocks [i][b] = (uint8_t) (seed >> 56);
        }
        hash = s_fnv (hash, blocks [i], sizes [i]);
        total += sizes [i];
    }
    jace_msg_t *assign = s_assign (rig, "job-chunks", 1, 1);
    jace_msg_set_param (assign, "block/data", "3");
    for (int i = 0; i < DATA_BLOCKS; i++)
        s_declare (assign, i, kinds [i], lengths [i]);
    s_declare_digest (assign, kinds, blocks, lengths, DATA_BLOCKS);
    s_send (rig, assign);
    int64_t started = zclock_mono ();
    int64_t beats_before = rig->heartbeats;
    size_t sent = 0, chunks = 0;
    bool paused = false;
    rig->acked = 0;
    rig->acks_grow = true;
    for (int i = 0; i < DATA_BLOCKS; i++) {
        size_t element = kinds [i] == 3 ? 1 : 8;
        size_t piece = JACE_CHUNK_BYTES / element;
        for (size_t offset = 0; offset < lengths [i]; offset += piece) {
            size_t count = lengths [i] - offset < piece
                         ? lengths [i] - offset : piece;
            while (sent - (size_t) rig->acked > 4 * JACE_CHUNK_BYTES) {
                jace_msg_t *ack = s_expect (rig, JACE_MSG_CHUNK_ACK, 5000);
                if (!ack)
                    goto out_stalled;
                jace_msg_destroy (&ack);
            }
            s_send (rig, s_chunk ("job-chunks", i, offset, kinds [i],
                                  blocks [i] + offset * element, count));
            sent += count * element;
            chunks++;
            //  A slow spawner half way: the daemon must keep beating.
            if (!paused && sent > total / 2) {
                s_pump (rig, 1000);
                paused = true;
            }
        }
    }
    while ((size_t) rig->acked < total) {
        jace_msg_t *ack = s_expect (rig, JACE_MSG_CHUNK_ACK, 5000);
        if (!ack)
            break;
        jace_msg_destroy (&ack);
    }
out_stalled:
    diag ("%zu bytes in %zu chunks, %" PRId64 " acknowledged in %" PRId64
          " acks, %" PRId64 " ms (1 s of it paused), %" PRId64 " heartbeats "
          "meanwhile", sent, chunks, rig->acked, rig->acks,
          zclock_mono () - started, rig->heartbeats - beats_before);
    ok ((size_t) rig->acked == total && rig->acks_grow
        && rig->acks == (int64_t) chunks + 1, "the declaration and every "
        "chunk of 20 MiB acknowledged, received growing");
    ok (rig->heartbeats - beats_before >= 3, "the daemon kept sending "
        "heartbeats during the transfer");
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 10000);
    ok (accept && jace_msg_payload_count (accept) == 1
        && jace_msg_payload_length (accept, 0) == 0,
        "task accepted, with no sources (a job of one task)");
    jace_msg_destroy (&accept);
    s_send (rig, s_start ("job-chunks", NULL, 0, true));
    jace_msg_t *collect = s_job_msg (JACE_MSG_COLLECT, "job-chunks");
    jace_msg_set_count (collect, 7);
    s_send (rig, collect);
    jace_msg_t *result = s_expect (rig, JACE_MSG_RESULT, 5000);
    double answer [5] = { 0 };
    if (result && jace_msg_payload_count (result) == 1
    &&  jace_msg_payload_length (result, 0) == 5)
        jace_msg_payload_copy (result, 0, answer);
    ok (answer [0] == (double) (hash >> 32)
        && answer [1] == (double) (hash & 0xffffffffu)
        && answer [2] == (double) total && answer [3] == DATA_BLOCKS,
        "the application's blocks hold the 20 MiB intact (checksum)");
    jace_msg_destroy (&result);
    s_stop (rig, "job-chunks");
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0, "free after STOP");
    for (int i = 0; i < DATA_BLOCKS; i++)
        free (blocks [i]);
}

//  --------------------------------------------------------------------------

static void
s_test_refusals (rig_t *rig)
{
    //  Out of order: the second chunk skips one.
    jace_msg_t *assign = s_assign (rig, "job-order", 1, 1);
    jace_msg_set_param (assign, "block/data", "1");
    s_declare (assign, 0, 3, 3 * 1024);
    s_declare_any_digest (assign);
    s_send (rig, assign);
    char bytes [1024] = "";
    s_send (rig, s_chunk ("job-order", 0, 0, 3, bytes, 1024));
    s_send (rig, s_chunk ("job-order", 0, 2048, 3, bytes, 1024));
    jace_msg_t *refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_BUSY
        && strstr (jace_msg_reason (refuse), "out of order"),
        "a chunk out of order: REFUSE BUSY");
    jace_msg_destroy (&refuse);
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0,
        "free again after the out-of-order refusal");

    //  More than --max-task-memory (64 MiB here).
    assign = s_assign (rig, "job-huge", 1, 1);
    jace_msg_set_param (assign, "block/data", "2");
    s_declare (assign, 0, 1, 8 << 20);
    s_declare (assign, 1, 3, 1 << 20);
    s_declare_any_digest (assign);
    s_send (rig, assign);
    refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_BUSY
        && strstr (jace_msg_reason (refuse), "MiB"),
        "65 MiB declared against a 64 MiB limit: REFUSE BUSY with sizes");
    if (refuse)
        diag ("reason: %s", jace_msg_reason (refuse));
    jace_msg_destroy (&refuse);

    //  Data that does not hash to its digest: changed on the way.
    assign = s_assign (rig, "job-corrupt", 1, 1);
    jace_msg_set_param (assign, "block/data", "1");
    s_declare (assign, 0, 3, sizeof bytes);
    uint8_t *declared [1] = { (uint8_t *) bytes };
    size_t length [1] = { sizeof bytes };
    int kind [1] = { 3 };
    s_declare_digest (assign, kind, declared, length, 1);
    s_send (rig, assign);
    char changed [sizeof bytes] = "";
    changed [100] = 1;
    s_send (rig, s_chunk ("job-corrupt", 0, 0, 3, changed, sizeof changed));
    refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_BUSY
        && strstr (jace_msg_reason (refuse), "digest"),
        "data that does not hash to its digest: REFUSE BUSY");
    jace_msg_destroy (&refuse);
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0,
        "free again after the corrupt data");

    assign = s_assign (rig, "job-nonsense", 1, 1);
    jace_msg_set_param (assign, "block/data", "99");
    s_send (rig, assign);
    refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_FAILED,
        "block/data = 99: REFUSE FAILED");
    jace_msg_destroy (&refuse);

    assign = s_assign (rig, "job-setup", 1, 1);
    jace_msg_set_param (assign, "probe/fail", "1");
    s_send (rig, assign);
    refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_FAILED,
        "a failing set-up: REFUSE FAILED");
    jace_msg_destroy (&refuse);
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0,
        "free after the refusals");
}

//  A spawner that heartbeats keeps the daemon; a silent one loses it.
static void
s_test_orphan (rig_t *rig)
{
    jace_msg_t *assign = s_assign (rig, "job-orphan", 3, 1);
    jace_msg_set_param (assign, "job/orphan_timeout", "2");
    s_send (rig, assign);
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    int64_t source = -1;
    if (accept && jace_msg_payload_count (accept) == 1
    &&  jace_msg_payload_length (accept, 0) == 1)
        jace_msg_payload_copy (accept, 0, &source);
    ok (source == 1, "ACCEPT carries the sources the set-up asked: task 1");
    jace_msg_destroy (&accept);
    s_send (rig, s_start ("job-orphan", NULL, 0, true));
    int64_t last_word = 0;
    for (int beat = 0; beat < 6; beat++) {
        s_send (rig, s_job_msg (JACE_MSG_HEARTBEAT, "job-orphan"));
        last_word = zclock_mono ();
        s_pump (rig, 500);
    }
    ok (rig->node.state == JACE_NODE_WORKING,
        "3 s of spawner heartbeats keep a 2 s orphan timeout away");
    int64_t waited = s_wait_state (rig, JACE_NODE_FREE, 10000);
    if (waited >= 0)
        waited = zclock_mono () - last_word;
    diag ("free %" PRId64 " ms after the spawner's last word", waited);
    ok (waited >= 1900, "the daemon waits out the orphan timeout");
    ok (waited >= 0 && waited < 5000, "then frees itself (HELLO free)");
    assign = s_assign (rig, "job-after", 1, 1);
    s_send (rig, assign);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    ok (accept != NULL, "and takes the next task");
    jace_msg_destroy (&accept);
    s_stop (rig, "job-after");
    s_wait_state (rig, JACE_NODE_FREE, 5000);
}

//  --------------------------------------------------------------------------
//  The storm

//  Iterations of the tasks we play: within reach of the daemon's check.
static int64_t s_iteration;

static void
s_push_data (rig_t *rig, const char *job, int64_t from, bool request)
{
    if (request) {
        //  A request list: the sender's piece of the set-up exchange
        unsigned char unknown [8] = { 0 };
        jace_piece_t piece = { from, 0, unknown, sizeof unknown };
        jace_msg_t *list = jace_transfer_encode (job, &rig->job_key, from, 1,
                                                 JACE_TRANSFER_PIECES, 0,
                                                 JACE_TRANSFER_DIRECT,
                                                 &piece, 1);
        jace_msg_send (&list, rig->push);
        return;
    }
    jace_msg_t *data = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (data, job);
    jace_msg_set_task (data, from);
    jace_msg_set_epoch (data, 1);
    double value = (double) from;
    jace_msg_set_iteration (data, ++s_iteration);
    jace_msg_set_first (data, from);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, &value, 1);
    jace_msg_seal (data, rig->job_key.bytes);
    jace_msg_send (&data, rig->push);
}

//  One random disturbance of the running round.
static void
s_disturb (rig_t *rig, const char *job, int64_t *remap_epoch)
{
    jace_msg_t *msg = NULL;
    switch (randof (8)) {
        case 0:
            msg = s_job_msg (JACE_MSG_COLLECT, job);
            jace_msg_set_count (msg, randof (1000));
            break;
        case 1: {
            jace_node_t node = rig->node;
            node.task = 1 + randof (STORM_TASKS - 1);
            node.epoch = ++*remap_epoch;
            snprintf (node.data, sizeof node.data, "%s",
                      rig->others_endpoint);
            msg = s_job_msg (JACE_MSG_REMAP, job);
            jace_msg_set_task (msg, node.task);
            jace_msg_set_epoch (msg, node.epoch);
            jace_msg_add_node (msg, &node);
            break;
        }
        case 2: msg = s_job_msg (JACE_MSG_ADOPT, job); break;
        case 3: msg = s_assign (rig, "job-intruder", 1, 1); break;
        case 4: msg = s_job_msg (JACE_MSG_HEARTBEAT, job); break;
        case 5: s_push_data (rig, job, 2, true); break;
        default: s_push_data (rig, job, 1 + randof (2), false); break;
    }
    if (msg)
        s_send (rig, msg);
}

static void
s_test_storm (rig_t *rig)
{
    int64_t accepted = 0, stopped_ready = 0;
    int64_t leased_before = rig->refused_leased;
    int64_t other_before = rig->refused_other;
    int64_t remap_epoch = 1;
    int64_t started = zclock_mono ();
    for (int round = 0; round < STORM_ROUNDS; round++) {
        char job [32];
        snprintf (job, sizeof job, "job-storm-%d", round);
        //  A replacement (epoch 2) fetches its copies first.
        s_send (rig, s_assign (rig, job, STORM_TASKS, 1 + randof (2)));
        jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
        if (!accept)
            break;
        accepted++;
        jace_msg_destroy (&accept);
        if (randof (10) == 0) {
            s_stop (rig, job);          //  Before START
            stopped_ready++;
            continue;
        }
        int64_t sinks [] = { 1, 2 };
        int variant = randof (4);
        s_send (rig, s_start (job, sinks + (variant == 1), variant == 0
                              ? 0 : variant == 1 ? 1 : 2, variant != 3));
        int disturbances = randof (6);
        for (int i = 0; i < disturbances; i++) {
            s_pump (rig, randof (15));
            s_disturb (rig, job, &remap_epoch);
        }
        s_pump (rig, randof (20));
        s_stop (rig, job);
    }
    s_pump (rig, 200);
    diag ("%" PRId64 " rounds in %" PRId64 " ms: %" PRId64 " stopped before "
          "START, %" PRId64 " results, %" PRId64 " ADOPT answers, %" PRId64
          " refusals as leased elsewhere, %" PRId64 " other refusals",
          accepted, zclock_mono () - started, stopped_ready, rig->results,
          rig->adopt_answers, rig->refused_leased - leased_before,
          rig->refused_other - other_before);
    is_int (accepted, STORM_ROUNDS, "every round's ASSIGN was accepted after "
            "the previous round's STOP");
    //  The intruder's token is valid: its lease lapsed, as a daemon at
    //  work for another job shows
    ok (rig->refused_leased > leased_before
        && rig->refused_other == other_before,
        "another job's ASSIGN while at work is refused LEASED, nothing "
        "else is refused");
    ok (rig->results > 0 && rig->adopt_answers > 0,
        "COLLECT and ADOPT were answered during the storm");
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0, "free after the "
        "storm");
    diag ("%" PRId64 " HELLOs, %" PRId64 " with the lease key; %" PRId64
          " job messages unsealed", rig->hellos, rig->hellos_keyed,
          rig->unsealed);
    ok (rig->unsealed == 0 && rig->hellos_keyed == rig->hellos,
        "every job message of the daemon was sealed with the job key, "
        "every HELLO carried its lease key");
    s_send (rig, s_assign (rig, "job-last", 1, 1));
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    s_send (rig, s_start ("job-last", NULL, 0, true));
    s_pump (rig, 50);
    jace_msg_t *collect = s_job_msg (JACE_MSG_COLLECT, "job-last");
    s_send (rig, collect);
    jace_msg_t *result = s_expect (rig, JACE_MSG_RESULT, 5000);
    ok (accept && result, "the daemon still takes, runs and reports a task");
    jace_msg_destroy (&accept);
    jace_msg_destroy (&result);
    s_stop (rig, "job-last");
}

//  --------------------------------------------------------------------------
//  A rebalance's slices: the daemon keeps its block of a snapshot and
//  serves it to the job's other tasks, and a task assigned with
//  block/handoff_snapshot gathers its part from them.  We stand for task
//  1, the daemon runs task 0.

//  The first message of `type` the daemon sends task 1 within msec, or
//  NULL; the rest of its data for task 1 is dropped, and the super-node
//  and spawner sockets are served meanwhile.
static jace_msg_t *
s_expect_other (rig_t *rig, jace_msg_type_t type, int msec)
{
    int64_t deadline = zclock_mono () + msec;
    jace_msg_t *found = NULL;
    while (!found && zclock_mono () < deadline) {
        if (zsock_events (rig->others) & ZMQ_POLLIN) {
            jace_msg_t *msg = jace_msg_recv (rig->others, NULL, 0, NULL, 0);
            if (msg && jace_msg_type (msg) == type)
                found = msg;
            else
                jace_msg_destroy (&msg);
            continue;
        }
        zpoller_t *poller = zpoller_new (rig->others, rig->supernode,
                                         rig->spawner, NULL);
        void *which = zpoller_wait (poller, 10);
        zpoller_destroy (&poller);
        if (which == rig->supernode) {
            jace_msg_t *hello = jace_msg_recv (rig->supernode, NULL, 0, NULL,
                                               0);
            if (hello && jace_msg_type (hello) == JACE_MSG_HELLO
            &&  jace_msg_node_count (hello) == 1) {
                rig->node = *jace_msg_node (hello, 0);
                jace_msg_t *welcome = jace_msg_new (JACE_MSG_WELCOME);
                jace_msg_set_routing_id (welcome, jace_msg_routing_id (hello));
                jace_msg_send (&welcome, rig->supernode);
            }
            jace_msg_destroy (&hello);
        }
        else
        if (which == rig->spawner) {
            jace_msg_t *msg = jace_msg_recv (rig->spawner, NULL, 0, NULL, 0);
            if (msg)
                s_note (rig, msg);
            jace_msg_destroy (&msg);
        }
    }
    return found;
}

//  Task 1's SLICE_ASK of snapshot for `ranges` (pairs), sealed with key
//  (NULL: unsealed).
static void
s_push_ask (rig_t *rig, const char *job, int64_t asker, int64_t snapshot,
            const int64_t *ranges, size_t length, const jace_key_t *key)
{
    jace_msg_t *ask = s_job_msg (JACE_MSG_SLICE_ASK, job);
    jace_msg_set_task (ask, asker);
    jace_msg_set_epoch (ask, 1);
    jace_msg_set_iteration (ask, snapshot);
    jace_msg_add_payload (ask, JACE_PAYLOAD_I64, ranges, length);
    if (key)
        jace_msg_seal (ask, key->bytes);
    jace_msg_send (&ask, rig->push);
}

//  Task `from`'s SLICE of snapshot with `count` values, sealed with key.
static void
s_push_slice (rig_t *rig, const char *job, int64_t from, int64_t snapshot,
              const double *values, size_t count, const jace_key_t *key)
{
    jace_msg_t *slice = s_job_msg (JACE_MSG_SLICE, job);
    jace_msg_set_task (slice, from);
    jace_msg_set_epoch (slice, 1);
    jace_msg_set_iteration (slice, snapshot);
    jace_msg_add_payload (slice, JACE_PAYLOAD_F64, values, count);
    if (key)
        jace_msg_seal (slice, key->bytes);
    jace_msg_send (&slice, rig->push);
}

//  An ASSIGN of task 0 at `epoch` that gathers its part of snapshot 7
//  from the old cut 0, 1, 2.
static jace_msg_t *
s_assign_gathering (rig_t *rig, const char *job, int64_t epoch)
{
    jace_msg_t *assign = s_assign (rig, job, 2, epoch);
    jace_msg_set_param (assign, "block/handoff_snapshot", "7");
    jace_msg_set_param (assign, "block/handoff_iteration", "3");
    jace_msg_set_param (assign, "block/handoff_first/0", "0");
    jace_msg_set_param (assign, "block/handoff_first/1", "1");
    jace_msg_set_param (assign, "block/handoff_first/2", "2");
    return assign;
}

//  START our task with task 1 as its sink, and give it task 1's request
//  list.
static void
s_start_with_sink (rig_t *rig, const char *job, int64_t epoch)
{
    int64_t sinks [] = { 1 };
    jace_msg_t *start = s_start (job, sinks, 1, true);
    jace_msg_set_epoch (start, epoch);
    s_send (rig, start);
    s_push_data (rig, job, 1, true);
}

//  True once the task of `epoch` reports an iteration done (PROGRESS),
//  within msec: a fixed pause was too short once in CI, under load.
static bool
s_wait_iterated (rig_t *rig, int64_t epoch, int msec)
{
    int64_t deadline = zclock_mono () + msec;
    bool done = false;
    while (!done && zclock_mono () < deadline) {
        jace_msg_t *progress = s_expect (rig, JACE_MSG_PROGRESS,
                                         (int) (deadline - zclock_mono ()));
        done = progress && jace_msg_epoch (progress) == epoch
            && jace_msg_iteration (progress) >= 1;
        jace_msg_destroy (&progress);
    }
    return done;
}

static void
s_test_slices (rig_t *rig)
{
    const char *job = "job-slices";
    jace_key_t stranger;
    jace_key_random (&stranger);
    s_send (rig, s_assign (rig, job, 2, 1));
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    jace_msg_destroy (&accept);
    s_start_with_sink (rig, job, 1);
    s_pump (rig, 50);
    jace_msg_t *collect = s_job_msg (JACE_MSG_COLLECT, job);
    jace_msg_set_count (collect, 7);
    s_send (rig, collect);
    jace_msg_t *result = s_expect (rig, JACE_MSG_RESULT, 5000);
    double block [5] = { 0 };
    if (result && jace_msg_payload_count (result) == 1
    &&  jace_msg_payload_length (result, 0) == 5)
        jace_msg_payload_copy (result, 0, block);
    jace_msg_destroy (&result);

    //  Our ask of snapshot 7 for unknowns 1 and 2 of its block
    int64_t good [] = { 1, 3 };
    s_push_ask (rig, job, 1, 7, good, 2, &rig->job_key);
    jace_msg_t *slice = s_expect_other (rig, JACE_MSG_SLICE, 3000);
    double values [2] = { -1, -1 };
    if (slice && jace_msg_payload_count (slice) == 1
    &&  jace_msg_payload_length (slice, 0) == 2)
        jace_msg_payload_copy (slice, 0, values);
    ok (slice && jace_msg_iteration (slice) == 7
        && jace_msg_sealed (slice, rig->job_key.bytes)
        && values [0] == block [1] && values [1] == block [2],
        "a SLICE_ASK of the snapshot kept is answered with those values, "
        "sealed");
    jace_msg_destroy (&slice);

    //  Asks that must go unanswered
    int64_t outside [] = { 3, 9 }, overlapping [] = { 0, 2, 1, 3 };
    int64_t reversed [] = { 2, 1 }, odd [] = { 1, 2, 3 };
    s_push_ask (rig, job, 1, 8, good, 2, &rig->job_key);
    s_push_ask (rig, job, 1, 7, good, 2, NULL);
    s_push_ask (rig, job, 1, 7, good, 2, &stranger);
    s_push_ask (rig, job, 0, 7, good, 2, &rig->job_key);
    s_push_ask (rig, job, 5, 7, good, 2, &rig->job_key);
    s_push_ask (rig, job, 1, 7, outside, 2, &rig->job_key);
    s_push_ask (rig, job, 1, 7, overlapping, 4, &rig->job_key);
    s_push_ask (rig, job, 1, 7, reversed, 2, &rig->job_key);
    s_push_ask (rig, job, 1, 7, odd, 3, &rig->job_key);
    slice = s_expect_other (rig, JACE_MSG_SLICE, 500);
    ok (!slice, "asks of another snapshot, unsealed, under another key, "
        "for no other task, or for ranges out of the block, overlapping, "
        "reversed or odd are not answered");
    jace_msg_destroy (&slice);
    s_push_ask (rig, job, 1, 7, good, 2, &rig->job_key);
    slice = s_expect_other (rig, JACE_MSG_SLICE, 3000);
    ok (slice != NULL, "and the daemon goes on serving slices");
    jace_msg_destroy (&slice);

    //  The job is cut again: our task gathers unknown 1 from task 1, its
    //  row from the block it keeps.
    s_send (rig, s_assign_gathering (rig, job, 2));
    jace_msg_t *ask = s_expect_other (rig, JACE_MSG_SLICE_ASK, 5000);
    int64_t asked [4] = { 0 };
    if (ask && jace_msg_payload_count (ask) == 1
    &&  jace_msg_payload_length (ask, 0) == 2)
        jace_msg_payload_copy (ask, 0, asked);
    ok (ask && jace_msg_task (ask) == 0 && jace_msg_iteration (ask) == 7
        && jace_msg_sealed (ask, rig->job_key.bytes)
        && asked [0] == 1 && asked [1] == 2,
        "a task assigned to gather asks task 1 for the unknown it reads");
    jace_msg_destroy (&ask);
    double answer = 42, two [2] = { 42, 43 };
    s_push_slice (rig, job, 1, 8, &answer, 1, &rig->job_key);
    s_push_slice (rig, job, 1, 7, two, 2, &rig->job_key);
    s_push_slice (rig, job, 1, 7, &answer, 1, NULL);
    s_push_slice (rig, job, 1, 7, &answer, 1, &stranger);
    s_push_slice (rig, job, 0, 7, &answer, 1, &rig->job_key);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 500);
    ok (!accept, "slices of another snapshot, of the wrong length, "
        "unsealed, under another key or from a task not asked are not "
        "taken");
    jace_msg_destroy (&accept);
    s_push_slice (rig, job, 1, 7, &answer, 1, &rig->job_key);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    ok (accept != NULL, "the right slice completes the set-up: ACCEPT");
    jace_msg_destroy (&accept);
    s_start_with_sink (rig, job, 2);
    bool iterated = s_wait_iterated (rig, 2, 5000);
    collect = s_job_msg (JACE_MSG_COLLECT, job);
    jace_msg_set_count (collect, 8);
    s_send (rig, collect);
    result = s_expect (rig, JACE_MSG_RESULT, 5000);
    block [4] = -1;
    if (result && jace_msg_payload_length (result, 0) == 5)
        jace_msg_payload_copy (result, 0, block);
    diag ("task 1's value after the slices: %g", block [4]);
    ok (iterated && block [4] == 42,
        "the task iterates on the value the slice brought");
    jace_msg_destroy (&result);

    //  Steps: cut into 0..2, 2, 3 from 0, 1, 2, 3, our task needs unknown
    //  1 of old owner 1 and reads unknown 2 of old owner 2; the spawner
    //  scheduled owner 2 at step 1, so its ask waits for owner 1's slice.
    //  (Both stand behind our PULL: the ranges tell them apart.)
    collect = s_job_msg (JACE_MSG_COLLECT, job);
    jace_msg_set_count (collect, 9);
    s_send (rig, collect);
    result = s_expect (rig, JACE_MSG_RESULT, 5000);
    jace_msg_destroy (&result);
    jace_msg_t *stepped = s_assign (rig, job, 3, 3);
    jace_msg_set_param (stepped, "block/first/1", "2");
    jace_msg_set_param (stepped, "block/handoff_snapshot", "9");
    jace_msg_set_param (stepped, "block/handoff_iteration", "3");
    for (int i = 0; i <= 3; i++) {
        char key [64], value [8];
        snprintf (key, sizeof key, "block/handoff_first/%d", i);
        snprintf (value, sizeof value, "%d", i);
        jace_msg_set_param (stepped, key, value);
    }
    jace_msg_set_param (stepped, "block/handoff_step/2", "1");
    s_send (rig, stepped);
    ask = s_expect_other (rig, JACE_MSG_SLICE_ASK, 5000);
    int64_t first_ask [2] = { -1, -1 };
    if (ask && jace_msg_payload_length (ask, 0) == 2)
        jace_msg_payload_copy (ask, 0, first_ask);
    jace_msg_destroy (&ask);
    ask = s_expect_other (rig, JACE_MSG_SLICE_ASK, 300);
    ok (first_ask [0] == 1 && first_ask [1] == 2 && !ask,
        "a task asks the owner of a later step only after the earlier "
        "step's slices");
    jace_msg_destroy (&ask);
    s_push_slice (rig, job, 1, 9, &answer, 1, &rig->job_key);
    ask = s_expect_other (rig, JACE_MSG_SLICE_ASK, 5000);
    int64_t second_ask [2] = { -1, -1 };
    if (ask && jace_msg_payload_length (ask, 0) == 2)
        jace_msg_payload_copy (ask, 0, second_ask);
    jace_msg_destroy (&ask);
    s_push_slice (rig, job, 2, 9, &answer, 1, &rig->job_key);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    ok (second_ask [0] == 2 && second_ask [1] == 3 && accept,
        "then the next step's owner, and ACCEPT once both came");
    jace_msg_destroy (&accept);

    //  Our block kept is of snapshot 9 now: a gathering of 7 cannot be
    jace_msg_t *refuse = NULL;
    s_send (rig, s_assign_gathering (rig, job, 4));
    refuse = s_expect (rig, JACE_MSG_REFUSE, 5000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_BUSY
        && strstr (jace_msg_reason (refuse), "not kept here"),
        "a task whose own old block is not kept gives up at once");
    jace_msg_destroy (&refuse);

    //  Task 1 never answers: the task gives up, and says why.
    s_send (rig, s_assign (rig, job, 2, 5));
    accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    jace_msg_destroy (&accept);
    s_start_with_sink (rig, job, 5);
    s_pump (rig, 50);
    collect = s_job_msg (JACE_MSG_COLLECT, job);
    jace_msg_set_count (collect, 7);
    s_send (rig, collect);
    result = s_expect (rig, JACE_MSG_RESULT, 5000);
    jace_msg_destroy (&result);
    s_send (rig, s_assign_gathering (rig, job, 6));
    refuse = s_expect (rig, JACE_MSG_REFUSE, 15000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_BUSY
        && strstr (jace_msg_reason (refuse), "from tasks 1 did not come"),
        "a task whose slices do not come gives up, naming whom it waited "
        "for");
    if (refuse)
        diag ("%s", jace_msg_reason (refuse));
    jace_msg_destroy (&refuse);
    s_stop (rig, job);
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0,
        "free after the slices");
}

//  --------------------------------------------------------------------------
//  A spawner that dies mid-rebalance, and the one that resumes its job

static bool
s_param_is (const jace_msg_t *msg, const char *key, const char *value)
{
    const char *param = jace_msg_param (msg, key);
    return param && streq (param, value);
}

//  The ASSIGN answering an ADOPT, within msec, or NULL
static jace_msg_t *
s_adopt (rig_t *rig, const char *job, int msec)
{
    s_send (rig, s_job_msg (JACE_MSG_ADOPT, job));
    return s_expect (rig, JACE_MSG_ASSIGN, msec);
}

static void
s_test_resumed_rebalance (rig_t *rig)
{
    const char *job = "job-resumed";
    s_send (rig, s_assign (rig, job, 2, 1));
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    jace_msg_destroy (&accept);
    s_start_with_sink (rig, job, 1);
    s_wait_iterated (rig, 1, 5000);

    //  The rebalance's new block: 3 MiB declared, 1 MiB of it sent, and
    //  its spawner dies.  The resumed one's ADOPT finds the task on the
    //  rows it runs, at its epoch.
    size_t length = 3 << 20;
    uint8_t *bytes = (uint8_t *) zmalloc (length);
    for (size_t b = 0; b < length; b++)
        bytes [b] = (uint8_t) (b * 7);
    int kind = 3;
    jace_msg_t *assign = s_assign (rig, job, 2, 2);
    jace_msg_set_param (assign, "block/data", "1");
    s_declare (assign, 0, kind, length);
    s_declare_digest (assign, &kind, &bytes, &length, 1);
    s_send (rig, assign);
    jace_msg_t *chunk = s_chunk (job, 0, 0, kind, bytes, JACE_CHUNK_BYTES);
    jace_msg_set_epoch (chunk, 2);
    s_send (rig, chunk);
    jace_msg_t *ack = NULL;
    while (!ack || jace_msg_received (ack) < JACE_CHUNK_BYTES) {
        jace_msg_destroy (&ack);
        if (!(ack = s_expect (rig, JACE_MSG_CHUNK_ACK, 5000)))
            break;
    }
    jace_msg_destroy (&ack);
    jace_msg_t *answer = s_adopt (rig, job, 5000);
    diag ("ADOPT answered at epoch %" PRId64,
          answer ? jace_msg_epoch (answer) : -1);
    ok (answer && jace_msg_epoch (answer) == 1
        && s_param_is (answer, "block/started", "1"),
        "ADOPT while a rebalance's block loads is answered with the task "
        "running, at its epoch, started");
    jace_msg_destroy (&answer);
    //  The rest of the dead spawner's block finds no transfer to join
    chunk = s_chunk (job, 0, JACE_CHUNK_BYTES, kind,
                     bytes + JACE_CHUNK_BYTES, JACE_CHUNK_BYTES);
    jace_msg_set_epoch (chunk, 2);
    s_send (rig, chunk);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 500);
    bool iterating = s_wait_iterated (rig, 1, 5000);
    ok (!accept && iterating, "the block given up, the task goes on at "
        "epoch 1");
    jace_msg_destroy (&accept);
    free (bytes);

    //  The resumed spawner cuts again (the same epoch number: the one
    //  given up was never run) and the new task gathers; its START
    //  comes before the slice it waits for, as a resumed spawner STARTs
    //  every task it adopted at once.
    jace_msg_t *collect = s_job_msg (JACE_MSG_COLLECT, job);
    jace_msg_set_count (collect, 7);
    s_send (rig, collect);
    jace_msg_t *result = s_expect (rig, JACE_MSG_RESULT, 5000);
    jace_msg_destroy (&result);
    s_send (rig, s_assign_gathering (rig, job, 2));
    jace_msg_t *ask = s_expect_other (rig, JACE_MSG_SLICE_ASK, 5000);
    jace_msg_destroy (&ask);
    answer = s_adopt (rig, job, 5000);
    ok (answer && jace_msg_epoch (answer) == 2
        && s_param_is (answer, "block/started", "0"),
        "ADOPT while gathering is answered with the new task, not started");
    jace_msg_destroy (&answer);
    int64_t sinks [] = { 1 };
    jace_msg_t *start = s_start (job, sinks, 1, true);
    jace_msg_set_epoch (start, 2);
    s_send (rig, start);
    s_pump (rig, 100);
    double value = 42;
    s_push_slice (rig, job, 1, 7, &value, 1, &rig->job_key);
    accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    s_push_data (rig, job, 1, true);
    iterating = s_wait_iterated (rig, 2, 5000);
    ok (accept && iterating, "a START that came while gathering starts the "
        "task once its slices are in");
    jace_msg_destroy (&accept);
    s_stop (rig, job);
    s_wait_state (rig, JACE_NODE_FREE, 5000);
}

//  --------------------------------------------------------------------------
//  Attacks: a local process that knows the daemon's endpoints and the job
//  id (STATUS publishes both), but neither the lease key nor the job key.

typedef struct {
    zsock_t *control;           //  DEALER to the daemon's control endpoint
    zsock_t *push;              //  PUSH to its data endpoint
    zsock_t *pull;              //  PULL where it wants copies sent
    char pull_endpoint [256];
    jace_key_t key;             //  Its own idea of a job key
} attacker_t;

static void
s_attacker_start (attacker_t *evil, rig_t *rig)
{
    memset (evil, 0, sizeof *evil);
    jace_key_random (&evil->key);
    evil->control = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (evil->control, JACE_MSG_HEADER_MAX);
    zsock_connect (evil->control, "%s", rig->node.endpoint);
    evil->push = zsock_new (ZMQ_PUSH);
    jace_msg_prepare_socket (evil->push, 0);
    zsock_connect (evil->push, "%s", rig->node.data);
    evil->pull = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (evil->pull, 0);
    zsock_bind (evil->pull, "tcp://127.0.0.1:*");
    char *endpoint = zsock_last_endpoint (evil->pull);
    snprintf (evil->pull_endpoint, sizeof evil->pull_endpoint, "%s",
              endpoint);
    zstr_free (&endpoint);
}

static void
s_attacker_stop (attacker_t *evil)
{
    zsock_destroy (&evil->control);
    zsock_destroy (&evil->push);
    zsock_destroy (&evil->pull);
}

//  Send msg twice from the attacker: unsealed, then sealed with its key.
static void
s_evil_twice (attacker_t *evil, zsock_t *sock, jace_msg_t *msg)
{
    zmsg_t *unsealed = jace_msg_encode (msg);
    zmsg_send (&unsealed, sock);
    jace_msg_seal (msg, evil->key.bytes);
    jace_msg_send (&msg, sock);
}

//  Messages waiting on sock after msec (counted, dropped); the last
//  REFUSE's reason and code into reason and code when given.
static int
s_evil_inbox (zsock_t *sock, int msec, int64_t *code, char *reason,
              size_t reason_size)
{
    int count = 0;
    zpoller_t *poller = zpoller_new (sock, NULL);
    int64_t deadline = zclock_mono () + msec;
    while (zclock_mono () < deadline) {
        if (!zpoller_wait (poller, (int) (deadline - zclock_mono ())))
            continue;
        jace_msg_t *msg = jace_msg_recv (sock, NULL, 0, NULL, 0);
        if (!msg)
            continue;
        count++;
        if (code && jace_msg_type (msg) == JACE_MSG_REFUSE) {
            *code = jace_msg_code (msg);
            snprintf (reason, reason_size, "%s", jace_msg_reason (msg));
        }
        jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return count;
}

//  An ASSIGN from the attacker: token `token` (NULL: none).
static void
s_evil_assign (attacker_t *evil, rig_t *rig, const char *job,
               const char *token, int64_t *code, char *reason)
{
    jace_msg_t *assign = s_assign (rig, job, 1, 1);
    jace_msg_set_token (assign, token ? token : "");
    char key [JACE_KEY_TEXT + 1];
    jace_key_encode (&evil->key, key);
    jace_msg_set_key (assign, key);
    jace_msg_send (&assign, evil->control);
    *code = -1;
    *reason = 0;
    s_evil_inbox (evil->control, 300, code, reason, 256);
}

static void
s_test_free_daemon (attacker_t *evil, rig_t *rig)
{
    char reason [256], token [JACE_KEY_TEXT + 1];
    int64_t code;
    bool refused = true;
    s_evil_assign (evil, rig, "job-evil", NULL, &code, reason);
    refused &= code == JACE_REFUSE_BUSY && strstr (reason, "lease token");
    diag ("without a token: %s", reason);
    jace_key_t other;
    jace_key_random (&other);
    jace_lease_token (&other, "job-evil", "", rig->node.id, token);
    s_evil_assign (evil, rig, "job-evil", token, &code, reason);
    refused &= code == JACE_REFUSE_BUSY;
    jace_lease_token (&rig->lease_key, "job-evil", "", "d-other", token);
    s_evil_assign (evil, rig, "job-evil", token, &code, reason);
    refused &= code == JACE_REFUSE_BUSY;
    jace_lease_token (&rig->lease_key, "job-leased", "", rig->node.id,
                      token);
    s_evil_assign (evil, rig, "job-evil", token, &code, reason);
    refused &= code == JACE_REFUSE_BUSY;
    ok (refused, "ASSIGN without a lease token, or with one of another "
        "lease key, daemon or job: REFUSE BUSY");
    s_pump (rig, 300);
    ok (rig->node.state == JACE_NODE_FREE, "and the daemon stays free");
    jace_msg_t *assign = s_assign (rig, "job-keyless", 1, 1);
    jace_msg_set_key (assign, "");
    s_send (rig, assign);
    jace_msg_t *refuse = s_expect (rig, JACE_MSG_REFUSE, 2000);
    ok (refuse && jace_msg_code (refuse) == JACE_REFUSE_FAILED,
        "a leased ASSIGN without a job key: REFUSE FAILED");
    jace_msg_destroy (&refuse);
}

//  Unsealed and falsely sealed STOP, CRASH, ADOPT, REMAP, COLLECT,
//  HEARTBEAT and CHUNK for the running job.
static void
s_steer (attacker_t *evil, rig_t *rig, const char *job)
{
    jace_msg_type_t types [] = { JACE_MSG_STOP, JACE_MSG_CRASH,
        JACE_MSG_ADOPT, JACE_MSG_REMAP, JACE_MSG_COLLECT,
        JACE_MSG_HEARTBEAT, JACE_MSG_CHUNK, JACE_MSG_START };
    for (size_t i = 0; i < sizeof types / sizeof types [0]; i++) {
        jace_msg_t *msg = s_job_msg (types [i], job);
        if (types [i] == JACE_MSG_REMAP) {
            jace_node_t node = rig->node;
            node.task = 1;
            node.epoch = 99;
            snprintf (node.data, sizeof node.data, "%s",
                      evil->pull_endpoint);
            jace_msg_set_task (msg, 1);
            jace_msg_set_epoch (msg, 99);
            jace_msg_add_node (msg, &node);
        }
        s_evil_twice (evil, evil->control, msg);
    }
}

static int64_t
s_progress (rig_t *rig)
{
    jace_msg_t *progress = s_expect (rig, JACE_MSG_PROGRESS, 2000);
    int64_t iteration = progress ? jace_msg_iteration (progress) : -1;
    jace_msg_destroy (&progress);
    return iteration;
}

//  Copies of task 1's state arriving at the tasks we play within msec
//  (FETCH answers: the daemon's own checkpoints are of task 0).
static int
s_others_receive (rig_t *rig, int msec)
{
    int count = 0;
    int64_t deadline = zclock_mono () + msec;
    while (zclock_mono () < deadline) {
        while (zsock_events (rig->others) & ZMQ_POLLIN) {
            jace_msg_t *msg = jace_msg_recv (rig->others, NULL, 0, NULL, 0);
            count += msg && jace_msg_type (msg) == JACE_MSG_CKPT
                     && jace_msg_task (msg) == 1;
            jace_msg_destroy (&msg);
        }
        zclock_sleep (10);
    }
    return count;
}

static void
s_fetch (rig_t *rig, zsock_t *sock, const char *endpoint, int64_t epoch,
         const jace_key_t *key)
{
    jace_node_t node = rig->node;
    node.task = 1;
    node.epoch = epoch;
    snprintf (node.data, sizeof node.data, "%s", endpoint);
    jace_msg_t *fetch = jace_msg_new (JACE_MSG_FETCH);
    jace_msg_set_sender (fetch, "fake-1");
    jace_msg_set_job (fetch, "job-victim");
    jace_msg_set_task (fetch, 1);
    jace_msg_set_epoch (fetch, epoch);
    jace_msg_add_node (fetch, &node);
    if (key)
        jace_msg_seal (fetch, key->bytes);
    jace_msg_send (&fetch, sock);
}

static void
s_test_data_plane (attacker_t *evil, rig_t *rig)
{
    //  A copy of task 1 for the daemon to keep: what a thief would want.
    probe_t state = { .x = 1 };
    jace_msg_t *copy = jace_checkpoint_new ("fake-1", "job-victim", 1, 1, 3,
                                            &state, sizeof state,
                                            &rig->job_key);
    jace_msg_send (&copy, rig->push);
    s_pump (rig, 100);
    s_fetch (rig, evil->push, evil->pull_endpoint, 5, NULL);
    s_fetch (rig, evil->push, evil->pull_endpoint, 5, &evil->key);
    int stolen = s_evil_inbox (evil->pull, 500, NULL, NULL, 0);
    s_others_receive (rig, 10);
    s_fetch (rig, rig->push, rig->others_endpoint, 1, &rig->job_key);
    int answered = s_others_receive (rig, 500);
    diag ("FETCH: %d copies to the attacker, %d to task 1", stolen,
          answered);
    ok (stolen == 0 && answered == 1, "FETCH on behalf of task 1 without "
        "the job key: no copy sent to the attacker (task 1's own gets it)");

    //  Values: an insider's iteration 2^62, an outsider's unsealed DATA,
    //  then task 1's real vector, which must be the one used.
    double values [3] = { 666, 999, 42 };
    int64_t iterations [3] = { (int64_t) 1 << 62, s_iteration + 2,
                               s_iteration + 1 };
    for (int i = 0; i < 3; i++) {
        jace_msg_t *data = jace_msg_new (JACE_MSG_DATA);
        jace_msg_set_job (data, "job-victim");
        jace_msg_set_task (data, 1);
        jace_msg_set_epoch (data, 1);
        jace_msg_set_iteration (data, iterations [i]);
        jace_msg_set_first (data, 1);
        jace_msg_add_payload (data, JACE_PAYLOAD_F64, values + i, 1);
        if (i != 1)
            jace_msg_seal (data, rig->job_key.bytes);
        jace_msg_send (&data, i == 1 ? evil->push : rig->push);
        s_pump (rig, 100);
    }
    s_iteration += 2;
    s_pump (rig, 200);
    jace_msg_t *collect = s_job_msg (JACE_MSG_COLLECT, "job-victim");
    s_send (rig, collect);
    jace_msg_t *result = s_expect (rig, JACE_MSG_RESULT, 2000);
    double answer [5] = { 0 };
    if (result && jace_msg_payload_length (result, 0) == 5)
        jace_msg_payload_copy (result, 0, answer);
    jace_msg_destroy (&result);
    diag ("task 1's value the task uses: %g", answer [4]);
    ok (answer [4] == 42, "DATA at iteration 2^62 refused and unsealed "
        "DATA ignored: the task goes on with task 1's real values");
}

//  A new block of the running task, as a spawner that resumed the job
//  sends it (no lease token, sealed with the job key), but from the
//  attacker: unsealed, and sealed with its own key.  Refused for want of
//  a lease token; the task goes on.
static void
s_test_evil_reassign (attacker_t *evil, rig_t *rig)
{
    jace_msg_t *assign = s_assign (rig, "job-victim", STORM_TASKS, 2);
    jace_msg_set_token (assign, "");
    char key [JACE_KEY_TEXT + 1];
    jace_key_encode (&evil->key, key);
    jace_msg_set_key (assign, key);
    s_evil_twice (evil, evil->control, assign);
    int64_t code = -1;
    char reason [256] = "";
    s_evil_inbox (evil->control, 500, &code, reason, sizeof reason);
    int64_t before = s_progress (rig);
    s_pump (rig, 300);
    ok (code == JACE_REFUSE_BUSY && strstr (reason, "lease token")
        && rig->node.state == JACE_NODE_WORKING && s_progress (rig) > before,
        "a new block of the running task with no lease token, unsealed or "
        "sealed with another key than the job's: REFUSE BUSY, the task "
        "goes on");
}

static void
s_test_running_job (attacker_t *evil, rig_t *rig)
{
    s_send (rig, s_assign (rig, "job-victim", STORM_TASKS, 1));
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    ok (accept != NULL, "the leased ASSIGN beside the attacks is accepted");
    jace_msg_destroy (&accept);
    int64_t sinks [] = { 1, 2 };
    s_send (rig, s_start ("job-victim", sinks, 2, true));
    s_push_data (rig, "job-victim", 1, true);   //  Our sinks' requests
    s_push_data (rig, "job-victim", 2, true);
    s_pump (rig, 300);
    int64_t before = s_progress (rig);
    int64_t results = rig->results, adopted = rig->adopt_answers;
    s_steer (evil, rig, "job-victim");
    int answers = s_evil_inbox (evil->control, 500, NULL, NULL, 0);
    int64_t after = s_progress (rig);
    s_pump (rig, 300);
    diag ("iteration %" PRId64 " before the attacks, %" PRId64 " after; "
          "%d answers to the attacker", before, after, answers);
    ok (answers == 0 && rig->results == results
        && rig->adopt_answers == adopted,
        "STOP, CRASH, ADOPT, REMAP, COLLECT, HEARTBEAT, CHUNK and START "
        "knowing only the job id (unsealed, or sealed with another key): "
        "ignored, nothing answered");
    ok (rig->node.state == JACE_NODE_WORKING && after > before
        && s_progress (rig) > after, "the job goes on: the daemon works and "
        "reports progress to its spawner only");
    s_test_evil_reassign (evil, rig);
    s_test_data_plane (evil, rig);
    s_stop (rig, "job-victim");
    ok (s_wait_state (rig, JACE_NODE_FREE, 5000) >= 0,
        "the spawner's own STOP still ends it");
}

//  Wait, at most msec, until the daemon asks tasks 1 and 2 (our others
//  socket) for its copies: it is gathering them from then on, and copies
//  that came earlier would be taken for late answers and ignored.
static bool
s_await_fetch (rig_t *rig, int msec)
{
    zpoller_t *poller = zpoller_new (rig->others, NULL);
    int64_t deadline = zclock_mono () + msec;
    bool fetched = false;
    while (!fetched && zclock_mono () < deadline) {
        if (zpoller_wait (poller, 100) != rig->others)
            continue;
        jace_msg_t *msg = jace_msg_recv (rig->others, NULL, 0, NULL, 0);
        fetched = msg && jace_msg_type (msg) == JACE_MSG_FETCH;
        jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return fetched;
}

//  A replacement gathers its copies: forged, relabelled and unsealed
//  ones are never restored, the job's own is.
static void
s_test_forged_copies (rig_t *rig)
{
    jace_key_t other;
    jace_key_random (&other);
    probe_t state = { .x = 7 };
    s_send (rig, s_assign (rig, "job-phoenix", STORM_TASKS, 2));
    jace_msg_t *accept = s_expect (rig, JACE_MSG_ACCEPT, 5000);
    jace_msg_destroy (&accept);
    int64_t sinks [] = { 1, 2 };
    s_send (rig, s_start ("job-phoenix", sinks, 2, true));
    if (!s_await_fetch (rig, 10000))
        diag ("the replacement sent no FETCH within 10 s");
    int64_t huge = (int64_t) 1 << 40;
    jace_msg_t *forged [5] = {
        jace_checkpoint_new ("fake-1", "job-phoenix", 0, 2, huge, &state,
                             sizeof state, &other),
        jace_checkpoint_new ("fake-1", "job-phoenix", 1, 2, huge, &state,
                             sizeof state, &rig->job_key),
        jace_checkpoint_begin ("fake-2", "job-phoenix", 0, 2, huge, &state,
                               sizeof state),
        jace_checkpoint_none ("fake-1", "job-phoenix", 0, &other),
        jace_checkpoint_none ("fake-2", "job-phoenix", 0, &other)
    };
    jace_msg_set_task (forged [1], 0);      //  Relabelled from task 1
    for (int i = 0; i < 5; i++)
        jace_msg_send (&forged [i], rig->push);
    jace_msg_t *good = jace_checkpoint_new ("fake-1", "job-phoenix", 0, 1,
        7, &state, sizeof state, &rig->job_key);
    jace_msg_send (&good, rig->push);
    jace_msg_t *none = jace_checkpoint_none ("fake-2", "job-phoenix", 0,
                                             &rig->job_key);
    jace_msg_send (&none, rig->push);
    jace_msg_t *restored = s_expect (rig, JACE_MSG_RESTORED, 3000);
    int64_t iteration = restored ? jace_msg_iteration (restored) : -1;
    diag ("restored from iteration %" PRId64 " kept by task %" PRId64,
          iteration, restored ? jace_msg_count (restored) : -1);
    ok (iteration == 7 && jace_msg_count (restored) == 1,
        "forged (another key), relabelled and unsealed copies of iteration "
        "2^40 are never restored; the job's own copy is");
    jace_msg_destroy (&restored);
    s_stop (rig, "job-phoenix");
    s_wait_state (rig, JACE_NODE_FREE, 5000);
}

static void
s_test_attacks (rig_t *rig)
{
    attacker_t evil;
    s_attacker_start (&evil, rig);
    s_test_free_daemon (&evil, rig);
    s_test_running_job (&evil, rig);
    s_test_forged_copies (rig);
    s_attacker_stop (&evil);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_init ();
    zsys_set_logident ("test_daemon_protocol");
    srandom (7);
    tap_plan (52);
    rig_t rig;
    if (!ok (s_rig_start (&rig, 64 << 20) == 0, "daemon registered")) {
        s_rig_stop (&rig);
        return tap_done ();
    }
    s_test_chunks (&rig);
    s_test_refusals (&rig);
    s_test_orphan (&rig);
    s_test_storm (&rig);
    s_test_attacks (&rig);
    s_test_slices (&rig);
    s_test_resumed_rebalance (&rig);
    s_rig_stop (&rig);
    return tap_done ();
}
