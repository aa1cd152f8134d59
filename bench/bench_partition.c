/*  =========================================================================
    bench_partition - how the partition alone changes block Jacobi

    Runs synchronous multisplitting (multisplit_serial, every block in one
    process, the inner solves a distributed task makes) on the NAS-CG-like
    matrix, with row blocks in proportion to the powers given, and prints
    the outer iterations to the tolerance.  A job's mapping decides which
    daemon gets which block, and the spawner sizes each block by its
    daemon's power: this measures what that does to the method, with no
    network and no other process in the way.

    Usage: bench_partition N BANDWIDTH POWER...
        --reverse       number the rows backwards (P A P): the same
                        iteration as the given powers reversed, to tell a
                        property of the matrix from one of the code
        --tolerance T   change and relative residual to reach (1e-8)
        --inner NAME    krylov (default), cg, bicgstab, lu-banded
    The matrix is the generator's with 4 draws per row, shift 0.01, seed 1
    (bench/table1-nascg.job); the right-hand side makes x = 1 the answer.
    =========================================================================
*/
#include "multisplit_serial.h"
#include "problems.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 256

static void
s_usage (void)
{
    fprintf (stderr, "usage: bench_partition N BANDWIDTH POWER... "
             "[--reverse] [--tolerance T] [--inner NAME]\n");
    exit (2);
}

//  P A P: row and column i become n - 1 - i.  Takes A.
static csr_t *
s_reversed (csr_t *A)
{
    int32_t n = A->nrows;
    csr_builder_t *builder = csr_builder_new (n, n, A->nnz);
    for (int32_t row = 0; row < n; row++)
        for (int64_t k = A->row_ptr [row]; k < A->row_ptr [row + 1]; k++)
            csr_builder_add (builder, n - 1 - row, n - 1 - A->col_idx [k],
                             A->values [k]);
    csr_t *reversed = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    csr_destroy (&A);
    return reversed;
}

int
main (int argc, char **argv)
{
    double powers [MAX_BLOCKS];
    int32_t blocks = 0;
    bool reverse = false;
    multisplit_serial_options_t options;
    memset (&options, 0, sizeof options);
    multisplit_options_defaults (&options.inner);
    options.tolerance = 1e-8;
    if (argc < 4)
        s_usage ();
    problems_nascg_t params = {
        .n = atoi (argv [1]), .bandwidth = atoi (argv [2]),
        .lower_per_row = 4, .diagonal_shift = 0.01, .seed = 1
    };
    for (int arg = 3; arg < argc; arg++) {
        if (!strcmp (argv [arg], "--reverse"))
            reverse = true;
        else
        if (!strcmp (argv [arg], "--tolerance") && arg + 1 < argc)
            options.tolerance = atof (argv [++arg]);
        else
        if (!strcmp (argv [arg], "--inner") && arg + 1 < argc) {
            if (multisplit_inner_parse (argv [++arg], &options.inner.inner))
                s_usage ();
        }
        else
        if (blocks < MAX_BLOCKS && atof (argv [arg]) > 0)
            powers [blocks++] = atof (argv [arg]);
        else
            s_usage ();
    }
    if (blocks < 1)
        s_usage ();
    char error [256];
    csr_t *A;
    if (problems_nascg (&params, 0, params.n, &A, error, sizeof error)) {
        fprintf (stderr, "bench_partition: %s\n", error);
        return 1;
    }
    if (reverse)
        A = s_reversed (A);
    int32_t n = params.n;
    double *b = (double *) malloc (n * sizeof (double));
    double *x = (double *) calloc (n, sizeof (double));
    problems_rhs_ones_solution (A, b);
    options.tasks = blocks;
    options.powers = powers;
    options.residual_tolerance = options.tolerance;
    options.max_iterations = 2000;
    multisplit_serial_result_t result;
    if (multisplit_serial_solve (A, b, &options, x, &result, error,
                                 sizeof error)) {
        fprintf (stderr, "bench_partition: %s\n", error);
        return 1;
    }
    int32_t boundaries [MAX_BLOCKS + 1];
    multisplit_partition (n, blocks, powers, boundaries, error, sizeof error);
    printf ("first block %d rows (bandwidth %d): %s after %d iterations, "
            "residual %.2e, %lld inner iterations\n",
            boundaries [1], params.bandwidth,
            multisplit_status_name (result.status), result.iterations,
            result.residual, (long long) result.inner_iterations);
    csr_destroy (&A);
    free (b);
    free (x);
    return result.status == MULTISPLIT_CONVERGED ? 0 : 1;
}
