/*  =========================================================================
    multisplit - local mathematics of the multisplitting method

    The multisplitting method (O'Leary and White 1985; Bahi, Contassot-
    Vivier and Couturier, "Parallel Iterative Algorithms", 2007) solves
    A x = b by splitting the rows into blocks, one per task.  Task k owns
    the rows [row_begin, row_end) of its core block, optionally extended by
    `overlap` rows on each side.  With the extended rows split into a
    square diagonal block A_local (columns inside the extended range) and
    A_ext (all other columns), one iteration is

        solve  A_local x_local = b_local - A_ext x_ext

    where x_ext holds the newest values received from the other tasks.  The
    task publishes only its core rows (weighting 1 on the core, 0 on the
    overlap), so each component has exactly one owner.  Synchronous or
    asynchronous, the iteration converges when the block-Jacobi iteration
    matrix is a contraction (e.g. A strictly diagonally dominant, or an
    M-matrix such as the Poisson matrices).

    Dependencies.  The external components a task needs are derived from
    the matrix: every column outside the extended range that an extended
    row touches, plus every overlap column a core row touches (needed only
    by the true residual, which must use the owners' values).  They are
    grouped by owning task; within a group the global indices are sorted.
    x_ext is the concatenation of the groups in task order:
    x_ext[multisplit_dependency_offset (self, t) + k] is the owner t's
    value of global component multisplit_dependency_indices (self, t)[k].
    At set-up, task k sends each owner t its list; the owner answers each
    iteration with multisplit_gather () over that list.

    The object owns its blocks, right-hand side, inner solver (factored or
    bound once) and all workspace: iterating allocates nothing.
    =========================================================================
*/
#ifndef MULTISPLIT_H_INCLUDED
#define MULTISPLIT_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Least residual reduction of every inner Krylov solve from its warm
//  start (krylov_set_reduction), whatever the inner tolerance
#define MULTISPLIT_INNER_REDUCTION      0.1

//  Inner solver of the local block; the job-file name is in parentheses
typedef enum {
    MULTISPLIT_INNER_KRYLOV,    //  CG if the block is symmetric, else
                                //  BiCGStab; the default (krylov)
    MULTISPLIT_INNER_BANDED_LU, //  Banded LU, factored once (lu-banded)
    MULTISPLIT_INNER_CG,        //  Warm-started Jacobi-PCG, SPD (cg)
    MULTISPLIT_INNER_BICGSTAB   //  Warm-started Jacobi-BiCGStab (bicgstab)
} multisplit_inner_t;

//  Preconditioner of the inner Krylov solves (job key
//  solver/preconditioner)
typedef enum {
    MULTISPLIT_PC_JACOBI,       //  The diagonal (jacobi)
    MULTISPLIT_PC_ILU0          //  ILU(0) of the block (ilu0; on a
                                //  symmetric block it is IC(0), L D L')
} multisplit_preconditioner_t;

//  How the local block is solved
typedef struct {
    multisplit_inner_t inner;   //  Inner solver
    multisplit_preconditioner_t preconditioner;  //  Of Krylov solves
    double inner_tolerance;     //  Krylov: relative residual to reach
    int32_t inner_max_iterations;   //  Krylov: iteration budget per solve
    size_t banded_lu_max_bytes; //  LU: refuse band storage above (0: none)
} multisplit_options_t;

//  What one iteration did
typedef struct {
    double change;              //  max_i |x_new_i - x_old_i| over the core
    double relative_change;     //  change / max_i |x_new_i| (or change)
    double residual;            //  ||b - A x||_2 on the extended rows
                                //  at the iterate the iteration started
                                //  from and the x_ext given: over the
                                //  core rows, the task's share of the
                                //  residual (at most this with overlap)
    int32_t inner_iterations;   //  Krylov iterations (0 for LU)
    int inner_status;           //  krylov_status_t of the solve (0 for LU)
} multisplit_step_t;

//  Why an iteration failed
typedef enum {
    MULTISPLIT_FINE,            //  It did not
    MULTISPLIT_BROKE_DOWN,      //  The inner Krylov solver broke down
    MULTISPLIT_NOT_FINITE,      //  The block's new values are not finite
    MULTISPLIT_GAVE_BACK        //  The inner solver diverged, giving the
                                //  block back unchanged, too many times
                                //  in a row
} multisplit_failure_t;

//  The local state of one task
typedef struct _multisplit_t multisplit_t;

//  Defaults: krylov (CG on symmetric blocks) with relative tolerance
//  1e-3, at least MULTISPLIT_INNER_REDUCTION per solve, and 1000
//  iterations; LU limited to 1 GiB of band storage.  The
//  choice is measured: see docs/SOLVERS.md.
void
    multisplit_options_defaults (multisplit_options_t *options);

//  Parse a job-file name ("krylov", "lu-banded", "cg", "bicgstab") into
//  *inner.  Returns 0, or -1 for an unknown name (*inner untouched).
int
    multisplit_inner_parse (const char *name, multisplit_inner_t *inner);

//  Job-file name of an inner solver ("krylov", "lu-banded", ...).
const char *
    multisplit_inner_name (multisplit_inner_t inner);

//  Row-block boundaries for `tasks` tasks in proportion to their powers
//  (NULL: equal).  Writes boundaries[0..tasks] with boundaries[0] = 0,
//  boundaries[tasks] = n, every block at least one row.  Returns 0, or -1
//  with a reason (tasks < 1, n < tasks, a power not finite and > 0).
int
    multisplit_partition (int32_t n, int32_t tasks, const double *powers,
                          int32_t *boundaries, char *error,
                          size_t error_size);

//  The extended row range of `task`: its core block widened by overlap
//  rows on each side, clipped to [0, n).
void
    multisplit_extended_range (const int32_t *boundaries, int32_t tasks,
                               int32_t task, int32_t overlap,
                               int32_t *begin_p, int32_t *end_p);

//  Set up task `task`: rows are the extended rows of the global matrix
//  (as multisplit_extended_range gives them; global columns, ncols = n)
//  and b_rows the right-hand side on them; both are copied, so the caller
//  may free them.  Factors or binds the inner solver.  The initial iterate
//  is zero.  Returns 0 and *self_p, or -1 with a reason (shape mismatch,
//  band too large for LU, singular block).
int
    multisplit_new (const csr_t *rows, const double *b_rows,
                    const int32_t *boundaries, int32_t tasks, int32_t task,
                    int32_t overlap, const multisplit_options_t *options,
                    multisplit_t **self_p, char *error, size_t error_size);

//  Destroy the task state; nullifies the reference. Safe on NULL.
void
    multisplit_destroy (multisplit_t **self_p);

//  First core row (global index).
int32_t
    multisplit_row_begin (const multisplit_t *self);

//  One past the last core row (global index).
int32_t
    multisplit_row_end (const multisplit_t *self);

//  Number of components needed from task `task` (0 for itself).
int32_t
    multisplit_dependency_count (const multisplit_t *self, int32_t task);

//  Sorted global indices needed from task `task` (dependency_count of
//  them); borrowed, valid for the object's life.
const int32_t *
    multisplit_dependency_indices (const multisplit_t *self, int32_t task);

//  Position of task `task`'s group in x_ext.
int32_t
    multisplit_dependency_offset (const multisplit_t *self, int32_t task);

//  Length of x_ext: all components needed from all other tasks.
int32_t
    multisplit_external_size (const multisplit_t *self);

//  Relative tolerance of the inner Krylov solves: the options' one, or
//  roundoff for a block coupled to no other task
double
    multisplit_inner_tolerance (const multisplit_t *self);

//  Fill x_ext (external_size values) from a whole global vector x, for a
//  driver that holds every task's iterate in one process (the serial
//  driver, benchmarks, tests).
void
    multisplit_external_from_global (const multisplit_t *self,
                                     const double *x, double *x_ext);

//  Number of tasks this task needs values from.
int32_t
    multisplit_neighbour_count (const multisplit_t *self);

//  Check a neighbour's request list (received from the wire at set-up):
//  returns 0 if every index lies in this task's core, -1 otherwise.
int
    multisplit_check_request (const multisplit_t *self,
                              const int32_t *indices, int32_t count);

//  values[k] = current value of own core component indices[k].  The list
//  must have passed multisplit_check_request (asserted).
void
    multisplit_gather (const multisplit_t *self, const int32_t *indices,
                       int32_t count, double *values);

//  One iteration with the external values x_ext (multisplit_external_size
//  entries).  Returns 0 with *step filled, or -1 if the inner solver broke
//  down or produced a non-finite value; then the iterate is left unchanged
//  and *step still reports the inner status.  Allocates nothing.
int
    multisplit_iterate (multisplit_t *self, const double *x_ext,
                        multisplit_step_t *step);

//  After multisplit_iterate or multisplit_precondition failed: why, in
//  words for the job's failure (the inner solver, the block's rows
//  counted from 1, and a row without a nonzero diagonal entry, which a
//  Krylov block breaks down on where a pivoting LU does not).  Returns
//  false, text untouched, if the block's last solve did not fail.
bool
    multisplit_explain_failure (const multisplit_t *self, char *text,
                                size_t size);

//  z = M^-1 v on the core rows, M the block A_local as this task solves
//  it: for an outer Krylov method that uses the multisplitting as its
//  preconditioner (block Jacobi).  Banded LU solves exactly; a Krylov
//  inner solver applies its preconditioner once (iterations = 0: ILU(0)
//  or the diagonal) or runs that many iterations from zero.  Needs no
//  overlap (asserted).  Returns 0, or -1 on breakdown or a value not
//  finite.  Allocates nothing.
int
    multisplit_precondition (multisplit_t *self, const double *v, double *z,
                             int32_t iterations);

//  r = b - A x on the core rows (row_end - row_begin entries), with the
//  current core iterate and the owners' values x_ext for every other
//  component: the task's share of the true residual.
void
    multisplit_residual (const multisplit_t *self, const double *x_ext,
                         double *r);

//  y = A x on the core rows for any vector x: x_core on the core rows,
//  x_ext (multisplit_external_size entries, laid out as for iterating)
//  for every other component.  TSIRM's products A (x_j - x0).
void
    multisplit_multiply (const multisplit_t *self, const double *x_core,
                         const double *x_ext, double *y);

//  r = b - A x on the core rows for any vector x, as multisplit_multiply.
void
    multisplit_residual_of (const multisplit_t *self, const double *x_core,
                            const double *x_ext, double *r);

//  The inner solver actually running: MULTISPLIT_INNER_KRYLOV resolves to
//  MULTISPLIT_INNER_CG or MULTISPLIT_INNER_BICGSTAB at set-up.
multisplit_inner_t
    multisplit_inner (const multisplit_t *self);

//  Current iterate on the core rows; borrowed, changes on iteration.
const double *
    multisplit_solution (const multisplit_t *self);

//  Replace the core iterate (initial guess or checkpoint restore); the
//  overlap part keeps its values.
void
    multisplit_set_solution (multisplit_t *self, const double *x_core);

#ifdef __cplusplus
}
#endif

//  Matrix entries the block's iterations and preconditioner applies
//  touched since the last call (a measure of work, the same on every
//  block: a rebalance cuts rows by work per second, not by iterations
//  per second, which a block whose inner solve converged early inflates).
double
    multisplit_take_work (multisplit_t *self);

#endif
