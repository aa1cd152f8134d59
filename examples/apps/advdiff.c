/*  =========================================================================
    advdiff - a Jace application written outside Jace: a 2D advection-
    diffusion-reaction problem solved by asynchronous iterations

    The kind of test case the AIAC literature runs on JaceP2P: a
    stationary, non-linear convection-diffusion problem on the unit square,

        -nu (u_xx + u_yy) + ax u_x + ay u_y + kappa u^3 = f,  u = 0 on the
                                                               boundary,

    with upwind finite differences on an N x N interior grid (h = 1/(N+1)).
    Scaled by h^2, grid point p = (row r, column c) at x = (c+1)h,
    y = (r+1)h reads

        G(u)_p = nu (4 u_p - u_W - u_E - u_S - u_N)
               + h ax (u_p - u_W) + h ay (u_p - u_S) + h^2 kappa u_p^3 = b_p

    (ax, ay >= 0: upwind is the west and south neighbour).  G is an
    M-function (a diagonally dominant M-matrix plus a diagonal increasing
    term), so the non-linear Jacobi iteration -- solve equation p for u_p,
    the neighbours fixed -- converges, and converges asynchronously too:
    each task may use whatever neighbour values it last received.

    The right-hand side is b = G(u*) for u*(x,y) = 16 x(1-x) y(1-y), so the
    discrete solution is known: the spawner checks the answer against it
    (the max-norm error) as well as by its residual.

    Each task owns a block of grid rows; an iteration updates them from the
    newest rows its two neighbour tasks sent, then sends its own edge rows.

    Parameters (job file section `problem`): n (grid side, 32), nu (1),
    ax (20), ay (10), kappa (10).

    Build: make (the Makefile uses only `pkg-config jace`).
    =========================================================================
*/
#include <jace.h>
#include <inttypes.h>
#include <stdio.h>
#include <math.h>

//  Largest grid side accepted: N^2 unknowns must fit in one spawner.
#define ADVDIFF_N_MAX 4000
//  Newton steps of one point update, at most (it takes 2 or 3).
#define NEWTON_STEPS 50

//  The problem, as the spawner and each task see it.
typedef struct {
    int64_t n;                  //  Grid side
    double h;                   //  Mesh size, 1 / (n + 1)
    double nu;                  //  Diffusion
    double ax, ay;              //  Advection velocity, >= 0
    double kappa;               //  Reaction: kappa u^3
} problem_t;

//  Read and check the parameters; 0, or -1 with the reason.
static int
s_problem_read (zhash_t *params, problem_t *problem, char *reason,
                size_t reason_size)
{
    double n;
    if (jace_param_integer (params, "problem/n", 32, 2, ADVDIFF_N_MAX, &n,
                            reason, reason_size)
    ||  jace_param_number (params, "problem/nu", 1, 1e-6, 1e6,
                           &problem->nu, reason, reason_size)
    ||  jace_param_number (params, "problem/ax", 20, 0, 1e6, &problem->ax,
                           reason, reason_size)
    ||  jace_param_number (params, "problem/ay", 10, 0, 1e6, &problem->ay,
                           reason, reason_size)
    ||  jace_param_number (params, "problem/kappa", 10, 0, 1e6,
                           &problem->kappa, reason, reason_size))
        return -1;
    problem->n = (int64_t) n;
    problem->h = 1.0 / (double) (problem->n + 1);
    return 0;
}

//  The known solution at grid point (r, c); 0 on and beyond the boundary.
static double
s_exact (const problem_t *p, int64_t r, int64_t c)
{
    if (r < 0 || c < 0 || r >= p->n || c >= p->n)
        return 0;
    double x = (double) (c + 1) * p->h, y = (double) (r + 1) * p->h;
    return 16 * x * (1 - x) * y * (1 - y);
}

//  G(u)_p from the point's value and its four neighbours' (W, E, S, N).
static double
s_apply (const problem_t *p, double u, double west, double east,
         double south, double north)
{
    return p->nu * (4 * u - west - east - south - north)
         + p->h * p->ax * (u - west) + p->h * p->ay * (u - south)
         + p->h * p->h * p->kappa * u * u * u;
}

//  b_p = G(u*)_p.
static double
s_rhs (const problem_t *p, int64_t r, int64_t c)
{
    return s_apply (p, s_exact (p, r, c), s_exact (p, r, c - 1),
                    s_exact (p, r, c + 1), s_exact (p, r - 1, c),
                    s_exact (p, r + 1, c));
}

//  Solve equation p for u_p, the neighbours fixed: d u + q u^3 = s with
//  d > 0, q >= 0, an increasing function of u: Newton from the current
//  value converges in a few steps.
static double
s_solve_point (const problem_t *p, double u, double west, double east,
               double south, double north, double b)
{
    double d = 4 * p->nu + p->h * (p->ax + p->ay);
    double q = p->h * p->h * p->kappa;
    double s = b + p->nu * (west + east + south + north)
             + p->h * p->ax * west + p->h * p->ay * south;
    for (int step = 0; step < NEWTON_STEPS; step++) {
        double delta = (d * u + q * u * u * u - s) / (d + 3 * q * u * u);
        u -= delta;
        if (fabs (delta) <= 1e-15 * (1 + fabs (u)))
            break;
    }
    return u;
}

//  --------------------------------------------------------------------------
//  Spawner side: check the job, shape it, verify the answer

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    problem_t *problem = (problem_t *) calloc (1, sizeof *problem);
    if (problem && s_problem_read (params, problem, reason, reason_size)) {
        free (problem);
        return NULL;
    }
    if (!problem)
        snprintf (reason, reason_size, "out of memory");
    return problem;
}

static void
s_unload (void **problem_p)
{
    free (*problem_p);
    *problem_p = NULL;
}

//  One task's rows are whole grid rows.
static void
s_shape (void *problem, int64_t *rows, int64_t *unknowns_per_row)
{
    *rows = ((problem_t *) problem)->n;
    *unknowns_per_row = ((problem_t *) problem)->n;
}

//  The value of x at (r, c), zero beyond the boundary.
static double
s_at (const problem_t *p, const double *x, int64_t r, int64_t c)
{
    return r < 0 || c < 0 || r >= p->n || c >= p->n ? 0 : x [r * p->n + c];
}

//  ||b - G(x)|| / ||b||, over the whole grid.
static double
s_residual (void *problem, const double *x, int64_t count)
{
    const problem_t *p = (const problem_t *) problem;
    if (count != p->n * p->n)
        return INFINITY;
    double norm_r = 0, norm_b = 0;
    for (int64_t r = 0; r < p->n; r++)
        for (int64_t c = 0; c < p->n; c++) {
            double b = s_rhs (p, r, c);
            double g = s_apply (p, x [r * p->n + c], s_at (p, x, r, c - 1),
                                s_at (p, x, r, c + 1), s_at (p, x, r - 1, c),
                                s_at (p, x, r + 1, c));
            norm_r += (b - g) * (b - g);
            norm_b += b * b;
        }
    return sqrt (norm_r / norm_b);
}

//  max |x - u*|: the discrete solution is u* on the grid.
static double
s_error (void *problem, const double *x, int64_t count)
{
    const problem_t *p = (const problem_t *) problem;
    if (count != p->n * p->n)
        return NAN;
    double error = 0;
    for (int64_t r = 0; r < p->n; r++)
        for (int64_t c = 0; c < p->n; c++)
            error = fmax (error, fabs (x [r * p->n + c] - s_exact (p, r, c)));
    return error;
}

//  --------------------------------------------------------------------------
//  Daemon side: one task

typedef struct {
    problem_t problem;
    int64_t first_row;          //  First grid row we own
    int64_t rows;               //  Grid rows we own
    double *x;                  //  Our rows, rows * n values
    double *b;                  //  Their right-hand side
    double *zeros;              //  A row of zeros: the boundary, and the
                                //  initial guess of a neighbour's row
} task_state_t;

static void
s_destroy (void **state_p)
{
    task_state_t *self = (task_state_t *) *state_p;
    if (self) {
        free (self->x);
        free (self->b);
        free (self->zeros);
        free (self);
        *state_p = NULL;
    }
}

//  Ask the tasks above and below for the grid rows beside our block, so
//  the runtime knows whom we depend on.
static void
s_request_ghost_rows (task_state_t *self, jace_task_t *task)
{
    int64_t n = self->problem.n, rank = jace_task_rank (task);
    int64_t *indices = (int64_t *) malloc ((size_t) n * sizeof (int64_t));
    if (!indices)
        return;
    if (self->first_row > 0) {
        for (int64_t c = 0; c < n; c++)
            indices [c] = (self->first_row - 1) * n + c;
        jace_task_request (task, rank - 1, indices, (size_t) n);
    }
    if (self->first_row + self->rows < n) {
        for (int64_t c = 0; c < n; c++)
            indices [c] = (self->first_row + self->rows) * n + c;
        jace_task_request (task, rank + 1, indices, (size_t) n);
    }
    free (indices);
}

static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    task_state_t *self = (task_state_t *) calloc (1, sizeof *self);
    if (!self) {
        snprintf (reason, reason_size, "out of memory");
        return NULL;
    }
    if (s_problem_read (jace_task_params (task), &self->problem, reason,
                        reason_size)) {
        free (self);
        return NULL;
    }
    int64_t n = self->problem.n;
    self->first_row = jace_task_first_row (task);
    self->rows = jace_task_row_count (task);
    self->x = (double *) calloc ((size_t) (self->rows * n), sizeof (double));
    self->b = (double *) calloc ((size_t) (self->rows * n), sizeof (double));
    self->zeros = (double *) calloc ((size_t) n, sizeof (double));
    if (self->rows < 1 || !self->x || !self->b || !self->zeros) {
        snprintf (reason, reason_size, "task %" PRId64 ": empty block or "
                  "out of memory", jace_task_rank (task));
        void *state = self;
        s_destroy (&state);
        return NULL;
    }
    for (int64_t i = 0; i < self->rows; i++)
        for (int64_t c = 0; c < n; c++)
            self->b [i * n + c] = s_rhs (&self->problem,
                                         self->first_row + i, c);
    s_request_ghost_rows (self, task);
    return self;
}

//  The newest copy of grid row `row` from task `from`, or zeros until one
//  arrives.
static const double *
s_ghost_row (task_state_t *self, jace_task_t *task, int64_t from,
             int64_t row)
{
    size_t count;
    int64_t first;
    const double *values = jace_task_newest (task, from, &count, &first,
                                             NULL);
    int64_t n = self->problem.n;
    if (!values || (int64_t) count != n || first != row * n)
        return self->zeros;
    return values;
}

//  One non-linear Jacobi sweep over our rows, in place for the rows we own
//  (Gauss-Seidel within the block: still an asynchronous iteration).
static int
s_iterate (jace_task_t *task, void *state)
{
    task_state_t *self = (task_state_t *) state;
    const problem_t *p = &self->problem;
    int64_t n = p->n, rank = jace_task_rank (task);
    bool has_below = self->first_row > 0;
    bool has_above = self->first_row + self->rows < n;
    const double *below = has_below
        ? s_ghost_row (self, task, rank - 1, self->first_row - 1)
        : self->zeros;
    const double *above = has_above
        ? s_ghost_row (self, task, rank + 1, self->first_row + self->rows)
        : self->zeros;

    double change = 0;
    for (int64_t i = 0; i < self->rows; i++) {
        double *row = self->x + i * n;
        const double *south = i > 0 ? row - n : below;
        const double *north = i < self->rows - 1 ? row + n : above;
        for (int64_t c = 0; c < n; c++) {
            double west = c > 0 ? row [c - 1] : 0;
            double east = c < n - 1 ? row [c + 1] : 0;
            double u = s_solve_point (p, row [c], west, east, south [c],
                                      north [c], self->b [i * n + c]);
            change = fmax (change, fabs (u - row [c]));
            row [c] = u;
        }
    }
    if (!isfinite (change)) {
        //  Said in the job's failure, rather than the runtime's guess
        char why [160];
        snprintf (why, sizeof why, "the sweep of grid rows %" PRId64 "-%"
                  PRId64 " gave values that are not finite",
                  self->first_row + 1, self->first_row + self->rows);
        jace_task_set_failure (task, why);
        return -1;
    }
    jace_task_set_change (task, change);
    if (has_below)
        jace_task_send (task, rank - 1, self->x, (size_t) n,
                        self->first_row * n);
    if (has_above)
        jace_task_send (task, rank + 1, self->x + (self->rows - 1) * n,
                        (size_t) n, (self->first_row + self->rows - 1) * n);
    return 0;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    task_state_t *self = (task_state_t *) state;
    *first = self->first_row * self->problem.n;
    *count = (size_t) (self->rows * self->problem.n);
    return self->x;
}

//  A checkpoint is our rows: a replacement goes on from them.
static const void *
s_checkpoint (void *state, size_t *size)
{
    task_state_t *self = (task_state_t *) state;
    *size = (size_t) (self->rows * self->problem.n) * sizeof (double);
    return self->x;
}

static int
s_restore (jace_task_t *task, void *state, const void *bytes, size_t size,
           char *reason, size_t reason_size)
{
    task_state_t *self = (task_state_t *) state;
    size_t expected = (size_t) (self->rows * self->problem.n)
                    * sizeof (double);
    if (size != expected) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64 " has "
                  "%zu bytes, its rows need %zu", jace_task_rank (task),
                  size, expected);
        return -1;
    }
    memcpy (self->x, bytes, size);
    return 0;
}

//  --------------------------------------------------------------------------
//  The plugin's one export

//  Every job key we read: the spawner refuses any other in our sections,
//  so a typo in a job file is an error, not a silent default.
static const char *const s_keys [] = {
    "problem/n", "problem/nu", "problem/ax", "problem/ay", "problem/kappa",
    NULL
};

static const jace_app_t s_advdiff = {
    .abi = JACE_APP_ABI,
    .name = "advdiff",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .error = s_error,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .checkpoint = s_checkpoint,
    .restore = s_restore,
    .idle_without_news = false,
    .keys = s_keys,
    .residual_meaning = "relative, ||b - G(x)|| / ||b||"
};

const jace_app_t *
jace_app (void)
{
    return &s_advdiff;
}
