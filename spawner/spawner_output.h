/*  =========================================================================
    spawner_output - the verified answer, written where the user asked

    A path ending in .npy gets a NumPy array (format 1.0, little-endian
    float64, loads with numpy.load); any other path gets a Matrix Market
    array (one column, full double precision).
    =========================================================================
*/
#ifndef SPAWNER_OUTPUT_H_INCLUDED
#define SPAWNER_OUTPUT_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

//  Write x (n values) to path.  Returns 0, or -1 with the reason.
int
    spawner_output_write (const char *path, const double *x, int64_t n,
                          char *reason, size_t reason_size);

#endif
