/*  =========================================================================
    daemon_power - what a node can compute, measured at start
    =========================================================================
*/
#include "daemon_power.h"

#include <czmq.h>
#include <cblas.h>

//  Matrix side for the benchmark: big enough to run at full speed, small
//  enough (3 * 2 MiB) to cost nothing.
#define POWER_N 256

double
daemon_power_measure (int budget_msec)
{
    size_t n = POWER_N;
    double *a = (double *) malloc (n * n * sizeof (double));
    double *b = (double *) malloc (n * n * sizeof (double));
    double *c = (double *) calloc (n * n, sizeof (double));
    assert (a && b && c);
    for (size_t i = 0; i < n * n; i++) {
        a [i] = (double) (i % 7) / 7;
        b [i] = (double) (i % 5) / 5;
    }
    //  One warm-up run, then as many as fit in the budget.
    cblas_dgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) n,
                 (int) n, 1.0, a, (int) n, b, (int) n, 0.0, c, (int) n);
    int64_t start = zclock_usecs ();
    int64_t runs = 0;
    int64_t elapsed = 0;
    do {
        cblas_dgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n,
                     (int) n, (int) n, 1.0, a, (int) n, b, (int) n, 0.0, c,
                     (int) n);
        runs++;
        elapsed = zclock_usecs () - start;
    } while (elapsed < (int64_t) budget_msec * 1000);
    free (a);
    free (b);
    free (c);
    double flops = 2.0 * (double) n * (double) n * (double) n * (double) runs;
    return flops / ((double) elapsed * 1e3);
}

int64_t
daemon_power_cores (void)
{
    long cores = sysconf (_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

int64_t
daemon_power_memory_mib (void)
{
    long pages = sysconf (_SC_PHYS_PAGES);
    long page_size = sysconf (_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0)
        return 0;
    return (int64_t) pages * page_size / (1024 * 1024);
}
