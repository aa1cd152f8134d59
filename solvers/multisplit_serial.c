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
}

//  Partition A and set every task up from its extended rows.
static int
s_run_setup (serial_run_t *run, const csr_t *A, const double *b,
             const multisplit_serial_options_t *options, char *error,
             size_t error_size)
{
    run->tasks = options->tasks > 0 ? options->tasks : 0;
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
