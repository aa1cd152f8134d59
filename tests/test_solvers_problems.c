/*  =========================================================================
    test_solvers_problems - generators: shape, properties, determinism

    The determinism checks build each matrix whole and in several pieces
    and require the pieces to be bit-identical to the corresponding row
    blocks of the whole: that is what lets every task generate its own
    rows.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"

void openblas_set_num_threads (int);

//  A generator of rows [begin, end) of one fixed matrix
typedef int (*generate_fn) (const void *args, int32_t begin, int32_t end,
                            csr_t **A_p);

//  Parameters of the random generators under test
typedef struct {
    int32_t n;                  //  Order
    int32_t per_row;            //  Draws per row
    double factor;              //  Dominance or shift
    uint64_t seed;              //  Seed
} random_args_t;

static int
s_poisson2d (const void *args, int32_t begin, int32_t end, csr_t **A_p)
{
    return problems_poisson2d (*(const int32_t *) args, begin, end, A_p, NULL, 0);
}

static int
s_poisson3d (const void *args, int32_t begin, int32_t end, csr_t **A_p)
{
    return problems_poisson3d (*(const int32_t *) args, begin, end, A_p, NULL, 0);
}

static int
s_nascg (const void *args, int32_t begin, int32_t end, csr_t **A_p)
{
    return problems_nascg (args, begin, end, A_p, NULL, 0);
}

static int
s_dominant (const void *args, int32_t begin, int32_t end, csr_t **A_p)
{
    const random_args_t *a = args;
    return problems_random_dominant (a->n, a->per_row, a->factor, a->seed,
                                     begin, end, A_p, NULL, 0);
}

static int
s_spd (const void *args, int32_t begin, int32_t end, csr_t **A_p)
{
    const random_args_t *a = args;
    return problems_random_spd (a->n, a->per_row, a->factor, a->seed, begin,
                                end, A_p, NULL, 0);
}

//  True if A and B have identical structure and bit-identical values.
static bool
s_identical (const csr_t *A, const csr_t *B)
{
    return A->nrows == B->nrows && A->ncols == B->ncols && A->nnz == B->nnz
        && memcmp (A->row_ptr, B->row_ptr, (A->nrows + 1) * sizeof (int64_t)) == 0
        && memcmp (A->col_idx, B->col_idx, A->nnz * sizeof (int32_t)) == 0
        && memcmp (A->values, B->values, A->nnz * sizeof (double)) == 0;
}

//  Build [0, n) whole, then in pieces cut at the given points, and compare.
static bool
s_pieces_match (generate_fn generate, const void *args, int32_t n,
                const int32_t *cuts, int cut_count)
{
    csr_t *whole = NULL;
    if (generate (args, 0, n, &whole) != 0)
        return false;
    bool same = csr_is_valid (whole);
    int32_t begin = 0;
    for (int c = 0; c <= cut_count && same; c++) {
        int32_t end = c < cut_count ? cuts [c] : n;
        csr_t *piece = NULL, *reference = csr_row_block (whole, begin, end);
        same = generate (args, begin, end, &piece) == 0
            && s_identical (piece, reference);
        csr_destroy (&piece);
        csr_destroy (&reference);
        begin = end;
    }
    csr_destroy (&whole);
    return same;
}

//  True if every row has a diagonal >= factor * sum |off-diagonal| and > 0.
static bool
s_dominant_rows (const csr_t *A, int32_t row_begin, double factor)
{
    for (int32_t i = 0; i < A->nrows; i++) {
        double diagonal = 0.0, off = 0.0;
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            if (A->col_idx [k] == row_begin + i)
                diagonal = A->values [k];
            else
                off += fabs (A->values [k]);
        if (!(diagonal > 0.0) || diagonal < factor * off * (1 - 1e-12))
            return false;
    }
    return true;
}

static void
s_test_poisson (void)
{
    csr_t *A = NULL;
    ok (problems_poisson2d (5, 0, 25, &A, NULL, 0) == 0, "2D Poisson 5x5 builds");
    is_int (A->nnz, 5 * 25 - 4 * 5, "2D Poisson has 5n - 4N entries");
    is_double (csr_value (A, 12, 12), 4.0, 0, "2D diagonal is 4");
    is_double (csr_value (A, 12, 7), -1.0, 0, "2D neighbour N rows up is -1");
    is_double (csr_value (A, 5, 4), 0.0, 0, "2D has no wrap-around at a grid edge");
    ok (csr_is_symmetric (A, 0), "2D Poisson is symmetric");
    int32_t kl, ku;
    banded_lu_bandwidth (A, &kl, &ku);
    ok (kl == 5 && ku == 5, "2D Poisson has bandwidth N");
    double b [25];
    problems_rhs_ones_solution (A, b);
    is_double (b [12], 0.0, 0, "A*1 is 0 on an interior row");
    is_double (b [0], 2.0, 0, "A*1 is 2 at a corner");
    csr_destroy (&A);

    ok (problems_poisson3d (4, 0, 64, &A, NULL, 0) == 0, "3D Poisson 4^3 builds");
    is_int (A->nnz, 7 * 64 - 6 * 16, "3D Poisson has 7n - 6N^2 entries");
    is_double (csr_value (A, 21, 21), 6.0, 0, "3D diagonal is 6");
    is_double (csr_value (A, 21, 5), -1.0, 0, "3D neighbour one plane down is -1");
    ok (csr_is_symmetric (A, 0), "3D Poisson is symmetric");
    banded_lu_bandwidth (A, &kl, &ku);
    ok (kl == 16 && ku == 16, "3D Poisson has bandwidth N^2");
    double x [64], y [64];
    for (int i = 0; i < 64; i++)
        x [i] = 1.0;
    csr_spmv (A, x, y);
    double c [64];
    problems_rhs_ones_solution (A, c);
    ok (memcmp (c, y, sizeof (y)) == 0, "rhs of ones solution equals A * 1");
    problems_rhs_constant (64, 0.25, c);
    ok (c [0] == 0.25 && c [63] == 0.25, "constant rhs fills every row");
    csr_destroy (&A);
}

//  The upwind convection-diffusion rows, whole and in two blocks
static void
s_test_convection (void)
{
    csr_t *A = NULL, *top = NULL, *bottom = NULL;
    ok (problems_convection2d (5, 2.0, 0, 25, &A, NULL, 0) == 0,
        "convection 5x5, c = 2, builds");
    is_int (A->nnz, 5 * 25 - 4 * 5, "with the 2D Poisson pattern");
    ok (csr_value (A, 12, 12) == 6.0 && csr_value (A, 12, 11) == -3.0
        && csr_value (A, 12, 13) == -1.0 && csr_value (A, 12, 7) == -1.0,
        "4 + c on the diagonal, -1 - c upwind, -1 elsewhere");
    ok (csr_value (A, 10, 9) == 0.0 && csr_value (A, 10, 10) == 6.0,
        "no upwind entry at the grid's west edge");
    ok (!csr_is_symmetric (A, 0), "nonsymmetric for c > 0");
    ok (problems_convection2d (5, 2.0, 0, 12, &top, NULL, 0) == 0
        && problems_convection2d (5, 2.0, 12, 25, &bottom, NULL, 0) == 0
        && csr_value (bottom, 0, 11) == -3.0
        && csr_value (bottom, 0, 12) == 6.0,
        "a block of rows starting mid-grid has the same rows");
    csr_destroy (&top);
    csr_destroy (&bottom);
    csr_destroy (&A);
    char error [256] = "";
    ok (problems_convection2d (5, -1.0, 0, 25, &A, error, sizeof error) == -1
        && !A && strstr (error, "convection -1"),
        "a negative convection is refused, named");
}

static void
s_test_errors (void)
{
    csr_t *A = NULL;
    char error [256] = "";
    ok (problems_poisson2d (0, 0, 0, &A, error, sizeof (error)) == -1 && !A,
        "2D grid side 0 is refused");
    ok (strstr (error, "grid side 0") != NULL, "the reason names the side");
    ok (problems_poisson2d (50000, 0, 1, &A, error, sizeof (error)) == -1,
        "2D grid whose order overflows int32 is refused");
    ok (problems_poisson3d (1291, 0, 1, &A, error, sizeof (error)) == -1,
        "3D grid whose order overflows int32 is refused");
    ok (problems_poisson3d (1290, 0, 1, &A, error, sizeof (error)) == 0,
        "3D grid 1290^3 (just fits) builds its first row");
    csr_destroy (&A);
    ok (problems_poisson2d (4, 3, 2, &A, error, sizeof (error)) == -1
        && strstr (error, "row range [3, 2)"), "reversed range is refused");
    ok (problems_poisson2d (4, 0, 17, &A, error, sizeof (error)) == -1,
        "range past n is refused");
    problems_nascg_t bad = { .n = 10, .bandwidth = 0, .lower_per_row = 2,
                             .diagonal_shift = 1.0, .seed = 1 };
    ok (problems_nascg (&bad, 0, 10, &A, error, sizeof (error)) == -1,
        "banded generator refuses bandwidth 0");
    bad.bandwidth = 3;
    bad.diagonal_shift = NAN;
    ok (problems_nascg (&bad, 0, 10, &A, error, sizeof (error)) == -1,
        "banded generator refuses a NaN shift");
    ok (problems_random_dominant (10, 2, 0.0, 1, 0, 10, &A, error,
                                  sizeof (error)) == -1,
        "random generator refuses dominance 0");
    ok (A == NULL, "failed generators leave the output untouched");
}

static void
s_test_random (void)
{
    problems_nascg_t params = { .n = 2000, .bandwidth = 60, .lower_per_row = 4,
                                .diagonal_shift = 0.5, .seed = 2024 };
    csr_t *A = NULL;
    ok (problems_nascg (&params, 0, params.n, &A, NULL, 0) == 0,
        "banded SPD generator builds n = 2000");
    int32_t kl, ku;
    banded_lu_bandwidth (A, &kl, &ku);
    ok (kl <= 60 && ku <= 60 && kl >= 50, "entries stay inside the band");
    ok (csr_is_symmetric (A, 0), "banded generator is exactly symmetric");
    ok (s_dominant_rows (A, 0, 1.0), "banded generator is diagonally dominant");
    ok (A->nnz > 2000 * 8 && A->nnz <= 2000 * 9, "about 2 k + 1 entries per row");
    csr_t *B = NULL;
    params.seed = 2025;
    problems_nascg (&params, 0, params.n, &B, NULL, 0);
    ok (!s_identical (A, B), "another seed gives another matrix");
    csr_destroy (&B);
    csr_destroy (&A);

    random_args_t dominant = { 500, 6, 1.5, 99 };
    s_dominant (&dominant, 0, 500, &A);
    ok (s_dominant_rows (A, 0, 1.5), "random matrix honours dominance 1.5");
    ok (!csr_is_symmetric (A, 1e-12), "random dominant matrix is nonsymmetric");
    csr_destroy (&A);
    random_args_t spd = { 300, 3, 1.0, 5 };
    s_spd (&spd, 0, 300, &A);
    ok (csr_is_symmetric (A, 0) && s_dominant_rows (A, 0, 1.0),
        "random SPD matrix is symmetric and dominant");
    banded_lu_bandwidth (A, &kl, &ku);
    ok (kl > 150, "random SPD entries reach far from the diagonal");
    csr_destroy (&A);
}

static void
s_test_determinism (void)
{
    const int32_t cuts [] = { 1, 7, 8, 100, 333 };
    int32_t N2 = 23, N3 = 9;
    ok (s_pieces_match (s_poisson2d, &N2, N2 * N2, cuts, 5),
        "2D Poisson pieces equal the whole");
    ok (s_pieces_match (s_poisson3d, &N3, N3 * N3 * N3, cuts, 5),
        "3D Poisson pieces equal the whole");
    problems_nascg_t params = { .n = 1000, .bandwidth = 40, .lower_per_row = 5,
                                .diagonal_shift = 1.0, .seed = 7 };
    ok (s_pieces_match (s_nascg, &params, 1000, cuts, 5),
        "banded SPD pieces equal the whole");
    random_args_t dominant = { 700, 5, 2.0, 11 };
    ok (s_pieces_match (s_dominant, &dominant, 700, cuts, 5),
        "random dominant pieces equal the whole");
    random_args_t spd = { 400, 4, 1.0, 13 };
    ok (s_pieces_match (s_spd, &spd, 400, cuts, 5),
        "random SPD pieces equal the whole");
}

//  The paper's case (n = 5,000,000, bandwidth 35,000), one task of 64.
static void
s_test_paper_scale_block (void)
{
    problems_nascg_t params = { .n = 5000000, .bandwidth = 35000,
                                .lower_per_row = 5, .diagonal_shift = 1.0,
                                .seed = 1 };
    int32_t boundaries [65];
    multisplit_partition (params.n, 64, NULL, boundaries, NULL, 0);
    csr_t *A = NULL;
    ok (problems_nascg (&params, boundaries [31], boundaries [32], &A, NULL,
                        0) == 0, "a 1/64 block of the paper's matrix builds");
    int32_t lowest = INT32_MAX, highest = 0;
    for (int64_t k = 0; k < A->nnz; k++) {
        lowest = A->col_idx [k] < lowest ? A->col_idx [k] : lowest;
        highest = A->col_idx [k] > highest ? A->col_idx [k] : highest;
    }
    ok (lowest >= boundaries [31] - 35000 && highest < boundaries [32] + 35000,
        "its columns stay within the bandwidth of its rows");
    ok (s_dominant_rows (A, boundaries [31], 1.0), "its rows are dominant");
    diag ("paper block: %d rows, %lld entries, columns [%d, %d]", A->nrows,
          (long long) A->nnz, lowest, highest);
    csr_destroy (&A);
}

int
main (void)
{
    openblas_set_num_threads (1);
    tap_plan (53);
    s_test_poisson ();
    s_test_convection ();
    s_test_errors ();
    s_test_random ();
    s_test_determinism ();
    s_test_paper_scale_block ();
    return tap_done ();
}
