/*  =========================================================================
    csr - compressed sparse row matrices

    A csr_t is a transparent descriptor, in the BLAS spirit: kernels read its
    arrays directly and take caller-owned output buffers.  Row and column
    indices are int32_t (n up to 2^31 - 1 rows, far above the ~10 million we
    target) and row offsets are int64_t (so nnz may exceed 2^31).  Keeping
    column indices at 32 bits matters: SpMV is memory bound and moves
    8 + 4 bytes per nonzero instead of 8 + 8, about 25% less traffic, and a
    100M-nonzero matrix takes 1.2 GB instead of 1.6 GB.

    Columns within a row are sorted ascending and unique in every matrix
    this class builds.  A row block of a global matrix keeps global column
    indices (ncols = n) and its row 0 is the global row row_begin, which the
    caller remembers.
    =========================================================================
*/
#ifndef CSR_H_INCLUDED
#define CSR_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  A sparse matrix in compressed sparse row form (all arrays owned)
typedef struct {
    int32_t nrows;              //  Number of rows
    int32_t ncols;              //  Number of columns
    int64_t nnz;                //  Stored entries, row_ptr[nrows]
    int64_t *row_ptr;           //  nrows + 1 offsets into col_idx, values
    int32_t *col_idx;           //  Column of each entry, sorted per row
    double *values;             //  Value of each entry
} csr_t;

//  Accumulates (row, col, value) triplets in any order, then builds a CSR
//  matrix with sorted columns and duplicates summed.
typedef struct _csr_builder_t csr_builder_t;

//  Create an nrows x ncols matrix with room for nnz entries; row_ptr is
//  zeroed, col_idx and values are left for the caller to fill.
csr_t *
    csr_new (int32_t nrows, int32_t ncols, int64_t nnz);

//  Destroy a matrix; nullifies the reference. Safe on NULL.
void
    csr_destroy (csr_t **self_p);

//  Return a deep copy of the matrix.
csr_t *
    csr_dup (const csr_t *self);

//  Create a builder for an nrows x ncols matrix.  capacity_hint is only a
//  first allocation; the builder grows as entries arrive.
csr_builder_t *
    csr_builder_new (int32_t nrows, int32_t ncols, int64_t capacity_hint);

//  Destroy a builder; nullifies the reference. Safe on NULL.
void
    csr_builder_destroy (csr_builder_t **self_p);

//  Add value at (row, col), summed with any earlier entry there.  Returns 0,
//  or -1 if row or col is out of range (nothing is added).
int
    csr_builder_add (csr_builder_t *self, int32_t row, int32_t col,
                     double value);

//  Number of triplets added so far (duplicates counted separately).
int64_t
    csr_builder_count (const csr_builder_t *self);

//  Build the matrix from the triplets added so far: columns sorted, equal
//  (row, col) pairs summed (an explicit zero stays stored).  The builder is
//  left unchanged.  The caller owns the result.
csr_t *
    csr_builder_build (const csr_builder_t *self);

//  y = A x.  x has ncols entries, y has nrows; they must not overlap.
void
    csr_spmv (const csr_t *A, const double *x, double *y);

//  r = b - A x.  b and r have nrows entries; r may alias b, not x.
void
    csr_residual (const csr_t *A, const double *b, const double *x,
                  double *r);

//  ||b - A x||^2, without storing the residual.  b has nrows entries.
double
    csr_residual_squared (const csr_t *A, const double *b, const double *x);

//  Return rows [row_begin, row_end) of A as a new matrix with the same
//  columns.  Requires 0 <= row_begin <= row_end <= nrows.
csr_t *
    csr_row_block (const csr_t *A, int32_t row_begin, int32_t row_end);

//  Return the transpose of A as a new matrix.
csr_t *
    csr_transpose (const csr_t *A);

//  Return the full matrix of a symmetric matrix stored by one triangle:
//  every off-diagonal (i, j) also appears as (j, i).  A must be square.
//  Entries present in both triangles are summed, so pass one triangle.
csr_t *
    csr_symmetric_expand (const csr_t *A);

//  True if A is square and |a_ij - a_ji| <= tolerance * max(|a_ij|, |a_ji|)
//  for every entry, with a missing entry counting as zero.
bool
    csr_is_symmetric (const csr_t *A, double tolerance);

//  Value at (row, col), or 0 if not stored (binary search in the row).
double
    csr_value (const csr_t *A, int32_t row, int32_t col);

//  The first row, and the first column, holding no nonzero value (an
//  explicit zero counts as none), or -1 for each if there is none.  Either
//  makes a square matrix singular.
void
    csr_first_empty (const csr_t *A, int32_t *row, int32_t *col);

//  True if every row is sorted, unique, in range and row_ptr is monotone.
bool
    csr_is_valid (const csr_t *A);

#ifdef __cplusplus
}
#endif

#endif
