/*  =========================================================================
    banded_lu - direct solver for banded blocks through LAPACK (OpenBLAS)

    Debian's OpenBLAS ships LAPACK but no lapacke.h in its include
    directory, so we declare the two Fortran routines we call.  Fortran
    passes every argument by reference and appends the length of each
    CHARACTER argument as a hidden size_t (gfortran ABI).
    =========================================================================
*/
#include "solvers.h"

//  LAPACK: LU factorisation of a general band matrix, partial pivoting
void dgbtrf_ (const int *m, const int *n, const int *kl, const int *ku,
              double *ab, const int *ldab, int *ipiv, int *info);
//  LAPACK: solve with the factors from dgbtrf
void dgbtrs_ (const char *trans, const int *n, const int *kl, const int *ku,
              const int *nrhs, const double *ab, const int *ldab,
              const int *ipiv, double *b, const int *ldb, int *info,
              size_t trans_length);

struct _banded_lu_t {
    int n;                      //  Order of the matrix
    int kl;                     //  Lower bandwidth
    int ku;                     //  Upper bandwidth
    int ldab;                   //  Leading dimension, 2 kl + ku + 1
    double *ab;                 //  Band storage, column major, ldab x n
    int *ipiv;                  //  Pivot rows from dgbtrf
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
s_pack (const csr_t *A, banded_lu_t *self)
{
    for (int32_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++) {
            int64_t j = A->col_idx [k];
            self->ab [self->kl + self->ku + i - j + j * (int64_t) self->ldab]
                = A->values [k];
        }
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
    self->ldab = 2 * kl + ku + 1;
    self->ab = solvers_calloc (bytes / sizeof (double), sizeof (double));
    self->ipiv = solvers_malloc ((size_t) self->n * sizeof (int));
    s_pack (A, self);
    int info = 0;
    dgbtrf_ (&self->n, &self->n, &self->kl, &self->ku, self->ab, &self->ldab,
             self->ipiv, &info);
    assert (info >= 0);         //  Negative: we passed a bad argument
    if (info > 0) {
        banded_lu_destroy (&self);
        return BANDED_LU_SINGULAR;
    }
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
        free (self->ab);
        free (self->ipiv);
        free (self);
        *self_p = NULL;
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
    const int one = 1;
    int info = 0;
    dgbtrs_ ("N", &self->n, &self->kl, &self->ku, &one, self->ab, &self->ldab,
             self->ipiv, x, &self->n, &info, 1);
    assert (info == 0);
}

//  --------------------------------------------------------------------------
//  Order of the factored matrix.

int32_t
banded_lu_order (const banded_lu_t *self)
{
    assert (self);
    return self->n;
}
