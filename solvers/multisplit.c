/*  =========================================================================
    multisplit - local mathematics of the multisplitting method

    Set-up splits the task's extended rows once into A_local (square, local
    column numbering) and A_ext (columns renumbered to positions in x_ext),
    computes the dependency groups, and factors or binds the inner solver.
    An iteration is then one SpMV with A_ext, one inner solve and one pass
    to measure the change.
    =========================================================================
*/
#include "solvers.h"

//  Default inner settings, see multisplit_options_defaults
//  Loose on purpose: with the least reduction below, a loose inner solve
//  costs the outer iteration little and is 2.5-5x faster over a
//  whole solve (docs/SOLVERS.md, "Inner tolerance")
#define MULTISPLIT_INNER_TOLERANCE      1e-3
//  Inner tolerance of a block that depends on no other task
#define MULTISPLIT_UNCOUPLED_TOLERANCE  1e-12
#define MULTISPLIT_INNER_MAX_ITERATIONS 1000
#define MULTISPLIT_LU_MAX_BYTES         ((size_t) 1 << 30)

struct _multisplit_t {
    int32_t tasks;              //  Number of tasks in the partition
    int32_t task;               //  This task's index
    int32_t extended_begin;     //  First extended row (global)
    int32_t core_begin;         //  First core row (global)
    int32_t core_end;           //  One past the last core row (global)
    int32_t core_offset;        //  core_begin - extended_begin
    int32_t local_size;         //  Extended rows, order of A_local
    int32_t external_size;      //  Length of x_ext
    csr_t *local;               //  A_local: extended rows and columns
    csr_t *external;            //  A_ext: columns are positions in x_ext
    double *b;                  //  Right-hand side on the extended rows
    int32_t *external_indices;  //  Global index of each x_ext position
    int32_t *dependency_offset; //  tasks + 1 group starts in x_ext
    int32_t *overlap_position;  //  x_ext position of each local column
                                //  in the overlap, -1 for core columns
    multisplit_inner_t inner;   //  Inner solver running (never KRYLOV)
    double inner_tolerance;     //  Krylov relative tolerance
    int32_t inner_max_iterations;   //  Krylov iteration budget
    banded_lu_t *lu;            //  Factors, for MULTISPLIT_INNER_BANDED_LU
    krylov_t *krylov;           //  Solver, for the Krylov inner solvers
    double *x;                  //  Iterate on the extended rows
    double *x_previous;         //  Iterate before the current iteration
    double *rhs;                //  b_local - A_ext x_ext, workspace
    double work;                //  Matrix entries touched since taken
    double lu_entries;          //  Entries of the LU's band
    int32_t weak_row;           //  First extended row (global) with no
                                //  nonzero diagonal entry, or -1
    bool ilu_refused;           //  ILU(0) asked for, the diagonal kept
    int32_t diverged_in_row;    //  Inner solves in a row that diverged,
                                //  each from another right-hand side
    uint64_t diverged_rhs;      //  Hash of the last one's right-hand side
    multisplit_failure_t failure;   //  Why the last iteration failed
};

//  Entries a block solve touches: the LU's band once forward and back;
//  a Krylov solve A_local and its preconditioner once per iteration for
//  CG, twice for BiCGStab (the initial residual counting as one).  The
//  inner solver is chosen per block, so a job may run both.
static double
s_solve_work (const multisplit_t *self, int32_t iterations)
{
    if (self->lu)
        return self->lu_entries;
    double per_iteration = self->inner == MULTISPLIT_INNER_BICGSTAB ? 4 : 2;
    return (double) self->local->nnz
         * (2.0 + per_iteration * (double) iterations);
}

//  --------------------------------------------------------------------------
//  Default options.

void
multisplit_options_defaults (multisplit_options_t *options)
{
    assert (options);
    options->inner = MULTISPLIT_INNER_KRYLOV;
    options->inner_tolerance = MULTISPLIT_INNER_TOLERANCE;
    options->inner_max_iterations = MULTISPLIT_INNER_MAX_ITERATIONS;
    options->preconditioner = MULTISPLIT_PC_JACOBI;
    options->banded_lu_max_bytes = MULTISPLIT_LU_MAX_BYTES;
}

//  Job-file names, indexed by multisplit_inner_t
static const char *s_inner_names [] = {
    "krylov", "lu-banded", "cg", "bicgstab"
};

//  --------------------------------------------------------------------------
//  Parse a job-file name of an inner solver.

int
multisplit_inner_parse (const char *name, multisplit_inner_t *inner)
{
    assert (name);
    assert (inner);
    for (int k = 0; k < (int) (sizeof (s_inner_names) / sizeof (char *)); k++)
        if (strcmp (name, s_inner_names [k]) == 0) {
            *inner = (multisplit_inner_t) k;
            return 0;
        }
    return -1;
}

//  --------------------------------------------------------------------------
//  Job-file name of an inner solver.

const char *
multisplit_inner_name (multisplit_inner_t inner)
{
    assert (inner >= MULTISPLIT_INNER_KRYLOV && inner <= MULTISPLIT_INNER_BICGSTAB);
    return s_inner_names [inner];
}

//  Check the powers are all finite and positive; return their sum or -1.
static double
s_total_power (int32_t tasks, const double *powers)
{
    double total = 0.0;
    for (int32_t t = 0; t < tasks; t++) {
        double power = powers ? powers [t] : 1.0;
        if (!(power > 0.0) || !isfinite (power))
            return -1.0;
        total += power;
    }
    return total;
}

//  --------------------------------------------------------------------------
//  Row-block boundaries in proportion to the task powers.

int
multisplit_partition (int32_t n, int32_t tasks, const double *powers,
                      int32_t *boundaries, char *error, size_t error_size)
{
    assert (boundaries);
    if (tasks < 1 || n < tasks) {
        solvers_set_error (error, error_size, "cannot split %" PRId32
                           " rows into %" PRId32 " non-empty blocks", n,
                           tasks);
        return -1;
    }
    double total = s_total_power (tasks, powers);
    if (total <= 0.0 || !isfinite (total)) {
        solvers_set_error (error, error_size, "every task power must be "
                           "finite and positive");
        return -1;
    }
    boundaries [0] = 0;
    double cumulative = 0.0;
    for (int32_t t = 1; t < tasks; t++) {
        cumulative += powers ? powers [t - 1] : 1.0;
        int64_t boundary = llround ((double) n * cumulative / total);
        //  Keep every block non-empty, leaving a row for each later task.
        if (boundary < boundaries [t - 1] + 1)
            boundary = boundaries [t - 1] + 1;
        if (boundary > n - (tasks - t))
            boundary = n - (tasks - t);
        boundaries [t] = (int32_t) boundary;
    }
    boundaries [tasks] = n;
    return 0;
}

//  --------------------------------------------------------------------------
//  Extended row range of a task.

void
multisplit_extended_range (const int32_t *boundaries, int32_t tasks,
                           int32_t task, int32_t overlap, int32_t *begin_p,
                           int32_t *end_p)
{
    assert (boundaries);
    assert (task >= 0 && task < tasks);
    assert (overlap >= 0);
    int64_t begin = (int64_t) boundaries [task] - overlap;
    int64_t end = (int64_t) boundaries [task + 1] + overlap;
    *begin_p = begin < 0 ? 0 : (int32_t) begin;
    *end_p = end > boundaries [tasks] ? boundaries [tasks] : (int32_t) end;
}

//  First position in sorted values[count] holding a value >= key.
static int32_t
s_lower_bound (const int32_t *values, int32_t count, int32_t key)
{
    int32_t low = 0, high = count;
    while (low < high) {
        int32_t middle = low + (high - low) / 2;
        if (values [middle] < key)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

static int
s_compare_int32 (const void *left, const void *right)
{
    int32_t a = *(const int32_t *) left, b = *(const int32_t *) right;
    return (a > b) - (a < b);
}

//  True if global column j of extended row i (local index) is external:
//  outside the extended range, or an overlap column of a core row.
static bool
s_is_external (const multisplit_t *self, int32_t i, int32_t j)
{
    int32_t extended_end = self->extended_begin + self->local_size;
    if (j < self->extended_begin || j >= extended_end)
        return true;
    bool core_row = i >= self->core_offset
                 && i < self->core_offset + (self->core_end - self->core_begin);
    bool core_column = j >= self->core_begin && j < self->core_end;
    return core_row && !core_column;
}

//  Collect the sorted, unique external columns and their groups by owner.
static void
s_collect_dependencies (multisplit_t *self, const csr_t *rows,
                        const int32_t *boundaries)
{
    int32_t *columns = solvers_malloc ((size_t) rows->nnz * sizeof (int32_t));
    int64_t count = 0;
    for (int32_t i = 0; i < rows->nrows; i++)
        for (int64_t k = rows->row_ptr [i]; k < rows->row_ptr [i + 1]; k++)
            if (s_is_external (self, i, rows->col_idx [k]))
                columns [count++] = rows->col_idx [k];
    qsort (columns, (size_t) count, sizeof (int32_t), s_compare_int32);
    int32_t unique = 0;
    for (int64_t k = 0; k < count; k++)
        if (unique == 0 || columns [unique - 1] != columns [k])
            columns [unique++] = columns [k];
    self->external_indices = solvers_realloc (columns, (size_t) unique
                                                       * sizeof (int32_t));
    self->external_size = unique;
    //  Sorted indices fall into the owners' ranges in task order.
    self->dependency_offset = solvers_malloc (((size_t) self->tasks + 1)
                                              * sizeof (int32_t));
    for (int32_t t = 0; t <= self->tasks; t++)
        self->dependency_offset [t] = s_lower_bound (self->external_indices,
                                                     unique, boundaries [t]);
}

//  Split the extended rows into A_local and A_ext.
static void
s_split_rows (multisplit_t *self, const csr_t *rows)
{
    int32_t extended_end = self->extended_begin + self->local_size;
    int64_t local_nnz = 0;
    for (int64_t k = 0; k < rows->nnz; k++)
        if (rows->col_idx [k] >= self->extended_begin
        &&  rows->col_idx [k] < extended_end)
            local_nnz++;
    self->local = csr_new (rows->nrows, self->local_size, local_nnz);
    self->external = csr_new (rows->nrows, self->external_size,
                              rows->nnz - local_nnz);
    int64_t at_local = 0, at_external = 0;
    for (int32_t i = 0; i < rows->nrows; i++) {
        for (int64_t k = rows->row_ptr [i]; k < rows->row_ptr [i + 1]; k++) {
            int32_t j = rows->col_idx [k];
            if (j >= self->extended_begin && j < extended_end) {
                self->local->col_idx [at_local] = j - self->extended_begin;
                self->local->values [at_local++] = rows->values [k];
            }
            else {
                self->external->col_idx [at_external] = s_lower_bound (
                    self->external_indices, self->external_size, j);
                self->external->values [at_external++] = rows->values [k];
            }
        }
        self->local->row_ptr [i + 1] = at_local;
        self->external->row_ptr [i + 1] = at_external;
    }
}

//  Map each overlap column to its x_ext position, for the true residual.
static void
s_map_overlap (multisplit_t *self)
{
    self->overlap_position = solvers_malloc ((size_t) self->local_size
                                             * sizeof (int32_t));
    for (int32_t c = 0; c < self->local_size; c++) {
        int32_t j = self->extended_begin + c;
        int32_t position = s_lower_bound (self->external_indices,
                                          self->external_size, j);
        bool present = position < self->external_size
                    && self->external_indices [position] == j;
        bool core = j >= self->core_begin && j < self->core_end;
        self->overlap_position [c] = !core && present ? position : -1;
    }
}

//  True if every diagonal entry of the block is positive: a symmetric
//  block without it is not positive definite, and CG breaks down on it.
static bool
s_positive_diagonal (const csr_t *block)
{
    for (int32_t i = 0; i < block->nrows; i++)
        if (!(csr_value (block, i, i) > 0.0))
            return false;
    return true;
}

//  Factor or bind the inner solver.
static int
s_setup_inner (multisplit_t *self, const multisplit_options_t *options,
               char *error, size_t error_size)
{
    self->inner = options->inner;
    //  CG where it may work: a symmetric, diagonally dominant indefinite
    //  block (diagonal +3/-3) broke down at once under it, and solved
    //  under BiCGStab (input audit).
    if (self->inner == MULTISPLIT_INNER_KRYLOV)
        self->inner = csr_is_symmetric (self->local, 0.0)
                   && s_positive_diagonal (self->local)
                    ? MULTISPLIT_INNER_CG : MULTISPLIT_INNER_BICGSTAB;
    if (self->inner != MULTISPLIT_INNER_BANDED_LU) {
        self->krylov = krylov_new (self->inner == MULTISPLIT_INNER_CG
                                   ? KRYLOV_CG : KRYLOV_BICGSTAB, self->local);
        //  A warm start already under a loose inner tolerance would leave
        //  the block as it was and stall the outer iteration: each inner
        //  solve gains at least a digit.
        krylov_set_reduction (self->krylov, MULTISPLIT_INNER_REDUCTION);
        //  A block ILU(0) cannot factor keeps the diagonal.
        self->ilu_refused = options->preconditioner == MULTISPLIT_PC_ILU0
                         && krylov_set_ilu0 (self->krylov) != 0;
        //  A zero on the diagonal is what Krylov blocks break down on
        //  where a pivoting LU does not: a failure names the row.
        for (int32_t i = 0; i < self->local_size && self->weak_row < 0; i++)
            if (csr_value (self->local, i, i) == 0.0)
                self->weak_row = self->extended_begin + i;
        return 0;
    }
    int rc = banded_lu_factor (self->local, options->banded_lu_max_bytes,
                               &self->lu);
    if (rc == BANDED_LU_TOO_LARGE)
        solvers_set_error (error, error_size, "task %" PRId32 ": banded LU "
                           "needs %zu bytes, over the limit of %zu; use an "
                           "iterative inner solver", self->task,
                           banded_lu_bytes (self->local),
                           options->banded_lu_max_bytes);
    else
    if (rc == BANDED_LU_SINGULAR)
        solvers_set_error (error, error_size, "task %" PRId32 ": the local "
                           "block is singular", self->task);
    if (rc == 0)
        self->lu_entries = (double) banded_lu_bytes (self->local)
                         / sizeof (double);
    return rc == 0 ? 0 : -1;
}

//  Check the arguments of multisplit_new against each other.
static int
s_check_shape (const csr_t *rows, const int32_t *boundaries, int32_t tasks,
               int32_t task, int32_t overlap, char *error, size_t error_size)
{
    bool increasing = tasks >= 1 && boundaries [0] == 0;
    for (int32_t t = 0; increasing && t < tasks; t++)
        increasing = boundaries [t] < boundaries [t + 1];
    if (!increasing || task < 0 || task >= tasks || overlap < 0
    ||  boundaries [tasks] != rows->ncols) {
        solvers_set_error (error, error_size, "task %" PRId32 " of %" PRId32
                           " (overlap %" PRId32 ") does not match a matrix "
                           "of %" PRId32 " columns", task, tasks, overlap,
                           rows->ncols);
        return -1;
    }
    int32_t begin, end;
    multisplit_extended_range (boundaries, tasks, task, overlap, &begin, &end);
    if (rows->nrows != end - begin) {
        solvers_set_error (error, error_size, "task %" PRId32 " has %"
                           PRId32 " rows, its extended range [%" PRId32 ", %"
                           PRId32 ") needs %" PRId32, task, rows->nrows,
                           begin, end, end - begin);
        return -1;
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  Set up task `task` from its extended rows.

int
multisplit_new (const csr_t *rows, const double *b_rows,
                const int32_t *boundaries, int32_t tasks, int32_t task,
                int32_t overlap, const multisplit_options_t *options,
                multisplit_t **self_p, char *error, size_t error_size)
{
    assert (rows);
    assert (b_rows);
    assert (boundaries);
    assert (options);
    assert (self_p);
    if (s_check_shape (rows, boundaries, tasks, task, overlap, error,
                       error_size))
        return -1;
    multisplit_t *self = solvers_calloc (1, sizeof (multisplit_t));
    self->tasks = tasks;
    self->task = task;
    self->weak_row = -1;
    int32_t extended_end;
    multisplit_extended_range (boundaries, tasks, task, overlap,
                               &self->extended_begin, &extended_end);
    self->core_begin = boundaries [task];
    self->core_end = boundaries [task + 1];
    self->core_offset = self->core_begin - self->extended_begin;
    self->local_size = rows->nrows;
    self->inner_tolerance = options->inner_tolerance;
    self->inner_max_iterations = options->inner_max_iterations;
    size_t vector_bytes = (size_t) self->local_size * sizeof (double);
    self->b = solvers_malloc (vector_bytes);
    memcpy (self->b, b_rows, vector_bytes);
    self->x = solvers_calloc ((size_t) self->local_size, sizeof (double));
    self->x_previous = solvers_malloc (vector_bytes);
    self->rhs = solvers_malloc (vector_bytes);
    s_collect_dependencies (self, rows, boundaries);
    s_split_rows (self, rows);
    s_map_overlap (self);
    //  A block coupled to nothing (one task, or a decoupled matrix) has a
    //  right-hand side that never changes: one solve to roundoff is the
    //  answer, where loose solves would take an outer iteration a digit.
    if (self->external_size == 0)
        self->inner_tolerance = fmin (self->inner_tolerance,
                                      MULTISPLIT_UNCOUPLED_TOLERANCE);
    if (s_setup_inner (self, options, error, error_size)) {
        multisplit_destroy (&self);
        return -1;
    }
    *self_p = self;
    return 0;
}

//  --------------------------------------------------------------------------
//  Destroy the task state; nullifies the reference.

void
multisplit_destroy (multisplit_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        multisplit_t *self = *self_p;
        csr_destroy (&self->local);
        csr_destroy (&self->external);
        banded_lu_destroy (&self->lu);
        krylov_destroy (&self->krylov);
        free (self->b);
        free (self->external_indices);
        free (self->dependency_offset);
        free (self->overlap_position);
        free (self->x);
        free (self->x_previous);
        free (self->rhs);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Core range.

int32_t
multisplit_row_begin (const multisplit_t *self)
{
    assert (self);
    return self->core_begin;
}

int32_t
multisplit_row_end (const multisplit_t *self)
{
    assert (self);
    return self->core_end;
}

//  --------------------------------------------------------------------------
//  Dependency groups.

int32_t
multisplit_dependency_count (const multisplit_t *self, int32_t task)
{
    assert (self);
    assert (task >= 0 && task < self->tasks);
    return self->dependency_offset [task + 1] - self->dependency_offset [task];
}

const int32_t *
multisplit_dependency_indices (const multisplit_t *self, int32_t task)
{
    assert (self);
    assert (task >= 0 && task < self->tasks);
    return self->external_indices + self->dependency_offset [task];
}

int32_t
multisplit_dependency_offset (const multisplit_t *self, int32_t task)
{
    assert (self);
    assert (task >= 0 && task < self->tasks);
    return self->dependency_offset [task];
}

int32_t
multisplit_external_size (const multisplit_t *self)
{
    assert (self);
    return self->external_size;
}

double
multisplit_inner_tolerance (const multisplit_t *self)
{
    assert (self);
    return self->inner_tolerance;
}

void
multisplit_external_from_global (const multisplit_t *self, const double *x,
                                 double *x_ext)
{
    assert (self);
    assert (x);
    for (int32_t k = 0; k < self->external_size; k++)
        x_ext [k] = x [self->external_indices [k]];
}

int32_t
multisplit_neighbour_count (const multisplit_t *self)
{
    assert (self);
    int32_t neighbours = 0;
    for (int32_t t = 0; t < self->tasks; t++)
        if (multisplit_dependency_count (self, t) > 0)
            neighbours++;
    return neighbours;
}

//  --------------------------------------------------------------------------
//  Check a neighbour's request list.

int
multisplit_check_request (const multisplit_t *self, const int32_t *indices,
                          int32_t count)
{
    assert (self);
    if (count < 0 || (count > 0 && !indices))
        return -1;
    for (int32_t k = 0; k < count; k++)
        if (indices [k] < self->core_begin || indices [k] >= self->core_end)
            return -1;
    return 0;
}

//  --------------------------------------------------------------------------
//  Values of own core components requested by a neighbour.

void
multisplit_gather (const multisplit_t *self, const int32_t *indices,
                   int32_t count, double *values)
{
    assert (self);
    for (int32_t k = 0; k < count; k++) {
        assert (indices [k] >= self->core_begin && indices [k] < self->core_end);
        values [k] = self->x [indices [k] - self->extended_begin];
    }
}

//  ||rhs - A_local x||_2 before the solve: what a Krylov solve measures
//  as it starts, which a banded LU solve does not.
static double
s_local_residual (const multisplit_t *self)
{
    const csr_t *local = self->local;
    double sum = 0;
    for (int32_t i = 0; i < self->local_size; i++) {
        double r = self->rhs [i];
        for (int64_t e = local->row_ptr [i]; e < local->row_ptr [i + 1]; e++)
            r -= local->values [e] * self->x [local->col_idx [e]];
        sum += r * r;
    }
    return sqrt (sum);
}

//  Inner solves that may diverge in a row before the iteration fails.
//  BiCGStab gives a block back unchanged when it diverges; now and then
//  on a far-from-normal block (upwind convection), and the next solve,
//  from other neighbour values, goes on.  A solve from the same values as
//  the last that diverged (an asynchronous task waiting for news)
//  diverges the same way: ten of those came within half a second, and
//  are counted once.  Except on a block with a zero on its diagonal,
//  where the diagonal preconditioner is the likely cause: there every
//  solve is counted, since the task reported no change, converged
//  locally, its neighbours settled, no news came, and the job spun until
//  its stall check.
#define MULTISPLIT_GAVE_BACK_MAX 10

//  FNV-1a over the right-hand side's bytes: tells a solve from new
//  neighbour values from a repeat of the last
static uint64_t
s_hash_rhs (const double *rhs, int32_t count)
{
    const unsigned char *bytes = (const unsigned char *) rhs;
    uint64_t hash = 14695981039346656037ULL;
    for (size_t i = 0; i < (size_t) count * sizeof (double); i++)
        hash = (hash ^ bytes [i]) * 1099511628211ULL;
    return hash;
}

//  Run the inner solver on self->rhs into self->x; fills the step's inner
//  fields.  Returns false if the solver broke down.
static bool
s_inner_solve (multisplit_t *self, multisplit_step_t *step)
{
    step->inner_iterations = 0;
    step->inner_status = KRYLOV_CONVERGED;
    if (self->lu) {
        step->residual = s_local_residual (self);
        banded_lu_solve (self->lu, self->rhs, self->x);
        return true;
    }
    krylov_result_t result;
    krylov_solve (self->krylov, self->rhs, self->x, self->inner_tolerance,
                  self->inner_max_iterations, &result);
    step->inner_iterations = result.iterations;
    step->inner_status = result.status;
    step->residual = result.initial_residual;
    if (!result.gave_back) {
        self->diverged_in_row = 0;
        self->diverged_rhs = 0;
    }
    else {
        uint64_t hash = s_hash_rhs (self->rhs, self->local_size);
        if (self->diverged_in_row == 0 || hash != self->diverged_rhs
        ||  self->weak_row >= 0)
            self->diverged_in_row++;
        self->diverged_rhs = hash;
    }
    return result.status != KRYLOV_BREAKDOWN;
}

//  Measure the change on the core rows; false if any value is not finite.
static bool
s_measure_change (const multisplit_t *self, multisplit_step_t *step)
{
    for (int32_t i = 0; i < self->local_size; i++)
        if (!isfinite (self->x [i]))
            return false;
    //  Every value is finite here, so plain comparisons do what fmax would
    //  (fmax is a call per element, its NaN rules stop vectorising).
    double change = 0.0, largest = 0.0;
    int32_t core_size = self->core_end - self->core_begin;
    for (int32_t i = self->core_offset; i < self->core_offset + core_size; i++) {
        double difference = fabs (self->x [i] - self->x_previous [i]);
        double magnitude = fabs (self->x [i]);
        change = difference > change ? difference : change;
        largest = magnitude > largest ? magnitude : largest;
    }
    step->change = change;
    step->relative_change = largest > 0.0 ? change / largest : change;
    return true;
}

//  --------------------------------------------------------------------------
//  One iteration with the external values x_ext.

int
multisplit_iterate (multisplit_t *self, const double *x_ext,
                    multisplit_step_t *step)
{
    assert (self);
    assert (step);
    size_t vector_bytes = (size_t) self->local_size * sizeof (double);
    memcpy (self->x_previous, self->x, vector_bytes);
    csr_residual (self->external, self->b, x_ext, self->rhs);
    bool solved = s_inner_solve (self, step);
    self->work += (double) self->external->nnz
                + s_solve_work (self, step->inner_iterations);
    self->failure = !solved ? MULTISPLIT_BROKE_DOWN
                  : self->diverged_in_row >= MULTISPLIT_GAVE_BACK_MAX
                  ? MULTISPLIT_GAVE_BACK
                  : !s_measure_change (self, step) ? MULTISPLIT_NOT_FINITE
                  : MULTISPLIT_FINE;
    if (self->failure != MULTISPLIT_FINE) {
        memcpy (self->x, self->x_previous, vector_bytes);
        if (step->inner_status == KRYLOV_CONVERGED)
            step->inner_status = KRYLOV_BREAKDOWN;
        return -1;
    }
    return 0;
}

bool
multisplit_explain_failure (const multisplit_t *self, char *text,
                            size_t size)
{
    assert (self && text);
    if (self->failure == MULTISPLIT_FINE)
        return false;
    const char *solver = self->lu ? "banded LU"
                       : self->inner == MULTISPLIT_INNER_CG ? "CG"
                       : "BiCGStab";
    int32_t first = self->extended_begin + 1;   //  Rows as users count
    int32_t last = self->extended_begin + self->local_size;
    int length = self->failure == MULTISPLIT_BROKE_DOWN
        ? snprintf (text, size, "the inner %s solve of rows %" PRId32 "-%"
                    PRId32 " broke down", solver, first, last)
        : self->failure == MULTISPLIT_GAVE_BACK
        ? snprintf (text, size, "the inner %s solve of rows %" PRId32 "-%"
                    PRId32 " diverged %d times in a row, each time leaving "
                    "them as they were (is the block singular?)", solver,
                    first, last, MULTISPLIT_GAVE_BACK_MAX)
        : snprintf (text, size, "rows %" PRId32 "-%" PRId32 " are no longer "
                    "finite after the inner %s solve (the method diverges "
                    "on this system)", first, last, solver);
    if (length < 0 || (size_t) length >= size)
        return true;
    if (self->weak_row >= 0)
        length += snprintf (text + length, size - (size_t) length, "; row %"
                            PRId32 " has no nonzero diagonal entry, which "
                            "Krylov blocks need (solver/inner = lu-banded "
                            "pivots)", self->weak_row + 1);
    if (length >= 0 && (size_t) length < size && self->ilu_refused)
        snprintf (text + length, size - (size_t) length, "; ILU(0) could "
                  "not factor the block, so the diagonal preconditioned it");
    return true;
}

//  --------------------------------------------------------------------------
//  The block solve as a preconditioner: z = A_local^-1 v, approximately.

int
multisplit_precondition (multisplit_t *self, const double *v, double *z,
                         int32_t iterations)
{
    assert (self && v && z && iterations >= 0);
    //  With overlap the block's rows are not the core's: no such operator
    assert (self->local_size == self->core_end - self->core_begin);
    self->failure = MULTISPLIT_FINE;
    if (self->lu) {
        banded_lu_solve (self->lu, v, z);
        self->work += s_solve_work (self, 0);
    }
    else
    if (iterations == 0) {
        krylov_precondition (self->krylov, v, z);
        self->work += (double) self->local->nnz;
    }
    else {
        memset (z, 0, (size_t) self->local_size * sizeof (double));
        krylov_result_t result;
        krylov_solve (self->krylov, v, z, self->inner_tolerance, iterations,
                      &result);
        self->work += s_solve_work (self, result.iterations);
        if (result.status == KRYLOV_BREAKDOWN) {
            self->failure = MULTISPLIT_BROKE_DOWN;
            return -1;
        }
    }
    for (int32_t i = 0; i < self->local_size; i++)
        if (!isfinite (z [i])) {
            self->failure = MULTISPLIT_NOT_FINITE;
            return -1;
        }
    return 0;
}

//  --------------------------------------------------------------------------
//  The task's share of the true residual.

//  y = (A x) on the core rows, or b - A x when `b` is set, with x_core on
//  the core columns and the owners' values x_ext on every other one
//  (overlap columns take the owner's value, not our own).
static void
s_core_product (const multisplit_t *self, const double *b,
                const double *x_core, const double *x_ext, double *y)
{
    const csr_t *local = self->local;
    const csr_t *external = self->external;
    int32_t core_size = self->core_end - self->core_begin;
    bool overlapped = self->local_size > core_size;
    for (int32_t k = 0; k < core_size; k++) {
        int32_t i = self->core_offset + k;
        double sum = 0;
        if (overlapped)
            for (int64_t e = local->row_ptr [i]; e < local->row_ptr [i + 1];
                 e++) {
                int32_t c = local->col_idx [e];
                int32_t position = self->overlap_position [c];
                double value = position < 0 ? x_core [c - self->core_offset]
                                            : x_ext [position];
                sum += local->values [e] * value;
            }
        else    //  Every local column is a core one: no lookup per entry
            for (int64_t e = local->row_ptr [i]; e < local->row_ptr [i + 1];
                 e++)
                sum += local->values [e] * x_core [local->col_idx [e]];
        for (int64_t e = external->row_ptr [i]; e < external->row_ptr [i + 1];
             e++)
            sum += external->values [e] * x_ext [external->col_idx [e]];
        y [k] = b ? b [i] - sum : sum;
    }
}

void
multisplit_residual (const multisplit_t *self, const double *x_ext, double *r)
{
    assert (self);
    s_core_product (self, self->b, self->x + self->core_offset, x_ext, r);
}

void
multisplit_multiply (const multisplit_t *self, const double *x_core,
                     const double *x_ext, double *y)
{
    assert (self && x_core && y);
    s_core_product (self, NULL, x_core, x_ext, y);
}

void
multisplit_residual_of (const multisplit_t *self, const double *x_core,
                        const double *x_ext, double *r)
{
    assert (self && x_core && r);
    s_core_product (self, self->b, x_core, x_ext, r);
}

//  --------------------------------------------------------------------------
//  The inner solver actually running.

multisplit_inner_t
multisplit_inner (const multisplit_t *self)
{
    assert (self);
    return self->inner;
}

//  --------------------------------------------------------------------------
//  Current core iterate.

const double *
multisplit_solution (const multisplit_t *self)
{
    assert (self);
    return self->x + self->core_offset;
}

//  --------------------------------------------------------------------------
//  Replace the core iterate.

void
multisplit_set_solution (multisplit_t *self, const double *x_core)
{
    assert (self);
    memcpy (self->x + self->core_offset, x_core,
            (size_t) (self->core_end - self->core_begin) * sizeof (double));
}

//  --------------------------------------------------------------------------
//  Work done, for the rate a rebalance cuts by.

double
multisplit_take_work (multisplit_t *self)
{
    assert (self);
    double work = self->work;
    self->work = 0;
    return work;
}
