/*  =========================================================================
    bench_exchange - neighbour exchange: Jace's path against raw libzmq

    Two tasks on loopback TCP, in two threads.  Jace's path is the one an
    application uses: jace_task_send (codec, PUSH, never blocking) and, on
    the other side, the daemon's receive path (PULL, decode, keep newest).
    The baseline is raw libzmq on the same socket types (PUSH/PULL) with
    the same non-blocking sends, measured in the same run.

      throughput: the sender pushes vectors of 8 KiB, 64 KiB and 1 MiB for
                  a fixed time; we count bytes the receiver got.
      latency:    ping-pong of an 8-double vector; half the round trip.

    Prints one line per measurement and the ratios; --json for scripts.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_task.h"
#include "jace_task_runtime.h"

#include <math.h>

#define DURATION_USEC 1500000
#define PINGS 5000
#define LATENCY_RUNS 7

typedef struct {
    bool jace;                  //  Jace path, or raw libzmq
    size_t doubles;             //  Vector length
    char endpoint [256];        //  Receiver's PULL endpoint
    int64_t duration;           //  Send for this long (usec)
} sender_args_t;

//  --------------------------------------------------------------------------
//  Jace tasks built as a daemon would build them from an ASSIGN.

static jace_task_t *
s_task (int64_t rank, const char *peer_data, size_t rows)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (assign, "bench");
    jace_msg_set_task (assign, rank);
    jace_msg_set_count (assign, 2);
    jace_msg_set_epoch (assign, 1);
    char value [32];
    snprintf (value, sizeof value, "%zu", rows);
    jace_msg_set_param (assign, "block/rows", value);
    jace_msg_set_param (assign, "block/first/0", "0");
    jace_msg_set_param (assign, "block/first/1", "1");
    jace_msg_set_param (assign, "block/first/2", value);
    for (int64_t task = 0; task < 2; task++) {
        jace_node_t node = { .task = task, .epoch = 1 };
        snprintf (node.id, sizeof node.id, "t%" PRId64, task);
        if (task != rank)
            snprintf (node.data, sizeof node.data, "%s", peer_data);
        jace_msg_add_node (assign, &node);
    }
    char reason [256];
    jace_task_t *task = jace_task_new (&assign, NULL, reason, sizeof reason);
    assert (task);
    return task;
}

//  --------------------------------------------------------------------------
//  Throughput

static void *
s_sender (void *raw_args)
{
    sender_args_t *args = (sender_args_t *) raw_args;
    double *vector = (double *) calloc (args->doubles, sizeof (double));
    int64_t end = zclock_usecs () + args->duration;
    if (args->jace) {
        jace_task_t *task = s_task (0, args->endpoint, 2);
        while (zclock_usecs () < end)
            jace_task_send (task, 1, vector, args->doubles, 0);
        zclock_sleep (100);
        jace_task_destroy (&task);
    }
    else {
        //  The best raw libzmq can do: blocking sends, default queue.
        zsock_t *push = zsock_new (ZMQ_PUSH);
        jace_msg_prepare_socket (push, 0);
        zsock_connect (push, "%s", args->endpoint);
        void *handle = zsock_resolve (push);
        size_t bytes = args->doubles * sizeof (double);
        while (zclock_usecs () < end)
            zmq_send (handle, vector, bytes, 0);
        zclock_sleep (100);
        zsock_destroy (&push);
    }
    free (vector);
    return NULL;
}

//  Receive for the sender's duration; returns bytes per second.
static double
s_throughput (bool jace, size_t doubles)
{
    zsock_t *pull = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (pull, 0);
    zsock_set_rcvhwm (pull, 64);
    zsock_bind (pull, "tcp://127.0.0.1:*");
    sender_args_t args = { jace, doubles, "", DURATION_USEC };
    char *endpoint = zsock_last_endpoint (pull);
    snprintf (args.endpoint, sizeof args.endpoint, "%s", endpoint);
    zstr_free (&endpoint);
    jace_task_t *task = jace ? s_task (1, "", 2) : NULL;
    double *buffer = (double *) malloc (doubles * sizeof (double));
    zpoller_t *poller = zpoller_new (pull, NULL);
    pthread_t thread;
    pthread_create (&thread, NULL, s_sender, &args);

    size_t received = 0;
    int64_t first = 0, last = 0;
    while (zpoller_wait (poller, 500) == pull) {
        if (jace) {
            char reason [128];
            jace_msg_t *msg = jace_msg_recv (pull, reason, sizeof reason,
                                             NULL, 0);
            jace_task_deliver (task, msg, reason, sizeof reason);
            jace_msg_destroy (&msg);
        }
        else
            zmq_recv (zsock_resolve (pull), buffer, doubles * sizeof (double),
                      0);
        last = zclock_usecs ();
        if (received++ == 0)
            first = last;
    }
    pthread_join (thread, NULL);
    zpoller_destroy (&poller);
    zsock_destroy (&pull);
    jace_task_destroy (&task);
    free (buffer);
    if (received < 2 || last <= first)
        return 0;
    return (double) (received - 1) * (double) (doubles * sizeof (double))
           / ((double) (last - first) / 1e6);
}

//  --------------------------------------------------------------------------
//  Latency: ping-pong between two threads, each with its own PULL.

typedef struct {
    bool jace;                  //  Jace path, or raw
    char ping [256];            //  Endpoint of the pinger's PULL
} pong_args_t;

static void
s_jace_wait_newer (jace_task_t *task, zsock_t *pull, int64_t from,
                   int64_t after)
{
    int64_t iteration = -1;
    zmq_pollitem_t item = { zsock_resolve (pull), 0, ZMQ_POLLIN, 0 };
    while (iteration <= after) {
        char reason [128];
        zmq_poll (&item, 1, -1);
        jace_msg_t *msg = jace_msg_recv (pull, reason, sizeof reason, NULL, 0);
        if (msg)
            jace_task_deliver (task, msg, reason, sizeof reason);
        jace_msg_destroy (&msg);
        jace_task_newest (task, from, NULL, NULL, &iteration);
    }
}

static void
s_ping_pong (bool jace, bool pinger, zsock_t *pull, const char *peer,
             int rounds)
{
    double vector [8] = { 0 };
    if (jace) {
        jace_task_t *task = s_task (pinger ? 0 : 1, peer, 2);
        int64_t other = pinger ? 1 : 0;
        for (int i = 0; i < rounds; i++) {
            if (pinger) {
                jace_task_send (task, other, vector, 8, 0);
                s_jace_wait_newer (task, pull, other, i - 1);
            }
            else {
                s_jace_wait_newer (task, pull, other, i - 1);
                jace_task_send (task, other, vector, 8, 0);
            }
            jace_task_count_iteration (task);
        }
        jace_task_destroy (&task);
        return;
    }
    zsock_t *push = zsock_new (ZMQ_PUSH);
    jace_msg_prepare_socket (push, 0);
    zsock_connect (push, "%s", peer);
    for (int i = 0; i < rounds; i++) {
        if (pinger)
            zmq_send (zsock_resolve (push), vector, sizeof vector, 0);
        zmq_recv (zsock_resolve (pull), vector, sizeof vector, 0);
        if (!pinger)
            zmq_send (zsock_resolve (push), vector, sizeof vector, 0);
    }
    zsock_destroy (&push);
}

//  The other side, as an actor: binds its own PULL, tells us where, and
//  answers every ping.
static void
s_ponger (zsock_t *pipe, void *raw_args)
{
    pong_args_t *args = (pong_args_t *) raw_args;
    bool jace = args->jace;
    char ping [256];
    snprintf (ping, sizeof ping, "%s", args->ping);
    zsock_t *pull = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (pull, 0);
    zsock_bind (pull, "tcp://127.0.0.1:*");
    zsock_signal (pipe, 0);
    char *endpoint = zsock_last_endpoint (pull);
    zstr_send (pipe, endpoint);
    zstr_free (&endpoint);
    s_ping_pong (jace, false, pull, ping, PINGS);
    zsock_destroy (&pull);
}

//  One-way latency in microseconds.
static double
s_latency (bool jace)
{
    zsock_t *pull = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (pull, 0);
    zsock_bind (pull, "tcp://127.0.0.1:*");
    pong_args_t args = { .jace = jace };
    char *endpoint = zsock_last_endpoint (pull);
    snprintf (args.ping, sizeof args.ping, "%s", endpoint);
    zstr_free (&endpoint);
    zactor_t *ponger = zactor_new (s_ponger, &args);
    char *pong = zstr_recv (ponger);
    zclock_sleep (100);
    int64_t start = zclock_usecs ();
    s_ping_pong (jace, true, pull, pong, PINGS);
    int64_t elapsed = zclock_usecs () - start;
    zstr_free (&pong);
    zactor_destroy (&ponger);
    zsock_destroy (&pull);
    return (double) elapsed / PINGS / 2;
}

//  CPU cost of Jace's framing alone, in microseconds per message: build a
//  DATA message of 8 doubles as jace_task_send does, encode it, decode it
//  and copy the values out, as the receiving worker does.
static double
s_codec_cost (void)
{
    double vector [8] = { 0 }, out [8];
    int64_t start = zclock_usecs ();
    for (int i = 0; i < PINGS * 5; i++) {
        jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
        jace_msg_set_job (msg, "job-12345678");
        jace_msg_set_task (msg, 1);
        jace_msg_set_epoch (msg, 1);
        jace_msg_set_iteration (msg, i);
        jace_msg_add_payload (msg, JACE_PAYLOAD_F64, vector, 8);
        zmsg_t *zmsg = jace_msg_encode (msg);
        jace_msg_destroy (&msg);
        jace_msg_t *back = jace_msg_decode (&zmsg, NULL, 0);
        jace_msg_payload_copy (back, 0, out);
        jace_msg_destroy (&back);
    }
    return (double) (zclock_usecs () - start) / (PINGS * 5);
}

static int
s_compare_doubles (const void *a, const void *b)
{
    double left = *(const double *) a, right = *(const double *) b;
    return left < right ? -1 : left > right;
}

static double
s_median (double *values, int count)
{
    qsort (values, (size_t) count, sizeof (double), s_compare_doubles);
    return values [count / 2];
}

int
main (int argc, char *argv [])
{
    zsys_init ();
    zsys_set_logstream (stderr);
    bool json = argc > 1 && streq (argv [1], "--json");
    size_t sizes [] = { 8 * 1024, 64 * 1024, 1024 * 1024 };
    if (json)
        printf ("{\"throughput\":[");
    for (size_t i = 0; i < 3; i++) {
        size_t doubles = sizes [i] / sizeof (double);
        double raw = s_throughput (false, doubles);
        double ours = s_throughput (true, doubles);
        if (json)
            printf ("%s{\"bytes\":%zu,\"raw_MBps\":%.1f,\"jace_MBps\":%.1f,"
                    "\"ratio\":%.3f}", i ? "," : "", sizes [i], raw / 1e6,
                    ours / 1e6, ours / raw);
        else
            printf ("throughput %7zu B vectors: raw libzmq %8.1f MB/s, "
                    "jace %8.1f MB/s, ratio %.3f\n", sizes [i], raw / 1e6,
                    ours / 1e6, ours / raw);
    }
    //  Wake-ups on two shared cores make single ping-pong runs vary by
    //  tens of microseconds: alternate the two paths and take medians.
    double raws [LATENCY_RUNS], ourses [LATENCY_RUNS];
    for (int i = 0; i < LATENCY_RUNS; i++) {
        raws [i] = s_latency (false);
        ourses [i] = s_latency (true);
    }
    double raw = s_median (raws, LATENCY_RUNS);
    double ours = s_median (ourses, LATENCY_RUNS);
    double codec = s_codec_cost ();
    if (json)
        printf ("],\"latency\":{\"raw_usec\":%.2f,\"jace_usec\":%.2f,"
                "\"overhead_usec\":%.2f,\"codec_usec\":%.2f}}\n", raw, ours,
                ours - raw, codec);
    else {
        printf ("latency, 8 doubles one way, median of %d: raw libzmq %.2f "
                "us, jace %.2f us, difference %.2f us\n", LATENCY_RUNS, raw,
                ours, ours - raw);
        printf ("codec, build + encode + decode + copy out: %.2f us per "
                "message\n", codec);
    }
    return 0;
}
