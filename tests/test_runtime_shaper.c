/*  =========================================================================
    test_runtime_shaper - the emulated links delay messages, and a newer
    vector of values replaces an older one still waiting, but nothing else
    is ever lost

    A request list queued behind a vector on a slow link was once replaced
    by the next message to that task, and the replacement daemon waited
    for a list that never came (the table1 benchmarks' faulty runs).
    =========================================================================
*/
#include "tap.h"
#include "jace_shaper.h"

static jace_msg_t *
s_data (int64_t iteration, bool values)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job");
    jace_msg_set_task (msg, 0);
    jace_msg_set_iteration (msg, iteration);
    if (values) {
        double vector [4] = { 1, 2, 3, (double) iteration };
        jace_msg_add_payload (msg, JACE_PAYLOAD_F64, vector, 4);
    }
    else {
        int64_t indices [2] = { 5, 7 };
        jace_msg_add_payload (msg, JACE_PAYLOAD_I64, indices, 2);
    }
    return msg;
}

//  Flush the shaper until `wanted` messages arrived or a second passed;
//  writes their iterations.
static size_t
s_receive (jace_shaper_t *shaper, zsock_t *inbox, int64_t *iterations,
           size_t wanted)
{
    size_t got = 0;
    int64_t deadline = zclock_mono () + 1000;
    while (got < wanted && zclock_mono () < deadline) {
        jace_shaper_flush (shaper);
        zsock_set_rcvtimeo (inbox, 1);
        jace_msg_t *msg = jace_msg_recv (inbox, NULL, 0, NULL, 0);
        if (msg)
            iterations [got++] = jace_msg_iteration (msg);
        jace_msg_destroy (&msg);
    }
    return got;
}

int
main (void)
{
    tap_plan (6);
    zsock_t *inbox = zsock_new_pull ("inproc://shaper-test");
    zsock_t *link = zsock_new_push (">inproc://shaper-test");
    jace_shaper_t *shaper = jace_shaper_new ("A");
    //  50 ms and 1 Mb/s: a 100-byte message occupies the link 0.8 ms
    jace_shaper_set_link (shaper, "B", 50000, 1);
    int64_t iterations [4];

    int64_t sent = zclock_mono ();
    jace_msg_t *msg = s_data (1, true);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    size_t got = s_receive (shaper, inbox, iterations, 1);
    ok (got == 1 && zclock_mono () - sent >= 45,
        "a message crosses the emulated link after its latency");

    //  Values, then a request list behind them, then newer values: the
    //  list survives, the older values are replaced.
    msg = s_data (2, true);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    msg = s_data (-1, false);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    msg = s_data (3, true);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    msg = s_data (4, true);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    got = s_receive (shaper, inbox, iterations, 4);
    bool list = false, newest = false, older = false;
    for (size_t i = 0; i < got; i++) {
        list = list || iterations [i] == -1;
        newest = newest || iterations [i] == 4;
        older = older || iterations [i] == 3;
    }
    ok (list, "a request list queued behind values arrives");
    ok (newest, "the newest values arrive");
    ok (!older, "values replaced while waiting for the link never do");
    ok (got <= 3, "nothing else arrives");

    //  A task that moves: what was queued for it is dropped, not sent on
    //  the socket its move closes.
    msg = s_data (5, false);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    jace_shaper_drop (shaper, 0);
    ok (s_receive (shaper, inbox, iterations, 1) == 0
        && jace_shaper_flush (shaper) == -1,
        "jace_shaper_drop forgets a moved task's queue");

    jace_shaper_destroy (&shaper);
    zsock_destroy (&link);
    zsock_destroy (&inbox);
    return tap_done ();
}
