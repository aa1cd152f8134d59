/*  =========================================================================
    jace-mmgen - write generated test matrices as Matrix Market files

    jace-mmgen [--symmetric] [--rhs FILE] KIND N OUT writes the 2D or 3D
    Poisson matrix of grid side N, or the 2D upwind convection-diffusion
    one (nonsymmetric), built by solvers/problems.c's own row
    generators, one block of rows at a time: memory stays at one block
    whatever the size, so the files the reader is measured on (a 216,000-row
    N = 60 3D file of 25 MB, a 2,097,152-row N = 128 one of 260 MB) cost
    nothing to make.  The first pass over the blocks counts the entries the
    size line announces, the second writes them.
    =========================================================================
*/
#include "solvers.h"
#include <ctype.h>
#include <getopt.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

//  Exit codes: 0 success, 1 failure, 2 bad command line
#define EXIT_USAGE  2
//  Rows generated at a time
#define MMGEN_BLOCK_ROWS    65536

static const char *s_usage =
"Usage: jace-mmgen [OPTIONS] KIND N OUT\n"
"Write the KIND matrix of grid side N to the Matrix Market file OUT, as\n"
"\"coordinate real general\" (or \"symmetric\"), one block of rows at a time.\n"
"\n"
"Kinds:\n"
"  poisson2d     5-point Laplacian, n = N^2 rows (N <= 46340)\n"
"  poisson3d     7-point Laplacian, n = N^3 rows (N <= 1290)\n"
"  convection2d  upwind convection-diffusion along x, n = N^2 rows:\n"
"                4 + C on the diagonal, -1 - C for the x - 1 neighbour,\n"
"                -1 for the others (nonsymmetric for C > 0)\n"
"\n"
"Options:\n"
"  -c, --convection C  convection2d's C (default 2, >= 0)\n"
"  -s, --symmetric   store only the lower triangle (about half the file;\n"
"                    symmetric kinds only)\n"
"  -r, --rhs FILE    also write b = A * 1 (solution all ones) as an array\n"
"  -h, --help        show this help\n"
"  -V, --version     show the version\n"
"\n"
"Without --rhs the multisplit application takes b = A * 1 itself\n"
"(problem/kind = matrix, problem/matrix = OUT, problem/rhs unset).\n";

//  The generator of one kind: rows [begin, end) of an n x n matrix
typedef int (generator_fn) (int32_t N, int32_t row_begin, int32_t row_end,
                            csr_t **A_p, char *error, size_t error_size);

//  convection2d's C (--convection), for the generator below
static double s_convection = 2;

static int
s_convection2d (int32_t N, int32_t row_begin, int32_t row_end, csr_t **A_p,
                char *error, size_t error_size)
{
    return problems_convection2d (N, s_convection, row_begin, row_end, A_p,
                                  error, error_size);
}

//  --------------------------------------------------------------------------
//  Complain about the command line

static int
s_usage_error (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "jace-mmgen: ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\nTry 'jace-mmgen --help' for more information.\n");
    va_end (args);
    return EXIT_USAGE;
}

//  --------------------------------------------------------------------------
//  Entries a block contributes to the file: all, or those on or below the
//  diagonal when symmetric.

static int64_t
s_count (const csr_t *block, int32_t row_begin, bool symmetric)
{
    if (!symmetric)
        return block->nnz;
    int64_t count = 0;
    for (int32_t i = 0; i < block->nrows; i++)
        for (int64_t k = block->row_ptr [i]; k < block->row_ptr [i + 1]; k++)
            count += block->col_idx [k] <= row_begin + i;
    return count;
}

//  --------------------------------------------------------------------------
//  Count, then write, the matrix; b = A * 1 into b when not NULL.
//  Returns 0 or -1 with the reason printed.

static int
s_generate (generator_fn *generate, int32_t N, int32_t n, bool symmetric,
            const char *path, double *b)
{
    char error [512];
    int64_t entries = 0;
    csr_t *block = NULL;
    for (int pass = 0; pass < 2; pass++) {
        mmio_writer_t *writer = NULL;
        if (pass == 1) {
            writer = mmio_writer_new (path, n, n, entries, symmetric, error,
                                      sizeof (error));
            if (!writer) {
                fprintf (stderr, "jace-mmgen: %s\n", error);
                return -1;
            }
        }
        for (int32_t begin = 0; begin < n; begin += MMGEN_BLOCK_ROWS) {
            int32_t end = n - begin > MMGEN_BLOCK_ROWS
                        ? begin + MMGEN_BLOCK_ROWS : n;
            if (generate (N, begin, end, &block, error, sizeof (error))) {
                fprintf (stderr, "jace-mmgen: %s\n", error);
                mmio_writer_close (&writer, NULL, 0);
                return -1;
            }
            if (pass == 0)
                entries += s_count (block, begin, symmetric);
            else {
                mmio_writer_add (writer, block, begin);
                if (b)
                    problems_rhs_ones_solution (block, b + begin);
            }
            csr_destroy (&block);
        }
        if (pass == 1 && mmio_writer_close (&writer, error, sizeof (error))) {
            fprintf (stderr, "jace-mmgen: %s\n", error);
            return -1;
        }
    }
    return 0;
}

//  True if paths a and b name one file: the same string, or the same
//  inode when both exist.
static bool
s_same_file (const char *a, const char *b)
{
    if (strcmp (a, b) == 0)
        return true;
    struct stat first, second;
    return stat (a, &first) == 0 && stat (b, &second) == 0
        && first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

int
main (int argc, char *argv [])
{
    static const struct option options [] = {
        { "convection", required_argument, NULL, 'c' },
        { "symmetric", no_argument, NULL, 's' },
        { "rhs", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    bool symmetric = false;
    const char *rhs = NULL;
    int option;
    opterr = 0;                 //  Our own messages, below
    while ((option = getopt_long (argc, argv, "c:sr:hV", options, NULL))
           != -1)
        switch (option) {
            case 'c': {
                char *end;
                errno = 0;
                s_convection = strtod (optarg, &end);
                if (*end || end == optarg || errno || !(s_convection >= 0)
                ||  !isfinite (s_convection))
                    return s_usage_error ("--convection must be a number "
                                          ">= 0, got '%s'", optarg);
                break;
            }
            case 's':
                symmetric = true;
                break;
            case 'r':
                rhs = optarg;
                break;
            case 'h':
                fputs (s_usage, stdout);
                return 0;
            case 'V':
                printf ("jace-mmgen %s\n", PACKAGE_VERSION);
                return 0;
            default:
                //  getopt read "-5" as option '5': a size given negative
                if (isdigit (optopt))
                    return s_usage_error ("N must be a positive whole "
                                          "number, not a negative one");
                if (strncmp (argv [optind - 1], "--", 2) == 0)
                    return s_usage_error ("option '%s' is unknown or "
                                          "lacks its value",
                                          argv [optind - 1]);
                return s_usage_error ("option '-%c' is unknown or lacks "
                                      "its value", optopt);
        }
    if (argc - optind != 3)
        return s_usage_error ("expected KIND N OUT");
    const char *kind = argv [optind];
    generator_fn *generate;
    int dimension;
    if (strcmp (kind, "poisson2d") == 0) {
        generate = problems_poisson2d;
        dimension = 2;
    }
    else
    if (strcmp (kind, "poisson3d") == 0) {
        generate = problems_poisson3d;
        dimension = 3;
    }
    else
    if (strcmp (kind, "convection2d") == 0) {
        if (symmetric)
            return s_usage_error ("convection2d is not symmetric: no "
                                  "--symmetric");
        generate = s_convection2d;
        dimension = 2;
    }
    else
        return s_usage_error ("unknown kind '%s' (poisson2d, poisson3d or "
                              "convection2d)", kind);
    char *end;
    errno = 0;
    long N = strtol (argv [optind + 1], &end, 10);
    int64_t n = 1;
    for (int d = 0; d < dimension && N >= 1 && n <= INT32_MAX; d++)
        n *= N;
    if (*end != '\0' || errno || N < 1 || n > INT32_MAX)
        return s_usage_error ("N must give 1 <= N^%d <= %d, got '%s'",
                              dimension, INT32_MAX, argv [optind + 1]);
    const char *out = argv [optind + 2];
    if (rhs && s_same_file (rhs, out))
        return s_usage_error ("--rhs %s names the matrix's own file: the "
                              "vector would overwrite it", rhs);
    double *b = rhs ? solvers_malloc ((size_t) n * sizeof (double)) : NULL;
    int rc = s_generate (generate, (int32_t) N, (int32_t) n, symmetric, out,
                         b);
    //  Now that the matrix exists, names that differ (./m.mtx, m.mtx)
    //  are told apart by inode
    if (rc == 0 && b && s_same_file (rhs, out)) {
        fprintf (stderr, "jace-mmgen: --rhs %s names the matrix's own file "
                 "%s: the vector would overwrite it; %s removed\n", rhs,
                 out, out);
        unlink (out);
        rc = -1;
    }
    else
    if (rc == 0 && b) {
        char error [512];
        rc = mmio_write_vector (rhs, b, (int32_t) n, error, sizeof (error));
        //  Half a system is no use, and looks like a whole matrix
        if (rc) {
            fprintf (stderr, "jace-mmgen: %s; %s removed\n", error, out);
            unlink (out);
        }
    }
    free (b);
    return rc == 0 ? 0 : 1;
}
