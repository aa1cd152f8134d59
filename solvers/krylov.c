/*  =========================================================================
    krylov - preconditioned CG and BiCGStab on a CSR matrix

    Vector kernels are plain loops (the compiler vectorises them); the cost
    of an iteration is dominated by the SpMV, which is memory bound.
    =========================================================================
*/
#include "solvers.h"

//  Work vectors of the larger method (BiCGStab: eight, and x as it came)
#define KRYLOV_VECTORS  9
//  Restarts of a BiCGStab solve that broke down
#define KRYLOV_RESTARTS 3
//  A BiCGStab solve whose residual grew past this factor of its start has
//  diverged, as PETSc's default dtol says.  BiCGStab's residual is not
//  monotone: a solve capped at a few iterations (TSIRM's inner ones)
//  often ends above its start and still helps the outer iteration.
#define KRYLOV_DIVERGENCE 1e5

//  Relative residual below which the reduction asked for by
//  krylov_set_reduction is not pursued: roundoff
#define KRYLOV_ROUNDOFF 1e-15

//  One triangle of the factors, in CSR: each sweep of the preconditioner
//  streams its own triangle only.  Interleaved in A's rows, both sweeps
//  read every cache line of the factors, and applying ILU(0) took 1.55
//  times a product on 3D Poisson (perf, CG on 100³).
typedef struct {
    int64_t *row_ptr;           //  n + 1 offsets, or NULL
    int32_t *col_idx;
    double *values;
} triangle_t;

struct _krylov_t {
    krylov_method_t method;     //  CG or BiCGStab
    const csr_t *A;             //  Borrowed; the matrix being solved
    int32_t n;                  //  Order of A
    double *inverse_diagonal;   //  Jacobi preconditioner, 1 / a_ii
    triangle_t lower;           //  ILU(0): L's strict lower part (its
                                //  diagonal is 1), or empty for Jacobi
    triangle_t upper;           //  ILU(0): U's strict upper part
    int64_t *diagonal;          //  While factoring: a_ii's position in
                                //  each row
    double *inverse_pivot;      //  ILU(0): 1 / u_ii, so the backward
                                //  solve multiplies (a division on its
                                //  row-to-row dependency chain cost
                                //  twice the time)
    double *work;               //  KRYLOV_VECTORS x n workspace
    double reduction;           //  Least gain of a solve, 1 for none
};

static void
s_triangle_free (triangle_t *triangle)
{
    free (triangle->row_ptr);
    free (triangle->col_idx);
    free (triangle->values);
    triangle->row_ptr = NULL;
    triangle->col_idx = NULL;
    triangle->values = NULL;
}

//  --------------------------------------------------------------------------
//  Create a solver for square A.

krylov_t *
krylov_new (krylov_method_t method, const csr_t *A)
{
    assert (A);
    assert (A->nrows == A->ncols);
    krylov_t *self = solvers_calloc (1, sizeof (krylov_t));
    self->method = method;
    self->A = A;
    self->reduction = 1.0;
    self->n = A->nrows;
    self->inverse_diagonal = solvers_malloc ((size_t) self->n * sizeof (double));
    for (int32_t i = 0; i < self->n; i++) {
        double diagonal = csr_value (A, i, i);
        self->inverse_diagonal [i] = diagonal != 0.0 ? 1.0 / diagonal : 1.0;
    }
    self->work = solvers_malloc ((size_t) KRYLOV_VECTORS * (size_t) self->n
                                 * sizeof (double));
    return self;
}

//  --------------------------------------------------------------------------
//  Destroy the solver; nullifies the reference.

void
krylov_destroy (krylov_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        krylov_t *self = *self_p;
        free (self->inverse_diagonal);
        s_triangle_free (&self->lower);
        s_triangle_free (&self->upper);
        free (self->diagonal);
        free (self->inverse_pivot);
        free (self->work);
        free (self);
        *self_p = NULL;
    }
}

static double
s_dot (int32_t n, const double *x, const double *y)
{
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++)
        sum += x [i] * y [i];
    return sum;
}

//  z = M^-1 r: Jacobi, or the two triangular solves of ILU(0)
static void
s_precondition (const krylov_t *self, const double *r, double *z)
{
    if (!self->lower.row_ptr) {
        for (int32_t i = 0; i < self->n; i++)
            z [i] = self->inverse_diagonal [i] * r [i];
        return;
    }
    //  Each row's value depends on the one just computed (the row before
    //  in the forward solve, after in the backward one), and most rows
    //  hold that neighbour: it is kept in a register, so the chain from
    //  row to row is one multiply-add, not a store and a load besides.
    const int64_t *row_ptr = self->lower.row_ptr;
    const int32_t *column = self->lower.col_idx;
    const double *value = self->lower.values;
    double previous = 0;
    for (int32_t i = 0; i < self->n; i++) {
        int64_t begin = row_ptr [i], end = row_ptr [i + 1];
        bool chained = end > begin && column [end - 1] == i - 1;
        double sum = r [i];
        for (int64_t k = begin; k < end - chained; k++)
            sum -= value [k] * z [column [k]];
        if (chained)
            sum -= value [end - 1] * previous;
        z [i] = previous = sum;
    }
    row_ptr = self->upper.row_ptr;
    column = self->upper.col_idx;
    value = self->upper.values;
    double next = 0;
    for (int32_t i = self->n - 1; i >= 0; i--) {
        int64_t begin = row_ptr [i], end = row_ptr [i + 1];
        bool chained = end > begin && column [begin] == i + 1;
        double sum = z [i];
        for (int64_t k = begin + chained; k < end; k++)
            sum -= value [k] * z [column [k]];
        if (chained)
            sum -= value [begin] * next;
        z [i] = next = sum * self->inverse_pivot [i];
    }
}

//  Copy the entries of each row of lu (A's pattern) before or after its
//  diagonal into a triangle of their own.
static void
s_triangle_take (const krylov_t *self, const double *lu, bool lower,
                 triangle_t *triangle)
{
    const csr_t *A = self->A;
    int32_t n = self->n;
    int64_t count = 0;
    for (int32_t i = 0; i < n; i++)
        count += lower ? self->diagonal [i] - A->row_ptr [i]
                       : A->row_ptr [i + 1] - self->diagonal [i] - 1;
    triangle->row_ptr = solvers_malloc (((size_t) n + 1) * sizeof (int64_t));
    triangle->col_idx = solvers_malloc (((size_t) count + 1)
                                        * sizeof (int32_t));
    triangle->values = solvers_malloc (((size_t) count + 1)
                                       * sizeof (double));
    int64_t at = 0;
    triangle->row_ptr [0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t begin = lower ? A->row_ptr [i] : self->diagonal [i] + 1;
        int64_t end = lower ? self->diagonal [i] : A->row_ptr [i + 1];
        for (int64_t k = begin; k < end; k++, at++) {
            triangle->col_idx [at] = A->col_idx [k];
            triangle->values [at] = lu [k];
        }
        triangle->row_ptr [i + 1] = at;
    }
}

//  Keep the factors in lu (A's pattern, diagonal positions in
//  self->diagonal) as the two triangles and the inverse pivots; frees lu
//  and the positions.
static void
s_keep_factors (krylov_t *self, double *lu)
{
    s_triangle_take (self, lu, true, &self->lower);
    s_triangle_take (self, lu, false, &self->upper);
    self->inverse_pivot = solvers_malloc (((size_t) self->n + 1)
                                          * sizeof (double));
    for (int32_t i = 0; i < self->n; i++)
        self->inverse_pivot [i] = 1.0 / lu [self->diagonal [i]];
    free (lu);
    free (self->diagonal);
    self->diagonal = NULL;
}

//  ILU(0) of A in its own pattern (Saad, algorithm 10.4, IKJ order).
//  Returns false if a row has no diagonal entry or a pivot is zero or not
//  finite.
static bool
s_factor_ilu0 (krylov_t *self)
{
    const csr_t *A = self->A;
    int32_t n = self->n;
    double *lu = solvers_malloc ((size_t) (A->nnz + 1) * sizeof (double));
    int64_t *diagonal = solvers_malloc (((size_t) n + 1) * sizeof (int64_t));
    int64_t *position = solvers_malloc (((size_t) n + 1) * sizeof (int64_t));
    memcpy (lu, A->values, (size_t) A->nnz * sizeof (double));
    for (int32_t j = 0; j < n; j++)
        position [j] = -1;
    bool ok = true;
    for (int32_t i = 0; i < n && ok; i++) {
        diagonal [i] = -1;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++) {
            position [A->col_idx [k]] = k;
            if (A->col_idx [k] == i)
                diagonal [i] = k;
        }
        for (int64_t k = A->row_ptr [i]; ok && k < A->row_ptr [i + 1]
                                        && A->col_idx [k] < i; k++) {
            int32_t row = A->col_idx [k];
            lu [k] /= lu [diagonal [row]];
            for (int64_t e = diagonal [row] + 1; e < A->row_ptr [row + 1]; e++)
                if (position [A->col_idx [e]] >= 0)
                    lu [position [A->col_idx [e]]] -= lu [k] * lu [e];
        }
        ok = diagonal [i] >= 0 && lu [diagonal [i]] != 0.0
          && isfinite (lu [diagonal [i]]);
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            position [A->col_idx [k]] = -1;
    }
    free (position);
    if (!ok) {
        free (lu);
        free (diagonal);
        return false;
    }
    self->diagonal = diagonal;
    s_keep_factors (self, lu);
    return true;
}

//  Row i of IC(0) (L D L' in A's pattern, U = D L' kept in the upper
//  slots): the lower slots of row i already hold l_ik, and mirror [s] the
//  slot of u_ki in row k.  Eliminates row i, then mirrors its final upper
//  entries into the lower slots of the rows below.  False if a pivot is
//  zero or not finite, or the pattern is not symmetric.
static bool
s_ic0_row (krylov_t *self, double *lu, int64_t *position, int64_t *next_lower,
           int64_t *mirror, int32_t i)
{
    const csr_t *A = self->A;
    const int32_t *column = A->col_idx;
    int64_t begin = A->row_ptr [i], end = A->row_ptr [i + 1];
    int64_t diagonal = next_lower [i];
    //  Every lower slot was filled by the row it mirrors: the next is a_ii
    if (diagonal >= end || column [diagonal] != i)
        return false;
    self->diagonal [i] = diagonal;
    for (int64_t k = diagonal; k < end; k++)
        position [column [k]] = k;
    //  Only the columns from i on: the rows' updates of the lower part
    //  are those of the upper part mirrored, which ILU(0) computes twice
    for (int64_t s = begin; s < diagonal; s++) {
        int32_t row = column [s];
        for (int64_t e = mirror [s]; e < A->row_ptr [row + 1]; e++)
            if (position [column [e]] >= 0)
                lu [position [column [e]]] -= lu [s] * lu [e];
    }
    for (int64_t k = diagonal; k < end; k++)
        position [column [k]] = -1;
    double pivot = lu [diagonal];
    if (pivot == 0.0 || !isfinite (pivot))
        return false;
    for (int64_t e = diagonal + 1; e < end; e++) {
        int32_t below = column [e];
        int64_t slot = next_lower [below]++;
        if (slot >= A->row_ptr [below + 1] || column [slot] != i)
            return false;
        lu [slot] = lu [e] / pivot;
        mirror [slot] = e;
    }
    return true;
}

//  IC(0) for CG, from the upper triangle: on a symmetric A the factors of
//  ILU(0) in half its work.  False (nothing kept) if the pattern is not
//  symmetric or a pivot fails.
static bool
s_factor_ic0 (krylov_t *self)
{
    const csr_t *A = self->A;
    int32_t n = self->n;
    double *lu = solvers_malloc ((size_t) (A->nnz + 1) * sizeof (double));
    int64_t *position = solvers_malloc (((size_t) n + 1) * sizeof (int64_t));
    int64_t *next_lower = solvers_malloc (((size_t) n + 1)
                                          * sizeof (int64_t));
    int64_t *mirror = solvers_malloc ((size_t) (A->nnz + 1)
                                      * sizeof (int64_t));
    self->diagonal = solvers_malloc (((size_t) n + 1) * sizeof (int64_t));
    memcpy (lu, A->values, (size_t) A->nnz * sizeof (double));
    for (int32_t j = 0; j < n; j++) {
        position [j] = -1;
        next_lower [j] = A->row_ptr [j];
    }
    bool ok = true;
    for (int32_t i = 0; i < n && ok; i++)
        ok = s_ic0_row (self, lu, position, next_lower, mirror, i);
    free (position);
    free (next_lower);
    free (mirror);
    if (!ok) {
        free (lu);
        free (self->diagonal);
        self->diagonal = NULL;
        return false;
    }
    s_keep_factors (self, lu);
    return true;
}

int
krylov_set_ilu0 (krylov_t *self)
{
    assert (self);
    if (self->lower.row_ptr)
        return 0;
    if (self->method == KRYLOV_CG && s_factor_ic0 (self))
        return 0;
    return s_factor_ilu0 (self) ? 0 : -1;
}

void
krylov_set_reduction (krylov_t *self, double factor)
{
    assert (self);
    assert (factor > 0.0 && factor <= 1.0);
    self->reduction = factor;
}

//  Residual norm a solve stops at, from the tolerance, ||b|| and the
//  starting residual norm
static double
s_target (const krylov_t *self, double tolerance, double b_norm,
          double r_norm)
{
    double target = tolerance * b_norm;
    if (self->reduction < 1.0)
        target = fmin (target, fmax (self->reduction * r_norm,
                                     KRYLOV_ROUNDOFF * b_norm));
    return target;
}

//  Fill the result and return its status.
static krylov_status_t
s_finish (krylov_result_t *result, krylov_status_t status, int32_t iterations,
          double residual_norm, double b_norm)
{
    if (!isfinite (residual_norm))
        status = KRYLOV_BREAKDOWN;
    result->status = status;
    result->iterations = iterations;
    result->residual = b_norm > 0.0 ? residual_norm / b_norm : residual_norm;
    return status;
}

//  Preconditioned CG (Saad, Iterative Methods, 2nd ed., algorithm 9.1).
static krylov_status_t
s_cg (krylov_t *self, const double *b, double *x, double tolerance,
      int32_t max_iterations, krylov_result_t *result)
{
    int32_t n = self->n;
    double *r = self->work, *z = r + n, *p = z + n, *q = p + n;
    double b_norm = sqrt (s_dot (n, b, b));
    csr_residual (self->A, b, x, r);
    s_precondition (self, r, z);
    memcpy (p, z, (size_t) n * sizeof (double));
    double rz = s_dot (n, r, z);
    double r_norm = sqrt (s_dot (n, r, r));
    result->initial_residual = r_norm;
    double target = s_target (self, tolerance, b_norm, r_norm);
    int32_t iteration = 0;
    while (r_norm > target && iteration < max_iterations) {
        csr_spmv (self->A, p, q);
        double pq = s_dot (n, p, q);
        //  p'Ap <= 0 means A is not positive definite on this direction.
        if (!(pq > 0.0) || !isfinite (pq))
            return s_finish (result, KRYLOV_BREAKDOWN, iteration, r_norm,
                             b_norm);
        double alpha = rz / pq;
        double rr = 0.0;
        for (int32_t i = 0; i < n; i++) {
            x [i] += alpha * p [i];
            r [i] -= alpha * q [i];
            rr += r [i] * r [i];
        }
        r_norm = sqrt (rr);
        iteration++;
        //  The next direction only if there is a next iteration: with the
        //  few iterations an outer step allows, the preconditioner applied
        //  for nothing at the end was a third to half of a solve's cost.
        if (r_norm <= target || iteration >= max_iterations)
            break;
        s_precondition (self, r, z);
        double rz_next = s_dot (n, r, z);
        double beta = rz_next / rz;
        for (int32_t i = 0; i < n; i++)
            p [i] = z [i] + beta * p [i];
        rz = rz_next;
    }
    return s_finish (result, r_norm <= target ? KRYLOV_CONVERGED
                                              : KRYLOV_MAX_ITERATIONS,
                     iteration, r_norm, b_norm);
}

//  One BiCGStab step after the first half: s, then t, omega and the update.
//  Returns false on breakdown (t = 0, omega 0 or not finite); x and r
//  then take the first half step, x + alpha p_hat and s, which is sound.
static bool
s_bicgstab_second_half (krylov_t *self, double *x, double *r, double alpha,
                        const double *p_hat, const double *s, double *s_hat,
                        double *t, double *omega_p)
{
    int32_t n = self->n;
    s_precondition (self, s, s_hat);
    csr_spmv (self->A, s_hat, t);
    double tt = s_dot (n, t, t);
    double omega = tt > 0.0 && isfinite (tt) ? s_dot (n, t, s) / tt : 0.0;
    if (omega == 0.0 || !isfinite (omega)) {
        for (int32_t i = 0; i < n; i++) {
            x [i] += alpha * p_hat [i];
            r [i] = s [i];
        }
        return false;
    }
    for (int32_t i = 0; i < n; i++) {
        x [i] += alpha * p_hat [i] + omega * s_hat [i];
        r [i] = s [i] - omega * t [i];
    }
    *omega_p = omega;
    return true;
}

//  Right-preconditioned BiCGStab (Saad, algorithm 7.7 with preconditioning)
//  from x, r = b - A x already in the workspace, until r_norm <= target or
//  `budget` iterations; *iterations counts them.  KRYLOV_BREAKDOWN leaves x
//  at the last sound step (r its residual), for a restart.
static krylov_status_t
s_bicgstab_run (krylov_t *self, double *x, double target, int32_t budget,
                int32_t *iterations, double *r_norm_p)
{
    int32_t n = self->n;
    double *r = self->work, *r_hat = r + n, *p = r_hat + n, *v = p + n;
    double *p_hat = v + n, *s = p_hat + n, *s_hat = s + n, *t = s_hat + n;
    memcpy (r_hat, r, (size_t) n * sizeof (double));
    memset (p, 0, (size_t) n * sizeof (double));
    memset (v, 0, (size_t) n * sizeof (double));
    double rho = 1.0, alpha = 1.0, omega = 1.0;
    double r_norm = *r_norm_p;
    krylov_status_t status = KRYLOV_MAX_ITERATIONS;
    for (int32_t done = 0; done < budget; done++) {
        if (r_norm <= target) {
            status = KRYLOV_CONVERGED;
            break;
        }
        double rho_next = s_dot (n, r_hat, r);
        if (rho_next == 0.0 || !isfinite (rho_next)) {
            status = KRYLOV_BREAKDOWN;
            break;
        }
        double beta = (rho_next / rho) * (alpha / omega);
        for (int32_t i = 0; i < n; i++)
            p [i] = r [i] + beta * (p [i] - omega * v [i]);
        s_precondition (self, p, p_hat);
        csr_spmv (self->A, p_hat, v);
        double r_hat_v = s_dot (n, r_hat, v);
        if (r_hat_v == 0.0 || !isfinite (r_hat_v)) {
            status = KRYLOV_BREAKDOWN;
            break;
        }
        alpha = rho_next / r_hat_v;
        for (int32_t i = 0; i < n; i++)
            s [i] = r [i] - alpha * v [i];
        double s_norm = sqrt (s_dot (n, s, s));
        (*iterations)++;
        if (s_norm <= target) {
            //  Half a step was enough: x += alpha p_hat, r = s.
            for (int32_t i = 0; i < n; i++) {
                x [i] += alpha * p_hat [i];
                r [i] = s [i];
            }
            r_norm = s_norm;
            status = KRYLOV_CONVERGED;
            break;
        }
        bool sound = s_bicgstab_second_half (self, x, r, alpha, p_hat, s,
                                             s_hat, t, &omega);
        r_norm = sqrt (s_dot (n, r, r));
        if (!sound || !isfinite (r_norm)) {
            status = KRYLOV_BREAKDOWN;
            break;
        }
        rho = rho_next;
    }
    if (status == KRYLOV_MAX_ITERATIONS && r_norm <= target)
        status = KRYLOV_CONVERGED;
    *r_norm_p = r_norm;
    return status;
}

//  BiCGStab, restarted from where it stood (a fresh shadow residual) when
//  it breaks down, KRYLOV_RESTARTS times at most, then given up as a
//  spent budget.  On a block far from normal (upwind convection, 4 + C =
//  24 on the diagonal, -21 beside it) with the diagonal as
//  preconditioner, a run broke down after 204 iterations, and others grew
//  x to 1e72 within their budget: a solve that ends with a residual
//  KRYLOV_DIVERGENCE times what it started from, or not finite, gives x
//  back as it came (KRYLOV_MAX_ITERATIONS), so no task sends such values.
static krylov_status_t
s_bicgstab (krylov_t *self, const double *b, double *x, double tolerance,
            int32_t max_iterations, krylov_result_t *result)
{
    int32_t n = self->n;
    double *r = self->work, *x_start = self->work + 8 * (size_t) n;
    double b_norm = sqrt (s_dot (n, b, b));
    csr_residual (self->A, b, x, r);
    memcpy (x_start, x, (size_t) n * sizeof (double));
    double r_norm = sqrt (s_dot (n, r, r));
    double initial = r_norm;
    result->initial_residual = r_norm;
    double target = s_target (self, tolerance, b_norm, r_norm);
    int32_t iterations = 0;
    krylov_status_t status = KRYLOV_BREAKDOWN;
    for (int restart = 0; restart <= KRYLOV_RESTARTS
                       && status == KRYLOV_BREAKDOWN; restart++) {
        if (restart > 0) {
            csr_residual (self->A, b, x, r);
            r_norm = sqrt (s_dot (n, r, r));
        }
        status = s_bicgstab_run (self, x, target, max_iterations - iterations,
                                 &iterations, &r_norm);
    }
    if (status == KRYLOV_BREAKDOWN)
        status = KRYLOV_MAX_ITERATIONS;     //  The restarts are spent too
    if (status != KRYLOV_CONVERGED && !(r_norm <= KRYLOV_DIVERGENCE * initial)) {
        memcpy (x, x_start, (size_t) n * sizeof (double));
        r_norm = initial;
        result->gave_back = true;
    }
    return s_finish (result, status, iterations, r_norm, b_norm);
}

//  --------------------------------------------------------------------------
//  Solve A x = b starting from x.

krylov_status_t
krylov_solve (krylov_t *self, const double *b, double *x, double tolerance,
              int32_t max_iterations, krylov_result_t *result)
{
    assert (self);
    assert (result);
    assert (tolerance >= 0.0);
    result->gave_back = false;
    if (self->method == KRYLOV_CG)
        return s_cg (self, b, x, tolerance, max_iterations, result);
    return s_bicgstab (self, b, x, tolerance, max_iterations, result);
}

//  --------------------------------------------------------------------------
//  One application of the preconditioner, for an outer Krylov method that
//  uses it as its own (block Jacobi with ILU(0) blocks, as PETSc's
//  -pc_type bjacobi -sub_pc_type ilu).

void
krylov_precondition (const krylov_t *self, const double *r, double *z)
{
    assert (self && r && z);
    s_precondition (self, r, z);
}

//  --------------------------------------------------------------------------
//  Name of a status.

const char *
krylov_status_name (krylov_status_t status)
{
    switch (status) {
        case KRYLOV_CONVERGED:      return "converged";
        case KRYLOV_MAX_ITERATIONS: return "max iterations";
        case KRYLOV_BREAKDOWN:      return "breakdown";
    }
    return "unknown";
}
