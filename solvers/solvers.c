/*  =========================================================================
    solvers - allocation and error helpers shared by the solvers library

    Allocation failures abort (house style: out of memory is fatal), so the
    numerical code stays free of NULL checks.  Error reasons are formatted
    into a caller's buffer, never printed: the library does not log.
    =========================================================================
*/
#include "solvers.h"

//  --------------------------------------------------------------------------
//  Allocate size bytes (at least one), aborting when memory is exhausted.

void *
solvers_malloc (size_t size)
{
    void *pointer = malloc (size ? size : 1);
    if (!pointer)
        abort ();
    return pointer;
}

//  --------------------------------------------------------------------------
//  Allocate count zeroed elements, aborting when memory is exhausted.

void *
solvers_calloc (size_t count, size_t size)
{
    void *pointer = calloc (count ? count : 1, size ? size : 1);
    if (!pointer)
        abort ();
    return pointer;
}

//  --------------------------------------------------------------------------
//  Resize a block, aborting when memory is exhausted.

void *
solvers_realloc (void *pointer, size_t size)
{
    void *resized = realloc (pointer, size ? size : 1);
    if (!resized)
        abort ();
    return resized;
}

//  --------------------------------------------------------------------------
//  Format a reason into the caller's buffer, if there is one.

void
solvers_set_error (char *error, size_t error_size, const char *format, ...)
{
    if (!error || error_size == 0)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (error, error_size, format, args);
    va_end (args);
}

//  --------------------------------------------------------------------------
//  OpenBLAS's entry points, weak: linked with another BLAS they are NULL.
//  blas_thread_shutdown_ is what OpenBLAS itself calls before a fork; a
//  later threaded call would start the pool again, and with one thread
//  none is made.

void openblas_set_num_threads (int count) __attribute__ ((weak));
void blas_thread_shutdown_ (void) __attribute__ ((weak));

void
solvers_blas_single_threaded (void)
{
    if (openblas_set_num_threads)
        openblas_set_num_threads (1);
    if (blas_thread_shutdown_)
        blas_thread_shutdown_ ();
}
