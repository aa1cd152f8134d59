/*  =========================================================================
    problems - generated sparse linear systems, built by row range

    Random generators never share a stream between rows: row i draws from
    a splitmix64 stream seeded by (seed, i), so a row's entries are the
    same whichever range is being built, and a range can be built without
    generating the rows before it.
    =========================================================================
*/
#include "solvers.h"

//  Golden-ratio increment of splitmix64 (Steele, Lea and Flood 2014)
#define PROBLEMS_GOLDEN_GAMMA   0x9E3779B97F4A7C15ULL

//  A splitmix64 stream: tiny state, passes BigCrush, trivially seeded
typedef struct {
    uint64_t state;             //  Advanced by the golden gamma each draw
} problems_stream_t;

static uint64_t
s_next (problems_stream_t *stream)
{
    uint64_t z = (stream->state += PROBLEMS_GOLDEN_GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

//  The stream of global row `row`: mixing the row into the seed through one
//  splitmix step decorrelates neighbouring rows.
static problems_stream_t
s_row_stream (uint64_t seed, int64_t row)
{
    problems_stream_t stream = { seed ^ ((uint64_t) row * PROBLEMS_GOLDEN_GAMMA) };
    stream.state = s_next (&stream);
    return stream;
}

//  Uniform double in [-1, 1) from the top 53 bits of a draw
static double
s_uniform_signed (problems_stream_t *stream)
{
    return (double) (s_next (stream) >> 11) * 0x1.0p-52 - 1.0;
}

//  Uniform integer in [0, bound), bound > 0 (Lemire's multiply-shift; its
//  bias is below 2^-32 for our bounds, irrelevant for test matrices)
static int64_t
s_uniform_below (problems_stream_t *stream, int64_t bound)
{
    return (int64_t) (((unsigned __int128) s_next (stream) * (uint64_t) bound)
                      >> 64);
}

//  Check 0 <= row_begin <= row_end <= n.
static int
s_check_range (int64_t n, int32_t row_begin, int32_t row_end, char *error,
               size_t error_size)
{
    if (row_begin < 0 || row_begin > row_end || row_end > n) {
        solvers_set_error (error, error_size,
                           "row range [%" PRId32 ", %" PRId32 ") is not "
                           "inside [0, %" PRId64 ")", row_begin, row_end, n);
        return -1;
    }
    return 0;
}

//  Check a grid side gives an order n = N^dimension that fits int32_t.
static int
s_check_grid (int32_t N, int dimension, int64_t *n_p, char *error,
              size_t error_size)
{
    int64_t n = 1;
    for (int d = 0; d < dimension && N >= 1; d++) {
        n *= N;
        if (n > INT32_MAX)
            break;
    }
    if (N < 1 || n > INT32_MAX) {
        solvers_set_error (error, error_size,
                           "grid side %" PRId32 " gives no valid order for a "
                           "%dD grid (need 1 <= N^%d <= %d)",
                           N, dimension, dimension, INT32_MAX);
        return -1;
    }
    *n_p = n;
    return 0;
}

//  Append one stencil row: neighbours at the given offsets (ascending, the
//  diagonal among them as offset 0) that lie inside the grid.
static int64_t
s_stencil_row (csr_t *A, int64_t at, int32_t row, const int64_t *offsets,
               const bool *inside, int points, double diagonal)
{
    int64_t written = 0;
    for (int p = 0; p < points; p++) {
        if (!inside [p])
            continue;
        A->col_idx [at + written] = (int32_t) (row + offsets [p]);
        A->values [at + written] = offsets [p] == 0 ? diagonal : -1.0;
        written++;
    }
    return written;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of the 2D Poisson matrix on an N x N grid.

int
problems_poisson2d (int32_t N, int32_t row_begin, int32_t row_end,
                    csr_t **A_p, char *error, size_t error_size)
{
    assert (A_p);
    int64_t n;
    if (s_check_grid (N, 2, &n, error, error_size)
    ||  s_check_range (n, row_begin, row_end, error, error_size))
        return -1;
    int32_t rows = row_end - row_begin;
    csr_t *A = csr_new (rows, (int32_t) n, 5 * (int64_t) rows);
    const int64_t offsets [5] = { -N, -1, 0, 1, N };
    int64_t at = 0;
    for (int32_t row = row_begin; row < row_end; row++) {
        int32_t x = row % N, y = row / N;
        bool inside [5] = { y > 0, x > 0, true, x < N - 1, y < N - 1 };
        at += s_stencil_row (A, at, row, offsets, inside, 5, 4.0);
        A->row_ptr [row - row_begin + 1] = at;
    }
    A->nnz = at;
    *A_p = A;
    return 0;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of the upwind convection-diffusion matrix: the
//  2D Poisson rows, then the convection on the diagonal and on the west
//  neighbour (column row - 1, present only where x > 0).

int
problems_convection2d (int32_t N, double convection, int32_t row_begin,
                       int32_t row_end, csr_t **A_p, char *error,
                       size_t error_size)
{
    assert (A_p);
    if (!(convection >= 0) || !isfinite (convection)) {
        solvers_set_error (error, error_size, "convection %g is not a "
                           "finite number >= 0", convection);
        return -1;
    }
    if (problems_poisson2d (N, row_begin, row_end, A_p, error, error_size))
        return -1;
    csr_t *A = *A_p;
    for (int32_t i = 0; i < A->nrows; i++) {
        int32_t row = row_begin + i;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            if (A->col_idx [k] == row)
                A->values [k] += convection;
            else
            if (A->col_idx [k] == row - 1)
                A->values [k] -= convection;
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of the 3D Poisson matrix on an N^3 grid.

int
problems_poisson3d (int32_t N, int32_t row_begin, int32_t row_end,
                    csr_t **A_p, char *error, size_t error_size)
{
    assert (A_p);
    int64_t n;
    if (s_check_grid (N, 3, &n, error, error_size)
    ||  s_check_range (n, row_begin, row_end, error, error_size))
        return -1;
    int32_t rows = row_end - row_begin;
    csr_t *A = csr_new (rows, (int32_t) n, 7 * (int64_t) rows);
    int64_t plane = (int64_t) N * N;
    const int64_t offsets [7] = { -plane, -N, -1, 0, 1, N, plane };
    int64_t at = 0;
    for (int32_t row = row_begin; row < row_end; row++) {
        int32_t x = row % N, y = (row / N) % N, z = (int32_t) (row / plane);
        bool inside [7] = { z > 0, y > 0, x > 0, true,
                            x < N - 1, y < N - 1, z < N - 1 };
        at += s_stencil_row (A, at, row, offsets, inside, 7, 6.0);
        A->row_ptr [row - row_begin + 1] = at;
    }
    A->nnz = at;
    *A_p = A;
    return 0;
}

//  Return a copy of the off-diagonal matrix (rows starting at global row
//  row_begin, no diagonal stored) with each diagonal inserted in column
//  order, set to scale * max (sum of |off-diagonal|, floor) + shift.
static csr_t *
s_insert_diagonal (const csr_t *offdiag, int32_t row_begin, double scale,
                   double floor, double shift)
{
    csr_t *A = csr_new (offdiag->nrows, offdiag->ncols,
                        offdiag->nnz + offdiag->nrows);
    int64_t at = 0;
    for (int32_t i = 0; i < offdiag->nrows; i++) {
        int32_t row = row_begin + i;
        double magnitude = 0.0;
        for (int64_t k = offdiag->row_ptr [i]; k < offdiag->row_ptr [i + 1]; k++)
            magnitude += fabs (offdiag->values [k]);
        double diagonal = scale * fmax (magnitude, floor) + shift;
        bool placed = false;
        for (int64_t k = offdiag->row_ptr [i]; k < offdiag->row_ptr [i + 1]; k++) {
            if (!placed && offdiag->col_idx [k] > row) {
                A->col_idx [at] = row;
                A->values [at++] = diagonal;
                placed = true;
            }
            A->col_idx [at] = offdiag->col_idx [k];
            A->values [at++] = offdiag->values [k];
        }
        if (!placed) {
            A->col_idx [at] = row;
            A->values [at++] = diagonal;
        }
        A->row_ptr [i + 1] = at;
    }
    return A;
}

//  Check the NAS-CG-like parameters.
static int
s_check_nascg (const problems_nascg_t *params, char *error, size_t error_size)
{
    if (params->n < 1 || params->bandwidth < 1 || params->lower_per_row < 0
    ||  !(params->diagonal_shift > 0.0) || !isfinite (params->diagonal_shift)) {
        solvers_set_error (error, error_size,
                           "invalid banded SPD parameters: need n >= 1, "
                           "bandwidth >= 1, lower_per_row >= 0 and a finite "
                           "diagonal_shift > 0");
        return -1;
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of a NAS-CG-like banded SPD matrix.

int
problems_nascg (const problems_nascg_t *params, int32_t row_begin,
                int32_t row_end, csr_t **A_p, char *error, size_t error_size)
{
    assert (params);
    assert (A_p);
    if (s_check_nascg (params, error, error_size)
    ||  s_check_range (params->n, row_begin, row_end, error, error_size))
        return -1;
    int32_t rows = row_end - row_begin;
    int64_t last = (int64_t) row_end + params->bandwidth;
    if (last > params->n)
        last = params->n;
    csr_builder_t *builder = csr_builder_new (
        rows, params->n, 2 * (int64_t) rows * params->lower_per_row);
    //  Row r's draws fill (r, r - d) and, by symmetry, (r - d, r): the upper
    //  part of our rows comes from the rows up to bandwidth below them.
    for (int64_t r = row_begin; r < last; r++) {
        problems_stream_t stream = s_row_stream (params->seed, r);
        for (int32_t k = 0; k < params->lower_per_row; k++) {
            int64_t col = r - 1 - s_uniform_below (&stream, params->bandwidth);
            double value = s_uniform_signed (&stream);
            if (col < 0)
                continue;
            if (r < row_end)
                csr_builder_add (builder, (int32_t) (r - row_begin),
                                 (int32_t) col, value);
            if (col >= row_begin)
                csr_builder_add (builder, (int32_t) (col - row_begin),
                                 (int32_t) r, value);
        }
    }
    csr_t *offdiag = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    *A_p = s_insert_diagonal (offdiag, row_begin, 1.0, 0.0,
                              params->diagonal_shift);
    csr_destroy (&offdiag);
    return 0;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of a random nonsymmetric dominant matrix.

int
problems_random_dominant (int32_t n, int32_t offdiag_per_row,
                          double dominance, uint64_t seed, int32_t row_begin,
                          int32_t row_end, csr_t **A_p, char *error,
                          size_t error_size)
{
    assert (A_p);
    if (n < 1 || offdiag_per_row < 0 || !(dominance > 0.0)
    ||  !isfinite (dominance)) {
        solvers_set_error (error, error_size,
                           "invalid random system parameters: need n >= 1, "
                           "offdiag_per_row >= 0 and a finite dominance > 0");
        return -1;
    }
    if (s_check_range (n, row_begin, row_end, error, error_size))
        return -1;
    int32_t rows = row_end - row_begin;
    int32_t draws = n > 1 ? offdiag_per_row : 0;
    csr_builder_t *builder = csr_builder_new (rows, n,
                                              (int64_t) rows * draws);
    for (int32_t row = row_begin; row < row_end; row++) {
        problems_stream_t stream = s_row_stream (seed, row);
        for (int32_t k = 0; k < draws; k++) {
            //  A uniform column among the n - 1 others: never the diagonal.
            int64_t col = (row + 1 + s_uniform_below (&stream, n - 1)) % n;
            csr_builder_add (builder, row - row_begin, (int32_t) col,
                             s_uniform_signed (&stream));
        }
    }
    csr_t *offdiag = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    *A_p = s_insert_diagonal (offdiag, row_begin, dominance, 1.0, 0.0);
    csr_destroy (&offdiag);
    return 0;
}

//  --------------------------------------------------------------------------
//  Rows [row_begin, row_end) of a random SPD matrix with entries anywhere.

int
problems_random_spd (int32_t n, int32_t lower_per_row, double shift,
                     uint64_t seed, int32_t row_begin, int32_t row_end,
                     csr_t **A_p, char *error, size_t error_size)
{
    problems_nascg_t params = {
        .n = n,
        .bandwidth = n > 1 ? n - 1 : 1,
        .lower_per_row = lower_per_row,
        .diagonal_shift = shift,
        .seed = seed
    };
    return problems_nascg (&params, row_begin, row_end, A_p, error,
                           error_size);
}

//  --------------------------------------------------------------------------
//  b = A * 1: the row sums.

void
problems_rhs_ones_solution (const csr_t *A, double *b)
{
    assert (A);
    for (int32_t i = 0; i < A->nrows; i++) {
        double sum = 0.0;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            sum += A->values [k];
        b [i] = sum;
    }
}

//  --------------------------------------------------------------------------
//  b_i = value.

void
problems_rhs_constant (int32_t nrows, double value, double *b)
{
    for (int32_t i = 0; i < nrows; i++)
        b [i] = value;
}
