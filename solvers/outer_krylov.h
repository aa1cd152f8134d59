/*  =========================================================================
    outer_krylov - restarted GMRES or CG around the multisplitting blocks

    solver/outer = gmres | cg of the multisplit application: a Krylov
    method on A x = b, preconditioned by the blocks of the multisplitting
    (block Jacobi: each task applies its block's inner solver to its rows
    of a vector), distributed by rows.

    GMRES(m) (Saad and Schultz 1986), preconditioned on the right: with
    the block's preconditioner applied once (ILU(0) or the diagonal) or a
    banded LU, this is PETSc's -ksp_type gmres -pc_type bjacobi; with
    inner Krylov iterations the preconditioner changes from step to step
    and the method is flexible GMRES (Saad 1993), which keeps the
    preconditioned vectors too.

    CG (Hestenes and Stiefel 1952), preconditioned: for symmetric positive
    definite systems, with a preconditioner that is symmetric and fixed
    (the block's ILU(0), which on a symmetric block is its incomplete
    Cholesky factorisation, the diagonal, or a banded LU), PETSc's
    -ksp_type cg -pc_type bjacobi -sub_pc_type icc, in Chronopoulos and
    Gear's single-reduction form (-ksp_cg_single_reduction).  It keeps
    six vectors whatever its cycle's length, and a step reads none of the
    earlier ones: where GMRES's Gram-Schmidt grows with the cycle, CG's
    step costs one block solve, one product with A and a few vector
    operations.  It restarts every m steps only so that a replacement
    has a bounded cycle to run again.

    One step per iteration of the task, through the task API's total
    exchanges (jace_task_alltoallv).  GMRES's step runs three: the
    preconditioned vector's values each neighbour reads, the dot products
    of classical Gram-Schmidt, the new vector's norm; its cycle's start
    two (the iterate's values, then its sums).  CG's step runs two: the
    preconditioned residual's values, then r'u, w'u and r'r together;
    its cycle's start three (the iterate's, then the same).  Every task
    sums the pieces in rank order, so every task holds the same numbers
    and takes the same decisions: where a cycle ends (after m steps, or
    once the residual estimate meets the tolerance) and when the job has
    converged.  The iterate changes only at a cycle's end, so a snapshot
    taken at any iteration is consistent.

    A task replaced during a cycle is restored from a checkpoint holding
    the iterate at the cycle's start and the iteration and exchange count
    the cycle began at (outer_krylov_save); its first iteration runs the
    cycle's steps again, with the other tasks' pieces of those rounds
    served from their logs (docs/EXCHANGE.md), and then goes on with the
    others.  The steps it runs again are the ones its predecessor ran,
    from the same data.
    =========================================================================
*/
#ifndef OUTER_KRYLOV_H_INCLUDED
#define OUTER_KRYLOV_H_INCLUDED

#include "jace_task.h"
#include "multisplit.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Largest restart length (solver/gmres_restart, solver/cg_restart)
#define OUTER_KRYLOV_RESTART_MAX 200

//  The method
typedef enum {
    OUTER_KRYLOV_GMRES,
    OUTER_KRYLOV_CG             //  A symmetric positive definite system
} outer_krylov_method_t;

//  What the job asks for
typedef struct {
    outer_krylov_method_t method;
    int32_t restart;            //  m: steps per cycle
    int32_t inner_iterations;   //  0: the block's preconditioner once;
                                //  k: k inner Krylov iterations (GMRES
                                //  only: flexible)
    double tolerance;           //  job/tolerance: relative residual
    double rows_b_squared;      //  ||b||^2 over the task's core rows
} outer_krylov_options_t;

//  Who reads which of our values: the lists the other tasks sent at
//  set-up, as global row indices of our core
typedef struct {
    int32_t tasks;              //  Tasks in the job
    int32_t rank;               //  Our task
    int32_t *const *requested;  //  Per task: indices it reads, or NULL
    const int32_t *requested_count;  //  Per task: their number
} outer_krylov_readers_t;

//  What one iteration did
typedef struct {
    double estimate;            //  ||b - A x|| / ||b|| as the method knows
                                //  it (CG: of its own iterate)
    bool converged;             //  The iterate now meets the tolerance
    bool cycle_ended;           //  A cycle ended: the iterate moved
} outer_krylov_step_t;

typedef struct _outer_krylov_t outer_krylov_t;

//  Bind to a task's multisplitting state (borrowed: must outlive us);
//  allocates GMRES's basis, (m + 1) vectors of the core rows and m more
//  when flexible, or CG's four vectors.  split must have no overlap; CG
//  takes no inner iterations.
outer_krylov_t *
    outer_krylov_new (const outer_krylov_options_t *options,
                      multisplit_t *split);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    outer_krylov_destroy (outer_krylov_t **self_p);

//  One iteration: a cycle's start if none is under way, and one step
//  (with a cycle to run again first after a restore); at a cycle's end,
//  the iterate moves.  Returns 0 with *step, or -1 (an exchange failed
//  or was cut short, a piece had the wrong size, the block solve broke
//  down, CG met a direction of no positive curvature, or a restore cannot
//  be caught up): the iteration is then void and the cycle starts again
//  at the next one.
int
    outer_krylov_iterate (outer_krylov_t *self, jace_task_t *task,
                          const outer_krylov_readers_t *readers,
                          outer_krylov_step_t *step);

//  Length in doubles of a checkpoint: the core rows and two more
size_t
    outer_krylov_saved_length (const outer_krylov_t *self);

//  The checkpoint: the iterate (the cycle's start), then the iteration
//  and the exchange count the cycle began at, -1 and 0 between cycles.
//  Borrowed until the next call.
const double *
    outer_krylov_save (outer_krylov_t *self);

//  Take a checkpoint back: `count` doubles, either outer_krylov_save's or
//  the bare iterate (a rebalance's); the iterate goes into the
//  multisplitting state.  The cycle it names is run again at the next
//  iteration.  Returns 0, or -1 with a reason (wrong length, fields that
//  are no iteration or count).
int
    outer_krylov_restore (outer_krylov_t *self, const double *saved,
                          size_t count, char *reason, size_t reason_size);

#ifdef __cplusplus
}
#endif

#endif
