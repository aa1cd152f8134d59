/*  =========================================================================
    rawzmq - a hostile peer: every malformed thing a socket can receive

    Test helper.  Connects a raw ZeroMQ socket (DEALER, or PUSH for data
    endpoints) to ENDPOINT and sends garbage, truncated and oversized
    headers, a wrong version, an unknown type, wrong field types, frames
    that disagree with the header, well-formed messages of the wrong kind,
    then disconnects in the middle of a multipart message.

        rawzmq ENDPOINT dealer|push [SERVER_KEY_FILE CLIENT_CERT_FILE]
        rawzmq ENDPOINT forge JOB TASK

        rawzmq ENDPOINT steer JOB
        rawzmq ENDPOINT ping|pong AS
        rawzmq ENDPOINT data JOB TASK

    forge: push checkpoints of task TASK of job JOB nobody with the job
    key made to a daemon's data endpoint, each tagged newer than any real
    copy (epoch 1000, iteration 999999): one sealed under another key, one
    whose bytes were changed after sealing, one cut short, one relabelled
    from another task, one unsealed, and a "no copy here" under another
    key.  A daemon that kept or restored any of them would show iteration
    999999.

    ping, pong: at a super-node, a bulk PING with sender AS, or a PONG
    naming AS, from this connection (neither a peer's nor AS's own).

    steer: at a daemon's control endpoint, ASSIGN JOB without a lease
    token and with a made-up one, then STOP, CRASH, ADOPT, REMAP, COLLECT
    and START of JOB unsealed and sealed with another key; prints
    "refusals=R answers=A" once its third ASSIGN is refused.

    data: at a daemon's data endpoint, FETCH task TASK's copies to our
    own endpoint and DATA from TASK at iteration 2^62, unsealed and sealed
    with another key; prints "copies=C", the copies sent to us.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_checkpoint.h"
#include "jace_auth.h"

#include <msgpack.h>
#include <limits.h>

//  Longest wait for a daemon to refuse our three ASSIGNs (a slow daemon,
//  under load or a sanitizer, is not a silent one).
#define STEER_MSEC 30000

static void
s_send_bytes (zsock_t *sock, const void *data, size_t size, bool more)
{
    zframe_t *frame = zframe_new (data, size);
    zframe_send (&frame, sock, more ? ZFRAME_MORE : 0);
}

static void
s_send_packed (zsock_t *sock, int version, int type, int items)
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_array (&pk, 2 + items);
    msgpack_pack_int (&pk, version);
    msgpack_pack_int (&pk, type);
    for (int i = 0; i < items; i++)
        msgpack_pack_int (&pk, 7);      //  Wrong type for most fields
    s_send_bytes (sock, buffer.data, buffer.size, false);
    msgpack_sbuffer_destroy (&buffer);
}

static void
s_send_msg (zsock_t *sock, jace_msg_t *msg, size_t cut, const char *extra)
{
    zmsg_t *zmsg = jace_msg_encode (msg);
    zframe_t *header = zmsg_first (zmsg);
    if (cut && cut < zframe_size (header)) {
        //  zframe_reset frees the old data first: copy the part we keep.
        byte *kept = (byte *) malloc (cut);
        memcpy (kept, zframe_data (header), cut);
        zframe_reset (header, kept, cut);
        free (kept);
    }
    if (extra)
        zmsg_addstr (zmsg, extra);
    zmsg_send (&zmsg, sock);
}

//  A CKPT of task `task` tagged newer than any real copy.
static jace_msg_t *
s_forged_copy (const char *job, int64_t task, const double *state,
               size_t size, const jace_key_t *key)
{
    jace_msg_t *copy = jace_checkpoint_begin ("forger", job, task, 1000,
                                              999999, state, size);
    if (key)
        jace_checkpoint_seal (copy, key);
    return copy;
}

//  Checkpoints of task TASK nobody with the job key made: sealed under
//  another key, damaged after sealing, cut short, relabelled from another
//  task, unsealed, and "no copy here" answers under another key.
static int
s_forge (const char *endpoint, const char *job, int64_t task)
{
    zsock_t *sock = zsock_new (ZMQ_PUSH);
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", endpoint))
        return 2;
    jace_key_t key;
    jace_key_random (&key);
    double state [512];
    for (size_t i = 0; i < 512; i++)
        state [i] = 1e6 + (double) i;
    jace_msg_t *msg = s_forged_copy (job, task, state, sizeof state, &key);
    jace_msg_send (&msg, sock);
    //  Damaged after the seal was taken: same token, other bytes.
    jace_msg_t *sealed = s_forged_copy (job, task, state, sizeof state, &key);
    state [7] = -1;
    msg = s_forged_copy (job, task, state, sizeof state, NULL);
    jace_msg_set_token (msg, jace_msg_token (sealed));
    jace_msg_send (&msg, sock);
    //  Cut short: the first half of the bytes only, same token.
    msg = s_forged_copy (job, task, state, sizeof state / 2, NULL);
    jace_msg_set_token (msg, jace_msg_token (sealed));
    jace_msg_send (&msg, sock);
    jace_msg_destroy (&sealed);
    //  A copy of task + 1 relabelled as task's.
    msg = s_forged_copy (job, task + 1, state, sizeof state, &key);
    jace_msg_set_task (msg, task);
    jace_msg_send (&msg, sock);
    msg = s_forged_copy (job, task, state, sizeof state, NULL);
    jace_msg_send (&msg, sock);
    msg = jace_checkpoint_none ("forger", job, task, &key);
    jace_msg_send (&msg, sock);
    zclock_sleep (300);
    zsock_destroy (&sock);
    return 0;
}

//  Send msg unsealed, then sealed with a key that is not the job's.
static void
s_send_twice (zsock_t *sock, jace_msg_t *msg)
{
    zmsg_t *unsealed = jace_msg_encode (msg);
    zmsg_send (&unsealed, sock);
    jace_key_t key;
    jace_key_random (&key);
    jace_msg_seal (msg, key.bytes);
    jace_msg_send (&msg, sock);
}

//  Messages received on sock until `expected` REFUSEs came (or msec
//  passed); REFUSEs counted apart.
static int
s_answers (zsock_t *sock, int msec, int expected, int *refusals)
{
    int count = 0;
    zpoller_t *poller = zpoller_new (sock, NULL);
    int64_t deadline = zclock_mono () + msec;
    while (zclock_mono () < deadline && *refusals < expected) {
        if (!zpoller_wait (poller, (int) (deadline - zclock_mono ())))
            continue;
        jace_msg_t *msg = jace_msg_recv (sock, NULL, 0, NULL, 0);
        if (!msg)
            continue;
        if (jace_msg_type (msg) == JACE_MSG_REFUSE)
            (*refusals)++;
        else
            count++;
        jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return count;
}

//  An ASSIGN of job with a made-up lease token: refused by any daemon.
static void
s_send_assign (zsock_t *sock, const char *job, const char *key,
               const char *token)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_sender (assign, "intruder");
    jace_msg_set_job (assign, job);
    jace_msg_set_count (assign, 1);
    jace_msg_set_key (assign, key);
    jace_msg_set_token (assign, token);
    jace_msg_send (&assign, sock);
}

//  At a daemon's control endpoint, knowing only JOB: ASSIGN without a
//  lease token and with a made-up one, then STOP, CRASH, ADOPT, REMAP,
//  COLLECT, START unsealed and sealed with another key, then one more
//  ASSIGN: a daemon handles its control messages in order, so once that
//  last one is refused, every message before it was handled.  Prints
//  "refusals=R answers=A" (R should be 3; A: anything else the daemon
//  sent us).
static int
s_steer (const char *endpoint, const char *job)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", endpoint))
        return 2;
    jace_key_t key;
    jace_key_random (&key);
    char text [JACE_KEY_TEXT + 1];
    jace_key_encode (&key, text);
    s_send_assign (sock, job, text, "");
    s_send_assign (sock, job, text, text);
    jace_msg_type_t types [] = { JACE_MSG_STOP, JACE_MSG_CRASH,
        JACE_MSG_ADOPT, JACE_MSG_REMAP, JACE_MSG_COLLECT, JACE_MSG_START };
    for (size_t i = 0; i < sizeof types / sizeof types [0]; i++) {
        jace_msg_t *msg = jace_msg_new (types [i]);
        jace_msg_set_sender (msg, "intruder");
        jace_msg_set_job (msg, job);
        if (types [i] == JACE_MSG_REMAP) {
            jace_node_t node = { .id = "intruder", .task = 0, .epoch = 99,
                                 .data = "tcp://127.0.0.1:1" };
            jace_msg_add_node (msg, &node);
        }
        s_send_twice (sock, msg);
    }
    s_send_assign (sock, job, text, text);
    int refusals = 0;
    int answers = s_answers (sock, STEER_MSEC, 3, &refusals);
    printf ("refusals=%d answers=%d\n", refusals, answers);
    zsock_destroy (&sock);
    return 0;
}

//  At a daemon's data endpoint: FETCH task TASK's copies to our own PULL,
//  and DATA from TASK at iteration 2^62; unsealed and sealed with another
//  key.  Prints "copies=C" (copies the daemon sent us).
static int
s_data_attack (const char *endpoint, const char *job, int64_t task)
{
    zsock_t *sock = zsock_new (ZMQ_PUSH);
    zsock_t *pull = zsock_new (ZMQ_PULL);
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", endpoint)
    ||  zsock_bind (pull, "tcp://127.0.0.1:*") < 0)
        return 2;
    char *mine = zsock_last_endpoint (pull);
    jace_node_t node = { .id = "intruder", .task = task, .epoch = 99 };
    snprintf (node.data, sizeof node.data, "%s", mine);
    zstr_free (&mine);
    jace_msg_t *fetch = jace_msg_new (JACE_MSG_FETCH);
    jace_msg_set_sender (fetch, "intruder");
    jace_msg_set_job (fetch, job);
    jace_msg_set_task (fetch, task);
    jace_msg_set_epoch (fetch, 99);
    jace_msg_add_node (fetch, &node);
    s_send_twice (sock, fetch);
    double values [64] = { 0 };
    jace_msg_t *data = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (data, job);
    jace_msg_set_task (data, task);
    jace_msg_set_epoch (data, 99);
    jace_msg_set_iteration (data, (int64_t) 1 << 62);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, values, 64);
    s_send_twice (sock, data);
    //  No barrier here (nothing is due back): listen 2 s for copies.
    int none = 0;
    printf ("copies=%d\n", s_answers (pull, 2000, INT_MAX, &none));
    zsock_destroy (&sock);
    zsock_destroy (&pull);
    return 0;
}

//  A forged probe at a super-node: a bulk PING from a sender that is
//  neither peer nor registered daemon, or a PONG naming daemon `as` from
//  a connection that is not its.
static int
s_probe (const char *endpoint, const char *command, const char *as)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", endpoint))
        return 2;
    bool ping = streq (command, "ping");
    jace_msg_t *msg = jace_msg_new (ping ? JACE_MSG_PING : JACE_MSG_PONG);
    jace_msg_set_sender (msg, as);
    jace_msg_set_cluster (msg, "A");
    jace_msg_set_count (msg, 1);
    if (ping) {
        char padding [32 * 1024 + 1];
        memset (padding, '.', sizeof padding - 1);
        padding [sizeof padding - 1] = 0;
        jace_msg_set_reason (msg, padding);
    }
    int rc = jace_msg_send (&msg, sock);
    zsock_destroy (&sock);      //  Lingers until the probe is out
    return rc ? 1 : 0;
}

int
main (int argc, char *argv [])
{
    zsys_set_logstream (stderr);
    if (argc == 4 && (streq (argv [2], "ping") || streq (argv [2], "pong")))
        return s_probe (argv [1], argv [2], argv [3]);
    if (argc == 5 && streq (argv [2], "forge"))
        return s_forge (argv [1], argv [3], atoll (argv [4]));
    if (argc == 4 && streq (argv [2], "steer"))
        return s_steer (argv [1], argv [3]);
    if (argc == 5 && streq (argv [2], "data"))
        return s_data_attack (argv [1], argv [3], atoll (argv [4]));
    if (argc < 3) {
        fprintf (stderr, "usage: rawzmq ENDPOINT dealer|push "
                 "[SERVER_CERT CLIENT_CERT]\n");
        return 2;
    }
    zsock_t *sock = zsock_new (streq (argv [2], "push") ? ZMQ_PUSH
                                                        : ZMQ_DEALER);
    zsock_set_linger (sock, 1000);
    if (argc >= 5) {
        zcert_t *server = zcert_load (argv [3]);
        zcert_t *client = zcert_load (argv [4]);
        if (!server || !client)
            return 2;
        zcert_apply (client, sock);
        zsock_set_curve_serverkey (sock, zcert_public_txt (server));
        zcert_destroy (&server);
        zcert_destroy (&client);
    }
    if (zsock_connect (sock, "%s", argv [1]))
        return 2;

    s_send_bytes (sock, "\xff\x00garbage\x01", 10, false);
    s_send_bytes (sock, "", 0, false);
    s_send_packed (sock, 99, JACE_MSG_HELLO, 2);        //  wrong version
    s_send_packed (sock, JACE_MSG_VERSION, 250, 0);     //  unknown type
    s_send_packed (sock, JACE_MSG_VERSION, JACE_MSG_HELLO, 3);
    s_send_packed (sock, JACE_MSG_VERSION, JACE_MSG_DATA, 6);

    //  Truncated, and with an unannounced frame.
    jace_msg_t *hello = jace_msg_new (JACE_MSG_HELLO);
    jace_msg_set_sender (hello, "intruder");
    jace_node_t node = { .id = "intruder", .endpoint = "tcp://127.0.0.1:1" };
    jace_msg_add_node (hello, &node);
    s_send_msg (sock, hello, 9, NULL);
    s_send_msg (sock, hello, 0, "surprise");
    jace_msg_destroy (&hello);

    //  Well-formed but wrong here: a RESULT, DATA for no job, a STOP for
    //  a job nobody runs, a HELLO claiming someone else's record.
    jace_msg_t *result = jace_msg_new (JACE_MSG_RESULT);
    jace_msg_set_job (result, "job-none");
    s_send_msg (sock, result, 0, NULL);
    jace_msg_destroy (&result);
    jace_msg_t *data = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_job (data, "job-none");
    double values [4] = { 1, 2, 3, 4 };
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, values, 4);
    s_send_msg (sock, data, 0, NULL);
    jace_msg_destroy (&data);
    jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
    jace_msg_set_job (stop, "job-none");
    s_send_msg (sock, stop, 0, NULL);
    jace_msg_destroy (&stop);
    jace_msg_t *liar = jace_msg_new (JACE_MSG_HELLO);
    jace_msg_set_sender (liar, "someone");
    jace_msg_add_node (liar, &node);
    s_send_msg (sock, liar, 0, NULL);
    jace_msg_destroy (&liar);

    //  Oversized: one frame over every Jace socket's header limit.
    size_t huge = JACE_MSG_HEADER_MAX + 1024;
    char *big = (char *) calloc (1, huge);
    s_send_bytes (sock, big, huge, false);
    free (big);

    //  Abrupt disconnect in the middle of a multipart message.
    s_send_bytes (sock, "\x93\x01\x03", 3, true);
    zclock_sleep (300);
    zsock_destroy (&sock);
    return 0;
}
