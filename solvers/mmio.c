/*  =========================================================================
    mmio - Matrix Market files: sparse matrices and dense vectors

    A small line reader tracks the file name and line number so that every
    rejection names the exact place; the parse is split into banner, size
    line, entries and end-of-file check, each of which either succeeds or
    leaves one reason in the caller's buffer.
    =========================================================================
*/
#include "solvers.h"
#include <strings.h>

//  Most tokens on any line we accept (banner: 5), plus one to detect extra
#define MMIO_TOKENS_MAX     6
//  Entries reserved up front; the rest grows with the file's real content
#define MMIO_INITIAL_ENTRIES  65536

//  The value field of a file
typedef enum {
    MMIO_FIELD_REAL,            //  Floating-point values
    MMIO_FIELD_INTEGER,         //  Integer values
    MMIO_FIELD_PATTERN          //  No values: every entry is 1
} mmio_field_t;

//  What the banner and size line announced
typedef struct {
    mmio_field_t field;         //  Value field
    bool symmetric;             //  Only the lower triangle is stored
    int64_t rows;               //  Rows announced
    int64_t cols;               //  Columns announced
    int64_t entries;            //  Entry (or value) lines announced
    int64_t size_line;          //  Line number of the size line
} mmio_header_t;

//  A file being read, line by line
typedef struct {
    const char *path;           //  File name for messages; borrowed
    FILE *file;                 //  Open stream
    char *line;                 //  Current line, newline stripped
    size_t capacity;            //  Allocated size of line (getline)
    int64_t line_number;        //  Number of the current line, from 1
    char *error;                //  Caller's reason buffer, may be NULL
    size_t error_size;          //  Size of the caller's buffer
} mmio_reader_t;

//  Write "PATH:LINE: reason" into the caller's buffer; returns -1.
static int
s_fail_at (mmio_reader_t *reader, int64_t line_number, const char *format,
           ...) __attribute__ ((format (printf, 3, 4)));

static int
s_fail_at (mmio_reader_t *reader, int64_t line_number, const char *format,
           ...)
{
    if (reader->error && reader->error_size > 0) {
        int prefix = snprintf (reader->error, reader->error_size,
                               "%s:%" PRId64 ": ", reader->path, line_number);
        if (prefix >= 0 && (size_t) prefix < reader->error_size) {
            va_list args;
            va_start (args, format);
            vsnprintf (reader->error + prefix,
                       reader->error_size - (size_t) prefix, format, args);
            va_end (args);
        }
    }
    return -1;
}

static int
s_open (mmio_reader_t *reader, const char *path, char *error,
        size_t error_size)
{
    memset (reader, 0, sizeof (*reader));
    reader->path = path;
    reader->error = error;
    reader->error_size = error_size;
    reader->file = fopen (path, "r");
    if (!reader->file) {
        solvers_set_error (error, error_size, "%s: cannot open: %s", path,
                           strerror (errno));
        return -1;
    }
    return 0;
}

static void
s_close (mmio_reader_t *reader)
{
    if (reader->file)
        fclose (reader->file);
    free (reader->line);
    reader->file = NULL;
    reader->line = NULL;
}

//  Read the next physical line.  Returns 1, 0 at end of file, -1 on error.
static int
s_read_raw_line (mmio_reader_t *reader)
{
    errno = 0;
    ssize_t length = getline (&reader->line, &reader->capacity, reader->file);
    if (length < 0) {
        if (ferror (reader->file))
            return s_fail_at (reader, reader->line_number + 1,
                              "read error: %s", strerror (errno));
        return 0;
    }
    reader->line_number++;
    if ((ssize_t) strlen (reader->line) != length)
        return s_fail_at (reader, reader->line_number,
                          "line contains a NUL byte");
    while (length > 0 && (reader->line [length - 1] == '\n'
                      ||  reader->line [length - 1] == '\r'))
        reader->line [--length] = '\0';
    return 1;
}

static bool
s_is_blank_or_comment (const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    return *line == '\0' || *line == '%';
}

//  Read the next line that is neither blank nor a comment.
static int
s_read_content_line (mmio_reader_t *reader)
{
    int rc;
    while ((rc = s_read_raw_line (reader)) == 1)
        if (!s_is_blank_or_comment (reader->line))
            break;
    return rc;
}

//  Split line in place on blanks; returns the token count, which stops at
//  MMIO_TOKENS_MAX (meaning "too many" to every caller).
static int
s_split (char *line, char **tokens)
{
    int count = 0;
    char *cursor = line;
    while (count < MMIO_TOKENS_MAX) {
        cursor += strspn (cursor, " \t");
        if (*cursor == '\0')
            break;
        tokens [count++] = cursor;
        cursor += strcspn (cursor, " \t");
        if (*cursor != '\0')
            *cursor++ = '\0';
    }
    return count;
}

//  Parse a whole token as a decimal integer.
static bool
s_parse_integer (const char *token, int64_t *value)
{
    char *end;
    errno = 0;
    long long parsed = strtoll (token, &end, 10);
    if (end == token || *end != '\0' || errno == ERANGE)
        return false;
    *value = parsed;
    return true;
}

//  Parse one value of the given field; NaN and infinities are refused.
static int
s_parse_value (mmio_reader_t *reader, const char *token, mmio_field_t field,
               double *value)
{
    if (field == MMIO_FIELD_INTEGER) {
        int64_t integer;
        if (!s_parse_integer (token, &integer))
            return s_fail_at (reader, reader->line_number,
                              "bad integer value '%s'", token);
        *value = (double) integer;
        return 0;
    }
    char *end;
    double parsed = strtod (token, &end);
    if (end == token || *end != '\0')
        return s_fail_at (reader, reader->line_number, "bad value '%s'",
                          token);
    if (!isfinite (parsed))
        return s_fail_at (reader, reader->line_number,
                          "value '%s' is not finite", token);
    *value = parsed;
    return 0;
}

//  Check the banner's field and symmetry words and store them.
static int
s_parse_field_symmetry (mmio_reader_t *reader, const char *field,
                        const char *symmetry, bool for_vector,
                        mmio_header_t *header)
{
    if (strcasecmp (field, "real") == 0 || strcasecmp (field, "double") == 0)
        header->field = MMIO_FIELD_REAL;
    else
    if (strcasecmp (field, "integer") == 0)
        header->field = MMIO_FIELD_INTEGER;
    else
    if (strcasecmp (field, "pattern") == 0 && !for_vector)
        header->field = MMIO_FIELD_PATTERN;
    else
        return s_fail_at (reader, 1, for_vector
                          ? "unsupported field '%s' (expected real or integer)"
                          : "unsupported field '%s' (expected real, integer "
                            "or pattern)", field);
    if (strcasecmp (symmetry, "general") == 0)
        header->symmetric = false;
    else
    if (strcasecmp (symmetry, "symmetric") == 0 && !for_vector)
        header->symmetric = true;
    else
        return s_fail_at (reader, 1, for_vector
                          ? "unsupported symmetry '%s' (expected general)"
                          : "unsupported symmetry '%s' (expected general or "
                            "symmetric)", symmetry);
    return 0;
}

//  Read and check the banner: coordinate for a matrix, array for a vector.
static int
s_read_banner (mmio_reader_t *reader, bool for_vector, mmio_header_t *header)
{
    int rc = s_read_raw_line (reader);
    if (rc <= 0)
        return rc < 0 ? -1 : s_fail_at (reader, 1, "empty file, expected a "
                                        "%%%%MatrixMarket banner");
    char *tokens [MMIO_TOKENS_MAX];
    int count = s_split (reader->line, tokens);
    if (count != 5 || strcasecmp (tokens [0], "%%MatrixMarket") != 0)
        return s_fail_at (reader, 1, "bad banner: expected '%%%%MatrixMarket "
                          "matrix FORMAT FIELD SYMMETRY'");
    if (strcasecmp (tokens [1], "matrix") != 0)
        return s_fail_at (reader, 1, "unsupported object '%s' (expected "
                          "matrix)", tokens [1]);
    const char *expected = for_vector ? "array" : "coordinate";
    if (strcasecmp (tokens [2], expected) != 0)
        return s_fail_at (reader, 1, "unsupported format '%s' for a %s "
                          "(expected %s)", tokens [2],
                          for_vector ? "vector" : "matrix", expected);
    return s_parse_field_symmetry (reader, tokens [3], tokens [4], for_vector,
                                   header);
}

//  Parse the numbers of the size line into values[count].
static int
s_parse_size_numbers (mmio_reader_t *reader, char **tokens, int count,
                      int64_t *values)
{
    for (int k = 0; k < count; k++) {
        if (!s_parse_integer (tokens [k], &values [k]) || values [k] < 0)
            return s_fail_at (reader, reader->line_number,
                              "bad size line: '%s' is not a non-negative "
                              "integer", tokens [k]);
    }
    if (values [0] < 1 || values [1] < 1)
        return s_fail_at (reader, reader->line_number,
                          "bad size line: dimensions must be positive");
    if (values [0] > INT32_MAX || values [1] > INT32_MAX)
        return s_fail_at (reader, reader->line_number,
                          "bad size line: dimensions exceed %d", INT32_MAX);
    return 0;
}

//  Check the announced entries fit the announced shape.
static int
s_check_coordinate_size (mmio_reader_t *reader, mmio_header_t *header,
                         bool require_square)
{
    if ((header->symmetric || require_square) && header->rows != header->cols)
        return s_fail_at (reader, reader->line_number, header->symmetric
                          ? "symmetric matrix must be square, got %" PRId64
                            " x %" PRId64
                          : "matrix is %" PRId64 " x %" PRId64 ", a linear "
                            "system needs a square matrix",
                          header->rows, header->cols);
    int64_t room = header->symmetric ? header->rows * (header->rows + 1) / 2
                                     : header->rows * header->cols;
    if (header->entries > room)
        return s_fail_at (reader, reader->line_number,
                          "%" PRId64 " entries cannot fit in an %" PRId64
                          " x %" PRId64 " matrix", header->entries,
                          header->rows, header->cols);
    return 0;
}

//  Read and check the size line.
static int
s_read_size_line (mmio_reader_t *reader, bool for_vector,
                  bool require_square, mmio_header_t *header)
{
    int rc = s_read_content_line (reader);
    if (rc <= 0)
        return rc < 0 ? -1 : s_fail_at (reader, reader->line_number + 1,
                                        "missing size line");
    header->size_line = reader->line_number;
    char *tokens [MMIO_TOKENS_MAX];
    int count = s_split (reader->line, tokens);
    int expected = for_vector ? 2 : 3;
    if (count != expected)
        return s_fail_at (reader, reader->line_number, for_vector
                          ? "bad size line: expected 'ROWS COLUMNS'"
                          : "bad size line: expected 'ROWS COLUMNS ENTRIES'");
    int64_t values [3];
    if (s_parse_size_numbers (reader, tokens, count, values))
        return -1;
    header->rows = values [0];
    header->cols = values [1];
    if (for_vector) {
        header->entries = header->rows;
        if (header->cols != 1)
            return s_fail_at (reader, reader->line_number,
                              "array has %" PRId64 " columns, a vector "
                              "needs 1", header->cols);
        return 0;
    }
    header->entries = values [2];
    return s_check_coordinate_size (reader, header, require_square);
}

//  Parse a 1-based index token and check it against [1, limit].
static int
s_parse_index (mmio_reader_t *reader, const char *token, const char *what,
               int64_t limit, int32_t *index)
{
    int64_t value;
    if (!s_parse_integer (token, &value))
        return s_fail_at (reader, reader->line_number, "bad %s index '%s'",
                          what, token);
    if (value < 1 || value > limit)
        return s_fail_at (reader, reader->line_number, "%s index %" PRId64
                          " out of range [1, %" PRId64 "]", what, value, limit);
    *index = (int32_t) (value - 1);
    return 0;
}

//  Parse the current line as one coordinate entry and add it.
static int
s_parse_entry (mmio_reader_t *reader, const mmio_header_t *header,
               csr_builder_t *builder)
{
    char *tokens [MMIO_TOKENS_MAX];
    int count = s_split (reader->line, tokens);
    bool pattern = header->field == MMIO_FIELD_PATTERN;
    if (count != (pattern ? 2 : 3))
        return s_fail_at (reader, reader->line_number, pattern
                          ? "bad entry: expected 'ROW COLUMN'"
                          : "bad entry: expected 'ROW COLUMN VALUE'");
    int32_t row, col;
    double value = 1.0;
    if (s_parse_index (reader, tokens [0], "row", header->rows, &row)
    ||  s_parse_index (reader, tokens [1], "column", header->cols, &col))
        return -1;
    if (header->symmetric && col > row)
        return s_fail_at (reader, reader->line_number, "entry (%" PRId32
                          ", %" PRId32 ") above the diagonal in a symmetric "
                          "file", row + 1, col + 1);
    if (!pattern && s_parse_value (reader, tokens [2], header->field, &value))
        return -1;
    csr_builder_add (builder, row, col, value);
    if (header->symmetric && col != row)
        csr_builder_add (builder, col, row, value);
    return 0;
}

//  Read exactly the announced number of entries.
static int
s_read_entries (mmio_reader_t *reader, const mmio_header_t *header,
                csr_builder_t *builder)
{
    for (int64_t k = 0; k < header->entries; k++) {
        int rc = s_read_content_line (reader);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return s_fail_at (reader, reader->line_number + 1,
                              "unexpected end of file: %" PRId64 " of %"
                              PRId64 " entries read", k, header->entries);
        if (s_parse_entry (reader, header, builder))
            return -1;
    }
    return 0;
}

//  Check nothing but blanks and comments follows the last entry.
static int
s_expect_end (mmio_reader_t *reader, const mmio_header_t *header)
{
    int rc = s_read_content_line (reader);
    if (rc < 0)
        return -1;
    if (rc > 0)
        return s_fail_at (reader, reader->line_number, "too many entries: "
                          "the size line announced %" PRId64, header->entries);
    return 0;
}

//  Read a coordinate matrix; on success also return its header.
static int
s_read_matrix (const char *path, bool require_square, csr_t **A_p,
               mmio_header_t *header, char *error, size_t error_size)
{
    mmio_reader_t reader;
    if (s_open (&reader, path, error, error_size))
        return -1;
    csr_builder_t *builder = NULL;
    int rc = s_read_banner (&reader, false, header);
    if (rc == 0)
        rc = s_read_size_line (&reader, false, require_square, header);
    if (rc == 0) {
        int64_t hint = header->entries < MMIO_INITIAL_ENTRIES
                     ? header->entries : MMIO_INITIAL_ENTRIES;
        builder = csr_builder_new ((int32_t) header->rows,
                                   (int32_t) header->cols,
                                   header->symmetric ? 2 * hint : hint);
        rc = s_read_entries (&reader, header, builder);
    }
    if (rc == 0)
        rc = s_expect_end (&reader, header);
    if (rc == 0)
        *A_p = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    s_close (&reader);
    return rc;
}

//  Read the next value line (entry k of the announced count) into *value.
static int
s_read_value_line (mmio_reader_t *reader, const mmio_header_t *header,
                   int64_t k, double *value)
{
    int rc = s_read_content_line (reader);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return s_fail_at (reader, reader->line_number + 1, "unexpected end "
                          "of file: %" PRId64 " of %" PRId64 " entries read",
                          k, header->entries);
    char *tokens [MMIO_TOKENS_MAX];
    if (s_split (reader->line, tokens) != 1)
        return s_fail_at (reader, reader->line_number,
                          "bad entry: expected one value");
    return s_parse_value (reader, tokens [0], header->field, value);
}

//  Read the announced number of array values, one per line.
static int
s_read_values (mmio_reader_t *reader, const mmio_header_t *header,
               double **values_p)
{
    int64_t capacity = header->entries < MMIO_INITIAL_ENTRIES
                     ? header->entries : MMIO_INITIAL_ENTRIES;
    double *values = solvers_malloc ((size_t) capacity * sizeof (double));
    for (int64_t k = 0; k < header->entries; k++) {
        if (k == capacity) {
            //  Grow with the values actually present, up to the announced
            //  count, so a lying size line cannot reserve memory.
            capacity = 2 * capacity < header->entries ? 2 * capacity
                                                      : header->entries;
            values = solvers_realloc (values, (size_t) capacity
                                              * sizeof (double));
        }
        if (s_read_value_line (reader, header, k, &values [k])) {
            free (values);
            return -1;
        }
    }
    *values_p = values;
    return 0;
}

//  Read an array vector; on success also return its header.
static int
s_read_vector (const char *path, double **x_p, mmio_header_t *header,
               char *error, size_t error_size)
{
    mmio_reader_t reader;
    if (s_open (&reader, path, error, error_size))
        return -1;
    double *values = NULL;
    int rc = s_read_banner (&reader, true, header);
    if (rc == 0)
        rc = s_read_size_line (&reader, true, false, header);
    if (rc == 0)
        rc = s_read_values (&reader, header, &values);
    if (rc == 0)
        rc = s_expect_end (&reader, header);
    if (rc == 0)
        *x_p = values;
    else
        free (values);
    s_close (&reader);
    return rc;
}

//  --------------------------------------------------------------------------
//  Read a coordinate matrix.

int
mmio_read_matrix (const char *path, csr_t **A_p, char *error,
                  size_t error_size)
{
    assert (path);
    assert (A_p);
    mmio_header_t header;
    return s_read_matrix (path, false, A_p, &header, error, error_size);
}

//  --------------------------------------------------------------------------
//  Read an array vector.

int
mmio_read_vector (const char *path, double **x_p, int32_t *n_p, char *error,
                  size_t error_size)
{
    assert (path);
    assert (x_p);
    assert (n_p);
    mmio_header_t header;
    if (s_read_vector (path, x_p, &header, error, error_size))
        return -1;
    *n_p = (int32_t) header.rows;
    return 0;
}

//  --------------------------------------------------------------------------
//  Read a square matrix and its right-hand side (or b = A * 1).

int
mmio_read_system (const char *matrix_path, const char *rhs_path, csr_t **A_p,
                  double **b_p, char *error, size_t error_size)
{
    assert (matrix_path);
    assert (A_p);
    assert (b_p);
    csr_t *A = NULL;
    mmio_header_t header;
    if (s_read_matrix (matrix_path, true, &A, &header, error, error_size))
        return -1;
    double *b = NULL;
    if (!rhs_path) {
        b = solvers_malloc ((size_t) A->nrows * sizeof (double));
        problems_rhs_ones_solution (A, b);
    }
    else
    if (s_read_vector (rhs_path, &b, &header, error, error_size)) {
        csr_destroy (&A);
        return -1;
    }
    else
    if (header.rows != A->nrows) {
        solvers_set_error (error, error_size, "%s:%" PRId64 ": right-hand "
                           "side has %" PRId64 " entries but the matrix has %"
                           PRId32 " rows", rhs_path, header.size_line,
                           header.rows, A->nrows);
        free (b);
        csr_destroy (&A);
        return -1;
    }
    *A_p = A;
    *b_p = b;
    return 0;
}

//  Close a file being written and report any failure met on the way.
static int
s_finish_write (FILE *file, const char *path, char *error, size_t error_size)
{
    bool failed = ferror (file) != 0;
    int saved = errno;
    if (fclose (file) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (failed) {
        solvers_set_error (error, error_size, "%s: write failed: %s", path,
                           strerror (saved));
        return -1;
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  Write A as "coordinate real general".

int
mmio_write_matrix (const char *path, const csr_t *A, char *error,
                   size_t error_size)
{
    assert (path);
    assert (A);
    FILE *file = fopen (path, "w");
    if (!file) {
        solvers_set_error (error, error_size, "%s: cannot create: %s", path,
                           strerror (errno));
        return -1;
    }
    fprintf (file, "%%%%MatrixMarket matrix coordinate real general\n"
                   "%% written by the Jace solvers library\n"
                   "%" PRId32 " %" PRId32 " %" PRId64 "\n",
             A->nrows, A->ncols, A->nnz);
    for (int32_t i = 0; i < A->nrows; i++)
        for (int64_t k = A->row_ptr [i]; k < A->row_ptr [i + 1]; k++)
            fprintf (file, "%" PRId32 " %" PRId32 " %.17g\n", i + 1,
                     A->col_idx [k] + 1, A->values [k]);
    return s_finish_write (file, path, error, error_size);
}

//  --------------------------------------------------------------------------
//  Write x[n] as an "array real general" n x 1 matrix.

int
mmio_write_vector (const char *path, const double *x, int32_t n, char *error,
                   size_t error_size)
{
    assert (path);
    assert (n >= 0);
    FILE *file = fopen (path, "w");
    if (!file) {
        solvers_set_error (error, error_size, "%s: cannot create: %s", path,
                           strerror (errno));
        return -1;
    }
    fprintf (file, "%%%%MatrixMarket matrix array real general\n"
                   "%% written by the Jace solvers library\n"
                   "%" PRId32 " 1\n", n);
    for (int32_t i = 0; i < n; i++)
        fprintf (file, "%.17g\n", x [i]);
    return s_finish_write (file, path, error, error_size);
}
