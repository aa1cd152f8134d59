/*  =========================================================================
    bench_latency - per-message latency of Jace's neighbour exchange
    against raw libzmq, interleaved round trip by round trip

    Two threads ping-pong an 8-double vector over loopback TCP along three
    paths, each with its own PUSH/PULL pair:

      raw       raw libzmq: zmq_send, blocking zmq_recv, one frame
      polled    raw libzmq, received as a daemon must (it listens to
                several sockets): zpoller_wait, then non-blocking zmq_recv
      jace      the path an application uses: jace_task_send (DATA
                message: msgpack header + payload frame, sealed, never
                blocking) and the daemon worker's receive (zpoller_wait,
                recv, decode, check the seal, validate, keep the newest
                vector, then recv again while the socket has input)

    On a shared 2-core VM one-way latency drifts by tens of microseconds
    between runs of the same binary, with how deeply the cores sleep.  So
    the paths are not measured one after the other: every round does one
    round trip on each path, in a rotating order, and the overhead is the
    median over rounds of the difference between paths in the same round.
    Prints one-way microseconds; --json for scripts.  With --keys every
    path runs over CURVE (raw ones too), as a grid started with --keys;
    Jace's messages are sealed with the job key either way, and the seal's
    own cost (seal + check) is measured apart.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_task.h"
#include "jace_task_runtime.h"
#include "bench_keys.h"

#include <time.h>

#define ROUNDS 10000            //  Measured round trips per path
#define WARMUP 500              //  Round trips per path not measured
#define DOUBLES 8               //  Vector length

typedef enum { PATH_RAW, PATH_POLLED, PATH_JACE, PATHS } path_t;
static const char *s_path_names [PATHS] = { "raw", "polled", "jace" };

//  Keys of the run (plain links without --keys).
static jace_security_t *s_security;

//  One side's sockets and task.
typedef struct {
    zsock_t *pull [PATHS];      //  Own inbox per path (PATH_JACE: task's)
    zsock_t *push [PATHS];      //  To the other side (raw paths only)
    zpoller_t *poller [PATHS];  //  Over pull, for the polled paths
    jace_task_t *task;          //  Jace task exchanging with the other
    int64_t peer;               //  The other task's rank
} side_t;

//  --------------------------------------------------------------------------
//  A Jace task of a two-task job, built as a daemon builds it from an
//  ASSIGN; peer_data is the other task's data endpoint.

static jace_task_t *
s_task (int64_t rank, const char *peer_data)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (assign, "bench");
    jace_msg_set_task (assign, rank);
    jace_msg_set_count (assign, 2);
    jace_msg_set_epoch (assign, 1);
    jace_msg_set_key (assign, bench_job_key ());
    jace_msg_set_param (assign, "block/rows", "16");
    jace_msg_set_param (assign, "block/first/0", "0");
    jace_msg_set_param (assign, "block/first/1", "8");
    jace_msg_set_param (assign, "block/first/2", "16");
    for (int64_t task = 0; task < 2; task++) {
        jace_node_t node = { .task = task, .epoch = 1 };
        snprintf (node.id, sizeof node.id, "t%" PRId64, task);
        snprintf (node.pubkey, sizeof node.pubkey, "%s",
                  jace_security_public_key (s_security));
        if (task != rank)
            snprintf (node.data, sizeof node.data, "%s", peer_data);
        jace_msg_add_node (assign, &node);
    }
    char reason [256];
    jace_task_t *task = jace_task_new (&assign, s_security, reason,
                                       sizeof reason);
    assert (task);
    return task;
}

//  Bind one PULL per path; writes the endpoints.
static void
s_side_bind (side_t *side, char endpoints [PATHS][256])
{
    for (int path = 0; path < PATHS; path++) {
        side->pull [path] = zsock_new (ZMQ_PULL);
        jace_msg_prepare_socket (side->pull [path], 0);
        bench_keys_server (s_security, side->pull [path]);
        zsock_bind (side->pull [path], "tcp://127.0.0.1:*");
        side->poller [path] = zpoller_new (side->pull [path], NULL);
        char *endpoint = zsock_last_endpoint (side->pull [path]);
        snprintf (endpoints [path], 256, "%s", endpoint);
        zstr_free (&endpoint);
    }
}

//  Connect to the other side's endpoints.
static void
s_side_connect (side_t *side, int64_t rank, char endpoints [PATHS][256])
{
    for (int path = 0; path < PATHS; path++) {
        if (path == PATH_JACE)
            continue;
        side->push [path] = zsock_new (ZMQ_PUSH);
        jace_msg_prepare_socket (side->push [path], 0);
        bench_keys_client (s_security, side->push [path]);
        zsock_connect (side->push [path], "%s", endpoints [path]);
    }
    side->task = s_task (rank, endpoints [PATH_JACE]);
    side->peer = 1 - rank;
}

static void
s_side_destroy (side_t *side)
{
    for (int path = 0; path < PATHS; path++) {
        zpoller_destroy (&side->poller [path]);
        zsock_destroy (&side->push [path]);
        zsock_destroy (&side->pull [path]);
    }
    jace_task_destroy (&side->task);
}

//  --------------------------------------------------------------------------
//  One message each way on a path

static void
s_send (side_t *side, path_t path, double *vector)
{
    if (path == PATH_JACE)
        jace_task_send (side->task, side->peer, vector, DOUBLES, 0);
    else
        zmq_send (zsock_resolve (side->push [path]), vector,
                  DOUBLES * sizeof (double), 0);
}

//  Wait for the next message on a path.  Jace: until the task holds a
//  vector newer than `after`, as the worker does (wait, then drain).
static void
s_receive (side_t *side, path_t path, double *vector, int64_t after)
{
    void *pull = zsock_resolve (side->pull [path]);
    if (path == PATH_RAW) {
        zmq_recv (pull, vector, DOUBLES * sizeof (double), 0);
        return;
    }
    if (path == PATH_POLLED) {
        zpoller_wait (side->poller [path], -1);
        zmq_recv (pull, vector, DOUBLES * sizeof (double), ZMQ_DONTWAIT);
        return;
    }
    int64_t iteration = -1;
    while (iteration <= after) {
        zpoller_wait (side->poller [path], -1);
        do {
            char reason [256];
            jace_msg_t *msg = jace_msg_recv (side->pull [path], reason,
                                             sizeof reason, NULL, 0);
            //  The worker checks the seal before it delivers.
            if (msg && jace_msg_sealed (msg,
                           jace_task_job_key (side->task)->bytes))
                jace_task_deliver (side->task, msg, reason, sizeof reason);
            jace_msg_destroy (&msg);
        } while (zsock_events (side->pull [path]) & ZMQ_POLLIN);
        jace_task_newest (side->task, side->peer, NULL, NULL, &iteration);
    }
}

//  The path taken k-th in round r: the order rotates so that no path is
//  always first after the other thread's pause.
static path_t
s_path_at (int round, int k)
{
    return (path_t) ((round + k) % PATHS);
}

//  --------------------------------------------------------------------------
//  The ponger: binds, tells the pinger where, then answers every ping.

static void
s_ponger (zsock_t *pipe, void *args)
{
    char (*pinger) [256] = (char (*) [256]) args;
    side_t side = { 0 };
    char endpoints [PATHS][256];
    s_side_bind (&side, endpoints);
    s_side_connect (&side, 1, pinger);
    zsock_signal (pipe, 0);
    zsock_send (pipe, "sss", endpoints [0], endpoints [1], endpoints [2]);
    double vector [DOUBLES] = { 0 };
    for (int round = 0; round < WARMUP + ROUNDS; round++) {
        for (int k = 0; k < PATHS; k++) {
            path_t path = s_path_at (round, k);
            s_receive (&side, path, vector, round - 1);
            s_send (&side, path, vector);
        }
        jace_task_count_iteration (side.task);
    }
    s_side_destroy (&side);
}

//  --------------------------------------------------------------------------

static double
s_now_usec (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec * 1e6 + (double) now.tv_nsec / 1e3;
}

static int
s_compare_doubles (const void *a, const void *b)
{
    double left = *(const double *) a, right = *(const double *) b;
    return left < right ? -1 : left > right;
}

//  The q-quantile of values (sorts them).
static double
s_quantile (double *values, size_t count, double q)
{
    qsort (values, count, sizeof (double), s_compare_doubles);
    return values [(size_t) (q * (double) (count - 1))];
}

//  CPU cost of Jace's framing alone, in microseconds per message: build a
//  DATA message as jace_task_send does, encode it, decode it and copy the
//  values out, as the receiving worker does.
static double
s_codec_cost (void)
{
    double vector [DOUBLES] = { 0 }, out [DOUBLES];
    int count = 100000;
    double start = s_now_usec ();
    for (int i = 0; i < count; i++) {
        jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
        jace_msg_set_job (msg, "job-12345678");
        jace_msg_set_task (msg, 1);
        jace_msg_set_epoch (msg, 1);
        jace_msg_set_iteration (msg, i);
        jace_msg_add_payload (msg, JACE_PAYLOAD_F64, vector, DOUBLES);
        zmsg_t *zmsg = jace_msg_encode (msg);
        jace_msg_destroy (&msg);
        jace_msg_t *back = jace_msg_decode (&zmsg, NULL, 0);
        jace_msg_payload_copy (back, 0, out);
        jace_msg_destroy (&back);
    }
    return (s_now_usec () - start) / count;
}

//  CPU cost of a seal, in microseconds per message: seal a DATA message
//  as the sender does and check it as the receiver does.
static double
s_seal_cost (void)
{
    jace_key_t key;
    jace_key_decode (&key, bench_job_key ());
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job-12345678");
    jace_msg_set_task (msg, 1);
    jace_msg_set_epoch (msg, 1);
    int count = 100000, valid = 0;
    double start = s_now_usec ();
    for (int i = 0; i < count; i++) {
        jace_msg_set_iteration (msg, i);
        jace_msg_seal (msg, key.bytes);
        valid += jace_msg_sealed (msg, key.bytes);
    }
    double cost = (s_now_usec () - start) / count;
    jace_msg_destroy (&msg);
    assert (valid == count);
    return cost;
}

int
main (int argc, char *argv [])
{
    zsys_init ();
    zsys_set_logstream (stderr);
    bool json, keys;
    if (bench_options (argc, argv, &json, &keys))
        return 2;
    s_security = bench_keys_new (keys);
    bench_job_key ();

    side_t side = { 0 };
    char endpoints [PATHS][256], pong [PATHS][256];
    s_side_bind (&side, endpoints);
    zactor_t *ponger = zactor_new (s_ponger, endpoints);
    char *answer [PATHS];
    zsock_recv (ponger, "sss", &answer [0], &answer [1], &answer [2]);
    for (int path = 0; path < PATHS; path++) {
        snprintf (pong [path], 256, "%s", answer [path]);
        zstr_free (&answer [path]);
    }
    s_side_connect (&side, 0, pong);
    zclock_sleep (100);

    //  One-way times per path and round, and the Jace-minus-raw
    //  differences within each round.
    double *times [PATHS];
    for (int path = 0; path < PATHS; path++)
        times [path] = (double *) calloc (ROUNDS, sizeof (double));
    double *over_raw = (double *) calloc (ROUNDS, sizeof (double));
    double *over_polled = (double *) calloc (ROUNDS, sizeof (double));
    double vector [DOUBLES] = { 0 };
    for (int round = 0; round < WARMUP + ROUNDS; round++) {
        double one_way [PATHS];
        for (int k = 0; k < PATHS; k++) {
            path_t path = s_path_at (round, k);
            double start = s_now_usec ();
            s_send (&side, path, vector);
            s_receive (&side, path, vector, round - 1);
            one_way [path] = (s_now_usec () - start) / 2;
        }
        jace_task_count_iteration (side.task);
        if (round < WARMUP)
            continue;
        for (int path = 0; path < PATHS; path++)
            times [path][round - WARMUP] = one_way [path];
        over_raw [round - WARMUP] = one_way [PATH_JACE] - one_way [PATH_RAW];
        over_polled [round - WARMUP] = one_way [PATH_JACE]
                                     - one_way [PATH_POLLED];
    }
    zactor_destroy (&ponger);
    s_side_destroy (&side);

    double median [PATHS], low [PATHS], high [PATHS];
    for (int path = 0; path < PATHS; path++) {
        low [path] = s_quantile (times [path], ROUNDS, 0.1);
        median [path] = s_quantile (times [path], ROUNDS, 0.5);
        high [path] = s_quantile (times [path], ROUNDS, 0.9);
        free (times [path]);
    }
    double overhead = s_quantile (over_raw, ROUNDS, 0.5);
    double overhead_polled = s_quantile (over_polled, ROUNDS, 0.5);
    free (over_raw);
    free (over_polled);
    double codec = s_codec_cost ();
    double seal = s_seal_cost ();
    bench_keys_destroy (&s_security);

    if (json) {
        printf ("{\"rounds\":%d", ROUNDS);
        for (int path = 0; path < PATHS; path++)
            printf (",\"%s_usec\":%.2f", s_path_names [path], median [path]);
        printf (",\"overhead_usec\":%.2f,\"overhead_polled_usec\":%.2f,"
                "\"codec_usec\":%.2f,\"seal_usec\":%.2f,\"keys\":%s}\n",
                overhead, overhead_polled, codec, seal,
                keys ? "true" : "false");
    }
    else {
        printf ("latency, %d doubles one way, %d interleaved rounds, %s "
                "(median [10%%, 90%%]):\n", DOUBLES, ROUNDS,
                keys ? "CURVE on every path" : "plain links");
        for (int path = 0; path < PATHS; path++)
            printf ("  %-6s %7.2f us [%.2f, %.2f]\n", s_path_names [path],
                    median [path], low [path], high [path]);
        printf ("overhead per message, median of same-round differences: "
                "%.2f us over raw, %.2f us over polled raw\n", overhead,
                overhead_polled);
        printf ("codec, build + encode + decode + copy out: %.2f us per "
                "message\n", codec);
        printf ("seal, BLAKE2b seal + check of a DATA header: %.2f us per "
                "message\n", seal);
    }
    return 0;
}
