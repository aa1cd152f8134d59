/*  =========================================================================
    test_runtime_task - the task graph: sources, sinks, request lists,
    FETCH targets

    Six tasks of one row each; we are task 2 and ask tasks 1 and 3 for
    values.  Every other task's data endpoint is a PULL of ours on inproc,
    so the test sees exactly which tasks a request list reaches, and that
    everything the task sends is sealed with the job key.  A neighbour's
    DATA is taken only within its reach: an iteration like 2^62 is
    refused, legitimate progress never.  In asynchronous mode, values for
    a task of another cluster never queue up behind each other, and the
    newest a full link refused goes once it has room.  A
    rebalance's iterate, whole or our row and what we read, restores;
    one that does not match its declaration is refused.
    =========================================================================
*/
#include "jace_task_runtime.h"
#include "tap.h"

#define TASKS 6
#define RANK 2

static jace_key_t s_job_key;
static int s_unsealed;          //  Messages the task sent unsealed

//  Task of cluster "far" (the others are in "c"), or -1
static int s_far_rank = -1;

//  The ASSIGN of task RANK of a TASKS-task job, one row per task.
static jace_msg_t *
s_assign (void)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (assign, "job-graph");
    jace_msg_set_task (assign, RANK);
    jace_msg_set_epoch (assign, 1);
    jace_msg_set_count (assign, TASKS);
    char text [JACE_KEY_TEXT + 1];
    jace_key_encode (&s_job_key, text);
    jace_msg_set_key (assign, text);
    jace_msg_set_param (assign, "block/rows", "6");
    for (int rank = 0; rank <= TASKS; rank++) {
        char key [32], value [32];
        snprintf (key, sizeof key, "block/first/%d", rank);
        snprintf (value, sizeof value, "%d", rank);
        jace_msg_set_param (assign, key, value);
    }
    for (int rank = 0; rank < TASKS; rank++) {
        jace_node_t node = { .task = rank, .epoch = 1 };
        snprintf (node.id, sizeof node.id, "d%d", rank);
        snprintf (node.data, sizeof node.data, "inproc://graph-%d", rank);
        snprintf (node.cluster, sizeof node.cluster, "%s",
                  rank == s_far_rank ? "far" : "c");
        jace_msg_add_node (assign, &node);
    }
    return assign;
}

static jace_task_t *
s_task (void)
{
    char reason [256] = "";
    jace_msg_t *assign = s_assign ();
    jace_task_t *task = jace_task_new (&assign, NULL, reason, sizeof reason);
    if (!task)
        diag ("jace_task_new: %s", reason);
    int64_t row_of_1 = 1, row_of_3 = 3;
    jace_task_request (task, 1, &row_of_1, 1);
    jace_task_request (task, 3, &row_of_3, 1);
    return task;
}

//  Bit r set when task r's PULL received a message (drains them all).
static int
s_reached (zsock_t **pulls)
{
    int mask = 0;
    zclock_sleep (20);          //  inproc delivery is immediate; be kind
    for (int rank = 0; rank < TASKS; rank++)
        while (pulls [rank] && (zsock_events (pulls [rank]) & ZMQ_POLLIN)) {
            jace_msg_t *msg = jace_msg_recv (pulls [rank], NULL, 0, NULL, 0);
            if (!msg || !jace_msg_sealed (msg, s_job_key.bytes))
                s_unsealed++;
            jace_msg_destroy (&msg);
            mask |= 1 << rank;
        }
    return mask;
}

//  A request list from task `from` asking for our only unknown: its
//  piece of the set-up exchange (round 0), sent straight to us.
static int
s_deliver_request (jace_task_t *task, int64_t from)
{
    char reason [256] = "";
    unsigned char unknown [8] = { RANK };
    jace_piece_t piece = { from, RANK, unknown, sizeof unknown };
    jace_msg_t *data = jace_transfer_encode ("job-graph", &s_job_key, from,
                                             1, JACE_TRANSFER_PIECES, 0,
                                             JACE_TRANSFER_DIRECT, &piece, 1);
    int rc = jace_task_deliver (task, data, reason, sizeof reason);
    if (rc)
        diag ("request of task %" PRId64 " refused: %s", from, reason);
    jace_msg_destroy (&data);
    return rc;
}

//  A vector from task `from` at `iteration`.
static int
s_deliver_values (jace_task_t *task, int64_t from, int64_t iteration,
                  double value, char *reason, size_t reason_size)
{
    jace_msg_t *data = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (data, "job-graph");
    jace_msg_set_task (data, from);
    jace_msg_set_epoch (data, jace_task_node (task, from)->epoch);
    jace_msg_set_iteration (data, iteration);
    jace_msg_set_first (data, from);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, &value, 1);
    int rc = jace_task_deliver (task, data, reason, reason_size);
    jace_msg_destroy (&data);
    return rc;
}

static double
s_newest (jace_task_t *task, int64_t from, int64_t *iteration)
{
    size_t count = 0;
    const double *values = jace_task_newest (task, from, &count, NULL,
                                             iteration);
    return values && count == 1 ? values [0] : -1;
}

//  The reach rule: at most a million iterations a second past the last
//  vector, plus a second's slack; a sender's first vector is measured
//  against the largest iteration we know, since the task started.
static void
s_test_reach (jace_task_t *task)
{
    char reason [256] = "";
    int64_t iteration = 0;
    ok (s_deliver_values (task, 1, (int64_t) 1 << 62, 666, reason,
                          sizeof reason) == -1
        && strstr (reason, "out of its reach"),
        "a first DATA at iteration 2^62 is refused");
    diag ("%s", reason);
    ok (s_deliver_values (task, 1, 5, 1.5, reason, sizeof reason) == 0
        && s_newest (task, 1, &iteration) == 1.5 && iteration == 5,
        "then the sender's real iteration 5 is used: nothing was pinned");
    ok (s_deliver_values (task, 1, 5 + 900000, 2.5, reason, sizeof reason)
        == 0 && s_newest (task, 1, NULL) == 2.5,
        "900000 iterations ahead at once is within a second's reach");
    ok (s_deliver_values (task, 1, 5 + 3000000, 3.5, reason, sizeof reason)
        == -1 && s_newest (task, 1, NULL) == 2.5,
        "3 million more at once is not");
    ok (s_deliver_values (task, 3, 1000000, 4.5, reason, sizeof reason) == 0,
        "another sender's first DATA is measured from the largest "
        "iteration known (900005)");
    ok (s_deliver_values (task, 4, ((int64_t) 1 << 62) + 7, 5.5, reason,
                          sizeof reason) == -1
        && s_deliver_values (task, 4, 11, 6.5, reason, sizeof reason) == 0
        && s_newest (task, 4, NULL) == 6.5,
        "a sink's forged future does not freeze it either");
    is_int ((long long) jace_task_out_of_reach (task), 3,
            "refusals are counted");
    //  Our own sends are sealed: the template path sets its fields first.
    double x = 1;
    jace_task_count_iteration (task);
    ok (jace_task_send (task, 1, &x, 1, RANK) == 0, "a vector sent");
}

//  Vectors accepted out of `tries` sent to task `to` that reads nothing.
static int
s_sent (jace_task_t *task, int64_t to, int tries)
{
    int accepted = 0;
    double x = 1;
    for (int i = 0; i < tries; i++) {
        jace_task_count_iteration (task);
        accepted += jace_task_send (task, to, &x, 1, RANK) == 0;
    }
    return accepted;
}

//  Task 5 is in another cluster and reads nothing (its queue holds one
//  message): asynchronous values to it stop queueing after two, the newer
//  ones dropped and counted, while task 4 of our cluster, and task 5 in
//  synchronous mode, take them all.
static void
s_test_fresh_links (zsock_t **pulls)
{
    s_far_rank = 5;
    jace_task_t *task = s_task ();
    jace_task_keep_remote_fresh (task);
    int far = s_sent (task, 5, 50);
    ok (far >= 1 && far <= 2
        && jace_task_dropped (task) == (uint64_t) (50 - far),
        "async values to another cluster keep at most 2 queued; the rest "
        "are dropped and counted");
    diag ("%d of 50 vectors queued for the far task", far);
    is_int (s_sent (task, 4, 50), 50, "to our own cluster, none is dropped");
    s_reached (pulls);
    ok (s_sent (task, 5, 1) == 1, "once read, the far link takes the next");
    jace_task_destroy (&task);
    s_reached (pulls);
    task = s_task ();
    is_int (s_sent (task, 5, 50), 50, "in synchronous mode (no fresh links) "
            "every vector to the far task is queued");
    jace_task_destroy (&task);
    s_reached (pulls);
    s_far_rank = -1;
}

//  Drain a PULL; the iteration of the newest DATA it held, or -1.
static int64_t
s_newest_sent (zsock_t *pull)
{
    int64_t newest = -1;
    zclock_sleep (20);
    while (zsock_events (pull) & ZMQ_POLLIN) {
        jace_msg_t *msg = jace_msg_recv (pull, NULL, 0, NULL, 0);
        if (msg && jace_msg_type (msg) == JACE_MSG_DATA
        &&  jace_msg_iteration (msg) > newest)
            newest = jace_msg_iteration (msg);
        jace_msg_destroy (&msg);
    }
    return newest;
}

//  Values a full link refused are held and go once it has room, unless
//  newer ones went first: a synchronous neighbour waiting for them would
//  otherwise wait for ever (a replacement that raced ahead on its own
//  values filled its link, then waited for the task it starved).
static void
s_test_unsent (zsock_t **pulls)
{
    s_far_rank = 5;
    jace_task_t *task = s_task ();
    jace_task_keep_remote_fresh (task);
    double x = 1;
    for (int i = 0; i < 30; i++) {
        jace_task_count_iteration (task);
        jace_task_send (task, 5, &x, 1, RANK);
    }
    ok (jace_task_dropped (task) > 0 && jace_task_send_unsent (task),
        "a full link refuses values; they are held while it stays full");
    int64_t before = s_newest_sent (pulls [5]);
    ok (before < 30, "what it took first is older");
    diag ("the link took iteration %lld first", (long long) before);
    ok (!jace_task_send_unsent (task), "once read, the held values go");
    is_int (s_newest_sent (pulls [5]), 30, "they are the newest: iteration 30");
    jace_task_count_iteration (task);
    ok (jace_task_send (task, 5, &x, 1, RANK) == 0
        && !jace_task_send_unsent (task) && s_newest_sent (pulls [5]) == 31,
        "a vector that went leaves nothing to send again");
    jace_task_destroy (&task);
    s_reached (pulls);
    s_far_rank = -1;
}

static bool
s_contains (const int64_t *list, size_t count, int64_t rank)
{
    for (size_t i = 0; i < count; i++)
        if (list [i] == rank)
            return true;
    return false;
}

static void
s_test_fetch_targets (jace_task_t *task)
{
    int64_t targets [TASKS], holders [TASKS];
    //  Neighbours: sources 1, 3 and sinks 3, 4.
    size_t count = jace_task_fetch_targets (task, 2, false, targets);
    ok (count == 3 && s_contains (targets, count, 1)
        && s_contains (targets, count, 3) && s_contains (targets, count, 4),
        "with enough neighbours FETCH goes to all of them");
    count = jace_task_fetch_targets (task, 4, false, targets);
    size_t held = jace_task_checkpoint_holders (task, 4, false, 0, holders);
    bool same = count == held;
    for (size_t i = 0; same && i < count; i++)
        same = s_contains (holders, held, targets [i]);
    ok (same && count == 4, "with too few neighbours FETCH goes to the "
        "fixed holder set");
    bool covered = true;
    for (size_t copies = 1; copies <= 5; copies++) {
        count = jace_task_fetch_targets (task, copies, false, targets);
        for (int64_t round = 0; round < 12; round++) {
            held = jace_task_checkpoint_holders (task, copies, false,
                                                 round, holders);
            for (size_t i = 0; i < held; i++)
                covered &= s_contains (targets, count, holders [i]);
        }
    }
    ok (covered, "every holder of every round is a FETCH target, for 1 "
        "to 5 copies");
    ok (jace_task_fetch_targets (task, 0, false, targets) == 0,
        "no checkpoints, no FETCH");
}

//  Off-site copies: our neighbours 1, 3 and 4 run in our cluster "c";
//  task 5, no neighbour, moves to cluster "far", then task 4 does.
static bool
s_holds (const int64_t *holders, size_t count, int64_t rank)
{
    return s_contains (holders, count, rank);
}

static void
s_test_offsite (jace_task_t *task)
{
    int64_t holders [TASKS], targets [TASKS];
    bool local = true;
    for (int64_t round = 0; round < 6; round++) {
        size_t held = jace_task_checkpoint_holders (task, 2, true, round,
                                                    holders);
        local &= held == 2 && !s_holds (holders, held, 5)
              && !s_holds (holders, held, 0);
    }
    ok (local, "one cluster: off-site copies change nothing");

    jace_node_t moved = *jace_task_node (task, 5);
    moved.epoch++;
    snprintf (moved.cluster, sizeof moved.cluster, "far");
    jace_task_remap (task, &moved);
    bool offsite = true, rotating = true;
    for (int64_t round = 0; round < 6; round++) {
        size_t held = jace_task_checkpoint_holders (task, 2, true, round,
                                                    holders);
        offsite &= held == 2 && holders [1] == 5 && holders [0] != 5;
        int64_t first = holders [0];
        held = jace_task_checkpoint_holders (task, 2, false, round, holders);
        rotating &= held == 2 && !s_holds (holders, held, 5)
                 && holders [0] == first;
    }
    ok (offsite && rotating, "every round's last copy goes to task 5 in "
        "another cluster, the first still rotating over the neighbours");
    size_t held = jace_task_checkpoint_holders (task, 1, true, 0, holders);
    ok (held == 1 && holders [0] != 5, "a single copy stays with a "
        "neighbour");
    ok (jace_task_is_holder (task, 2, true, 5)
        && !jace_task_is_holder (task, 2, false, 5)
        && jace_task_is_holder (task, 2, true, 1)
        && !jace_task_is_holder (task, 2, true, 0)
        && !jace_task_is_holder (task, 2, true, RANK),
        "task 5 holds copies only off-site; task 0 never; we never");
    size_t count = jace_task_fetch_targets (task, 2, true, targets);
    ok (count == TASKS - 1 && !s_contains (targets, count, RANK),
        "a replacement asks every other task: its off-site holder may "
        "be any");

    moved = *jace_task_node (task, 4);
    moved.epoch++;
    snprintf (moved.cluster, sizeof moved.cluster, "far");
    jace_task_remap (task, &moved);
    bool neighbour = true;
    for (int64_t round = 0; round < 6; round++) {
        held = jace_task_checkpoint_holders (task, 2, true, round, holders);
        neighbour &= held == 2 && s_holds (holders, held, 4)
                  && !s_holds (holders, held, 5);
    }
    ok (neighbour, "a neighbour in another cluster is the off-site holder "
        "before a nearer task that is none");
}

//  A restored task may number its exchanges back to where its
//  application's state began, never forward, never below zero.
static void
s_test_replay (void)
{
    jace_task_t *task = s_task ();
    ok (jace_task_replay_exchanges (task, -1) == -1
        && jace_task_replay_exchanges (task, 1) == -1,
        "no replay below 0 or past the exchanges completed");
    //  A checkpoint copy saved after 7 exchanges (and no neighbour values)
    jace_msg_t *copy = jace_msg_new (JACE_MSG_CKPT);
    double state = 1;
    int64_t meta [5] = { -1, 7, 0, 0, 0 };
    jace_msg_add_payload (copy, JACE_PAYLOAD_F64, &state, 1);
    jace_msg_add_payload (copy, JACE_PAYLOAD_I64, meta, 5);
    jace_msg_add_payload (copy, JACE_PAYLOAD_F64, &state, 0);
    jace_task_restore_newest (task, copy);
    jace_msg_destroy (&copy);
    is_int (jace_task_exchanges (task), 7, "the copy's exchange count is "
            "restored");
    ok (jace_task_replay_exchanges (task, 4) == 0
        && jace_task_exchanges (task) == 4,
        "a restored task numbers its next exchange as the 5th again");
    ok (jace_task_replay_exchanges (task, 5) == -1,
        "and cannot skip forward again");
    jace_task_destroy (&task);
}

//  A copy made with the pieces of the task's last exchanges: restored
//  into the exchange log only when its rounds end at the copy's exchange
//  count and its sizes add up; a restored task saves them again
//  unchanged, and once it has made three copies, reaches back to the
//  round of the third last only.
static jace_msg_t *
s_copy_with_pieces (int64_t exchanges, const int64_t *shape, size_t length,
                    const char *bytes, size_t size)
{
    jace_msg_t *copy = jace_msg_new (JACE_MSG_CKPT);
    double state = 1;
    int64_t meta [5] = { -1, exchanges, 0, 0, 0 };
    jace_msg_add_payload (copy, JACE_PAYLOAD_F64, &state, 1);
    jace_msg_add_payload (copy, JACE_PAYLOAD_I64, meta, 5);
    jace_msg_add_payload (copy, JACE_PAYLOAD_F64, &state, 0);
    jace_msg_add_payload (copy, JACE_PAYLOAD_I64, shape, length);
    jace_msg_add_payload (copy, JACE_PAYLOAD_BYTES, bytes, size);
    return copy;
}

//  The rounds a copy made now carries: first round and count, 0 if none.
static int64_t
s_saved_rounds (jace_task_t *task, int64_t *first, size_t *bytes)
{
    jace_msg_t *copy = jace_msg_new (JACE_MSG_CKPT);
    jace_task_save_pieces (task, copy);
    int64_t shape [2 + 8 * TASKS] = { 0 };
    if (jace_msg_payload_count (copy) == 2
    &&  jace_msg_payload_length (copy, 0) >= 2
    &&  jace_msg_payload_length (copy, 0) <= 2 + 8 * TASKS)
        jace_msg_payload_copy (copy, 0, shape);
    *bytes = jace_msg_payload_count (copy) == 2
           ? jace_msg_payload_length (copy, 1) : 0;
    jace_msg_destroy (&copy);
    *first = shape [1];
    return shape [0];
}

static void
s_test_pieces (void)
{
    //  Round 7: 3 bytes for task 0, none for 1, 2 for 2, 1 for 3.
    int64_t shape [2 + TASKS] = { 1, 7, 3, 0, 2, 1 };
    const char *bytes = "abcdef";
    jace_task_t *task = s_task ();
    jace_msg_t *copy = s_copy_with_pieces (6, shape, 2 + TASKS, bytes, 6);
    jace_task_restore_newest (task, copy);
    ok (jace_task_restore_pieces (task, copy) == -1,
        "pieces of round 7 in a copy made after 6 exchanges: refused");
    jace_msg_destroy (&copy);
    jace_task_destroy (&task);

    task = s_task ();
    copy = s_copy_with_pieces (7, shape, 2 + TASKS, bytes, 5);
    jace_task_restore_newest (task, copy);
    ok (jace_task_restore_pieces (task, copy) == -1,
        "sizes adding up to more than the bytes: refused");
    jace_msg_destroy (&copy);
    copy = s_copy_with_pieces (7, shape, 1 + TASKS, bytes, 6);
    ok (jace_task_restore_pieces (task, copy) == -1,
        "a size missing for a task: refused");
    jace_msg_destroy (&copy);
    int64_t lying [2 + 2 * TASKS] = { 1, 6, 3, 0, 2, 1, 0, 0,
                                      0, 0, 0, 0, 0, 0 };
    copy = s_copy_with_pieces (7, lying, 2 + 2 * TASKS, bytes, 6);
    ok (jace_task_restore_pieces (task, copy) == -1,
        "a count of rounds that is not the shape's: refused");
    jace_msg_destroy (&copy);
    copy = s_copy_with_pieces (7, shape, 2 + TASKS, bytes, 6);
    ok (jace_task_restore_pieces (task, copy) == 0,
        "the pieces of the last exchange are taken back into the log");
    jace_msg_destroy (&copy);

    jace_msg_t *again = jace_msg_new (JACE_MSG_CKPT);
    jace_task_save_pieces (task, again);
    int64_t saved [2 + TASKS] = { 0 };
    bool same = jace_msg_payload_count (again) == 2
             && jace_msg_payload_length (again, 0) == 2 + TASKS
             && jace_msg_payload_length (again, 1) == 6;
    if (same) {
        jace_msg_payload_copy (again, 0, saved);
        same = memcmp (saved, shape, sizeof saved) == 0
            && memcmp (jace_msg_payload_data (again, 1), bytes, 6) == 0;
    }
    ok (same, "a restored task saves the same pieces in its next copy");
    jace_msg_destroy (&again);
    jace_task_destroy (&task);

    //  Rounds 5, 6 and 7, two bytes each (to tasks 0 and 1).
    int64_t three [2 + 3 * TASKS] = { 3, 5, 1, 1, 0, 0, 0, 0,
                                      1, 1, 0, 0, 0, 0,
                                      1, 1, 0, 0, 0, 0 };
    task = s_task ();
    copy = s_copy_with_pieces (8, three, 2 + 3 * TASKS, bytes, 6);
    jace_task_restore_newest (task, copy);
    ok (jace_task_restore_pieces (task, copy) == -1,
        "rounds 5 to 7 in a copy made after 8 exchanges: refused");
    jace_msg_destroy (&copy);
    jace_task_destroy (&task);
    task = s_task ();
    copy = s_copy_with_pieces (7, three, 2 + 3 * TASKS, bytes, 6);
    jace_task_restore_newest (task, copy);
    ok (jace_task_restore_pieces (task, copy) == 0,
        "rounds 5 to 7 in a copy made after 7 exchanges: all logged again");
    jace_msg_destroy (&copy);
    int64_t first = 0;
    size_t size = 0;
    int64_t rounds = s_saved_rounds (task, &first, &size);
    ok (rounds == 3 && first == 5 && size == 6,
        "its next copies carry rounds 5 to 7 again");
    diag ("rounds %" PRId64 " from %" PRId64 ", %zu bytes", rounds, first,
          size);
    s_saved_rounds (task, &first, &size);
    s_saved_rounds (task, &first, &size);
    rounds = s_saved_rounds (task, &first, &size);
    ok (rounds == 1 && first == 7 && size == 2,
        "three copies on, all made after round 7, only round 7");
    jace_task_destroy (&task);

    //  Rounds 5, 6 and 7 of 600 KB each, beside a state smaller than
    //  1 MiB: the older rounds a copy carries stay within 1 MiB.
    size_t piece = 600 << 10;
    char *large = (char *) zmalloc (3 * piece);
    int64_t heavy [2 + 3 * TASKS] = { 3, 5, (int64_t) piece, 0, 0, 0, 0, 0,
                                      (int64_t) piece, 0, 0, 0, 0, 0,
                                      (int64_t) piece, 0, 0, 0, 0, 0 };
    task = s_task ();
    copy = s_copy_with_pieces (7, heavy, 2 + 3 * TASKS, large, 3 * piece);
    jace_task_restore_newest (task, copy);
    ok (jace_task_restore_pieces (task, copy) == 0,
        "three rounds of 600 KB are logged again");
    jace_msg_destroy (&copy);
    rounds = s_saved_rounds (task, &first, &size);
    ok (rounds == 2 && first == 6 && size == 2 * piece,
        "a copy with a small state carries one older round of them besides "
        "the last (1 MiB for the older rounds)");
    diag ("rounds %" PRId64 " from %" PRId64 ", %zu bytes", rounds, first,
          size);
    jace_task_destroy (&task);
    free (large);
}

//  A rebalance's ASSIGN with the iterate: every unknown, or our row and
//  the unknowns we read (block/restore_reads of them).
static jace_task_t *
s_preload_task (const char *reads, const int64_t *numbers,
                const double *values, size_t count, char *reason,
                size_t reason_size)
{
    jace_msg_t *assign = s_assign ();
    jace_msg_set_param (assign, "block/restore_iteration", "7");
    if (reads) {
        double row = 2.5;
        jace_msg_set_param (assign, "block/restore_reads", reads);
        jace_msg_add_payload (assign, JACE_PAYLOAD_F64, &row, 1);
        jace_msg_add_payload (assign, JACE_PAYLOAD_I64, numbers, count);
        jace_msg_add_payload (assign, JACE_PAYLOAD_F64, values, count);
    }
    else {
        double x [TASKS] = { 0, 1, 2, 3, 4, 5 };
        jace_msg_add_payload (assign, JACE_PAYLOAD_F64, x, TASKS);
    }
    return jace_task_new (&assign, NULL, reason, reason_size);
}

static void
s_test_preload (void)
{
    char reason [256] = "";
    int64_t numbers [2] = { 1, 3 };
    double values [2] = { 10, 30 };
    jace_task_t *task = s_preload_task ("2", numbers, values, 2, reason,
                                        sizeof reason);
    jace_preload_t *preload = task ? jace_task_preloaded (task) : NULL;
    size_t rows = 0;
    const double *row = preload ? jace_preload_rows (preload, &rows) : NULL;
    ok (preload && rows == 1 && row [0] == 2.5
        && jace_preload_iteration (preload) == 7
        && jace_preload_value (preload, RANK) == 2.5
        && jace_preload_value (preload, 1) == 10
        && jace_preload_value (preload, 3) == 30
        && jace_preload_value (preload, 0) == 0
        && jace_preload_value (preload, 5) == 0
        && jace_preload_value (preload, TASKS) == 0
        && jace_task_block_count (task) == 0,
        "a sparse iterate gives our row and what we read, the rest 0, "
        "and none of its payloads is a block");
    jace_preload_destroy (&preload);
    jace_task_destroy (&task);
    //  Unsorted, with a number out of the job: sorted, and that one dropped
    int64_t unsorted [3] = { 3, TASKS + 4, 1 };
    double unsorted_values [3] = { 30, 99, 10 };
    task = s_preload_task ("3", unsorted, unsorted_values, 3, reason,
                           sizeof reason);
    preload = task ? jace_task_preloaded (task) : NULL;
    ok (preload && jace_preload_value (preload, 1) == 10
        && jace_preload_value (preload, 3) == 30
        && jace_preload_value (preload, TASKS + 4) == 0,
        "reads in any order are found, one outside the job is dropped");
    jace_preload_destroy (&preload);
    jace_task_destroy (&task);
    task = s_preload_task (NULL, NULL, NULL, 0, reason, sizeof reason);
    preload = task ? jace_task_preloaded (task) : NULL;
    row = preload ? jace_preload_rows (preload, &rows) : NULL;
    ok (preload && rows == 1 && row [0] == RANK
        && jace_preload_value (preload, 4) == 4
        && jace_task_block_count (task) == 0,
        "every unknown still restores as before");
    jace_preload_destroy (&preload);
    jace_task_destroy (&task);
    //  Seeded as a source would send them: a range asked stands for its
    //  first unknown on (jacobi2d's ghost rows are taken only if they
    //  say which row they are), a list for 0
    task = s_preload_task (NULL, NULL, NULL, 0, reason, sizeof reason);
    preload = task ? jace_task_preloaded (task) : NULL;
    int64_t range [2] = { 4, 5 }, list [2] = { 0, 5 };
    size_t count_range = 0, count_list = 0;
    int64_t first_range = -1, first_list = -1;
    const double *seeded_range = NULL, *seeded_list = NULL;
    if (preload) {
        jace_task_request (task, 3, range, 2);
        jace_task_request (task, 1, list, 2);
        jace_task_seed_newest (task, preload);
        seeded_range = jace_task_newest (task, 3, &count_range, &first_range,
                                         NULL);
        seeded_list = jace_task_newest (task, 1, &count_list, &first_list,
                                        NULL);
    }
    ok (seeded_range && count_range == 2 && first_range == 4
        && seeded_range [0] == 4 && seeded_range [1] == 5
        && seeded_list && count_list == 2 && first_list == 0
        && seeded_list [0] == 0 && seeded_list [1] == 5,
        "values seeded from the iterate say where a range asked starts, "
        "and 0 for a list");
    jace_preload_destroy (&preload);
    jace_task_destroy (&task);
    task = s_preload_task ("3", numbers, values, 2, reason, sizeof reason);
    ok (!task && strstr (reason, "block/restore_iteration"),
        "an ASSIGN whose restore_reads does not match its payloads is "
        "refused, saying why");
    jace_task_destroy (&task);
}

//  The runtime's own keys are checked where the task is made, as the
//  spawner checks them at submission: an ASSIGN of another spawner (or a
//  forged one) gets no lenient reading of them.
static void
s_test_runtime_keys (void)
{
    static const char *const cases [][3] = {
        { "job/mode", "fast", "job/mode = 'fast' is unknown (known: async, "
          "sync)" },
        { "exchange/algorithm", "ring", "exchange/algorithm = 'ring' is "
          "unknown (known: lg, direct, flat)" },
        { "job/converge_iterations", "0", "job/converge_iterations = '0' is "
          "not an integer" },
    };
    for (size_t index = 0; index < sizeof cases / sizeof cases [0];
         index++) {
        char reason [256] = "";
        jace_msg_t *assign = s_assign ();
        jace_msg_set_param (assign, cases [index][0], cases [index][1]);
        jace_task_t *task = jace_task_new (&assign, NULL, reason,
                                           sizeof reason);
        char name [160];
        snprintf (name, sizeof name, "an ASSIGN with %s = %s is refused, "
                  "saying why", cases [index][0], cases [index][1]);
        if (!ok (!task && strstr (reason, cases [index][2]), name))
            diag ("reason: %s", reason);
        jace_task_destroy (&task);
    }
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_init ();
    jace_key_random (&s_job_key);
    tap_plan (63 + 3);
    s_test_runtime_keys ();
    zsock_t *pulls [TASKS] = { NULL };
    for (int rank = 0; rank < TASKS; rank++)
        if (rank != RANK) {
            char endpoint [64];
            snprintf (endpoint, sizeof endpoint, "inproc://graph-%d", rank);
            pulls [rank] = zsock_new (ZMQ_PULL);
            zsock_set_rcvhwm (pulls [rank], 1);
            zsock_bind (pulls [rank], "%s", endpoint);
        }

    //  An older spawner's START names no sinks: the old exchange.
    jace_task_t *task = s_task ();
    int64_t sources [TASKS];
    size_t count = jace_task_sources (task, sources);
    ok (count == 2 && sources [0] == 1 && sources [1] == 3,
        "sources are the tasks asked during setup, sorted");
    ok (jace_task_sources (task, NULL) == 2, "sources can be counted only");
    is_int (jace_task_send_requests (task), 0, "request lists sent");
    is_int (s_reached (pulls), 0x3b, "without sinks every other task "
            "hears our list");
    ok (!jace_task_requests_complete (task),
        "without sinks every task's list is awaited");
    jace_task_destroy (&task);

    task = s_task ();
    char reason [256] = "";
    int64_t unsorted [] = { 4, 3 }, self_rank [] = { RANK },
            outside [] = { 6 }, sinks [] = { 3, 4 };
    ok (jace_task_set_sinks (task, unsorted, 2, reason, sizeof reason) == -1
        && jace_task_set_sinks (task, self_rank, 1, reason, sizeof reason)
           == -1
        && jace_task_set_sinks (task, outside, 1, reason, sizeof reason)
           == -1, "unsorted, own or unknown ranks are no sink list");
    diag ("last reason: %s", reason);
    ok (jace_task_set_sinks (task, sinks, 2, reason, sizeof reason) == 0,
        "sinks 3 and 4 set");
    is_int (jace_task_send_requests (task), 0, "request lists sent");
    is_int (s_reached (pulls), 0x0a, "with sinks only sources 1 and 3 hear "
            "our list");
    ok (!jace_task_requests_complete (task), "sinks' lists are awaited");
    s_deliver_request (task, 3);
    ok (!jace_task_requests_complete (task), "one sink's list is not all");
    s_deliver_request (task, 4);
    ok (jace_task_requests_complete (task), "both sinks' lists complete "
        "the exchange; the others count as asking nothing");

    jace_node_t moved = *jace_task_node (task, 4);
    moved.epoch = 2;
    jace_task_remap (task, &moved);
    moved = *jace_task_node (task, 1);
    moved.epoch = 2;
    jace_task_remap (task, &moved);
    is_int (s_reached (pulls), 0x02, "REMAP resends our list to a moved "
            "source only");
    s_test_fetch_targets (task);
    s_test_reach (task);
    is_int (s_reached (pulls), 0x02, "it reached task 1");
    s_test_offsite (task);
    s_reached (pulls);          //  Whatever the moves sent
    is_int (s_unsealed, 0, "every request list and vector the task sent "
            "was sealed with the job key");
    jace_task_destroy (&task);
    s_test_fresh_links (pulls);
    s_test_unsent (pulls);
    s_test_replay ();
    s_test_pieces ();
    s_test_preload ();
    for (int rank = 0; rank < TASKS; rank++)
        zsock_destroy (&pulls [rank]);
    return tap_done ();
}
