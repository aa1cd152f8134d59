/*  =========================================================================
    tsirm - the least-squares step of TSIRM, split across tasks

    TSIRM (two-stage iteration with least-squares residual minimisation;
    Couturier, Ziane Khodja, Guyeux et al.) keeps the last s iterates of
    an outer iteration and every s iterations replaces the iterate by the
    best combination of them.  Here the window is taken relative to its
    base x0 (the iterate it started from): with the differences
    D = [x_1 - x0, ..., x_s - x0], r0 = b - A x0 and W = A D, it solves

        min_beta || r0 - W beta ||_2,     then  x = x0 + D beta.

    x0 + span(D) holds every iterate of the window (x_s is beta = e_s), so
    the result is never worse than plain iteration when the small problem
    is solved, and differences keep W's columns apart where the iterates
    themselves are nearly parallel (near convergence they all point at
    the answer).

    Each task owns rows of W and r0.  Its share is the R factor of the QR
    of its rows of [W | r0]: (s + 1)(s + 2) / 2 numbers, whatever its row
    count.  The QR of every task's factor stacked in rank order is the R
    factor of the whole [W | r0] (a tall-skinny QR in one reduction):
    R's top s x s block with the top of its last column z is the small
    problem min || z - R beta ||, and its corner is the part of r0 no
    combination reaches.  CGLS on that small problem (at most
    max_iterations, stopping when the normal-equation residual falls by
    tolerance) is what CGLS on the distributed W would compute, with no
    communication per iteration.  Every task that stacks the same factors
    in the same order computes the same beta.
    =========================================================================
*/
#ifndef TSIRM_H_INCLUDED
#define TSIRM_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Largest window (job key solver/tsirm_size)
#define TSIRM_SIZE_MAX 64

//  How the least-squares step runs
typedef struct {
    int32_t size;               //  s, iterates per window (2..64)
    int32_t max_iterations;     //  CGLS iterations at most
    double tolerance;           //  CGLS stops when ||W'r|| <= this ||W'r0||
} tsirm_options_t;

//  What one least-squares step did
typedef struct {
    int32_t iterations;         //  CGLS iterations run
    double residual_before;     //  ||r0||, the window base's residual
    double residual_after;      //  ||r0 - W beta||, predicted
} tsirm_result_t;

//  Defaults: s = 12 as PETSc's KSPTSIRM; 100 CGLS iterations (PETSc:
//  15, each a reduction there, free here); tolerance 1e-14 (PETSc: 1e-50,
//  in effect none).
void
    tsirm_options_defaults (tsirm_options_t *options);

//  Numbers in one task's factor for a window of `size`:
//  (size + 1)(size + 2) / 2.
size_t
    tsirm_factor_length (int32_t size);

//  One task's factor: wr holds its rows of [W | r0], column-major
//  (rows x (size + 1), leading dimension rows), and is overwritten.
//  Writes tsirm_factor_length (size) numbers, the upper triangle of R
//  row by row (rows beyond `rows` are zero when rows < size + 1).
void
    tsirm_local_factor (double *wr, int32_t rows, int32_t size,
                        double *factor);

//  Combine `count` tasks' factors (in rank order) and solve the small
//  problem: writes beta (size entries) and *result.  Returns 0, or -1 if
//  a factor is not finite (beta is then zero).
int
    tsirm_solve (const double *const *factors, int32_t count,
                 const tsirm_options_t *options, double *beta,
                 tsirm_result_t *result);

#ifdef __cplusplus
}
#endif

#endif
