/*  =========================================================================
    multisplit_serial - reference driver: every task in one process

    Runs the synchronous multisplitting iteration (block Jacobi with
    optional overlap), plain or accelerated by TSIRM (tsirm.h: every s
    iterations, the least-squares step over the window, with each block's
    factor computed from its own rows as a distributed task computes it),
    over all the blocks of a partition, in one process,
    with exactly the calls a distributed task makes: multisplit_new on the
    extended rows, x_ext filled from the owners' values through the
    dependency lists, multisplit_iterate, multisplit_residual.  It checks
    convergence of the method and of the API in tests and benchmarks; the
    distributed runtime replaces the gathering by messages.

    Convergence never lies: the iteration stops when the largest change of
    every task is under the tolerance AND the true relative residual
    ||b - A x||_2 / ||b||_2 is under the residual tolerance; a failed
    verification lets the iteration continue.
    =========================================================================
*/
#ifndef MULTISPLIT_SERIAL_H_INCLUDED
#define MULTISPLIT_SERIAL_H_INCLUDED

#include "csr.h"
#include "multisplit.h"
#include "tsirm.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Outcome of a serial run
typedef enum {
    MULTISPLIT_CONVERGED = 0,   //  Verified: change and residual small
    MULTISPLIT_MAX_ITERATIONS,  //  Iteration cap reached first
    MULTISPLIT_DIVERGED,        //  Change grew by 1e8 from its best, or
                                //  a value is not finite
    MULTISPLIT_INNER_FAILED     //  An inner solver broke down
} multisplit_status_t;

//  Settings of a serial run
typedef struct {
    int32_t tasks;              //  Number of blocks
    const double *powers;       //  Task powers for the partition, or NULL
    int32_t overlap;            //  Rows of overlap on each side
    multisplit_options_t inner; //  Inner solver settings
    double tolerance;           //  Largest change that counts as converged
    double residual_tolerance;  //  Relative residual to verify
    int32_t max_iterations;     //  Outer iteration cap
    tsirm_options_t tsirm;      //  TSIRM window; size 0: plain iteration
} multisplit_serial_options_t;

//  What a serial run did
typedef struct {
    multisplit_status_t status; //  Outcome
    int32_t iterations;         //  Outer iterations run
    double change;              //  Largest change of the last iteration
    double residual;            //  Last verified relative residual
    int64_t inner_iterations;   //  Krylov iterations over all tasks
    int32_t minimisations;      //  TSIRM least-squares steps
} multisplit_serial_result_t;

//  Solve A x = b (square A, global) by multisplitting, starting from x = 0.
//  Writes x (n entries) and *result and returns 0, or returns -1 with a
//  reason when set-up fails (bad partition, LU too large, singular block).
int
    multisplit_serial_solve (const csr_t *A, const double *b,
                             const multisplit_serial_options_t *options,
                             double *x, multisplit_serial_result_t *result,
                             char *error, size_t error_size);

//  Name of a status, for messages ("converged", ...).
const char *
    multisplit_status_name (multisplit_status_t status);

#ifdef __cplusplus
}
#endif

#endif
