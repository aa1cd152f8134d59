/*  =========================================================================
    test_runtime_shaper - the emulated links delay messages, and a newer
    vector of values replaces an older one still waiting, but nothing else
    is ever lost, and a full link holds what is due until it has room

    A request list queued behind a vector on a slow link was once replaced
    by the next message to that task, and the replacement daemon waited
    for a list that never came (the table1 benchmarks' faulty runs).

    With the grid's shared links, shapers (daemons) sending across one
    backbone divide it: the second message is due one transfer after the
    first.  Those checks read the due times the shapers computed, bracketed
    by the clock, so a slow or busy machine cannot make them fail.
    =========================================================================
*/
#include "tap.h"
#include "jace_shaper.h"
#include "jace_checkpoint.h"

#include <unistd.h>

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

//  The due time (ns) of the next message of each shaper, from what
//  flush returns; *slack bounds the error (the time the calls took, and
//  flush's rounding to microseconds).
static void
s_due_times (jace_shaper_t **shapers, size_t count, int64_t *due,
             int64_t *slack)
{
    int64_t before = jace_links_now ();
    for (size_t index = 0; index < count; index++)
        due [index] = jace_shaper_flush (shapers [index]) * 1000;
    int64_t after = jace_links_now ();
    for (size_t index = 0; index < count; index++)
        due [index] += before;
    *slack = after - before + 1000;
}

//  A 1000-byte vector of values for task 0 (iteration `iteration`)
static jace_msg_t *
s_vector (int64_t iteration)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job");
    jace_msg_set_iteration (msg, iteration);
    double values [117] = { 0 };    //  117 x 8 + 64 = 1000 bytes
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, values, 117);
    return msg;
}

//  One shared pipe in a links file of its own, and daemons of cluster A
//  whose shapers send to cluster B across it (a flow's own link as fast
//  as the pipe).
typedef struct {
    char folder [64];
    char path [256];
    jace_links_t *links;        //  NULL if the file could not be made
} pipe_t;

static bool
s_pipe_open (pipe_t *self, double mbps, jace_shaper_t **shapers,
             size_t count)
{
    snprintf (self->folder, sizeof self->folder,
              "/tmp/test_runtime_shaper.XXXXXX");
    if (!mkdtemp (self->folder)) {
        ok (false, "a folder for the links file");
        return false;
    }
    snprintf (self->path, sizeof self->path, "%s/links", self->folder);
    jace_links_resource_t resource = { mbps, 0 };
    jace_links_create (self->path, &resource, 1, NULL, 0);
    self->links = jace_links_open (self->path, NULL, 0);
    size_t route [1] = { 0 };
    for (size_t index = 0; index < count; index++) {
        shapers [index] = jace_shaper_new ("A");
        jace_shaper_set_link (shapers [index], "B", 0, mbps);
        if (self->links)
            jace_shaper_set_shared (shapers [index], "B", self->links,
                                    route, 1);
    }
    return true;
}

static void
s_pipe_close (pipe_t *self, jace_shaper_t **shapers, size_t count)
{
    for (size_t index = 0; index < count; index++)
        jace_shaper_destroy (&shapers [index]);
    jace_links_destroy (&self->links);
    unlink (self->path);
    rmdir (self->folder);
}

//  Three daemons of cluster A send to cluster B across a shared 0.08 Mb/s
//  backbone: a 1000-byte vector takes 100 ms on it.
static void
s_test_shared (zsock_t *link)
{
    pipe_t backbone;
    jace_shaper_t *shapers [3];
    if (!s_pipe_open (&backbone, 0.08, shapers, 3))
        return;
    int64_t transfer = 100000000;
    int64_t due [3], slack;

    jace_msg_t *msg = s_vector (1);
    jace_shaper_send (shapers [0], link, 0, "B", &msg);
    msg = s_vector (1);
    jace_shaper_send (shapers [1], link, 0, "B", &msg);
    //  A newer vector replaces the one waiting for the backbone, in the
    //  waiting one's slot.
    msg = s_vector (2);
    jace_shaper_send (shapers [1], link, 0, "B", &msg);
    msg = s_vector (1);
    jace_shaper_send (shapers [2], link, 0, "B", &msg);
    s_due_times (shapers, 3, due, &slack);
    ok (llabs (due [1] - due [0] - transfer) <= slack,
        "a second daemon across a shared backbone waits for the first");
    ok (llabs (due [2] - due [0] - 2 * transfer) <= slack,
        "three daemons take three transfers: a replaced vector reserves "
        "no more");

    //  The same three without the grid's links: each flow its own link
    for (size_t index = 0; index < 3; index++) {
        jace_shaper_destroy (&shapers [index]);
        shapers [index] = jace_shaper_new ("A");
        jace_shaper_set_link (shapers [index], "B", 0, 0.08);
        msg = s_vector (1);
        jace_shaper_send (shapers [index], link, 0, "B", &msg);
    }
    s_due_times (shapers, 3, due, &slack);
    ok (llabs (due [2] - due [0]) <= slack + transfer / 2,
        "without shared links each daemon gets the whole backbone");
    s_pipe_close (&backbone, shapers, 3);
}

//  A message of `bytes` on the wire that must arrive (not values): an
//  exchange piece or a checkpoint's size, marked by iteration -1.
static jace_msg_t *
s_big (size_t bytes)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job");
    jace_msg_set_iteration (msg, -1);
    byte *payload = (byte *) zmalloc (bytes - 64);
    jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, payload, bytes - 64);
    free (payload);
    return msg;
}

//  Flush the shapers until `wanted` messages arrived on inbox or 10 s
//  passed; writes each one's iteration and arrival (ns), and, if stalled
//  is not NULL, the longest time between two rounds of flushes since the
//  messages were sent at `sent` (ns).
static size_t
s_arrivals_stalled (jace_shaper_t **shapers, size_t count, zsock_t *inbox,
                    size_t wanted, int64_t *iterations, int64_t *arrivals,
                    int64_t sent, int64_t *stalled)
{
    size_t got = 0;
    int64_t deadline = zclock_mono () + 10000;
    int64_t last_round = sent;
    if (stalled)
        *stalled = 0;
    zsock_set_rcvtimeo (inbox, 1);
    while (got < wanted && zclock_mono () < deadline) {
        int64_t round = jace_links_now ();
        if (stalled && round - last_round > *stalled)
            *stalled = round - last_round;
        last_round = round;
        for (size_t index = 0; index < count; index++)
            jace_shaper_flush (shapers [index]);
        jace_msg_t *msg = jace_msg_recv (inbox, NULL, 0, NULL, 0);
        if (msg) {
            iterations [got] = jace_msg_iteration (msg);
            arrivals [got++] = jace_links_now ();
        }
        jace_msg_destroy (&msg);
    }
    return got;
}

static size_t
s_arrivals (jace_shaper_t **shapers, size_t count, zsock_t *inbox,
            size_t wanted, int64_t *iterations, int64_t *arrivals)
{
    return s_arrivals_stalled (shapers, count, inbox, wanted, iterations,
                               arrivals, jace_links_now (), NULL);
}

//  Flows through one shared pipe take turns: a vector sent while another
//  daemon's 1 MB crosses an 8 Mb/s uplink (1 s) waits a slice ahead, not
//  the whole second, and two big ones progress together.  Only bounds
//  the emulated schedule guarantees are checked: a slow machine makes
//  arrivals later, never earlier.
static void
s_test_turns (zsock_t *link, zsock_t *inbox)
{
    pipe_t backbone;
    jace_shaper_t *shapers [2];
    if (!s_pipe_open (&backbone, 8, shapers, 2))
        return;
    int64_t second = 1000000000;
    int64_t sent = jace_links_now ();
    jace_msg_t *msg = s_big (1000000);
    jace_shaper_send (shapers [0], link, 0, "B", &msg);
    msg = s_vector (1);
    jace_shaper_send (shapers [1], link, 1, "B", &msg);
    //  What is left of its wait, from now: a machine too loaded to get
    //  here quickly shortens it, never lengthens it (the time from the
    //  send did, and failed beside the suite's grids: 676 ms).
    int64_t wait = jace_shaper_flush (shapers [1]) * 1000;
    if (wait < 0)
        wait = 0;                       //  Sent already
    diag ("the vector waits %" PRId64 " ms more, %" PRId64 " ms after the "
          "1 MB was sent", wait / 1000000,
          (jace_links_now () - sent) / 1000000);
    ok (wait < second / 2, "a vector behind another daemon's 1 MB "
        "on a shared 8 Mb/s uplink waits a slice, not the whole second");
    int64_t iterations [2], arrivals [2];
    size_t got = s_arrivals (shapers, 2, inbox, 2, iterations, arrivals);
    ok (got == 2 && iterations [0] == 1 && iterations [1] == -1
        && arrivals [1] - sent >= second, "the vector arrives first, the "
        "1 MB after its second on the uplink");

    //  Two daemons' 1 MB at once: both take about the two seconds the
    //  uplink needs for both, where one used to get it all first.
    sent = jace_links_now ();
    for (size_t index = 0; index < 2; index++) {
        msg = s_big (1000000);
        jace_shaper_send (shapers [index], link, (int64_t) index, "B", &msg);
    }
    //  Both flows are flushed from this one process.  Stalled (a loaded
    //  machine), the first flushed catches up on the time it missed
    //  alone, as a sender that flushed late does: it arrives up to the
    //  stall earlier than its share, the other never does.
    int64_t stalled;
    got = s_arrivals_stalled (shapers, 2, inbox, 2, iterations, arrivals,
                              sent, &stalled);
    diag ("two 1 MB flows arrived after %" PRId64 " and %" PRId64 " ms "
          "(longest stall between flushes %" PRId64 " ms)",
          got ? (arrivals [0] - sent) / 1000000 : -1,
          got == 2 ? (arrivals [1] - sent) / 1000000 : -1,
          stalled / 1000000);
    ok (got == 2 && arrivals [0] - sent >= 3 * second / 2 - stalled
        && arrivals [1] - sent >= 2 * second, "two 1 MB flows on one "
        "uplink share it: both take about its two seconds");

    //  On one connection the slices keep the order: a vector sent after
    //  1 MB arrives after it.
    msg = s_big (1000000);
    jace_shaper_send (shapers [0], link, 0, "B", &msg);
    msg = s_vector (3);
    jace_shaper_send (shapers [0], link, 0, "B", &msg);
    got = s_arrivals (shapers, 1, inbox, 2, iterations, arrivals);
    ok (got == 2 && iterations [0] == -1 && iterations [1] == 3,
        "a vector after 1 MB on one connection arrives after it");

    //  A sender that flushes late (every 500 ms, as one computing long
    //  iterations) still gets the link's bandwidth: the slices it missed
    //  follow on in the past, as a kernel keeps sending.
    sent = jace_links_now ();
    msg = s_big (1000000);
    jace_shaper_send (shapers [0], link, 0, "B", &msg);
    //  Counted in flushes, not in time: a loaded machine sleeps longer,
    //  so that the 1 MB is due after fewer of them, never more.  A shaper
    //  that sent a slice per flush needed all 20.
    int64_t arrived = 0;
    int flushes = 0;
    zsock_set_rcvtimeo (inbox, 0);
    while (flushes < 20 && !arrived) {
        zclock_sleep (500);
        jace_shaper_flush (shapers [0]);
        flushes++;
        msg = jace_msg_recv (inbox, NULL, 0, NULL, 0);
        if (msg)
            arrived = jace_links_now ();
        jace_msg_destroy (&msg);
    }
    diag ("1 MB flushed every 500 ms arrived after %d flushes, %" PRId64
          " ms", flushes, arrived ? (arrived - sent) / 1000000 : -1);
    ok (arrived && flushes <= 4, "a sender flushing every 500 ms gets its "
        "1 MB across the 8 Mb/s uplink in about 1 s (4 flushes at most)");
    s_pipe_close (&backbone, shapers, 2);
}

//  A task's connections are links of their own: a vector on its fresh
//  link does not wait behind 1 MB on the ordinary one, but does behind
//  1 MB on the same connection.
static void
s_test_connections (zsock_t *link, zsock_t *inbox)
{
    zsock_t *fresh = zsock_new_push (">inproc://shaper-test");
    jace_shaper_t *shaper = jace_shaper_new ("A");
    jace_shaper_set_link (shaper, "B", 0, 8);
    int64_t iterations [2], arrivals [2];
    jace_msg_t *msg = s_big (1000000);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    msg = s_vector (1);
    jace_shaper_send (shaper, fresh, 0, "B", &msg);
    size_t got = s_arrivals (&shaper, 1, inbox, 2, iterations, arrivals);
    ok (got == 2 && iterations [0] == 1 && iterations [1] == -1,
        "a vector on a task's fresh link passes 1 MB on its ordinary link");
    msg = s_big (1000000);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    msg = s_vector (2);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    got = s_arrivals (&shaper, 1, inbox, 2, iterations, arrivals);
    ok (got == 2 && iterations [0] == -1 && iterations [1] == 2,
        "on one connection, the vector follows the 1 MB sent before it");
    jace_shaper_destroy (&shaper);
    zsock_destroy (&fresh);
}

//  The delay formula every emulation shares (the shaper, super-nodes'
//  and daemons' probes): latency plus bytes x 8 / bandwidth.
static void
s_test_delay (zsock_t *link)
{
    is_int (jace_shaper_delay_nsec (5000, 100, 1250), 5100000,
            "delay: 5 ms and 1250 bytes at 100 Mb/s is 5.1 ms");
    is_int (jace_shaper_delay_nsec (50, 0, 1 << 20), 50000,
            "delay: a link without a bandwidth limit costs its latency");
    is_int (jace_shaper_delay_nsec (0, 1, 100), 800000,
            "delay: without latency, the transfer alone (100 B at 1 Mb/s)");
    is_int (jace_shaper_delay_nsec (-7, -1, 100), 0,
            "delay: a negative latency or bandwidth adds nothing");
    //  A super-node's bulk probe: 64 header bytes and 32 KiB of padding
    //  across 5 ms and 100 Mb/s (tests/test_supernode_links.sh).
    is_int (jace_shaper_delay_nsec (5000, 100, 64 + 32768) / 1000, 7626,
            "delay: a bulk probe is held 7626 us on the test's link");

    //  The shaper schedules a message on a free link by the same formula:
    //  a 1000-byte vector over 20 ms and 0.8 Mb/s.
    jace_shaper_t *shaper = jace_shaper_new ("A");
    jace_shaper_set_link (shaper, "B", 20000, 0.8);
    jace_msg_t *msg = s_vector (1);
    int64_t before = jace_links_now ();
    jace_shaper_send (shaper, link, 0, "B", &msg);
    int64_t sending = jace_links_now () - before;
    int64_t due [1], slack;
    s_due_times (&shaper, 1, due, &slack);
    int64_t late = due [0] - before - jace_shaper_delay_nsec (20000, 0.8,
                                                              1000);
    ok (late >= -slack && late <= slack + sending,
        "the shaper's message on a free link is due one delay after it "
        "is sent");
    jace_shaper_destroy (&shaper);
}

//  A full link keeps what is due for it: the newest values go once the
//  reader drains it, where they used to be dropped (and a synchronous
//  neighbour waited for them for ever).
static void
s_test_full_link (void)
{
    zsock_t *inbox = zsock_new (ZMQ_PULL);
    zsock_set_rcvhwm (inbox, 1);
    zsock_bind (inbox, "inproc://shaper-full");
    zsock_t *link = zsock_new (ZMQ_PUSH);
    zsock_set_sndhwm (link, 1);
    zsock_connect (link, "inproc://shaper-full");
    jace_shaper_t *shaper = jace_shaper_new ("A");
    jace_shaper_set_link (shaper, "B", 1, 0);
    for (int64_t iteration = 1; iteration <= 20; iteration++) {
        jace_msg_t *msg = s_vector (iteration);
        jace_shaper_send (shaper, link, 0, "B", &msg);
        zclock_sleep (1);
        jace_shaper_flush (shaper);
    }
    ok (jace_shaper_flush (shaper) >= 0,
        "values due on a full link are held, not dropped");
    int64_t newest = -1;
    int64_t deadline = zclock_mono () + 1000;
    while (newest < 20 && zclock_mono () < deadline) {
        jace_shaper_flush (shaper);
        zsock_set_rcvtimeo (inbox, 1);
        jace_msg_t *msg = jace_msg_recv (inbox, NULL, 0, NULL, 0);
        if (msg && jace_msg_iteration (msg) > newest)
            newest = jace_msg_iteration (msg);
        jace_msg_destroy (&msg);
    }
    is_int (newest, 20, "once the reader drains the link, the newest "
            "values arrive");
    jace_shaper_destroy (&shaper);
    zsock_destroy (&link);
    zsock_destroy (&inbox);
}

int
main (void)
{
    tap_plan (26);
    zsock_t *inbox = zsock_new_pull ("inproc://shaper-test");
    zsock_t *link = zsock_new_push (">inproc://shaper-test");
    jace_shaper_t *shaper = jace_shaper_new ("A");
    //  50 ms and 0.01 Mb/s: a 100-byte message occupies the link 80 ms,
    //  so values queued behind two of them still wait when newer ones
    //  come, even under valgrind (at 0.8 ms they had sometimes started)
    jace_shaper_set_link (shaper, "B", 50000, 0.01);
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

    //  Checkpoint copies of task 3 at iterations 10, 11 and 12 queued on
    //  the slow link behind a vector, with a copy of task 4 and a FETCH
    //  between them: task 3's newest copy replaces the older ones waiting
    //  (a holder keeps the newest only), nothing else is replaced.  They
    //  used to queue for a minute on a slow link.
    msg = s_data (6, true);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    int64_t copies [][2] = { { 3, 10 }, { 4, 10 }, { 3, -1 }, { 3, 11 },
                             { 3, 12 } };
    for (size_t i = 0; i < 5; i++) {
        char state [40] = "state";
        if (copies [i][1] < 0) {
            msg = jace_msg_new (JACE_MSG_FETCH);
            jace_msg_set_job (msg, "job");
            jace_msg_set_task (msg, copies [i][0]);
        }
        else
            msg = jace_checkpoint_begin ("A-0", "job", copies [i][0], 1,
                                         copies [i][1], state,
                                         sizeof state);
        jace_shaper_send (shaper, link, 0, "B", &msg);
    }
    size_t copies_of_3 = 0, others = 0;
    bool newest_copy = false;
    int64_t deadline = zclock_mono () + 2000;
    while (copies_of_3 + others < 5 && zclock_mono () < deadline) {
        jace_shaper_flush (shaper);
        zsock_set_rcvtimeo (inbox, 1);
        msg = jace_msg_recv (inbox, NULL, 0, NULL, 0);
        if (msg && jace_checkpoint_is_copy (msg) && jace_msg_task (msg) == 3) {
            copies_of_3++;
            newest_copy = jace_msg_iteration (msg) == 12;
        }
        else
        if (msg)
            others++;
        jace_msg_destroy (&msg);
    }
    ok (copies_of_3 == 1 && newest_copy, "of task 3's copies waiting for "
        "the link, only the newest (iteration 12) arrives");
    is_int ((long long) others, 3, "the values, task 4's copy and the "
            "FETCH arrive too");

    //  A task that moves: what was queued for it is dropped, not sent on
    //  the socket its move closes.
    msg = s_data (5, false);
    jace_shaper_send (shaper, link, 0, "B", &msg);
    jace_shaper_drop (shaper, 0);
    ok (s_receive (shaper, inbox, iterations, 1) == 0
        && jace_shaper_flush (shaper) == -1,
        "jace_shaper_drop forgets a moved task's queue");

    jace_shaper_destroy (&shaper);
    s_test_shared (link);
    s_test_delay (link);
    s_test_full_link ();
    s_test_turns (link, inbox);
    s_test_connections (link, inbox);
    zsock_destroy (&link);
    zsock_destroy (&inbox);
    return tap_done ();
}
