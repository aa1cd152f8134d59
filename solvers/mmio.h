/*  =========================================================================
    mmio - Matrix Market files: sparse matrices and dense vectors

    Reads coordinate matrices (field real, integer or pattern; symmetry
    general or symmetric, the latter expanded to the full matrix) and array
    vectors (one column, real or integer), and writes coordinate real
    general matrices and array real general vectors with 17 significant
    digits, so that a write-read round trip is exact.

    Input is untrusted: every malformed or inconsistent file fails with a
    reason "FILE:LINE: reason" in the caller's buffer, never an assert, and
    frees everything it allocated.  Memory grows with the entries actually
    read, never with a count the file announces.  Blank lines are skipped
    anywhere, lines starting with '%' are comments, duplicate coordinate
    entries are summed.  At an early end of file, LINE is the line after
    the last one, where the missing entry was expected.

    Reasons (after "FILE:LINE: "):
        empty file, expected a %%MatrixMarket banner
        bad banner: expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'
        unsupported object 'X' (expected matrix)
        unsupported format 'X' for a matrix (expected coordinate)
        unsupported format 'X' for a vector (expected array)
        unsupported field 'X' (expected real, integer or pattern)
        unsupported symmetry 'X' (expected general or symmetric)
        missing size line
        bad size line: expected 'ROWS COLUMNS ENTRIES' / 'ROWS COLUMNS'
        bad size line: ...  (non-numeric, non-positive, too large)
        symmetric matrix must be square, got M x N
        N entries cannot fit in an M x N matrix
        array has N columns, a vector needs 1
        bad entry: expected 'ROW COLUMN VALUE' (or 'ROW COLUMN' for pattern)
        bad row index 'X' / bad column index 'X'
        row index I out of range [1, M] / column index J out of range [1, N]
        entry (I, J) above the diagonal in a symmetric file
        bad value 'X' / bad integer value 'X'
        value 'X' is not finite
        too many entries: the size line announced N
        unexpected end of file: K of N entries read
        line contains a NUL byte
        matrix is M x N, a linear system needs a square matrix
        right-hand side has M entries but the matrix has N rows
    and "FILE: cannot open: ..." or "FILE:LINE: read error: ..." for I/O.
    =========================================================================
*/
#ifndef MMIO_H_INCLUDED
#define MMIO_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Read a coordinate matrix.  Returns 0 and a new matrix in *A_p (caller
//  owns it), or -1 with "FILE:LINE: reason" in error; *A_p untouched.
int
    mmio_read_matrix (const char *path, csr_t **A_p, char *error,
                      size_t error_size);

//  Read an array vector (M x 1).  Returns 0, a new malloc'd array in *x_p
//  (caller frees) and its length in *n_p, or -1 with the reason.
int
    mmio_read_vector (const char *path, double **x_p, int32_t *n_p,
                      char *error, size_t error_size);

//  Read a linear system: a square matrix and its right-hand side from
//  rhs_path, or b = A * 1 (known solution of all ones) when rhs_path is
//  NULL.  Returns 0 with *A_p and *b_p (caller owns both), or -1 with the
//  reason; nothing is returned on failure.
int
    mmio_read_system (const char *matrix_path, const char *rhs_path,
                      csr_t **A_p, double **b_p, char *error,
                      size_t error_size);

//  Write A as "coordinate real general".  Returns 0, or -1 with
//  "FILE: reason" in error.
int
    mmio_write_matrix (const char *path, const csr_t *A, char *error,
                       size_t error_size);

//  Write x[n] as an "array real general" n x 1 matrix.  Returns 0, or -1
//  with "FILE: reason" in error.
int
    mmio_write_vector (const char *path, const double *x, int32_t n,
                       char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
