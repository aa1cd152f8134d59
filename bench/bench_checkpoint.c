/*  =========================================================================
    bench_checkpoint - what one checkpoint costs the daemons, by state size

    The end-to-end overhead of checkpoints (bench_faults.sh, on / off) is
    smaller than the run-to-run noise of asynchronous jobs on a shared
    machine, so this measures the work itself: the sender builds one
    checksummed copy and forwards one more (checkpoint/copies = 2), each
    holder checks the checksum of the copy it keeps.  Printed per
    checkpoint and as a share of the default period (2 s).
    =========================================================================
*/
#include "jace_checkpoint.h"

#define PERIOD_SEC 2.0

static double
s_seconds_per_checkpoint (const double *state, size_t bytes, int rounds)
{
    char reason [256];
    int64_t start = zclock_usecs ();
    for (int i = 0; i < rounds; i++) {
        jace_msg_t *copy = jace_checkpoint_new ("bench", "job-bench", 1, 1,
                                                i, state, bytes);
        jace_msg_t *second = jace_checkpoint_forward (copy, "bench");
        //  Both holders check theirs.
        if (jace_checkpoint_check (copy, reason, sizeof reason)
        ||  jace_checkpoint_check (second, reason, sizeof reason))
            fprintf (stderr, "bench_checkpoint: %s\n", reason);
        jace_msg_destroy (&second);
        jace_msg_destroy (&copy);
    }
    return (zclock_usecs () - start) / 1e6 / rounds;
}

int
main (void)
{
    size_t largest = 16 << 20;
    double *state = (double *) malloc (largest);
    assert (state);
    for (size_t i = 0; i < largest / sizeof (double); i++)
        state [i] = (double) i;
    printf ("%12s %14s %12s %16s\n", "state", "per checkpoint", "MB/s",
            "share of 2 s");
    for (size_t bytes = 64 << 10; bytes <= largest; bytes *= 4) {
        int rounds = (int) ((256 << 20) / bytes);
        s_seconds_per_checkpoint (state, bytes, 1);      //  Warm up
        double seconds = s_seconds_per_checkpoint (state, bytes, rounds);
        printf ("%9zu KiB %11.3f ms %12.0f %15.3f%%\n", bytes >> 10,
                seconds * 1e3, bytes / seconds / 1e6,
                100 * seconds / PERIOD_SEC);
    }
    free (state);
    return 0;
}
