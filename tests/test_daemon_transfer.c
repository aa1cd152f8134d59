/*  =========================================================================
    test_daemon_transfer - task data declared in ASSIGN params, received
    in CHUNKs

    No sockets: the declaration's checks, then chunks in order, out of
    order, misaddressed and oversized, and the blocks the task API reads.
    =========================================================================
*/
#include "daemon_transfer.h"
#include "tap.h"

#include <inttypes.h>

static jace_msg_t *
s_assign (const char *declared)
{
    jace_msg_t *assign = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (assign, "job-data");
    jace_msg_set_task (assign, 3);
    jace_msg_set_epoch (assign, 2);
    if (declared)
        jace_msg_set_param (assign, "block/data", declared);
    char digest [JACE_DIGEST_TEXT + 1];
    memset (digest, 'a', JACE_DIGEST_TEXT);
    digest [JACE_DIGEST_TEXT] = 0;
    jace_msg_set_param (assign, "block/data/digest", digest);
    return assign;
}

static void
s_declare (jace_msg_t *assign, int index, int kind, int64_t length)
{
    char key [64], value [32];
    snprintf (key, sizeof key, "block/data/%d/kind", index);
    snprintf (value, sizeof value, "%d", kind);
    jace_msg_set_param (assign, key, value);
    snprintf (key, sizeof key, "block/data/%d/length", index);
    snprintf (value, sizeof value, "%" PRId64, length);
    jace_msg_set_param (assign, key, value);
}

static jace_msg_t *
s_chunk (const char *job, int64_t block, int64_t offset, int kind,
         const void *data, size_t count)
{
    jace_msg_t *chunk = jace_msg_new (JACE_MSG_CHUNK);
    jace_msg_set_job (chunk, job);
    jace_msg_set_task (chunk, 3);
    jace_msg_set_epoch (chunk, 2);
    jace_msg_set_block (chunk, block);
    jace_msg_set_offset (chunk, offset);
    jace_msg_add_payload (chunk, (jace_payload_kind_t) kind, data, count);
    return chunk;
}

static int
s_add (daemon_transfer_t *transfer, jace_msg_t *chunk)
{
    char reason [256] = "";
    int rc = daemon_transfer_add (transfer, chunk, reason, sizeof reason);
    if (rc)
        diag ("%s", reason);
    jace_msg_destroy (&chunk);
    return rc;
}

//  Returns the check's code, or -1 if the declaration passed.
static int
s_check (jace_msg_t *assign, uint64_t limit)
{
    char reason [256] = "";
    uint64_t bytes = 0;
    jace_refuse_code_t code = JACE_REFUSE_DIVERGED;
    int rc = daemon_transfer_check (assign, limit, &bytes, &code, reason,
                                    sizeof reason);
    if (rc)
        diag ("refused: %s", reason);
    jace_msg_destroy (&assign);
    return rc ? (int) code : -1;
}

static void
s_test_declarations (void)
{
    jace_msg_t *assign = s_assign (NULL);
    ok (!daemon_transfer_declared (assign), "no block/data: nothing to "
        "receive");
    jace_msg_destroy (&assign);
    is_int (s_check (s_assign ("0"), 1 << 20), JACE_REFUSE_FAILED,
            "zero blocks is refused as a failure");
    is_int (s_check (s_assign ("17"), 1 << 20), JACE_REFUSE_FAILED,
            "17 blocks is refused as a failure");
    is_int (s_check (s_assign ("two"), 1 << 20), JACE_REFUSE_FAILED,
            "a block count that is no number is refused");
    assign = s_assign ("1");
    s_declare (assign, 0, 4, 10);
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_FAILED,
            "an unknown kind is refused");
    assign = s_assign ("2");
    s_declare (assign, 0, 1, 10);
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_FAILED,
            "a missing block declaration is refused");
    assign = s_assign ("1");
    s_declare (assign, 0, 1, -1);
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_FAILED,
            "a negative length is refused");
    assign = s_assign ("1");
    s_declare (assign, 0, 1, (int64_t) 1 << 60);
    is_int (s_check (assign, UINT64_MAX), JACE_REFUSE_FAILED,
            "a block no frame can carry is refused");
    assign = s_assign ("1");
    s_declare (assign, 0, 3, 10);
    double ignored = 0;
    jace_msg_add_payload (assign, JACE_PAYLOAD_F64, &ignored, 1);
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_FAILED,
            "declared data and payloads together are refused");
    assign = s_assign ("2");
    s_declare (assign, 0, 1, 100000);
    s_declare (assign, 1, 3, 300000);
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_BUSY,
            "1.1 MB over a 1 MiB limit is refused as busy");
    assign = s_assign ("2");
    s_declare (assign, 0, 1, 100000);
    s_declare (assign, 1, 3, 200000);
    is_int (s_check (assign, 1 << 20), -1, "1 MB under a 1 MiB limit passes");
    assign = s_assign ("1");
    s_declare (assign, 0, 1, 10);
    jace_msg_set_param (assign, "block/data/digest", "abc");
    is_int (s_check (assign, 1 << 20), JACE_REFUSE_FAILED,
            "a digest that is not 64 hex digits is refused");
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (27);
    s_test_declarations ();

    //  Three blocks: 300000 doubles (2.4 MB), none, 5 bytes.
    enum { DOUBLES = 300000, PIECE = 131072 };
    double *values = (double *) malloc (DOUBLES * sizeof (double));
    for (size_t i = 0; i < DOUBLES; i++)
        values [i] = (double) i * 0.5 - 7;
    jace_msg_t *assign = s_assign ("3");
    s_declare (assign, 0, 1, DOUBLES);
    s_declare (assign, 1, 2, 0);
    s_declare (assign, 2, 3, 5);
    daemon_transfer_t *transfer = daemon_transfer_new (&assign);
    ok (assign == NULL && daemon_transfer_total (transfer)
                          == DOUBLES * 8 + 5, "transfer of 2.4 MB started");

    ok (s_add (transfer, s_chunk ("other", 0, 0, 1, values, 10))
        == DAEMON_CHUNK_DROPPED, "a chunk of another job is dropped");
    ok (s_add (transfer, s_chunk ("job-data", 0, 0, 3, "abc", 3))
        == DAEMON_CHUNK_DROPPED, "a chunk of the wrong kind is dropped");
    ok (s_add (transfer, s_chunk ("job-data", 0, 0, 1, values, PIECE + 1))
        == DAEMON_CHUNK_DROPPED, "a chunk over 1 MiB is dropped");
    ok (s_add (transfer, s_chunk ("job-data", 2, 3, 3, "abc", 3))
        == DAEMON_CHUNK_DROPPED, "a chunk past its block's end is dropped");
    size_t sent = 0;
    bool kept = true;
    while (sent < DOUBLES) {
        size_t count = DOUBLES - sent < PIECE ? DOUBLES - sent : PIECE;
        kept &= s_add (transfer, s_chunk ("job-data", 0, (int64_t) sent, 1,
                                          values + sent, count)) == 0;
        sent += count;
    }
    ok (kept && daemon_transfer_received (transfer) == DOUBLES * 8,
        "block 0 arrives in three pieces");
    ok (s_add (transfer, s_chunk ("job-data", 0, 0, 1, values, PIECE))
        == DAEMON_CHUNK_DUPLICATE
        && daemon_transfer_received (transfer) == DOUBLES * 8,
        "a piece sent again is a duplicate and changes nothing");
    ok (!daemon_transfer_complete (transfer), "not complete without block 2");
    ok (s_add (transfer, s_chunk ("job-data", 2, 0, 3, "hello", 5)) == 0
        && daemon_transfer_complete (transfer),
        "the empty block is skipped and block 2 completes the data");
    char reason [256] = "";
    ok (daemon_transfer_verify (transfer, reason, sizeof reason) == -1
        && strstr (reason, "digest"), "data that does not hash to the "
        "declared digest fails the check");
    jace_msg_t *whole = daemon_transfer_finish (&transfer);
    double *copy = (double *) malloc (DOUBLES * sizeof (double));
    jace_msg_payload_copy (whole, 0, copy);
    ok (transfer == NULL && jace_msg_payload_count (whole) == 3
        && jace_msg_payload_length (whole, 1) == 0
        && memcmp (copy, values, DOUBLES * sizeof (double)) == 0
        && memcmp (jace_msg_payload_data (whole, 2), "hello", 5) == 0,
        "the ASSIGN holds the three blocks intact");
    //  The same data declared with its own digest passes
    char digest [JACE_DIGEST_TEXT + 1];
    jace_msg_payload_digest (whole, digest);
    assign = s_assign ("3");
    s_declare (assign, 0, 1, DOUBLES);
    s_declare (assign, 1, 2, 0);
    s_declare (assign, 2, 3, 5);
    jace_msg_set_param (assign, "block/data/digest", digest);
    transfer = daemon_transfer_new (&assign);
    s_add (transfer, s_chunk ("job-data", 0, 0, 1, values, PIECE));
    s_add (transfer, s_chunk ("job-data", 0, PIECE, 1, values + PIECE,
                              PIECE));
    s_add (transfer, s_chunk ("job-data", 0, 2 * PIECE, 1,
                              values + 2 * PIECE, DOUBLES - 2 * PIECE));
    s_add (transfer, s_chunk ("job-data", 2, 0, 3, "hello", 5));
    ok (daemon_transfer_complete (transfer)
        && daemon_transfer_verify (transfer, reason, sizeof reason) == 0,
        "the same data with its own digest passes the check");
    daemon_transfer_destroy (&transfer);
    jace_msg_destroy (&whole);

    assign = s_assign ("1");
    s_declare (assign, 0, 1, 10);
    transfer = daemon_transfer_new (&assign);
    ok (s_add (transfer, s_chunk ("job-data", 0, 5, 1, values, 5))
        == DAEMON_CHUNK_OUT_OF_ORDER, "a chunk that skips ahead is out of "
        "order");
    ok (s_add (transfer, s_chunk ("job-data", 0, 0, 1, values, 4)) == 0
        && s_add (transfer, s_chunk ("job-data", 0, 2, 1, values, 4))
        == DAEMON_CHUNK_OUT_OF_ORDER, "a chunk that overlaps the next piece "
        "is out of order, not a duplicate");
    daemon_transfer_destroy (&transfer);
    ok (transfer == NULL, "an unfinished transfer is destroyed");
    free (values);
    free (copy);
    return tap_done ();
}
