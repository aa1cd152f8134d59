/*  =========================================================================
    test_solvers_csr - CSR builder, kernels and structural operations

    Every result is checked against a dense reference built from the same
    triplets, so the checks fail if sorting, duplicate summing or any
    kernel is wrong.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"

void openblas_set_num_threads (int);

//  Small deterministic generator for test data (not the library's)
static uint64_t
s_random (uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

//  True if A equals the dense row-major matrix dense[nrows x ncols].
static bool
s_equals_dense (const csr_t *A, const double *dense, double tolerance)
{
    for (int32_t i = 0; i < A->nrows; i++)
        for (int32_t j = 0; j < A->ncols; j++)
            if (fabs (csr_value (A, i, j) - dense [i * A->ncols + j]) > tolerance)
                return false;
    return true;
}

//  Build a random matrix with many duplicates and its dense twin.
static csr_t *
s_random_matrix (int32_t nrows, int32_t ncols, int count, uint64_t seed,
                 double *dense)
{
    uint64_t state = seed;
    memset (dense, 0, (size_t) nrows * ncols * sizeof (double));
    csr_builder_t *builder = csr_builder_new (nrows, ncols, 4);
    for (int k = 0; k < count; k++) {
        int32_t i = (int32_t) (s_random (&state) % (uint64_t) nrows);
        int32_t j = (int32_t) (s_random (&state) % (uint64_t) ncols);
        double value = (double) (s_random (&state) % 1000) / 100.0 - 5.0;
        csr_builder_add (builder, i, j, value);
        dense [i * ncols + j] += value;
    }
    csr_t *A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    return A;
}

static void
s_test_builder (void)
{
    csr_builder_t *builder = csr_builder_new (3, 4, 0);
    ok (csr_builder_add (builder, 0, 3, 1.0) == 0, "builder accepts (0, 3)");
    ok (csr_builder_add (builder, 3, 0, 1.0) == -1, "builder refuses row 3 of 3");
    ok (csr_builder_add (builder, 0, 4, 1.0) == -1, "builder refuses column 4 of 4");
    ok (csr_builder_add (builder, -1, 0, 1.0) == -1, "builder refuses row -1");
    csr_builder_add (builder, 0, 1, 2.0);
    csr_builder_add (builder, 0, 3, 0.5);   //  duplicate of (0, 3)
    csr_builder_add (builder, 2, 0, 7.0);
    is_int (csr_builder_count (builder), 4, "builder counts triplets, not entries");
    csr_t *A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    ok (builder == NULL, "destroy nullifies the builder");
    is_int (A->nnz, 3, "duplicates merge into one entry");
    is_double (csr_value (A, 0, 3), 1.5, 0, "duplicates are summed");
    is_int (A->col_idx [0], 1, "row 0 columns are sorted");
    is_int (A->row_ptr [2] - A->row_ptr [1], 0, "empty row 1 has no entries");
    is_double (csr_value (A, 1, 2), 0.0, 0, "missing entry reads as zero");
    ok (csr_is_valid (A), "built matrix is structurally valid");
    csr_destroy (&A);
    ok (A == NULL, "destroy nullifies the matrix");
    csr_destroy (&A);
    ok (true, "destroying NULL is a no-op");
}

static void
s_test_random_build (void)
{
    const int32_t nrows = 37, ncols = 23;
    double *dense = malloc (nrows * ncols * sizeof (double));
    //  Long rows take the qsort path, short rows insertion sort.
    csr_t *A = s_random_matrix (nrows, ncols, 3000, 42, dense);
    ok (csr_is_valid (A), "random matrix with long rows is valid");
    ok (s_equals_dense (A, dense, 1e-12), "random matrix equals its dense twin");
    csr_t *B = s_random_matrix (nrows, ncols, 60, 7, dense);
    ok (csr_is_valid (B) && s_equals_dense (B, dense, 1e-12),
        "random matrix with short rows equals its dense twin");

    double x [23], y [37], y_dense [37], b [37], r [37];
    for (int32_t j = 0; j < ncols; j++)
        x [j] = 1.0 + 0.25 * j;
    for (int32_t i = 0; i < nrows; i++) {
        y_dense [i] = 0.0;
        for (int32_t j = 0; j < ncols; j++)
            y_dense [i] += dense [i * ncols + j] * x [j];
        b [i] = i;
    }
    csr_spmv (B, x, y);
    double error = 0.0;
    for (int32_t i = 0; i < nrows; i++)
        error = fmax (error, fabs (y [i] - y_dense [i]));
    is_double (error, 0.0, 1e-12, "SpMV matches the dense product");
    csr_residual (B, b, x, r);
    error = 0.0;
    for (int32_t i = 0; i < nrows; i++)
        error = fmax (error, fabs (r [i] - (b [i] - y_dense [i])));
    is_double (error, 0.0, 1e-12, "residual is b - A x");
    double squared = 0.0;
    for (int32_t i = 0; i < nrows; i++)
        squared += (b [i] - y_dense [i]) * (b [i] - y_dense [i]);
    is_double (csr_residual_squared (B, b, x), squared, 1e-12 * squared,
               "||b - A x||^2 in one pass matches the residual's");
    csr_residual (B, b, x, b);
    ok (memcmp (b, r, sizeof (r)) == 0, "residual may overwrite b in place");

    csr_t *copy = csr_dup (B);
    ok (copy->nnz == B->nnz && s_equals_dense (copy, dense, 0),
        "dup copies every entry");
    csr_destroy (&copy);
    csr_destroy (&A);
    csr_destroy (&B);
    free (dense);
}

static void
s_test_structure (void)
{
    const int32_t nrows = 19, ncols = 31;
    double *dense = malloc (nrows * ncols * sizeof (double));
    csr_t *A = s_random_matrix (nrows, ncols, 150, 3, dense);

    csr_t *block = csr_row_block (A, 5, 12);
    bool same = block->nrows == 7 && block->ncols == ncols && csr_is_valid (block);
    for (int32_t i = 0; i < 7 && same; i++)
        for (int32_t j = 0; j < ncols; j++)
            same = same && csr_value (block, i, j) == dense [(i + 5) * ncols + j];
    ok (same, "row block [5, 12) holds rows 5..11 with global columns");
    csr_destroy (&block);
    block = csr_row_block (A, 4, 4);
    ok (block->nrows == 0 && block->nnz == 0, "empty row block is empty");
    csr_destroy (&block);

    csr_t *T = csr_transpose (A);
    same = T->nrows == ncols && T->ncols == nrows && csr_is_valid (T);
    for (int32_t i = 0; i < nrows && same; i++)
        for (int32_t j = 0; j < ncols; j++)
            same = same && csr_value (T, j, i) == dense [i * ncols + j];
    ok (same, "transpose swaps every entry and keeps rows sorted");
    csr_t *TT = csr_transpose (T);
    ok (TT->nnz == A->nnz && s_equals_dense (TT, dense, 0),
        "transposing twice gives the matrix back");
    csr_destroy (&TT);
    csr_destroy (&T);
    csr_destroy (&A);
    free (dense);
}

static void
s_test_symmetric (void)
{
    //  Lower triangle of a 4x4 symmetric matrix
    csr_builder_t *builder = csr_builder_new (4, 4, 0);
    csr_builder_add (builder, 0, 0, 4.0);
    csr_builder_add (builder, 1, 0, -1.0);
    csr_builder_add (builder, 1, 1, 4.0);
    csr_builder_add (builder, 2, 2, 4.0);
    csr_builder_add (builder, 3, 1, -2.0);
    csr_builder_add (builder, 3, 3, 5.0);
    csr_t *L = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    ok (!csr_is_symmetric (L, 0), "a strict triangle is not symmetric");
    csr_t *S = csr_symmetric_expand (L);
    is_int (S->nnz, 8, "expansion mirrors the 2 off-diagonal entries");
    is_double (csr_value (S, 0, 1), -1.0, 0, "(0, 1) mirrors (1, 0)");
    is_double (csr_value (S, 1, 3), -2.0, 0, "(1, 3) mirrors (3, 1)");
    is_double (csr_value (S, 3, 3), 5.0, 0, "diagonal is kept once");
    ok (csr_is_valid (S) && csr_is_symmetric (S, 0),
        "expanded matrix is valid and symmetric");
    csr_t *rectangle = csr_new (2, 3, 0);
    ok (!csr_is_symmetric (rectangle, 0), "a rectangle is not symmetric");
    csr_destroy (&rectangle);
    S->values [1] += 1e-3;
    ok (!csr_is_symmetric (S, 1e-6), "a perturbed entry breaks symmetry");
    ok (csr_is_symmetric (S, 1e-2), "within the tolerance it is symmetric");
    csr_destroy (&S);
    csr_destroy (&L);
}

static void
s_test_invalid (void)
{
    csr_t *A = csr_new (2, 2, 2);
    A->row_ptr [1] = 2;
    A->row_ptr [2] = 2;
    A->col_idx [0] = 1;
    A->col_idx [1] = 0;
    A->values [0] = A->values [1] = 1.0;
    ok (!csr_is_valid (A), "unsorted columns are invalid");
    A->col_idx [1] = 2;
    ok (!csr_is_valid (A), "column out of range is invalid");
    A->col_idx [0] = 0;
    A->col_idx [1] = 1;
    ok (csr_is_valid (A), "fixed matrix is valid");
    int32_t row, col;
    csr_first_empty (A, &row, &col);
    ok (row == 1 && col == -1, "[1 1; 0 0]: row 1 is empty, no column is");
    csr_destroy (&A);

    A = csr_new (2, 2, 2);      //  [0 1; 1 0]
    A->row_ptr [1] = 1;
    A->row_ptr [2] = 2;
    A->col_idx [0] = 1;
    A->col_idx [1] = 0;
    A->values [0] = A->values [1] = 1.0;
    csr_first_empty (A, &row, &col);
    ok (row == -1 && col == -1, "[0 1; 1 0] has no empty row or column");
    A->values [0] = 0;
    csr_first_empty (A, &row, &col);
    ok (row == 0 && col == 1, "an explicit zero counts as no entry: row 0 "
        "and column 1 are empty");
    csr_destroy (&A);
}

int
main (void)
{
    openblas_set_num_threads (1);
    tap_plan (41);
    s_test_builder ();
    s_test_random_build ();
    s_test_structure ();
    s_test_symmetric ();
    s_test_invalid ();
    return tap_done ();
}
