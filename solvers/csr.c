/*  =========================================================================
    csr - compressed sparse row matrices

    Builders, kernels (SpMV, residual) and structural operations (row
    blocks, transpose, symmetric expansion).  Kernels are plain loops over
    the arrays; they allocate nothing.
    =========================================================================
*/
#include "solvers.h"

//  One (column, value) pair while a row is being sorted
typedef struct {
    int32_t col;                //  Column index
    double value;               //  Value (summed with equal columns later)
} csr_entry_t;

struct _csr_builder_t {
    int32_t nrows;              //  Rows of the matrix being built
    int32_t ncols;              //  Columns of the matrix being built
    int64_t count;              //  Triplets added
    int64_t capacity;           //  Room in the three arrays below
    int32_t *rows;              //  Row of each triplet
    int32_t *cols;              //  Column of each triplet
    double *values;             //  Value of each triplet
};

//  Rows at most this long are sorted by insertion, longer ones by qsort
#define CSR_INSERTION_SORT_MAX  32

//  --------------------------------------------------------------------------
//  Create an nrows x ncols matrix with room for nnz entries.

csr_t *
csr_new (int32_t nrows, int32_t ncols, int64_t nnz)
{
    assert (nrows >= 0);
    assert (ncols >= 0);
    assert (nnz >= 0);
    csr_t *self = solvers_calloc (1, sizeof (csr_t));
    self->nrows = nrows;
    self->ncols = ncols;
    self->nnz = nnz;
    self->row_ptr = solvers_calloc ((size_t) nrows + 1, sizeof (int64_t));
    self->col_idx = solvers_malloc ((size_t) nnz * sizeof (int32_t));
    self->values = solvers_malloc ((size_t) nnz * sizeof (double));
    return self;
}

//  --------------------------------------------------------------------------
//  Destroy a matrix; nullifies the reference.

void
csr_destroy (csr_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        csr_t *self = *self_p;
        free (self->row_ptr);
        free (self->col_idx);
        free (self->values);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Return a deep copy of the matrix.

csr_t *
csr_dup (const csr_t *self)
{
    assert (self);
    csr_t *copy = csr_new (self->nrows, self->ncols, self->nnz);
    memcpy (copy->row_ptr, self->row_ptr,
            ((size_t) self->nrows + 1) * sizeof (int64_t));
    memcpy (copy->col_idx, self->col_idx, (size_t) self->nnz * sizeof (int32_t));
    memcpy (copy->values, self->values, (size_t) self->nnz * sizeof (double));
    return copy;
}

//  --------------------------------------------------------------------------
//  Create a builder for an nrows x ncols matrix.

csr_builder_t *
csr_builder_new (int32_t nrows, int32_t ncols, int64_t capacity_hint)
{
    assert (nrows >= 0);
    assert (ncols >= 0);
    csr_builder_t *self = solvers_calloc (1, sizeof (csr_builder_t));
    self->nrows = nrows;
    self->ncols = ncols;
    self->capacity = capacity_hint > 16 ? capacity_hint : 16;
    self->rows = solvers_malloc ((size_t) self->capacity * sizeof (int32_t));
    self->cols = solvers_malloc ((size_t) self->capacity * sizeof (int32_t));
    self->values = solvers_malloc ((size_t) self->capacity * sizeof (double));
    return self;
}

//  --------------------------------------------------------------------------
//  Destroy a builder; nullifies the reference.

void
csr_builder_destroy (csr_builder_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        csr_builder_t *self = *self_p;
        free (self->rows);
        free (self->cols);
        free (self->values);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Add value at (row, col).  Returns 0, or -1 if out of range.

int
csr_builder_add (csr_builder_t *self, int32_t row, int32_t col, double value)
{
    assert (self);
    if (row < 0 || row >= self->nrows || col < 0 || col >= self->ncols)
        return -1;
    if (self->count == self->capacity) {
        //  Doubling keeps the amortised cost constant; memory follows the
        //  entries actually added, never a size announced by a file.
        self->capacity *= 2;
        size_t capacity = (size_t) self->capacity;
        self->rows = solvers_realloc (self->rows, capacity * sizeof (int32_t));
        self->cols = solvers_realloc (self->cols, capacity * sizeof (int32_t));
        self->values = solvers_realloc (self->values,
                                        capacity * sizeof (double));
    }
    self->rows [self->count] = row;
    self->cols [self->count] = col;
    self->values [self->count] = value;
    self->count++;
    return 0;
}

//  --------------------------------------------------------------------------
//  Number of triplets added so far.

int64_t
csr_builder_count (const csr_builder_t *self)
{
    assert (self);
    return self->count;
}

static int
s_compare_entries (const void *left, const void *right)
{
    int32_t a = ((const csr_entry_t *) left)->col;
    int32_t b = ((const csr_entry_t *) right)->col;
    return (a > b) - (a < b);
}

//  Sort one row's entries by column.  Rows are short in most matrices, so
//  insertion sort (stable, no call overhead) handles them.
static void
s_sort_row (csr_entry_t *entries, int64_t count)
{
    if (count > CSR_INSERTION_SORT_MAX) {
        qsort (entries, (size_t) count, sizeof (csr_entry_t),
               s_compare_entries);
        return;
    }
    for (int64_t k = 1; k < count; k++) {
        csr_entry_t entry = entries [k];
        int64_t slot = k;
        while (slot > 0 && entries [slot - 1].col > entry.col) {
            entries [slot] = entries [slot - 1];
            slot--;
        }
        entries [slot] = entry;
    }
}

//  Copy one sorted row into the matrix, summing equal columns; returns the
//  number of entries written at position at.
static int64_t
s_emit_row (csr_t *matrix, int64_t at, const csr_entry_t *entries,
            int64_t count)
{
    int64_t written = 0;
    for (int64_t k = 0; k < count; k++) {
        if (written > 0 && matrix->col_idx [at + written - 1] == entries [k].col)
            matrix->values [at + written - 1] += entries [k].value;
        else {
            matrix->col_idx [at + written] = entries [k].col;
            matrix->values [at + written] = entries [k].value;
            written++;
        }
    }
    return written;
}

//  --------------------------------------------------------------------------
//  Build the matrix from the triplets: sorted columns, duplicates summed.

csr_t *
csr_builder_build (const csr_builder_t *self)
{
    assert (self);
    //  Counting sort by row (stable), then sort each row by column.
    int64_t *start = solvers_calloc ((size_t) self->nrows + 1, sizeof (int64_t));
    for (int64_t k = 0; k < self->count; k++)
        start [self->rows [k] + 1]++;
    for (int32_t row = 0; row < self->nrows; row++)
        start [row + 1] += start [row];
    int64_t *next = solvers_malloc (((size_t) self->nrows + 1) * sizeof (int64_t));
    memcpy (next, start, ((size_t) self->nrows + 1) * sizeof (int64_t));
    csr_entry_t *entries = solvers_malloc ((size_t) self->count
                                           * sizeof (csr_entry_t));
    for (int64_t k = 0; k < self->count; k++) {
        csr_entry_t *entry = &entries [next [self->rows [k]]++];
        entry->col = self->cols [k];
        entry->value = self->values [k];
    }
    free (next);

    csr_t *matrix = csr_new (self->nrows, self->ncols, self->count);
    int64_t at = 0;
    for (int32_t row = 0; row < self->nrows; row++) {
        int64_t count = start [row + 1] - start [row];
        s_sort_row (entries + start [row], count);
        at += s_emit_row (matrix, at, entries + start [row], count);
        matrix->row_ptr [row + 1] = at;
    }
    matrix->nnz = at;
    free (entries);
    free (start);
    return matrix;
}

//  --------------------------------------------------------------------------
//  y = A x.

void
csr_spmv (const csr_t *A, const double *x, double *y)
{
    assert (A);
    for (int32_t i = 0; i < A->nrows; i++) {
        double sum = 0.0;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            sum += A->values [k] * x [A->col_idx [k]];
        y [i] = sum;
    }
}

//  --------------------------------------------------------------------------
//  r = b - A x.

void
csr_residual (const csr_t *A, const double *b, const double *x, double *r)
{
    assert (A);
    for (int32_t i = 0; i < A->nrows; i++) {
        double sum = b [i];
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            sum -= A->values [k] * x [A->col_idx [k]];
        r [i] = sum;
    }
}

//  --------------------------------------------------------------------------
//  ||b - A x||^2 in one pass: a spawner verifies a job's answer with it,
//  and a vector of the job's size, allocated for each check, cost more
//  in page faults than the product.

double
csr_residual_squared (const csr_t *A, const double *b, const double *x)
{
    assert (A);
    double squared = 0.0;
    for (int32_t i = 0; i < A->nrows; i++) {
        double sum = b [i];
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            sum -= A->values [k] * x [A->col_idx [k]];
        squared += sum * sum;
    }
    return squared;
}

//  --------------------------------------------------------------------------
//  Return rows [row_begin, row_end) of A as a new matrix.

csr_t *
csr_row_block (const csr_t *A, int32_t row_begin, int32_t row_end)
{
    assert (A);
    assert (0 <= row_begin && row_begin <= row_end && row_end <= A->nrows);
    int64_t first = A->row_ptr [row_begin];
    int64_t nnz = A->row_ptr [row_end] - first;
    csr_t *block = csr_new (row_end - row_begin, A->ncols, nnz);
    for (int32_t i = row_begin; i <= row_end; i++)
        block->row_ptr [i - row_begin] = A->row_ptr [i] - first;
    memcpy (block->col_idx, A->col_idx + first, (size_t) nnz * sizeof (int32_t));
    memcpy (block->values, A->values + first, (size_t) nnz * sizeof (double));
    return block;
}

//  --------------------------------------------------------------------------
//  Return the transpose of A.

csr_t *
csr_transpose (const csr_t *A)
{
    assert (A);
    csr_t *T = csr_new (A->ncols, A->nrows, A->nnz);
    for (int64_t k = 0; k < A->nnz; k++)
        T->row_ptr [A->col_idx [k] + 1]++;
    for (int32_t j = 0; j < A->ncols; j++)
        T->row_ptr [j + 1] += T->row_ptr [j];
    int64_t *next = solvers_malloc (((size_t) A->ncols + 1) * sizeof (int64_t));
    memcpy (next, T->row_ptr, (size_t) A->ncols * sizeof (int64_t));
    //  Scanning rows in order leaves each row of T sorted.
    for (int32_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++) {
            int64_t slot = next [A->col_idx [k]]++;
            T->col_idx [slot] = i;
            T->values [slot] = A->values [k];
        }
    free (next);
    return T;
}

//  Merge row i of A and of T into out at position at, summing equal
//  columns except the diagonal, which both hold once; returns the count.
static int64_t
s_merge_rows (const csr_t *A, const csr_t *T, int32_t i, csr_t *out,
              int64_t at)
{
    int64_t a = A->row_ptr [i], a_end = A->row_ptr [i + 1];
    int64_t t = T->row_ptr [i], t_end = T->row_ptr [i + 1];
    int64_t written = 0;
    while (a < a_end || t < t_end) {
        int32_t col_a = a < a_end ? A->col_idx [a] : INT32_MAX;
        int32_t col_t = t < t_end ? T->col_idx [t] : INT32_MAX;
        int32_t col = col_a < col_t ? col_a : col_t;
        double value = 0.0;
        if (col_a == col)
            value += A->values [a++];
        if (col_t == col) {
            if (col != i || col_a != col)
                value += T->values [t];
            t++;
        }
        out->col_idx [at + written] = col;
        out->values [at + written] = value;
        written++;
    }
    return written;
}

//  --------------------------------------------------------------------------
//  Return the full matrix of a symmetric matrix stored by one triangle.

csr_t *
csr_symmetric_expand (const csr_t *A)
{
    assert (A);
    assert (A->nrows == A->ncols);
    csr_t *T = csr_transpose (A);
    csr_t *full = csr_new (A->nrows, A->ncols, A->nnz + T->nnz);
    int64_t at = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        at += s_merge_rows (A, T, i, full, at);
        full->row_ptr [i + 1] = at;
    }
    full->nnz = at;
    csr_destroy (&T);
    return full;
}

//  --------------------------------------------------------------------------
//  True if A equals its transpose within a relative tolerance.

//  True if a and b are equal within tolerance, relatively
static bool
s_close (double a, double b, double tolerance)
{
    return fabs (a - b) <= tolerance * fmax (fabs (a), fabs (b));
}

//  Row i of A against row i of its transpose T, merged by column (both
//  are sorted): an entry missing on one side counts as zero.
static bool
s_row_matches (const csr_t *A, const csr_t *T, int32_t i, double tolerance)
{
    int64_t a = A->row_ptr [i], a_end = A->row_ptr [i + 1];
    int64_t t = T->row_ptr [i], t_end = T->row_ptr [i + 1];
    while (a < a_end || t < t_end) {
        int32_t a_col = a < a_end ? A->col_idx [a] : INT32_MAX;
        int32_t t_col = t < t_end ? T->col_idx [t] : INT32_MAX;
        double a_value = a_col <= t_col ? A->values [a++] : 0.0;
        double t_value = t_col <= a_col ? T->values [t++] : 0.0;
        if (!s_close (a_value, t_value, tolerance))
            return false;
    }
    return true;
}

bool
csr_is_symmetric (const csr_t *A, double tolerance)
{
    assert (A);
    if (A->nrows != A->ncols)
        return false;
    //  One pass over both, row by row: a binary search per entry took a
    //  fifth of a task's set-up (25,000 rows of the NAS-CG-like matrix)
    csr_t *T = csr_transpose (A);
    bool symmetric = true;
    for (int32_t i = 0; i < A->nrows && symmetric; i++)
        symmetric = s_row_matches (A, T, i, tolerance);
    csr_destroy (&T);
    return symmetric;
}


//  --------------------------------------------------------------------------
//  Value at (row, col), or 0 if not stored.

double
csr_value (const csr_t *A, int32_t row, int32_t col)
{
    assert (A);
    assert (row >= 0 && row < A->nrows);
    int64_t low = A->row_ptr [row];
    int64_t high = A->row_ptr [row + 1];
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (A->col_idx [middle] < col)
            low = middle + 1;
        else
            high = middle;
    }
    if (low < A->row_ptr [row + 1] && A->col_idx [low] == col)
        return A->values [low];
    return 0.0;
}

//  --------------------------------------------------------------------------
//  True if the structure is consistent.

void
csr_first_empty (const csr_t *A, int32_t *row, int32_t *col)
{
    assert (A && row && col);
    bool *column_used = (bool *) calloc ((size_t) A->ncols + 1, sizeof (bool));
    assert (column_used);
    *row = -1;
    for (int32_t i = 0; i < A->nrows; i++) {
        bool used = false;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            if (A->values [k] != 0) {
                used = true;
                column_used [A->col_idx [k]] = true;
            }
        if (!used && *row < 0)
            *row = i;
    }
    *col = -1;
    for (int32_t j = 0; j < A->ncols && *col < 0; j++)
        if (!column_used [j])
            *col = j;
    free (column_used);
}

bool
csr_is_valid (const csr_t *A)
{
    assert (A);
    if (A->row_ptr [0] != 0 || A->row_ptr [A->nrows] != A->nnz)
        return false;
    for (int32_t i = 0; i < A->nrows; i++) {
        if (A->row_ptr [i + 1] < A->row_ptr [i])
            return false;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++) {
            int32_t col = A->col_idx [k];
            if (col < 0 || col >= A->ncols)
                return false;
            if (k > A->row_ptr [i] && A->col_idx [k - 1] >= col)
                return false;
        }
    }
    return true;
}
