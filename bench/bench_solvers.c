/*  =========================================================================
    bench_solvers - banded LU against Krylov as the inner solver

    For typical blocks (one task's diagonal block of a row partition), this
    measures what each inner solver costs: set-up (LU factorisation or
    nothing), one solve (LU: forward and back substitution; CG: a cold solve
    from zero to 1e-12), and the memory each holds; then the whole
    multisplitting solve on one core (serial driver, every task in turn)
    with each inner solver, to the same verified residual.

    The "bandwidth" mode measures the machine's memory bandwidth in the
    same process (STREAM copy and triad) and sets the cost of one outer
    iteration, and of its parts, against the time the bytes it must move
    would take at that bandwidth.

    The "tolerance" mode runs whole solves with CG inside at several inner
    tolerances, the measurement behind the library's default.

    The "tsirm" mode crosses the inner preconditioner (Jacobi, ILU(0)),
    the outer iteration (plain, TSIRM) and the inner tolerance.

    The "window" mode runs TSIRM with ILU(0) inner solves at several
    window sizes and least-squares iteration caps.

    The "overlap" mode runs plain and TSIRM solves at several overlaps.

    Usage: bench_solvers [quick | bandwidth | tolerance | tsirm | window |
                          overlap]
    "ms / outer it" is (total - set-up) / outer iterations, over all tasks.
    The full set (no argument) runs every table, bandwidth included.
    Prints Markdown tables on stdout.  Single-threaded OpenBLAS.
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

//  Whole serial multisplitting solve with one inner solver; a Krylov
//  inner tolerance of 0 keeps the library's default.
static void
s_bench_solve (const csr_t *A, const double *b, const bench_case_t *test,
               multisplit_inner_t inner, const char *inner_name,
               double inner_tolerance)
{
    multisplit_serial_options_t options = {
        .tasks = test->tasks, .overlap = 0, .tolerance = 1e-9,
        .residual_tolerance = 1e-8, .max_iterations = 20000
    };
    multisplit_options_defaults (&options.inner);
    options.inner.inner = inner;
    options.inner.banded_lu_max_bytes = 0;
    if (inner_tolerance > 0)
        options.inner.inner_tolerance = inner_tolerance;
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

//  Whole solves with CG inside at several inner tolerances: a loose one
//  makes each outer iteration cheaper and the outer iteration slower to
//  converge; every inner solve still gains the library's least reduction.
static void
s_bench_inner_tolerance (const bench_case_t *cases, int count)
{
    const double tolerances [] = { 1e-12, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2 };
    printf ("\n| problem | inner tolerance | tasks | status | outer its | residual | "
            "inner its | set-up s | total s | ms / outer it |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        csr_t *A = s_generate (&cases [c]);
        double *b = malloc (A->nrows * sizeof (double));
        problems_rhs_ones_solution (A, b);
        for (size_t t = 0; t < sizeof tolerances / sizeof tolerances [0]; t++) {
            char name [32];
            snprintf (name, sizeof name, "CG %.0e", tolerances [t]);
            s_bench_solve (A, b, &cases [c], MULTISPLIT_INNER_CG, name,
                           tolerances [t]);
        }
        free (b);
        csr_destroy (&A);
    }
}

//  One case's system A x = b with b = A * 1, and room for x
typedef struct {
    csr_t *A;
    double *b;
    double *x;
} bench_system_t;

static bench_system_t
s_system_new (const bench_case_t *test)
{
    bench_system_t system = { .A = s_generate (test) };
    system.b = malloc (system.A->nrows * sizeof (double));
    system.x = malloc (system.A->nrows * sizeof (double));
    problems_rhs_ones_solution (system.A, system.b);
    return system;
}

static void
s_system_destroy (bench_system_t *system)
{
    free (system->b);
    free (system->x);
    csr_destroy (&system->A);
}

//  One whole solve of A x = b with `options` (tolerance 1e-9, verified
//  residual 1e-8, 20000 outer iterations at most are set here); ends the
//  table row the caller began with its columns: status, outer its,
//  residual, inner its, total s.
static void
s_solve_row (bench_system_t *system, multisplit_serial_options_t *options)
{
    options->tolerance = 1e-9;
    options->residual_tolerance = 1e-8;
    options->max_iterations = 20000;
    multisplit_serial_result_t result;
    double start = s_now ();
    int rc = multisplit_serial_solve (system->A, system->b, options, system->x,
                                      &result, NULL, 0);
    double elapsed = s_now () - start;
    printf ("%s | %d | %.2e | %lld | %.3f |\n", rc ? "set-up failed"
            : multisplit_status_name (result.status), result.iterations,
            result.residual, (long long) result.inner_iterations, elapsed);
    fflush (stdout);
}

//  Whole solves with the inner preconditioner (Jacobi, ILU(0)), the outer
//  iteration (plain, TSIRM) and the inner tolerance crossed: what the
//  defaults of solver/preconditioner and solver/inner_tolerance rest on
//  once TSIRM accelerates the outer iteration.
static void
s_bench_tsirm (const bench_case_t *cases, int count)
{
    const double tolerances [] = { 1e-1, 1e-2, 1e-3, 1e-6 };
    printf ("\n| problem | preconditioner | outer | inner tol | tasks | "
            "status | outer its | residual | inner its | total s |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        bench_system_t system = s_system_new (&cases [c]);
        for (int pc = 0; pc < 2; pc++)
        for (int outer = 0; outer < 2; outer++)
        for (size_t t = 0; t < sizeof tolerances / sizeof tolerances [0]; t++) {
            multisplit_serial_options_t options = {
                .tasks = cases [c].tasks
            };
            multisplit_options_defaults (&options.inner);
            options.inner.preconditioner = pc ? MULTISPLIT_PC_ILU0
                                              : MULTISPLIT_PC_JACOBI;
            options.inner.inner_tolerance = tolerances [t];
            if (outer)
                tsirm_options_defaults (&options.tsirm);
            printf ("| %s | %s | %s | %.0e | %d | ", cases [c].name,
                    pc ? "ILU(0)" : "Jacobi", outer ? "TSIRM" : "plain",
                    tolerances [t], cases [c].tasks);
            s_solve_row (&system, &options);
        }
        s_system_destroy (&system);
    }
}

//  Whole solves with TSIRM and ILU(0) inner solves, the window size s and
//  the least-squares iterations crossed: how much a larger window saves
//  in outer and inner iterations (PETSc's KSPTSIRM defaults: s = 12, 15).
static void
s_bench_window (const bench_case_t *cases, int count)
{
    const int32_t sizes [] = { 4, 8, 12, 24, 36 };
    const int32_t least_squares [] = { 15, 60 };
    printf ("\n| problem | s | CGLS its | tasks | status | outer its | "
            "residual | inner its | total s |\n"
            "|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        bench_system_t system = s_system_new (&cases [c]);
        for (size_t l = 0; l < sizeof least_squares / sizeof least_squares [0];
             l++)
        for (size_t w = 0; w < sizeof sizes / sizeof sizes [0]; w++) {
            multisplit_serial_options_t options = {
                .tasks = cases [c].tasks
            };
            multisplit_options_defaults (&options.inner);
            options.inner.preconditioner = MULTISPLIT_PC_ILU0;
            tsirm_options_defaults (&options.tsirm);
            options.tsirm.size = sizes [w];
            options.tsirm.max_iterations = least_squares [l];
            printf ("| %s | %d | %d | %d | ", cases [c].name, sizes [w],
                    least_squares [l], cases [c].tasks);
            s_solve_row (&system, &options);
        }
        s_system_destroy (&system);
    }
}

//  Whole solves with overlap (rows shared with each neighbouring block),
//  plain and with TSIRM, at the default inner solve.
static void
s_bench_overlap (const bench_case_t *cases, int count)
{
    //  Rows: a grid line of a 2D problem of side 150, half, one and two
    //  planes of a 3D one of side 30
    const int32_t overlaps [] = { 0, 150, 450, 900, 1800 };
    printf ("\n| problem | overlap | outer | tasks | status | outer its | "
            "residual | inner its | total s |\n"
            "|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < count; c++) {
        bench_system_t system = s_system_new (&cases [c]);
        for (size_t o = 0; o < sizeof overlaps / sizeof overlaps [0]; o++)
        for (int outer = 0; outer < 2; outer++) {
            multisplit_serial_options_t options = {
                .tasks = cases [c].tasks, .overlap = overlaps [o]
            };
            multisplit_options_defaults (&options.inner);
            if (outer)
                tsirm_options_defaults (&options.tsirm);
            printf ("| %s | %d | %s | %d | ", cases [c].name, overlaps [o],
                    outer ? "TSIRM" : "plain", cases [c].tasks);
            s_solve_row (&system, &options);
        }
        s_system_destroy (&system);
    }
}

//  --------------------------------------------------------------------------
//  Memory bandwidth, STREAM style (McCalpin 1995): copy a = b and triad
//  a = b + s c over three arrays far larger than the last-level cache, one
//  thread, best of several repetitions.  Bytes are counted as STREAM counts
//  them (16 per element for copy, 24 for triad, no write-allocate traffic),
//  and so are the bytes of the solver below.

//  Doubles per STREAM array: 128 MiB each, 384 MiB in all
#define BENCH_STREAM_DOUBLES    ((size_t) 16 << 20)
//  Doubles per array of the cache-resident triad: 3 x 2 MiB
#define BENCH_CACHE_DOUBLES     ((size_t) 256 << 10)
//  Repetitions of each STREAM kernel; the best one counts
#define BENCH_STREAM_REPEATS    20
//  Passes of the cache-resident triad per timed repetition
#define BENCH_CACHE_PASSES      50

//  Measured bandwidths, GB/s (1e9 bytes)
typedef struct {
    double copy;                //  a = b, 128 MiB arrays
    double triad;               //  a = b + s c, 128 MiB arrays; the bound
    double cache_triad;         //  a = b + s c, 2 MiB arrays
} bench_bandwidth_t;

//  Adding 0.0 (not an identity for -0.0) keeps the compiler from turning
//  the copy into a memcpy call, which may bypass the cache; out of line,
//  no repetition can be merged with the next or dropped.
static void __attribute__ ((noinline))
s_stream_copy (size_t n, double *restrict a, const double *restrict b)
{
    for (size_t i = 0; i < n; i++)
        a [i] = b [i] + 0.0;
}

static void __attribute__ ((noinline))
s_stream_triad (size_t n, double *restrict a, const double *restrict b,
                const double *restrict c, double scalar)
{
    for (size_t i = 0; i < n; i++)
        a [i] = b [i] + scalar * c [i];
}

//  Seconds of one triad pass over arrays of n doubles, timed over passes.
static double
s_triad_seconds (double *a, double *b, double *c, size_t n, int passes)
{
    double start = s_now ();
    for (int pass = 0; pass < passes; pass++)
        s_stream_triad (n, a, b, c, 3.0);
    return (s_now () - start) / passes;
}

static bench_bandwidth_t
s_measure_bandwidth (void)
{
    size_t n = BENCH_STREAM_DOUBLES;
    double *a = malloc (n * sizeof (double));
    double *b = malloc (n * sizeof (double));
    double *c = malloc (n * sizeof (double));
    //  Touch every page before timing.
    for (size_t i = 0; i < n; i++) {
        a [i] = 1.0;
        b [i] = 2.0;
        c [i] = 0.5;
    }
    //  The kernels take turns, so that a burst of load from other
    //  processes hits them alike.
    double copy = INFINITY, triad = INFINITY, cache_triad = INFINITY;
    for (int r = 0; r < BENCH_STREAM_REPEATS; r++) {
        double start = s_now ();
        s_stream_copy (n, c, a);
        copy = fmin (copy, s_now () - start);
        triad = fmin (triad, s_triad_seconds (a, b, c, n, 1));
        cache_triad = fmin (cache_triad, s_triad_seconds (
            a, b, c, BENCH_CACHE_DOUBLES, BENCH_CACHE_PASSES));
    }
    bench_bandwidth_t bandwidth = {
        .copy = 16.0 * n / copy * 1e-9,
        .triad = 24.0 * n / triad * 1e-9,
        .cache_triad = 24.0 * BENCH_CACHE_DOUBLES / cache_triad * 1e-9
    };
    if (!isfinite (a [n / 2]))
        printf ("(checksum)\n");
    free (a);
    free (b);
    free (c);
    return bandwidth;
}

//  --------------------------------------------------------------------------
//  Cost of one outer iteration against the memory-bandwidth bound of the
//  work it does.
//
//  Two passes over the same iterations, both synchronous like the serial
//  driver (every task's x_ext filled from the previous global iterate):
//
//  * whole: multisplit_iterate, the entry point a distributed task calls
//    each iteration, timed call by call.  Its internals are opaque, so
//  * parts: a twin in this file splits each task's extended rows into
//    A_local and A_ext exactly as multisplit_new does (same column order,
//    same x_ext positions) and runs the same library calls in the same
//    order as multisplit_iterate: copy x to x_previous, the off-block
//    residual b - A_ext x_ext (csr_residual), the inner solve
//    (krylov_solve or banded_lu_solve), the change scan.  Each part is
//    timed on its own; both passes must report the same inner iterations.
//
//  Bytes are counted per task and call, pass by pass over the code
//  (solvers/multisplit.c, csr.c, krylov.c), each array read or written
//  once per pass, n = block rows, m = length of x_ext.  Values and row
//  offsets take 8 bytes, column indices 4 (int32_t):
//
//    off-block  r = b - A_ext x_ext: 12 nnz_ext + 8 (n + 1) row offsets
//               + 8n (b) + 8n (r) + 8m (x_ext)
//    CG, k its  set-up: ||b|| (8n), r = b - A x (12 nnz + 8 (n + 1) + 24n),
//               z = D r (24n), p = z (16n), r'z (16n), r'r (8n);
//               per iteration: q = A p (12 nnz + 8 (n + 1) + 16n), p'q
//               (16n), the fused update of x, r, z and r'r (reads x p r q D,
//               writes x r z: 64n), r'z (16n), p = z + beta p (24n)
//    LU         x = b (16n), then the L and U factors are read once,
//               8 (2 kl + ku + 1) n, and x in the forward and the back
//               sweep (read and write, 32n)
//    rest       x to x_previous (16n), the change scan of x, x_previous
//               (16n)
//
//  bound = bytes / measured triad bandwidth; ratio = measured / bound, so
//  1.0 means the iteration runs at the memory limit.  A block whose data
//  fits in the last-level cache can beat the bound (ratio < 1): its inner
//  iterations reread the block from cache, not from memory.

//  Largest change that stops a timed window early (the solve's tolerance)
#define BENCH_WINDOW_TOLERANCE  1e-9
//  Repetitions of each pass; the median counts
#define BENCH_BANDWIDTH_REPEATS 3

//  One case of the bandwidth benchmark
typedef struct {
    bench_case_t problem;       //  Matrix and partition
    multisplit_inner_t inner;   //  MULTISPLIT_INNER_CG or _BANDED_LU
    int32_t window;             //  Outer iterations timed, at most
} bench_bandwidth_case_t;

//  The twin of one task's state, built in this file
typedef struct {
    int32_t begin;              //  First row (global); no overlap
    int32_t rows;               //  Block rows n
    int32_t external_size;      //  Length m of x_ext
    int32_t *external_indices;  //  Global index of each x_ext position
    csr_t *local;               //  A_local, local columns
    csr_t *external;            //  A_ext, columns are x_ext positions
    krylov_t *krylov;           //  CG on local, or NULL
    banded_lu_t *lu;            //  Factors of local, or NULL
    double band_bytes;          //  LU band storage, 8 (2 kl + ku + 1) n
    double tolerance;           //  CG relative tolerance, as the library's
    int32_t max_iterations;     //  CG budget, as the library's
    const double *b;            //  Borrowed; right-hand side rows
    double *x;                  //  Iterate
    double *x_previous;         //  Iterate before the call
    double *rhs;                //  b - A_ext x_ext
    double *x_ext;              //  External values
} bench_twin_t;

//  Every task of one case, in the library and in the twin
typedef struct {
    int32_t tasks;              //  Number of tasks
    multisplit_inner_t inner;   //  Inner solver
    int32_t window;             //  Outer iterations timed, at most
    int32_t boundaries [65];    //  Partition
    multisplit_t *states [64];  //  Library states
    double *x_ext [64];         //  Library x_ext of each task
    bench_twin_t twins [64];    //  Twins
    double *x;                  //  Global iterate
    int32_t outer;              //  Outer iterations of the window
    int32_t *inner_its;         //  window x tasks inner iterations
} bench_run_t;

//  Seconds of each part over a window, summed over the tasks
typedef struct {
    double offblock;            //  b - A_ext x_ext
    double inner;               //  Inner solve
    double rest;                //  Copy to x_previous and change scan
} bench_parts_t;

static int
s_compare_int32 (const void *left, const void *right)
{
    int32_t a = *(const int32_t *) left, b = *(const int32_t *) right;
    return (a > b) - (a < b);
}

//  Split the extended rows as s_split_rows in solvers/multisplit.c does.
static void
s_twin_split (bench_twin_t *twin, const csr_t *rows)
{
    int32_t end = twin->begin + twin->rows;
    int64_t local_nnz = 0;
    for (int64_t k = 0; k < rows->nnz; k++)
        if (rows->col_idx [k] >= twin->begin && rows->col_idx [k] < end)
            local_nnz++;
    twin->local = csr_new (rows->nrows, twin->rows, local_nnz);
    twin->external = csr_new (rows->nrows, twin->external_size,
                              rows->nnz - local_nnz);
    int64_t at_local = 0, at_external = 0;
    for (int32_t i = 0; i < rows->nrows; i++) {
        for (int64_t k = rows->row_ptr [i]; k < rows->row_ptr [i + 1]; k++) {
            int32_t j = rows->col_idx [k];
            if (j >= twin->begin && j < end) {
                twin->local->col_idx [at_local] = j - twin->begin;
                twin->local->values [at_local++] = rows->values [k];
                continue;
            }
            int32_t *slot = bsearch (&j, twin->external_indices,
                                     (size_t) twin->external_size,
                                     sizeof (int32_t), s_compare_int32);
            assert (slot);
            twin->external->col_idx [at_external] =
                (int32_t) (slot - twin->external_indices);
            twin->external->values [at_external++] = rows->values [k];
        }
        twin->local->row_ptr [i + 1] = at_local;
        twin->external->row_ptr [i + 1] = at_external;
    }
}

//  Build the twin of library task t from its rows.
static void
s_twin_setup (bench_run_t *run, int32_t t, const csr_t *rows, const double *b,
              const multisplit_options_t *options)
{
    bench_twin_t *twin = &run->twins [t];
    const multisplit_t *state = run->states [t];
    twin->tolerance = multisplit_inner_tolerance (state);
    twin->max_iterations = options->inner_max_iterations;
    twin->begin = run->boundaries [t];
    twin->rows = rows->nrows;
    twin->external_size = multisplit_external_size (state);
    twin->external_indices = malloc ((twin->external_size + 1)
                                     * sizeof (int32_t));
    for (int32_t owner = 0; owner < run->tasks; owner++)
        memcpy (twin->external_indices
                + multisplit_dependency_offset (state, owner),
                multisplit_dependency_indices (state, owner),
                multisplit_dependency_count (state, owner) * sizeof (int32_t));
    s_twin_split (twin, rows);
    if (run->inner == MULTISPLIT_INNER_BANDED_LU) {
        int rc = banded_lu_factor (twin->local, 0, &twin->lu);
        assert (rc == 0);
        twin->band_bytes = banded_lu_bytes (twin->local);
    }
    else {
        twin->krylov = krylov_new (KRYLOV_CG, twin->local);
        krylov_set_reduction (twin->krylov, MULTISPLIT_INNER_REDUCTION);
    }
    twin->b = b + twin->begin;
    twin->x = calloc (twin->rows, sizeof (double));
    twin->x_previous = calloc (twin->rows, sizeof (double));
    twin->rhs = calloc (twin->rows, sizeof (double));
    twin->x_ext = calloc (twin->external_size + 1, sizeof (double));
}

static void
s_twin_destroy (bench_twin_t *twin)
{
    csr_destroy (&twin->local);
    csr_destroy (&twin->external);
    krylov_destroy (&twin->krylov);
    banded_lu_destroy (&twin->lu);
    free (twin->external_indices);
    free (twin->x);
    free (twin->x_previous);
    free (twin->rhs);
    free (twin->x_ext);
}

//  Set up the library state and the twin of every task; 0 or -1.
static int
s_run_setup (bench_run_t *run, const csr_t *A, const double *b,
             const bench_bandwidth_case_t *test)
{
    memset (run, 0, sizeof (*run));
    run->tasks = test->problem.tasks;
    run->inner = test->inner;
    run->window = test->window;
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    options.inner = test->inner;
    options.banded_lu_max_bytes = 0;
    multisplit_partition (A->nrows, run->tasks, NULL, run->boundaries, NULL, 0);
    for (int32_t t = 0; t < run->tasks; t++) {
        csr_t *rows = csr_row_block (A, run->boundaries [t],
                                     run->boundaries [t + 1]);
        char error [256] = "";
        int rc = multisplit_new (rows, b + run->boundaries [t],
                                 run->boundaries, run->tasks, t, 0, &options,
                                 &run->states [t], error, sizeof (error));
        if (rc == 0) {
            run->x_ext [t] = calloc (multisplit_external_size (run->states [t])
                                     + 1, sizeof (double));
            s_twin_setup (run, t, rows, b, &options);
        }
        csr_destroy (&rows);
        if (rc) {
            printf ("| %s | %s | failed: %s |\n", test->problem.name,
                    multisplit_inner_name (test->inner), error);
            return -1;
        }
    }
    run->x = calloc (A->nrows, sizeof (double));
    run->inner_its = calloc ((size_t) run->window * run->tasks,
                             sizeof (int32_t));
    return 0;
}

static void
s_run_destroy (bench_run_t *run)
{
    for (int32_t t = 0; t < run->tasks; t++) {
        multisplit_destroy (&run->states [t]);
        free (run->x_ext [t]);
        s_twin_destroy (&run->twins [t]);
    }
    free (run->x);
    free (run->inner_its);
}
//  One window of the library: x = 0, then up to window synchronous outer
//  iterations.  Returns the seconds spent in multisplit_iterate.
static double
s_library_window (bench_run_t *run, int32_t n)
{
    memset (run->x, 0, n * sizeof (double));
    for (int32_t t = 0; t < run->tasks; t++)
        multisplit_set_solution (run->states [t], run->x + run->boundaries [t]);
    double seconds = 0.0;
    run->outer = 0;
    while (run->outer < run->window) {
        for (int32_t t = 0; t < run->tasks; t++)
            multisplit_external_from_global (run->states [t], run->x,
                                             run->x_ext [t]);
        double change = 0.0;
        for (int32_t t = 0; t < run->tasks; t++) {
            multisplit_step_t step;
            double start = s_now ();
            int rc = multisplit_iterate (run->states [t], run->x_ext [t],
                                         &step);
            seconds += s_now () - start;
            assert (rc == 0);
            run->inner_its [run->outer * run->tasks + t] =
                step.inner_iterations;
            change = fmax (change, step.change);
        }
        for (int32_t t = 0; t < run->tasks; t++)
            memcpy (run->x + run->boundaries [t],
                    multisplit_solution (run->states [t]),
                    (run->boundaries [t + 1] - run->boundaries [t])
                    * sizeof (double));
        run->outer++;
        if (change <= BENCH_WINDOW_TOLERANCE)
            break;
    }
    return seconds;
}

//  One twin call: the steps of multisplit_iterate, each part timed.
//  Returns the inner iterations.
static int32_t
s_twin_iterate (bench_twin_t *twin, bench_parts_t *parts, double *change_p)
{
    double start = s_now ();
    memcpy (twin->x_previous, twin->x, twin->rows * sizeof (double));
    double copied = s_now ();
    csr_residual (twin->external, twin->b, twin->x_ext, twin->rhs);
    double offblock = s_now ();
    int32_t iterations = 0;
    if (twin->lu)
        banded_lu_solve (twin->lu, twin->rhs, twin->x);
    else {
        krylov_result_t result;
        krylov_solve (twin->krylov, twin->rhs, twin->x,
                      twin->tolerance, twin->max_iterations, &result);
        iterations = result.iterations;
    }
    double inner = s_now ();
    bool finite = true;
    for (int32_t i = 0; i < twin->rows; i++)
        finite = finite && isfinite (twin->x [i]);
    double change = 0.0;
    for (int32_t i = 0; i < twin->rows; i++)
        change = fmax (change, fabs (twin->x [i] - twin->x_previous [i]));
    double end = s_now ();
    assert (finite);
    parts->offblock += offblock - copied;
    parts->inner += inner - offblock;
    parts->rest += (copied - start) + (end - inner);
    *change_p = fmax (*change_p, change);
    return iterations;
}

//  The same window with the twin; checks the inner iterations match.
static bench_parts_t
s_twin_window (bench_run_t *run, int32_t n)
{
    memset (run->x, 0, n * sizeof (double));
    bench_parts_t parts = { 0 };
    for (int32_t t = 0; t < run->tasks; t++)
        memset (run->twins [t].x, 0, run->twins [t].rows * sizeof (double));
    for (int32_t outer = 0; outer < run->outer; outer++) {
        for (int32_t t = 0; t < run->tasks; t++) {
            bench_twin_t *twin = &run->twins [t];
            for (int32_t k = 0; k < twin->external_size; k++)
                twin->x_ext [k] = run->x [twin->external_indices [k]];
        }
        double change = 0.0;
        for (int32_t t = 0; t < run->tasks; t++) {
            int32_t iterations = s_twin_iterate (&run->twins [t], &parts,
                                                 &change);
            if (iterations != run->inner_its [outer * run->tasks + t])
                printf ("(twin of task %d: %d inner iterations at outer "
                        "iteration %d, the library ran %d)\n", t, iterations,
                        outer, run->inner_its [outer * run->tasks + t]);
        }
        for (int32_t t = 0; t < run->tasks; t++)
            memcpy (run->x + run->twins [t].begin, run->twins [t].x,
                    run->twins [t].rows * sizeof (double));
    }
    return parts;
}

//  Bytes of one task's call by part, as counted in the comment above.
static void
s_twin_bytes (const bench_twin_t *twin, int32_t inner_iterations,
              double *offblock, double *inner, double *rest)
{
    double n = twin->rows;
    double nnz = twin->local->nnz;
    *offblock = 12.0 * twin->external->nnz + 8.0 * (n + 1) + 16.0 * n
              + 8.0 * twin->external_size;
    if (twin->lu)
        *inner = 16.0 * n + twin->band_bytes + 32.0 * n;
    else
        *inner = 12.0 * nnz + 8.0 * (n + 1) + 96.0 * n
               + inner_iterations * (12.0 * nnz + 8.0 * (n + 1) + 136.0 * n);
    *rest = 32.0 * n;
}

//  Bytes the inner solve of the largest block cycles over: the CSR block
//  and the six CG vectors, or the band storage and x.
static double
s_block_data_bytes (const bench_run_t *run)
{
    double largest = 0.0;
    for (int32_t t = 0; t < run->tasks; t++) {
        const bench_twin_t *twin = &run->twins [t];
        double bytes = twin->lu ? twin->band_bytes + 8.0 * twin->rows
                     : 12.0 * twin->local->nnz + 8.0 * (twin->rows + 1)
                       + 48.0 * twin->rows;
        largest = fmax (largest, bytes);
    }
    return largest;
}

static int
s_compare_double (const void *left, const void *right)
{
    double a = *(const double *) left, b = *(const double *) right;
    return (a > b) - (a < b);
}

static double
s_median (double *values, int count)
{
    qsort (values, count, sizeof (double), s_compare_double);
    return count % 2 ? values [count / 2]
                     : 0.5 * (values [count / 2 - 1] + values [count / 2]);
}

//  What one case measured, per outer iteration
typedef struct {
    const bench_bandwidth_case_t *test; //  The case
    int32_t rows;               //  Rows of the problem
    int64_t nnz;                //  Nonzeros of the problem
    double block_bytes;         //  Data of the largest block's inner solve
    int32_t outer;              //  Outer iterations timed
    double inner_its;           //  Inner iterations, all tasks
    double bytes [3];           //  Off-block, inner solve, rest
    double seconds;             //  multisplit_iterate, all tasks
    double part_seconds [3];    //  Twin: off-block, inner solve, rest
    double twin_seconds;        //  Twin: the three parts together
} bench_bandwidth_result_t;

//  Time the library and the twin on one case; -1 if set-up failed.
static int
s_bench_bandwidth_case (const bench_bandwidth_case_t *test,
                        bench_bandwidth_result_t *result)
{
    csr_t *A = s_generate (&test->problem);
    double *b = malloc (A->nrows * sizeof (double));
    problems_rhs_ones_solution (A, b);
    bench_run_t run;
    int rc = s_run_setup (&run, A, b, test);
    double whole [BENCH_BANDWIDTH_REPEATS], twin [BENCH_BANDWIDTH_REPEATS];
    double parts [3][BENCH_BANDWIDTH_REPEATS];
    for (int r = 0; r < BENCH_BANDWIDTH_REPEATS && rc == 0; r++)
        whole [r] = s_library_window (&run, A->nrows);
    for (int r = 0; r < BENCH_BANDWIDTH_REPEATS && rc == 0; r++) {
        bench_parts_t twin_parts = s_twin_window (&run, A->nrows);
        parts [0][r] = twin_parts.offblock;
        parts [1][r] = twin_parts.inner;
        parts [2][r] = twin_parts.rest;
        twin [r] = twin_parts.offblock + twin_parts.inner + twin_parts.rest;
    }
    if (rc == 0) {
        double outer = run.outer;
        *result = (bench_bandwidth_result_t) {
            .test = test, .rows = A->nrows, .nnz = A->nnz,
            .block_bytes = s_block_data_bytes (&run), .outer = run.outer,
            .seconds = s_median (whole, BENCH_BANDWIDTH_REPEATS) / outer,
            .twin_seconds = s_median (twin, BENCH_BANDWIDTH_REPEATS) / outer
        };
        for (int k = 0; k < 3; k++)
            result->part_seconds [k] =
                s_median (parts [k], BENCH_BANDWIDTH_REPEATS) / outer;
        for (int32_t o = 0; o < run.outer; o++)
            for (int32_t t = 0; t < run.tasks; t++) {
                int32_t its = run.inner_its [o * run.tasks + t];
                double bytes [3];
                s_twin_bytes (&run.twins [t], its, &bytes [0], &bytes [1],
                              &bytes [2]);
                for (int k = 0; k < 3; k++)
                    result->bytes [k] += bytes [k] / outer;
                result->inner_its += its / outer;
            }
    }
    s_run_destroy (&run);
    free (b);
    csr_destroy (&A);
    return rc;
}

//  One row of the whole-iteration table; bandwidth in bytes per second.
static void
s_print_whole (const bench_bandwidth_result_t *result, double bandwidth)
{
    double bytes = result->bytes [0] + result->bytes [1] + result->bytes [2];
    double bound = bytes / bandwidth;
    printf ("| %s | %s | %d | %d | %lld | %.1f | %d | %.1f | %.1f | %.2f | "
            "%.2f | %.2f |\n", result->test->problem.name,
            multisplit_inner_name (result->test->inner),
            result->test->problem.tasks, result->rows,
            (long long) result->nnz, result->block_bytes / 1048576.0,
            result->outer, result->inner_its, bytes * 1e-6, bound * 1e3,
            result->seconds * 1e3, result->seconds / bound);
}

//  One row of the parts table; bandwidth in bytes per second.
static void
s_print_parts (const bench_bandwidth_result_t *result, double bandwidth)
{
    const double *bytes = result->bytes, *seconds = result->part_seconds;
    printf ("| %s | %s | %.2f | %.3f | %.3f | %.2f | %.1f | %.2f | %.2f | "
            "%.2f | %.3f | %.3f | %.2f | %.2f |\n",
            result->test->problem.name,
            multisplit_inner_name (result->test->inner), bytes [0] * 1e-6,
            bytes [0] / bandwidth * 1e3, seconds [0] * 1e3,
            seconds [0] / (bytes [0] / bandwidth), bytes [1] * 1e-6,
            bytes [1] / bandwidth * 1e3, seconds [1] * 1e3,
            seconds [1] / (bytes [1] / bandwidth),
            bytes [2] / bandwidth * 1e3, seconds [2] * 1e3,
            seconds [2] / (bytes [2] / bandwidth),
            result->twin_seconds * 1e3);
}

//  One-minute load average, or -1 if unknown: the machine may be shared.
static double
s_load_average (void)
{
    double load [1];
    return getloadavg (load, 1) == 1 ? load [0] : -1.0;
}

static void
s_print_bandwidth (const char *when, const bench_bandwidth_t *bandwidth)
{
    printf ("%s: load average (1 min) %.2f; copy %.1f GB/s, triad %.1f GB/s "
            "(3 x %zu MiB); triad on 3 x %zu MiB (cache-resident) %.1f "
            "GB/s\n", when, s_load_average (), bandwidth->copy,
            bandwidth->triad, BENCH_STREAM_DOUBLES * sizeof (double) >> 20,
            BENCH_CACHE_DOUBLES * sizeof (double) >> 20,
            bandwidth->cache_triad);
}

//  Bandwidth before and after the cases (the machine may be shared), then
//  the whole-iteration and the parts tables against the better triad.
static void
s_bench_bandwidth (void)
{
    const bench_bandwidth_case_t cases [] = {
        { { "2D Poisson 150^2", "poisson2d", 150, 0, 8 },
          MULTISPLIT_INNER_CG, 40 },
        { { "2D Poisson 150^2", "poisson2d", 150, 0, 8 },
          MULTISPLIT_INNER_BANDED_LU, 100 },
        { { "3D Poisson 30^3", "poisson3d", 30, 0, 8 },
          MULTISPLIT_INNER_CG, 100 },
        { { "3D Poisson 30^3", "poisson3d", 30, 0, 8 },
          MULTISPLIT_INNER_BANDED_LU, 30 },
        { { "NAS-CG-like n=50k bw=350", "nascg", 50000, 350, 8 },
          MULTISPLIT_INNER_CG, 100 },
        { { "NAS-CG-like n=50k bw=350", "nascg", 50000, 350, 8 },
          MULTISPLIT_INNER_BANDED_LU, 100 },
        { { "NAS-CG-like n=100k bw=700", "nascg", 100000, 700, 16 },
          MULTISPLIT_INNER_CG, 100 },
        { { "3D Poisson 80^3", "poisson3d", 80, 0, 8 },
          MULTISPLIT_INNER_CG, 5 },
        { { "3D Poisson 80^3", "poisson3d", 80, 0, 1 },
          MULTISPLIT_INNER_CG, 1 },
    };
    enum { CASES = sizeof (cases) / sizeof (cases [0]) };
    bench_bandwidth_t before = s_measure_bandwidth ();
    bench_bandwidth_result_t results [CASES];
    bool done [CASES];
    for (int c = 0; c < CASES; c++)
        done [c] = s_bench_bandwidth_case (&cases [c], &results [c]) == 0;
    bench_bandwidth_t after = s_measure_bandwidth ();
    double triad = fmax (before.triad, after.triad);
    printf ("\nMemory bandwidth, one thread, best of %d repetitions:\n\n",
            BENCH_STREAM_REPEATS);
    s_print_bandwidth ("* before the cases", &before);
    s_print_bandwidth ("* after the cases", &after);
    printf ("\nBounds use the better triad figure, %.1f GB/s.\n\n", triad);
    printf ("| problem | inner | tasks | rows | nnz | block data MiB | "
            "outer its | inner its / outer it | MB / outer it | bound ms | "
            "measured ms | ratio |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < CASES; c++)
        if (done [c])
            s_print_whole (&results [c], triad * 1e9);
    printf ("\n| problem | inner | off-block MB | bound ms | measured ms | "
            "ratio | inner MB | bound ms | measured ms | ratio | "
            "rest bound ms | measured ms | ratio | twin total ms |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < CASES; c++)
        if (done [c])
            s_print_parts (&results [c], triad * 1e9);
}

int
main (int argc, char *argv [])
{
    openblas_set_num_threads (1);
    const char *mode = argc > 1 ? argv [1] : "full";
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
    if (strcmp (mode, "bandwidth") == 0) {
        s_bench_bandwidth ();
        return 0;
    }
    if (strcmp (mode, "tolerance") == 0) {
        s_bench_inner_tolerance (full_cases, 4);
        return 0;
    }
    if (strcmp (mode, "tsirm") == 0) {
        const bench_case_t tsirm_cases [] = {
            { "3D Poisson 40^3", "poisson3d", 40, 0, 2 },
            { "2D Poisson 150^2", "poisson2d", 150, 0, 4 },
            { "NAS-CG-like n=50k bw=350", "nascg", 50000, 350, 4 },
        };
        s_bench_tsirm (tsirm_cases, 3);
        return 0;
    }
    if (strcmp (mode, "window") == 0) {
        const bench_case_t window_cases [] = {
            { "3D Poisson 40^3", "poisson3d", 40, 0, 2 },
            { "3D Poisson 60^3", "poisson3d", 60, 0, 2 },
        };
        s_bench_window (window_cases, 2);
        return 0;
    }
    if (strcmp (mode, "overlap") == 0) {
        const bench_case_t overlap_cases [] = {
            { "3D Poisson 30^3", "poisson3d", 30, 0, 4 },
        };
        s_bench_overlap (overlap_cases, 1);
        return 0;
    }
    bool quick = strcmp (mode, "quick") == 0;
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
        s_bench_solve (A, b, &cases [c], MULTISPLIT_INNER_BANDED_LU, "banded LU", 0);
        s_bench_solve (A, b, &cases [c], MULTISPLIT_INNER_CG, "CG", 0);
        free (b);
        csr_destroy (&A);
    }
    s_bench_inner_tolerance (cases, count);
    if (!quick)
        s_bench_bandwidth ();
    return 0;
}
