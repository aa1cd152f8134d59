/*  =========================================================================
    test_daemon_relay - passing a cluster's chunks on, and nothing else

    A relay in cluster B of a four-task job (tasks 0 and 2 in B, 1 in A,
    3 in B) over inproc: a chunk for task 2 reaches task 2's daemon
    unchanged, still sealed by the spawner, and not before its due time;
    chunks for its own task, a task of another cluster, another epoch or
    another job are refused with the reason.  Acknowledgements come back
    only when they are task 2's, of its epoch and daemon, sealed with the
    job key; anything else on the link is dropped.  Stopping closes the
    links.
    =========================================================================
*/
#include "tap.h"
#include "daemon_relay.h"

static unsigned char s_key [JACE_KEY_BYTES];
static unsigned char s_other_key [JACE_KEY_BYTES];

static jace_msg_t *
s_assign (void)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (assign, "job-r");
    jace_msg_set_task (assign, 0);
    const char *clusters [] = { "B", "A", "B", "B" };
    for (int task = 0; task < 4; task++) {
        jace_node_t node;
        memset (&node, 0, sizeof node);
        snprintf (node.id, sizeof node.id, "%s-%d", clusters [task], task);
        snprintf (node.endpoint, sizeof node.endpoint, "inproc://relay-%d",
                  task);
        snprintf (node.cluster, sizeof node.cluster, "%s", clusters [task]);
        node.task = task;
        node.epoch = task == 2 ? 3 : 1;
        jace_msg_add_node (assign, &node);
    }
    return assign;
}

static jace_msg_t *
s_chunk (const char *job, int64_t task, int64_t epoch)
{
    jace_msg_t *chunk = jace_msg_new (JACE_MSG_CHUNK);
    jace_msg_set_sender (chunk, job);
    jace_msg_set_job (chunk, job);
    jace_msg_set_task (chunk, task);
    jace_msg_set_epoch (chunk, epoch);
    double values [4] = { 1, 2, 3, 4 };
    jace_msg_add_payload (chunk, JACE_PAYLOAD_F64, values, 4);
    jace_msg_seal (chunk, s_key);
    return chunk;
}

static jace_msg_t *
s_ack (const char *sender, int64_t task, int64_t epoch,
       const unsigned char *key)
{
    jace_msg_t *ack = jace_msg_new (JACE_MSG_CHUNK_ACK);
    jace_msg_set_sender (ack, sender);
    jace_msg_set_job (ack, "job-r");
    jace_msg_set_task (ack, task);
    jace_msg_set_epoch (ack, epoch);
    jace_msg_set_received (ack, 32);
    jace_msg_seal (ack, key);
    return ack;
}

//  Send an acknowledgement from the target's ROUTER back to the relay's
//  link (whose routing id `from` is), and read it through the relay.
static jace_msg_t *
s_round_trip (daemon_relay_t *relay, zpoller_t *poller, zsock_t *target,
              zframe_t *from, jace_msg_t *ack)
{
    jace_msg_set_routing_id (ack, from);
    jace_msg_send (&ack, target);
    void *which = zpoller_wait (poller, 1000);
    char reason [256];
    if (!which || !daemon_relay_owns (relay, which))
        return NULL;
    return daemon_relay_recv (relay, which, reason, sizeof reason);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (12);
    for (int i = 0; i < JACE_KEY_BYTES; i++) {
        s_key [i] = (unsigned char) (i * 5 + 3);
        s_other_key [i] = (unsigned char) (i * 5 + 4);
    }
    zsock_t *target = zsock_new_router ("@inproc://relay-2");
    zpoller_t *poller = zpoller_new (NULL);
    char reason [256];
    jace_security_t *security = jace_security_new (NULL, NULL, reason,
                                                   sizeof reason);
    daemon_relay_t *relay = daemon_relay_new (security, poller);
    jace_msg_t *assign = s_assign ();
    daemon_relay_start (relay, assign, "B", s_key);
    jace_msg_destroy (&assign);

    //  One due in a minute (held), one due now (passed on at once)
    jace_msg_t *later = s_chunk ("job-r", 2, 3);
    jace_msg_set_offset (later, 60);
    jace_msg_seal (later, s_key);
    jace_msg_t *chunk = s_chunk ("job-r", 2, 3);
    ok (daemon_relay_chunk (relay, &later, zclock_usecs () + 60 * 1000000LL,
                            reason, sizeof reason) == 0 && later == NULL
        && daemon_relay_chunk (relay, &chunk, 0, reason, sizeof reason) == 0
        && chunk == NULL, "chunks for task 2 of our cluster are taken");
    ok (daemon_relay_flush (relay) > 50 * 1000
        && daemon_relay_chunks (relay) == 1,
        "the one due now is passed on, the other held until it is due");
    jace_msg_t *got = jace_msg_recv (target, NULL, 0, NULL, 0);
    ok (got && jace_msg_offset (got) == 0
        && !(zsock_events (target) & ZMQ_POLLIN),
        "task 2's daemon gets only the one due");
    ok (got && jace_msg_task (got) == 2 && jace_msg_epoch (got) == 3
        && jace_msg_sealed (got, s_key)
        && jace_msg_payload_length (got, 0) == 4,
        "it arrives whole, still sealed by the spawner");
    zframe_t *from = zframe_dup (jace_msg_routing_id (got));
    jace_msg_destroy (&got);

    const struct { const char *job; int64_t task, epoch; const char *what; }
    refused [] = {
        { "job-r", 0, 1, "our own task" },
        { "job-r", 1, 1, "a task in another cluster" },
        { "job-r", 2, 2, "an older epoch" },
        { "job-x", 2, 3, "another job" },
        { "job-r", 9, 1, "a task the job does not have" }
    };
    bool all_refused = true;
    for (size_t i = 0; i < sizeof refused / sizeof refused [0]; i++) {
        chunk = s_chunk (refused [i].job, refused [i].task,
                         refused [i].epoch);
        *reason = 0;
        bool no = daemon_relay_chunk (relay, &chunk, 0, reason,
                                      sizeof reason) == -1
                && chunk != NULL && *reason;
        if (!no)
            diag ("not refused: %s", refused [i].what);
        else
            diag ("%s: %s", refused [i].what, reason);
        all_refused &= no;
        jace_msg_destroy (&chunk);
    }
    daemon_relay_flush (relay);
    ok (all_refused && daemon_relay_chunks (relay) == 1
        && !(zsock_events (target) & ZMQ_POLLIN),
        "chunks for our task, another cluster, epoch or job are refused");

    got = s_round_trip (relay, poller, target, from,
                        s_ack ("B-2", 2, 3, s_key));
    ok (got && jace_msg_received (got) == 32 && daemon_relay_acks (relay) == 1,
        "task 2's acknowledgement comes back for the spawner");
    jace_msg_destroy (&got);
    ok (s_round_trip (relay, poller, target, from,
                      s_ack ("B-2", 2, 3, s_other_key)) == NULL,
        "one sealed with another key is dropped");
    ok (s_round_trip (relay, poller, target, from,
                      s_ack ("B-2", 2, 2, s_key)) == NULL,
        "one of another epoch is dropped");
    ok (s_round_trip (relay, poller, target, from,
                      s_ack ("B-3", 3, 1, s_key)) == NULL,
        "one naming another task is dropped");
    ok (s_round_trip (relay, poller, target, from,
                      s_ack ("A-1", 2, 3, s_key)) == NULL,
        "one from another daemon is dropped");
    ok (daemon_relay_acks (relay) == 1, "only the one counted");

    daemon_relay_stop (relay);
    chunk = s_chunk ("job-r", 2, 3);
    ok (daemon_relay_chunk (relay, &chunk, 0, reason, sizeof reason) == -1,
        "stopped, the relay takes nothing more");
    jace_msg_destroy (&chunk);

    zframe_destroy (&from);
    daemon_relay_destroy (&relay);
    daemon_relay_destroy (&relay);
    jace_security_destroy (&security);
    zpoller_destroy (&poller);
    zsock_destroy (&target);
    return tap_done ();
}
