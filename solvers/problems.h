/*  =========================================================================
    problems - generated sparse linear systems, built by row range

    Every generator builds only the rows [row_begin, row_end) of an n x n
    matrix, with global column indices, so each distributed task generates
    its own rows locally.  The result never depends on the range: building
    rows 0..n in one call or in pieces gives the same entries, bit for bit
    (random generators draw from a stream seeded by the global row index).

    Generators return 0 and write *A_p, or return -1 with a reason in
    error[error_size] when the parameters are invalid (n would overflow
    int32_t, empty grid, bad range, ...); *A_p is then left untouched.
    =========================================================================
*/
#ifndef PROBLEMS_H_INCLUDED
#define PROBLEMS_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Parameters of the NAS-CG-like banded SPD generator
typedef struct {
    int32_t n;                  //  Order of the matrix
    int32_t bandwidth;          //  Largest |i - j| of an entry, >= 1
    int32_t lower_per_row;      //  Random entries drawn left of each diagonal
    double diagonal_shift;      //  a_ii = sum_j |a_ij| + shift, > 0
    uint64_t seed;              //  Seed of the pattern and values
} problems_nascg_t;

//  Rows [row_begin, row_end) of the 2D Poisson matrix (5-point stencil,
//  4 on the diagonal, -1 for each neighbour, Dirichlet boundary) on an
//  N x N grid in lexicographic order: n = N^2, bandwidth N.
int
    problems_poisson2d (int32_t N, int32_t row_begin, int32_t row_end,
                        csr_t **A_p, char *error, size_t error_size);

//  Rows [row_begin, row_end) of the upwind convection-diffusion matrix of
//  an N x N grid, flow along x: the 2D Poisson matrix with `convection`
//  (c >= 0) added to the diagonal (4 + c) and taken from the upwind, x - 1
//  neighbour (-1 - c).  Nonsymmetric for c > 0, diagonally dominant.
int
    problems_convection2d (int32_t N, double convection, int32_t row_begin,
                           int32_t row_end, csr_t **A_p, char *error,
                           size_t error_size);

//  Rows [row_begin, row_end) of the 3D Poisson matrix (7-point stencil,
//  6 on the diagonal) on an N x N x N grid: n = N^3, bandwidth N^2.
int
    problems_poisson3d (int32_t N, int32_t row_begin, int32_t row_end,
                        csr_t **A_p, char *error, size_t error_size);

//  Rows [row_begin, row_end) of a NAS-CG-like banded SPD matrix (MAHEVE
//  paper, section 5.1: n = 5,000,000, bandwidth 35,000).  Each row i draws
//  lower_per_row columns i - d, d uniform in [1, bandwidth] (clipped at 0),
//  with values uniform in [-1, 1); the matrix is the symmetric closure of
//  these entries (duplicates summed) and each diagonal is the sum of the
//  row's off-diagonal magnitudes plus diagonal_shift, so the matrix is
//  strictly diagonally dominant with a positive diagonal, hence SPD.
//  Cost: O((rows + bandwidth) * lower_per_row).
int
    problems_nascg (const problems_nascg_t *params, int32_t row_begin,
                    int32_t row_end, csr_t **A_p, char *error,
                    size_t error_size);

//  Rows [row_begin, row_end) of a random nonsymmetric matrix: each row has
//  offdiag_per_row entries at uniform random columns (values uniform in
//  [-1, 1), duplicates summed) and a diagonal equal to dominance times the
//  sum of the row's off-diagonal magnitudes (at least dominance).  With
//  dominance > 1 the matrix is strictly diagonally dominant; with
//  dominance < 1 the Jacobi-type iterations may diverge (used by tests).
int
    problems_random_dominant (int32_t n, int32_t offdiag_per_row,
                              double dominance, uint64_t seed,
                              int32_t row_begin, int32_t row_end,
                              csr_t **A_p, char *error, size_t error_size);

//  Rows [row_begin, row_end) of a random SPD matrix with entries anywhere:
//  the NAS-CG-like construction with bandwidth n - 1.  Building any range
//  costs O(n * lower_per_row), so keep it for test-sized systems.
int
    problems_random_spd (int32_t n, int32_t lower_per_row, double shift,
                         uint64_t seed, int32_t row_begin, int32_t row_end,
                         csr_t **A_p, char *error, size_t error_size);

//  b = A * 1 for the rows of A (the row sums), so that the exact solution
//  of the system is the vector of all ones.  b has A->nrows entries.
void
    problems_rhs_ones_solution (const csr_t *A, double *b);

//  b_i = value for the nrows rows (the usual constant source term; for
//  the Poisson matrices above use h^2 with h = 1 / (N + 1) for -Δu = 1).
void
    problems_rhs_constant (int32_t nrows, double value, double *b);

#ifdef __cplusplus
}
#endif

#endif
