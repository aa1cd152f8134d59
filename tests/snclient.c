/*  =========================================================================
    snclient - a scripted super-node client for the overlay test

    Test helper.  One request to a super-node per run, answers on stdout:

        snclient ENDPOINT reserve JOB COUNT LEASE_MSEC [OWNER]
            RESERVE; prints the granted daemon ids, one a line
        snclient ENDPOINT release JOB ID...
            RELEASE of those daemons
        snclient ENDPOINT status
            STATUS; prints "node ID SUPERNODE STATE" and "param KEY VALUE"
        snclient ENDPOINT peer CLAIMED_ENDPOINT [TIMES]
            PEER_STATE claiming to be a super-node at CLAIMED_ENDPOINT,
            TIMES times (default 3) 100 ms apart

    Exits 0 when the request went out (and, for reserve and status, was
    answered within 5 s), else 1.
    =========================================================================
*/
#include "jace_msg.h"

#include <errno.h>

//  Longest wait for an answer.
#define ANSWER_MSEC 5000

//  The next message of `type` on sock within ANSWER_MSEC, or NULL.
static jace_msg_t *
s_await (zsock_t *sock, jace_msg_type_t type)
{
    zpoller_t *poller = zpoller_new (sock, NULL);
    int64_t deadline = zclock_mono () + ANSWER_MSEC;
    jace_msg_t *answer = NULL;
    while (!answer && zclock_mono () < deadline) {
        if (zpoller_wait (poller, 100) != sock)
            continue;
        answer = jace_msg_recv (sock, NULL, 0, NULL, 0);
        if (answer && jace_msg_type (answer) != type)
            jace_msg_destroy (&answer);
    }
    zpoller_destroy (&poller);
    return answer;
}

static int
s_reserve (zsock_t *sock, char *argv [], int argc)
{
    if (argc < 3)
        return 2;
    errno = 0;
    long long lease = strtoll (argv [2], NULL, 10);
    if (errno)
        return 2;
    jace_msg_t *reserve = jace_msg_new (JACE_MSG_RESERVE);
    jace_msg_set_sender (reserve, "snclient");
    jace_msg_set_job (reserve, argv [0]);
    jace_msg_set_count (reserve, atoll (argv [1]));
    jace_msg_set_interval (reserve, (int64_t) lease);
    jace_msg_set_endpoint (reserve, argc > 3 ? argv [3] : "");
    jace_msg_send (&reserve, sock);
    jace_msg_t *grant = s_await (sock, JACE_MSG_GRANT);
    if (!grant)
        return 1;
    for (size_t i = 0; i < jace_msg_node_count (grant); i++)
        printf ("%s\n", jace_msg_node (grant, i)->id);
    jace_msg_destroy (&grant);
    return 0;
}

static int
s_release (zsock_t *sock, char *argv [], int argc)
{
    if (argc < 1)
        return 2;
    jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
    jace_msg_set_sender (release, "snclient");
    jace_msg_set_job (release, argv [0]);
    for (int i = 1; i < argc; i++) {
        jace_node_t node = { .task = -1 };
        snprintf (node.id, sizeof node.id, "%s", argv [i]);
        jace_msg_add_node (release, &node);
    }
    return jace_msg_send (&release, sock) ? 1 : 0;
}

static int
s_status (zsock_t *sock)
{
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "snclient");
    jace_msg_send (&status, sock);
    jace_msg_t *reply = s_await (sock, JACE_MSG_STATUS_REPLY);
    if (!reply)
        return 1;
    for (size_t i = 0; i < jace_msg_node_count (reply); i++) {
        const jace_node_t *node = jace_msg_node (reply, i);
        printf ("node %s %s %" PRId64 "\n", node->id, node->supernode,
                node->state);
    }
    zhash_t *params = jace_msg_params (reply);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params))
        printf ("param %s %s\n", zhash_cursor (params), value);
    jace_msg_destroy (&reply);
    return 0;
}

static int
s_peer (zsock_t *sock, char *argv [], int argc)
{
    if (argc < 1)
        return 2;
    int times = argc > 1 ? atoi (argv [1]) : 3;
    for (int i = 0; i < times; i++) {
        jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
        jace_msg_set_sender (state, "snclient");
        jace_msg_set_endpoint (state, argv [0]);
        if (jace_msg_send (&state, sock))
            return 1;
        zclock_sleep (100);
    }
    return 0;
}

int
main (int argc, char *argv [])
{
    zsys_set_logstream (stderr);
    if (argc < 3) {
        fprintf (stderr, "usage: snclient ENDPOINT reserve|release|status|"
                 "peer ARGS...\n");
        return 2;
    }
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (sock, JACE_MSG_HEADER_MAX);
    //  What we send must leave before we close.
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", argv [1])) {
        zsock_destroy (&sock);
        return 2;
    }
    int rc = 2;
    if (streq (argv [2], "reserve"))
        rc = s_reserve (sock, argv + 3, argc - 3);
    else
    if (streq (argv [2], "release"))
        rc = s_release (sock, argv + 3, argc - 3);
    else
    if (streq (argv [2], "status"))
        rc = s_status (sock);
    else
    if (streq (argv [2], "peer"))
        rc = s_peer (sock, argv + 3, argc - 3);
    zsock_destroy (&sock);
    return rc;
}
