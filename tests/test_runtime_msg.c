/*  =========================================================================
    test_runtime_msg - the message codec: round trips and rejected input

    Every type survives encode/decode; every malformed shape a peer could
    send (garbage, truncation, wrong version or type, wrong field count or
    type, payload sizes that disagree with the header, oversize fields) is
    rejected with a reason and never aborts.  Protocol 3: tokens and keys
    travel, a seal covers every field a type carries but params, and a
    message received over CURVE carries the key ZAP authenticated, whose
    role is its certificate's.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_security.h"
#include "../tests/tap.h"

#include <msgpack.h>

static jace_msg_t *
s_round_trip (jace_msg_t *msg)
{
    zmsg_t *zmsg = jace_msg_encode (msg);
    char reason [256];
    jace_msg_t *copy = jace_msg_decode (&zmsg, reason, sizeof reason);
    if (!copy)
        diag ("decode failed: %s", reason);
    return copy;
}

static void
test_every_type_round_trips (void)
{
    int failures = 0;
    for (int type = 1; type < JACE_MSG_TYPE_COUNT; type++) {
        jace_msg_t *msg = jace_msg_new ((jace_msg_type_t) type);
        jace_msg_t *copy = s_round_trip (msg);
        if (!copy || (int) jace_msg_type (copy) != type)
            failures++;
        jace_msg_destroy (&copy);
        jace_msg_destroy (&msg);
    }
    is_int (failures, 0, "every message type round trips when empty");
}

static void
test_fields_survive (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_sender (msg, "spawner-1");
    jace_msg_set_job (msg, "job-42");
    jace_msg_set_task (msg, 7);
    jace_msg_set_epoch (msg, 3);
    jace_msg_set_count (msg, 8);
    jace_msg_set_interval (msg, -250);
    jace_msg_set_app (msg, "jacobi2d");
    jace_msg_set_param (msg, "problem/n", "64");
    jace_node_t node = { .id = "d1", .endpoint = "tcp://127.0.0.1:5000",
                         .data = "tcp://127.0.0.1:5001", .cluster = "A",
                         .power = 2.5, .cores = 4, .memory = 1024,
                         .state = JACE_NODE_WORKING, .task = 6,
                         .apps = "jacobi2d advdiff" };
    jace_msg_add_node (msg, &node);
    double vector [3] = { 1.5, -2.25, 1e300 };
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, vector, 3);

    jace_msg_t *copy = s_round_trip (msg);
    ok (copy != NULL, "an ASSIGN with every field decodes");
    if (!copy) {
        jace_msg_destroy (&msg);
        return;
    }
    ok (streq (jace_msg_sender (copy), "spawner-1")
        && streq (jace_msg_job (copy), "job-42")
        && streq (jace_msg_app (copy), "jacobi2d"),
        "string fields survive the round trip");
    ok (jace_msg_task (copy) == 7 && jace_msg_epoch (copy) == 3
        && jace_msg_count (copy) == 8 && jace_msg_interval (copy) == -250,
        "integer fields, negative ones too, survive the round trip");
    const char *param = jace_msg_param (copy, "problem/n");
    ok (param && streq (param, "64"), "params survive the round trip");
    ok (jace_msg_node_count (copy) == 1
        && streq (jace_msg_node (copy, 0)->data, "tcp://127.0.0.1:5001")
        && jace_msg_node (copy, 0)->power == 2.5
        && jace_msg_node (copy, 0)->task == 6
        && streq (jace_msg_node (copy, 0)->apps, "jacobi2d advdiff"),
        "node records survive the round trip");
    double back [3] = { 0 };
    ok (jace_msg_payload_count (copy) == 1
        && jace_msg_payload_kind (copy, 0) == JACE_PAYLOAD_F64
        && jace_msg_payload_length (copy, 0) == 3, "payload descriptor kept");
    jace_msg_payload_copy (copy, 0, back);
    ok (memcmp (back, vector, sizeof vector) == 0,
        "payload doubles are bit-exact");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);
}

//  A payload filled in place in host order, turned to wire order, reads
//  back as written after a round trip, beside a copied one
static void
test_payload_filled_in_place (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_CHUNK);
    double first [2] = { 0.5, -3.0 };
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, first, 2);
    int64_t *space = (int64_t *) jace_msg_add_payload_space (msg,
        JACE_PAYLOAD_I64, 4);
    int64_t written [4] = { 0, -1, 1LL << 40, INT64_MAX };
    memcpy (space, written, sizeof written);
    jace_msg_payload_to_wire (msg, 1);
    jace_msg_t *copy = s_round_trip (msg);
    int64_t back [4] = { 0 };
    double first_back [2] = { 0 };
    if (copy && jace_msg_payload_count (copy) == 2) {
        jace_msg_payload_copy (copy, 0, first_back);
        jace_msg_payload_copy (copy, 1, back);
    }
    ok (copy && memcmp (back, written, sizeof written) == 0
        && memcmp (first_back, first, sizeof first) == 0,
        "a payload filled in place reads back as written, beside a copied one");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);
}

//  Headers far larger than the encoder's stack buffer: a long node list,
//  and a reason near its 64 KiB bound.
static void
test_large_headers (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_ASSIGN);
    for (int i = 0; i < 200; i++) {
        jace_node_t node = { .task = i, .power = i + 0.5 };
        snprintf (node.id, sizeof node.id, "daemon-%d", i);
        snprintf (node.endpoint, sizeof node.endpoint,
                  "tcp://127.0.0.1:%d", 5000 + i);
        jace_msg_add_node (msg, &node);
    }
    jace_msg_t *copy = s_round_trip (msg);
    bool same = copy && jace_msg_node_count (copy) == 200;
    for (size_t i = 0; same && i < 200; i++)
        same = streq (jace_msg_node (copy, i)->endpoint,
                      jace_msg_node (msg, i)->endpoint)
            && jace_msg_node (copy, i)->power == i + 0.5;
    ok (same, "a 200-node list round trips");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);

    size_t length = JACE_TEXT_MAX - 1;
    char *reason = (char *) malloc (length + 1);
    for (size_t i = 0; i < length; i++)
        reason [i] = (char) ('a' + i % 26);
    reason [length] = 0;
    msg = jace_msg_new (JACE_MSG_ERROR);
    jace_msg_set_reason (msg, reason);
    copy = s_round_trip (msg);
    ok (copy && streq (jace_msg_reason (copy), reason),
        "a reason of 65,535 bytes round trips");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);
    free (reason);
}

//  Decode a message made of the given raw frames; returns true if rejected
//  with a non-empty reason.
static bool
s_rejected (zmsg_t *zmsg, const char *expect)
{
    char reason [256] = "";
    jace_msg_t *msg = jace_msg_decode (&zmsg, reason, sizeof reason);
    bool rejected = msg == NULL && *reason != 0;
    if (expect && !strstr (reason, expect)) {
        diag ("reason '%s' lacks '%s'", reason, expect);
        rejected = false;
    }
    jace_msg_destroy (&msg);
    return rejected;
}

static zmsg_t *
s_packed (void (*build) (msgpack_packer *pk))
{
    msgpack_sbuffer buffer;
    msgpack_sbuffer_init (&buffer);
    msgpack_packer pk;
    msgpack_packer_init (&pk, &buffer, msgpack_sbuffer_write);
    build (&pk);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, buffer.data, buffer.size);
    msgpack_sbuffer_destroy (&buffer);
    return zmsg;
}

static void
s_wrong_version (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 4);
    msgpack_pack_int (pk, 99);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_str_with_body (pk, "x", 1);
    msgpack_pack_array (pk, 0);
}

static void
s_unknown_type (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 3);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, 200);
    msgpack_pack_array (pk, 0);
}

static void
s_missing_field (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 3);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_array (pk, 0);
}

//  BYE is [version, type, sender, token, payloads].
static void
s_wrong_field_type (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 5);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_int (pk, 12);
    msgpack_pack_str_with_body (pk, "t", 1);
    msgpack_pack_array (pk, 0);
}

static void
s_long_id (msgpack_packer *pk)
{
    char id [JACE_ID_MAX + 10];
    memset (id, 'a', sizeof id);
    msgpack_pack_array (pk, 5);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_str_with_body (pk, id, sizeof id);
    msgpack_pack_str_with_body (pk, "t", 1);
    msgpack_pack_array (pk, 0);
}

static void
s_long_token (msgpack_packer *pk)
{
    char token [JACE_ID_MAX + 10];
    memset (token, 'a', sizeof token);
    msgpack_pack_array (pk, 5);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_str_with_body (pk, "d1", 2);
    msgpack_pack_str_with_body (pk, token, sizeof token);
    msgpack_pack_array (pk, 0);
}

static void
s_token_not_string (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 5);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_str_with_body (pk, "d1", 2);
    msgpack_pack_bin_with_body (pk, "\x01\x02", 2);
    msgpack_pack_array (pk, 0);
}

//  DATA is [version, type, job, task, epoch, iteration, first, token,
//  payloads].
static void
s_oversize_payload (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 9);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_DATA);
    msgpack_pack_str_with_body (pk, "j", 1);
    for (int i = 0; i < 4; i++)
        msgpack_pack_int (pk, 0);
    msgpack_pack_str_with_body (pk, "t", 1);
    msgpack_pack_array (pk, 1);
    msgpack_pack_array (pk, 2);
    msgpack_pack_int (pk, JACE_PAYLOAD_F64);
    msgpack_pack_uint64 (pk, UINT64_MAX / 2);
}

static void
test_malformed_input_is_rejected (void)
{
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addstr (zmsg, "\xc1\xc1 garbage");
    ok (s_rejected (zmsg, "msgpack"), "garbage bytes are rejected");
    ok (s_rejected (zmsg_new (), "empty"), "an empty message is rejected");
    ok (s_rejected (s_packed (s_wrong_version), "version"),
        "a wrong version is rejected");
    ok (s_rejected (s_packed (s_unknown_type), "unknown message type"),
        "an unknown type is rejected");
    ok (s_rejected (s_packed (s_missing_field), "header items"),
        "a missing field is rejected");
    ok (s_rejected (s_packed (s_wrong_field_type), "not a string"),
        "a field of the wrong type is rejected");
    ok (s_rejected (s_packed (s_long_id), "limit"),
        "a string over its bound is rejected");
    ok (s_rejected (s_packed (s_long_token), "token"),
        "a token over its bound is rejected");
    ok (s_rejected (s_packed (s_token_not_string), "token"),
        "a token that is not a string is rejected");
    zmsg_t *oversize = s_packed (s_oversize_payload);
    zmsg_addstr (oversize, "small");
    ok (s_rejected (oversize, "out of range"),
        "an absurd payload count is rejected");

    //  Truncations of a valid message at every byte of the header.
    jace_msg_t *msg = jace_msg_new (JACE_MSG_HELLO);
    jace_node_t node = { .id = "d1", .endpoint = "tcp://127.0.0.1:1" };
    jace_msg_add_node (msg, &node);
    zmsg_t *full = jace_msg_encode (msg);
    zframe_t *header = zmsg_first (full);
    int accepted = 0;
    for (size_t cut = 0; cut < zframe_size (header); cut++) {
        zmsg_t *truncated = zmsg_new ();
        zmsg_addmem (truncated, zframe_data (header), cut);
        if (!s_rejected (truncated, NULL))
            accepted++;
    }
    is_int (accepted, 0, "every truncation of a header is rejected");
    zmsg_destroy (&full);
    jace_msg_destroy (&msg);

    //  Payload frames that disagree with the descriptor.
    msg = jace_msg_new (JACE_MSG_DATA);
    double values [4] = { 1, 2, 3, 4 };
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, values, 4);
    zmsg_t *short_payload = jace_msg_encode (msg);
    zframe_t *last = zmsg_last (short_payload);
    zframe_reset (last, values, 3 * sizeof (double));
    ok (s_rejected (short_payload, "header says"),
        "a payload shorter than announced is rejected");
    zmsg_t *extra = jace_msg_encode (msg);
    zmsg_addstr (extra, "surprise");
    ok (s_rejected (extra, "payload frames"),
        "an unannounced extra frame is rejected");
    zmsg_t *missing = jace_msg_encode (msg);
    zframe_t *payload = zmsg_last (missing);
    zmsg_remove (missing, payload);
    zframe_destroy (&payload);
    ok (s_rejected (missing, "payload frames"),
        "a missing payload frame is rejected");
    jace_msg_destroy (&msg);
}

static void
test_sockets (void)
{
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (router, 1024);
    int port = zsock_bind (router, "tcp://127.0.0.1:*");
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, 0);
    zsock_connect (dealer, "tcp://127.0.0.1:%d", port);

    jace_msg_t *msg = jace_msg_new (JACE_MSG_HEARTBEAT);
    jace_msg_set_sender (msg, "d7");
    ok (jace_msg_send (&msg, dealer) == 0 && msg == NULL,
        "send consumes the message");
    zpoller_t *poller = zpoller_new (router, NULL);
    ok (zpoller_wait (poller, 5000) == router, "the message arrives");
    char reason [128], sender [64];
    jace_msg_t *got = jace_msg_recv (router, reason, sizeof reason,
                                     sender, sizeof sender);
    ok (got && streq (jace_msg_sender (got), "d7")
        && jace_msg_routing_id (got) != NULL,
        "a ROUTER receives it with the routing id");
    ok (got && streq (jace_msg_user_id (got), "")
        && streq (jace_msg_peer_address (got), "127.0.0.1"),
        "a plain link has no user id, and the peer's address");

    //  Reply through the routing id.
    jace_msg_t *reply = jace_msg_new (JACE_MSG_WELCOME);
    jace_msg_set_routing_id (reply, jace_msg_routing_id (got));
    jace_msg_set_interval (reply, 500);
    ok (jace_msg_send (&reply, router) == 0, "a ROUTER replies");
    zpoller_t *back = zpoller_new (dealer, NULL);
    ok (zpoller_wait (back, 5000) == dealer, "the reply arrives");
    jace_msg_t *welcome = jace_msg_recv (dealer, NULL, 0, NULL, 0);
    ok (welcome && jace_msg_interval (welcome) == 500,
        "the DEALER decodes the reply");
    jace_msg_destroy (&welcome);

    //  An oversized frame never reaches the application: the socket's
    //  ZMQ_MAXMSGSIZE drops the connection instead.
    zmsg_t *huge = zmsg_new ();
    zframe_t *big = zframe_new (NULL, 4096);
    memset (zframe_data (big), 0, 4096);
    zmsg_append (huge, &big);
    zmsg_send (&huge, dealer);
    ok (zpoller_wait (poller, 300) == NULL,
        "a frame over the socket's limit is never delivered");

    //  Unroutable replies fail instead of vanishing silently.
    jace_msg_t *lost = jace_msg_new (JACE_MSG_WELCOME);
    zframe_t *nobody = zframe_new ("nobody", 6);
    jace_msg_set_routing_id (lost, nobody);
    zframe_destroy (&nobody);
    ok (jace_msg_send (&lost, router) == -1,
        "a send to an unknown routing id returns -1");

    jace_msg_destroy (&got);
    zpoller_destroy (&back);
    zpoller_destroy (&poller);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
}


//  --------------------------------------------------------------------------
//  Protocol 3: token and key fields, seals, identities

static void
test_protocol3_fields (void)
{
    unsigned char bytes [JACE_KEY_BYTES];
    for (int i = 0; i < JACE_KEY_BYTES; i++)
        bytes [i] = (unsigned char) (255 - i);
    char key [JACE_KEY_TEXT + 1];
    zmq_z85_encode (key, bytes, JACE_KEY_BYTES);
    jace_msg_t *msg = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_token (msg, "lease-token");
    jace_msg_set_key (msg, key);
    jace_msg_t *copy = s_round_trip (msg);
    ok (copy && streq (jace_msg_token (copy), "lease-token")
        && streq (jace_msg_key (copy), key)
        && strlen (jace_msg_key (copy)) == JACE_KEY_TEXT,
        "ASSIGN carries its lease token and a Z85 job key");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);

    msg = jace_msg_new (JACE_MSG_CHUNK);
    jace_msg_set_block (msg, 2);
    jace_msg_set_offset (msg, (int64_t) 1 << 40);
    jace_msg_set_token (msg, key);
    copy = s_round_trip (msg);
    ok (copy && jace_msg_block (copy) == 2
        && jace_msg_offset (copy) == (int64_t) 1 << 40
        && streq (jace_msg_token (copy), key),
        "CHUNK carries block, offset and its seal");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);

    //  Every type that a seal or token protects carries one.
    const jace_msg_type_t tokened [] = {
        JACE_MSG_HELLO, JACE_MSG_HEARTBEAT, JACE_MSG_BYE, JACE_MSG_ASSIGN,
        JACE_MSG_ACCEPT, JACE_MSG_REFUSE, JACE_MSG_START, JACE_MSG_PROGRESS,
        JACE_MSG_COLLECT, JACE_MSG_RESULT, JACE_MSG_STOP, JACE_MSG_DATA,
        JACE_MSG_REMAP, JACE_MSG_CKPT, JACE_MSG_FETCH, JACE_MSG_RESTORED,
        JACE_MSG_CRASH, JACE_MSG_ADOPT, JACE_MSG_CANCEL, JACE_MSG_CHUNK,
        JACE_MSG_CHUNK_ACK, JACE_MSG_DRAIN, JACE_MSG_REBALANCE,
        JACE_MSG_SLICE_ASK, JACE_MSG_SLICE
    };
    int missing = 0;
    for (size_t i = 0; i < sizeof tokened / sizeof tokened [0]; i++) {
        msg = jace_msg_new (tokened [i]);
        jace_msg_set_token (msg, key);
        copy = s_round_trip (msg);
        if (!copy || !streq (jace_msg_token (copy), key)) {
            diag ("%s loses its token", jace_msg_type_name (tokened [i]));
            missing++;
        }
        jace_msg_destroy (&copy);
        jace_msg_destroy (&msg);
    }
    is_int (missing, 0, "every message docs/SECURITY.md seals or tokens "
            "carries a token on the wire");

    //  Over-long tokens are cut by setters (the decoder refuses them).
    char long_token [JACE_ID_MAX + 8];
    memset (long_token, 'x', sizeof long_token - 1);
    long_token [sizeof long_token - 1] = 0;
    msg = jace_msg_new (JACE_MSG_DATA);
    jace_msg_set_token (msg, long_token);
    ok (strlen (jace_msg_token (msg)) == JACE_ID_MAX - 1,
        "a token is truncated at its bound");
    jace_msg_destroy (&msg);
}

//  One message of type, every field set to a fixed value, except field
//  `change` (a mutation number below MUTATIONS; -1 for none) set to
//  another.
enum {
    M_SENDER, M_ENDPOINT, M_CLUSTER, M_PUBKEY, M_JOB, M_APP, M_KEY,
    M_REASON, M_TASK, M_EPOCH, M_ITERATION, M_COUNT, M_STATE, M_INTERVAL,
    M_FIRST, M_FORWARDED, M_CODE, M_BLOCK, M_OFFSET, M_RECEIVED, M_VALUE,
    M_NODE_ID, M_NODE_ENDPOINT, M_NODE_DATA, M_NODE_CLUSTER, M_NODE_PUBKEY,
    M_NODE_SUPERNODE, M_NODE_POWER, M_NODE_CORES, M_NODE_MEMORY,
    M_NODE_STATE, M_NODE_TASK, M_NODE_EPOCH, M_NODE_JOB, M_NODE_COUNT,
    M_PARAMS,                   //  Must not matter
    MUTATIONS
};

static jace_msg_t *
s_sealable (jace_msg_type_t type, int change)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, change == M_SENDER ? "d2" : "d1");
    jace_msg_set_endpoint (msg, change == M_ENDPOINT ? "tcp://b:2"
                                                      : "tcp://a:1");
    jace_msg_set_cluster (msg, change == M_CLUSTER ? "B" : "A");
    jace_msg_set_pubkey (msg, change == M_PUBKEY ? "pk2" : "pk1");
    jace_msg_set_job (msg, change == M_JOB ? "job-2" : "job-1");
    jace_msg_set_app (msg, change == M_APP ? "jacobi" : "poisson");
    jace_msg_set_key (msg, change == M_KEY ? "key-2" : "key-1");
    jace_msg_set_reason (msg, change == M_REASON ? "why not" : "why");
    jace_msg_set_task (msg, change == M_TASK ? 4 : 3);
    jace_msg_set_epoch (msg, change == M_EPOCH ? 2 : 1);
    jace_msg_set_iteration (msg, change == M_ITERATION
                                 ? (int64_t) 1 << 62 : 40);
    jace_msg_set_count (msg, change == M_COUNT ? 9 : 8);
    jace_msg_set_state (msg, change == M_STATE ? 2 : 1);
    jace_msg_set_interval (msg, change == M_INTERVAL ? 501 : 500);
    jace_msg_set_first (msg, change == M_FIRST ? 65 : 64);
    jace_msg_set_forwarded (msg, change == M_FORWARDED ? 1 : 0);
    jace_msg_set_code (msg, change == M_CODE ? 2 : 1);
    jace_msg_set_block (msg, change == M_BLOCK ? 6 : 5);
    jace_msg_set_offset (msg, change == M_OFFSET ? 4097 : 4096);
    jace_msg_set_received (msg, change == M_RECEIVED ? 101 : 100);
    jace_msg_set_value (msg, change == M_VALUE ? 0.25000000000000006
                                               : 0.25);
    jace_node_t node = {
        .id = "d7", .endpoint = "tcp://n:1", .data = "tcp://n:2",
        .cluster = "A", .pubkey = "pk7", .supernode = "tcp://s:1",
        .power = 2.5, .cores = 4, .memory = 1024, .state = 1, .task = 6,
        .epoch = 1, .job = "job-1"
    };
    switch (change) {
        case M_NODE_ID: strcpy (node.id, "d8"); break;
        case M_NODE_ENDPOINT: strcpy (node.endpoint, "tcp://m:1"); break;
        case M_NODE_DATA: strcpy (node.data, "tcp://m:2"); break;
        case M_NODE_CLUSTER: strcpy (node.cluster, "B"); break;
        case M_NODE_PUBKEY: strcpy (node.pubkey, "pk8"); break;
        case M_NODE_SUPERNODE: strcpy (node.supernode, "tcp://t:1"); break;
        case M_NODE_POWER: node.power = 1e9; break;
        case M_NODE_CORES: node.cores = 5; break;
        case M_NODE_MEMORY: node.memory = 2048; break;
        case M_NODE_STATE: node.state = 2; break;
        case M_NODE_TASK: node.task = 7; break;
        case M_NODE_EPOCH: node.epoch = 2; break;
        case M_NODE_JOB: strcpy (node.job, "job-2"); break;
        default: break;
    }
    jace_msg_add_node (msg, &node);
    if (change == M_NODE_COUNT)
        jace_msg_add_node (msg, &node);
    jace_msg_set_param (msg, "problem/n", change == M_PARAMS ? "9" : "8");
    if (change == M_PARAMS)
        jace_msg_set_param (msg, "token/d7", "anything");
    return msg;
}

//  True if a and b encode to the same header: the change made no
//  difference on the wire (a field this type does not carry).
static bool
s_same_on_wire (const jace_msg_t *a, const jace_msg_t *b)
{
    zmsg_t *left = jace_msg_encode (a);
    zmsg_t *right = jace_msg_encode (b);
    bool same = zframe_eq (zmsg_first (left), zmsg_first (right));
    zmsg_destroy (&left);
    zmsg_destroy (&right);
    return same;
}

static void
test_seals (void)
{
    unsigned char key [JACE_KEY_BYTES], other [JACE_KEY_BYTES];
    for (int i = 0; i < JACE_KEY_BYTES; i++) {
        key [i] = (unsigned char) (i * 13 + 7);
        other [i] = key [i];
    }
    other [JACE_KEY_BYTES - 1] ^= 1;        //  One bit apart

    int sealed_types = 0, unsealed = 0, forged = 0, travelling = 0;
    int params_break = 0, other_key = 0, wire_loses = 0;
    for (int type = 1; type < JACE_MSG_TYPE_COUNT; type++) {
        jace_msg_t *base = s_sealable ((jace_msg_type_t) type, -1);
        jace_msg_seal (base, key);
        jace_msg_t *copy = s_round_trip (base);
        bool has_token = copy && streq (jace_msg_token (copy),
                                        jace_msg_token (base));
        if (!has_token) {
            jace_msg_destroy (&copy);
            jace_msg_destroy (&base);
            continue;
        }
        sealed_types++;
        if (!jace_msg_sealed (base, key))
            unsealed++;
        if (!jace_msg_sealed (copy, key))
            wire_loses++;
        if (jace_msg_sealed (base, other))
            other_key++;
        //  Each change of a field the type carries breaks the seal; a
        //  change of params does not.
        for (int change = 0; change < MUTATIONS; change++) {
            jace_msg_t *variant = s_sealable ((jace_msg_type_t) type,
                                              change);
            jace_msg_set_token (variant, jace_msg_token (base));
            jace_msg_t *received = s_round_trip (variant);
            if (change == M_PARAMS) {
                if (!received || !jace_msg_sealed (received, key)) {
                    diag ("%s: params change breaks the seal",
                          jace_msg_type_name (type));
                    params_break++;
                }
            }
            else
            if (!s_same_on_wire (base, variant)) {
                travelling++;
                if (!received || jace_msg_sealed (received, key)) {
                    diag ("%s: change %d keeps the seal",
                          jace_msg_type_name (type), change);
                    forged++;
                }
            }
            jace_msg_destroy (&received);
            jace_msg_destroy (&variant);
        }
        jace_msg_destroy (&copy);
        jace_msg_destroy (&base);
    }
    ok (sealed_types == 25,
        "25 types carry a token to seal (SLICE is the latest)");
    is_int (unsealed, 0, "jace_msg_seal then jace_msg_sealed is true");
    is_int (wire_loses, 0, "a seal survives encode and decode");
    is_int (other_key, 0, "a key one bit apart does not validate a seal");
    ok (forged == 0 && travelling > 100,
        "changing any field a type carries breaks its seal");
    diag ("%d field changes checked across %d types", travelling,
          sealed_types);
    is_int (params_break, 0, "params changes do not matter");

    //  A token lifted from another message: same type and job, another
    //  iteration; or another type with the very same fields.
    jace_msg_t *data = s_sealable (JACE_MSG_DATA, -1);
    jace_msg_t *later = s_sealable (JACE_MSG_DATA, M_ITERATION);
    jace_msg_seal (later, key);
    jace_msg_set_token (data, jace_msg_token (later));
    ok (!jace_msg_sealed (data, key),
        "a token from another message of the job does not validate it");
    jace_msg_t *crash = s_sealable (JACE_MSG_CRASH, -1);
    jace_msg_t *adopt = s_sealable (JACE_MSG_ADOPT, -1);
    jace_msg_seal (adopt, key);
    jace_msg_set_token (crash, jace_msg_token (adopt));
    ok (!jace_msg_sealed (crash, key),
        "an ADOPT's seal does not make a CRASH with the same fields");
    jace_msg_set_token (crash, "");
    bool empty = jace_msg_sealed (crash, key);
    jace_msg_set_token (crash, "not a seal");
    bool garbage = jace_msg_sealed (crash, key);
    char zeros [JACE_KEY_TEXT + 1];
    memset (zeros, '0', JACE_KEY_TEXT);
    zeros [JACE_KEY_TEXT] = 0;
    jace_msg_set_token (crash, zeros);
    ok (!empty && !garbage && !jace_msg_sealed (crash, key),
        "no token, a token that is not Z85 or a wrong one: not sealed");
    jace_msg_destroy (&adopt);
    jace_msg_destroy (&crash);
    jace_msg_destroy (&later);
    jace_msg_destroy (&data);
}

//  Save a certificate with role metadata (none if role is NULL) as
//  dir/name.cert and dir/name.cert_secret (mode 0600).
static zcert_t *
s_make_cert (const char *dir, const char *name, const char *role)
{
    zcert_t *cert = zcert_new ();
    if (role)
        zcert_set_meta (cert, "role", "%s", role);
    zcert_set_meta (cert, "name", "%s", name);
    char *path = zsys_sprintf ("%s/%s.cert", dir, name);
    char *secret = zsys_sprintf ("%s_secret", path);
    int rc = zcert_save (cert, path);
    if (rc == 0)
        rc = chmod (secret, 0600);
    assert (rc == 0);
    free (secret);
    free (path);
    return cert;
}

static void
s_remove_dir (const char *dir)
{
    zdir_t *tree = zdir_new (dir, "-");
    zfile_t **files = tree ? zdir_flatten (tree) : NULL;
    for (size_t i = 0; files && files [i]; i++)
        zfile_remove (files [i]);
    zdir_flatten_free (&files);
    zdir_destroy (&tree);
    rmdir (dir);
}

//  A message from a DEALER with client's certificate to a ROUTER with
//  security's; NULL if nothing arrives within timeout msecs.
static jace_msg_t *
s_send_curve (jace_security_t *security, zsock_t *router, int port,
              zcert_t *client, int timeout)
{
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, 0);
    zcert_apply (client, dealer);
    zsock_set_curve_serverkey (dealer, jace_security_public_key (security));
    zsock_connect (dealer, "tcp://127.0.0.1:%d", port);
    jace_msg_t *msg = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (msg, "client");
    jace_msg_send (&msg, dealer);
    zpoller_t *poller = zpoller_new (router, NULL);
    jace_msg_t *got = NULL;
    if (zpoller_wait (poller, timeout) == router)
        got = jace_msg_recv (router, NULL, 0, NULL, 0);
    zpoller_destroy (&poller);
    zsock_destroy (&dealer);
    return got;
}

static void
test_identities (void)
{
    char dir [] = "/tmp/jace-msg-keys.XXXXXX";
    if (!mkdtemp (dir)) {
        ok (false, "a keys folder for the test");
        return;
    }
    zcert_t *sn = s_make_cert (dir, "127.0.0.1", "supernode");
    zcert_t *head2 = s_make_cert (dir, "head2", "supernode");
    zcert_t *alice = s_make_cert (dir, "alice", "spawner");
    zcert_t *legacy = s_make_cert (dir, "daemon", NULL);
    zcert_t *rogue = zcert_new ();          //  Never saved: a stranger

    char reason [512] = "";
    jace_security_t *security = jace_security_new (dir, "127.0.0.1", reason,
                                                   sizeof reason);
    ok (security && jace_security_enabled (security)
        && streq (jace_security_public_key (security), zcert_public_txt (sn)),
        "a security object takes its own certificate from the folder");
    if (!security) {
        diag ("%s", reason);
        goto out;
    }
    ok (jace_security_role (security, zcert_public_txt (alice))
            == JACE_ROLE_SPAWNER
        && jace_security_role (security, zcert_public_txt (head2))
            == JACE_ROLE_SUPERNODE
        && jace_security_role (security, zcert_public_txt (legacy))
            == JACE_ROLE_DAEMON
        && jace_security_role (security, zcert_public_txt (rogue))
            == JACE_ROLE_NONE
        && jace_security_role (security, "") == JACE_ROLE_NONE,
        "roles come from the certificates' role metadata, or an old "
        "certificate's name; unknown keys have none");
    const char *found = jace_security_supernode_key (
        security, "tcp://head2:7700", reason, sizeof reason);
    const char *own = jace_security_supernode_key (
        security, "tcp://127.0.0.1:7700", reason, sizeof reason);
    const char *none = jace_security_supernode_key (
        security, "tcp://head3:7700", reason, sizeof reason);
    ok (found && streq (found, zcert_public_txt (head2))
        && own && streq (own, zcert_public_txt (sn)) && !none
        && strstr (reason, "supernode:HOST"),
        "with several super-node certificates, the one named after the "
        "endpoint's host is used, and none is guessed");

    zsock_t *router = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (router, 1 << 20);
    jace_security_apply_server (security, router);
    int port = zsock_bind (router, "tcp://127.0.0.1:*");
    jace_msg_t *got = s_send_curve (security, router, port, alice, 5000);
    ok (got && streq (jace_msg_sender (got), "client"),
        "a trusted client's message arrives over CURVE");
    ok (got && streq (jace_msg_user_id (got), zcert_public_txt (alice)),
        "its user id is the client's public key, as ZAP authenticated it");
    ok (got && streq (jace_msg_peer_address (got), "127.0.0.1"),
        "its peer address is the client's");
    ok (got && jace_security_role (security, jace_msg_user_id (got))
            == JACE_ROLE_SPAWNER,
        "the user id's role is the certificate's");
    ok (got && jace_security_authorise (security, got, JACE_ROLE_SPAWNER,
                                        "test")
        && jace_security_unauthorised_count (security) == 0,
        "a spawner may send what spawners may");
    ok (got && !jace_security_authorise (security, got,
                                         JACE_ROLE_SUPERNODE
                                         | JACE_ROLE_DAEMON, "test")
        && jace_security_unauthorised_count (security) == 1,
        "but not what only super-nodes and daemons may; the refusal counts");
    jace_msg_destroy (&got);

    //  The wire cannot claim an identity: the user id is the transport's.
    jace_msg_t *lie = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (lie, zcert_public_txt (head2));
    jace_msg_set_pubkey (lie, zcert_public_txt (head2));
    zmsg_t *zmsg = jace_msg_encode (lie);
    jace_msg_t *decoded = jace_msg_decode (&zmsg, NULL, 0);
    ok (decoded && streq (jace_msg_user_id (decoded), "")
        && !jace_security_authorise (security, decoded,
                                     JACE_ROLE_SUPERNODE, "test"),
        "a message that names a key in its fields is nobody");
    jace_msg_destroy (&decoded);
    jace_msg_destroy (&lie);

    uint64_t refused = jace_security_refused_count (security);
    got = s_send_curve (security, router, port, rogue, 500);
    ok (!got && jace_security_refused_count (security) > refused,
        "a client with an unknown key is refused and counted");
    jace_msg_destroy (&got);
    zsock_destroy (&router);
    jace_security_destroy (&security);

    //  A secret others may read is refused.
    char *secret = zsys_sprintf ("%s/alice.cert_secret", dir);
    chmod (secret, 0644);
    security = jace_security_new (dir, "alice", reason, sizeof reason);
    ok (!security && strstr (reason, secret)
        && strstr (reason, "open to other users"),
        "a secret certificate of mode 0644 is refused, naming the file");
    jace_security_destroy (&security);
    chmod (secret, 0600);
    security = jace_security_new (dir, "alice", reason, sizeof reason);
    ok (security != NULL, "... and accepted once it is 0600 again");
    //  ZeroMQ has one authentication handler per context: a second keyed
    //  object must say so rather than authenticate with the first's.
    *reason = 0;
    jace_security_t *second = jace_security_new (dir, "head2", reason,
                                                 sizeof reason);
    ok (!second && strstr (reason, "cannot start authentication"),
        "a second keyed security object in a process is refused");
    jace_security_destroy (&second);
    jace_security_destroy (&security);
    free (secret);
out:
    zcert_destroy (&rogue);
    zcert_destroy (&legacy);
    zcert_destroy (&alice);
    zcert_destroy (&head2);
    zcert_destroy (&sn);
    s_remove_dir (dir);
}

//  A version-3 RESERVE: eight fields, no nodes; protocol 4 refuses it.
static void
s_version3_reserve (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 11);
    msgpack_pack_int (pk, 3);
    msgpack_pack_int (pk, JACE_MSG_RESERVE);
    msgpack_pack_str_with_body (pk, "s", 1);
    msgpack_pack_str_with_body (pk, "j", 1);
    msgpack_pack_str_with_body (pk, "", 0);
    msgpack_pack_int (pk, 2);
    msgpack_pack_int (pk, 1000);
    msgpack_pack_int (pk, 0);
    msgpack_pack_str_with_body (pk, "", 0);
    msgpack_pack_str_with_body (pk, "", 0);
    msgpack_pack_array (pk, 0);
}

//  Protocol 4: RESERVE by id (nodes), PING and PONG.
static void
test_protocol4_fields (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_RESERVE);
    jace_msg_set_job (msg, "job-9");
    jace_msg_set_count (msg, 2);
    jace_node_t node = { .id = "d7" };
    jace_msg_add_node (msg, &node);
    snprintf (node.id, sizeof node.id, "d8");
    jace_msg_add_node (msg, &node);
    jace_msg_t *copy = s_round_trip (msg);
    ok (copy && jace_msg_count (copy) == 2
        && jace_msg_node_count (copy) == 2
        && streq (jace_msg_node (copy, 0)->id, "d7")
        && streq (jace_msg_node (copy, 1)->id, "d8"),
        "RESERVE carries the daemons wanted by id");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);

    ok (s_rejected (s_packed (s_version3_reserve), "version"),
        "a version-3 RESERVE is rejected");

    //  A bulk PING's padding fits the reason bound; the PONG is small.
    char *padding = (char *) malloc (32 * 1024 + 1);
    memset (padding, 'p', 32 * 1024);
    padding [32 * 1024] = 0;
    msg = jace_msg_new (JACE_MSG_PING);
    jace_msg_set_sender (msg, "sn-1");
    jace_msg_set_cluster (msg, "A");
    jace_msg_set_count (msg, 41);
    jace_msg_set_reason (msg, padding);
    copy = s_round_trip (msg);
    ok (copy && streq (jace_msg_sender (copy), "sn-1")
        && streq (jace_msg_cluster (copy), "A")
        && jace_msg_count (copy) == 41
        && strlen (jace_msg_reason (copy)) == 32 * 1024,
        "PING carries sender, cluster, sequence and bulk padding");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);
    free (padding);
    msg = jace_msg_new (JACE_MSG_PONG);
    jace_msg_set_cluster (msg, "B");
    jace_msg_set_count (msg, 41);
    copy = s_round_trip (msg);
    ok (copy && jace_msg_type (copy) == JACE_MSG_PONG
        && streq (jace_msg_cluster (copy), "B")
        && jace_msg_count (copy) == 41
        && streq (jace_msg_type_name (JACE_MSG_PING), "PING")
        && streq (jace_msg_type_name (JACE_MSG_PONG), "PONG"),
        "PONG echoes the sequence and names its cluster");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);
}

//  Ids and cluster names reach logs and JSON events as they are.
static void
test_node_names (void)
{
    jace_node_t node = { .id = "d-1.a", .endpoint = "tcp://127.0.0.1:9",
                         .cluster = "A", .power = 1, .cores = 1,
                         .task = -1 };
    ok (jace_node_valid (&node, NULL, 0), "a plain id and cluster pass");
    char reason [128] = "";
    snprintf (node.id, sizeof node.id, "d\",\"x\":\"1");
    ok (!jace_node_valid (&node, reason, sizeof reason)
        && strstr (reason, "quote"), "an id with a quote is refused");
    snprintf (node.id, sizeof node.id, "d1");
    snprintf (node.cluster, sizeof node.cluster, "a b");
    ok (!jace_node_valid (&node, NULL, 0)
        && !jace_name_plain ("x\\y") && !jace_name_plain ("x\ny")
        && jace_name_plain (""),
        "a cluster name with a space, a backslash or a newline is refused");
}

//  A record's applications: plain names, one space apart (protocol 5).
static void
test_node_apps (void)
{
    jace_node_t node = { .id = "d1", .endpoint = "tcp://127.0.0.1:9",
                         .cluster = "A", .power = 1, .cores = 1,
                         .task = -1, .apps = "jacobi2d advdiff" };
    ok (jace_node_valid (&node, NULL, 0)
        && jace_node_has_app (&node, "advdiff")
        && jace_node_has_app (&node, "jacobi2d")
        && !jace_node_has_app (&node, "advdif")
        && !jace_node_has_app (&node, "jacobi2d advdiff")
        && !jace_node_has_app (&node, ""),
        "a daemon has exactly the applications its record names");
    const char *bad [] = { " a", "a ", "a  b", "a\"b", "a\tb" };
    bool refused = true;
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        snprintf (node.apps, sizeof node.apps, "%s", bad [i]);
        refused &= !jace_node_valid (&node, NULL, 0);
    }
    ok (refused, "application names with stray spaces, quotes or tabs are "
        "refused");
}

//  Super-nodes named to clients (protocol 8): what a process would
//  connect to, so only plain tcp:// and ipc:// endpoints are read back.
static void
test_named_supernodes (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_WELCOME);
    for (int i = 0; i < JACE_SUPERNODES_NAMED_MAX + 2; i++) {
        char endpoint [64];
        snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", 9000 + i);
        jace_msg_name_supernode (msg, endpoint);
    }
    jace_msg_t *copy = s_round_trip (msg);
    bool named = copy != NULL;
    for (int i = 0; copy && i < JACE_SUPERNODES_NAMED_MAX; i++) {
        char endpoint [64];
        snprintf (endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", 9000 + i);
        const char *got = jace_msg_named_supernode (copy, (size_t) i);
        named &= got && streq (got, endpoint);
    }
    ok (named && !jace_msg_named_supernode (copy,
                                            JACE_SUPERNODES_NAMED_MAX),
        "a WELCOME names at most JACE_SUPERNODES_NAMED_MAX super-nodes, in "
        "order, over the wire");
    jace_msg_destroy (&copy);
    jace_msg_destroy (&msg);

    const char *forged [] = { "udp://1.2.3.4:5", "tcp://", "tcp://a b:1",
                              "inproc://x", "tcp://h:1\"", "", "tcp://h:1\t" };
    bool refused = true;
    for (size_t i = 0; i < sizeof forged / sizeof forged [0]; i++) {
        msg = jace_msg_new (JACE_MSG_STATUS_REPLY);
        jace_msg_set_param (msg, "supernode/1", forged [i]);
        refused &= jace_msg_named_supernode (msg, 0) == NULL;
        jace_msg_destroy (&msg);
    }
    msg = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_param (msg, "supernode/2", "ipc:///tmp/sn");
    ok (refused && !jace_msg_named_supernode (msg, 0)
        && streq (jace_msg_named_supernode (msg, 1), "ipc:///tmp/sn"),
        "a named super-node that is no plain tcp:// or ipc:// endpoint is "
        "not read; one after a gap is");
    jace_msg_destroy (&msg);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (73);
    test_node_names ();
    test_node_apps ();
    test_named_supernodes ();
    test_every_type_round_trips ();
    test_fields_survive ();
    test_payload_filled_in_place ();
    test_large_headers ();
    test_malformed_input_is_rejected ();
    test_sockets ();
    test_protocol3_fields ();
    test_protocol4_fields ();
    test_seals ();
    test_identities ();
    ok (streq (jace_msg_type_name (JACE_MSG_DATA), "DATA")
        && streq (jace_msg_type_name (0), "?")
        && streq (jace_msg_type_name (999), "?"), "type names");
    return tap_done ();
}
