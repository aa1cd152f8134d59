/*  =========================================================================
    bench_solvers - banded LU against Krylov as the inner solver

    For typical blocks (one task's diagonal block of a row partition), this
    measures what each inner solver costs: set-up (LU factorisation or
    nothing), one solve (LU: forward and back substitution; CG: a cold solve
    from zero to 1e-12), and the memory each holds; then the whole
    multisplitting solve on one core (serial driver, every task in turn)
    with each inner solver, to the same verified residual.

    Usage: bench_solvers [quick]
    "ms / outer it" is (total - set-up) / outer iterations, over all tasks.
    Prints a Markdown table on stdout.  Single-threaded OpenBLAS.
    =========================================================================
*/
#include "solvers.h"
#include <time.h>

void openblas_set_num_threads (int);

//  Inner solves timed per block to average the solve cost
#define BENCH_SOLVE_REPEATS 5

//  One benchmark case
typedef struct {
    const char *name;           //  Shown in the table
    const char *kind;           //  poisson2d, poisson3d or nascg
    int32_t size;               //  Grid side, or n for nascg
    int32_t bandwidth;          //  nascg only
    int32_t tasks;              //  Row blocks
} bench_case_t;

static double
s_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

static csr_t *
s_generate (const bench_case_t *test)
{
    csr_t *A = NULL;
    if (strcmp (test->kind, "poisson2d") == 0)
        problems_poisson2d (test->size, 0, test->size * test->size, &A, NULL, 0);
    else
    if (strcmp (test->kind, "poisson3d") == 0)
        problems_poisson3d (test->size, 0, test->size * test->size * test->size,
                            &A, NULL, 0);
    else {
        problems_nascg_t params = { .n = test->size, .bandwidth = test->bandwidth,
                                    .lower_per_row = 5, .diagonal_shift = 1.0,
                                    .seed = 1 };
        problems_nascg (&params, 0, test->size, &A, NULL, 0);
    }
    return A;
}

//  The square diagonal block [begin, end) x [begin, end) of A.
static csr_t *
s_diagonal_block (const csr_t *A, int32_t begin, int32_t end)
{
    csr_builder_t *builder = csr_builder_new (end - begin, end - begin,
                                              A->row_ptr [end] - A->row_ptr [begin]);
    for (int32_t i = begin; i < end; i++)
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            if (A->col_idx [k] >= begin && A->col_idx [k] < end)
                csr_builder_add (builder, i - begin, A->col_idx [k] - begin,
                                 A->values [k]);
    csr_t *block = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    return block;
}

//  Time LU factor and solve, and a cold CG solve, on one block.
static void
s_bench_block (const csr_t *block, const bench_case_t *test)
{
    int32_t n = block->nrows, kl, ku;
    banded_lu_bandwidth (block, &kl, &ku);
    double *b = malloc (n * sizeof (double)), *x = calloc (n, sizeof (double));
    problems_rhs_ones_solution (block, b);
    double start = s_now ();
    banded_lu_t *lu = NULL;
    int rc = banded_lu_factor (block, 0, &lu);
    double factor = s_now () - start;
    start = s_now ();
    for (int r = 0; r < BENCH_SOLVE_REPEATS && rc == 0; r++)
        banded_lu_solve (lu, b, x);
    double lu_solve = (s_now () - start) / BENCH_SOLVE_REPEATS;
    banded_lu_destroy (&lu);

    krylov_t *cg = krylov_new (KRYLOV_CG, block);
    krylov_result_t result = { 0 };
    double cg_solve = 0.0;
    for (int r = 0; r < BENCH_SOLVE_REPEATS; r++) {
        memset (x, 0, n * sizeof (double));
        start = s_now ();
        krylov_solve (cg, b, x, 1e-12, 100000, &result);
        cg_solve += (s_now () - start) / BENCH_SOLVE_REPEATS;
    }
    krylov_destroy (&cg);
    printf ("| %s | %d x %d | %d | %d/%d | %.1f | %.3f | %.2f | %.2f (%d it) | %.1f |\n",
            test->name, n, n, test->tasks, kl, ku,
            banded_lu_bytes (block) / 1048576.0, factor, lu_solve * 1e3,
            cg_solve * 1e3, result.iterations,
            (block->nnz * 12.0 + n * 8.0 * 9) / 1048576.0);
    free (b);
    free (x);
}

//  Time the set-up of every task (split, dependencies, factor or bind).
static double
s_setup_seconds (const csr_t *A, const double *b,
                 const multisplit_serial_options_t *options)
{
    int32_t boundaries [65];
    multisplit_partition (A->nrows, options->tasks, NULL, boundaries, NULL, 0);
    double start = s_now ();
    for (int32_t t = 0; t < options->tasks; t++) {
        csr_t *rows = csr_row_block (A, boundaries [t], boundaries [t + 1]);
        multisplit_t *state = NULL;
        multisplit_new (rows, b + boundaries [t], boundaries, options->tasks, t,
                        0, &options->inner, &state, NULL, 0);
        multisplit_destroy (&state);
        csr_destroy (&rows);
    }
    return s_now () - start;
}

//  Whole serial multisplitting solve with one inner solver.
static void
s_bench_solve (const csr_t *A, const double *b, const bench_case_t *test,
               multisplit_inner_t inner, const char *inner_name)
{
    multisplit_serial_options_t options = {
        .tasks = test->tasks, .overlap = 0, .tolerance = 1e-9,
        .residual_tolerance = 1e-8, .max_iterations = 20000
    };
    multisplit_options_defaults (&options.inner);
    options.inner.inner = inner;
    options.inner.banded_lu_max_bytes = 0;
    double setup = s_setup_seconds (A, b, &options);
    double *x = malloc (A->nrows * sizeof (double));
    multisplit_serial_result_t result;
    char error [256] = "";
    double start = s_now ();
    int rc = multisplit_serial_solve (A, b, &options, x, &result, error,
                                      sizeof (error));
    double elapsed = s_now () - start;
    if (rc)
        printf ("| %s | %s | failed: %s |\n", test->name, inner_name, error);
    else
        printf ("| %s | %s | %d | %s | %d | %.2e | %lld | %.3f | %.3f | %.2f |\n",
                test->name, inner_name, test->tasks,
                multisplit_status_name (result.status), result.iterations,
                result.residual, (long long) result.inner_iterations, setup,
                elapsed, (elapsed - setup) / result.iterations * 1e3);
    fflush (stdout);
    free (x);
}

int
main (int argc, char *argv [])
{
    openblas_set_num_threads (1);
    bool quick = argc > 1 && strcmp (argv [1], "quick") == 0;
    const bench_case_t full_cases [] = {
        { "2D Poisson 150^2", "poisson2d", 150, 0, 8 },
        { "3D Poisson 30^3", "poisson3d", 30, 0, 8 },
        { "NAS-CG-like n=50k bw=350", "nascg", 50000, 350, 8 },
        { "NAS-CG-like n=100k bw=700", "nascg", 100000, 700, 16 },
    };
    const bench_case_t quick_cases [] = {
        { "2D Poisson 100^2", "poisson2d", 100, 0, 4 },
        { "3D Poisson 16^3", "poisson3d", 16, 0, 4 },
        { "NAS-CG-like n=20k bw=140", "nascg", 20000, 140, 8 },
    };
    const bench_case_t *cases = quick ? quick_cases : full_cases;
    int count = quick ? 3 : 4;

    printf ("| block of | rows | tasks | kl/ku | LU MiB | LU factor s | LU solve ms | "
            "CG cold solve ms | CSR+CG MiB |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        csr_t *A = s_generate (&cases [c]);
        int32_t boundaries [65];
        multisplit_partition (A->nrows, cases [c].tasks, NULL, boundaries, NULL, 0);
        int32_t middle = cases [c].tasks / 2;
        csr_t *block = s_diagonal_block (A, boundaries [middle], boundaries [middle + 1]);
        s_bench_block (block, &cases [c]);
        csr_destroy (&block);
        csr_destroy (&A);
        fflush (stdout);
    }
    printf ("\n| problem | inner | tasks | status | outer its | residual | inner its | "
            "set-up s | total s | ms / outer it |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        csr_t *A = s_generate (&cases [c]);
        double *b = malloc (A->nrows * sizeof (double));
        problems_rhs_ones_solution (A, b);
        s_bench_solve (A, b, &cases [c], MULTISPLIT_INNER_BANDED_LU, "banded LU");
        s_bench_solve (A, b, &cases [c], MULTISPLIT_INNER_CG, "CG");
        free (b);
        csr_destroy (&A);
    }
    return 0;
}
