/*  =========================================================================
    snclient - a scripted super-node client for the overlay and security
    tests

    Test helper.  One request to a super-node per run, answers on stdout:

        snclient [OPTIONS] ENDPOINT reserve JOB COUNT LEASE_MSEC [OWNER]
            RESERVE; prints the granted daemon ids, one a line (and with
            --tokens "token ID TOKEN" lines after them)
        snclient [OPTIONS] ENDPOINT release JOB ID...
            RELEASE of those daemons
        snclient [OPTIONS] ENDPOINT heartbeat JOB
            HEARTBEAT of lease JOB
        snclient [OPTIONS] ENDPOINT over JOB [PROOF]
            HEARTBEAT of lease JOB saying the job is over, with PROOF as
            its token
        snclient [OPTIONS] ENDPOINT status
            STATUS; prints "node ID SUPERNODE STATE" and "param KEY VALUE"
        snclient [OPTIONS] ENDPOINT peer CLAIMED_ENDPOINT [TIMES]
            PEER_STATE claiming to be a super-node at CLAIMED_ENDPOINT,
            TIMES times (default 3) 100 ms apart, with --nodes N made-up
            daemon records
        snclient [OPTIONS] ENDPOINT hello ID LEASE_KEY [TIMES]
            HELLO as daemon ID with that lease key, TIMES times (default 1)
            100 ms apart; prints "welcome" for each WELCOME
        snclient [OPTIONS] ENDPOINT flood PREFIX COUNT
            COUNT HELLOs of daemons PREFIX-1... with random lease keys;
            prints how many were welcomed
        snclient [OPTIONS] ENDPOINT bye ID LEASE_KEY
            BYE as daemon ID with that lease key
        snclient [OPTIONS] ENDPOINT crash
            CRASH

    and, without a super-node:

        snclient key                    prints a random lease key (Z85)
        snclient token KEY JOB SPAWNER_KEY DAEMON
                                        prints the lease token
        snclient cert DIR NAME ROLE     makes DIR/NAME.cert(_secret) with
                                        metadata role = ROLE
        snclient --keys DIR --cert NAME whoami
                                        prints that identity's public key

    Options: --keys DIR --cert NAME act as that identity (CURVE);
    --pubkey KEY sets HELLO's record key (default: ours) and RESERVE's
    pubkey; --forwarded marks RESERVE, RELEASE, HEARTBEAT as passed on by
    a super-node; --power P and --cluster C the power and cluster of
    HELLO's and PEER_STATE's records (C is also RESERVE's preference);
    --nodes N records per PEER_STATE; --wait MS longest wait for an
    answer (default 5000); --tokens prints a grant's lease tokens; --ids
    A,B,... makes RESERVE ask for those daemons by id (COUNT is sent as
    given, so a mismatch can be tried); --app NAME makes RESERVE ask only
    for daemons that have that application.

    Exits 0 when the request went out (and, for reserve, status and
    hello, was answered in time), else 1; 2 on a bad command line.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_auth.h"
#include "jace_security.h"

#include <errno.h>
#include <getopt.h>

//  What the options say.
typedef struct {
    const char *keys;           //  --keys DIR, or NULL
    const char *cert;           //  --cert NAME
    const char *pubkey;         //  --pubkey KEY, or NULL
    const char *cluster;        //  --cluster NAME
    bool forwarded;             //  --forwarded
    double power;               //  --power P
    long nodes;                 //  --nodes N
    int wait_msec;              //  --wait MS
    bool tokens;                //  --tokens
    const char *ids;            //  --ids A,B,...: RESERVE by id
    const char *app;            //  --app NAME: RESERVE's application
    jace_security_t *security;  //  Our identity, or plain links
} options_t;

//  The next message of `type` on sock within the wait, or NULL.
static jace_msg_t *
s_await (options_t *options, zsock_t *sock, jace_msg_type_t type)
{
    zpoller_t *poller = zpoller_new (sock, NULL);
    int64_t deadline = zclock_mono () + options->wait_msec;
    jace_msg_t *answer = NULL;
    while (!answer && zclock_mono () < deadline) {
        if (zpoller_wait (poller, 20) != sock)
            continue;
        answer = jace_msg_recv (sock, NULL, 0, NULL, 0);
        if (answer && jace_msg_type (answer) != type)
            jace_msg_destroy (&answer);
    }
    zpoller_destroy (&poller);
    return answer;
}

//  A made-up daemon record, within the super-node's bounds.
static jace_node_t
s_record (options_t *options, const char *id)
{
    jace_node_t node = { .cores = 1, .task = -1, .power = options->power };
    snprintf (node.id, sizeof node.id, "%s", id);
    snprintf (node.endpoint, sizeof node.endpoint, "tcp://127.0.0.1:9");
    snprintf (node.data, sizeof node.data, "tcp://127.0.0.1:9");
    snprintf (node.cluster, sizeof node.cluster, "%s", options->cluster);
    snprintf (node.pubkey, sizeof node.pubkey, "%s", options->pubkey
              ? options->pubkey
              : jace_security_public_key (options->security));
    return node;
}

//  --------------------------------------------------------------------------
//  Spawner's requests

static int
s_reserve (options_t *options, zsock_t *sock, char *argv [], int argc)
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
    jace_msg_set_forwarded (reserve, options->forwarded);
    jace_msg_set_pubkey (reserve, options->pubkey ? options->pubkey : "");
    jace_msg_set_cluster (reserve, options->cluster);
    jace_msg_set_app (reserve, options->app ? options->app : "");
    char *ids = options->ids ? strdup (options->ids) : NULL;
    for (char *id = ids ? strtok (ids, ",") : NULL; id;
         id = strtok (NULL, ",")) {
        jace_node_t node = { .task = -1 };
        snprintf (node.id, sizeof node.id, "%s", id);
        jace_msg_add_node (reserve, &node);
    }
    free (ids);
    jace_msg_send (&reserve, sock);
    jace_msg_t *grant = s_await (options, sock, JACE_MSG_GRANT);
    if (!grant)
        return 1;
    for (size_t i = 0; i < jace_msg_node_count (grant); i++)
        printf ("%s\n", jace_msg_node (grant, i)->id);
    for (size_t i = 0; options->tokens && i < jace_msg_node_count (grant);
         i++) {
        const char *id = jace_msg_node (grant, i)->id;
        char key [JACE_ID_MAX + 8];
        snprintf (key, sizeof key, "token/%s", id);
        const char *token = jace_msg_param (grant, key);
        printf ("token %s %s\n", id, token ? token : "-");
    }
    jace_msg_destroy (&grant);
    return 0;
}

static int
s_release (options_t *options, zsock_t *sock, char *argv [], int argc)
{
    if (argc < 1)
        return 2;
    jace_msg_t *release = jace_msg_new (JACE_MSG_RELEASE);
    jace_msg_set_sender (release, "snclient");
    jace_msg_set_job (release, argv [0]);
    jace_msg_set_forwarded (release, options->forwarded);
    for (int i = 1; i < argc; i++) {
        jace_node_t node = { .task = -1 };
        snprintf (node.id, sizeof node.id, "%s", argv [i]);
        jace_msg_add_node (release, &node);
    }
    return jace_msg_send (&release, sock) ? 1 : 0;
}

static int
s_heartbeat (options_t *options, zsock_t *sock, char *argv [], int argc,
             jace_lease_state_t state)
{
    if (argc < 1)
        return 2;
    jace_msg_t *beat = jace_msg_new (JACE_MSG_HEARTBEAT);
    jace_msg_set_sender (beat, "snclient");
    jace_msg_set_job (beat, argv [0]);
    jace_msg_set_state (beat, state);
    if (argc > 1)
        jace_msg_set_token (beat, argv [1]);
    jace_msg_set_forwarded (beat, options->forwarded);
    return jace_msg_send (&beat, sock) ? 1 : 0;
}

static int
s_status (options_t *options, zsock_t *sock)
{
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "snclient");
    jace_msg_send (&status, sock);
    jace_msg_t *reply = s_await (options, sock, JACE_MSG_STATUS_REPLY);
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
s_crash (zsock_t *sock)
{
    jace_msg_t *crash = jace_msg_new (JACE_MSG_CRASH);
    jace_msg_set_sender (crash, "snclient");
    return jace_msg_send (&crash, sock) ? 1 : 0;
}

//  --------------------------------------------------------------------------
//  A super-node's and a daemon's messages

static int
s_peer (options_t *options, zsock_t *sock, char *argv [], int argc)
{
    if (argc < 1)
        return 2;
    int times = argc > 1 ? atoi (argv [1]) : 3;
    for (int i = 0; i < times; i++) {
        jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
        jace_msg_set_sender (state, "snclient");
        jace_msg_set_endpoint (state, argv [0]);
        for (long n = 1; n <= options->nodes; n++) {
            char id [JACE_ID_MAX];
            snprintf (id, sizeof id, "peer-%ld", n);
            jace_node_t node = s_record (options, id);
            jace_msg_add_node (state, &node);
        }
        if (jace_msg_send (&state, sock))
            return 1;
        zclock_sleep (100);
    }
    return 0;
}

static void
s_send_hello (options_t *options, zsock_t *sock, const char *id,
              const char *lease_key)
{
    jace_msg_t *hello = jace_msg_new (JACE_MSG_HELLO);
    jace_msg_set_sender (hello, id);
    jace_msg_set_token (hello, lease_key);
    jace_node_t node = s_record (options, id);
    jace_msg_add_node (hello, &node);
    jace_msg_send (&hello, sock);
}

static int
s_hello (options_t *options, zsock_t *sock, char *argv [], int argc)
{
    if (argc < 2)
        return 2;
    int times = argc > 2 ? atoi (argv [2]) : 1;
    bool welcomed = false;
    for (int i = 0; i < times; i++) {
        if (i)
            zclock_sleep (100);
        s_send_hello (options, sock, argv [0], argv [1]);
        jace_msg_t *welcome = s_await (options, sock, JACE_MSG_WELCOME);
        welcomed = welcome != NULL;
        if (welcomed)
            printf ("welcome\n");
        jace_msg_destroy (&welcome);
    }
    return welcomed ? 0 : 1;
}

static int
s_flood (options_t *options, zsock_t *sock, char *argv [], int argc)
{
    if (argc < 2)
        return 2;
    long count = atol (argv [1]), welcomed = 0;
    for (long i = 1; i <= count; i++) {
        char id [JACE_ID_MAX], text [JACE_KEY_TEXT + 1];
        snprintf (id, sizeof id, "%s-%ld", argv [0], i);
        jace_key_t key;
        jace_key_random (&key);
        jace_key_encode (&key, text);
        s_send_hello (options, sock, id, text);
    }
    jace_msg_t *welcome;
    while ((welcome = s_await (options, sock, JACE_MSG_WELCOME))) {
        welcomed++;
        jace_msg_destroy (&welcome);
    }
    printf ("%ld\n", welcomed);
    return 0;
}

static int
s_bye (zsock_t *sock, char *argv [], int argc)
{
    if (argc < 2)
        return 2;
    jace_msg_t *bye = jace_msg_new (JACE_MSG_BYE);
    jace_msg_set_sender (bye, argv [0]);
    jace_msg_set_token (bye, argv [1]);
    return jace_msg_send (&bye, sock) ? 1 : 0;
}

//  --------------------------------------------------------------------------
//  Without a super-node

static int
s_make_cert (char *argv [], int argc)
{
    if (argc < 3)
        return 2;
    zsys_dir_create ("%s", argv [0]);
    zcert_t *cert = zcert_new ();
    zcert_set_meta (cert, "role", "%s", argv [2]);
    zcert_set_meta (cert, "name", "%s", argv [1]);
    char *path = zsys_sprintf ("%s/%s.cert", argv [0], argv [1]);
    int rc = zcert_save (cert, path);
    char *secret = zsys_sprintf ("%s_secret", path);
    if (rc == 0)
        rc = chmod (secret, 0600);
    zstr_free (&secret);
    zstr_free (&path);
    zcert_destroy (&cert);
    return rc ? 1 : 0;
}

static int
s_local (options_t *options, const char *command, char *argv [], int argc)
{
    if (streq (command, "key")) {
        jace_key_t key;
        char text [JACE_KEY_TEXT + 1];
        jace_key_random (&key);
        jace_key_encode (&key, text);
        printf ("%s\n", text);
        return 0;
    }
    if (streq (command, "token") && argc >= 4) {
        jace_key_t key;
        char token [JACE_KEY_TEXT + 1];
        if (jace_key_decode (&key, argv [0]))
            return 2;
        jace_lease_token (&key, argv [1], argv [2], argv [3], token);
        printf ("%s\n", token);
        return 0;
    }
    if (streq (command, "cert"))
        return s_make_cert (argv, argc);
    if (streq (command, "whoami")) {
        printf ("%s\n", jace_security_public_key (options->security));
        return 0;
    }
    return 2;
}

//  --------------------------------------------------------------------------

static int
s_request (options_t *options, zsock_t *sock, const char *command,
           char *argv [], int argc)
{
    return streq (command, "reserve") ? s_reserve (options, sock, argv, argc)
         : streq (command, "release") ? s_release (options, sock, argv, argc)
         : streq (command, "heartbeat") ? s_heartbeat (options, sock, argv,
                                                       argc, JACE_LEASE_RENEW)
         : streq (command, "over") ? s_heartbeat (options, sock, argv, argc,
                                                  JACE_LEASE_OVER)
         : streq (command, "status") ? s_status (options, sock)
         : streq (command, "peer") ? s_peer (options, sock, argv, argc)
         : streq (command, "hello") ? s_hello (options, sock, argv, argc)
         : streq (command, "flood") ? s_flood (options, sock, argv, argc)
         : streq (command, "bye") ? s_bye (sock, argv, argc)
         : streq (command, "crash") ? s_crash (sock) : 2;
}

//  Connect to the super-node at endpoint as options say and run command.
static int
s_remote (options_t *options, const char *endpoint, const char *command,
          char *argv [], int argc)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (sock, JACE_MSG_HEADER_MAX);
    //  What we send must leave before we close.
    zsock_set_linger (sock, 1000);
    int rc = 2;
    if (jace_security_apply_client (options->security, sock,
            jace_security_supernode_key (options->security, endpoint,
                                         NULL, 0)) == 0
    &&  zsock_connect (sock, "%s", endpoint) == 0)
        rc = s_request (options, sock, command, argv, argc);
    zsock_destroy (&sock);
    return rc;
}

static int
s_parse (options_t *options, int argc, char *argv [])
{
    static struct option long_options [] = {
        { "keys", required_argument, 0, 'k' },
        { "cert", required_argument, 0, 'c' },
        { "pubkey", required_argument, 0, 'p' },
        { "forwarded", no_argument, 0, 'f' },
        { "power", required_argument, 0, 'P' },
        { "cluster", required_argument, 0, 'C' },
        { "nodes", required_argument, 0, 'n' },
        { "wait", required_argument, 0, 'w' },
        { "tokens", no_argument, 0, 't' },
        { "ids", required_argument, 0, 'i' },
        { "app", required_argument, 0, 'a' },
        { 0, 0, 0, 0 }
    };
    int option;
    //  "+": options end at the first word, the endpoint or command.
    while ((option = getopt_long (argc, argv, "+", long_options, NULL))
           != -1) {
        switch (option) {
            case 'k': options->keys = optarg; break;
            case 'c': options->cert = optarg; break;
            case 'p': options->pubkey = optarg; break;
            case 'f': options->forwarded = true; break;
            case 'P': options->power = atof (optarg); break;
            case 'C': options->cluster = optarg; break;
            case 'n': options->nodes = atol (optarg); break;
            case 'w': options->wait_msec = atoi (optarg); break;
            case 't': options->tokens = true; break;
            case 'i': options->ids = optarg; break;
            case 'a': options->app = optarg; break;
            default: return -1;
        }
    }
    return 0;
}

int
main (int argc, char *argv [])
{
    zsys_set_logstream (stderr);
    options_t options = { .cert = JACE_SPAWNER_CERT, .power = 1,
                          .cluster = "default", .wait_msec = 5000 };
    if (s_parse (&options, argc, argv) || optind >= argc) {
        fprintf (stderr, "usage: snclient [OPTIONS] ENDPOINT reserve|release|"
                 "heartbeat|over|status|peer|hello|flood|bye|crash ARGS...\n"
                 "       snclient key|token|cert|whoami ARGS...\n");
        return 2;
    }
    char reason [256] = "";
    options.security = jace_security_new (options.keys, options.cert,
                                          reason, sizeof reason);
    if (!options.security) {
        fprintf (stderr, "snclient: %s\n", reason);
        return 2;
    }
    char **words = argv + optind;
    int count = argc - optind;
    int rc = !strstr (words [0], "://")
           ? s_local (&options, words [0], words + 1, count - 1)
           : count < 2 ? 2
           : s_remote (&options, words [0], words [1], words + 2, count - 2);
    jace_security_destroy (&options.security);
    return rc;
}
