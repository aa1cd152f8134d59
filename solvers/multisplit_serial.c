/*  =========================================================================
    multisplit_serial - reference driver: every task in one process

    Each outer iteration fills every task's x_ext from the global iterate of
    the previous iteration, iterates every task, then publishes the core
    values into the global iterate: a synchronous (Jacobi) sweep.
    =========================================================================
*/
#include "solvers.h"

//  A growth of the change by this factor from its best means divergence
#define MULTISPLIT_DIVERGENCE_FACTOR    1e8

//  All tasks of a run
typedef struct {
    int32_t tasks;              //  Number of tasks
    int32_t *boundaries;        //  tasks + 1 core boundaries
    multisplit_t **states;      //  One state per task
    double **external;          //  x_ext of each task
    int32_t n;                  //  Unknowns
    tsirm_options_t tsirm;      //  Window; size 0: none
    double *base;               //  TSIRM: the window's base x0 (n)
    double *columns;            //  TSIRM: the window's iterates (n x s)
} serial_run_t;

static void
s_run_destroy (serial_run_t *run)
{
    for (int32_t t = 0; t < run->tasks; t++) {
        multisplit_destroy (&run->states [t]);
        free (run->external [t]);
    }
    free (run->states);
    free (run->external);
    free (run->boundaries);
    free (run->base);
    free (run->columns);
}

//  Partition A and set every task up from its extended rows.
static int
s_run_setup (serial_run_t *run, const csr_t *A, const double *b,
             const multisplit_serial_options_t *options, char *error,
             size_t error_size)
{
    run->tasks = options->tasks > 0 ? options->tasks : 0;
    run->n = A->nrows;
    run->tsirm = options->tsirm;
    if (run->tsirm.size > 0) {
        run->base = solvers_calloc ((size_t) A->nrows, sizeof (double));
        run->columns = solvers_calloc ((size_t) A->nrows
                                       * (size_t) run->tsirm.size,
                                       sizeof (double));
    }
    run->boundaries = solvers_malloc (((size_t) run->tasks + 1)
                                      * sizeof (int32_t));
    run->states = solvers_calloc ((size_t) run->tasks, sizeof (multisplit_t *));
    run->external = solvers_calloc ((size_t) run->tasks, sizeof (double *));
    if (multisplit_partition (A->nrows, options->tasks, options->powers,
                              run->boundaries, error, error_size))
        return -1;
    for (int32_t t = 0; t < run->tasks; t++) {
        int32_t begin, end;
        multisplit_extended_range (run->boundaries, run->tasks, t,
                                   options->overlap, &begin, &end);
        csr_t *rows = csr_row_block (A, begin, end);
        int rc = multisplit_new (rows, b + begin, run->boundaries, run->tasks,
                                 t, options->overlap, &options->inner,
                                 &run->states [t], error, error_size);
        csr_destroy (&rows);
        if (rc)
            return -1;
        run->external [t] = solvers_malloc (
            (size_t) multisplit_external_size (run->states [t])
            * sizeof (double));
    }
    return 0;
}
//  One synchronous sweep: returns the largest change, or -1 when an
//  inner solver failed.
static double
s_sweep (serial_run_t *run, double *x, int64_t *inner_iterations)
{
    double change = 0.0;
    for (int32_t t = 0; t < run->tasks; t++)
        multisplit_external_from_global (run->states [t], x,
                                         run->external [t]);
    for (int32_t t = 0; t < run->tasks; t++) {
        multisplit_step_t step;
        if (multisplit_iterate (run->states [t], run->external [t], &step))
            return -1.0;
        *inner_iterations += step.inner_iterations;
        change = fmax (change, step.change);
    }
    for (int32_t t = 0; t < run->tasks; t++) {
        int32_t begin = multisplit_row_begin (run->states [t]);
        int32_t size = multisplit_row_end (run->states [t]) - begin;
        memcpy (x + begin, multisplit_solution (run->states [t]),
                (size_t) size * sizeof (double));
    }
    return change;
}

//  One task's rows of [A D | r0] for the window (D = columns - base),
//  column-major, into wr; d is a workspace of n values.
static void
s_task_rows (serial_run_t *run, int32_t t, double *d, double *wr)
{
    multisplit_t *state = run->states [t];
    int32_t begin = multisplit_row_begin (state);
    int32_t rows = multisplit_row_end (state) - begin;
    int32_t s = run->tsirm.size;
    for (int32_t j = 0; j < s; j++) {
        const double *column = run->columns + (size_t) j * run->n;
        for (int32_t i = 0; i < run->n; i++)
            d [i] = column [i] - run->base [i];
        multisplit_external_from_global (state, d, run->external [t]);
        multisplit_multiply (state, d + begin, run->external [t],
                             wr + (size_t) j * rows);
    }
    multisplit_external_from_global (state, run->base, run->external [t]);
    multisplit_residual_of (state, run->base + begin, run->external [t],
                            wr + (size_t) s * rows);
}

//  The least-squares step at the end of a window: x = base + D beta,
//  which becomes the next window's base.  Returns 0, or -1 if a value is
//  not finite.
static int
s_minimise (serial_run_t *run, double *x)
{
    int32_t s = run->tsirm.size;
    size_t length = tsirm_factor_length (s);
    double *factors = solvers_malloc ((size_t) run->tasks * length
                                      * sizeof (double));
    const double **pieces = solvers_malloc ((size_t) run->tasks
                                            * sizeof (double *));
    double *d = solvers_malloc ((size_t) run->n * sizeof (double));
    for (int32_t t = 0; t < run->tasks; t++) {
        int32_t rows = multisplit_row_end (run->states [t])
                     - multisplit_row_begin (run->states [t]);
        double *wr = solvers_malloc ((size_t) rows * (size_t) (s + 1)
                                     * sizeof (double));
        s_task_rows (run, t, d, wr);
        tsirm_local_factor (wr, rows, s, factors + (size_t) t * length);
        pieces [t] = factors + (size_t) t * length;
        free (wr);
    }
    double beta [TSIRM_SIZE_MAX];
    tsirm_result_t result;
    int rc = tsirm_solve (pieces, run->tasks, &run->tsirm, beta, &result);
    for (int32_t i = 0; rc == 0 && i < run->n; i++) {
        double value = run->base [i];
        for (int32_t j = 0; j < s; j++)
            value += beta [j] * (run->columns [(size_t) j * run->n + i]
                                 - run->base [i]);
        x [i] = value;
        run->base [i] = value;
    }
    for (int32_t t = 0; rc == 0 && t < run->tasks; t++) {
        int32_t begin = multisplit_row_begin (run->states [t]);
        multisplit_set_solution (run->states [t], x + begin);
    }
    free (d);
    free (pieces);
    free (factors);
    return rc;
}

//  True relative residual from the tasks' shares, as the distributed
//  verification computes it on a consistent snapshot.
static double
s_verify (serial_run_t *run, const double *b, const double *x, double *r)
{
    double r_squared = 0.0, b_squared = 0.0;
    for (int32_t t = 0; t < run->tasks; t++) {
        multisplit_external_from_global (run->states [t], x,
                                         run->external [t]);
        multisplit_residual (run->states [t], run->external [t], r);
        int32_t begin = multisplit_row_begin (run->states [t]);
        int32_t size = multisplit_row_end (run->states [t]) - begin;
        for (int32_t k = 0; k < size; k++) {
            r_squared += r [k] * r [k];
            b_squared += b [begin + k] * b [begin + k];
        }
    }
    return b_squared > 0.0 ? sqrt (r_squared / b_squared) : sqrt (r_squared);
}

//  Iterate until verified convergence, divergence or the cap.
static multisplit_status_t
s_iterate (serial_run_t *run, const csr_t *A, const double *b,
           const multisplit_serial_options_t *options, double *x,
           multisplit_serial_result_t *result)
{
    double *r = solvers_malloc ((size_t) A->nrows * sizeof (double));
    double best = INFINITY;
    multisplit_status_t status = MULTISPLIT_MAX_ITERATIONS;
    while (result->iterations < options->max_iterations) {
        double change = s_sweep (run, x, &result->inner_iterations);
        result->iterations++;
        if (change < 0.0) {
            status = MULTISPLIT_INNER_FAILED;
            break;
        }
        if (run->tsirm.size > 0) {
            int32_t column = (result->iterations - 1) % run->tsirm.size;
            memcpy (run->columns + (size_t) column * run->n, x,
                    (size_t) run->n * sizeof (double));
            if (column == run->tsirm.size - 1) {
                if (s_minimise (run, x)) {
                    status = MULTISPLIT_DIVERGED;
                    break;
                }
                result->minimisations++;
            }
        }
        result->change = change;
        best = fmin (best, change);
        if (!isfinite (change) || change > MULTISPLIT_DIVERGENCE_FACTOR * best) {
            status = MULTISPLIT_DIVERGED;
            break;
        }
        if (change > options->tolerance)
            continue;
        result->residual = s_verify (run, b, x, r);
        if (result->residual <= options->residual_tolerance) {
            status = MULTISPLIT_CONVERGED;
            break;
        }
    }
    free (r);
    return status;
}

//  --------------------------------------------------------------------------
//  Solve A x = b by multisplitting in one process.

int
multisplit_serial_solve (const csr_t *A, const double *b,
                         const multisplit_serial_options_t *options, double *x,
                         multisplit_serial_result_t *result, char *error,
                         size_t error_size)
{
    assert (A);
    assert (b);
    assert (options);
    assert (x);
    assert (result);
    if (A->nrows != A->ncols) {
        solvers_set_error (error, error_size, "matrix is %" PRId32 " x %"
                           PRId32 ", a linear system needs a square matrix",
                           A->nrows, A->ncols);
        return -1;
    }
    serial_run_t run = { 0 };
    if (s_run_setup (&run, A, b, options, error, error_size)) {
        s_run_destroy (&run);
        return -1;
    }
    multisplit_serial_result_t outcome = { .residual = INFINITY };
    memset (x, 0, (size_t) A->nrows * sizeof (double));
    outcome.status = s_iterate (&run, A, b, options, x, &outcome);
    s_run_destroy (&run);
    *result = outcome;
    return 0;
}

//  --------------------------------------------------------------------------
//  Name of a status.

const char *
multisplit_status_name (multisplit_status_t status)
{
    switch (status) {
        case MULTISPLIT_CONVERGED:      return "converged";
        case MULTISPLIT_MAX_ITERATIONS: return "max iterations";
        case MULTISPLIT_DIVERGED:       return "diverged";
        case MULTISPLIT_INNER_FAILED:   return "inner solver failed";
    }
    return "unknown";
}
