/*  =========================================================================
    mmio - Matrix Market files: sparse matrices and dense vectors

    The reader streams the file through one fixed buffer and never holds
    its text.  A matrix is read in two passes straight into CSR arrays:

    1. count: check every line (the first error in file order is the one
       reported) and count each row's entries, symmetric mirrors included;
    2. fill: seek back to the first entry and put each entry at its row's
       cursor in arrays allocated from the counts of pass 1, so from the
       file's content, never from its size line.

    Rows are then sorted by column and duplicates summed in place.  Peak
    memory per matrix is the CSR itself, 8 (rows + 1) + 12 entries bytes
    (entries as stored after symmetric expansion, duplicates included until
    they are summed), plus the 1 MiB buffer: no text, no triplets, no second
    copy.  A single pass into growing triplets took 3.5x the CSR size.

    Every line is checked in pass 1; pass 2 parses the same bytes again, and
    a digest of the (row, column) sequence proves the file did not change
    between the passes.  Values in plain decimal form convert by Clinger's
    exact fast path, the rest through strtod; both give strtod's bits.
    =========================================================================
*/
#include "solvers.h"
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

//  Most tokens on a header line we accept (banner: 5), plus one to detect
//  extra
#define MMIO_TOKENS_MAX     6
//  Bytes read at a time; a content line (not a comment) must fit in it
#define MMIO_BUFFER_SIZE    (1 << 20)
//  Longest part of a bad token quoted in a reason
#define MMIO_TOKEN_SHOWN    64
//  Rows at most this long are sorted by insertion, longer ones by heapsort
#define MMIO_INSERTION_SORT_MAX  32
//  Bytes of the shortest entry line: "1 1 1\n", pattern "1 1\n", array "1\n"
#define MMIO_ENTRY_MIN_BYTES    6
#define MMIO_PATTERN_MIN_BYTES  4
#define MMIO_VALUE_MIN_BYTES    2
//  Largest integer a double holds exactly, and so the fast path's limit
#define MMIO_EXACT_MAX      (UINT64_C (1) << 53)

//  Clinger's fast path relies on each double operation rounding once
#if defined (FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#   define MMIO_FAST_PATH   1
#else
#   define MMIO_FAST_PATH   0
#endif

//  Powers of ten that doubles hold exactly
static const double s_powers_of_ten [] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
    1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};
#define MMIO_EXACT_POWER_MAX  22

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

//  One coordinate entry, 0-based
typedef struct {
    int32_t row;                //  Row index
    int32_t col;                //  Column index
    double value;               //  Value (1 for pattern files)
} mmio_entry_t;

//  A file being read, line by line, through one buffer
typedef struct {
    const char *path;           //  File name for messages; borrowed
    int fd;                     //  Open descriptor, -1 when closed
    int64_t file_size;          //  Size of the regular file
    char *buffer;               //  MMIO_BUFFER_SIZE + 1 bytes (room for NUL)
    size_t begin;               //  First byte not yet consumed
    size_t end;                 //  End of the bytes read
    int64_t buffer_offset;      //  File offset of buffer [0]
    int64_t nul_offset;         //  File offset of the first NUL read, or -1
    bool at_eof;                //  read () returned 0
    bool skipping;              //  Inside a comment too long for the buffer
    char *line;                 //  Current line, NUL-terminated, no newline
    size_t length;              //  Length of the current line
    int64_t line_number;        //  Number of the current line, from 1
    char *error;                //  Caller's reason buffer, may be NULL
    size_t error_size;          //  Size of the caller's buffer
    bool overclaimed;           //  The size line announced more entries
                                //  than the file's bytes can hold
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

//  What a file that does not start as text starts as, from its first
//  bytes, or NULL: a compressed file or a byte order mark, so that the
//  user hears what to do instead of "a NUL byte" or "bad banner".
static const char *
s_not_text (const char *bytes, size_t length)
{
    static const struct { const char *magic; size_t size; const char *what; }
    kinds [] = {
        { "\x1f\x8b", 2, "is compressed with gzip: gunzip it first" },
        { "BZh", 3, "is compressed with bzip2: bunzip2 it first" },
        { "\xfd" "7zXZ", 5, "is compressed with xz: unxz it first" },
        { "\x28\xb5\x2f\xfd", 4, "is compressed with zstd: unzstd it first" },
        { "PK\x03\x04", 4, "is a zip archive: unzip it first" },
        { "\xef\xbb\xbf", 3, "begins with a UTF-8 byte order mark: remove "
          "it (the banner must be the first bytes)" }
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds [0]; i++)
        if (length >= kinds [i].size
        &&  memcmp (bytes, kinds [i].magic, kinds [i].size) == 0)
            return kinds [i].what;
    return NULL;
}

//  Quoted length of a bad token in a reason: enough to recognise it, short
//  enough that a megabyte of digits does not become the message.
static int
s_shown (size_t length)
{
    return (int) (length < MMIO_TOKEN_SHOWN ? length : MMIO_TOKEN_SHOWN);
}

static int
s_open (mmio_reader_t *reader, const char *path, char *error,
        size_t error_size)
{
    memset (reader, 0, sizeof (*reader));
    reader->path = path;
    reader->error = error;
    reader->error_size = error_size;
    reader->nul_offset = -1;
    //  Without blocking: a FIFO (or device) nobody writes to held the
    //  spawner in open() for good, before the check below could say what
    //  it is
    reader->fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (reader->fd < 0) {
        solvers_set_error (error, error_size, "%s: cannot open: %s", path,
                           strerror (errno));
        return -1;
    }
    //  Two passes need a file we can seek in, and its size bounds what a
    //  size line may announce.
    struct stat status;
    if (fstat (reader->fd, &status) != 0 || !S_ISREG (status.st_mode)) {
        solvers_set_error (error, error_size, "%s: not a regular file",
                           path);
        close (reader->fd);
        reader->fd = -1;
        return -1;
    }
    fcntl (reader->fd, F_SETFL, fcntl (reader->fd, F_GETFL) & ~O_NONBLOCK);
    reader->file_size = (int64_t) status.st_size;
    posix_fadvise (reader->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    reader->buffer = solvers_malloc (MMIO_BUFFER_SIZE + 1);
    return 0;
}

static void
s_close (mmio_reader_t *reader)
{
    if (reader->fd >= 0)
        close (reader->fd);
    free (reader->buffer);
    reader->fd = -1;
    reader->buffer = NULL;
}

//  Go to a file offset known to start line line_number + 1.
static int
s_seek (mmio_reader_t *reader, int64_t offset, int64_t line_number)
{
    if (lseek (reader->fd, (off_t) offset, SEEK_SET) != (off_t) offset)
        return s_fail_at (reader, line_number + 1, "cannot seek: %s",
                          strerror (errno));
    reader->begin = 0;
    reader->end = 0;
    reader->buffer_offset = offset;
    reader->nul_offset = -1;
    reader->at_eof = false;
    reader->skipping = false;
    reader->line_number = line_number;
    return 0;
}

//  File offset of the next unconsumed byte.
static int64_t
s_offset (const mmio_reader_t *reader)
{
    return reader->buffer_offset + (int64_t) reader->begin;
}

//  Move the unconsumed bytes to the front and read more after them.
//  Returns 0 (at_eof set at end of file) or -1 on a read error.
static int
s_fill (mmio_reader_t *reader)
{
    if (reader->begin > 0) {
        memmove (reader->buffer, reader->buffer + reader->begin,
                 reader->end - reader->begin);
        reader->buffer_offset += (int64_t) reader->begin;
        reader->end -= reader->begin;
        reader->begin = 0;
    }
    ssize_t got;
    do
        got = read (reader->fd, reader->buffer + reader->end,
                    MMIO_BUFFER_SIZE - reader->end);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return s_fail_at (reader, reader->line_number + 1, "read error: %s",
                          strerror (errno));
    if (got == 0)
        reader->at_eof = true;
    else
    if (reader->nul_offset < 0) {
        //  One memchr per block finds NUL bytes at memory speed; the line
        //  that holds the first one is refused when it is reached.
        char *nul = memchr (reader->buffer + reader->end, '\0',
                            (size_t) got);
        if (nul)
            reader->nul_offset = reader->buffer_offset
                               + (int64_t) (nul - reader->buffer);
    }
    reader->end += (size_t) got;
    return 0;
}

//  Drop the rest of a comment line too long for the buffer.
static int
s_skip_rest_of_line (mmio_reader_t *reader)
{
    while (reader->skipping) {
        char *newline = memchr (reader->buffer + reader->begin, '\n',
                                reader->end - reader->begin);
        if (newline) {
            reader->begin = (size_t) (newline - reader->buffer) + 1;
            reader->skipping = false;
        }
        else {
            reader->begin = reader->end;
            if (reader->at_eof)
                reader->skipping = false;
            else
            if (s_fill (reader))
                return -1;
        }
    }
    return 0;
}

//  Read the next physical line.  Returns 1, 0 at end of file, -1 on error.
//  A comment longer than the buffer comes back cut to its first megabyte;
//  any other line that long is refused.
static int
s_read_raw_line (mmio_reader_t *reader)
{
    if (s_skip_rest_of_line (reader))
        return -1;
    size_t line_end, next;
    while (true) {
        char *start = reader->buffer + reader->begin;
        char *newline = memchr (start, '\n', reader->end - reader->begin);
        if (newline) {
            line_end = (size_t) (newline - reader->buffer);
            next = line_end + 1;
            break;
        }
        if (reader->at_eof) {
            if (reader->begin == reader->end)
                return 0;
            line_end = next = reader->end;
            break;
        }
        if (reader->begin == 0 && reader->end == MMIO_BUFFER_SIZE) {
            size_t blanks = strspn (start, " \t");
            if (blanks < reader->end && start [blanks] == '%') {
                line_end = next = reader->end;
                reader->skipping = true;
                break;
            }
            return s_fail_at (reader, reader->line_number + 1, "line is "
                              "longer than %d bytes", MMIO_BUFFER_SIZE);
        }
        if (s_fill (reader))
            return -1;
    }
    reader->line_number++;
    if (reader->nul_offset >= 0
    &&  reader->nul_offset < reader->buffer_offset + (int64_t) line_end) {
        const char *what = reader->line_number == 1
            ? s_not_text (reader->buffer + reader->begin,
                          line_end - reader->begin) : NULL;
        return what ? s_fail_at (reader, 1, "the file %s", what)
                    : s_fail_at (reader, reader->line_number,
                                 "line contains a NUL byte");
    }
    char *line = reader->buffer + reader->begin;
    size_t length = line_end - reader->begin;
    while (length > 0 && (line [length - 1] == '\n'
                      ||  line [length - 1] == '\r'))
        length--;
    line [length] = '\0';
    reader->line = line;
    reader->length = length;
    reader->begin = next;
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

//  Find the next blank-separated token after *cursor, without copying.
//  Returns false at the end of the line.
static inline bool
s_next_token (const char **cursor, const char **token, size_t *length)
{
    const char *scan = *cursor;
    while (*scan == ' ' || *scan == '\t')
        scan++;
    if (*scan == '\0')
        return false;
    *token = scan;
    while (*scan != ' ' && *scan != '\t' && *scan != '\0')
        scan++;
    *length = (size_t) (scan - *token);
    *cursor = scan;
    return true;
}

//  Parse token[length] as a whole decimal integer, with strtoll's rules
//  (optional sign, digits, no overflow) but without needing a NUL.
static bool
s_parse_integer (const char *token, size_t length, int64_t *value)
{
    size_t at = 0;
    bool negative = false;
    if (length > 0 && (token [0] == '+' || token [0] == '-')) {
        negative = token [0] == '-';
        at = 1;
    }
    if (at == length)
        return false;
    uint64_t magnitude = 0;
    for (; at < length; at++) {
        unsigned digit = (unsigned) ((unsigned char) token [at] - '0');
        if (digit > 9 || magnitude > (UINT64_MAX - digit) / 10)
            return false;
        magnitude = magnitude * 10 + digit;
    }
    if (magnitude > (uint64_t) INT64_MAX + (negative ? 1 : 0))
        return false;
    *value = negative ? -(int64_t) (magnitude - 1) - 1 : (int64_t) magnitude;
    return true;
}

//  Clinger's fast path (1990): when the decimal digits form an integer
//  m <= 2^53 and the power of ten p is within [-22, 22], both m and 10^|p|
//  are exact doubles, so one IEEE multiplication or division rounds the
//  true value once, to the double strtod returns, bit for bit.  Returns
//  false for any other form (more digits, larger exponents, hex, inf,
//  nan), which strtod then handles.
static bool
s_parse_plain_decimal (const char *token, size_t length, double *value)
{
    if (!MMIO_FAST_PATH)
        return false;
    size_t at = 0;
    bool negative = false;
    if (length > 0 && (token [0] == '+' || token [0] == '-')) {
        negative = token [0] == '-';
        at = 1;
    }
    uint64_t mantissa = 0;
    int64_t power = 0;
    int digits = 0;
    bool point = false;
    for (; at < length; at++) {
        char c = token [at];
        if (c == '.' && !point) {
            point = true;
            continue;
        }
        unsigned digit = (unsigned) ((unsigned char) c - '0');
        if (digit > 9)
            break;
        if (mantissa > (MMIO_EXACT_MAX - digit) / 10)
            return false;
        mantissa = mantissa * 10 + digit;
        power -= point;
        digits++;
    }
    if (digits == 0)
        return false;
    if (at < length && (token [at] == 'e' || token [at] == 'E')) {
        at++;
        bool negative_exponent = false;
        if (at < length && (token [at] == '+' || token [at] == '-')) {
            negative_exponent = token [at] == '-';
            at++;
        }
        int64_t exponent = 0;
        int exponent_digits = 0;
        for (; at < length && exponent_digits < 5; at++, exponent_digits++) {
            unsigned digit = (unsigned) ((unsigned char) token [at] - '0');
            if (digit > 9)
                return false;
            exponent = exponent * 10 + digit;
        }
        if (exponent_digits == 0)
            return false;
        power += negative_exponent ? -exponent : exponent;
    }
    if (at != length || power < -MMIO_EXACT_POWER_MAX
    ||  power > MMIO_EXACT_POWER_MAX)
        return false;
    double result = (double) mantissa;
    if (power < 0)
        result /= s_powers_of_ten [-power];
    else
        result *= s_powers_of_ten [power];
    *value = negative ? -result : result;
    return true;
}

//  Parse one value of the given field; NaN and infinities are refused.
//  The token ends at a blank or at the line's NUL.
static int
s_parse_value (mmio_reader_t *reader, const char *token, size_t length,
               mmio_field_t field, double *value)
{
    if (field == MMIO_FIELD_INTEGER) {
        int64_t integer;
        if (!s_parse_integer (token, length, &integer))
            return s_fail_at (reader, reader->line_number,
                              "bad integer value '%.*s'", s_shown (length),
                              token);
        *value = (double) integer;
        return 0;
    }
    if (s_parse_plain_decimal (token, length, value))
        return 0;
    //  strtod reads C's hexadecimal floats; Matrix Market's are decimal.
    size_t sign = length > 0 && (token [0] == '+' || token [0] == '-');
    if (length > sign + 1 && token [sign] == '0'
    &&  (token [sign + 1] == 'x' || token [sign + 1] == 'X'))
        return s_fail_at (reader, reader->line_number, "bad value '%.*s' "
                          "(hexadecimal: Matrix Market values are decimal)",
                          s_shown (length), token);
    char *end;
    double parsed = strtod (token, &end);
    if (end != token + length || length == 0)
        return s_fail_at (reader, reader->line_number, "bad value '%.*s'",
                          s_shown (length), token);
    if (!isfinite (parsed))
        return s_fail_at (reader, reader->line_number,
                          "value '%.*s' is not finite", s_shown (length),
                          token);
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
    const char *what = count > 0 ? s_not_text (tokens [0],
                                               strlen (tokens [0])) : NULL;
    if (what)
        return s_fail_at (reader, 1, "the file %s", what);
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
        if (!s_parse_integer (tokens [k], strlen (tokens [k]), &values [k])
        ||  values [k] < 0)
            return s_fail_at (reader, reader->line_number,
                              "bad size line: '%.*s' is not a non-negative "
                              "integer", s_shown (strlen (tokens [k])),
                              tokens [k]);
    }
    if (values [0] < 1 || values [1] < 1)
        return s_fail_at (reader, reader->line_number,
                          "bad size line: dimensions must be positive");
    if (values [0] > INT32_MAX || values [1] > INT32_MAX)
        return s_fail_at (reader, reader->line_number,
                          "bad size line: dimensions exceed %d, the largest "
                          "32-bit index", INT32_MAX);
    return 0;
}

//  Check the announced entries fit in the bytes that follow the size line:
//  each takes at least min_bytes ("1 1 1\n"), the last one maybe without
//  its newline.  A size line can then reserve no more than a few times
//  the file's own size, whatever it claims.
static int
s_check_file_holds (mmio_reader_t *reader, const mmio_header_t *header,
                    int64_t min_bytes)
{
    int64_t remaining = reader->file_size - s_offset (reader);
    int64_t most = (remaining + 1) / min_bytes;
    reader->overclaimed = header->entries > most;
    if (reader->overclaimed)
        return s_fail_at (reader, reader->line_number, "size line announces "
                          "%" PRId64 " entries but the %" PRId64 " bytes "
                          "after it hold at most %" PRId64 " (an entry takes "
                          "at least %" PRId64 " bytes)", header->entries,
                          remaining, most, min_bytes);
    return 0;
}

//  Check the announced entries fit the announced shape, and, for a linear
//  system, that they can give every row an entry.
static int
s_check_coordinate_size (mmio_reader_t *reader, mmio_header_t *header,
                         bool for_system)
{
    if ((header->symmetric || for_system) && header->rows != header->cols)
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
                          "%" PRId64 " entries cannot fit in a %" PRId64
                          " x %" PRId64 " matrix", header->entries,
                          header->rows, header->cols);
    //  A stored off-diagonal entry of a symmetric file also fills the
    //  mirrored row, so it may cover two rows.
    int64_t covered = header->symmetric ? 2 * header->entries
                                        : header->entries;
    if (for_system && header->rows > covered)
        return s_fail_at (reader, reader->line_number, "%" PRId64 " rows "
                          "but %" PRId64 " entries fill at most %" PRId64
                          ": a linear system needs an entry in every row",
                          header->rows, header->entries, covered);
    return s_check_file_holds (reader, header,
                               header->field == MMIO_FIELD_PATTERN
                               ? MMIO_PATTERN_MIN_BYTES
                               : MMIO_ENTRY_MIN_BYTES);
}

//  Read and check the size line.
static int
s_read_size_line (mmio_reader_t *reader, bool for_vector, bool for_system,
                  mmio_header_t *header)
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
        return s_check_file_holds (reader, header, MMIO_VALUE_MIN_BYTES);
    }
    header->entries = values [2];
    return s_check_coordinate_size (reader, header, for_system);
}

//  Parse a 1-based index token and check it against [1, limit].
static int
s_parse_index (mmio_reader_t *reader, const char *token, size_t length,
               const char *what, int64_t limit, int32_t *index)
{
    int64_t value;
    if (!s_parse_integer (token, length, &value))
        return s_fail_at (reader, reader->line_number, "bad %s index '%.*s'",
                          what, s_shown (length), token);
    if (value < 1 || value > limit)
        return s_fail_at (reader, reader->line_number, "%s index %" PRId64
                          " out of range [1, %" PRId64 "]", what, value, limit);
    *index = (int32_t) (value - 1);
    return 0;
}

//  Parse the current line as one coordinate entry.
static int
s_parse_entry (mmio_reader_t *reader, const mmio_header_t *header,
               mmio_entry_t *entry)
{
    const char *tokens [4];
    size_t lengths [4];
    int count = 0;
    const char *cursor = reader->line;
    while (count < 4 && s_next_token (&cursor, &tokens [count],
                                      &lengths [count]))
        count++;
    bool pattern = header->field == MMIO_FIELD_PATTERN;
    if (count != (pattern ? 2 : 3))
        return s_fail_at (reader, reader->line_number, pattern
                          ? "bad entry: expected 'ROW COLUMN'"
                          : "bad entry: expected 'ROW COLUMN VALUE'");
    if (s_parse_index (reader, tokens [0], lengths [0], "row", header->rows,
                       &entry->row)
    ||  s_parse_index (reader, tokens [1], lengths [1], "column",
                       header->cols, &entry->col))
        return -1;
    if (header->symmetric && entry->col > entry->row)
        return s_fail_at (reader, reader->line_number, "entry (%" PRId32
                          ", %" PRId32 ") above the diagonal in a symmetric "
                          "file", entry->row + 1, entry->col + 1);
    entry->value = 1.0;
    if (!pattern && s_parse_value (reader, tokens [2], lengths [2],
                                   header->field, &entry->value))
        return -1;
    return 0;
}

//  Fold one (row, column) into the digest that tells pass 2 it read what
//  pass 1 counted (FNV-1a's prime over 64-bit words).
static inline uint64_t
s_digest (uint64_t digest, const mmio_entry_t *entry)
{
    uint64_t word = (uint64_t) (uint32_t) entry->row << 32
                  | (uint32_t) entry->col;
    return (digest ^ word) * UINT64_C (0x100000001b3);
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

//  One pass over the announced entries and the end of the file.  Pass 1
//  (A NULL) counts each row's entries into counts [row + 1]; pass 2 puts
//  each entry at its row's cursor A->row_ptr [row], never past A->nnz even
//  if the file changed since pass 1.  Both return the digest of the
//  entries' positions.
static int
s_scan_entries (mmio_reader_t *reader, const mmio_header_t *header,
                int64_t *counts, csr_t *A, uint64_t *digest_p)
{
    uint64_t digest = UINT64_C (0xcbf29ce484222325);
    for (int64_t k = 0; k < header->entries; k++) {
        int rc = s_read_content_line (reader);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return s_fail_at (reader, reader->line_number + 1,
                              "unexpected end of file: %" PRId64 " of %"
                              PRId64 " entries read", k, header->entries);
        mmio_entry_t entry;
        if (s_parse_entry (reader, header, &entry))
            return -1;
        digest = s_digest (digest, &entry);
        bool mirror = header->symmetric && entry.col != entry.row;
        if (!A) {
            counts [entry.row + 1]++;
            if (mirror)
                counts [entry.col + 1]++;
            continue;
        }
        int64_t at = A->row_ptr [entry.row]++;
        if (at >= A->nnz)
            return s_fail_at (reader, reader->line_number, "file changed "
                              "while it was being read");
        A->col_idx [at] = entry.col;
        A->values [at] = entry.value;
        if (mirror) {
            at = A->row_ptr [entry.col]++;
            if (at >= A->nnz)
                return s_fail_at (reader, reader->line_number, "file "
                                  "changed while it was being read");
            A->col_idx [at] = entry.row;
            A->values [at] = entry.value;
        }
    }
    *digest_p = digest;
    return s_expect_end (reader, header);
}

//  Swap entries a and b of a row's parallel arrays.
static inline void
s_swap (int32_t *cols, double *values, int64_t a, int64_t b)
{
    int32_t col = cols [a];
    cols [a] = cols [b];
    cols [b] = col;
    double value = values [a];
    values [a] = values [b];
    values [b] = value;
}

//  Restore the max-heap property below root in the first count entries.
static void
s_sift_down (int32_t *cols, double *values, int64_t root, int64_t count)
{
    while (2 * root + 1 < count) {
        int64_t child = 2 * root + 1;
        if (child + 1 < count && cols [child + 1] > cols [child])
            child++;
        if (cols [root] >= cols [child])
            return;
        s_swap (cols, values, root, child);
        root = child;
    }
}

//  Sort one row by column, values alongside, in place.  Rows written in
//  order cost one check.  Short rows use insertion sort, which is stable,
//  so duplicates are summed in file order; long unsorted rows use heapsort,
//  which needs no memory (a row may hold most of the matrix) but may sum
//  three or more duplicates of one entry in another order.
static void
s_sort_row (int32_t *cols, double *values, int64_t count)
{
    int64_t k = 1;
    while (k < count && cols [k - 1] <= cols [k])
        k++;
    if (k >= count)
        return;
    if (count <= MMIO_INSERTION_SORT_MAX) {
        for (k = 1; k < count; k++) {
            int32_t col = cols [k];
            double value = values [k];
            int64_t slot = k;
            while (slot > 0 && cols [slot - 1] > col) {
                cols [slot] = cols [slot - 1];
                values [slot] = values [slot - 1];
                slot--;
            }
            cols [slot] = col;
            values [slot] = value;
        }
        return;
    }
    for (int64_t root = count / 2 - 1; root >= 0; root--)
        s_sift_down (cols, values, root, count);
    for (int64_t last = count - 1; last > 0; last--) {
        s_swap (cols, values, 0, last);
        s_sift_down (cols, values, 0, last);
    }
}

//  Sort every row of A and sum equal columns, compacting the arrays in
//  place; they shrink when duplicates were summed.
static void
s_sort_and_sum (csr_t *A)
{
    int64_t written = 0;
    int64_t begin = 0;
    for (int32_t i = 0; i < A->nrows; i++) {
        int64_t end = A->row_ptr [i + 1];
        s_sort_row (A->col_idx + begin, A->values + begin, end - begin);
        int64_t row_start = written;
        for (int64_t k = begin; k < end; k++) {
            if (written > row_start
            &&  A->col_idx [written - 1] == A->col_idx [k])
                A->values [written - 1] += A->values [k];
            else {
                A->col_idx [written] = A->col_idx [k];
                A->values [written] = A->values [k];
                written++;
            }
        }
        A->row_ptr [i + 1] = written;
        begin = end;
    }
    if (written < A->nnz) {
        A->nnz = written;
        A->col_idx = solvers_realloc (A->col_idx,
                                      (size_t) written * sizeof (int32_t));
        A->values = solvers_realloc (A->values,
                                     (size_t) written * sizeof (double));
    }
}

//  Read the entries after the size line in two passes: count, allocate
//  the CSR arrays from the counts, seek back, fill, sort.
static int
s_read_entries (mmio_reader_t *reader, const mmio_header_t *header,
                csr_t **A_p)
{
    int64_t body = s_offset (reader);
    int64_t body_line = reader->line_number;
    //  The row offsets take 8 bytes per announced row, empty or not, and
    //  are the only memory a size line sizes.  mmio_read_system has
    //  checked there are enough entries to fill each row; a plain matrix
    //  may have empty rows, so its allocation may fail, which is reported.
    size_t rows = (size_t) header->rows;
    int64_t *counts = calloc (rows + 1, sizeof (int64_t));
    if (!counts)
        return s_fail_at (reader, header->size_line, "cannot allocate the "
                          "row offsets of %zu rows (%zu bytes)", rows,
                          (rows + 1) * sizeof (int64_t));
    uint64_t digest;
    if (s_scan_entries (reader, header, counts, NULL, &digest)) {
        free (counts);
        return -1;
    }
    for (size_t i = 0; i < rows; i++)
        counts [i + 1] += counts [i];
    csr_t *A = solvers_calloc (1, sizeof (csr_t));
    A->nrows = (int32_t) header->rows;
    A->ncols = (int32_t) header->cols;
    A->nnz = counts [rows];
    A->row_ptr = counts;
    A->col_idx = solvers_malloc ((size_t) A->nnz * sizeof (int32_t));
    A->values = solvers_malloc ((size_t) A->nnz * sizeof (double));
    //  row_ptr [i] is row i's start and becomes its fill cursor, ending at
    //  row i + 1's start; shifting by one then gives the offsets.
    uint64_t check;
    if (s_seek (reader, body, body_line)
    ||  s_scan_entries (reader, header, NULL, A, &check)) {
        csr_destroy (&A);
        return -1;
    }
    if (check != digest) {
        csr_destroy (&A);
        return s_fail_at (reader, reader->line_number, "file changed while "
                          "it was being read");
    }
    memmove (A->row_ptr + 1, A->row_ptr, rows * sizeof (int64_t));
    A->row_ptr [0] = 0;
    s_sort_and_sum (A);
    *A_p = A;
    return 0;
}

//  Check a system's matrix has an entry in every row.
static int
s_check_rows_filled (mmio_reader_t *reader, const mmio_header_t *header,
                     const csr_t *A)
{
    for (int32_t i = 0; i < A->nrows; i++)
        if (A->row_ptr [i + 1] == A->row_ptr [i])
            return s_fail_at (reader, header->size_line, "row %" PRId32
                              " has no entries: a linear system needs one in "
                              "every row", i + 1);
    return 0;
}

//  The size line announced more entries than the file can hold: a line
//  that is not an entry (one missing its value) is the likelier fault,
//  so read the entries there are, without keeping them, and report the
//  first that is wrong; the size line's own reason stays if every line
//  reads well.
static int s_parse_value_line (mmio_reader_t *reader,
                               const mmio_header_t *header, double *value);

static void
s_pin_overclaim (mmio_reader_t *reader, const mmio_header_t *header,
                 bool coordinate)
{
    char *overclaim = reader->error ? strdup (reader->error) : NULL;
    bool pinned = false;        //  A line that is wrong said so
    for (int64_t k = 0; k < header->entries && !pinned; k++) {
        int rc = s_read_content_line (reader);
        if (rc == 0)
            break;              //  Every line read well: the size line
        mmio_entry_t entry;
        double value;
        pinned = rc < 0
              || (coordinate ? s_parse_entry (reader, header, &entry)
                             : s_parse_value_line (reader, header, &value));
    }
    if (!pinned && overclaim && reader->error)
        snprintf (reader->error, reader->error_size, "%s", overclaim);
    free (overclaim);
}

//  Read a coordinate matrix; on success also return its header.  A
//  system's matrix must be square with an entry in every row.
static int
s_read_matrix (const char *path, bool for_system, csr_t **A_p,
               mmio_header_t *header, char *error, size_t error_size)
{
    mmio_reader_t reader;
    if (s_open (&reader, path, error, error_size))
        return -1;
    csr_t *A = NULL;
    int rc = s_read_banner (&reader, false, header);
    if (rc == 0)
        rc = s_read_size_line (&reader, false, for_system, header);
    if (rc && reader.overclaimed)
        s_pin_overclaim (&reader, header, true);
    if (rc == 0)
        rc = s_read_entries (&reader, header, &A);
    if (rc == 0 && for_system)
        rc = s_check_rows_filled (&reader, header, A);
    if (rc == 0)
        *A_p = A;
    else
        csr_destroy (&A);
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
    return s_parse_value_line (reader, header, value);
}

//  Parse the current line as one value.
static int
s_parse_value_line (mmio_reader_t *reader, const mmio_header_t *header,
                    double *value)
{
    const char *cursor = reader->line;
    const char *token = NULL, *extra;
    size_t length = 0, extra_length;
    s_next_token (&cursor, &token, &length);
    if (s_next_token (&cursor, &extra, &extra_length))
        return s_fail_at (reader, reader->line_number,
                          "bad entry: expected one value");
    return s_parse_value (reader, token, length, header->field, value);
}

//  Read the announced number of array values, one per line.  The size
//  line was checked against the file's size, so the array is at most four
//  times the file ("1\n" per value).
static int
s_read_values (mmio_reader_t *reader, const mmio_header_t *header,
               double **values_p)
{
    double *values = solvers_malloc ((size_t) header->entries
                                     * sizeof (double));
    for (int64_t k = 0; k < header->entries; k++)
        if (s_read_value_line (reader, header, k, &values [k])) {
            free (values);
            return -1;
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
    if (rc && reader.overclaimed)
        s_pin_overclaim (&reader, header, false);
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

//  Bytes a writer gathers before each fwrite
#define MMIO_WRITE_BUFFER   65536
//  Longest line the writer formats: two indices and a %.17g value
#define MMIO_LINE_MAX       96

struct _mmio_writer_t {
    char *path;                 //  File name for messages
    FILE *file;                 //  Open stream
    bool symmetric;             //  Write only entries on or below the diagonal
    int32_t rows;               //  Rows announced
    int64_t entries;            //  Entries announced
    int64_t written;            //  Entries written so far
    size_t used;                //  Bytes waiting in buffer
    char buffer [MMIO_WRITE_BUFFER];    //  Formatted lines not yet written
};

//  Write the decimal digits of value at out; returns their count.
static size_t
s_format_integer (char *out, int64_t value)
{
    char digits [24];
    size_t count = 0;
    uint64_t magnitude = value < 0 ? 0 - (uint64_t) value : (uint64_t) value;
    do {
        digits [count++] = (char) ('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude > 0);
    size_t length = 0;
    if (value < 0)
        out [length++] = '-';
    while (count > 0)
        out [length++] = digits [--count];
    return length;
}

//  Write value exactly as "%.17g" does, so that reading it back gives the
//  same bits.  Integers below 10^15 (the values of most test matrices)
//  print the same digits without going through printf.
static size_t
s_format_value (char *out, size_t size, double value)
{
    if (value != 0.0 && value == trunc (value) && fabs (value) < 1e15)
        return s_format_integer (out, (int64_t) value);
    int length = snprintf (out, size, "%.17g", value);
    return length > 0 ? (size_t) length : 0;
}

//  Hand the buffered lines to the stream.
static void
s_writer_flush (mmio_writer_t *self)
{
    if (self->used > 0)
        fwrite (self->buffer, 1, self->used, self->file);
    self->used = 0;
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
//  Create a file and write the banner and size line of a coordinate real
//  matrix of the given shape and entry count.

mmio_writer_t *
mmio_writer_new (const char *path, int32_t rows, int32_t cols,
                 int64_t entries, bool symmetric, char *error,
                 size_t error_size)
{
    assert (path);
    assert (rows >= 0 && cols >= 0 && entries >= 0);
    assert (!symmetric || rows == cols);
    FILE *file = fopen (path, "w");
    if (!file) {
        solvers_set_error (error, error_size, "%s: cannot create: %s", path,
                           strerror (errno));
        return NULL;
    }
    mmio_writer_t *self = solvers_calloc (1, sizeof (mmio_writer_t));
    self->path = strdup (path);
    assert (self->path);
    self->file = file;
    self->symmetric = symmetric;
    self->rows = rows;
    self->entries = entries;
    fprintf (file, "%%%%MatrixMarket matrix coordinate real %s\n"
                   "%% written by the Jace solvers library\n"
                   "%" PRId32 " %" PRId32 " %" PRId64 "\n",
             symmetric ? "symmetric" : "general", rows, cols, entries);
    return self;
}

//  --------------------------------------------------------------------------
//  Append rows [row_begin, row_begin + block->nrows) of the matrix, given
//  with global columns; a symmetric writer skips entries above the
//  diagonal.

void
mmio_writer_add (mmio_writer_t *self, const csr_t *block, int32_t row_begin)
{
    assert (self);
    assert (block);
    assert (row_begin >= 0 && (int64_t) row_begin + block->nrows
                              <= self->rows);
    for (int32_t i = 0; i < block->nrows; i++) {
        int32_t row = row_begin + i;
        for (int64_t k = block->row_ptr [i]; k < block->row_ptr [i + 1];
             k++) {
            if (self->symmetric && block->col_idx [k] > row)
                continue;
            if (self->used + MMIO_LINE_MAX > MMIO_WRITE_BUFFER)
                s_writer_flush (self);
            char *line = self->buffer + self->used;
            size_t length = s_format_integer (line, (int64_t) row + 1);
            line [length++] = ' ';
            length += s_format_integer (line + length,
                                        (int64_t) block->col_idx [k] + 1);
            line [length++] = ' ';
            length += s_format_value (line + length, MMIO_LINE_MAX - length,
                                      block->values [k]);
            line [length++] = '\n';
            self->used += length;
            self->written++;
        }
    }
}

//  --------------------------------------------------------------------------
//  Finish the file and destroy the writer.  Returns 0, or -1 with
//  "FILE: reason" when writing failed or the entries written differ from
//  the count announced.

int
mmio_writer_close (mmio_writer_t **self_p, char *error, size_t error_size)
{
    assert (self_p);
    mmio_writer_t *self = *self_p;
    if (!self)
        return 0;
    s_writer_flush (self);
    int rc = s_finish_write (self->file, self->path, error, error_size);
    if (rc == 0 && self->written != self->entries) {
        solvers_set_error (error, error_size, "%s: %" PRId64 " entries "
                           "written, the size line announced %" PRId64,
                           self->path, self->written, self->entries);
        rc = -1;
    }
    free (self->path);
    free (self);
    *self_p = NULL;
    return rc;
}

//  --------------------------------------------------------------------------
//  Write A as "coordinate real general".

int
mmio_write_matrix (const char *path, const csr_t *A, char *error,
                   size_t error_size)
{
    assert (path);
    assert (A);
    mmio_writer_t *writer = mmio_writer_new (path, A->nrows, A->ncols,
                                             A->nnz, false, error,
                                             error_size);
    if (!writer)
        return -1;
    mmio_writer_add (writer, A, 0);
    return mmio_writer_close (&writer, error, error_size);
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
    char line [MMIO_LINE_MAX];
    for (int32_t i = 0; i < n; i++) {
        size_t length = s_format_value (line, sizeof (line) - 1, x [i]);
        line [length++] = '\n';
        fwrite (line, 1, length, file);
    }
    return s_finish_write (file, path, error, error_size);
}
