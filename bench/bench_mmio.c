/*  =========================================================================
    bench_mmio - how fast and how lean mmio_read_system reads a file

    bench_mmio MATRIX [RHS] reads the system once in a fresh process and
    prints the file size, the wall and CPU seconds, the parse rate, the
    peak resident memory (getrusage) and the CSR size it is compared with.
    Make inputs with jace-mmgen; results go in BENCHMARKS.md.
    =========================================================================
*/
#include "solvers.h"
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static double
s_seconds (struct timeval time)
{
    return (double) time.tv_sec + 1e-6 * (double) time.tv_usec;
}

int
main (int argc, char *argv [])
{
    if (argc < 2 || argc > 3) {
        fprintf (stderr, "usage: bench_mmio MATRIX [RHS]\n");
        return 2;
    }
    struct stat status;
    int64_t bytes = stat (argv [1], &status) == 0 ? status.st_size : 0;
    struct timespec start, stop;
    char error [512];
    csr_t *A = NULL;
    double *b = NULL;
    clock_gettime (CLOCK_MONOTONIC, &start);
    if (mmio_read_system (argv [1], argc == 3 ? argv [2] : NULL, &A, &b,
                          error, sizeof (error))) {
        fprintf (stderr, "bench_mmio: %s\n", error);
        return 1;
    }
    clock_gettime (CLOCK_MONOTONIC, &stop);
    struct rusage usage;
    getrusage (RUSAGE_SELF, &usage);
    double wall = (double) (stop.tv_sec - start.tv_sec)
                + 1e-9 * (double) (stop.tv_nsec - start.tv_nsec);
    double cpu = s_seconds (usage.ru_utime) + s_seconds (usage.ru_stime);
    double mb = 1e-6 * (double) bytes;
    double csr = 1e-6 * (12.0 * (double) A->nnz
                         + 8.0 * ((double) A->nrows + 1));
    double rss = 1.024e-3 * (double) usage.ru_maxrss;     //  KiB to MB
    printf ("file %.1f MB, %" PRId32 " rows, %" PRId64 " entries\n"
            "read %.2f s wall, %.2f s CPU: %.0f MB/s of CPU\n"
            "peak RSS %.1f MB, CSR %.1f MB, b %.1f MB: RSS / CSR = %.2f\n",
            mb, A->nrows, A->nnz, wall, cpu, mb / cpu, rss, csr,
            8e-6 * A->nrows, rss / csr);
    csr_destroy (&A);
    free (b);
    return 0;
}
