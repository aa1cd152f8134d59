/*  =========================================================================
    test_solvers_tsirm - the least-squares step and TSIRM in one process

    The step split over tasks must give what one task holding every row
    gives, predict the residual it reaches, never do worse than the best
    iterate of its window, and find an exact combination when there is
    one.  The serial driver with TSIRM must reach the known solution on 3D
    Poisson, NAS-CG-like and nonsymmetric systems in fewer outer
    iterations than plain multisplitting, overlap or not.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"

void openblas_set_num_threads (int);

//  s_ok () with a formatted name.
static bool
s_ok (bool condition, const char *format, ...)
{
    char name [256];
    va_list args;
    va_start (args, format);
    vsnprintf (name, sizeof name, format, args);
    va_end (args);
    return ok (condition, name);
}

//  Deterministic values in [-1, 1).
static double
s_random (uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double) (*state >> 11) / (double) (1ULL << 52) - 1.0;
}

//  ||r0 - W beta|| for column-major W (rows x s).
static double
s_residual (const double *w, const double *r0, int32_t rows, int32_t s,
            const double *beta)
{
    double sum = 0;
    for (int32_t i = 0; i < rows; i++) {
        double value = r0 [i];
        for (int32_t j = 0; j < s; j++)
            value -= w [(size_t) j * rows + i] * beta [j];
        sum += value * value;
    }
    return sqrt (sum);
}

//  Factors of rows [begin, end) of [W | r0] for each of `tasks` pieces.
static void
s_factors (const double *w, const double *r0, int32_t rows, int32_t s,
           const int32_t *starts, int32_t tasks, double *factors)
{
    size_t length = tsirm_factor_length (s);
    for (int32_t t = 0; t < tasks; t++) {
        int32_t count = starts [t + 1] - starts [t];
        double *wr = malloc (((size_t) count * (s + 1) + 1) * sizeof (double));
        for (int32_t j = 0; j <= s; j++)
            for (int32_t i = 0; i < count; i++)
                wr [(size_t) j * count + i] = j < s
                    ? w [(size_t) j * rows + starts [t] + i]
                    : r0 [starts [t] + i];
        tsirm_local_factor (wr, count, s, factors + (size_t) t * length);
        free (wr);
    }
}

static int
s_solve (const double *factors, int32_t tasks, const tsirm_options_t *options,
         double *beta, tsirm_result_t *result)
{
    size_t length = tsirm_factor_length (options->size);
    const double *pieces [8];
    for (int32_t t = 0; t < tasks; t++)
        pieces [t] = factors + (size_t) t * length;
    return tsirm_solve (pieces, tasks, options, beta, result);
}

static void
s_test_step (void)
{
    const int32_t rows = 200, s = 6;
    uint64_t seed = 7;
    double *w = malloc ((size_t) rows * s * sizeof (double));
    double *r0 = malloc (rows * sizeof (double));
    for (int32_t k = 0; k < rows * s; k++)
        w [k] = s_random (&seed);
    for (int32_t i = 0; i < rows; i++)
        r0 [i] = s_random (&seed);
    tsirm_options_t options;
    tsirm_options_defaults (&options);
    options.size = s;
    size_t length = tsirm_factor_length (s);
    s_ok (length == 28, "a window of 6 is shared as 28 numbers per task");
    double *factors = malloc (8 * length * sizeof (double));
    double one [TSIRM_SIZE_MAX], split [TSIRM_SIZE_MAX];
    tsirm_result_t whole, parts;
    int32_t all [2] = { 0, rows };
    s_factors (w, r0, rows, s, all, 1, factors);
    s_ok (s_solve (factors, 1, &options, one, &whole) == 0, "one task solves");
    //  Pieces of 3, 0 and 4 rows (fewer than s + 1), and the rest.
    int32_t starts [6] = { 0, 3, 3, 7, 120, rows };
    s_factors (w, r0, rows, s, starts, 5, factors);
    s_ok (s_solve (factors, 5, &options, split, &parts) == 0,
          "five tasks solve");
    double difference = 0;
    for (int32_t j = 0; j < s; j++)
        difference = fmax (difference, fabs (one [j] - split [j]));
    s_ok (difference < 1e-10, "split rows (some tasks with fewer rows than "
        "s + 1, one with none) give the same combination (%.1e)", difference);
    double actual = s_residual (w, r0, rows, s, split);
    s_ok (fabs (actual - parts.residual_after) < 1e-10 * actual,
        "the predicted residual is the true one (%.6f)", actual);
    double r0_norm = s_residual (w, r0, rows, s, (double [6]) { 0 });
    s_ok (fabs (parts.residual_before - r0_norm) < 1e-10 * r0_norm,
        "the residual before is ||r0||");
    bool no_worse = true;
    for (int32_t j = 0; j < s; j++) {
        double unit [6] = { 0 };
        unit [j] = 1;
        no_worse = no_worse && actual <= s_residual (w, r0, rows, s, unit);
    }
    s_ok (no_worse && actual < r0_norm, "never worse than one column alone");
    //  r0 in the span: the exact combination comes back.
    double gamma [6] = { 1, -2, 0.5, 3, 0, -1 };
    for (int32_t i = 0; i < rows; i++) {
        r0 [i] = 0;
        for (int32_t j = 0; j < s; j++)
            r0 [i] += w [(size_t) j * rows + i] * gamma [j];
    }
    s_factors (w, r0, rows, s, starts, 5, factors);
    s_solve (factors, 5, &options, split, &parts);
    difference = 0;
    for (int32_t j = 0; j < s; j++)
        difference = fmax (difference, fabs (split [j] - gamma [j]));
    s_ok (difference < 1e-8 && parts.residual_after < 1e-8 * r0_norm,
        "a reachable r0 gives its exact combination (%.1e)", difference);
    //  The budget is honoured: one iteration is steepest descent.
    options.max_iterations = 1;
    s_solve (factors, 5, &options, split, &parts);
    s_ok (parts.iterations == 1 && parts.residual_after > 1e-3 * r0_norm,
        "solver/tsirm_max_iterations = 1 runs one CGLS iteration");
    //  Identical columns (a task restarted mid-window): no breakdown.
    for (int32_t i = 0; i < rows; i++)
        w [(size_t) 1 * rows + i] = w [i];
    options.max_iterations = 15;
    s_factors (w, r0, rows, s, starts, 5, factors);
    s_ok (s_solve (factors, 5, &options, split, &parts) == 0
        && isfinite (parts.residual_after)
        && parts.residual_after <= parts.residual_before,
        "a rank-deficient window still gives a finite, no-worse step");
    factors [3] = NAN;
    s_ok (s_solve (factors, 5, &options, split, &parts) == -1,
        "a factor that is not finite is refused");
    free (factors);
    free (w);
    free (r0);
}

//  Serial solves, plain and with TSIRM, on the known solution b = A * 1.
static void
s_compare (const char *name, csr_t *A, int32_t tasks, int32_t overlap,
           multisplit_inner_t inner)
{
    double *b = malloc (A->nrows * sizeof (double));
    double *x = malloc (A->nrows * sizeof (double));
    problems_rhs_ones_solution (A, b);
    multisplit_serial_options_t options = {
        .tasks = tasks, .overlap = overlap, .tolerance = 1e-10,
        .residual_tolerance = 1e-9, .max_iterations = 3000
    };
    multisplit_options_defaults (&options.inner);
    options.inner.inner = inner;
    multisplit_serial_result_t plain, accelerated;
    multisplit_serial_solve (A, b, &options, x, &plain, NULL, 0);
    tsirm_options_defaults (&options.tsirm);
    multisplit_serial_solve (A, b, &options, x, &accelerated, NULL, 0);
    double error = 0;
    for (int32_t i = 0; i < A->nrows; i++)
        error = fmax (error, fabs (x [i] - 1));
    s_ok (accelerated.status == MULTISPLIT_CONVERGED
        && accelerated.residual <= 1e-9 && error < 1e-6
        && accelerated.minimisations > 0,
        "%s, %d tasks, overlap %d: TSIRM converges (%d iterations, %d "
        "steps, residual %.1e)", name, tasks, overlap,
        accelerated.iterations, accelerated.minimisations,
        accelerated.residual);
    s_ok (plain.status != MULTISPLIT_CONVERGED
        || accelerated.iterations < plain.iterations,
        "%s: in fewer outer iterations than plain multisplitting (%d, "
        "plain %d %s)", name, accelerated.iterations, plain.iterations,
        multisplit_status_name (plain.status));
    free (b);
    free (x);
}

//  Upwind convection-diffusion on an N x N grid, flow along x with speed
//  c (times h): a nonsymmetric M-matrix, as the job test's file matrix.
static csr_t *
s_convection (int32_t N, double c)
{
    csr_builder_t *builder = csr_builder_new (N * N, N * N, 5 * N * N);
    for (int32_t y = 0; y < N; y++)
        for (int32_t x = 0; x < N; x++) {
            int32_t i = y * N + x;
            csr_builder_add (builder, i, i, 4 + c);
            if (x > 0)
                csr_builder_add (builder, i, i - 1, -1 - c);
            if (x < N - 1)
                csr_builder_add (builder, i, i + 1, -1);
            if (y > 0)
                csr_builder_add (builder, i, i - N, -1);
            if (y < N - 1)
                csr_builder_add (builder, i, i + N, -1);
        }
    csr_t *A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    return A;
}

static void
s_test_serial (void)
{
    csr_t *A = NULL;
    problems_poisson3d (16, 0, 4096, &A, NULL, 0);
    s_compare ("3D Poisson 16^3", A, 4, 0, MULTISPLIT_INNER_KRYLOV);
    s_compare ("3D Poisson 16^3", A, 4, 2, MULTISPLIT_INNER_KRYLOV);
    csr_destroy (&A);
    problems_nascg_t nascg = { 3000, 200, 4, 0.1, 3 };
    problems_nascg (&nascg, 0, 3000, &A, NULL, 0);
    s_compare ("NAS-CG-like", A, 3, 0, MULTISPLIT_INNER_KRYLOV);
    csr_destroy (&A);
    A = s_convection (40, 2.0);
    s_compare ("convection-diffusion", A, 5, 0, MULTISPLIT_INNER_KRYLOV);
    csr_destroy (&A);
}

int
main (void)
{
    openblas_set_num_threads (1);
    tap_plan (11 + 8);
    s_test_step ();
    s_test_serial ();
    return tap_done ();
}
