/*  =========================================================================
    outer_krylov - restarted GMRES or CG around the multisplitting blocks

    GMRES's basis is kept column by column over our core rows; the small
    Hessenberg problem is every task's own copy, reduced by Givens
    rotations as it grows (Saad, "Iterative Methods for Sparse Linear
    Systems", algorithm 6.9).  CG is Saad's algorithm 9.1 with its sums
    grouped so that a step needs two: p'Ap, then r'r with r'z.  The long
    vector operations go through OpenBLAS (dgemv over the basis reads
    each vector once per step).
    =========================================================================
*/
#include "outer_krylov.h"
#include "solvers.h"

#include <cblas.h>
#include <math.h>

//  Total exchanges a cycle's start and each step run: what a restored
//  task counts on to find where its cycle began
#define GMRES_START_ROUNDS 2
#define GMRES_STEP_ROUNDS 3
#define CG_START_ROUNDS 3
#define CG_STEP_ROUNDS 2

//  CG's vectors, columns of the basis: its iterate (the multisplitting
//  state holds the cycle's start until the cycle ends), the residual r,
//  u = M^-1 r, w = A u, the search direction p and s = A p
enum { CG_X, CG_R, CG_U, CG_W, CG_P, CG_S, CG_VECTORS };

struct _outer_krylov_t {
    outer_krylov_options_t options;
    multisplit_t *split;        //  Borrowed: blocks, b, the iterate
    int32_t rows;               //  Core rows
    bool flexible;              //  The preconditioner varies: keep Z
    double *basis;              //  GMRES's V: (m + 1) columns of `rows`;
                                //  CG's x, r, u, w, p, s (CG_X...)
    double *preconditioned;     //  GMRES's Z: m columns flexible, else one
    double *work;               //  GMRES: a vector of our rows
    double *external_values;    //  The others' values of a vector
    double *outgoing;           //  Our values each reader reads, packed
    double *hessenberg;         //  GMRES's H: (m + 1) x m, column-major
    double *cosines, *sines;    //  The Givens rotations so far
    double *g;                  //  Rotated ||r0|| e1: its last entry is
                                //  the residual's norm
    double *saved;              //  Checkpoint: rows + 2
    int32_t position;           //  Steps of the cycle run, 0 between
    double b_norm;              //  ||b||, summed at every cycle's start
    double r_norm;              //  CG: ||r|| of its iterate
    double gamma;               //  CG: r'u
    double alpha;               //  CG: the last step's length
    int64_t cycle_iteration;    //  Iteration the cycle began at
    int64_t cycle_exchanges;    //  Exchanges completed before it
    int64_t replay_iteration;   //  A restored cycle to run again, or -1
    int64_t replay_exchanges;
    //  The exchange's scratch, one entry per task
    const void **buffers;
    size_t *sizes;
    const void **received;
    size_t *received_sizes;
    int32_t tasks;              //  Their number, once known
};


//  --------------------------------------------------------------------------

outer_krylov_t *
outer_krylov_new (const outer_krylov_options_t *options, multisplit_t *split)
{
    assert (options && split);
    assert (options->restart >= 1
            && options->restart <= OUTER_KRYLOV_RESTART_MAX);
    outer_krylov_t *self = (outer_krylov_t *) zmalloc (sizeof *self);
    self->options = *options;
    self->split = split;
    self->rows = multisplit_row_end (split) - multisplit_row_begin (split);
    bool cg = options->method == OUTER_KRYLOV_CG;
    assert (!cg || options->inner_iterations == 0);
    self->flexible = options->inner_iterations > 0
                  && multisplit_inner (split) != MULTISPLIT_INNER_BANDED_LU;
    size_t rows = (size_t) self->rows, m = (size_t) options->restart;
    size_t columns = cg ? CG_VECTORS : m + 1;
    self->basis = (double *) zmalloc (columns * rows * sizeof (double));
    size_t external = (size_t) multisplit_external_size (split);
    self->external_values = (double *) zmalloc ((external + 1)
                                                * sizeof (double));
    if (!cg) {
        self->preconditioned = (double *) zmalloc ((self->flexible ? m : 1)
                                                   * rows * sizeof (double));
        self->work = (double *) zmalloc ((rows + 1) * sizeof (double));
        self->hessenberg = (double *) zmalloc ((m + 1) * m
                                               * sizeof (double));
        self->cosines = (double *) zmalloc (m * sizeof (double));
        self->sines = (double *) zmalloc (m * sizeof (double));
        self->g = (double *) zmalloc ((m + 1) * sizeof (double));
    }
    self->saved = (double *) zmalloc ((rows + 2) * sizeof (double));
    self->replay_iteration = -1;
    return self;
}

void
outer_krylov_destroy (outer_krylov_t **self_p)
{
    assert (self_p);
    outer_krylov_t *self = *self_p;
    if (self) {
        free (self->basis);
        free (self->preconditioned);
        free (self->work);
        free (self->external_values);
        free (self->outgoing);
        free (self->hessenberg);
        free (self->cosines);
        free (self->sines);
        free (self->g);
        free (self->saved);
        free (self->buffers);
        free (self->sizes);
        free (self->received);
        free (self->received_sizes);
        free (self);
        *self_p = NULL;
    }
}


//  --------------------------------------------------------------------------
//  The exchanges

static void
s_size_scratch (outer_krylov_t *self, const outer_krylov_readers_t *readers)
{
    if (self->tasks == readers->tasks)
        return;
    self->tasks = readers->tasks;
    size_t tasks = (size_t) readers->tasks;
    self->buffers = (const void **) realloc (self->buffers,
                                             tasks * sizeof (void *));
    self->sizes = (size_t *) realloc (self->sizes, tasks * sizeof (size_t));
    self->received = (const void **) realloc (self->received,
                                              tasks * sizeof (void *));
    self->received_sizes = (size_t *) realloc (self->received_sizes,
                                               tasks * sizeof (size_t));
    assert (self->buffers && self->sizes && self->received
            && self->received_sizes);
    size_t total = 0;
    for (int32_t t = 0; t < readers->tasks; t++)
        total += (size_t) readers->requested_count [t];
    free (self->outgoing);
    self->outgoing = (double *) zmalloc ((total + 1) * sizeof (double));
}

//  Give each reader its values of `vector` (our core rows) and take ours
//  of theirs into external_values.  Returns 0, or -1.
static int
s_exchange_vector (outer_krylov_t *self, jace_task_t *task,
                   const outer_krylov_readers_t *readers, const double *vector)
{
    int32_t begin = multisplit_row_begin (self->split);
    double *piece = self->outgoing;
    for (int32_t t = 0; t < readers->tasks; t++) {
        int32_t count = readers->requested [t] ? readers->requested_count [t]
                                               : 0;
        for (int32_t k = 0; k < count; k++)
            piece [k] = vector [readers->requested [t][k] - begin];
        self->buffers [t] = piece;
        self->sizes [t] = (size_t) count * sizeof (double);
        piece += count;
    }
    if (jace_task_alltoallv (task, self->buffers, self->sizes,
                             self->received, self->received_sizes))
        return -1;
    for (int32_t t = 0; t < readers->tasks; t++) {
        int32_t needed = t == readers->rank
                       ? 0 : multisplit_dependency_count (self->split, t);
        if (self->received_sizes [t] != (size_t) needed * sizeof (double)) {
            zsys_error ("task %d: Krylov values of task %d are %zu bytes, "
                        "not %d values", readers->rank, t,
                        self->received_sizes [t], needed);
            return -1;
        }
        if (needed > 0)
            memcpy (self->external_values
                    + multisplit_dependency_offset (self->split, t),
                    self->received [t], (size_t) needed * sizeof (double));
    }
    return 0;
}

//  Sum `count` numbers over every task, in rank order (so that every task
//  gets the same bits), in place.  Returns 0, or -1.
static int
s_sum (outer_krylov_t *self, jace_task_t *task,
       const outer_krylov_readers_t *readers, double *values, int32_t count)
{
    double mine [OUTER_KRYLOV_RESTART_MAX + 2];
    assert (count <= OUTER_KRYLOV_RESTART_MAX + 2);
    memcpy (mine, values, (size_t) count * sizeof (double));
    for (int32_t t = 0; t < readers->tasks; t++) {
        self->buffers [t] = mine;
        self->sizes [t] = (size_t) count * sizeof (double);
    }
    if (jace_task_alltoallv (task, self->buffers, self->sizes,
                             self->received, self->received_sizes))
        return -1;
    for (int32_t i = 0; i < count; i++)
        values [i] = 0;
    for (int32_t t = 0; t < readers->tasks; t++) {
        if (self->received_sizes [t] != (size_t) count * sizeof (double)) {
            zsys_error ("task %d: Krylov sums of task %d are %zu bytes, not "
                        "%d values", readers->rank, t,
                        self->received_sizes [t], count);
            return -1;
        }
        double theirs [OUTER_KRYLOV_RESTART_MAX + 2];
        //  Copied: a received piece need not be aligned for doubles
        memcpy (theirs, self->received [t], (size_t) count * sizeof (double));
        for (int32_t i = 0; i < count; i++)
            values [i] += theirs [i];
    }
    for (int32_t i = 0; i < count; i++)
        if (!isfinite (values [i]))
            return -1;
    return 0;
}


//  --------------------------------------------------------------------------
//  GMRES's cycle

static double *
s_column (const outer_krylov_t *self, double *matrix, int32_t j)
{
    return matrix + (size_t) j * (size_t) self->rows;
}

//  GMRES's cycle start: r0 = b - A x, ||r0||, ||b||, v0 = r0 / ||r0||.
//  Returns 0, or -1.
static int
s_start_gmres (outer_krylov_t *self, jace_task_t *task,
               const outer_krylov_readers_t *readers)
{
    const double *x = multisplit_solution (self->split);
    if (s_exchange_vector (self, task, readers, x))
        return -1;
    double *r = s_column (self, self->basis, 0);
    multisplit_residual_of (self->split, x, self->external_values, r);
    //  ||b|| is summed again at every cycle: a replacement that runs a
    //  cycle again gets it from the pieces of that cycle, as the others did
    double sums [2] = { cblas_ddot (self->rows, r, 1, r, 1),
                        self->options.rows_b_squared };
    if (s_sum (self, task, readers, sums, 2))
        return -1;
    self->b_norm = sqrt (sums [1]);
    double beta = sqrt (sums [0]);
    memset (self->g, 0, ((size_t) self->options.restart + 1)
                        * sizeof (double));
    self->g [0] = beta;
    if (beta > 0)
        cblas_dscal (self->rows, 1 / beta, r, 1);
    return 0;
}

//  z = M^-1 v_j, into Z's column j (flexible) or its only one.
static double *
s_precondition (outer_krylov_t *self, int32_t j)
{
    double *z = s_column (self, self->preconditioned, self->flexible ? j : 0);
    if (multisplit_precondition (self->split, s_column (self, self->basis, j),
                                 z, self->options.inner_iterations))
        return NULL;
    return z;
}

//  Rotate column j of H by the rotations so far, make the rotation that
//  zeroes its subdiagonal, and apply it to g.
static void
s_rotate (outer_krylov_t *self, int32_t j)
{
    int32_t m = self->options.restart;
    double *h = self->hessenberg + (size_t) j * (m + 1);
    for (int32_t i = 0; i < j; i++) {
        double upper = h [i], lower = h [i + 1];
        h [i] = self->cosines [i] * upper + self->sines [i] * lower;
        h [i + 1] = -self->sines [i] * upper + self->cosines [i] * lower;
    }
    double norm = hypot (h [j], h [j + 1]);
    self->cosines [j] = norm > 0 ? h [j] / norm : 1;
    self->sines [j] = norm > 0 ? h [j + 1] / norm : 0;
    h [j] = norm;
    h [j + 1] = 0;
    self->g [j + 1] = -self->sines [j] * self->g [j];
    self->g [j] = self->cosines [j] * self->g [j];
}

//  Arnoldi step j: v_{j+1} from A M^-1 v_j, orthogonalised against the
//  basis by classical Gram-Schmidt.  Returns 0, or -1.
static int
s_arnoldi (outer_krylov_t *self, jace_task_t *task,
           const outer_krylov_readers_t *readers, int32_t j)
{
    int32_t m = self->options.restart;
    double *z = s_precondition (self, j);
    if (!z || s_exchange_vector (self, task, readers, z))
        return -1;
    double *w = s_column (self, self->basis, j + 1);
    multisplit_multiply (self->split, z, self->external_values, w);
    double *h = self->hessenberg + (size_t) j * (m + 1);
    cblas_dgemv (CblasColMajor, CblasTrans, self->rows, j + 1, 1.0,
                 self->basis, self->rows, w, 1, 0.0, h, 1);
    if (s_sum (self, task, readers, h, j + 1))
        return -1;
    cblas_dgemv (CblasColMajor, CblasNoTrans, self->rows, j + 1, -1.0,
                 self->basis, self->rows, h, 1, 1.0, w, 1);
    double norm = cblas_ddot (self->rows, w, 1, w, 1);
    if (s_sum (self, task, readers, &norm, 1))
        return -1;
    h [j + 1] = sqrt (norm);
    //  A zero norm is the lucky breakdown: the solution is in the basis,
    //  and the cycle ends here (the rotation makes g's entry 0)
    if (h [j + 1] > 0)
        cblas_dscal (self->rows, 1 / h [j + 1], w, 1);
    s_rotate (self, j);
    return 0;
}

//  GMRES's cycle end after `steps` steps: y from the triangular H y = g,
//  x += Z y (or M^-1 V y).  Returns 0, or -1 (the solve broke down).
static int
s_end_gmres (outer_krylov_t *self, int32_t steps)
{
    int32_t m = self->options.restart;
    double y [OUTER_KRYLOV_RESTART_MAX];
    for (int32_t i = steps - 1; i >= 0; i--) {
        double sum = self->g [i];
        for (int32_t k = i + 1; k < steps; k++)
            sum -= self->hessenberg [(size_t) k * (m + 1) + i] * y [k];
        double pivot = self->hessenberg [(size_t) i * (m + 1) + i];
        y [i] = pivot != 0 ? sum / pivot : 0;
    }
    double *update = self->work;
    if (self->flexible)
        cblas_dgemv (CblasColMajor, CblasNoTrans, self->rows, steps, 1.0,
                     self->preconditioned, self->rows, y, 1, 0.0, update, 1);
    else {
        //  M^-1 is linear: M^-1 (V y), one more application per cycle
        double *v_y = s_column (self, self->basis, 0);
        cblas_dgemv (CblasColMajor, CblasNoTrans, self->rows, steps, 1.0,
                     self->basis, self->rows, y, 1, 0.0, self->saved, 1);
        memcpy (v_y, self->saved, (size_t) self->rows * sizeof (double));
        if (!s_precondition (self, 0))
            return -1;
        memcpy (update, s_column (self, self->preconditioned, 0),
                (size_t) self->rows * sizeof (double));
    }
    memcpy (self->saved, multisplit_solution (self->split),
            (size_t) self->rows * sizeof (double));
    cblas_daxpy (self->rows, 1.0, update, 1, self->saved, 1);
    for (int32_t i = 0; i < self->rows; i++)
        if (!isfinite (self->saved [i]))
            return -1;
    multisplit_set_solution (self->split, self->saved);
    return 0;
}


//  --------------------------------------------------------------------------
//  CG's cycle

//  u = M^-1 r, then w = A u (u's values exchanged with the neighbours),
//  then r'u, w'u and r'r into sums [0..2], summed over every task with
//  the count - 3 numbers after them.  Returns 0, or -1.
static int
s_cg_reduce (outer_krylov_t *self, jace_task_t *task,
             const outer_krylov_readers_t *readers, double *sums,
             int32_t count)
{
    double *r = s_column (self, self->basis, CG_R);
    double *u = s_column (self, self->basis, CG_U);
    double *w = s_column (self, self->basis, CG_W);
    if (multisplit_precondition (self->split, r, u, 0)
    ||  s_exchange_vector (self, task, readers, u))
        return -1;
    multisplit_multiply (self->split, u, self->external_values, w);
    sums [0] = cblas_ddot (self->rows, r, 1, u, 1);
    sums [1] = cblas_ddot (self->rows, w, 1, u, 1);
    sums [2] = cblas_ddot (self->rows, r, 1, r, 1);
    return s_sum (self, task, readers, sums, count);
}

static double s_estimate (const outer_krylov_t *self);

//  CG's ||r|| / ||b|| meets the tolerance: nothing more to build
static bool
s_cg_converged (const outer_krylov_t *self)
{
    return s_estimate (self) <= self->options.tolerance;
}

//  False, saying so, when CG meets a direction of no positive curvature
static bool
s_cg_positive (const outer_krylov_t *self,
               const outer_krylov_readers_t *readers, double gamma,
               double curvature)
{
    if (gamma > 0 && curvature > 0 && isfinite (gamma / curvature))
        return true;
    zsys_error ("task %d: CG found r'M^-1r = %g and p'Ap = %g: the matrix or "
                "its block preconditioner is not symmetric positive definite",
                readers->rank, gamma, curvature);
    return false;
}

//  CG's cycle start: x = the iterate, r = b - A x, then u, w and the sums
//  (with ||b||^2), p = u, s = w.  Returns 0, or -1.
static int
s_start_cg (outer_krylov_t *self, jace_task_t *task,
            const outer_krylov_readers_t *readers)
{
    const double *x = multisplit_solution (self->split);
    if (s_exchange_vector (self, task, readers, x))
        return -1;
    size_t bytes = (size_t) self->rows * sizeof (double);
    memcpy (s_column (self, self->basis, CG_X), x, bytes);
    multisplit_residual_of (self->split, x, self->external_values,
                            s_column (self, self->basis, CG_R));
    double sums [4] = { 0, 0, 0, self->options.rows_b_squared };
    if (s_cg_reduce (self, task, readers, sums, 4))
        return -1;
    self->b_norm = sqrt (sums [3]);
    self->r_norm = sqrt (sums [2]);
    self->gamma = sums [0];
    memcpy (s_column (self, self->basis, CG_P),
            s_column (self, self->basis, CG_U), bytes);
    memcpy (s_column (self, self->basis, CG_S),
            s_column (self, self->basis, CG_W), bytes);
    if (s_cg_converged (self))
        return 0;       //  No step will be taken
    if (!s_cg_positive (self, readers, self->gamma, sums [1]))
        return -1;
    self->alpha = self->gamma / sums [1];
    return 0;
}

//  One CG step in Chronopoulos and Gear's form (1989; PETSc's -ksp_cg_
//  single_reduction): x += alpha p, r -= alpha s, then u = M^-1 r and
//  w = A u with one sum for r'u, w'u and r'r, and the recurrences for the
//  next alpha, p = u + beta p and s = w + beta s = A p.  Two exchanges a
//  step where the textbook form takes three: across a 20 ms backbone each
//  costs a latency.  Returns 0, or -1 (a direction of no positive
//  curvature: the matrix or the preconditioner is not positive definite).
static int
s_cg_step (outer_krylov_t *self, jace_task_t *task,
           const outer_krylov_readers_t *readers)
{
    double *p = s_column (self, self->basis, CG_P);
    double *s = s_column (self, self->basis, CG_S);
    cblas_daxpy (self->rows, self->alpha, p, 1,
                 s_column (self, self->basis, CG_X), 1);
    cblas_daxpy (self->rows, -self->alpha, s, 1,
                 s_column (self, self->basis, CG_R), 1);
    double sums [3];
    if (s_cg_reduce (self, task, readers, sums, 3))
        return -1;
    double gamma = sums [0], beta = gamma / self->gamma;
    self->r_norm = sqrt (sums [2]);
    if (s_cg_converged (self))
        return 0;       //  The cycle ends: no next direction to build
    double curvature = sums [1] - beta * gamma / self->alpha;
    if (!s_cg_positive (self, readers, gamma, curvature))
        return -1;
    self->gamma = gamma;
    self->alpha = gamma / curvature;
    //  p = u + beta p, s = w + beta s
    cblas_dscal (self->rows, beta, p, 1);
    cblas_daxpy (self->rows, 1.0, s_column (self, self->basis, CG_U), 1, p, 1);
    cblas_dscal (self->rows, beta, s, 1);
    cblas_daxpy (self->rows, 1.0, s_column (self, self->basis, CG_W), 1, s, 1);
    return 0;
}

//  CG's cycle end: its iterate becomes the task's.  Returns 0, or -1 (a
//  value is not finite).
static int
s_end_cg (outer_krylov_t *self)
{
    const double *x = s_column (self, self->basis, CG_X);
    for (int32_t i = 0; i < self->rows; i++)
        if (!isfinite (x [i]))
            return -1;
    multisplit_set_solution (self->split, x);
    return 0;
}


//  --------------------------------------------------------------------------
//  Either method's cycle

static bool
s_cg (const outer_krylov_t *self)
{
    return self->options.method == OUTER_KRYLOV_CG;
}

static const char *
s_name (const outer_krylov_t *self)
{
    return s_cg (self) ? "CG" : "GMRES";
}

static int64_t
s_start_rounds (const outer_krylov_t *self)
{
    return s_cg (self) ? CG_START_ROUNDS : GMRES_START_ROUNDS;
}

static int64_t
s_step_rounds (const outer_krylov_t *self)
{
    return s_cg (self) ? CG_STEP_ROUNDS : GMRES_STEP_ROUNDS;
}

static double
s_estimate (const outer_krylov_t *self)
{
    double residual = s_cg (self) ? self->r_norm
                                  : fabs (self->g [self->position]);
    return self->b_norm > 0 ? residual / self->b_norm : residual;
}

//  One step of the cycle under way (starting one if none is), ending the
//  cycle when it is full or the estimate meets the tolerance.
static int
s_step (outer_krylov_t *self, jace_task_t *task,
        const outer_krylov_readers_t *readers, int64_t iteration,
        outer_krylov_step_t *step)
{
    if (self->position == 0) {
        self->cycle_iteration = iteration;
        self->cycle_exchanges = jace_task_exchanges (task);
        if (s_cg (self) ? s_start_cg (self, task, readers)
                        : s_start_gmres (self, task, readers))
            return -1;
        //  Already there (or b = 0): nothing to improve, no step to run
        if (s_estimate (self) <= self->options.tolerance) {
            step->estimate = s_estimate (self);
            step->converged = true;
            return 0;
        }
    }
    if (s_cg (self) ? s_cg_step (self, task, readers)
                    : s_arnoldi (self, task, readers, self->position))
        return -1;
    self->position++;
    step->estimate = s_estimate (self);
    step->converged = step->estimate <= self->options.tolerance;
    if (step->converged || self->position == self->options.restart) {
        int32_t steps = self->position;
        self->position = 0;
        if (s_cg (self) ? s_end_cg (self) : s_end_gmres (self, steps))
            return -1;
        step->cycle_ended = true;
    }
    return 0;
}

//  A restored task runs its cycle's steps again, from the exchange count
//  the cycle began at, up to the iteration it was restored at.
static int
s_catch_up (outer_krylov_t *self, jace_task_t *task,
            const outer_krylov_readers_t *readers, outer_krylov_step_t *step)
{
    int64_t iteration = jace_task_iteration (task);
    int64_t steps = iteration - self->replay_iteration;
    self->cycle_iteration = self->replay_iteration;
    self->replay_iteration = -1;
    if (steps <= 0 || steps >= self->options.restart
    ||  self->replay_exchanges + s_start_rounds (self)
        + steps * s_step_rounds (self)
        != jace_task_exchanges (task)
    ||  jace_task_replay_exchanges (task, self->replay_exchanges)) {
        zsys_error ("task %d: the checkpoint's %s cycle (%" PRId64
                    " steps from exchange %" PRId64 ") does not lead to "
                    "iteration %" PRId64 " and exchange %" PRId64,
                    readers->rank, s_name (self), steps,
                    self->replay_exchanges, iteration,
                    jace_task_exchanges (task));
        return -1;
    }
    self->position = 0;
    zsys_notice ("task %d: runs the %" PRId64 " steps of its %s cycle "
                 "from iteration %" PRId64 " again", readers->rank, steps,
                 s_name (self), self->cycle_iteration);
    for (int64_t k = 0; k < steps; k++)
        if (s_step (self, task, readers, self->cycle_iteration + k, step)
        ||  self->position == 0)
            return -1;  //  A cycle that ended early was not checkpointed
    return 0;
}

int
outer_krylov_iterate (outer_krylov_t *self, jace_task_t *task,
                      const outer_krylov_readers_t *readers,
                      outer_krylov_step_t *step)
{
    assert (self && task && readers && step);
    memset (step, 0, sizeof *step);
    s_size_scratch (self, readers);
    if (self->replay_iteration >= 0
    &&  s_catch_up (self, task, readers, step))
        return -1;
    if (s_step (self, task, readers, jace_task_iteration (task), step)) {
        //  Void: every task's call failed or was cut short alike, or this
        //  one ends; the next iteration starts a cycle from x
        self->position = 0;
        return -1;
    }
    return 0;
}


//  --------------------------------------------------------------------------
//  Checkpoints

size_t
outer_krylov_saved_length (const outer_krylov_t *self)
{
    assert (self);
    return (size_t) self->rows + 2;
}

const double *
outer_krylov_save (outer_krylov_t *self)
{
    assert (self);
    memcpy (self->saved, multisplit_solution (self->split),
            (size_t) self->rows * sizeof (double));
    self->saved [self->rows] = self->position > 0
                             ? (double) self->cycle_iteration : -1;
    self->saved [self->rows + 1] = self->position > 0
                                 ? (double) self->cycle_exchanges : 0;
    return self->saved;
}

//  True if value is a whole number in [low, 2^53]
static bool
s_whole (double value, double low)
{
    return value >= low && value <= 9007199254740992.0
        && value == floor (value);
}

int
outer_krylov_restore (outer_krylov_t *self, const double *saved, size_t count,
                      char *reason, size_t reason_size)
{
    assert (self && saved);
    size_t rows = (size_t) self->rows;
    if (count != rows && count != rows + 2) {
        snprintf (reason, reason_size, "%s checkpoint has %zu values, its "
                  "block needs %zu (and 2 more for its cycle)", s_name (self),
                  count, rows);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        if (!isfinite (saved [i])) {
            snprintf (reason, reason_size, "%s checkpoint holds a value "
                      "that is not finite at row %zu", s_name (self), i);
            return -1;
        }
    double iteration = count > rows ? saved [rows] : -1;
    double exchanges = count > rows ? saved [rows + 1] : 0;
    if ((iteration != -1 && !s_whole (iteration, 0))
    ||  !s_whole (exchanges, 0)) {
        snprintf (reason, reason_size, "%s checkpoint names cycle "
                  "iteration %g and exchange %g", s_name (self), iteration,
                  exchanges);
        return -1;
    }
    multisplit_set_solution (self->split, saved);
    self->position = 0;
    self->replay_iteration = (int64_t) iteration;
    self->replay_exchanges = (int64_t) exchanges;
    return 0;
}
