/*  =========================================================================
    test_spawner_stream - a task's data in chunks, with a window

    The spawner side of CHUNK / CHUNK_ACK over an inproc pair: blocks of
    every kind arrive whole and in order, no chunk is over 1 MiB, never more
    than the window is unacknowledged, nothing is sent past the end, and
    every chunk is sealed with the job key (and only with it).
    =========================================================================
*/
#include "tap.h"
#include "spawner_stream.h"

#define DOUBLES (450 * 1000)        //  3.4 MiB: four chunks
#define WINDOW_MOST (4 * JACE_CHUNK_BYTES)

//  Receive every chunk queued: returns their bytes, and the offset of the
//  first in *first_offset (if asked).
static int64_t
s_drain (zsock_t *in, int64_t *first_offset)
{
    int64_t bytes = 0;
    while (zsock_events (in) & ZMQ_POLLIN) {
        jace_msg_t *chunk = jace_msg_recv (in, NULL, 0, NULL, 0);
        if (first_offset && *first_offset < 0)
            *first_offset = jace_msg_offset (chunk);
        bytes += (int64_t) jace_msg_payload_length (chunk, 0)
               * (jace_msg_payload_kind (chunk, 0) == JACE_PAYLOAD_BYTES
                  ? 1 : 8);
        jace_msg_destroy (&chunk);
    }
    return bytes;
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (14);
    zsock_t *out = zsock_new_pair ("@inproc://stream");
    zsock_t *in = zsock_new_pair (">inproc://stream");
    double *values = (double *) malloc (DOUBLES * sizeof (double));
    int64_t indices [10];
    for (size_t i = 0; i < DOUBLES; i++)
        values [i] = (double) i * 0.5 - 7;
    for (int i = 0; i < 10; i++)
        indices [i] = -i * 1000003LL;
    jace_msg_t *data = jace_msg_new (JACE_MSG_CHUNK);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, values, DOUBLES);
    jace_msg_add_payload (data, JACE_PAYLOAD_BYTES, "", 0);
    jace_msg_add_payload (data, JACE_PAYLOAD_I64, indices, 10);
    spawner_stream_t *stream = spawner_stream_new (&data);
    ok (stream && !data, "a stream takes the data");
    ok (spawner_stream_total (stream) == DOUBLES * 8 + 80,
        "it counts every byte of every block");

    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    spawner_stream_declare (stream, assign);
    ok (streq (jace_msg_param (assign, "block/data"), "3")
        && streq (jace_msg_param (assign, "block/data/1/kind"), "3")
        && streq (jace_msg_param (assign, "block/data/2/length"), "10"),
        "the ASSIGN declares kinds and lengths");
    jace_msg_destroy (&assign);

    unsigned char key [JACE_KEY_BYTES], other [JACE_KEY_BYTES];
    for (int i = 0; i < JACE_KEY_BYTES; i++) {
        key [i] = (unsigned char) (i * 7 + 1);
        other [i] = (unsigned char) (i * 7 + 2);
    }
    double *got = (double *) calloc (DOUBLES, sizeof (double));
    int64_t got_indices [10] = { 0 };
    int64_t received = 0, most_outstanding = 0, biggest = 0;
    bool in_order = true, labelled = true, sealed = true, done = false;
    size_t expect_block = 0, expect_offset = 0;
    for (int round = 0; round < 100 && !done; round++) {
        spawner_stream_send (stream, "job-x", 3, 2, key, out);
        int64_t sent_now = received;
        while (zsock_events (in) & ZMQ_POLLIN) {
            jace_msg_t *chunk = jace_msg_recv (in, NULL, 0, NULL, 0);
            size_t block = (size_t) jace_msg_block (chunk);
            size_t offset = (size_t) jace_msg_offset (chunk);
            size_t count = jace_msg_payload_length (chunk, 0);
            size_t element = block == 1 ? 1 : 8;
            labelled &= streq (jace_msg_job (chunk), "job-x")
                     && jace_msg_task (chunk) == 3
                     && jace_msg_epoch (chunk) == 2;
            sealed &= jace_msg_sealed (chunk, key)
                   && !jace_msg_sealed (chunk, other);
            if (expect_block == 1)
                expect_block = 2;   //  The empty block has no chunk
            in_order &= block == expect_block && offset == expect_offset;
            if (block == 0)
                jace_msg_payload_copy (chunk, 0, got + offset);
            else
                jace_msg_payload_copy (chunk, 0, got_indices + offset);
            biggest = (int64_t) (count * element) > biggest
                    ? (int64_t) (count * element) : biggest;
            sent_now += (int64_t) (count * element);
            expect_offset = offset + count;
            if (block == 0 && expect_offset == DOUBLES) {
                expect_block = 1;
                expect_offset = 0;
            }
            jace_msg_destroy (&chunk);
        }
        most_outstanding = sent_now - received > most_outstanding
                         ? sent_now - received : most_outstanding;
        received = sent_now;
        done = spawner_stream_ack (stream, received);
    }
    ok (done, "every byte arrives and is acknowledged");
    ok (in_order, "chunks come in order, block by block");
    ok (labelled, "each chunk names the job, task and epoch");
    ok (sealed, "each chunk is sealed with the job key, not another");
    ok (biggest <= JACE_CHUNK_BYTES, "no chunk is over 1 MiB");
    ok (most_outstanding <= WINDOW_MOST,
        "never more than the window is unacknowledged");
    ok (memcmp (got, values, DOUBLES * sizeof (double)) == 0
        && memcmp (got_indices, indices, sizeof indices) == 0,
        "the blocks arrive intact");
    ok (spawner_stream_ack (stream, 0),
        "a late, older acknowledgement does not undo the progress");
    spawner_stream_send (stream, "job-x", 3, 2, key, out);
    ok (!(zsock_events (in) & ZMQ_POLLIN), "nothing is sent past the end");

    spawner_stream_destroy (&stream);
    spawner_stream_destroy (&stream);

    //  A relay died after one chunk was acknowledged: the rest again
    data = jace_msg_new (JACE_MSG_CHUNK);
    jace_msg_add_payload (data, JACE_PAYLOAD_F64, values, DOUBLES);
    jace_msg_add_payload (data, JACE_PAYLOAD_I64, indices, 10);
    stream = spawner_stream_new (&data);
    spawner_stream_send (stream, "job-x", 3, 2, key, out);
    int64_t first_time = s_drain (in, NULL);
    spawner_stream_ack (stream, JACE_CHUNK_BYTES);
    spawner_stream_rewind (stream);
    spawner_stream_send (stream, "job-x", 3, 2, key, out);
    int64_t first_offset = -1;
    int64_t again = s_drain (in, &first_offset);
    ok (first_time == DOUBLES * 8 + 80
        && first_offset == JACE_CHUNK_BYTES / 8
        && again == DOUBLES * 8 + 80 - JACE_CHUNK_BYTES,
        "rewound, the stream sends again from the acknowledged byte on");
    ok (!spawner_stream_ack (stream, DOUBLES * 8)
        && spawner_stream_ack (stream, DOUBLES * 8 + 80),
        "and its acknowledgements count as before");
    spawner_stream_destroy (&stream);
    jace_msg_t *empty = jace_msg_new (JACE_MSG_CHUNK);
    assert (spawner_stream_new (&empty) == NULL && !empty);
    free (values);
    free (got);
    zsock_destroy (&in);
    zsock_destroy (&out);
    return tap_done ();
}
