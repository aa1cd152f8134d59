/*  =========================================================================
    tsirm - the least-squares step of TSIRM, split across tasks

    Householder QR through LAPACK's dgeqrf for the factors, CGLS on the
    small triangular problem.  Debian's OpenBLAS has no lapacke.h, so the
    Fortran symbol is declared here (as banded_lu.c does).
    =========================================================================
*/
#include "solvers.h"

void dgeqrf_ (const int *m, const int *n, double *a, const int *lda,
              double *tau, double *work, const int *lwork, int *info);

void
tsirm_options_defaults (tsirm_options_t *options)
{
    assert (options);
    options->size = 12;
    //  PETSc's 15 iterations each cost it a reduction across processes;
    //  here the small problem is every task's own and 100 iterations of
    //  an s x s CGLS cost microseconds.  Measured on 3D Poisson 60^3 with
    //  ILU(0) inner solves: 100 in place of 15 saves 13-15% of the outer
    //  iterations; 1000 saves none more (BENCHMARKS.md).
    options->max_iterations = 100;
    options->tolerance = 1e-14;
}

size_t
tsirm_factor_length (int32_t size)
{
    assert (size >= 1);
    return (size_t) (size + 1) * (size_t) (size + 2) / 2;
}

//  QR of the column-major rows x columns matrix a, in place: R is then in
//  its upper triangle.
static void
s_qr (double *a, int rows, int columns)
{
    int info = 0, lwork = -1;
    double query = 0;
    double *tau = solvers_malloc (((size_t) columns + 1) * sizeof (double));
    dgeqrf_ (&rows, &columns, a, &rows, tau, &query, &lwork, &info);
    lwork = query > columns ? (int) query : columns;
    double *work = solvers_malloc ((size_t) lwork * sizeof (double));
    dgeqrf_ (&rows, &columns, a, &rows, tau, work, &lwork, &info);
    assert (info == 0);         //  Only a bad argument makes it fail
    free (work);
    free (tau);
}

//  Pack the upper triangle of the first `columns` rows of a (column-major,
//  leading dimension rows), row by row; rows past `rows` are zero.
static void
s_pack (const double *a, int rows, int columns, double *factor)
{
    size_t at = 0;
    for (int i = 0; i < columns; i++)
        for (int j = i; j < columns; j++)
            factor [at++] = i < rows ? a [(size_t) j * rows + i] : 0.0;
}

void
tsirm_local_factor (double *wr, int32_t rows, int32_t size, double *factor)
{
    assert (wr || rows == 0);
    assert (factor);
    int columns = size + 1;
    if (rows > 0)
        s_qr (wr, rows, columns);
    s_pack (wr, rows, columns, factor);
}

//  y = R p and y = R' p for the s x s upper triangle of the packed
//  (s + 1) x (s + 1) factor (row i starts at i (2 (s + 1) - i + 1) / 2).
static size_t
s_row_start (int32_t columns, int32_t i)
{
    return (size_t) i * (size_t) (2 * columns - i + 1) / 2;
}

static void
s_multiply (const double *r, int32_t s, const double *p, double *y)
{
    for (int32_t i = 0; i < s; i++) {
        const double *row = r + s_row_start (s + 1, i);
        double sum = 0;
        for (int32_t j = i; j < s; j++)
            sum += row [j - i] * p [j];
        y [i] = sum;
    }
}

static void
s_multiply_transposed (const double *r, int32_t s, const double *p,
                       double *y)
{
    for (int32_t j = 0; j < s; j++)
        y [j] = 0;
    for (int32_t i = 0; i < s; i++) {
        const double *row = r + s_row_start (s + 1, i);
        for (int32_t j = i; j < s; j++)
            y [j] += row [j - i] * p [i];
    }
}

static double
s_dot (const double *x, const double *y, int32_t n)
{
    double sum = 0;
    for (int32_t i = 0; i < n; i++)
        sum += x [i] * y [i];
    return sum;
}

//  CGLS (Hestenes and Stiefel's CG on the normal equations, in the
//  residual form that never forms R'R) on min || z - R beta ||.
static int32_t
s_cgls (const double *r, int32_t s, const double *z,
        const tsirm_options_t *options, double *beta, double *residual)
{
    double *rest = solvers_malloc (4 * (size_t) s * sizeof (double));
    double *gradient = rest + s, *p = rest + 2 * s, *q = rest + 3 * s;
    memcpy (rest, z, (size_t) s * sizeof (double));
    memset (beta, 0, (size_t) s * sizeof (double));
    s_multiply_transposed (r, s, rest, gradient);
    memcpy (p, gradient, (size_t) s * sizeof (double));
    double gamma = s_dot (gradient, gradient, s);
    double stop = options->tolerance * sqrt (gamma);
    int32_t k = 0;
    while (k < options->max_iterations && gamma > 0 && sqrt (gamma) > stop) {
        s_multiply (r, s, p, q);
        double delta = s_dot (q, q, s);
        if (!(delta > 0))
            break;
        double alpha = gamma / delta;
        for (int32_t i = 0; i < s; i++) {
            beta [i] += alpha * p [i];
            rest [i] -= alpha * q [i];
        }
        s_multiply_transposed (r, s, rest, gradient);
        double next = s_dot (gradient, gradient, s);
        for (int32_t i = 0; i < s; i++)
            p [i] = gradient [i] + next / gamma * p [i];
        gamma = next;
        k++;
    }
    *residual = s_dot (rest, rest, s);
    free (rest);
    return k;
}

int
tsirm_solve (const double *const *factors, int32_t count,
             const tsirm_options_t *options, double *beta,
             tsirm_result_t *result)
{
    assert (factors && count >= 1);
    assert (options && beta && result);
    int32_t s = options->size;
    int columns = s + 1;
    int rows = count * columns;
    size_t length = tsirm_factor_length (s);
    //  Stack the factors, each unpacked to a (s + 1) x (s + 1) block.
    double *stack = solvers_calloc ((size_t) rows * (size_t) columns,
                                    sizeof (double));
    bool finite = true;
    for (int32_t t = 0; t < count; t++) {
        size_t at = 0;
        for (int i = 0; i < columns; i++)
            for (int j = i; j < columns; j++) {
                double value = factors [t][at++];
                finite = finite && isfinite (value);
                stack [(size_t) j * rows + t * columns + i] = value;
            }
    }
    memset (beta, 0, (size_t) s * sizeof (double));
    memset (result, 0, sizeof *result);
    if (!finite) {
        free (stack);
        return -1;
    }
    double *factor = solvers_malloc (length * sizeof (double));
    s_qr (stack, rows, columns);
    s_pack (stack, rows, columns, factor);
    free (stack);
    //  The last column of R: z on top, the unreachable part in the corner.
    double *z = solvers_malloc ((size_t) s * sizeof (double));
    for (int32_t i = 0; i < s; i++)
        z [i] = factor [s_row_start (columns, i) + (size_t) (s - i)];
    double corner = factor [length - 1];
    double rest;
    result->iterations = s_cgls (factor, s, z, options, beta, &rest);
    result->residual_before = sqrt (s_dot (z, z, s) + corner * corner);
    result->residual_after = sqrt (rest + corner * corner);
    free (z);
    free (factor);
    return 0;
}
