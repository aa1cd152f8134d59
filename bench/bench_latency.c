/*  =========================================================================
    bench_latency - per-message cost of Jace's framing on the wire

    An A/B of one round trip: the same two-frame message (40-byte header,
    8 doubles) sent raw with CZMQ (zmsg_send, blocking zmsg_recv), against
    a Jace DATA message built, encoded, sent, polled for, received and
    decoded.  Both run in the same process, alternated three times, 5,000
    round trips each; prints one-way microseconds.
    =========================================================================
*/
#include "jace_msg.h"

#define ROUNDS 5000

//  Which path a run measures (read by both threads).
typedef struct {
    bool jace;                  //  Jace codec, or raw CZMQ
    char endpoint [256];        //  The pinger's PULL
} path_t;

static void
s_send (bool jace, zsock_t *push)
{
    double values [8] = { 0 };
    if (!jace) {
        zmsg_t *msg = zmsg_new ();
        zmsg_addmem (msg, "0123456789012345678901234567890123456789", 40);
        zmsg_addmem (msg, values, sizeof values);
        zmsg_send (&msg, push);
        return;
    }
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job-12345678");
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, values, 8);
    jace_msg_send (&msg, push);
}

static void
s_receive (bool jace, zsock_t *pull)
{
    if (!jace) {
        zmsg_t *msg = zmsg_recv (pull);
        zmsg_destroy (&msg);
        return;
    }
    zmq_pollitem_t item = { zsock_resolve (pull), 0, ZMQ_POLLIN, 0 };
    zmq_poll (&item, 1, -1);
    jace_msg_t *msg = jace_msg_recv (pull, NULL, 0, NULL, 0);
    jace_msg_destroy (&msg);
}

static void
s_ponger (zsock_t *pipe, void *args)
{
    path_t *path = (path_t *) args;
    bool jace = path->jace;
    zsock_t *pull = zsock_new_pull ("tcp://127.0.0.1:*");
    zsock_t *push = zsock_new_push (path->endpoint);
    zsock_signal (pipe, 0);
    char *endpoint = zsock_last_endpoint (pull);
    zstr_send (pipe, endpoint);
    zstr_free (&endpoint);
    for (int i = 0; i < ROUNDS; i++) {
        s_receive (jace, pull);
        s_send (jace, push);
    }
    zsock_destroy (&push);
    zsock_destroy (&pull);
}

//  One-way latency of a path, in microseconds.
static double
s_one_way (bool jace)
{
    zsock_t *pull = zsock_new_pull ("tcp://127.0.0.1:*");
    path_t path = { .jace = jace };
    char *endpoint = zsock_last_endpoint (pull);
    snprintf (path.endpoint, sizeof path.endpoint, "%s", endpoint);
    zstr_free (&endpoint);
    zactor_t *ponger = zactor_new (s_ponger, &path);
    char *pong = zstr_recv (ponger);
    zsock_t *push = zsock_new_push (pong);
    zstr_free (&pong);
    zclock_sleep (100);
    int64_t start = zclock_usecs ();
    for (int i = 0; i < ROUNDS; i++) {
        s_send (jace, push);
        s_receive (jace, pull);
    }
    double one_way = (double) (zclock_usecs () - start) / ROUNDS / 2;
    zactor_destroy (&ponger);
    zsock_destroy (&push);
    zsock_destroy (&pull);
    return one_way;
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (stderr);
    for (int run = 0; run < 3; run++) {
        double raw = s_one_way (false);
        double jace = s_one_way (true);
        printf ("one way: raw two-frame %.2f us, jace %.2f us, "
                "difference %.2f us\n", raw, jace, jace - raw);
    }
    return 0;
}
