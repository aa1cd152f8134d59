/*  =========================================================================
    test_solvers_inner - banded LU (LAPACK) and the Krylov solvers

    Systems are built with b = A * 1 so the exact solution is known; each
    solver must reach it to the stated accuracy, report honest iteration
    counts and statuses, and detect the failures it documents.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"

void openblas_set_num_threads (int);

//  max_i |x_i - 1|
static double
s_error_from_ones (const double *x, int32_t n)
{
    double error = 0.0;
    for (int32_t i = 0; i < n; i++)
        error = fmax (error, fabs (x [i] - 1.0));
    return error;
}

//  Allocate b = A * 1 and a zeroed x for square A.
static void
s_system (const csr_t *A, double **b_p, double **x_p)
{
    *b_p = malloc (A->nrows * sizeof (double));
    *x_p = calloc (A->nrows, sizeof (double));
    problems_rhs_ones_solution (A, *b_p);
}

static void
s_test_banded_lu (void)
{
    csr_t *A = NULL;
    problems_poisson2d (12, 0, 144, &A, NULL, 0);
    int32_t kl, ku;
    banded_lu_bandwidth (A, &kl, &ku);
    ok (kl == 12 && ku == 12, "bandwidth of 2D Poisson 12x12 is 12");
    is_int ((long long) banded_lu_bytes (A), (2 * 12 + 12 + 1) * 144 * 8,
            "band storage is 8 (2 kl + ku + 1) n bytes");
    banded_lu_t *lu = NULL;
    ok (banded_lu_factor (A, 0, &lu) == 0 && lu, "2D Poisson factors");
    is_int (banded_lu_order (lu), 144, "factors have the order of A");
    double *b, *x;
    s_system (A, &b, &x);
    banded_lu_solve (lu, b, x);
    is_double (s_error_from_ones (x, 144), 0.0, 1e-12, "LU solves to the ones vector");
    banded_lu_solve (lu, b, b);
    is_double (s_error_from_ones (b, 144), 0.0, 1e-12, "LU solves in place");
    for (int i = 0; i < 144; i++)
        b [i] = 4.0 * i;
    double *y = malloc (144 * sizeof (double));
    csr_spmv (A, b, y);
    banded_lu_solve (lu, y, x);
    double error = 0.0;
    for (int i = 0; i < 144; i++)
        error = fmax (error, fabs (x [i] - 4.0 * i));
    is_double (error, 0.0, 1e-9, "the same factors solve another right-hand side");
    banded_lu_destroy (&lu);
    ok (lu == NULL, "destroy nullifies the factors");
    lu = (banded_lu_t *) 1;
    banded_lu_t *untouched = lu;
    ok (banded_lu_factor (A, 1000, &lu) == BANDED_LU_TOO_LARGE && lu == untouched,
        "a block over the byte limit is refused before allocating");
    lu = NULL;
    csr_destroy (&A);
    free (b);
    free (x);
    free (y);

    problems_random_dominant (150, 4, 1.2, 3, 0, 150, &A, NULL, 0);
    s_system (A, &b, &x);
    ok (banded_lu_factor (A, 0, &lu) == 0, "random nonsymmetric matrix factors");
    banded_lu_solve (lu, b, x);
    is_double (s_error_from_ones (x, 150), 0.0, 1e-11, "LU solves the nonsymmetric system");
    banded_lu_destroy (&lu);
    csr_destroy (&A);
    free (b);
    free (x);

    //  Zero diagonal: only partial pivoting gets through.
    csr_builder_t *builder = csr_builder_new (3, 3, 0);
    csr_builder_add (builder, 0, 1, 2.0);
    csr_builder_add (builder, 1, 0, 1.0);
    csr_builder_add (builder, 1, 2, 1.0);
    csr_builder_add (builder, 2, 1, 3.0);
    csr_builder_add (builder, 2, 2, 1.0);
    A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    s_system (A, &b, &x);
    ok (banded_lu_factor (A, 0, &lu) == 0, "a zero-diagonal block factors by pivoting");
    banded_lu_solve (lu, b, x);
    is_double (s_error_from_ones (x, 3), 0.0, 1e-15, "the pivoted solve is exact");
    banded_lu_destroy (&lu);
    csr_destroy (&A);
    free (b);
    free (x);

    builder = csr_builder_new (3, 3, 0);
    csr_builder_add (builder, 0, 0, 1.0);
    csr_builder_add (builder, 0, 1, 2.0);
    csr_builder_add (builder, 1, 0, 2.0);
    csr_builder_add (builder, 1, 1, 4.0);
    csr_builder_add (builder, 2, 2, 1.0);
    A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    ok (banded_lu_factor (A, 0, &lu) == BANDED_LU_SINGULAR && lu == NULL,
        "a singular block is reported, no factors kept");
    csr_destroy (&A);
}

//  A random n x n band matrix with kl sub- and ku super-diagonals, all of
//  them full; dominant makes the diagonal outweigh its row, otherwise the
//  diagonal is small and the factorisation must pivot.
static csr_t *
s_random_band (int32_t n, int32_t kl, int32_t ku, bool dominant,
               unsigned *seed)
{
    csr_builder_t *builder = csr_builder_new (n, n, 0);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i - kl; j <= i + ku; j++) {
            if (j < 0 || j >= n)
                continue;
            double value = (double) rand_r (seed) / RAND_MAX - 0.5;
            if (j == i)
                value = dominant ? kl + ku + 1.0 : 1e-3 * value;
            csr_builder_add (builder, i, j, value);
        }
    csr_t *A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    return A;
}

//  Every band shape the solve has a branch for: no L (kl = 0), no U above
//  the diagonal (ku = 0), diagonal only, one row, wide and lopsided bands,
//  with and without pivoting.
static void
s_test_banded_lu_shapes (void)
{
    struct { int32_t n, kl, ku; bool dominant; } shapes [] = {
        { 1, 0, 0, true }, { 40, 0, 0, true }, { 40, 0, 3, true },
        { 40, 4, 0, true }, { 60, 2, 7, true }, { 60, 9, 1, false },
        { 60, 5, 5, false }, { 7, 6, 6, false }
    };
    unsigned seed = 7;
    int passed = 0, count = sizeof shapes / sizeof shapes [0];
    for (int s = 0; s < count; s++) {
        csr_t *A = s_random_band (shapes [s].n, shapes [s].kl, shapes [s].ku,
                                  shapes [s].dominant, &seed);
        double *b, *x;
        s_system (A, &b, &x);
        banded_lu_t *lu = NULL;
        if (banded_lu_factor (A, 0, &lu) == 0) {
            banded_lu_solve (lu, b, x);
            double error = s_error_from_ones (x, A->nrows);
            if (error <= 1e-9)
                passed++;
            else
                diag ("n %d kl %d ku %d: error %g", shapes [s].n,
                      shapes [s].kl, shapes [s].ku, error);
        }
        banded_lu_destroy (&lu);
        csr_destroy (&A);
        free (b);
        free (x);
    }
    ok (passed == count, "LU solves every band shape, pivoted or not");
}

static void
s_test_cg (void)
{
    csr_t *A = NULL;
    problems_poisson3d (12, 0, 1728, &A, NULL, 0);
    double *b, *x;
    s_system (A, &b, &x);
    krylov_t *cg = krylov_new (KRYLOV_CG, A);
    krylov_result_t result;
    ok (krylov_solve (cg, b, x, 1e-12, 500, &result) == KRYLOV_CONVERGED,
        "CG converges on 3D Poisson 12^3");
    ok (result.residual <= 1e-12, "CG reports a residual under the tolerance");
    double *r = malloc (A->nrows * sizeof (double));
    csr_residual (A, b, x, r);
    double r_norm = 0.0, b_norm = 0.0;
    for (int i = 0; i < A->nrows; i++) {
        r_norm += r [i] * r [i];
        b_norm += b [i] * b [i];
    }
    ok (sqrt (r_norm / b_norm) < 1e-11, "CG's true residual agrees with its report");
    is_double (s_error_from_ones (x, A->nrows), 0.0, 1e-9, "CG reaches the ones vector");
    ok (result.iterations > 10 && result.iterations < 200, "CG iteration count is plausible");
    diag ("CG: %d iterations, residual %.3g", result.iterations, result.residual);
    krylov_solve (cg, b, x, 1e-10, 500, &result);
    is_int (result.iterations, 0, "warm start from the solution needs no iteration");
    //  A warm start already under a loose tolerance: alone it does
    //  nothing; with a least reduction the residual still drops tenfold.
    memset (x, 0, A->nrows * sizeof (double));
    krylov_solve (cg, b, x, 1e-4, 500, &result);
    double loose = result.residual;
    krylov_solve (cg, b, x, 1e-3, 500, &result);
    is_int (result.iterations, 0, "a warm start under the tolerance does nothing");
    krylov_set_reduction (cg, 0.1);
    krylov_solve (cg, b, x, 1e-3, 500, &result);
    ok (result.iterations > 0 && result.residual <= 0.1 * loose,
        "with a least reduction it still gains a digit");
    krylov_solve (cg, b, x, 1e-3, 500, &result);
    krylov_solve (cg, b, x, 1e-3, 500, &result);
    ok (result.residual <= 1e-3 * loose, "and another at each solve");
    krylov_set_reduction (cg, 1.0);
    memset (x, 0, A->nrows * sizeof (double));
    ok (krylov_solve (cg, b, x, 1e-12, 3, &result) == KRYLOV_MAX_ITERATIONS
        && result.iterations == 3, "CG stops at the iteration budget and says so");
    memset (b, 0, A->nrows * sizeof (double));
    memset (x, 0, A->nrows * sizeof (double));
    ok (krylov_solve (cg, b, x, 1e-12, 10, &result) == KRYLOV_CONVERGED
        && result.iterations == 0 && x [0] == 0.0, "b = 0 gives x = 0 at once");
    krylov_destroy (&cg);
    ok (cg == NULL, "destroy nullifies the solver");
    free (b);
    free (x);
    free (r);
    csr_destroy (&A);

    //  Indefinite symmetric matrix: diag (1, -1) blocks.
    csr_builder_t *builder = csr_builder_new (4, 4, 0);
    for (int i = 0; i < 4; i++)
        csr_builder_add (builder, i, i, i % 2 ? -1.0 : 1.0);
    csr_builder_add (builder, 0, 1, 0.5);
    csr_builder_add (builder, 1, 0, 0.5);
    A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    s_system (A, &b, &x);
    cg = krylov_new (KRYLOV_CG, A);
    ok (krylov_solve (cg, b, x, 1e-12, 100, &result) == KRYLOV_BREAKDOWN,
        "CG reports breakdown on an indefinite matrix");
    ok (strcmp (krylov_status_name (result.status), "breakdown") == 0,
        "status names read as words");
    krylov_destroy (&cg);
    csr_destroy (&A);
    free (b);
    free (x);
}

static void
s_test_bicgstab (void)
{
    csr_t *A = NULL;
    problems_random_dominant (3000, 6, 1.1, 21, 0, 3000, &A, NULL, 0);
    double *b, *x;
    s_system (A, &b, &x);
    krylov_t *solver = krylov_new (KRYLOV_BICGSTAB, A);
    krylov_result_t result;
    ok (krylov_solve (solver, b, x, 1e-12, 500, &result) == KRYLOV_CONVERGED,
        "BiCGStab converges on a random nonsymmetric system");
    is_double (s_error_from_ones (x, 3000), 0.0, 1e-9, "BiCGStab reaches the ones vector");
    diag ("BiCGStab: %d iterations, residual %.3g", result.iterations, result.residual);
    krylov_destroy (&solver);
    csr_destroy (&A);
    free (b);
    free (x);

    problems_nascg_t params = { .n = 4000, .bandwidth = 100, .lower_per_row = 5,
                                .diagonal_shift = 0.1, .seed = 8 };
    problems_nascg (&params, 0, params.n, &A, NULL, 0);
    s_system (A, &b, &x);
    double *x_lu = calloc (params.n, sizeof (double));
    solver = krylov_new (KRYLOV_BICGSTAB, A);
    ok (krylov_solve (solver, b, x, 1e-12, 1000, &result) == KRYLOV_CONVERGED,
        "BiCGStab also converges on an SPD banded system");
    krylov_destroy (&solver);
    solver = krylov_new (KRYLOV_CG, A);
    memset (x, 0, params.n * sizeof (double));
    ok (krylov_solve (solver, b, x, 1e-13, 1000, &result) == KRYLOV_CONVERGED,
        "CG converges on the banded SPD system");
    banded_lu_t *lu = NULL;
    banded_lu_factor (A, 0, &lu);
    banded_lu_solve (lu, b, x_lu);
    double difference = 0.0;
    for (int i = 0; i < params.n; i++)
        difference = fmax (difference, fabs (x [i] - x_lu [i]));
    is_double (difference, 0.0, 1e-10, "CG and banded LU agree");
    banded_lu_destroy (&lu);
    krylov_destroy (&solver);
    csr_destroy (&A);
    free (b);
    free (x);
    free (x_lu);
}

//  ILU(0): fewer iterations than the diagonal, the same answer, with CG on
//  a symmetric matrix and BiCGStab on a nonsymmetric one; a matrix it
//  cannot factor keeps the diagonal.
static void
s_test_ilu0 (void)
{
    csr_t *A = NULL;
    problems_poisson3d (12, 0, 1728, &A, NULL, 0);
    double *b, *x;
    s_system (A, &b, &x);
    krylov_t *jacobi = krylov_new (KRYLOV_CG, A);
    krylov_t *ilu = krylov_new (KRYLOV_CG, A);
    ok (krylov_set_ilu0 (ilu) == 0, "ILU(0) factors 3D Poisson");
    krylov_result_t plain, factored;
    krylov_solve (jacobi, b, x, 1e-12, 500, &plain);
    memset (x, 0, A->nrows * sizeof (double));
    ok (krylov_solve (ilu, b, x, 1e-12, 500, &factored) == KRYLOV_CONVERGED
        && s_error_from_ones (x, A->nrows) < 1e-9,
        "CG with ILU(0) (IC(0) here) reaches the ones vector");
    ok (factored.iterations < plain.iterations,
        "in fewer iterations than with the diagonal");
    diag ("CG: Jacobi %d iterations, ILU(0) %d", plain.iterations,
          factored.iterations);
    krylov_destroy (&jacobi);
    krylov_destroy (&ilu);
    csr_destroy (&A);
    free (b);
    free (x);

    problems_random_dominant (3000, 6, 1.1, 21, 0, 3000, &A, NULL, 0);
    s_system (A, &b, &x);
    krylov_t *solver = krylov_new (KRYLOV_BICGSTAB, A);
    krylov_set_ilu0 (solver);
    ok (krylov_solve (solver, b, x, 1e-12, 500, &factored) == KRYLOV_CONVERGED
        && s_error_from_ones (x, 3000) < 1e-9,
        "BiCGStab with ILU(0) converges on a nonsymmetric system");
    krylov_destroy (&solver);
    csr_destroy (&A);
    free (b);
    free (x);

    //  No diagonal entry in row 0: ILU(0) refuses, the diagonal stays.
    csr_builder_t *builder = csr_builder_new (2, 2, 3);
    csr_builder_add (builder, 0, 1, 1.0);
    csr_builder_add (builder, 1, 0, 1.0);
    csr_builder_add (builder, 1, 1, 2.0);
    A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    solver = krylov_new (KRYLOV_BICGSTAB, A);
    ok (krylov_set_ilu0 (solver) == -1,
        "a row without a diagonal entry cannot be factored");
    krylov_destroy (&solver);
    csr_destroy (&A);
}

//  Largest difference between CG's and BiCGStab's preconditioners of A
//  (IC(0) from the upper triangle, and ILU(0)) on the same vector.
static double
s_ic0_against_ilu0 (const csr_t *A)
{
    krylov_t *cg = krylov_new (KRYLOV_CG, A);
    krylov_t *bicgstab = krylov_new (KRYLOV_BICGSTAB, A);
    double difference = -1.0;
    if (krylov_set_ilu0 (cg) == 0 && krylov_set_ilu0 (bicgstab) == 0) {
        double *r = malloc (3 * A->nrows * sizeof (double));
        double *z_cg = r + A->nrows, *z_ilu = z_cg + A->nrows;
        for (int i = 0; i < A->nrows; i++)
            r [i] = sin (1.0 + i);
        krylov_precondition (cg, r, z_cg);
        krylov_precondition (bicgstab, r, z_ilu);
        difference = 0.0;
        for (int i = 0; i < A->nrows; i++)
            difference = fmax (difference, fabs (z_cg [i] - z_ilu [i])
                                           / fmax (1.0, fabs (z_ilu [i])));
        free (r);
    }
    krylov_destroy (&cg);
    krylov_destroy (&bicgstab);
    return difference;
}

//  Under CG the factors come from the upper triangle (IC(0)): the same as
//  ILU(0)'s on symmetric matrices, and ILU(0) itself where the pattern is
//  not symmetric.
static void
s_test_ic0 (void)
{
    csr_t *A = NULL;
    problems_nascg_t nascg = { 4000, 300, 4, 1.0, 7 };
    problems_nascg (&nascg, 0, 4000, &A, NULL, 0);
    double difference = s_ic0_against_ilu0 (A);
    ok (difference >= 0 && difference < 1e-12,
        "IC(0) under CG is ILU(0) on a NAS-CG-like matrix");
    diag ("largest relative difference %.1e", difference);
    csr_destroy (&A);
    problems_poisson3d (10, 0, 1000, &A, NULL, 0);
    difference = s_ic0_against_ilu0 (A);
    ok (difference >= 0 && difference < 1e-12,
        "IC(0) under CG is ILU(0) on 3D Poisson");
    csr_destroy (&A);
    //  A pattern that is not symmetric: CG's factors are ILU(0)'s exactly
    problems_random_dominant (2000, 5, 2.0, 3, 0, 2000, &A, NULL, 0);
    ok (s_ic0_against_ilu0 (A) == 0.0,
        "a nonsymmetric pattern under CG is factored by ILU(0)");
    csr_destroy (&A);
}

//  A full band of half-width `band`, diagonally dominant; symmetric or not
static csr_t *
s_full_band (int32_t n, int32_t band, bool symmetric)
{
    csr_builder_t *builder = csr_builder_new (n, n, (int64_t) n
                                                    * (2 * band + 1));
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i - band; j <= i + band; j++) {
            if (j < 0 || j >= n)
                continue;
            double value = i == j ? 4.0 * band
                         : -1.0 / (1 + (symmetric ? i + j : i + 2 * j) % 7);
            csr_builder_add (builder, i, j, value);
        }
    csr_t *A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    return A;
}

//  Largest |(A z - r)_i| for z = M^-1 r with the method's ILU(0)
static double
s_exact_factor_error (krylov_method_t method, const csr_t *A)
{
    krylov_t *solver = krylov_new (method, A);
    double error = -1.0;
    if (krylov_set_ilu0 (solver) == 0) {
        double *r = malloc (3 * A->nrows * sizeof (double));
        double *z = r + A->nrows, *Az = z + A->nrows;
        for (int i = 0; i < A->nrows; i++)
            r [i] = cos (0.5 + i);
        krylov_precondition (solver, r, z);
        csr_spmv (A, z, Az);
        error = 0.0;
        for (int i = 0; i < A->nrows; i++)
            error = fmax (error, fabs (Az [i] - r [i]));
        free (r);
    }
    krylov_destroy (&solver);
    return error;
}

//  On a full band, ILU(0) fills nothing it drops: it is the exact LU, and
//  applying it solves the system (both sweeps, the neighbour kept in a
//  register and the entries further out).
static void
s_test_exact_factors (void)
{
    csr_t *A = s_full_band (500, 3, false);
    double error = s_exact_factor_error (KRYLOV_BICGSTAB, A);
    ok (error >= 0 && error < 1e-12,
        "ILU(0) of a full band solves it exactly");
    csr_destroy (&A);
    A = s_full_band (500, 3, true);
    error = s_exact_factor_error (KRYLOV_CG, A);
    ok (error >= 0 && error < 1e-12,
        "IC(0) of a symmetric full band solves it exactly");
    csr_destroy (&A);
}

//  Rows [begin, end) of the upwind convection matrix of a 700 x 700 grid
//  (C = 20: 24 on the diagonal, -21 for the x - 1 neighbour), as the
//  square block a task of those rows solves, and in *b_p the right-hand
//  side of its first iteration: b = A * 1 on those rows, the other
//  tasks' values still 0.  A zeroed x in *x_p.
static csr_t *
s_convection_block (int32_t begin, int32_t end, double **b_p, double **x_p)
{
    csr_t *rows = NULL;
    char error [256];
    problems_convection2d (700, 20.0, begin, end, &rows, error, sizeof error);
    assert (rows);
    *b_p = malloc (rows->nrows * sizeof (double));
    *x_p = calloc (rows->nrows, sizeof (double));
    problems_rhs_ones_solution (rows, *b_p);
    csr_builder_t *builder = csr_builder_new (end - begin, end - begin,
                                              rows->nnz);
    for (int32_t i = 0; i < rows->nrows; i++)
        for (int64_t k = rows->row_ptr [i]; k < rows->row_ptr [i + 1]; k++)
            if (rows->col_idx [k] >= begin && rows->col_idx [k] < end)
                csr_builder_add (builder, i, rows->col_idx [k] - begin,
                                 rows->values [k]);
    csr_t *block = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    csr_destroy (&rows);
    return block;
}

//  ||b - A x||_2, and whether every x_i is finite
static double
s_residual_norm (const csr_t *A, const double *b, const double *x,
                 bool *finite)
{
    double *r = malloc (A->nrows * sizeof (double));
    csr_residual (A, b, x, r);
    double sum = 0.0;
    *finite = true;
    for (int32_t i = 0; i < A->nrows; i++) {
        sum += r [i] * r [i];
        *finite = *finite && isfinite (x [i]);
    }
    free (r);
    return sqrt (sum);
}

//  Blocks of a job's scatter (convection2d 700, C = 20, 8 tasks) on which
//  Jacobi-preconditioned BiCGStab went wrong: on the first, x grew to
//  1e72 within the 1000 iterations and was sent on as the task's values;
//  on the second it broke down after 204, and the job failed.  Now a
//  breakdown restarts, and a solve that ends 1e5 times worse than it
//  began leaves x as it came.
static void
s_test_bicgstab_far_from_normal (void)
{
    double *b, *x;
    csr_t *A = s_convection_block (0, 19800, &b, &x);
    bool finite;
    double start = s_residual_norm (A, b, x, &finite);
    krylov_t *solver = krylov_new (KRYLOV_BICGSTAB, A);
    krylov_result_t result;
    krylov_solve (solver, b, x, 1e-3, 1000, &result);
    double end = s_residual_norm (A, b, x, &finite);
    char name [160];
    snprintf (name, sizeof name, "BiCGStab that diverges gives x back "
              "(residual %.3g from %.3g)", end, start);
    ok (finite && end <= 1e5 * start, name);
    krylov_destroy (&solver);
    csr_destroy (&A);
    free (b);
    free (x);

    A = s_convection_block (465388, 478898, &b, &x);
    solver = krylov_new (KRYLOV_BICGSTAB, A);
    krylov_status_t status = krylov_solve (solver, b, x, 1e-3, 1000,
                                           &result);
    snprintf (name, sizeof name, "BiCGStab restarted after a breakdown "
              "converges (%d iterations)", result.iterations);
    ok (status == KRYLOV_CONVERGED && result.residual <= 1e-3, name);
    krylov_destroy (&solver);
    csr_destroy (&A);
    free (b);
    free (x);
}

int
main (void)
{
    openblas_set_num_threads (1);
    tap_plan (34 + 5 + 3 + 2 + 2);
    s_test_banded_lu ();
    s_test_banded_lu_shapes ();
    s_test_cg ();
    s_test_bicgstab ();
    s_test_ilu0 ();
    s_test_ic0 ();
    s_test_exact_factors ();
    s_test_bicgstab_far_from_normal ();
    return tap_done ();
}
