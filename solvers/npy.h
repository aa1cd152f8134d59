/*  =========================================================================
    npy - NumPy .npy files holding one vector of doubles

    Writes format version 1.0: the magic "\x93NUMPY", version 1.0, a
    little-endian uint16 header length, then the header dict
    {'descr': '<f8', 'fortran_order': False, 'shape': (n,), } padded with
    spaces and ending in '\n' so that the data starts at a multiple of 64
    bytes, then n little-endian doubles.  numpy.load () reads it.

    The reader accepts exactly what a 1-D '<f8' array in C or Fortran order
    saved by NumPy looks like (versions 1.0 and 2.0) and rejects anything
    else with "FILE: reason"; it is meant for tests and tools.
    =========================================================================
*/
#ifndef NPY_H_INCLUDED
#define NPY_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Data offset alignment of the format (numpy >= 1.14 pads to 64)
#define NPY_ALIGNMENT   64

//  Write x[n] to path.  Returns 0, or -1 with "FILE: reason" in error.
int
    npy_write_vector (const char *path, const double *x, int64_t n,
                      char *error, size_t error_size);

//  Read a 1-D float64 vector.  Returns 0 with a new malloc'd array in *x_p
//  (caller frees) and its length in *n_p, or -1 with "FILE: reason".
int
    npy_read_vector (const char *path, double **x_p, int64_t *n_p,
                     char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
