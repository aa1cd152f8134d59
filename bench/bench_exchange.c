/*  =========================================================================
    bench_exchange - neighbour exchange: Jace's path against raw libzmq

    Two tasks on loopback TCP, in two threads.  Jace's path is the one an
    application uses: jace_task_send (codec, PUSH, never blocking) and, on
    the other side, the daemon's receive path (PULL, decode, keep newest).
    The baseline is raw libzmq on the same socket types (PUSH/PULL) with
    the same non-blocking sends, measured in the same run.

    The sender pushes vectors of 8 KiB, 64 KiB and 1 MiB for a fixed time;
    we count the bytes the receiver got.  (Small-message latency is
    bench_latency's.)  Prints one line per size with the ratio; --json
    for scripts.  With --keys both paths run over CURVE, as a grid
    started with --keys; Jace's vectors are sealed with the job key either
    way.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_task.h"
#include "jace_task_runtime.h"
#include "bench_keys.h"

#include <stdatomic.h>

#define WINDOW_USEC 300000      //  One measurement window
#define WINDOWS 7               //  Windows per path and size, alternated

typedef struct {
    bool jace;                  //  Jace path, or raw libzmq
    size_t doubles;             //  Vector length
    char endpoint [256];        //  Receiver's PULL endpoint
    int64_t duration;           //  Send for this long (usec)
    atomic_bool done;           //  Set by the sender when it stops
} sender_args_t;

//  Keys of the run (plain links without --keys).
static jace_security_t *s_security;

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
    jace_msg_set_key (assign, bench_job_key ());
    char value [32];
    snprintf (value, sizeof value, "%zu", rows);
    jace_msg_set_param (assign, "block/rows", value);
    jace_msg_set_param (assign, "block/first/0", "0");
    jace_msg_set_param (assign, "block/first/1", "1");
    jace_msg_set_param (assign, "block/first/2", value);
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
        atomic_store (&args->done, true);
        zclock_sleep (100);
        jace_task_destroy (&task);
    }
    else {
        //  The best raw libzmq can do: blocking sends, default queue; a
        //  send timeout so that a stalled receiver cannot hold us forever.
        zsock_t *push = zsock_new (ZMQ_PUSH);
        jace_msg_prepare_socket (push, 0);
        zsock_set_sndtimeo (push, 100);
        bench_keys_client (s_security, push);
        zsock_connect (push, "%s", args->endpoint);
        void *handle = zsock_resolve (push);
        size_t bytes = args->doubles * sizeof (double);
        while (zclock_usecs () < end)
            zmq_send (handle, vector, bytes, 0);
        atomic_store (&args->done, true);
        zclock_sleep (100);
        zsock_destroy (&push);
    }
    free (vector);
    return NULL;
}

//  Receive one vector as the daemon does (Jace) or raw.
static void
s_receive (zsock_t *pull, jace_task_t *task, double *buffer, size_t doubles)
{
    if (task) {
        char reason [128];
        jace_msg_t *msg = jace_msg_recv (pull, reason, sizeof reason,
                                         NULL, 0);
        //  The worker checks the seal before it delivers.
        if (msg && jace_msg_sealed (msg, jace_task_job_key (task)->bytes))
            jace_task_deliver (task, msg, reason, sizeof reason);
        jace_msg_destroy (&msg);
    }
    else
        zmq_recv (zsock_resolve (pull), buffer, doubles * sizeof (double),
                  ZMQ_DONTWAIT);
}

//  One window: the sender pushes for WINDOW_USEC; returns the bytes per
//  second the receiver got, from its first vector to its last.
static double
s_throughput (bool jace, size_t doubles)
{
    zsock_t *pull = zsock_new (ZMQ_PULL);
    jace_msg_prepare_socket (pull, 0);
    zsock_set_rcvhwm (pull, 64);
    bench_keys_server (s_security, pull);
    zsock_bind (pull, "tcp://127.0.0.1:*");
    sender_args_t args = { .jace = jace, .doubles = doubles,
                           .duration = WINDOW_USEC };
    atomic_init (&args.done, false);
    char *endpoint = zsock_last_endpoint (pull);
    snprintf (args.endpoint, sizeof args.endpoint, "%s", endpoint);
    zstr_free (&endpoint);
    jace_task_t *task = jace ? s_task (1, "", 2) : NULL;
    double *buffer = (double *) malloc (doubles * sizeof (double));
    zpoller_t *poller = zpoller_new (pull, NULL);
    pthread_t thread;
    pthread_create (&thread, NULL, s_sender, &args);

    //  Until the sender is done and its queue drained.
    size_t received = 0;
    int64_t first = 0, last = 0;
    while (true) {
        if (zpoller_wait (poller, 100) != pull) {
            if (atomic_load (&args.done))
                break;
            continue;
        }
        s_receive (pull, task, buffer, doubles);
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
    bool json, keys;
    if (bench_options (argc, argv, &json, &keys))
        return 2;
    s_security = bench_keys_new (keys);
    bench_job_key ();
    size_t sizes [] = { 8 * 1024, 64 * 1024, 1024 * 1024 };
    if (json)
        printf ("{\"throughput\":[");
    //  Load from other processes comes and goes within a second: the
    //  two paths take turns in short windows, and the ratio is the median
    //  of the ratios of neighbouring windows.
    for (size_t i = 0; i < 3; i++) {
        size_t doubles = sizes [i] / sizeof (double);
        double raws [WINDOWS], ourses [WINDOWS], ratios [WINDOWS];
        for (int w = 0; w < WINDOWS; w++) {
            bool raw_first = w % 2 == 0;
            double first = s_throughput (!raw_first, doubles);
            double second = s_throughput (raw_first, doubles);
            raws [w] = raw_first ? first : second;
            ourses [w] = raw_first ? second : first;
            ratios [w] = raws [w] > 0 ? ourses [w] / raws [w] : 0;
        }
        double raw = s_median (raws, WINDOWS);
        double ours = s_median (ourses, WINDOWS);
        double ratio = s_median (ratios, WINDOWS);
        if (json)
            printf ("%s{\"bytes\":%zu,\"raw_MBps\":%.1f,\"jace_MBps\":%.1f,"
                    "\"ratio\":%.3f}", i ? "," : "", sizes [i], raw / 1e6,
                    ours / 1e6, ratio);
        else
            printf ("throughput %7zu B vectors, medians of %d alternated "
                    "windows: raw libzmq %8.1f MB/s, jace %8.1f MB/s, "
                    "ratio %.3f\n", sizes [i], WINDOWS, raw / 1e6,
                    ours / 1e6, ratio);
    }
    if (json)
        printf ("],\"keys\":%s}\n", keys ? "true" : "false");
    bench_keys_destroy (&s_security);
    return 0;
}
