/*  =========================================================================
    test_runtime_exchange - total exchanges among tasks' engines in one
    process

    Every task's jace_exchange runs here, joined by a simulated network
    that delivers messages in a random order, can lose them and can lose a
    task; the routes are the daemon's (daemon_exchange over
    collectives/lg).  Each round every task gives every task a piece
    whose size (zero included) and bytes depend on (round, source,
    destination), so a piece delivered to the wrong task or round, cut,
    or twice, is seen.  Checked: LG for two and three clusters of unequal
    sizes, the direct plan and no routes deliver every piece exactly once
    with its contents, and LG sends 2 max(n1, n2) messages across the
    backbone per round; lost messages are recovered by the fallback's
    pulls; a relay that dies mid-round and is replaced (running its rounds
    again from the start) lets every task finish, each piece once; two
    exchange partners replaced at once, one in another cluster, run their
    round again without waiting for the fallback; forged, malformed or
    misrouted input is refused.
    =========================================================================
*/
#include "jace_exchange.h"
#include "daemon_exchange.h"
#include "tap.h"

#define TASKS_MAX 16
//  Deliveries (and ticks) before a round is declared stuck.
#define STEPS_MAX 200000

typedef struct _net_t net_t;

//  One task: its engine and what it received.
typedef struct {
    net_t *net;                 //  The network it is on
    int64_t rank;               //  Its task
    jace_exchange_t *engine;    //  Its engine, NULL while dead
    int copies [TASKS_MAX];     //  Pieces reported per source, this round
    int64_t rounds_done;        //  Rounds it completed
} task_t;

//  A message on its way.
typedef struct {
    int64_t to;                 //  Receiving task
    zmsg_t *zmsg;               //  The message
} flight_t;

struct _net_t {
    int64_t tasks;              //  Tasks in the job
    int cluster [TASKS_MAX];    //  Cluster of each task
    task_t task [TASKS_MAX];    //  The tasks
    int64_t epoch [TASKS_MAX];  //  Each task's current epoch
    jace_key_t key;             //  Job key
    zlistx_t *flights;          //  flight_t on their way
    int64_t now;                //  Simulated time, msec
    int64_t dead;               //  Task whose daemon is down, or -1
    unsigned loss;              //  Messages lost per thousand
    uint64_t backbone;          //  Messages sent between clusters
    uint64_t lost;              //  Messages lost
    uint64_t refused;           //  Messages an engine refused
    uint64_t wrong;             //  Pieces with the wrong size or bytes
};

//  --------------------------------------------------------------------------
//  Pieces

static size_t
s_piece_size (int64_t round, int64_t source, int64_t destination)
{
    return (size_t) ((source * 7 + destination * 13 + round * 5) % 97);
}

static unsigned char
s_piece_byte (int64_t round, int64_t source, int64_t destination, size_t i)
{
    return (unsigned char) (round * 31 + source * 17 + destination * 11
                            + (int64_t) i);
}

//  Task `source`'s pieces of a round, one per task.
static void
s_pieces (int64_t tasks, int64_t round, int64_t source,
          unsigned char **buffers, size_t *sizes)
{
    for (int64_t to = 0; to < tasks; to++) {
        sizes [to] = s_piece_size (round, source, to);
        buffers [to] = sizes [to] ? (unsigned char *) malloc (sizes [to])
                                  : NULL;
        for (size_t i = 0; i < sizes [to]; i++)
            buffers [to][i] = s_piece_byte (round, source, to, i);
    }
}

static bool
s_piece_right (int64_t round, int64_t source, int64_t destination,
               const unsigned char *bytes, size_t size)
{
    if (size != s_piece_size (round, source, destination))
        return false;
    for (size_t i = 0; i < size; i++)
        if (bytes [i] != s_piece_byte (round, source, destination, i))
            return false;
    return true;
}

//  --------------------------------------------------------------------------
//  The network

static int
s_send (void *arg, int64_t to, jace_msg_t **msg_p)
{
    task_t *task = (task_t *) arg;
    net_t *net = task->net;
    zmsg_t *zmsg = jace_msg_encode (*msg_p);
    jace_msg_destroy (msg_p);
    assert (to >= 0 && to < net->tasks && to != task->rank);
    if (net->cluster [task->rank] != net->cluster [to])
        net->backbone++;
    if ((unsigned) randof (1000) < net->loss) {
        net->lost++;
        zmsg_destroy (&zmsg);
        return 0;
    }
    flight_t *flight = (flight_t *) zmalloc (sizeof *flight);
    *flight = (flight_t) { to, zmsg };
    zlistx_add_end (net->flights, flight);
    return 0;
}

static void
s_on_piece (void *arg, int64_t round, int64_t source, const void *bytes,
            size_t size)
{
    task_t *task = (task_t *) arg;
    task->copies [source]++;
    if (!s_piece_right (round, source, task->rank, bytes, size))
        task->net->wrong++;
}

static void
s_flight_destroy (void **item_p)
{
    flight_t *flight = (flight_t *) *item_p;
    zmsg_destroy (&flight->zmsg);
    free (flight);
    *item_p = NULL;
}

//  Give task `rank` the routes the daemon plans for the clusters as
//  they are now.
static void
s_route (net_t *net, int64_t rank, const char *algorithm)
{
    task_t *task = &net->task [rank];
    const char *names [TASKS_MAX];
    char text [TASKS_MAX][8];
    for (int64_t r = 0; r < net->tasks; r++) {
        snprintf (text [r], sizeof text [r], "c%d", net->cluster [r]);
        names [r] = text [r];
    }
    size_t count = 0;
    jace_route_t *routes = daemon_exchange_routes (names, net->tasks, rank,
                                                   algorithm, &count);
    char reason [256];
    int rc = jace_exchange_set_routes (task->engine, routes, count, net->now,
                                       reason, sizeof reason);
    if (rc)
        diag ("routes of task %" PRId64 ": %s", rank, reason);
    free (routes);
}

static void
s_start_task (net_t *net, int64_t rank, const char *algorithm)
{
    task_t *task = &net->task [rank];
    task->net = net;
    task->rank = rank;
    task->engine = jace_exchange_new ("job-x", &net->key, rank, net->tasks,
                                      s_send, s_on_piece, task);
    jace_exchange_set_epoch (task->engine, net->epoch [rank]);
    jace_exchange_set_fallback (task->engine, 1000);
    s_route (net, rank, algorithm);
}

//  A job of clusters of sizes[0], sizes[1], ..., its ranks interleaved
//  (task r in cluster r mod ...) so clusters are not rank ranges.
static net_t *
s_net_new (const int *sizes, int clusters, const char *algorithm)
{
    net_t *net = (net_t *) zmalloc (sizeof *net);
    jace_key_random (&net->key);
    net->flights = zlistx_new ();
    zlistx_set_destructor (net->flights, s_flight_destroy);
    net->dead = -1;
    int left [8];
    memcpy (left, sizes, clusters * sizeof (int));
    int cluster = 0;
    for (int placed = 0; ; placed++) {
        int tried = 0;
        while (left [cluster] == 0 && tried++ < clusters)
            cluster = (cluster + 1) % clusters;
        if (left [cluster] == 0)
            break;
        net->cluster [net->tasks++] = cluster;
        left [cluster]--;
        cluster = (cluster + 1) % clusters;
    }
    for (int64_t rank = 0; rank < net->tasks; rank++) {
        net->epoch [rank] = 1;
        s_start_task (net, rank, algorithm);
    }
    return net;
}

static void
s_net_destroy (net_t **net_p)
{
    net_t *net = *net_p;
    for (int64_t rank = 0; rank < net->tasks; rank++)
        jace_exchange_destroy (&net->task [rank].engine);
    zlistx_destroy (&net->flights);
    free (net);
    *net_p = NULL;
}

//  Deliver the message in flight at the list's cursor (one chosen at
//  random: s_deliver_one) as jace_task would: sealed with the job key,
//  not from an epoch its sender left.
static void
s_deliver_current (net_t *net)
{
    flight_t *flight = (flight_t *) zlistx_item (net->flights);
    int64_t to = flight->to;
    zmsg_t *zmsg = flight->zmsg;
    flight->zmsg = NULL;
    zlistx_delete (net->flights, zlistx_cursor (net->flights));
    jace_msg_t *msg = jace_msg_decode (&zmsg, NULL, 0);
    task_t *task = &net->task [to];
    char reason [256];
    if (!msg || !jace_msg_sealed (msg, net->key.bytes))
        net->refused++;
    else
    if (to == net->dead || !task->engine
    ||  jace_msg_epoch (msg) < net->epoch [jace_msg_task (msg)])
        net->lost++;
    else
    if (jace_exchange_receive (task->engine, msg, net->now, reason,
                               sizeof reason)) {
        diag ("task %" PRId64 " refused: %s", to, reason);
        net->refused++;
    }
    jace_msg_destroy (&msg);
}

static void
s_deliver_one (net_t *net)
{
    size_t index = (size_t) randof ((int) zlistx_size (net->flights));
    zlistx_first (net->flights);
    while (index--)
        zlistx_next (net->flights);
    s_deliver_current (net);
}

//  Begin round `round` on task `rank`.
static void
s_begin (net_t *net, int64_t rank, int64_t round)
{
    unsigned char *buffers [TASKS_MAX];
    size_t sizes [TASKS_MAX];
    task_t *task = &net->task [rank];
    memset (task->copies, 0, sizeof task->copies);
    s_pieces (net->tasks, round, rank, buffers, sizes);
    jace_exchange_begin (task->engine, round, (const void *const *) buffers,
                         sizes, NULL, NULL, net->now);
    for (int64_t to = 0; to < net->tasks; to++)
        free (buffers [to]);
}

//  True when task `rank` finished `round`, each piece once and right.
static bool
s_task_finished (const net_t *net, int64_t rank, int64_t round)
{
    const task_t *task = &net->task [rank];
    if (!task->engine || jace_exchange_round (task->engine) != round
    ||  !jace_exchange_done (task->engine))
        return false;
    for (int64_t source = 0; source < net->tasks; source++) {
        size_t size;
        bool present;
        const unsigned char *bytes = (const unsigned char *)
            jace_exchange_received (task->engine, source, &size, &present);
        if (!present || task->copies [source] != 1
        ||  !s_piece_right (round, source, rank, bytes, size))
            return false;
    }
    return true;
}

//  Deliver and tick until every live task listed in `rounds` (its round,
//  or -1 to leave it out) is done; a task done with a round below
//  `until` begins its next.  Time moves on only when nothing is in
//  flight, so a lossless run never reaches a fallback.
static bool
s_run (net_t *net, int64_t until)
{
    for (int step = 0; step < STEPS_MAX; step++) {
        bool all = true;
        for (int64_t rank = 0; rank < net->tasks; rank++) {
            task_t *task = &net->task [rank];
            if (!task->engine || rank == net->dead)
                continue;
            int64_t round = jace_exchange_round (task->engine);
            if (round >= 1 && s_task_finished (net, rank, round)
            &&  round < until) {
                task->rounds_done = round;
                s_begin (net, rank, round + 1);
            }
            if (!s_task_finished (net, rank, until))
                all = false;
        }
        if (all)
            return true;
        if (zlistx_size (net->flights))
            s_deliver_one (net);
        else {
            net->now += 250;
            for (int64_t rank = 0; rank < net->tasks; rank++)
                if (net->task [rank].engine && rank != net->dead)
                    jace_exchange_tick (net->task [rank].engine, net->now);
        }
    }
    return false;
}

//  Every task runs rounds 1 .. rounds; true if all finished each right.
static bool
s_job (net_t *net, int64_t rounds)
{
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_begin (net, rank, 1);
    return s_run (net, rounds);
}

static uint64_t
s_total (net_t *net, uint64_t (*counter) (const jace_exchange_t *))
{
    uint64_t total = 0;
    for (int64_t rank = 0; rank < net->tasks; rank++)
        if (net->task [rank].engine)
            total += counter (net->task [rank].engine);
    return total;
}

//  --------------------------------------------------------------------------

//  A check whose name is formatted.
static bool
    s_ok (bool condition, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static bool
s_ok (bool condition, const char *format, ...)
{
    char name [256];
    va_list args;
    va_start (args, format);
    vsnprintf (name, sizeof name, format, args);
    va_end (args);
    return ok (condition, name);
}

static void
s_test_plans (void)
{
    int two [] = { 3, 5 };
    net_t *net = s_net_new (two, 2, "lg");
    ok (s_job (net, 4) && net->wrong == 0 && net->refused == 0,
        "LG, clusters of 3 and 5: 4 rounds, every piece once and right");
    is_int ((long long) net->backbone, 4 * 2 * 5,
            "LG sends 2 max(n1, n2) = 10 messages across per round");
    is_int ((long long) s_total (net, jace_exchange_duplicates), 0,
            "no duplicates without faults");
    s_net_destroy (&net);

    int three [] = { 2, 3, 4 };
    net = s_net_new (three, 3, "lg");
    ok (s_job (net, 3) && net->wrong == 0 && net->refused == 0,
        "LG, clusters of 2, 3 and 4: every piece once and right");
    is_int ((long long) s_total (net, jace_exchange_pulls), 0,
            "no pulls without faults");
    s_net_destroy (&net);

    int uneven [] = { 3, 7 };
    net = s_net_new (uneven, 2, "lg");
    ok (s_job (net, 2) && net->wrong == 0,
        "LG, clusters of 3 and 7 (a last group with relays): right");
    is_int ((long long) net->backbone, 2 * 2 * 7,
            "and 2 max(n1, n2) = 14 messages across per round");
    s_net_destroy (&net);

    net = s_net_new (two, 2, "direct");
    ok (s_job (net, 2) && net->wrong == 0, "the direct plan: right");
    is_int ((long long) net->backbone, 2 * 2 * 3 * 5,
            "and 2 n1 n2 = 30 messages across per round");
    s_net_destroy (&net);

    net = s_net_new (two, 2, "flat");
    ok (s_job (net, 2) && net->wrong == 0, "no routes (flat): right");
    s_net_destroy (&net);

    int one [] = { 6 };
    net = s_net_new (one, 1, "lg");
    ok (s_job (net, 2) && net->wrong == 0 && net->backbone == 0,
        "one cluster: straight, right");
    ok (!jace_exchange_has_routes (net->task [0].engine),
        "one cluster needs no route");
    s_net_destroy (&net);
}

static void
s_test_loss (void)
{
    int sizes [] = { 3, 5 };
    net_t *net = s_net_new (sizes, 2, "lg");
    net->loss = 100;
    bool done = s_job (net, 5);
    diag ("%" PRIu64 " messages lost, %" PRIu64 " pulls, %" PRIu64
          " duplicates, %" PRIu64 " late pieces forwarded", net->lost,
          s_total (net, jace_exchange_pulls),
          s_total (net, jace_exchange_duplicates),
          s_total (net, jace_exchange_forwarded));
    ok (done && net->wrong == 0 && net->lost > 0,
        "a tenth of all messages lost: every piece still arrives once, "
        "right");
    ok (s_total (net, jace_exchange_pulls) > 0, "recovered by pulls");
    s_net_destroy (&net);
}

//  Task 0 relays in LG (the small cluster's staging node).  It dies half
//  way through round 3; its replacement (epoch 2) runs rounds 1 to 3
//  again from the start, as a task restarted from its initial state.
static void
s_test_relay_dies (const char *algorithm, int64_t victim)
{
    int sizes [] = { 3, 5 };
    net_t *net = s_net_new (sizes, 2, algorithm);
    s_ok (s_job (net, 2), "%s: two rounds before the crash (task %" PRId64
          " will die)", algorithm, victim);
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_begin (net, rank, 3);
    size_t half = zlistx_size (net->flights) / 2;
    for (size_t i = 0; i < half; i++)
        s_deliver_one (net);
    net->dead = victim;
    jace_exchange_destroy (&net->task [victim].engine);
    //  The others go on as far as they can, then wait; time passes.
    for (int i = 0; i < 2000 && zlistx_size (net->flights); i++)
        s_deliver_one (net);
    net->now += 3000;
    for (int64_t rank = 0; rank < net->tasks; rank++)
        if (net->task [rank].engine)
            jace_exchange_tick (net->task [rank].engine, net->now);
    //  The replacement: a new daemon, the next epoch, a REMAP to all.
    net->dead = -1;
    net->epoch [victim] = 2;
    s_start_task (net, victim, algorithm);
    for (int64_t rank = 0; rank < net->tasks; rank++)
        if (rank != victim)
            jace_exchange_moved (net->task [rank].engine, victim, net->now);
    s_begin (net, victim, 1);
    int64_t replaced = net->now;
    bool done = s_run (net, 3);
    diag ("%s, task %" PRId64 " replaced: %" PRIu64 " pulls, %" PRIu64
          " duplicates, %" PRIu64 " late pieces forwarded, done %" PRId64
          " ms later", algorithm, victim, s_total (net, jace_exchange_pulls),
          s_total (net, jace_exchange_duplicates),
          s_total (net, jace_exchange_forwarded), net->now - replaced);
    s_ok (net->now - replaced < 1000, "%s: the replacement catches up "
          "without waiting for a fallback (%" PRId64 " ms)", algorithm,
          net->now - replaced);
    s_ok (done && net->wrong == 0, "%s: task %" PRId64 " dies in round 3; "
          "every task finishes it, each piece once and right, the "
          "replacement having run rounds 1 to 3 again", algorithm, victim);
    ok (net->task [victim].rounds_done >= 2,
        "the replacement completed rounds 1 and 2 again");
    s_net_destroy (&net);
}

//  A task moves to another cluster in the middle of a round: every task
//  gets new routes (LG planned on the new clusters) while pieces are on
//  their way on the old ones; the round ends by pulls, the next runs on
//  the new routes.
static void
s_test_reroute (void)
{
    int sizes [] = { 3, 5 };
    net_t *net = s_net_new (sizes, 2, "lg");
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_begin (net, rank, 1);
    size_t third = zlistx_size (net->flights) / 3;
    for (size_t i = 0; i < third; i++)
        s_deliver_one (net);
    net->cluster [0] = 1;           //  Task 0 now runs in the big cluster
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_route (net, rank, "lg");
    int64_t changed = net->now;
    bool done = s_run (net, 3);
    diag ("routes changed: done %" PRId64 " ms later, %" PRIu64 " pulls",
          net->now - changed, s_total (net, jace_exchange_pulls));
    ok (done && net->wrong == 0,
        "routes changed mid-round: that round and two more, every piece "
        "once and right");
    s_net_destroy (&net);
}

//  Two tasks that exchange across the backbone both die after a round
//  every task finished (as a job's one set-up round is); one replacement
//  runs in a third cluster, so every task plans new routes.  The two
//  replacements run the round again while the others, done with it,
//  send them only their logged pieces: neither may wait on transfers of
//  the new routes, which nobody sends, for the fallback.  (In a job a
//  task moved to another site waited 5 s to iterate.)
static void
s_test_partners_replaced_across (void)
{
    int sizes [] = { 3, 5 };
    net_t *net = s_net_new (sizes, 2, "lg");
    int64_t first = 0, second = 1;  //  Clusters 0 and 1 (interleaved)
    ok (s_job (net, 1), "a round every task finished before the crashes");
    for (int64_t victim = first; victim <= second; victim++) {
        net->epoch [victim] = 2;
        jace_exchange_destroy (&net->task [victim].engine);
    }
    while (zlistx_size (net->flights))
        s_deliver_one (net);
    int64_t replaced = net->now;
    net->cluster [first] = 2;       //  The first goes to another site
    for (int64_t victim = first; victim <= second; victim++) {
        s_start_task (net, victim, "lg");
        for (int64_t rank = 0; rank < net->tasks; rank++)
            if (rank != victim && net->task [rank].engine) {
                jace_exchange_moved (net->task [rank].engine, victim,
                                     net->now);
                s_route (net, rank, "lg");
            }
    }
    s_begin (net, first, 1);
    s_begin (net, second, 1);
    bool done = s_run (net, 1);
    diag ("partners replaced, one across: done %" PRId64 " ms later, %"
          PRIu64 " pulls", net->now - replaced,
          s_total (net, jace_exchange_pulls));
    ok (done && net->wrong == 0, "both replacements finish the round "
        "again, each piece once and right");
    s_ok (net->now - replaced < 1000, "without waiting for the fallback "
        "(%" PRId64 " ms)", net->now - replaced);
    s_net_destroy (&net);
}

//  Transfers that are forged, damaged or not ours are refused.
static void
s_test_hostile (void)
{
    int sizes [] = { 2, 2 };
    net_t *net = s_net_new (sizes, 2, "lg");
    jace_exchange_t *engine = net->task [0].engine;
    char reason [256] = "";
    jace_key_t other;
    jace_key_random (&other);
    unsigned char bytes [8] = { 1, 2, 3 };
    jace_piece_t piece = { 1, 0, bytes, sizeof bytes };
    jace_msg_t *msg = jace_transfer_encode ("job-x", &other, 1, 1,
                                            JACE_TRANSFER_PIECES, 1, -1,
                                            &piece, 1);
    ok (jace_exchange_receive (engine, msg, 0, reason, sizeof reason) == -1
        && strstr (reason, "MAC"), "a transfer under another key is refused");
    jace_msg_destroy (&msg);

    piece.destination = 9;
    msg = jace_transfer_encode ("job-x", &net->key, 1, 1,
                                JACE_TRANSFER_PIECES, 1, -1, &piece, 1);
    ok (jace_exchange_receive (engine, msg, 0, reason, sizeof reason) == -1,
        "a piece for a task outside the job is refused");
    diag ("%s", reason);
    jace_msg_destroy (&msg);

    piece.destination = 0;
    msg = jace_transfer_encode ("job-x", &net->key, 0, 1,
                                JACE_TRANSFER_PIECES, 1, -1, &piece, 1);
    ok (jace_exchange_receive (engine, msg, 0, reason, sizeof reason) == -1,
        "a transfer claiming to come from ourselves is refused");
    jace_msg_destroy (&msg);

    //  A descriptor announcing more bytes than the transfer holds.
    int64_t descriptor [] = { JACE_TRANSFER_PIECES, 1, -1, 1, 1, 0, 4096 };
    msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (msg, "job-x");
    jace_msg_set_task (msg, 1);
    jace_msg_set_epoch (msg, 1);
    jace_msg_add_payload (msg, JACE_PAYLOAD_I64, descriptor, 7);
    jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, bytes, sizeof bytes);
    jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, bytes, 8);
    ok (jace_transfer_is (msg)
        && jace_exchange_receive (engine, msg, 0, reason, sizeof reason)
           == -1, "a transfer whose MAC or sizes do not hold is refused");
    jace_msg_destroy (&msg);

    jace_route_t broken = { 0, 1, 2, { { 1, 0, 2 }, { 1, 2, 1 } } };
    ok (jace_exchange_set_routes (engine, &broken, 1, 0, reason,
                                  sizeof reason) == -1,
        "a route whose steps do not increase is refused");
    diag ("%s", reason);
    jace_route_t elsewhere = { 1, 2, 1, { { 1, 1, 2 } } };
    ok (jace_exchange_set_routes (engine, &elsewhere, 1, 0, reason,
                                  sizeof reason) == -1,
        "a route that does not pass us is refused");
    jace_route_t twice [] = { { 0, 1, 1, { { 1, 0, 1 } } },
                              { 0, 1, 1, { { 2, 0, 1 } } } };
    ok (jace_exchange_set_routes (engine, twice, 2, 0, reason,
                                  sizeof reason) == -1,
        "a piece given two routes is refused");
    is_int ((long long) net->wrong, 0, "no piece was taken from any of them");
    s_net_destroy (&net);
}

//  A job member (it holds the key) sends nonsense: random descriptors,
//  counts, ranks, sizes and bodies, each with a valid MAC and seal, to a
//  task in the middle of a round.  None may crash it or go unnoticed as
//  a piece of another shape (the sanitizer build checks every access).
static void
s_test_nonsense (void)
{
    int sizes [] = { 2, 3 };
    net_t *net = s_net_new (sizes, 2, "lg");
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_begin (net, rank, 1);
    jace_exchange_t *engine = net->task [2].engine;
    size_t refused = 0;
    for (int attempt = 0; attempt < 2000; attempt++) {
        int64_t words [16];
        size_t word_count = 4 + (size_t) randof (12);
        int64_t choices [] = { -1, 0, 1, 2, 3, 4, 5, 7, 1000,
                               (int64_t) 1 << 62, INT64_MAX, INT64_MIN };
        for (size_t i = 0; i < word_count; i++)
            words [i] = choices [randof (12)];
        unsigned char body [64];
        size_t body_size = (size_t) randof (64);
        if (attempt % 2) {
            //  Half of them plausible: a known kind, a near round, pieces
            //  that fit the descriptor, ranks and sizes a little off.
            words [0] = 1 + randof (3);
            words [1] = randof (3);
            words [2] = randof (5) - 1;
            word_count = 4 + 3 * (size_t) randof (4);
            words [3] = (int64_t) (word_count - 4) / 3;
            body_size = 0;
            for (size_t i = 4; i < word_count; i++) {
                words [i] = randof (7) - 1;
                if ((i - 4) % 3 == 2 && words [i] > 0)
                    body_size += (size_t) words [i];
            }
        }
        for (size_t i = 0; i < body_size; i++)
            body [i] = (unsigned char) randof (256);
        jace_msg_t *msg = jace_msg_new (JACE_MSG_DATA);
        jace_msg_set_job (msg, "job-x");
        jace_msg_set_task (msg, randof (5));
        jace_msg_set_epoch (msg, 1);
        jace_msg_set_iteration (msg, -1);
        jace_msg_add_payload (msg, JACE_PAYLOAD_I64, words, word_count);
        jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, body, body_size);
        unsigned char mac [JACE_TRANSFER_MAC_BYTES];
        jace_transfer_mac (msg, &net->key, mac);
        jace_msg_add_payload (msg, JACE_PAYLOAD_BYTES, mac, sizeof mac);
        jace_msg_seal (msg, net->key.bytes);
        char reason [256];
        if (jace_exchange_receive (engine, msg, net->now, reason,
                                   sizeof reason))
            refused++;
        jace_msg_destroy (&msg);
    }
    diag ("2000 nonsense transfers from a job member: %zu refused",
          refused);
    ok (refused > 500 && refused < 2000, "nonsense from a job member is "
        "refused, what parses is taken, and nothing crashes the task");
    s_net_destroy (&net);
}

//  True if a message in flight was sent by task `rank`.
static bool
s_flight_from (const flight_t *flight, int64_t rank)
{
    zmsg_t *zmsg = zmsg_dup (flight->zmsg);
    jace_msg_t *msg = jace_msg_decode (&zmsg, NULL, 0);
    bool from = msg && jace_msg_task (msg) == rank;
    jace_msg_destroy (&msg);
    return from;
}

//  Deliver one message in flight not sent by `rank`; false if none is.
static bool
s_deliver_not_from (net_t *net, int64_t rank)
{
    for (flight_t *flight = (flight_t *) zlistx_first (net->flights);
         flight; flight = (flight_t *) zlistx_next (net->flights))
        if (!s_flight_from (flight, rank)) {
            s_deliver_current (net);
            return true;
        }
    return false;
}

//  Task 3 completes round 3 and dies before any of its pieces of it
//  reach the others (they were still in its daemon's queues).  Its
//  replacement is restored from a checkpoint taken right after round 3,
//  so it runs round 4 next: the others, still in round 3, get task 3's
//  pieces of it only from the pieces the checkpoint saved.
typedef enum {
    RESTORE_WITHOUT_PIECES,     //  The copy had none
    RESTORE_PULLS_IN_FLIGHT,    //  Relog and round 4 before the pulls come
    RESTORE_PULLS_FIRST,        //  Pulls come before the relog (wants)
    RESTORE_PULLS_BETWEEN       //  Pulls come after the relog, before round
                                //  4: answered from the log, past round
} restore_case_t;

static void
s_test_restored_after_round (restore_case_t restore)
{
    bool with_pieces = restore != RESTORE_WITHOUT_PIECES;
    int sizes [] = { 5 };
    int64_t victim = 3;
    net_t *net = s_net_new (sizes, 1, "lg");
    ok (s_job (net, 2), "two rounds before the crash");
    for (int64_t rank = 0; rank < net->tasks; rank++)
        s_begin (net, rank, 3);
    while (!s_task_finished (net, victim, 3)
    &&     s_deliver_not_from (net, victim))
        ;
    ok (s_task_finished (net, victim, 3), "task 3 completed round 3, none "
        "of its own pieces of it delivered");
    //  The checkpoint: the pieces of round 3 as task 3's log holds them.
    const unsigned char *const *logged;
    const size_t *logged_sizes;
    const void *saved [TASKS_MAX];
    size_t saved_sizes [TASKS_MAX];
    unsigned char *copies [TASKS_MAX];
    int rc = jace_exchange_logged (net->task [victim].engine, 3, &logged,
                                   &logged_sizes);
    for (int64_t to = 0; to < net->tasks; to++) {
        saved_sizes [to] = rc ? 0 : logged_sizes [to];
        copies [to] = saved_sizes [to] ? (unsigned char *)
                      zmalloc (saved_sizes [to]) : NULL;
        if (saved_sizes [to])
            memcpy (copies [to], logged [to], saved_sizes [to]);
        saved [to] = copies [to];
    }
    //  Task 3's messages are lost with its daemon (the epoch it left);
    //  the others' to it, too.
    net->dead = victim;
    net->epoch [victim] = 2;
    jace_exchange_destroy (&net->task [victim].engine);
    while (zlistx_size (net->flights))
        s_deliver_one (net);
    net->dead = -1;
    s_start_task (net, victim, "lg");
    for (int64_t rank = 0; rank < net->tasks; rank++)
        if (rank != victim)
            jace_exchange_moved (net->task [rank].engine, victim, net->now);
    //  The daemon fetches its copies first: pulls may come meanwhile.
    if (restore == RESTORE_PULLS_FIRST)
        while (zlistx_size (net->flights))
            s_deliver_one (net);
    if (with_pieces)
        ok (jace_exchange_relog (net->task [victim].engine, 3, saved,
                                 saved_sizes) == 0,
            "the replacement takes the saved pieces of round 3");
    if (restore == RESTORE_PULLS_BETWEEN)
        while (zlistx_size (net->flights))
            s_deliver_one (net);
    s_begin (net, victim, 4);
    bool done = s_run (net, 4);
    for (int64_t to = 0; to < net->tasks; to++)
        free (copies [to]);
    const char *failure = NULL;
    for (int64_t rank = 0; rank < net->tasks && !failure; rank++)
        failure = jace_exchange_failure (net->task [rank].engine);
    if (with_pieces)
        s_ok (done && net->wrong == 0 && !failure, "every task completes "
              "rounds 3 and 4, each piece once and right (pulls %s)",
              restore == RESTORE_PULLS_FIRST ? "before the relog"
              : restore == RESTORE_PULLS_BETWEEN ? "between the relog and "
                "round 4" : "after round 4 began");
    else {
        ok (!done && failure && strstr (failure, "no longer holds"),
            "without them, the others learn task 3 no longer holds its "
            "pieces of round 3");
        diag ("done %d: %s", done, failure ? failure : "(none)");
    }
    s_net_destroy (&net);
}

//  Two tasks lost together, restored from copies of different rounds:
//  task 1 at round 3, task 3 at round 5.  Task 1 runs rounds 4 and 5
//  again, and needs task 3's pieces of them, which died with task 3's
//  log.  A copy that carries rounds 3 to 5 (jace_task_save_pieces
//  reaches back over several copies) serves them; one that carries round
//  5 alone cannot.
static void
s_test_restored_apart (bool older_rounds)
{
    int sizes [] = { 3, 2 };
    int64_t early = 1, late = 3;
    net_t *net = s_net_new (sizes, 2, "lg");
    ok (s_job (net, 5), "five rounds before two tasks are lost");
    int64_t first = older_rounds ? 3 : 5;
    void *saved [3][TASKS_MAX];
    size_t saved_sizes [3][TASKS_MAX];
    for (int64_t round = first; round <= 5; round++) {
        const unsigned char *const *logged;
        const size_t *logged_sizes;
        int rc = jace_exchange_logged (net->task [late].engine, round,
                                       &logged, &logged_sizes);
        assert (rc == 0);
        for (int64_t to = 0; to < net->tasks; to++) {
            size_t size = logged_sizes [to];
            saved_sizes [round - 3][to] = size;
            saved [round - 3][to] = size ? zmalloc (size) : NULL;
            if (size)
                memcpy (saved [round - 3][to], logged [to], size);
        }
    }
    int64_t lost [2] = { early, late };
    for (int i = 0; i < 2; i++) {
        net->epoch [lost [i]] = 2;
        jace_exchange_destroy (&net->task [lost [i]].engine);
        s_start_task (net, lost [i], "lg");
    }
    for (int64_t rank = 0; rank < net->tasks; rank++)
        for (int i = 0; i < 2; i++)
            if (rank != lost [i])
                jace_exchange_moved (net->task [rank].engine, lost [i],
                                     net->now);
    bool relogged = true;
    for (int64_t round = first; round <= 5; round++)
        relogged &= jace_exchange_relog (net->task [late].engine, round,
                                         (const void *const *)
                                         saved [round - 3],
                                         saved_sizes [round - 3]) == 0;
    ok (relogged, "task 3's replacement logs the rounds its copy carried");
    s_begin (net, early, 4);
    s_begin (net, late, 6);
    bool done = s_run (net, 6);
    const char *failure = NULL;
    for (int64_t rank = 0; rank < net->tasks && !failure; rank++)
        failure = jace_exchange_failure (net->task [rank].engine);
    if (older_rounds)
        ok (done && net->wrong == 0 && !failure,
            "task 1 runs rounds 4 and 5 again from task 3's copy, and "
            "every task completes round 6, each piece once and right");
    else
        ok (!done && failure && strstr (failure, "no longer holds"),
            "with round 5 alone, task 1 learns task 3 no longer holds "
            "round 4");
    diag ("done %d: %s", done, failure ? failure : "(none)");
    for (int64_t round = first; round <= 5; round++)
        for (int64_t to = 0; to < net->tasks; to++)
            free (saved [round - 3][to]);
    s_net_destroy (&net);
}

//  A task whose log is full answers a pull of a dropped round "gone",
//  and the task that needs it says so instead of waiting for ever.
static void
s_test_gone (void)
{
    int sizes [] = { 3 };
    net_t *net = s_net_new (sizes, 1, "lg");
    jace_exchange_set_log_limit (net->task [1].engine, 0);
    ok (s_job (net, 3), "three rounds with task 1 keeping no log");
    //  Task 2 is replaced and runs round 1 again; task 1 dropped it.
    net->epoch [2] = 2;
    jace_exchange_destroy (&net->task [2].engine);
    s_start_task (net, 2, "lg");
    s_begin (net, 2, 1);
    net->now += 10000;
    for (int i = 0; i < 100; i++) {
        while (zlistx_size (net->flights))
            s_deliver_one (net);
        net->now += 1000;
        jace_exchange_tick (net->task [2].engine, net->now);
    }
    const char *failure = jace_exchange_failure (net->task [2].engine);
    ok (failure && strstr (failure, "no longer holds"),
        "the replacement learns task 1 no longer holds round 1");
    diag ("%s", failure ? failure : "(none)");
    s_net_destroy (&net);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_init ();
    srandom (14);
    tap_plan (62);
    s_test_plans ();
    s_test_loss ();
    s_test_relay_dies ("lg", 0);
    s_test_relay_dies ("lg", 4);
    s_test_relay_dies ("direct", 2);
    s_test_reroute ();
    s_test_partners_replaced_across ();
    s_test_hostile ();
    s_test_nonsense ();
    s_test_gone ();
    s_test_restored_apart (true);
    s_test_restored_apart (false);
    s_test_restored_after_round (RESTORE_PULLS_IN_FLIGHT);
    s_test_restored_after_round (RESTORE_PULLS_FIRST);
    s_test_restored_after_round (RESTORE_PULLS_BETWEEN);
    s_test_restored_after_round (RESTORE_WITHOUT_PIECES);
    return tap_done ();
}
