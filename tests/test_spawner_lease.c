/*  =========================================================================
    test_spawner_lease - the spawner's lease against a scripted super-node

    A ROUTER on loopback plays the super-node: it reads the lease's
    RESERVEs and answers them with GRANTs of daemons by id.  Checked: a
    daemon wanted by id once the last RESERVE was answered is asked for
    at the next tick (a replacement waits on it; it waited 200 ms), while
    one wanted with a RESERVE unanswered waits GRANT_RETRY_MSEC and is
    then asked with the rest.
    =========================================================================
*/
#include "spawner_lease.h"
#include "tap.h"

static jace_node_t
s_daemon (const char *id)
{
    jace_node_t node;
    memset (&node, 0, sizeof node);
    snprintf (node.id, sizeof node.id, "%s", id);
    snprintf (node.endpoint, sizeof node.endpoint, "tcp://127.0.0.1:9");
    snprintf (node.cluster, sizeof node.cluster, "c");
    node.power = 1;
    node.cores = 1;
    node.state = JACE_NODE_FREE;
    node.task = -1;
    return node;
}

//  The next message the super-node gets within `msec`, of type `type`
//  (others, heartbeats, are skipped), or NULL.  Its routing id is kept in
//  *from for the answer.
static jace_msg_t *
s_expect (zsock_t *supernode, jace_msg_type_t type, int msec,
          zframe_t **from)
{
    int64_t until = zclock_mono () + msec;
    zpoller_t *poller = zpoller_new (supernode, NULL);
    jace_msg_t *found = NULL;
    while (!found) {
        int64_t left = until - zclock_mono ();
        if (left < 0 || !zpoller_wait (poller, (int) left))
            break;
        jace_msg_t *msg = jace_msg_recv (supernode, NULL, 0, NULL, 0);
        if (msg && jace_msg_type (msg) == type) {
            zframe_destroy (from);
            *from = zframe_dup (jace_msg_routing_id (msg));
            found = msg;
        }
        else
            jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return found;
}

//  Grant the daemons a RESERVE asked for by id.
static void
s_grant (zsock_t *supernode, zframe_t *to, jace_msg_t *reserve)
{
    jace_msg_t *grant = jace_msg_new (JACE_MSG_GRANT);
    jace_msg_set_routing_id (grant, to);
    jace_msg_set_sender (grant, "sn");
    jace_msg_set_job (grant, jace_msg_job (reserve));
    jace_msg_set_count (grant, jace_msg_count (reserve));
    //  Whole records, from the registry: a RESERVE names only ids
    for (size_t i = 0; i < jace_msg_node_count (reserve); i++) {
        jace_node_t node = s_daemon (jace_msg_node (reserve, i)->id);
        jace_msg_add_node (grant, &node);
    }
    jace_msg_send (&grant, supernode);
}

//  Ticks the lease for `msec` (as the spawner's loop would, at the times
//  tick asks for), taking in what the super-node sends.
static void
s_run_lease (spawner_lease_t *lease, int msec)
{
    int64_t until = zclock_mono () + msec;
    zpoller_t *poller = zpoller_new (spawner_lease_socket (lease), NULL);
    for (int64_t now = zclock_mono (); now < until; now = zclock_mono ()) {
        int64_t wait = spawner_lease_tick (lease, now);
        if (wait > until - now)
            wait = until - now;
        if (zpoller_wait (poller, (int) wait))
            spawner_lease_recv (lease);
    }
    zpoller_destroy (&poller);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_init ();
    tap_plan (6);
    zsock_t *supernode = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (supernode, JACE_MSG_HEADER_MAX);
    assert (jace_msg_bind (supernode, "tcp://127.0.0.1:*") == 0);
    char *endpoint = zsock_last_endpoint (supernode);   //  Ours to free
    const char *endpoints [] = { endpoint };
    jace_security_t *security = jace_security_new (NULL, NULL, NULL, 0);
    char reason [256] = "";
    spawner_lease_t *lease = spawner_lease_new ("job-lease", endpoints, 1,
                                                security, "tcp://127.0.0.1:8",
                                                reason, sizeof reason);
    assert (lease);
    zframe_t *from = NULL;

    //  The plan's daemon: asked for and granted.
    jace_node_t first = s_daemon ("d-1");
    spawner_lease_want_ids (lease, &first, 1);
    s_run_lease (lease, 50);
    jace_msg_t *reserve = s_expect (supernode, JACE_MSG_RESERVE, 2000,
                                    &from);
    ok (reserve && jace_msg_node_count (reserve) == 1
        && streq (jace_msg_node (reserve, 0)->id, "d-1"),
        "the plan's daemon is asked for by id");
    if (reserve)
        s_grant (supernode, from, reserve);
    jace_msg_destroy (&reserve);
    //  Taken in as soon as it comes (a loaded machine may take a while)
    for (int i = 0; i < 40 && spawner_lease_find_spare (lease, "d-1") < 0;
         i++)
        s_run_lease (lease, 50);
    ok (spawner_lease_find_spare (lease, "d-1") >= 0, "and held once granted");

    //  A replacement's daemon, the last RESERVE answered: asked at once.
    jace_node_t second = s_daemon ("d-2");
    int64_t wanted_at = zclock_mono ();
    spawner_lease_want_ids (lease, &second, 1);
    //  One tick, none after: only that one can have sent it.
    ok (spawner_lease_tick (lease, zclock_mono ()) >= 0, "a tick");
    reserve = s_expect (supernode, JACE_MSG_RESERVE, 2000, &from);
    int64_t asked_after = zclock_mono () - wanted_at;
    diag ("asked for %" PRId64 " ms after it was wanted", asked_after);
    ok (reserve && streq (jace_msg_node (reserve, 0)->id, "d-2"),
        "a daemon wanted after the last RESERVE was answered is asked for "
        "at the next tick");
    jace_msg_destroy (&reserve);

    //  Another, while that RESERVE is unanswered: asked with it later.
    jace_node_t third = s_daemon ("d-3");
    wanted_at = zclock_mono ();
    spawner_lease_want_ids (lease, &third, 1);
    spawner_lease_tick (lease, zclock_mono ());
    reserve = s_expect (supernode, JACE_MSG_RESERVE, 300, &from);
    ok (reserve == NULL, "one wanted while a RESERVE is unanswered is not "
        "asked for at once");
    jace_msg_destroy (&reserve);
    for (int i = 0; i < 60 && !reserve; i++) {
        s_run_lease (lease, 50);
        reserve = s_expect (supernode, JACE_MSG_RESERVE, 10, &from);
    }
    diag ("asked for within %" PRId64 " ms", zclock_mono () - wanted_at);
    ok (reserve && jace_msg_node_count (reserve) == 2,
        "it is asked for with the unanswered one after the retry delay");
    jace_msg_destroy (&reserve);

    zframe_destroy (&from);
    spawner_lease_destroy (&lease);
    jace_security_destroy (&security);
    zsock_destroy (&supernode);
    zstr_free (&endpoint);
    return tap_done ();
}
