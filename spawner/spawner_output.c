/*  =========================================================================
    spawner_output - the verified answer, written where the user asked
    =========================================================================
*/
#include "spawner_output.h"

#include <czmq.h>

//  NumPy format 1.0: magic, version, header length, then a Python dict
//  padded with spaces to a multiple of 64 bytes and ended by a newline.
static int
s_write_npy (FILE *file, const double *x, int64_t n)
{
    char header [128];
    int length = snprintf (header, sizeof header,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (%" PRId64
        ",), }", n);
    int total = 10 + length + 1;
    int padding = (64 - total % 64) % 64;
    uint16_t header_length = (uint16_t) (length + padding + 1);
    unsigned char preamble [10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                    (unsigned char) (header_length & 0xff),
                                    (unsigned char) (header_length >> 8) };
    fwrite (preamble, 1, sizeof preamble, file);
    fwrite (header, 1, (size_t) length, file);
    for (int i = 0; i < padding; i++)
        fputc (' ', file);
    fputc ('\n', file);
    //  The payload is little-endian on the hosts Jace supports.
    return fwrite (x, sizeof (double), (size_t) n, file) == (size_t) n ? 0
                                                                      : -1;
}

static int
s_write_matrix_market (FILE *file, const double *x, int64_t n)
{
    fprintf (file, "%%%%MatrixMarket matrix array real general\n");
    fprintf (file, "%% solution written by jace-spawner\n");
    fprintf (file, "%" PRId64 " 1\n", n);
    for (int64_t i = 0; i < n; i++)
        if (fprintf (file, "%.17g\n", x [i]) < 0)
            return -1;
    return 0;
}

int
spawner_output_write (const char *path, const double *x, int64_t n,
                      char *reason, size_t reason_size)
{
    assert (path && x);
    FILE *file = fopen (path, "wb");
    if (!file) {
        snprintf (reason, reason_size, "%s: cannot create: %s", path,
                  strerror (errno));
        return -1;
    }
    size_t length = strlen (path);
    bool npy = length >= 4 && streq (path + length - 4, ".npy");
    int rc = npy ? s_write_npy (file, x, n) : s_write_matrix_market (file, x, n);
    if (fclose (file) || rc) {
        snprintf (reason, reason_size, "%s: write failed: %s", path,
                  strerror (errno));
        return -1;
    }
    return 0;
}
