/*  =========================================================================
    banded_lu - direct solver for banded blocks through LAPACK (OpenBLAS)

    Debian's OpenBLAS ships LAPACK but no lapacke.h in its include
    directory, so we declare the Fortran routine we call.  Fortran passes
    every argument by reference.

    The factors from dgbtrf are repacked once for the solves.  A solve is
    memory bound: it reads every factor once.  In LAPACK band storage each
    column holds its kl multipliers of L below its kl + ku + 1 entries of
    U, so dgbtrs reads both sweeps as short runs with gaps between them, the
    back sweep in descending column order.  That ran at a third to a half of
    the machine's streaming bandwidth (bench/bench_solvers bandwidth).
    Repacked, each sweep reads one array from start to end.  The solve does
    dgbtrs's operations in dgbtrs's order: the row interchanges and
    multipliers of L column by column (dgbtrs's dger), then U column by
    column from the last (dgbtrs's dtbsv).
    =========================================================================
*/
#include "solvers.h"

//  LAPACK: LU factorisation of a general band matrix, partial pivoting
void dgbtrf_ (const int *m, const int *n, const int *kl, const int *ku,
              double *ab, const int *ldab, int *ipiv, int *info);

struct _banded_lu_t {
    int n;                      //  Order of the matrix
    int kl;                     //  Lower bandwidth
    int ku;                     //  Upper bandwidth
    double *lower;              //  Multipliers of L, kl per column, column
                                //  j at j kl (NULL if kl = 0)
    double *upper;              //  U, kl + ku + 1 entries per column, the
                                //  last column first, each from its
                                //  diagonal up: U(i, i), U(i - 1, i), ...
    int *ipiv;                  //  Pivot rows from dgbtrf (1-based)
};

//  --------------------------------------------------------------------------
//  Lower and upper bandwidths of square A.

void
banded_lu_bandwidth (const csr_t *A, int32_t *kl_p, int32_t *ku_p)
{
    assert (A);
    assert (kl_p && ku_p);
    int32_t kl = 0, ku = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int64_t first = A->row_ptr [i], last = A->row_ptr [i + 1] - 1;
        if (first > last)
            continue;
        //  Rows are sorted: the extreme columns are at the ends.
        if (i - A->col_idx [first] > kl)
            kl = i - A->col_idx [first];
        if (A->col_idx [last] - i > ku)
            ku = A->col_idx [last] - i;
    }
    *kl_p = kl;
    *ku_p = ku;
}

//  --------------------------------------------------------------------------
//  Bytes of band storage needed to factor A.

size_t
banded_lu_bytes (const csr_t *A)
{
    int32_t kl, ku;
    banded_lu_bandwidth (A, &kl, &ku);
    return ((size_t) 2 * kl + ku + 1) * (size_t) A->nrows * sizeof (double);
}

//  Copy A into band storage: A(i, j) goes to ab[kl + ku + i - j + j ldab].
static void
s_pack (const csr_t *A, int kl, int ku, double *ab)
{
    int64_t ldab = 2 * (int64_t) kl + ku + 1;
    for (int32_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++) {
            int64_t j = A->col_idx [k];
            ab [kl + ku + i - j + j * ldab] = A->values [k];
        }
}

//  Move the factors out of band storage ab (consumed) into self->lower
//  and self->upper.  The U columns are compacted inside ab, so the peak
//  memory is the band plus L, not twice the band.
static void
s_repack (banded_lu_t *self, double *ab)
{
    size_t n = (size_t) self->n, kl = (size_t) self->kl;
    size_t ldu = kl + (size_t) self->ku + 1;
    size_t ldab = ldu + kl;
    if (kl > 0) {
        self->lower = solvers_malloc (n * kl * sizeof (double));
        for (size_t j = 0; j < n; j++)
            memcpy (self->lower + j * kl, ab + j * ldab + ldu,
                    kl * sizeof (double));
    }
    //  Column j moves down from j ldab to j ldu: never onto a column not
    //  yet moved, since those start at (j + 1) ldab or later.
    for (size_t j = 1; j < n; j++)
        memmove (ab + j * ldu, ab + j * ldab, ldu * sizeof (double));
    //  Reversing the whole array puts the last column first, each column
    //  running from its diagonal (band row kl + ku) up.
    for (size_t low = 0, high = n * ldu - 1; low < high; low++, high--) {
        double swap = ab [low];
        ab [low] = ab [high];
        ab [high] = swap;
    }
    self->upper = solvers_realloc (ab, n * ldu * sizeof (double));
}

//  --------------------------------------------------------------------------
//  Pack and factor square A.

int
banded_lu_factor (const csr_t *A, size_t max_bytes, banded_lu_t **self_p)
{
    assert (A);
    assert (A->nrows == A->ncols && A->nrows > 0);
    assert (self_p);
    size_t bytes = banded_lu_bytes (A);
    if (max_bytes > 0 && bytes > max_bytes)
        return BANDED_LU_TOO_LARGE;
    int32_t kl, ku;
    banded_lu_bandwidth (A, &kl, &ku);
    banded_lu_t *self = solvers_calloc (1, sizeof (banded_lu_t));
    self->n = A->nrows;
    self->kl = kl;
    self->ku = ku;
    self->ipiv = solvers_malloc ((size_t) self->n * sizeof (int));
    double *ab = solvers_calloc (bytes / sizeof (double), sizeof (double));
    s_pack (A, kl, ku, ab);
    int ldab = 2 * kl + ku + 1;
    int info = 0;
    dgbtrf_ (&self->n, &self->n, &self->kl, &self->ku, ab, &ldab, self->ipiv,
             &info);
    assert (info >= 0);         //  Negative: we passed a bad argument
    if (info > 0) {
        free (ab);
        banded_lu_destroy (&self);
        return BANDED_LU_SINGULAR;
    }
    s_repack (self, ab);
    *self_p = self;
    return 0;
}

//  --------------------------------------------------------------------------
//  Destroy the factors; nullifies the reference.

void
banded_lu_destroy (banded_lu_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        banded_lu_t *self = *self_p;
        free (self->lower);
        free (self->upper);
        free (self->ipiv);
        free (self);
        *self_p = NULL;
    }
}

//  y[t] += alpha u[t] for t < count
static void
s_axpy (int count, double alpha, const double *restrict u, double *restrict y)
{
    for (int t = 0; t < count; t++)
        y [t] += alpha * u [t];
}

//  y[-t] += alpha u[t] for t < count: u is read upwards, y downwards
static void
s_axpy_down (int count, double alpha, const double *restrict u,
             double *restrict y)
{
    for (int t = 0; t < count; t++)
        y [-t] += alpha * u [t];
}

//  x = L^-1 P x: row interchanges and multipliers, column by column.
static void
s_solve_lower (const banded_lu_t *self, double *x)
{
    for (int j = 0; j < self->n - 1; j++) {
        int pivot = self->ipiv [j] - 1;
        if (pivot != j) {
            double swap = x [pivot];
            x [pivot] = x [j];
            x [j] = swap;
        }
        int count = self->n - 1 - j < self->kl ? self->n - 1 - j : self->kl;
        s_axpy (count, -x [j], self->lower + (size_t) j * self->kl, x + j + 1);
    }
}

//  x = U^-1 x, column by column from the last.
static void
s_solve_upper (const banded_lu_t *self, double *x)
{
    int band = self->kl + self->ku;
    const double *column = self->upper;
    for (int i = self->n - 1; i >= 0; i--, column += band + 1) {
        x [i] /= column [0];
        int count = i < band ? i : band;
        if (count > 0)
            s_axpy_down (count, -x [i], column + 1, x + i - 1);
    }
}

//  --------------------------------------------------------------------------
//  Solve A x = b with the factors.

void
banded_lu_solve (const banded_lu_t *self, const double *b, double *x)
{
    assert (self);
    if (x != b)
        memcpy (x, b, (size_t) self->n * sizeof (double));
    if (self->kl > 0)
        s_solve_lower (self, x);
    s_solve_upper (self, x);
}

//  --------------------------------------------------------------------------
//  Order of the factored matrix.

int32_t
banded_lu_order (const banded_lu_t *self)
{
    assert (self);
    return self->n;
}
