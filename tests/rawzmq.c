/*  =========================================================================
    rawzmq - a hostile peer: every malformed thing a socket can receive

    Test helper.  Connects a raw ZeroMQ socket (DEALER, or PUSH for data
    endpoints) to ENDPOINT and sends garbage, truncated and oversized
    headers, a wrong version, an unknown type, wrong field types, frames
    that disagree with the header, well-formed messages of the wrong kind,
    then disconnects in the middle of a multipart message.

        rawzmq ENDPOINT dealer|push [SERVER_KEY_FILE CLIENT_CERT_FILE]
        rawzmq ENDPOINT forge JOB TASK

    forge: push damaged checkpoints of task TASK of job JOB to a daemon's
    data endpoint, each tagged newer than any real copy (epoch 1000,
    iteration 999999): one whose bytes were changed after the checksum,
    one cut short, one relabelled to another task.  A daemon that kept
    or restored any of them would show iteration 999999.
    =========================================================================
*/
#include "jace_msg.h"
#include "jace_checkpoint.h"

#include <msgpack.h>

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

static int
s_forge (const char *endpoint, const char *job, int64_t task)
{
    zsock_t *sock = zsock_new (ZMQ_PUSH);
    zsock_set_linger (sock, 1000);
    if (zsock_connect (sock, "%s", endpoint))
        return 2;
    double state [512];
    for (size_t i = 0; i < 512; i++)
        state [i] = 1e6 + (double) i;
    //  Damaged after the checksum was taken.
    jace_msg_t *copy = jace_checkpoint_new ("forger", job, task, 1000, 999999,
                                            state, sizeof state);
    state [7] = -1;
    jace_msg_t *damaged = jace_msg_new (JACE_MSG_CKPT);
    jace_msg_set_sender (damaged, "forger");
    jace_msg_set_job (damaged, job);
    jace_msg_set_task (damaged, task);
    jace_msg_set_epoch (damaged, 1000);
    jace_msg_set_iteration (damaged, 999999);
    jace_msg_set_checksum (damaged, jace_msg_checksum (copy));
    jace_msg_add_payload (damaged, JACE_PAYLOAD_BYTES, state, sizeof state);
    jace_msg_send (&damaged, sock);
    //  Cut short: the first half of the bytes only.
    jace_msg_t *short_copy = jace_msg_new (JACE_MSG_CKPT);
    jace_msg_set_sender (short_copy, "forger");
    jace_msg_set_job (short_copy, job);
    jace_msg_set_task (short_copy, task);
    jace_msg_set_epoch (short_copy, 1000);
    jace_msg_set_iteration (short_copy, 999999);
    jace_msg_set_checksum (short_copy, jace_msg_checksum (copy));
    jace_msg_add_payload (short_copy, JACE_PAYLOAD_BYTES, state,
                          sizeof state / 2);
    jace_msg_send (&short_copy, sock);
    //  A valid copy of task + 1 relabelled as task's.
    jace_msg_t *other = jace_checkpoint_new ("forger", job, task + 1, 1000,
                                             999999, state, sizeof state);
    jace_msg_set_task (other, task);
    jace_msg_send (&other, sock);
    jace_msg_destroy (&copy);
    zclock_sleep (300);
    zsock_destroy (&sock);
    return 0;
}

int
main (int argc, char *argv [])
{
    zsys_set_logstream (stderr);
    if (argc == 5 && streq (argv [2], "forge"))
        return s_forge (argv [1], argv [3], atoll (argv [4]));
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
