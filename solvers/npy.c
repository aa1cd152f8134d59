/*  =========================================================================
    npy - NumPy .npy files holding one vector of doubles

    Format reference: numpy/lib/format.py (format versions 1.0 and 2.0).
    The data is written in host order, which must be little endian to match
    the '<f8' descriptor; the build refuses other hosts.
    =========================================================================
*/
#include "solvers.h"

_Static_assert (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "npy writes host doubles as '<f8'");

//  Magic string and fixed prefix sizes of the format
#define NPY_MAGIC           "\x93NUMPY"
#define NPY_MAGIC_SIZE      6
#define NPY_HEADER_MAX      65535

//  --------------------------------------------------------------------------
//  Write x[n] to path in format 1.0.

int
npy_write_vector (const char *path, const double *x, int64_t n, char *error,
                  size_t error_size)
{
    assert (path);
    assert (n >= 0);
    char dict [128];
    int dict_size = snprintf (dict, sizeof (dict),
                              "{'descr': '<f8', 'fortran_order': False, "
                              "'shape': (%" PRId64 ",), }", n);
    //  magic (6) + version (2) + length (2) + dict + padding + '\n'
    size_t unpadded = NPY_MAGIC_SIZE + 4 + (size_t) dict_size + 1;
    size_t total = (unpadded + NPY_ALIGNMENT - 1) / NPY_ALIGNMENT
                 * NPY_ALIGNMENT;
    size_t header_size = total - NPY_MAGIC_SIZE - 4;
    char header [256];
    memcpy (header, NPY_MAGIC, NPY_MAGIC_SIZE);
    header [6] = 1;
    header [7] = 0;
    header [8] = (char) (header_size & 0xFF);
    header [9] = (char) (header_size >> 8);
    memcpy (header + 10, dict, (size_t) dict_size);
    memset (header + 10 + dict_size, ' ', header_size - (size_t) dict_size - 1);
    header [total - 1] = '\n';

    FILE *file = fopen (path, "wb");
    if (!file) {
        solvers_set_error (error, error_size, "%s: cannot create: %s", path,
                           strerror (errno));
        return -1;
    }
    bool written = fwrite (header, 1, total, file) == total
                && fwrite (x, sizeof (double), (size_t) n, file) == (size_t) n;
    int saved = errno;
    if (fclose (file) != 0 && written) {
        written = false;
        saved = errno;
    }
    if (!written) {
        solvers_set_error (error, error_size, "%s: write failed: %s", path,
                           strerror (saved));
        return -1;
    }
    return 0;
}

//  Find "'key': " in the header dict and return what follows, or NULL.
static const char *
s_dict_value (const char *dict, const char *key)
{
    char pattern [32];
    snprintf (pattern, sizeof (pattern), "'%s': ", key);
    const char *found = strstr (dict, pattern);
    return found ? found + strlen (pattern) : NULL;
}

//  Check the header dict describes a 1-D '<f8' array; return its length.
static int
s_parse_dict (const char *dict, int64_t *n_p)
{
    const char *descr = s_dict_value (dict, "descr");
    const char *order = s_dict_value (dict, "fortran_order");
    const char *shape = s_dict_value (dict, "shape");
    if (!descr || strncmp (descr, "'<f8'", 5) != 0 || !order || !shape)
        return -1;
    //  A 1-D array is contiguous in both orders, so either flag is fine.
    if (strncmp (order, "False", 5) != 0 && strncmp (order, "True", 4) != 0)
        return -1;
    long long n;
    char close [3] = "";
    if (sscanf (shape, "(%lld,%2[ )]", &n, close) != 2 || n < 0
    ||  strchr (close, ')') == NULL)
        return -1;
    *n_p = n;
    return 0;
}

//  Read and check the prefix and header dict; leaves file at the data.
static int
s_read_header (FILE *file, const char *path, int64_t *n_p, char *error,
               size_t error_size)
{
    unsigned char prefix [12];
    if (fread (prefix, 1, 10, file) != 10
    ||  memcmp (prefix, NPY_MAGIC, NPY_MAGIC_SIZE) != 0
    ||  (prefix [6] != 1 && prefix [6] != 2)) {
        solvers_set_error (error, error_size, "%s: not a .npy file of "
                           "version 1.0 or 2.0", path);
        return -1;
    }
    size_t header_size = prefix [8] | (size_t) prefix [9] << 8;
    if (prefix [6] == 2) {
        if (fread (prefix + 10, 1, 2, file) != 2) {
            solvers_set_error (error, error_size, "%s: truncated header", path);
            return -1;
        }
        header_size |= (size_t) prefix [10] << 16 | (size_t) prefix [11] << 24;
    }
    if (header_size > NPY_HEADER_MAX) {
        solvers_set_error (error, error_size, "%s: header too long", path);
        return -1;
    }
    char *dict = solvers_malloc (header_size + 1);
    int rc = fread (dict, 1, header_size, file) == header_size ? 0 : -1;
    dict [rc == 0 ? header_size : 0] = '\0';
    if (rc == 0)
        rc = s_parse_dict (dict, n_p);
    free (dict);
    if (rc)
        solvers_set_error (error, error_size, "%s: header does not describe "
                           "a 1-D '<f8' array", path);
    return rc;
}

//  --------------------------------------------------------------------------
//  Read a 1-D float64 vector.

int
npy_read_vector (const char *path, double **x_p, int64_t *n_p, char *error,
                 size_t error_size)
{
    assert (path);
    assert (x_p);
    assert (n_p);
    FILE *file = fopen (path, "rb");
    if (!file) {
        solvers_set_error (error, error_size, "%s: cannot open: %s", path,
                           strerror (errno));
        return -1;
    }
    int64_t n;
    if (s_read_header (file, path, &n, error, error_size)) {
        fclose (file);
        return -1;
    }
    //  Check the data size before allocating: the header is untrusted.
    long data_start = ftell (file);
    fseek (file, 0, SEEK_END);
    long file_size = ftell (file);
    fseek (file, data_start, SEEK_SET);
    long data_size = file_size - data_start;
    if (data_start < 0 || data_size % (long) sizeof (double) != 0
    ||  data_size / (long) sizeof (double) != n) {
        solvers_set_error (error, error_size, "%s: data holds %ld bytes, the "
                           "header announces %" PRId64 " doubles", path,
                           data_size, n);
        fclose (file);
        return -1;
    }
    double *x = solvers_malloc ((size_t) n * sizeof (double));
    bool complete = fread (x, sizeof (double), (size_t) n, file) == (size_t) n;
    fclose (file);
    if (!complete) {
        solvers_set_error (error, error_size, "%s: read error", path);
        free (x);
        return -1;
    }
    *x_p = x;
    *n_p = n;
    return 0;
}
