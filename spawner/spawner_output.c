/*  =========================================================================
    spawner_output - the verified answer, written where the user asked
    =========================================================================
*/
#include "spawner_output.h"
#include "mmio.h"
#include "npy.h"

#include <czmq.h>

int
spawner_output_write (const char *path, const double *x, int64_t n,
                      char *reason, size_t reason_size)
{
    assert (path && x);
    size_t length = strlen (path);
    if (length >= 4 && streq (path + length - 4, ".npy"))
        return npy_write_vector (path, x, n, reason, reason_size);
    if (n > INT32_MAX) {
        snprintf (reason, reason_size, "%s: %" PRId64 " values are too many "
                  "for a Matrix Market array; use a .npy file", path, n);
        return -1;
    }
    return mmio_write_vector (path, x, (int32_t) n, reason, reason_size);
}
