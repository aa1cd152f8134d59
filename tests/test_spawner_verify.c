/*  =========================================================================
    test_spawner_verify - when the next snapshot may begin after one that
    failed

    A young job waits an eighth of the time it has run (at least 2 ms),
    an old one 100 ms, while its residual falls by a quarter; one whose
    residual does not fall waits twice as long each time.  A 70 ms job
    used to wait 100 ms after a first snapshot 10% over its tolerance,
    and ended 2.3x later.  While a snapshot is gathered, none may begin.
    After a replacement restores, the failures behind the back-off were
    the loss's: the next may begin at once.
    =========================================================================
*/
#include "spawner_verify.h"
#include "tap.h"

#include <unistd.h>

#define ROWS 16                 //  A 4 x 4 Poisson grid, one task

//  A RESULT of snapshot `snapshot` whose values are all `value`.
static jace_msg_t *
s_result (int64_t snapshot, double value)
{
    double x [ROWS];
    for (int i = 0; i < ROWS; i++)
        x [i] = value;
    jace_msg_t *result = jace_msg_new (JACE_MSG_RESULT);
    jace_msg_set_count (result, snapshot);
    jace_msg_set_first (result, 0);
    jace_msg_add_payload (result, JACE_PAYLOAD_F64, x, ROWS);
    return result;
}

//  Gather and check one snapshot of x = value at `now`; returns the wait
//  until the next may begin (-1 if it passed).
static int64_t
s_snapshot (spawner_verify_t *verify, double value, int64_t now)
{
    int64_t snapshot = spawner_verify_begin (verify);
    jace_msg_t *result = s_result (snapshot, value);
    spawner_verify_on_result (verify, 0, result);
    jace_msg_destroy (&result);
    if (spawner_verify_check (verify, now))
        return -1;
    return spawner_verify_wait (verify, now);
}

int
main (void)
{
    zsys_init ();
    tap_plan (11);
    char path [] = "/tmp/jace-verify.XXXXXX";
    int fd = mkstemp (path);
    assert (fd >= 0);
    const char *text = "job\n    application = \"multisplit\"\n"
                       "    tasks = 1\n    tolerance = 1e-12\n"
                       "problem\n    kind = \"poisson2d\"\n    n = 4\n";
    assert (write (fd, text, strlen (text)) == (ssize_t) strlen (text));
    close (fd);
    char reason [512] = "";
    spawner_job_t *job = spawner_job_load (path, NULL, reason, sizeof reason);
    unlink (path);
    if (!job)
        diag ("%s", reason);
    int64_t first_row [2] = { 0, ROWS };
    spawner_verify_t *verify = spawner_verify_new (job, 1, first_row);
    int64_t created = zclock_mono ();
    ok (spawner_verify_wait (verify, created) == 0,
        "the first snapshot may begin at once");

    //  80 ms into the job: an eighth is 10 ms
    spawner_verify_begin (verify);
    ok (spawner_verify_wait (verify, created) == -1,
        "none may begin while one is gathered");
    spawner_verify_abandon (verify);
    int64_t wait = s_snapshot (verify, 0, created + 80);
    ok (wait >= 2 && wait <= 10, "80 ms into a job, a failed snapshot "
        "is followed within 10 ms");
    diag ("waited %lld ms", (long long) wait);
    //  The residual did not fall: twice as long
    int64_t again = s_snapshot (verify, 0, created + 100);
    is_int (again, 2 * wait, "a residual that did not fall doubles it");
    //  Ten seconds in, the residual falling: 100 ms
    is_int (s_snapshot (verify, 0.5, created + 10000), 100,
            "ten seconds in, with the residual falling: 100 ms");
    //  Failing twice more: 200, then 400 ms; a replacement restores, and
    //  the next may begin at once, the back-off from its least again
    s_snapshot (verify, 0.5, created + 10100);
    is_int (s_snapshot (verify, 0.5, created + 10300), 400,
            "a residual that stopped falling: 400 ms");
    spawner_verify_disturbed (verify, created + 10310);
    ok (spawner_verify_wait (verify, created + 10310) == 0,
        "after a replacement restored, a snapshot may begin at once");
    is_int (s_snapshot (verify, 0.5, created + 10320), 100,
            "and one failing then waits the least again, 100 ms");

    //  A task lost after its block came need not cost the snapshot
    int64_t snapshot = spawner_verify_begin (verify);
    ok (!spawner_verify_has_block (verify, 0),
        "a block not yet in is not held");
    jace_msg_t *result = s_result (snapshot, 1);
    spawner_verify_on_result (verify, 0, result);
    jace_msg_destroy (&result);
    ok (spawner_verify_has_block (verify, 0), "a block in is held");
    ok (spawner_verify_check (verify, created + 10500),
        "the solution passes, and ends the waits");
    spawner_verify_destroy (&verify);
    spawner_job_destroy (&job);
    return tap_done ();
}
