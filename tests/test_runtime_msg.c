/*  =========================================================================
    test_runtime_msg - the message codec: round trips and rejected input

    Every type survives encode/decode; every malformed shape a peer could
    send (garbage, truncation, wrong version or type, wrong field count or
    type, payload sizes that disagree with the header, oversize fields) is
    rejected with a reason and never aborts.
    =========================================================================
*/
#include "jace_msg.h"
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
                         .state = JACE_NODE_WORKING, .task = 6 };
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
        && jace_msg_node (copy, 0)->task == 6,
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

static void
s_wrong_field_type (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 4);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_int (pk, 12);
    msgpack_pack_array (pk, 0);
}

static void
s_long_id (msgpack_packer *pk)
{
    char id [JACE_ID_MAX + 10];
    memset (id, 'a', sizeof id);
    msgpack_pack_array (pk, 4);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_BYE);
    msgpack_pack_str_with_body (pk, id, sizeof id);
    msgpack_pack_array (pk, 0);
}

static void
s_oversize_payload (msgpack_packer *pk)
{
    msgpack_pack_array (pk, 8);
    msgpack_pack_int (pk, JACE_MSG_VERSION);
    msgpack_pack_int (pk, JACE_MSG_DATA);
    msgpack_pack_str_with_body (pk, "j", 1);
    for (int i = 0; i < 4; i++)
        msgpack_pack_int (pk, 0);
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

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (31);
    test_every_type_round_trips ();
    test_fields_survive ();
    test_large_headers ();
    test_malformed_input_is_rejected ();
    test_sockets ();
    ok (streq (jace_msg_type_name (JACE_MSG_DATA), "DATA")
        && streq (jace_msg_type_name (0), "?")
        && streq (jace_msg_type_name (999), "?"), "type names");
    return tap_done ();
}
