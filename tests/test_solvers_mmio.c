/*  =========================================================================
    test_solvers_mmio - Matrix Market and .npy files

    Round trips must be exact; every corrupt input must fail with the
    documented "FILE:LINE: reason".  Inputs are written to a temporary
    directory created here and removed at the end.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

//  Source tree for running by hand, when make check did not set JACE_SRCDIR
#ifndef JACE_TEST_SRCDIR
#define JACE_TEST_SRCDIR "."
#endif

void openblas_set_num_threads (int);

//  One corrupt-input case: file content and the expected ":LINE: reason"
typedef struct {
    const char *name;           //  What is wrong, as the check's name
    const char *content;        //  File content
    const char *expected;       //  Expected error suffix after the path
} corrupt_case_t;

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
#define SYMMETRIC "%%MatrixMarket matrix coordinate real symmetric\n"
#define ARRAY "%%MatrixMarket matrix array real general\n"

static const corrupt_case_t matrix_cases [] = {
    { "empty file", "", ":1: empty file, expected a %%MatrixMarket banner" },
    { "bad banner", "hello world\n1 1 1\n",
      ":1: bad banner: expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'" },
    { "banner with a missing word",
      "%%MatrixMarket matrix coordinate real\n1 1 0\n",
      ":1: bad banner: expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'" },
    { "vector object", "%%MatrixMarket vector coordinate real general\n",
      ":1: unsupported object 'vector' (expected matrix)" },
    { "array format for a matrix", ARRAY "2 1\n1\n2\n",
      ":1: unsupported format 'array' for a matrix (expected coordinate)" },
    { "complex field", "%%MatrixMarket matrix coordinate complex general\n",
      ":1: unsupported field 'complex' (expected real, integer or pattern)" },
    { "skew-symmetric", "%%MatrixMarket matrix coordinate real skew-symmetric\n",
      ":1: unsupported symmetry 'skew-symmetric' (expected general or symmetric)" },
    { "missing size line", BANNER "% a comment\n\n", ":4: missing size line" },
    { "size line with two numbers", BANNER "3 3\n",
      ":2: bad size line: expected 'ROWS COLUMNS ENTRIES'" },
    { "non-numeric size", BANNER "% c\n3 x 3\n",
      ":3: bad size line: 'x' is not a non-negative integer" },
    { "negative size", BANNER "3 -3 1\n",
      ":2: bad size line: '-3' is not a non-negative integer" },
    { "zero rows", BANNER "0 3 0\n", ":2: bad size line: dimensions must be positive" },
    { "huge dimension", BANNER "3000000000 3 1\n",
      ":2: bad size line: dimensions exceed 2147483647, the largest 32-bit "
      "index" },
    { "non-square symmetric", SYMMETRIC "3 4 1\n1 1 1\n",
      ":2: symmetric matrix must be square, got 3 x 4" },
    { "more entries than cells", BANNER "2 2 5\n",
      ":2: 5 entries cannot fit in a 2 x 2 matrix" },
    { "row index too large", BANNER "3 3 2\n1 1 1.0\n4 1 2.0\n",
      ":4: row index 4 out of range [1, 3]" },
    { "column index zero", BANNER "3 3 2\n1 1 1.0\n\n2 0 2.0\n",
      ":5: column index 0 out of range [1, 3]" },
    { "non-numeric row index", BANNER "3 3 1\na 1 1.0\n",
      ":3: bad row index 'a'" },
    { "fractional column index", BANNER "3 3 1\n1 1.5 1.0\n",
      ":3: bad column index '1.5'" },
    { "too few entries", BANNER "3 3 3\n1 1 1\n2 2 1\n% padding\n",
      ":6: unexpected end of file: 2 of 3 entries read" },
    { "more entries than the file can hold", BANNER "3 3 3\n1 1 1\n2 2 1\n",
      ":2: size line announces 3 entries but the 12 bytes after it hold at "
      "most 2 (an entry takes at least 6 bytes)" },
    { "a huge size line", BANNER "2000000000 2000000000 4000000000000000000\n",
      ":2: size line announces 4000000000000000000 entries but the 0 bytes "
      "after it hold at most 0 (an entry takes at least 6 bytes)" },
    { "too many entries", BANNER "3 3 1\n1 1 1\n2 2 1\n",
      ":4: too many entries: the size line announced 1" },
    { "non-numeric value", BANNER "3 3 1\n1 1 abc\n", ":3: bad value 'abc'" },
    { "value with trailing garbage", BANNER "3 3 1\n1 1 2.5x\n",
      ":3: bad value '2.5x'" },
    { "hexadecimal value", BANNER "3 3 1\n1 1 -0x10\n",
      ":3: bad value '-0x10' (hexadecimal: Matrix Market values are "
      "decimal)" },
    { "entry missing its value in a small file",
      BANNER "3 3 3\n1 1 2\n2 2\n3 3 2\n",
      ":4: bad entry: expected 'ROW COLUMN VALUE'" },
    { "NaN value", BANNER "3 3 2\n1 1 1\n2 2 nan\n", ":4: value 'nan' is not finite" },
    { "infinite value", BANNER "3 3 1\n1 1 -inf\n", ":3: value '-inf' is not finite" },
    { "overflowing value", BANNER "3 3 1\n1 1 1e999\n",
      ":3: value '1e999' is not finite" },
    { "fractional integer value",
      "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n",
      ":3: bad integer value '1.5'" },
    { "entry without value", BANNER "3 3 1\n1    1\n",
      ":3: bad entry: expected 'ROW COLUMN VALUE'" },
    { "pattern entry with value",
      "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n",
      ":3: bad entry: expected 'ROW COLUMN'" },
    { "upper entry in a symmetric file", SYMMETRIC "3 3 2\n1 1 4\n1 2 -1\n",
      ":4: entry (1, 2) above the diagonal in a symmetric file" },
};

static const corrupt_case_t vector_cases [] = {
    { "coordinate vector", BANNER "3 1 1\n1 1 1\n",
      ":1: unsupported format 'coordinate' for a vector (expected array)" },
    { "symmetric array", "%%MatrixMarket matrix array real symmetric\n",
      ":1: unsupported symmetry 'symmetric' (expected general)" },
    { "two-column array", ARRAY "3 2\n1\n2\n3\n4\n5\n6\n",
      ":2: array has 2 columns, a vector needs 1" },
    { "array size with three numbers", ARRAY "3 1 3\n",
      ":2: bad size line: expected 'ROWS COLUMNS'" },
    { "non-numeric vector value", ARRAY "3 1\n1\nzero\n3\n", ":4: bad value 'zero'" },
    { "two values on a line of a short array", ARRAY "3 1\n1 2\n",
      ":3: bad entry: expected one value" },
    { "two values on a line", ARRAY "3 1\n1 2\n3\n", ":3: bad entry: expected one value" },
    { "too few values", ARRAY "3 1\n1\n2\n%\n",
      ":6: unexpected end of file: 2 of 3 entries read" },
    { "more values than the file can hold", ARRAY "3 1\n1\n2\n",
      ":2: size line announces 3 entries but the 4 bytes after it hold at "
      "most 2 (an entry takes at least 2 bytes)" },
    { "too many values", ARRAY "2 1\n1\n2\n3\n", ":5: too many entries: the size line announced 2" },
    { "infinite vector value", ARRAY "2 1\n1\ninf\n", ":4: value 'inf' is not finite" },
};

//  Write content (length bytes) to dir/name; path receives the full name.
static void
s_write_file (const char *dir, const char *name, const char *content,
              size_t length, char *path, size_t path_size)
{
    snprintf (path, path_size, "%s/%s", dir, name);
    FILE *file = fopen (path, "wb");
    if (file) {
        fwrite (content, 1, length, file);
        fclose (file);
    }
}

//  True if error is exactly path followed by expected.
static bool
s_error_is (const char *error, const char *path, const char *expected)
{
    size_t length = strlen (path);
    bool same = strncmp (error, path, length) == 0
             && strcmp (error + length, expected) == 0;
    if (!same)
        diag ("  got '%s', want '%s%s'", error, path, expected);
    return same;
}

static void
s_test_corrupt (const char *dir)
{
    char path [512], error [512], name [160];
    for (size_t c = 0; c < sizeof (matrix_cases) / sizeof (matrix_cases [0]); c++) {
        const corrupt_case_t *test = &matrix_cases [c];
        s_write_file (dir, "bad.mtx", test->content, strlen (test->content),
                      path, sizeof (path));
        csr_t *A = NULL;
        error [0] = '\0';
        int rc = mmio_read_matrix (path, &A, error, sizeof (error));
        snprintf (name, sizeof (name), "matrix with %s is rejected: %s",
                  test->name, test->expected);
        ok (rc == -1 && A == NULL && s_error_is (error, path, test->expected),
            name);
        unlink (path);
    }
    for (size_t c = 0; c < sizeof (vector_cases) / sizeof (vector_cases [0]); c++) {
        const corrupt_case_t *test = &vector_cases [c];
        s_write_file (dir, "bad_rhs.mtx", test->content, strlen (test->content),
                      path, sizeof (path));
        double *x = NULL;
        int32_t n = -7;
        int rc = mmio_read_vector (path, &x, &n, error, sizeof (error));
        snprintf (name, sizeof (name), "vector with %s is rejected: %s",
                  test->name, test->expected);
        ok (rc == -1 && x == NULL && n == -7
            && s_error_is (error, path, test->expected), name);
        unlink (path);
    }
    //  A NUL byte cannot live in a C string literal table.
    const char nul [] = BANNER "3 3 1\n1 1\0 1\n";
    s_write_file (dir, "nul.mtx", nul, sizeof (nul) - 1, path, sizeof (path));
    csr_t *A = NULL;
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":3: line contains a NUL byte"),
        "a NUL byte is rejected");
    unlink (path);
    //  A compressed file (a gzip header holds NUL bytes) and a byte order
    //  mark said as such, not as a NUL byte or a bad banner
    const char gzip [] = "\x1f\x8b\x08\x08\0\0\0\0\0\x03m.mtx\0\x01\n";
    s_write_file (dir, "m.mtx.gz", gzip, sizeof (gzip) - 1, path,
                  sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":1: the file is compressed with gzip: "
                       "gunzip it first"), "a gzip file is said to be one");
    unlink (path);
    const char bom [] = "\xef\xbb\xbf" BANNER "1 1 1\n1 1 2\n";
    s_write_file (dir, "bom.mtx", bom, sizeof (bom) - 1, path, sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":1: the file begins with a UTF-8 byte "
                       "order mark: remove it (the banner must be the first "
                       "bytes)"), "a byte order mark is said to be one");
    unlink (path);
    ok (mmio_read_matrix ("/nonexistent/jace.mtx", &A, error, sizeof (error)) == -1
        && strstr (error, "/nonexistent/jace.mtx: cannot open: ") == error,
        "a missing file names the file and the system's reason");
    ok (mmio_read_matrix (dir, &A, error, sizeof (error)) == -1,
        "a directory is rejected, not crashed on");
    diag ("directory gives: %s", error);
    //  A FIFO nobody writes to: open() used to block for good
    char fifo [512];
    snprintf (fifo, sizeof fifo, "%s/fifo.mtx", dir);
    ok (mkfifo (fifo, 0600) == 0
        && mmio_read_matrix (fifo, &A, error, sizeof (error)) == -1
        && s_error_is (error, fifo, ": not a regular file"),
        "a FIFO is rejected at once, not waited on");
    unlink (fifo);
}

static void
s_test_system_errors (const char *dir)
{
    char matrix [512], rhs [512], error [512];
    const char *rectangle = BANNER "3 4 1\n1 1 1\n";
    s_write_file (dir, "rect.mtx", rectangle, strlen (rectangle), matrix,
                  sizeof (matrix));
    csr_t *A = NULL;
    double *b = NULL;
    ok (mmio_read_system (matrix, NULL, &A, &b, error, sizeof (error)) == -1
        && s_error_is (error, matrix, ":2: matrix is 3 x 4, a linear system "
                       "needs a square matrix"), "a non-square system is rejected");
    unlink (matrix);
    const char *square = BANNER "3 3 3\n1 1 1\n2 2 2\n3 3 3\n";
    const char *short_rhs = ARRAY "% two values\n2 1\n1\n2\n";
    s_write_file (dir, "sq.mtx", square, strlen (square), matrix, sizeof (matrix));
    s_write_file (dir, "rhs.mtx", short_rhs, strlen (short_rhs), rhs, sizeof (rhs));
    ok (mmio_read_system (matrix, rhs, &A, &b, error, sizeof (error)) == -1
        && s_error_is (error, rhs, ":3: right-hand side has 2 entries but the "
                       "matrix has 3 rows"), "a right-hand side of the wrong length is rejected");
    ok (A == NULL && b == NULL, "a failed system read returns nothing");
    const char *bad_rhs = ARRAY "3 1\n1\n2\nx\n";
    s_write_file (dir, "rhs.mtx", bad_rhs, strlen (bad_rhs), rhs, sizeof (rhs));
    ok (mmio_read_system (matrix, rhs, &A, &b, error, sizeof (error)) == -1
        && s_error_is (error, rhs, ":5: bad value 'x'"),
        "a corrupt right-hand side names its own file");
    const char *good_rhs = ARRAY "3 1\n1\n2\n3.5\n";
    s_write_file (dir, "rhs.mtx", good_rhs, strlen (good_rhs), rhs, sizeof (rhs));
    ok (mmio_read_system (matrix, rhs, &A, &b, error, sizeof (error)) == 0
        && A->nrows == 3 && b [2] == 3.5, "a consistent system reads");
    csr_destroy (&A);
    free (b);
    b = NULL;
    ok (mmio_read_system (matrix, NULL, &A, &b, error, sizeof (error)) == 0
        && b [0] == 1 && b [1] == 2 && b [2] == 3,
        "without a rhs file, b = A * 1");
    csr_destroy (&A);
    free (b);
    unlink (matrix);
    unlink (rhs);
}

static void
s_test_round_trips (const char *dir)
{
    char path [512], error [512];
    csr_t *A = NULL, *B = NULL;
    problems_random_dominant (200, 5, 1.3, 77, 0, 200, &A, NULL, 0);
    //  Values that need all 17 digits, and extremes
    A->values [0] = 1.0 / 3.0;
    A->values [1] = -2.2250738585072014e-308;
    A->values [2] = 1.7976931348623157e308;
    snprintf (path, sizeof (path), "%s/round.mtx", dir);
    ok (mmio_write_matrix (path, A, error, sizeof (error)) == 0, "matrix writes");
    ok (mmio_read_matrix (path, &B, error, sizeof (error)) == 0, "matrix reads back");
    ok (B && B->nnz == A->nnz
        && memcmp (A->col_idx, B->col_idx, A->nnz * sizeof (int32_t)) == 0
        && memcmp (A->values, B->values, A->nnz * sizeof (double)) == 0,
        "matrix round trip is exact");
    csr_destroy (&B);
    unlink (path);
    ok (mmio_write_matrix ("/nonexistent/x.mtx", A, error, sizeof (error)) == -1
        && strstr (error, "/nonexistent/x.mtx: cannot create"),
        "writing to a missing directory fails with the reason");
    csr_destroy (&A);

    double x [6] = { 1.0 / 3.0, -0.0, 1e-300, -7.5, 123456789.0, 5e-324 };
    double *y = NULL;
    int32_t n = 0;
    snprintf (path, sizeof (path), "%s/vector.mtx", dir);
    ok (mmio_write_vector (path, x, 6, error, sizeof (error)) == 0, "vector writes");
    ok (mmio_read_vector (path, &y, &n, error, sizeof (error)) == 0 && n == 6
        && memcmp (x, y, sizeof (x)) == 0, "vector round trip is exact");
    free (y);
    unlink (path);

    const char *symmetric = "%%MatrixMarket matrix coordinate real symmetric\r\n"
                            "% lower triangle only\r\n3 3 4\r\n1 1 4\r\n"
                            "2 1 -1\r\n\r\n3 2 -2\r\n3 3 5\r\n% trailing comment\r\n";
    s_write_file (dir, "sym.mtx", symmetric, strlen (symmetric), path, sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == 0
        && A->nnz == 6 && csr_value (A, 0, 1) == -1 && csr_value (A, 1, 2) == -2
        && csr_is_symmetric (A, 0),
        "symmetric file (CRLF, comments, blank line) expands to the full matrix");
    csr_destroy (&A);
    const char *pattern = "%%MatrixMarket matrix coordinate pattern general\n"
                          "2 3 3\n1 3\n2 1\n1 3\n";
    s_write_file (dir, "pat.mtx", pattern, strlen (pattern), path, sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == 0
        && A->nrows == 2 && A->ncols == 3 && A->nnz == 2
        && csr_value (A, 0, 2) == 2.0 && csr_value (A, 1, 0) == 1.0,
        "pattern entries read as 1, duplicates summed");
    csr_destroy (&A);
    const char *integer = "%%MatrixMarket MATRIX Coordinate INTEGER General\n"
                          "2 2 2\n  1   1   -3  \n2\t2\t7\n";
    s_write_file (dir, "int.mtx", integer, strlen (integer), path, sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == 0
        && csr_value (A, 0, 0) == -3 && csr_value (A, 1, 1) == 7,
        "integer field, any case, tabs and extra blanks read");
    csr_destroy (&A);
    unlink (path);
    snprintf (path, sizeof (path), "%s/sym.mtx", dir);
    unlink (path);
    snprintf (path, sizeof (path), "%s/pat.mtx", dir);
    unlink (path);
}

//  The shipped 4x4 Poisson system: symmetric integer matrix and a rhs
//  made from x_i = i, found through JACE_SRCDIR (set by make check).
static void
s_test_shipped_system (void)
{
    const char *srcdir = getenv ("JACE_SRCDIR");
    char matrix [512], rhs [512], error [512] = "";
    snprintf (matrix, sizeof (matrix), "%s/tests/data/solvers/poisson2d_4x4_symmetric.mtx",
              srcdir ? srcdir : JACE_TEST_SRCDIR);
    snprintf (rhs, sizeof (rhs), "%s/tests/data/solvers/poisson2d_4x4_rhs.mtx",
              srcdir ? srcdir : JACE_TEST_SRCDIR);
    csr_t *A = NULL, *P = NULL;
    double *b = NULL;
    int rc = mmio_read_system (matrix, rhs, &A, &b, error, sizeof (error));
    problems_poisson2d (4, 0, 16, &P, NULL, 0);
    ok (rc == 0 && A->nnz == P->nnz
        && memcmp (A->col_idx, P->col_idx, P->nnz * sizeof (int32_t)) == 0
        && memcmp (A->values, P->values, P->nnz * sizeof (double)) == 0,
        "shipped symmetric file equals the generated 2D Poisson matrix");
    if (rc)
        diag ("%s", error);
    double x [16];
    multisplit_serial_options_t options = {
        .tasks = 2, .tolerance = 1e-12, .residual_tolerance = 1e-12,
        .max_iterations = 1000
    };
    multisplit_options_defaults (&options.inner);
    multisplit_serial_result_t result;
    double error_max = INFINITY;
    if (rc == 0 && multisplit_serial_solve (A, b, &options, x, &result, NULL, 0) == 0) {
        error_max = 0.0;
        for (int i = 0; i < 16; i++)
            error_max = fmax (error_max, fabs (x [i] - (i + 1)));
    }
    is_double (error_max, 0.0, 1e-9, "the shipped system solves to x_i = i");
    csr_destroy (&A);
    csr_destroy (&P);
    free (b);
}

//  Read a whole file into a malloc'd buffer.
static unsigned char *
s_slurp (const char *path, long *size_p)
{
    FILE *file = fopen (path, "rb");
    if (!file)
        return NULL;
    fseek (file, 0, SEEK_END);
    long size = ftell (file);
    fseek (file, 0, SEEK_SET);
    unsigned char *bytes = malloc (size + 1);
    if (fread (bytes, 1, size, file) != (size_t) size)
        size = -1;
    fclose (file);
    *size_p = size;
    return bytes;
}

static void
s_test_npy (const char *dir)
{
    char path [512], error [512];
    double x [5] = { 1.0, -2.5, 1.0 / 3.0, 0.0, 1e300 };
    snprintf (path, sizeof (path), "%s/x.npy", dir);
    ok (npy_write_vector (path, x, 5, error, sizeof (error)) == 0, "npy writes");
    long size = 0;
    unsigned char *bytes = s_slurp (path, &size);
    ok (bytes && memcmp (bytes, "\x93NUMPY\x01\x00", 8) == 0,
        "npy starts with the magic and version 1.0");
    size_t header = bytes [8] | bytes [9] << 8;
    ok ((10 + header) % 64 == 0, "npy data starts on a 64-byte boundary");
    ok (bytes [10 + header - 1] == '\n', "npy header ends with a newline");
    const char *dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }";
    ok (memcmp (bytes + 10, dict, strlen (dict)) == 0,
        "npy header dict is the 1-D '<f8' one");
    is_int (size, (long) (10 + header + sizeof (x)), "npy file is header plus 40 bytes");
    ok (memcmp (bytes + 10 + header, x, sizeof (x)) == 0, "npy data is the raw doubles");
    double *y = NULL;
    int64_t n = 0;
    ok (npy_read_vector (path, &y, &n, error, sizeof (error)) == 0 && n == 5
        && memcmp (x, y, sizeof (x)) == 0, "npy round trip is exact");
    free (y);
    y = NULL;

    //  A truncated file and a wrong dtype are refused.
    s_write_file (dir, "short.npy", (const char *) bytes, size - 8, path, sizeof (path));
    ok (npy_read_vector (path, &y, &n, error, sizeof (error)) == -1 && !y
        && strstr (error, "header announces 5 doubles"), "truncated npy is refused");
    memcpy (bytes + 10 + 11, "<f4", 3);
    s_write_file (dir, "f4.npy", (const char *) bytes, size, path, sizeof (path));
    ok (npy_read_vector (path, &y, &n, error, sizeof (error)) == -1
        && strstr (error, "does not describe a 1-D '<f8' array"), "'<f4' npy is refused");
    bytes [1] = 'X';
    s_write_file (dir, "magic.npy", (const char *) bytes, size, path, sizeof (path));
    ok (npy_read_vector (path, &y, &n, error, sizeof (error)) == -1
        && strstr (error, "not a .npy file"), "bad magic is refused");
    free (bytes);

    //  Header padding holds whatever the length of the shape.
    bool aligned = true;
    const int64_t lengths [] = { 0, 1, 123456 };
    double *zeros = calloc (123456, sizeof (double));
    snprintf (path, sizeof (path), "%s/len.npy", dir);
    for (int k = 0; k < 3; k++) {
        npy_write_vector (path, zeros, lengths [k], error, sizeof (error));
        bytes = s_slurp (path, &size);
        header = bytes [8] | bytes [9] << 8;
        aligned = aligned && (10 + header) % 64 == 0
               && size == (long) (10 + header + 8 * lengths [k]);
        free (bytes);
    }
    free (zeros);
    ok (aligned, "npy headers of n = 0, 1 and 123456 are aligned and sized");
    ok (npy_read_vector (path, &y, &n, error, sizeof (error)) == 0 && n == 123456
        && y [123455] == 0.0, "a long npy reads back");
    free (y);
    const char *names [] = { "x.npy", "short.npy", "f4.npy", "magic.npy", "len.npy" };
    for (int k = 0; k < 5; k++) {
        snprintf (path, sizeof (path), "%s/%s", dir, names [k]);
        unlink (path);
    }
}

//  True if A and B hold the same rows, columns and value bits.
static bool
s_same_csr (const csr_t *A, const csr_t *B)
{
    return A && B && A->nrows == B->nrows && A->ncols == B->ncols
        && A->nnz == B->nnz
        && memcmp (A->row_ptr, B->row_ptr,
                   ((size_t) A->nrows + 1) * sizeof (int64_t)) == 0
        && memcmp (A->col_idx, B->col_idx,
                   (size_t) A->nnz * sizeof (int32_t)) == 0
        && memcmp (A->values, B->values,
                   (size_t) A->nnz * sizeof (double)) == 0;
}

//  Peak resident memory of this process so far, in kilobytes.
static long
s_peak_kb (void)
{
    struct rusage usage;
    getrusage (RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

//  Size lines that cannot be right are refused before any allocation.
static void
s_test_sizes (const char *dir)
{
    char path [512], error [512];
    csr_t *A = NULL;
    double *b = NULL;
    const char *huge = BANNER "2000000000 2000000000 3\n1 1 1\n2 2 1\n3 3 1\n";
    s_write_file (dir, "huge.mtx", huge, strlen (huge), path, sizeof (path));
    long before = s_peak_kb ();
    ok (mmio_read_system (path, NULL, &A, &b, error, sizeof (error)) == -1
        && A == NULL && s_error_is (error, path, ":2: 2000000000 rows but 3 "
                                    "entries fill at most 3: a linear system "
                                    "needs an entry in every row"),
        "a 2e9 x 2e9 system with 3 entries is refused");
    ok (s_peak_kb () - before < 65536,
        "refusing it allocated nothing large");
    const char *symmetric = SYMMETRIC "4 4 1\n1 1 1\n";
    s_write_file (dir, "huge.mtx", symmetric, strlen (symmetric), path,
                  sizeof (path));
    ok (mmio_read_system (path, NULL, &A, &b, error, sizeof (error)) == -1
        && s_error_is (error, path, ":2: 4 rows but 1 entries fill at most "
                       "2: a linear system needs an entry in every row"),
        "a symmetric system's stored entries fill at most two rows each");
    const char *hole = BANNER "3 3 3\n1 1 1\n1 2 1\n3 3 1\n";
    s_write_file (dir, "huge.mtx", hole, strlen (hole), path, sizeof (path));
    ok (mmio_read_system (path, NULL, &A, &b, error, sizeof (error)) == -1
        && s_error_is (error, path, ":2: row 2 has no entries: a linear "
                       "system needs one in every row"),
        "a system with an empty row is refused");
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == 0
        && A->row_ptr [1] == 2 && A->row_ptr [2] == 2,
        "a plain matrix may have an empty row");
    csr_destroy (&A);
    unlink (path);
}

//  Fill length bytes at out with c and return out + length.
static char *
s_fill_with (char *out, char c, size_t length)
{
    memset (out, c, length);
    return out + length;
}

//  Lines longer than the 1 MiB buffer, and a NUL byte in a later block.
static void
s_test_streaming (const char *dir)
{
    char path [512], error [512];
    size_t big = 1536 * 1024;
    char *content = malloc (big + 256);
    csr_t *A = NULL;

    char *end = content + sprintf (content, "%s2 2 2\n1 1 1\n%%", BANNER);
    end = s_fill_with (end, 'c', big);
    end += sprintf (end, "\n2 2 x\n");
    s_write_file (dir, "long.mtx", content, (size_t) (end - content), path,
                  sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":5: bad value 'x'"),
        "a 1.5 MB comment is skipped and later lines keep their numbers");

    end = content + sprintf (content, "%s2 2 1\n1 1 1.", BANNER);
    end = s_fill_with (end, '0', big);
    end += sprintf (end, "\n");
    s_write_file (dir, "long.mtx", content, (size_t) (end - content), path,
                  sizeof (path));
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":3: line is longer than 1048576 bytes"),
        "a 1.5 MB entry line is refused");

    int32_t lines = 300000;
    end = content + sprintf (content, "%s999 999 %" PRId32 "\n", BANNER,
                                lines);
    s_write_file (dir, "long.mtx", content, (size_t) (end - content), path,
                  sizeof (path));
    FILE *file = fopen (path, "ab");
    for (int32_t k = 0; k < lines; k++)
        if (k == 250000)
            fwrite ("1 1 \0" "1\n", 1, 7, file);
        else
            fwrite ("1 1 1\n", 1, 6, file);
    fclose (file);
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == -1
        && s_error_is (error, path, ":250003: line contains a NUL byte"),
        "a NUL byte past the first megabyte names its line");
    free (content);
    unlink (path);
}

//  A 3D Poisson matrix written block by block, as jace-mmgen does, reads
//  back to the generator's matrix, whole or from its lower triangle.
static void
s_test_generated (const char *dir)
{
    char path [512], error [512];
    int32_t N = 30, n = N * N * N, block = 1000;
    csr_t *P = NULL, *A = NULL, *part = NULL;
    problems_poisson3d (N, 0, n, &P, NULL, 0);
    snprintf (path, sizeof (path), "%s/poisson.mtx", dir);
    for (int symmetric = 0; symmetric <= 1; symmetric++) {
        int64_t entries = symmetric ? (P->nnz + n) / 2 : P->nnz;
        mmio_writer_t *writer = mmio_writer_new (path, n, n, entries,
                                                 symmetric, error,
                                                 sizeof (error));
        for (int32_t begin = 0; begin < n; begin += block) {
            int32_t end = begin + block < n ? begin + block : n;
            problems_poisson3d (N, begin, end, &part, NULL, 0);
            mmio_writer_add (writer, part, begin);
            csr_destroy (&part);
        }
        ok (mmio_writer_close (&writer, error, sizeof (error)) == 0
            && writer == NULL, symmetric
            ? "lower triangle of 3D Poisson (N = 30) written by blocks"
            : "3D Poisson (N = 30) written by blocks");
        double *b = NULL;
        ok (mmio_read_system (path, NULL, &A, &b, error, sizeof (error)) == 0
            && s_same_csr (A, P), symmetric
            ? "the symmetric file expands to the generated matrix"
            : "the general file reads back to the generated matrix");
        csr_destroy (&A);
        free (b);
    }
    mmio_writer_t *writer = mmio_writer_new (path, n, n, 5, false, error,
                                             sizeof (error));
    mmio_writer_add (writer, P, 0);
    ok (mmio_writer_close (&writer, error, sizeof (error)) == -1
        && strstr (error, " entries written, the size line announced 5"),
        "a writer checks the count it announced");
    csr_destroy (&P);
    unlink (path);
}

//  A deterministic stream of test numbers (64-bit LCG, Knuth's MMIX)
static uint64_t
s_draw (uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 11;
}

//  Every value reads to the bits strtod gives, through the fast path for
//  plain decimals and through strtod for the rest.
static void
s_test_values (const char *dir)
{
    static const char *fixed [] = {
        "0", "-0", "0.0", "-0.0", "+3", ".5", "5.", "1e22", "1e23", "1E-22",
        "1e-23", "9007199254740992", "9007199254740993", "0.1", "4.35",
        "123456789012345678", "2.2250738585072014e-308", "4.9e-324",
        "1.7976931348623157e308", "0.000000000000000000000000001", "1e+0",
        "-1.5E+02", "8e-0", "00000000000000000000000012.5"
    };
    size_t count_fixed = sizeof (fixed) / sizeof (fixed [0]);
    size_t count = 20000;
    char path [512], error [512], token [64];
    snprintf (path, sizeof (path), "%s/values.mtx", dir);
    FILE *file = fopen (path, "w");
    fprintf (file, "%%%%MatrixMarket matrix array real general\n%zu 1\n",
             count);
    double *want = malloc (count * sizeof (double));
    uint64_t state = 42;
    for (size_t k = 0; k < count; k++) {
        if (k < count_fixed)
            snprintf (token, sizeof (token), "%s", fixed [k]);
        else {
            //  1 to 19 digits, a point anywhere or none, maybe an exponent
            int digits = 1 + (int) (s_draw (&state) % 19);
            int point = (int) (s_draw (&state) % (uint64_t) (digits + 2));
            char *out = token;
            if (s_draw (&state) % 2)
                *out++ = '-';
            for (int d = 0; d < digits; d++) {
                if (d == point)
                    *out++ = '.';
                *out++ = (char) ('0' + s_draw (&state) % 10);
            }
            if (s_draw (&state) % 2)
                out += sprintf (out, "e%d", (int) (s_draw (&state) % 61) - 30);
            *out = '\0';
        }
        want [k] = strtod (token, NULL);
        fprintf (file, "%s\n", token);
    }
    fclose (file);
    double *got = NULL;
    int32_t n = 0;
    ok (mmio_read_vector (path, &got, &n, error, sizeof (error)) == 0
        && n == (int32_t) count
        && memcmp (got, want, count * sizeof (double)) == 0,
        "20000 decimal values read to strtod's bits");
    if (got && memcmp (got, want, count * sizeof (double)) != 0)
        for (size_t k = 0; k < count; k++)
            if (memcmp (&got [k], &want [k], sizeof (double)) != 0) {
                diag ("value %zu: got %a, want %a", k, got [k], want [k]);
                break;
            }
    free (got);
    free (want);
    unlink (path);
}

//  Long rows in random order with duplicates sort and sum like the
//  triplet builder (small integers, so the sums are exact in any order).
static void
s_test_unsorted (const char *dir)
{
    char path [512], error [512];
    int32_t n = 40, per_row = 38;
    snprintf (path, sizeof (path), "%s/unsorted.mtx", dir);
    FILE *file = fopen (path, "w");
    fprintf (file, "%s%" PRId32 " %" PRId32 " %" PRId32 "\n", BANNER, n, n,
             n * per_row);
    csr_builder_t *builder = csr_builder_new (n, n, n * per_row);
    uint64_t state = 7;
    for (int32_t k = 0; k < n * per_row; k++) {
        int32_t row = (int32_t) (s_draw (&state) % (uint64_t) n);
        int32_t col = (int32_t) (s_draw (&state) % (uint64_t) n);
        double value = (double) (s_draw (&state) % 9) - 4.0;
        fprintf (file, "%" PRId32 " %" PRId32 " %g\n", row + 1, col + 1,
                 value);
        csr_builder_add (builder, row, col, value);
    }
    fclose (file);
    csr_t *want = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    csr_t *A = NULL;
    ok (mmio_read_matrix (path, &A, error, sizeof (error)) == 0
        && s_same_csr (A, want) && csr_is_valid (A),
        "rows in random order with duplicates equal the builder's matrix");
    csr_destroy (&A);
    csr_destroy (&want);
    unlink (path);
}

int
main (void)
{
    openblas_set_num_threads (1);
    size_t cases = sizeof (matrix_cases) / sizeof (matrix_cases [0])
                 + sizeof (vector_cases) / sizeof (vector_cases [0]);
    tap_plan ((int) cases + 5 + 6 + 9 + 13 + 2 + 5 + 3 + 5 + 1 + 1 + 1);
    const char *base = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
    char dir [256];
    snprintf (dir, sizeof (dir), "%s/test_solvers_mmio.XXXXXX", base);
    if (!mkdtemp (dir)) {
        diag ("cannot create a temporary directory in %s", base);
        return 1;
    }
    s_test_corrupt (dir);
    s_test_system_errors (dir);
    s_test_round_trips (dir);
    s_test_npy (dir);
    s_test_shipped_system ();
    s_test_sizes (dir);
    s_test_streaming (dir);
    s_test_generated (dir);
    s_test_values (dir);
    s_test_unsorted (dir);
    if (rmdir (dir) != 0)
        diag ("temporary directory %s not empty", dir);
    return tap_done ();
}
