/*  =========================================================================
    krylov - preconditioned CG and BiCGStab on a CSR matrix

    CG (Hestenes and Stiefel 1952) for symmetric positive definite matrices
    and BiCGStab (van der Vorst 1992) for general ones, both with the
    diagonal (Jacobi) preconditioner.  A solver object binds one square
    matrix and owns all its workspace, allocated once in krylov_new: a
    solve allocates nothing, so it can run inside an outer iteration loop.

    The initial x is the starting guess (warm start): the multisplitting
    method passes the previous iterate, so late outer iterations need few
    inner ones.  Convergence is ||b - A x||_2 <= tolerance * ||b||_2 on the
    recursively updated residual.  Not converging is a result, not an
    error: the status says what happened and x holds the last iterate.
    =========================================================================
*/
#ifndef KRYLOV_H_INCLUDED
#define KRYLOV_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Which method a solver runs
typedef enum {
    KRYLOV_CG,                  //  Conjugate gradient, SPD matrices only
    KRYLOV_BICGSTAB             //  BiCGStab, general nonsingular matrices
} krylov_method_t;

//  Outcome of a solve
typedef enum {
    KRYLOV_CONVERGED = 0,       //  Residual under the tolerance
    KRYLOV_MAX_ITERATIONS,      //  Iteration budget spent first
    KRYLOV_BREAKDOWN            //  Division by zero, loss of positive
                                //  definiteness (CG) or a non-finite value
} krylov_status_t;

//  What a solve did
typedef struct {
    krylov_status_t status;     //  Outcome
    int32_t iterations;         //  Iterations run
    double residual;            //  Final ||r||_2 / ||b||_2 (0 if b = 0)
    double initial_residual;    //  ||b - A x||_2 of the starting x
    bool gave_back;             //  Diverged: x is the starting x again
} krylov_result_t;

//  A solver bound to one matrix
typedef struct _krylov_t krylov_t;

//  Create a solver for square A, which is borrowed and must outlive the
//  solver.  A zero diagonal entry is preconditioned by 1.
krylov_t *
    krylov_new (krylov_method_t method, const csr_t *A);

//  Destroy the solver; nullifies the reference. Safe on NULL.
void
    krylov_destroy (krylov_t **self_p);

//  Make every solve also reduce the residual by `factor` (0 < factor <= 1)
//  from where the starting x leaves it, however small it already is, down
//  to roundoff.  An outer iteration that warm-starts the inner solve then
//  always gains something, even when the tolerance is loose: without it
//  a warm start already under the tolerance does nothing and the outer
//  iteration stalls.  1, the default, turns it off.
void
    krylov_set_reduction (krylov_t *self, double factor);

//  Precondition with ILU(0) (the incomplete LU in A's own pattern; for a
//  symmetric A it is symmetric, L D L', so CG may use it) instead of the
//  diagonal.  Under CG on a structurally symmetric A it is computed as
//  IC(0) from the upper triangle, in half the work: the same factors for
//  a symmetric A.  Factors once, each triangle in arrays of its own: nnz
//  doubles, nnz column indices and 2 n offsets.  Returns 0, or -1
//  (Jacobi is kept) if a row has no diagonal entry or a pivot is zero.
int
    krylov_set_ilu0 (krylov_t *self);

//  Solve A x = b starting from x, for at most max_iterations iterations,
//  until ||b - Ax|| <= tolerance ||b|| (and the reduction above, if set).
//  Fills *result and returns its status.  Allocates nothing.
krylov_status_t
    krylov_solve (krylov_t *self, const double *b, double *x,
                  double tolerance, int32_t max_iterations,
                  krylov_result_t *result);

//  z = M^-1 r with the solver's preconditioner (the diagonal, or ILU(0)
//  after krylov_set_ilu0); r and z have the matrix's order and must not
//  overlap.  Allocates nothing.
void
    krylov_precondition (const krylov_t *self, const double *r, double *z);

//  Name of a status, for messages ("converged", ...).
const char *
    krylov_status_name (krylov_status_t status);

#ifdef __cplusplus
}
#endif

#endif
