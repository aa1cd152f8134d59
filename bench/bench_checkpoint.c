/*  =========================================================================
    bench_checkpoint - what one checkpoint costs the daemons, by state size

    The end-to-end overhead of checkpoints (bench_faults.sh, on / off) is
    smaller than the run-to-run noise of asynchronous jobs on a shared
    machine, so this measures the work itself: the sender builds one
    sealed copy and forwards one more (checkpoint/copies = 2), each holder
    checks the seal of the copy it keeps.  Printed per checkpoint and as a
    share of the default period (2 s).

    Beside it, in the same run, the same work with the unkeyed XXH3
    checksum copies carried before seals (issue 12): what authenticating
    checkpoints costs.
    =========================================================================
*/
#include "jace_checkpoint.h"

#include <xxhash.h>

#define PERIOD_SEC 2.0

static double
s_seconds_sealed (const double *state, size_t bytes, int rounds,
                  const jace_key_t *key)
{
    char reason [256];
    int64_t start = zclock_usecs ();
    for (int i = 0; i < rounds; i++) {
        jace_msg_t *copy = jace_checkpoint_new ("bench", "job-bench", 1, 1,
                                                i, state, bytes, key);
        jace_msg_t *second = jace_checkpoint_forward (copy, "bench");
        //  Both holders check theirs.
        if (jace_checkpoint_check (copy, key, reason, sizeof reason)
        ||  jace_checkpoint_check (second, key, reason, sizeof reason))
            fprintf (stderr, "bench_checkpoint: %s\n", reason);
        jace_msg_destroy (&second);
        jace_msg_destroy (&copy);
    }
    return (zclock_usecs () - start) / 1e6 / rounds;
}

//  The same copies with XXH3 over the bytes in place of the seal: one
//  hash by the sender, one check by each of the two holders.
static double
s_seconds_xxh3 (const double *state, size_t bytes, int rounds)
{
    volatile uint64_t sink = 0;
    int64_t start = zclock_usecs ();
    for (int i = 0; i < rounds; i++) {
        jace_msg_t *copy = jace_checkpoint_begin ("bench", "job-bench", 1, 1,
                                                  i, state, bytes);
        size_t size;
        const void *data = jace_checkpoint_bytes (copy, &size);
        sink += XXH3_64bits (data, size);
        jace_msg_t *second = jace_checkpoint_forward (copy, "bench");
        sink += XXH3_64bits (jace_checkpoint_bytes (copy, &size), size);
        sink += XXH3_64bits (jace_checkpoint_bytes (second, &size), size);
        jace_msg_destroy (&second);
        jace_msg_destroy (&copy);
    }
    (void) sink;
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
    jace_key_t key;
    jace_key_random (&key);
    printf ("%12s %16s %10s %14s %16s %8s\n", "state", "sealed (BLAKE2b)",
            "MB/s", "share of 2 s", "unkeyed (XXH3)", "ratio");
    for (size_t bytes = 64 << 10; bytes <= largest; bytes *= 4) {
        int rounds = (int) ((256 << 20) / bytes);
        s_seconds_sealed (state, bytes, 1, &key);       //  Warm up
        s_seconds_xxh3 (state, bytes, 1);
        double sealed = s_seconds_sealed (state, bytes, rounds, &key);
        double plain = s_seconds_xxh3 (state, bytes, rounds);
        printf ("%9zu KiB %13.3f ms %10.0f %13.3f%% %13.3f ms %7.2fx\n",
                bytes >> 10, sealed * 1e3, bytes / sealed / 1e6,
                100 * sealed / PERIOD_SEC, plain * 1e3, sealed / plain);
    }
    free (state);
    return 0;
}
