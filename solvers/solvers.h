/*  =========================================================================
    solvers - umbrella header of the pure numerical library

    The solvers library holds the local mathematics of Jace's sparse linear
    solvers: CSR storage, problem generators, Matrix Market and .npy files,
    inner solvers (banded LU through LAPACK, CG and BiCGStab) and the
    multisplitting method.  It is pure: no sockets, no ZeroMQ, no logging.
    Functions return a status and, for file input, write a one-line reason
    into a caller's buffer; the distributed task decides what to tell whom.

    Each .c file of the library includes only this header.
    =========================================================================
*/
#ifndef SOLVERS_H_INCLUDED
#define SOLVERS_H_INCLUDED

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Allocate or abort: out of memory is not a recoverable condition for a
//  numerical task (house style), so call sites carry no NULL checks.  Sizes
//  that come from untrusted input must be validated before calling these.
void *
    solvers_malloc (size_t size);
void *
    solvers_calloc (size_t count, size_t size);
void *
    solvers_realloc (void *pointer, size_t size);

//  Write a formatted one-line reason into error[error_size] when error is
//  not NULL.  Used by every function that reports why it failed.
void
    solvers_set_error (char *error, size_t error_size, const char *format,
                       ...) __attribute__ ((format (printf, 3, 4)));

//  Run BLAS in the calling thread only, and stop the threads OpenBLAS's
//  pthread build starts when it is loaded: each spins on sched_yield for
//  about 0.1 s before it sleeps, a whole core taken from the job on every
//  process start.  Call first thing in main.  Does nothing with a BLAS
//  that has no such threads.
void
    solvers_blas_single_threaded (void);

#ifdef __cplusplus
}
#endif

#include "csr.h"
#include "problems.h"
#include "mmio.h"
#include "npy.h"
#include "banded_lu.h"
#include "krylov.h"
#include "multisplit.h"
#include "multisplit_serial.h"
#include "tsirm.h"

#endif
