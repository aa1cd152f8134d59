/*  =========================================================================
    app_multisplit - sparse linear systems Ax = b by multisplitting

    Spawner side: the whole system (generated, or read from Matrix Market
    files before anything is reserved) for verification and for the rows
    of file matrices, which travel in each task's ASSIGN.  Daemon side: the
    task's extended rows (generated locally, or from its ASSIGN), the
    multisplit state, and the request lists that say what to send to whom.
    =========================================================================
*/
#include "app_multisplit.h"
#include "csr.h"
#include "mmio.h"
#include "multisplit.h"
#include "problems.h"

#include <errno.h>
#include <math.h>

typedef enum {
    KIND_POISSON2D, KIND_POISSON3D, KIND_NASCG, KIND_MATRIX,
    KIND_RANDOM_DOMINANT, KIND_RANDOM_SPD
} kind_t;

static const char *s_kind_names [] = {
    "poisson2d", "poisson3d", "nascg", "matrix", "random-dominant",
    "random-spd"
};
#define KIND_COUNT (sizeof s_kind_names / sizeof s_kind_names [0])

//  The problem as the parameters describe it.
typedef struct {
    kind_t kind;                //  Which problem
    int32_t n;                  //  Order of the matrix
    int32_t grid;               //  Poisson grid side
    int32_t per_row;            //  Random entries per row
    int32_t bandwidth;          //  nascg band
    double dominance;           //  random-dominant diagonal factor
    double shift;               //  Diagonal shift (nascg, random-spd)
    uint64_t seed;              //  Random kinds
    int32_t overlap;            //  Rows of overlap each side
    multisplit_options_t options;   //  Inner solver
} spec_t;

//  Spawner side: the whole system.
typedef struct {
    spec_t spec;                //  What it is
    csr_t *A;                   //  The matrix, all rows
    double *b;                  //  Right-hand side
    bool known_solution;        //  b = A * 1
} problem_t;

//  Daemon side: one task.
typedef struct {
    multisplit_t *split;        //  Local blocks, inner solver, iterate
    int32_t tasks;              //  Tasks in the job
    int32_t rank;               //  Our task
    double *x_ext;              //  Newest values of the other blocks
    int32_t **requested;        //  Per task: indices it asked us for
    int32_t *requested_count;   //  Per task: entries in requested
    double *outgoing;           //  Values being sent, largest request
    bool requests_read;         //  requested[] filled from the runtime
} task_state_t;


//  --------------------------------------------------------------------------
//  Parameters

static int
s_parse_kind (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    const char *kind = (const char *) zhash_lookup (params, "problem/kind");
    for (size_t i = 0; kind && i < KIND_COUNT; i++)
        if (streq (kind, s_kind_names [i])) {
            spec->kind = (kind_t) i;
            return 0;
        }
    snprintf (reason, reason_size, "problem/kind = '%s' is not one of "
              "poisson2d, poisson3d, nascg, matrix, random-dominant, "
              "random-spd", kind ? kind : "");
    return -1;
}

static int
s_parse_solver (zhash_t *params, spec_t *spec, char *reason,
                size_t reason_size)
{
    multisplit_options_defaults (&spec->options);
    const char *inner = (const char *) zhash_lookup (params, "solver/inner");
    if (inner && multisplit_inner_parse (inner, &spec->options.inner)) {
        snprintf (reason, reason_size, "solver/inner = '%s' is not one of "
                  "krylov, lu-banded, cg, bicgstab", inner);
        return -1;
    }
    double tolerance, overlap;
    if (jace_param_number (params, "solver/inner_tolerance",
                           spec->options.inner_tolerance, 1e-300, 1,
                           &tolerance, reason, reason_size)
    ||  jace_param_number (params, "solver/overlap", 0, 0, 1e6, &overlap,
                           reason, reason_size))
        return -1;
    spec->options.inner_tolerance = tolerance;
    spec->overlap = (int32_t) overlap;
    return 0;
}

//  Sizes of the generated kinds; the matrix kind learns n from its file.
static int
s_parse_size (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    double n, per_row, bandwidth, dominance, shift, seed;
    bool poisson = spec->kind == KIND_POISSON2D
                || spec->kind == KIND_POISSON3D;
    double max_n = spec->kind == KIND_POISSON2D ? 46340
                 : spec->kind == KIND_POISSON3D ? 1290 : INT32_MAX;
    if (jace_param_number (params, "problem/n", poisson ? 32 : 1000, 2,
                           max_n, &n, reason, reason_size)
    ||  jace_param_number (params, "problem/per_row", 4, 1, 1000, &per_row,
                           reason, reason_size)
    ||  jace_param_number (params, "problem/dominance", 2, 1e-3, 1e6,
                           &dominance, reason, reason_size)
    ||  jace_param_number (params, "problem/shift", 1, 1e-12, 1e12, &shift,
                           reason, reason_size)
    ||  jace_param_number (params, "problem/seed", 1, 0, 1e15, &seed,
                           reason, reason_size))
        return -1;
    spec->grid = (int32_t) n;
    spec->n = spec->kind == KIND_POISSON2D ? spec->grid * spec->grid
            : spec->kind == KIND_POISSON3D ? spec->grid * spec->grid
                                             * spec->grid
            : (int32_t) n;
    if (jace_param_number (params, "problem/bandwidth",
                           fmax (1, spec->n / 50), 1, fmax (1, spec->n - 1),
                           &bandwidth, reason, reason_size))
        return -1;
    spec->per_row = (int32_t) per_row;
    spec->bandwidth = (int32_t) bandwidth;
    spec->dominance = dominance;
    spec->shift = shift;
    spec->seed = (uint64_t) seed;
    return 0;
}

static int
s_parse_spec (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    memset (spec, 0, sizeof *spec);
    if (s_parse_kind (params, spec, reason, reason_size)
    ||  s_parse_solver (params, spec, reason, reason_size))
        return -1;
    if (spec->kind == KIND_MATRIX)
        return 0;
    return s_parse_size (params, spec, reason, reason_size);
}

//  Rows [begin, end) of a generated matrix.
static int
s_generate (const spec_t *spec, int32_t begin, int32_t end, csr_t **A,
            char *reason, size_t reason_size)
{
    switch (spec->kind) {
        case KIND_POISSON2D:
            return problems_poisson2d (spec->grid, begin, end, A, reason,
                                       reason_size);
        case KIND_POISSON3D:
            return problems_poisson3d (spec->grid, begin, end, A, reason,
                                       reason_size);
        case KIND_NASCG: {
            problems_nascg_t nascg = { spec->n, spec->bandwidth,
                spec->per_row, spec->shift, spec->seed };
            return problems_nascg (&nascg, begin, end, A, reason,
                                   reason_size);
        }
        case KIND_RANDOM_DOMINANT:
            return problems_random_dominant (spec->n, spec->per_row,
                spec->dominance, spec->seed, begin, end, A, reason,
                reason_size);
        case KIND_RANDOM_SPD:
            return problems_random_spd (spec->n, spec->per_row, spec->shift,
                spec->seed, begin, end, A, reason, reason_size);
        default:
            snprintf (reason, reason_size, "a matrix file is not generated");
            return -1;
    }
}

//  --------------------------------------------------------------------------
//  Spawner side

static void
s_unload (void **problem_p)
{
    problem_t *problem = (problem_t *) *problem_p;
    if (problem) {
        csr_destroy (&problem->A);
        free (problem->b);
        free (problem);
        *problem_p = NULL;
    }
}

static int
s_load_matrix (zhash_t *params, problem_t *problem, char *reason,
               size_t reason_size)
{
    const char *matrix = (const char *) zhash_lookup (params,
                                                      "problem/matrix");
    const char *rhs = (const char *) zhash_lookup (params, "problem/rhs");
    if (!matrix) {
        snprintf (reason, reason_size, "problem/kind = matrix needs "
                  "problem/matrix, a Matrix Market file");
        return -1;
    }
    if (mmio_read_system (matrix, rhs, &problem->A, &problem->b, reason,
                          reason_size))
        return -1;
    problem->spec.n = problem->A->nrows;
    problem->known_solution = rhs == NULL;
    return 0;
}

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    problem_t *problem = (problem_t *) zmalloc (sizeof *problem);
    if (s_parse_spec (params, &problem->spec, reason, reason_size))
        goto out_fail;
    if (problem->spec.kind == KIND_MATRIX) {
        if (s_load_matrix (params, problem, reason, reason_size))
            goto out_fail;
        return problem;
    }
    if (s_generate (&problem->spec, 0, problem->spec.n, &problem->A, reason,
                    reason_size))
        goto out_fail;
    problem->b = (double *) malloc (problem->spec.n * sizeof (double));
    assert (problem->b);
    problems_rhs_ones_solution (problem->A, problem->b);
    problem->known_solution = true;
    return problem;

out_fail:
    s_unload ((void **) &problem);
    return NULL;
}

static void
s_shape (void *raw, int64_t *rows, int64_t *unknowns_per_row)
{
    problem_t *problem = (problem_t *) raw;
    *rows = problem->spec.n;
    *unknowns_per_row = 1;
}

static double
s_residual (void *raw, const double *x, int64_t count)
{
    problem_t *problem = (problem_t *) raw;
    int32_t n = problem->spec.n;
    if (count != n)
        return INFINITY;
    double *r = (double *) malloc (n * sizeof (double));
    assert (r);
    csr_residual (problem->A, problem->b, x, r);
    double r_norm = 0, b_norm = 0;
    for (int32_t i = 0; i < n; i++) {
        r_norm += r [i] * r [i];
        b_norm += problem->b [i] * problem->b [i];
    }
    free (r);
    return b_norm > 0 ? sqrt (r_norm / b_norm) : sqrt (r_norm);
}

static double
s_error (void *raw, const double *x, int64_t count)
{
    problem_t *problem = (problem_t *) raw;
    if (!problem->known_solution || count != problem->spec.n)
        return NAN;
    double error = 0;
    for (int64_t i = 0; i < count; i++)
        error = fmax (error, fabs (x [i] - 1));
    return error;
}

static void
s_boundaries (const int64_t *first_row, int64_t tasks, int32_t *boundaries)
{
    for (int64_t i = 0; i <= tasks; i++)
        boundaries [i] = (int32_t) first_row [i];
}

//  A task's extended rows of a file matrix travel in its ASSIGN: relative
//  row offsets, column indices, values, and the right-hand side.
static int
s_attach (void *raw, const int64_t *first_row, int64_t tasks, int64_t task,
          jace_msg_t *assign)
{
    problem_t *problem = (problem_t *) raw;
    if (problem->spec.kind != KIND_MATRIX)
        return 0;
    int32_t *boundaries = (int32_t *) zmalloc ((tasks + 1) * sizeof (int32_t));
    s_boundaries (first_row, tasks, boundaries);
    int32_t begin, end;
    multisplit_extended_range (boundaries, (int32_t) tasks, (int32_t) task,
                               problem->spec.overlap, &begin, &end);
    free (boundaries);
    const csr_t *A = problem->A;
    int64_t base = A->row_ptr [begin];
    int64_t nnz = A->row_ptr [end] - base;
    int64_t *offsets = (int64_t *) malloc ((end - begin + 1)
                                           * sizeof (int64_t));
    int64_t *columns = (int64_t *) malloc ((nnz + 1) * sizeof (int64_t));
    assert (offsets && columns);
    for (int32_t row = begin; row <= end; row++)
        offsets [row - begin] = A->row_ptr [row] - base;
    for (int64_t k = 0; k < nnz; k++)
        columns [k] = A->col_idx [base + k];
    jace_msg_add_payload (assign, JACE_PAYLOAD_I64, offsets, end - begin + 1);
    jace_msg_add_payload (assign, JACE_PAYLOAD_I64, columns, (size_t) nnz);
    jace_msg_add_payload (assign, JACE_PAYLOAD_F64, A->values + base,
                          (size_t) nnz);
    jace_msg_add_payload (assign, JACE_PAYLOAD_F64, problem->b + begin,
                          (size_t) (end - begin));
    free (offsets);
    free (columns);
    return 0;
}

//  True if first_row holds tasks + 1 nondecreasing block starts from 0 to n.
static bool
s_blocks_valid (const int64_t *first_row, int64_t tasks, int32_t n)
{
    if (tasks < 1 || first_row [0] != 0 || first_row [tasks] != n)
        return false;
    for (int64_t t = 0; t < tasks; t++)
        if (first_row [t + 1] < first_row [t])
            return false;
    return true;
}

//  The task graph (docs/MAPPING.md section 3) of the blocks first_row of
//  the whole matrix: e_i = the flops of an iteration on block i
//  (s_block_cost; for Krylov inner solves a lower bound, about alike for
//  every block, so the ratios between tasks are right); c_ij = the distinct columns of
//  block j that block i's rows use, the values task i receives from task j
//  every iteration (with overlap 0; an overlap adds the extended rows'
//  columns, which the contract leaves out).  One pass over the nonzeros:
//  owner [] maps a column to its block, last_seen [] says which block last
//  counted a column, and the blocks block i touched are listed so that
//  resetting their counts costs no more than counting them; O(nnz + n +
//  tasks) in all.
//  Flops of one iteration on rows begin..end: one product of the rows by
//  a vector; with lu-banded, the banded solve's substitutions too, four
//  flops per row per diagonal of the block's band (a 2D grid's band is
//  its side: 1200 flops a row for side 300, where the product is 10).
//  Krylov inner solves run an unknown number of products: one is counted.
static double
s_block_cost (const problem_t *problem, int64_t begin, int64_t end)
{
    const csr_t *A = problem->A;
    double flops = 2.0 * (double) (A->row_ptr [end] - A->row_ptr [begin]);
    if (problem->spec.options.inner != MULTISPLIT_INNER_BANDED_LU)
        return flops;
    int64_t band = 0;
    for (int64_t row = begin; row < end; row++)
        for (int64_t k = A->row_ptr [row]; k < A->row_ptr [row + 1]; k++) {
            int64_t column = A->col_idx [k];
            if (column >= begin && column < end)
                band = llabs (column - row) > band ? llabs (column - row)
                                                   : band;
        }
    return flops + 4.0 * (double) band * (double) (end - begin);
}

static int
s_describe (void *raw, const int64_t *first_row, int64_t tasks,
            jace_graph_t *graph)
{
    problem_t *problem = (problem_t *) raw;
    const csr_t *A = problem->A;
    if (!s_blocks_valid (first_row, tasks, A->nrows) || tasks > INT32_MAX)
        return -1;
    int32_t n = A->nrows;
    int32_t *owner = (int32_t *) malloc (((size_t) n + 1) * sizeof (int32_t));
    int32_t *last_seen = (int32_t *) malloc (((size_t) n + 1)
                                             * sizeof (int32_t));
    int64_t *columns = (int64_t *) zmalloc ((size_t) tasks * sizeof (int64_t));
    int32_t *touched = (int32_t *) malloc ((size_t) tasks * sizeof (int32_t));
    assert (owner && last_seen && touched);
    for (int32_t t = 0; t < (int32_t) tasks; t++)
        for (int64_t row = first_row [t]; row < first_row [t + 1]; row++)
            owner [row] = t;
    for (int32_t j = 0; j < n; j++)
        last_seen [j] = -1;
    for (int32_t task = 0; task < (int32_t) tasks; task++) {
        int64_t begin = first_row [task], end = first_row [task + 1];
        jace_graph_set_cost (graph, task, s_block_cost (problem, begin,
                                                        end));
        int32_t touched_count = 0;
        for (int64_t k = A->row_ptr [begin]; k < A->row_ptr [end]; k++) {
            int32_t j = A->col_idx [k];
            int32_t from = owner [j];
            if (from == task || last_seen [j] == task)
                continue;
            last_seen [j] = task;
            if (columns [from]++ == 0)
                touched [touched_count++] = from;
        }
        for (int32_t k = 0; k < touched_count; k++) {
            jace_graph_add_need (graph, task, touched [k],
                                 (double) columns [touched [k]]);
            columns [touched [k]] = 0;
        }
    }
    free (owner);
    free (last_seen);
    free (columns);
    free (touched);
    return 0;
}

//  --------------------------------------------------------------------------
//  Daemon side: the task's rows

//  Rebuild the rows the spawner attached, checking everything: they came
//  over the wire.
static int
s_rows_from_blocks (jace_task_t *task, int32_t n, int32_t begin, int32_t end,
                    csr_t **rows_p, double **b_p, char *reason,
                    size_t reason_size)
{
    int32_t count = end - begin;
    if (jace_task_block_count (task) != 4
    ||  jace_task_block_length (task, 0) != (size_t) count + 1
    ||  jace_task_block_length (task, 3) != (size_t) count
    ||  jace_task_block_length (task, 1) != jace_task_block_length (task, 2)) {
        snprintf (reason, reason_size, "ASSIGN does not carry rows %d..%d "
                  "of the matrix", begin, end);
        return -1;
    }
    size_t nnz = jace_task_block_length (task, 1);
    int64_t *offsets = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    int64_t *columns = (int64_t *) malloc ((nnz + 1) * sizeof (int64_t));
    assert (offsets && columns);
    jace_task_block_copy (task, 0, offsets);
    jace_task_block_copy (task, 1, columns);
    csr_t *rows = csr_new (count, n, (int64_t) nnz);
    int rc = 0;
    for (int32_t i = 0; i <= count && rc == 0; i++) {
        rows->row_ptr [i] = offsets [i];
        if (offsets [i] < (i ? offsets [i - 1] : 0)
        ||  offsets [i] > (int64_t) nnz
        ||  (i == count && offsets [i] != (int64_t) nnz))
            rc = -1;
    }
    for (size_t k = 0; k < nnz && rc == 0; k++) {
        if (columns [k] < 0 || columns [k] >= n)
            rc = -1;
        rows->col_idx [k] = (int32_t) columns [k];
    }
    free (offsets);
    free (columns);
    if (rc == 0) {
        jace_task_block_copy (task, 2, rows->values);
        *b_p = (double *) malloc ((count + 1) * sizeof (double));
        assert (*b_p);
        jace_task_block_copy (task, 3, *b_p);
        *rows_p = rows;
        return 0;
    }
    snprintf (reason, reason_size, "ASSIGN carries inconsistent rows");
    csr_destroy (&rows);
    return -1;
}

static int
s_task_rows (jace_task_t *task, const spec_t *spec, int32_t n,
             int32_t begin, int32_t end, csr_t **rows_p, double **b_p,
             char *reason, size_t reason_size)
{
    if (spec->kind == KIND_MATRIX)
        return s_rows_from_blocks (task, n, begin, end, rows_p, b_p, reason,
                                   reason_size);
    if (s_generate (spec, begin, end, rows_p, reason, reason_size))
        return -1;
    *b_p = (double *) malloc (((*rows_p)->nrows + 1) * sizeof (double));
    assert (*b_p);
    problems_rhs_ones_solution (*rows_p, *b_p);
    return 0;
}

//  Tell the runtime whom we need what from.
static void
s_request_dependencies (task_state_t *self, jace_task_t *task)
{
    int32_t largest = 0;
    for (int32_t t = 0; t < self->tasks; t++)
        if (multisplit_dependency_count (self->split, t) > largest)
            largest = multisplit_dependency_count (self->split, t);
    int64_t *indices = (int64_t *) malloc ((largest + 1) * sizeof (int64_t));
    assert (indices);
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t count = multisplit_dependency_count (self->split, t);
        if (t == self->rank || count == 0)
            continue;
        const int32_t *needed = multisplit_dependency_indices (self->split,
                                                               t);
        for (int32_t k = 0; k < count; k++)
            indices [k] = needed [k];
        jace_task_request (task, t, indices, (size_t) count);
    }
    free (indices);
}

static void
s_destroy (void **state_p)
{
    task_state_t *self = (task_state_t *) *state_p;
    if (self) {
        multisplit_destroy (&self->split);
        for (int32_t t = 0; self->requested && t < self->tasks; t++)
            free (self->requested [t]);
        free (self->requested);
        free (self->requested_count);
        free (self->outgoing);
        free (self->x_ext);
        free (self);
        *state_p = NULL;
    }
}

static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    spec_t spec;
    if (s_parse_spec (jace_task_params (task), &spec, reason, reason_size))
        return NULL;
    task_state_t *self = (task_state_t *) zmalloc (sizeof *self);
    self->tasks = (int32_t) jace_task_count (task);
    self->rank = (int32_t) jace_task_rank (task);
    int32_t n = (int32_t) jace_task_row_of (task, self->tasks);
    int32_t *boundaries = (int32_t *) zmalloc ((self->tasks + 1)
                                               * sizeof (int32_t));
    for (int32_t t = 0; t <= self->tasks; t++)
        boundaries [t] = (int32_t) jace_task_row_of (task, t);
    int32_t begin, end;
    multisplit_extended_range (boundaries, self->tasks, self->rank,
                               spec.overlap, &begin, &end);
    csr_t *rows = NULL;
    double *b = NULL;
    int rc = s_task_rows (task, &spec, n, begin, end, &rows, &b, reason,
                          reason_size);
    if (rc == 0)
        rc = multisplit_new (rows, b, boundaries, self->tasks, self->rank,
                             spec.overlap, &spec.options, &self->split,
                             reason, reason_size);
    csr_destroy (&rows);
    free (b);
    free (boundaries);
    if (rc) {
        s_destroy ((void **) &self);
        return NULL;
    }
    self->x_ext = (double *) zmalloc (
        (multisplit_external_size (self->split) + 1) * sizeof (double));
    s_request_dependencies (self, task);
    return self;
}

//  --------------------------------------------------------------------------
//  Daemon side: iterating

//  The request lists arrived before the first iteration; take them once.
static void
s_read_requests (task_state_t *self, jace_task_t *task)
{
    self->requested = (int32_t **) zmalloc (self->tasks * sizeof (int32_t *));
    self->requested_count = (int32_t *) zmalloc (self->tasks
                                                 * sizeof (int32_t));
    size_t largest = 0;
    for (int32_t t = 0; t < self->tasks; t++) {
        size_t count = 0;
        const int64_t *indices = t == self->rank ? NULL
                               : jace_task_requested (task, t, &count);
        if (!indices)
            continue;
        self->requested [t] = (int32_t *) malloc (count * sizeof (int32_t));
        assert (self->requested [t]);
        for (size_t k = 0; k < count; k++)
            self->requested [t][k] = (int32_t) indices [k];
        //  The runtime checked the range; the multisplit checks it again
        //  against the core rows it gathers from.
        if (multisplit_check_request (self->split, self->requested [t],
                                      (int32_t) count)) {
            free (self->requested [t]);
            self->requested [t] = NULL;
            continue;
        }
        self->requested_count [t] = (int32_t) count;
        largest = count > largest ? count : largest;
    }
    self->outgoing = (double *) malloc ((largest + 1) * sizeof (double));
    assert (self->outgoing);
    self->requests_read = true;
}

static void
s_take_newest (task_state_t *self, jace_task_t *task)
{
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t needed = multisplit_dependency_count (self->split, t);
        if (t == self->rank || needed == 0)
            continue;
        size_t count = 0;
        const double *values = jace_task_newest (task, t, &count, NULL,
                                                 NULL);
        if (values && count == (size_t) needed)
            memcpy (self->x_ext + multisplit_dependency_offset (self->split,
                                                                t),
                    values, count * sizeof (double));
    }
}

static int
s_iterate (jace_task_t *task, void *state)
{
    task_state_t *self = (task_state_t *) state;
    if (!self->requests_read)
        s_read_requests (self, task);
    s_take_newest (self, task);
    multisplit_step_t step;
    if (multisplit_iterate (self->split, self->x_ext, &step))
        return -1;
    jace_task_set_change (task, step.change);
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t count = self->requested_count [t];
        if (count == 0)
            continue;
        multisplit_gather (self->split, self->requested [t], count,
                           self->outgoing);
        jace_task_send (task, t, self->outgoing, (size_t) count, 0);
    }
    return 0;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    task_state_t *self = (task_state_t *) state;
    *first = multisplit_row_begin (self->split);
    *count = (size_t) (multisplit_row_end (self->split)
                       - multisplit_row_begin (self->split));
    return multisplit_solution (self->split);
}

//  A checkpoint is the core iterate: the overlap and the neighbours'
//  values come back with the next messages.
static const void *
s_checkpoint (void *state, size_t *size)
{
    task_state_t *self = (task_state_t *) state;
    *size = (size_t) (multisplit_row_end (self->split)
                      - multisplit_row_begin (self->split)) * sizeof (double);
    return multisplit_solution (self->split);
}

static int
s_restore (jace_task_t *task, void *state, const void *bytes, size_t size,
           char *reason, size_t reason_size)
{
    task_state_t *self = (task_state_t *) state;
    size_t expected;
    s_checkpoint (state, &expected);
    if (size != expected) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64 " has "
                  "%zu bytes, its block needs %zu", jace_task_rank (task),
                  size, expected);
        return -1;
    }
    double *x_core = (double *) malloc (size + 1);
    assert (x_core);
    memcpy (x_core, bytes, size);
    multisplit_set_solution (self->split, x_core);
    free (x_core);
    return 0;
}

//  Every key the application reads
static const char *const s_keys [] = {
    "problem/kind", "problem/n", "problem/per_row", "problem/dominance",
    "problem/shift", "problem/seed", "problem/bandwidth", "problem/matrix",
    "problem/rhs", "solver/inner", "solver/inner_tolerance",
    "solver/overlap", NULL
};

const jace_app_t app_multisplit = {
    .name = "multisplit",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .error = s_error,
    .attach = s_attach,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .checkpoint = s_checkpoint,
    .restore = s_restore,
    .describe = s_describe,
    //  Each iteration solves the local block (to the inner tolerance):
    //  without a newer neighbour vector it would find the same answer.
    .idle_without_news = true,
    .keys = s_keys
};
