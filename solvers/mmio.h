/*  =========================================================================
    mmio - Matrix Market files: sparse matrices and dense vectors

    Reads coordinate matrices (field real, integer or pattern; symmetry
    general or symmetric, the latter expanded to the full matrix) and array
    vectors (one column, real or integer), and writes coordinate real
    general matrices and array real general vectors with 17 significant
    digits, so that a write-read round trip is exact.

    Input is untrusted: every malformed or inconsistent file fails with a
    reason "FILE:LINE: reason" in the caller's buffer, never an assert, and
    frees everything it allocated.  A matrix is read in two streaming
    passes (count, then fill the CSR arrays), so its peak memory is the
    CSR matrix plus a 1 MiB buffer; the arrays are sized from the entries
    counted in the file, never from its size line, whose counts are first
    checked against the file's size.  Files must be regular files (the
    reader seeks back).  Blank lines are skipped anywhere, lines starting
    with '%' are comments, duplicate coordinate entries are summed.  At an
    early end of file, LINE is the line after the last one, where the
    missing entry was expected.

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
        size line announces N entries but the B bytes after it hold at
            most K (an entry takes at least 6 bytes)
        M rows but N entries fill at most K: a linear system needs an
            entry in every row                          (mmio_read_system)
        row I has no entries: a linear system needs one in every row
        line is longer than 1048576 bytes               (comments may be)
        file changed while it was being read
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
    and "FILE: cannot open: ...", "FILE: not a regular file" or
    "FILE:LINE: read error: ..." for I/O.
    =========================================================================
*/
#ifndef MMIO_H_INCLUDED
#define MMIO_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  A Matrix Market file written row block by row block
typedef struct _mmio_writer_t mmio_writer_t;

//  Read a coordinate matrix.  Returns 0 and a new matrix in *A_p (caller
//  owns it), or -1 with "FILE:LINE: reason" in error; *A_p untouched.
//  Empty rows are allowed, so the row offsets (8 bytes per announced row)
//  are the one allocation a size line decides; use mmio_read_system for
//  untrusted linear systems, which refuses rows the entries cannot fill.
int
    mmio_read_matrix (const char *path, csr_t **A_p, char *error,
                      size_t error_size);

//  Read an array vector (M x 1).  Returns 0, a new malloc'd array in *x_p
//  (caller frees) and its length in *n_p, or -1 with the reason.
int
    mmio_read_vector (const char *path, double **x_p, int32_t *n_p,
                      char *error, size_t error_size);

//  Read a linear system: a square matrix with an entry in every row and
//  its right-hand side from rhs_path, or b = A * 1 (known solution of all
//  ones) when rhs_path is NULL.  Returns 0 with *A_p and *b_p (caller owns
//  both), or -1 with the reason; nothing is returned on failure.
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

//  Create path and write the banner and size line of a "coordinate real
//  general" (or "symmetric") matrix with the given shape and entry count.
//  Returns the writer, or NULL with "FILE: reason" in error.
mmio_writer_t *
    mmio_writer_new (const char *path, int32_t rows, int32_t cols,
                     int64_t entries, bool symmetric, char *error,
                     size_t error_size);

//  Append the rows [row_begin, row_begin + block->nrows) of the matrix,
//  held in block with global columns; blocks come in row order.  A
//  symmetric writer skips the entries above the diagonal.
void
    mmio_writer_add (mmio_writer_t *self, const csr_t *block,
                     int32_t row_begin);

//  Finish the file and destroy the writer; nullifies the reference.
//  Returns 0, or -1 with "FILE: reason" when a write failed or the entries
//  written differ from the count announced.
int
    mmio_writer_close (mmio_writer_t **self_p, char *error,
                       size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
