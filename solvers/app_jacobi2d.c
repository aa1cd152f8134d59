/*  =========================================================================
    app_jacobi2d - asynchronous Jacobi on the 2D Poisson problem
    =========================================================================
*/
#include "app_jacobi2d.h"

#include <math.h>

//  Largest grid side accepted (N^2 unknowns must fit in memory).
#define JACOBI2D_N_MAX 20000

typedef struct {
    int64_t n;                  //  Grid side
    int64_t first_row;          //  First grid row we own
    int64_t rows;               //  Grid rows we own
    double *x;                  //  Current values, rows * n
    double *next;               //  Values being computed, rows * n
    double *zeros;              //  A boundary row of zeros, n
} jacobi2d_t;


//  --------------------------------------------------------------------------

//  Spawner side: the grid side is all the problem there is.
typedef struct {
    int64_t n;                  //  Grid side
} jacobi2d_problem_t;

static int64_t
s_grid_side (zhash_t *params)
{
    const char *text = (const char *) zhash_lookup (params, "problem/n");
    if (!text)
        return 32;
    char *end = NULL;
    long long n = strtoll (text, &end, 10);
    return end != text && *end == 0 ? (int64_t) n : -1;
}

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    //  The one problem this application solves; job files may say so
    const char *kind = (const char *) zhash_lookup (params, "problem/kind");
    if (kind && !streq (kind, "poisson2d")) {
        snprintf (reason, reason_size, "problem/kind = '%s' is unknown to "
                  "jacobi2d (known: poisson2d)", kind);
        return NULL;
    }
    int64_t n = s_grid_side (params);
    if (n < 2 || n > JACOBI2D_N_MAX) {
        snprintf (reason, reason_size,
                  "problem/n must be an integer in [2, %d]", JACOBI2D_N_MAX);
        return NULL;
    }
    jacobi2d_problem_t *problem = (jacobi2d_problem_t *) zmalloc (sizeof *problem);
    problem->n = n;
    return problem;
}

static void
s_unload (void **problem_p)
{
    free (*problem_p);
    *problem_p = NULL;
}

static void
s_shape (void *problem, int64_t *rows, int64_t *unknowns_per_row)
{
    int64_t n = ((jacobi2d_problem_t *) problem)->n;
    *rows = n;
    *unknowns_per_row = n;
}

//  Value of (A x)_ij for the 5-point Laplacian with zero boundary.
static double
s_apply (const double *x, int64_t n, int64_t i, int64_t j)
{
    double sum = 4 * x [i * n + j];
    if (i > 0)      sum -= x [(i - 1) * n + j];
    if (i < n - 1)  sum -= x [(i + 1) * n + j];
    if (j > 0)      sum -= x [i * n + j - 1];
    if (j < n - 1)  sum -= x [i * n + j + 1];
    return sum;
}

static double
s_residual (void *problem, const double *x, int64_t count)
{
    int64_t n = ((jacobi2d_problem_t *) problem)->n;
    if (count != n * n)
        return INFINITY;
    double norm = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double r = 1.0 - s_apply (x, n, i, j);
            norm += r * r;
        }
    //  ||b|| = sqrt(n * n) for the unit source.
    return sqrt (norm) / (double) n;
}

//  Flops of one Jacobi update of a grid point in s_iterate: four
//  additions of the neighbours and the source, one division, and the
//  subtraction that measures the change.
#define JACOBI2D_FLOPS_PER_POINT 6

//  The task graph (docs/MAPPING.md section 3) of the blocks first_row of
//  grid rows, as s_iterate exchanges: task i updates its rows x n points
//  and receives one grid row (n values) from the task above and one from
//  the task below, when it has them.  An empty block cannot run (s_setup
//  refuses it), so such a partition cannot be described either.
static int
s_describe (void *problem, const int64_t *first_row, int64_t tasks,
            jace_graph_t *graph)
{
    int64_t n = ((jacobi2d_problem_t *) problem)->n;
    if (tasks < 1 || first_row [0] != 0 || first_row [tasks] != n)
        return -1;
    for (int64_t task = 0; task < tasks; task++)
        if (first_row [task + 1] <= first_row [task])
            return -1;
    for (int64_t task = 0; task < tasks; task++) {
        int64_t rows = first_row [task + 1] - first_row [task];
        jace_graph_set_cost (graph, task, (double) JACOBI2D_FLOPS_PER_POINT
                                          * (double) (rows * n));
        if (task > 0)
            jace_graph_add_need (graph, task, task - 1, (double) n);
        if (task < tasks - 1)
            jace_graph_add_need (graph, task, task + 1, (double) n);
    }
    return 0;
}

//  --------------------------------------------------------------------------

static void
s_destroy (void **state_p)
{
    jacobi2d_t *self = (jacobi2d_t *) *state_p;
    if (self) {
        free (self->x);
        free (self->next);
        free (self->zeros);
        free (self);
        *state_p = NULL;
    }
}

//  Ask the tasks above and below for the grid rows beside our block: the
//  runtime then knows whom we depend on (the synchronous mode waits for
//  them), though they send those rows whatever we ask.
static void
s_request_ghost_rows (jacobi2d_t *self, jace_task_t *task)
{
    int64_t n = self->n;
    int64_t *indices = (int64_t *) zmalloc (n * sizeof (int64_t));
    int64_t rank = jace_task_rank (task);
    if (self->first_row > 0) {
        for (int64_t j = 0; j < n; j++)
            indices [j] = (self->first_row - 1) * n + j;
        jace_task_request (task, rank - 1, indices, (size_t) n);
    }
    if (self->first_row + self->rows < n) {
        for (int64_t j = 0; j < n; j++)
            indices [j] = (self->first_row + self->rows) * n + j;
        jace_task_request (task, rank + 1, indices, (size_t) n);
    }
    free (indices);
}

static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    int64_t n = jace_task_param_int (task, "problem/n", 32);
    if (n < 2 || n > JACOBI2D_N_MAX || jace_task_row_count (task) < 1) {
        snprintf (reason, reason_size, "bad grid side %" PRId64
                  " or empty block", n);
        return NULL;
    }
    jacobi2d_t *self = (jacobi2d_t *) zmalloc (sizeof *self);
    self->n = n;
    self->first_row = jace_task_first_row (task);
    self->rows = jace_task_row_count (task);
    self->x = (double *) zmalloc (self->rows * n * sizeof (double));
    self->next = (double *) zmalloc (self->rows * n * sizeof (double));
    self->zeros = (double *) zmalloc (n * sizeof (double));
    s_request_ghost_rows (self, task);
    return self;
}

//  The newest copy of grid row `row` from task `from`, or zeros until the
//  first one arrives (the initial guess) or if it is not the row we need.
static const double *
s_ghost_row (jacobi2d_t *self, jace_task_t *task, int64_t from, int64_t row)
{
    size_t count;
    int64_t first;
    const double *values = jace_task_newest (task, from, &count, &first,
                                             NULL);
    if (!values || (int64_t) count != self->n || first != row * self->n)
        return self->zeros;
    return values;
}

static int
s_iterate (jace_task_t *task, void *state)
{
    jacobi2d_t *self = (jacobi2d_t *) state;
    int64_t n = self->n;
    int64_t rank = jace_task_rank (task);
    bool has_above = self->first_row > 0;
    bool has_below = self->first_row + self->rows < n;
    const double *above = has_above
        ? s_ghost_row (self, task, rank - 1, self->first_row - 1)
        : self->zeros;
    const double *below = has_below
        ? s_ghost_row (self, task, rank + 1, self->first_row + self->rows)
        : self->zeros;

    double change = 0;
    for (int64_t i = 0; i < self->rows; i++) {
        const double *up = i > 0 ? self->x + (i - 1) * n : above;
        const double *down = i < self->rows - 1 ? self->x + (i + 1) * n
                                                : below;
        const double *row = self->x + i * n;
        double *out = self->next + i * n;
        for (int64_t j = 0; j < n; j++) {
            double sum = 1.0 + up [j] + down [j];
            if (j > 0)      sum += row [j - 1];
            if (j < n - 1)  sum += row [j + 1];
            out [j] = sum / 4;
            double delta = fabs (out [j] - row [j]);
            if (delta > change)
                change = delta;
        }
    }
    double *swap = self->x;
    self->x = self->next;
    self->next = swap;
    jace_task_set_change (task, change);

    //  Our edge rows to the tasks that own the rows beside them.
    if (has_above)
        jace_task_send (task, rank - 1, self->x, n, self->first_row * n);
    if (has_below)
        jace_task_send (task, rank + 1, self->x + (self->rows - 1) * n, n,
                        (self->first_row + self->rows - 1) * n);
    return 0;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    jacobi2d_t *self = (jacobi2d_t *) state;
    *first = self->first_row * self->n;
    *count = (size_t) (self->rows * self->n);
    return self->x;
}

//  A checkpoint is our block of the grid.
static const void *
s_checkpoint (void *state, size_t *size)
{
    jacobi2d_t *self = (jacobi2d_t *) state;
    *size = (size_t) (self->rows * self->n) * sizeof (double);
    return self->x;
}

static int
s_restore (jace_task_t *task, void *state, const void *bytes, size_t size,
           char *reason, size_t reason_size)
{
    jacobi2d_t *self = (jacobi2d_t *) state;
    size_t expected = (size_t) (self->rows * self->n) * sizeof (double);
    if (size != expected) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64 " has "
                  "%zu bytes, its block needs %zu", jace_task_rank (task),
                  size, expected);
        return -1;
    }
    memcpy (self->x, bytes, size);
    return 0;
}

//  Every key the application reads
static const char *const s_keys [] = { "problem/n", "problem/kind", NULL };

const jace_app_t app_jacobi2d = {
    .name = "jacobi2d",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .checkpoint = s_checkpoint,
    .restore = s_restore,
    .describe = s_describe,
    .keys = s_keys,
    .residual_meaning = "relative, true ||b - Ax|| / ||b||"
};
