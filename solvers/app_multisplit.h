/*  =========================================================================
    app_multisplit - sparse linear systems Ax = b by multisplitting

    The AIAC application of the MAHEVE paper: the rows of A are split in
    blocks (one per task, in proportion to the daemons' power, optionally
    overlapping), each task solves its diagonal block with an inner solver
    against the newest values of the other blocks, and sends each other
    task exactly the components it asked for at set-up (dependencies come
    from the matrix).  Asynchronous by default; job/mode = sync waits for
    the previous iteration's values of every task it depends on.

    Parameters (job file keys):
      problem/kind      poisson2d | poisson3d | nascg | matrix |
                        random-dominant | random-spd
      problem/n         poisson2d, poisson3d: grid side N (n = N^2, N^3);
                        other generated kinds: the order n
      problem/bandwidth nascg: largest |i - j| (default n / 50)
      problem/per_row   nascg, random-*: random entries per row (default 4)
      problem/dominance random-dominant: diagonal / off-diagonal sum (2)
      problem/shift     nascg, random-spd: diagonal shift (default 1)
      problem/seed      random kinds: seed (default 1)
      problem/matrix    matrix: a Matrix Market file (coordinate)
      problem/rhs       matrix: right-hand side file (default b = A*1)
      solver/inner      krylov (default) | lu-banded | cg | bicgstab
      solver/inner_tolerance   Krylov relative tolerance (default 1e-3)
      solver/overlap    rows of overlap on each side (default 0)
      solver/outer      multisplit (default) | tsirm | gmres | cg (sync
                        only: GMRES(m) or CG preconditioned by the
                        blocks, outer_krylov.h)
      solver/tsirm_inner  multisplit (default) | gmres | cg (sync only:
                        the TSIRM window collects the iterates of GMRES
                        or CG cycles, as PETSc's KSPTSIRM)
      solver/gmres_restart, solver/cg_restart   steps per cycle
    Generated problems use b = A*1, so the exact solution is all ones and
    the summary reports the error against it.
    =========================================================================
*/
#ifndef APP_MULTISPLIT_H_INCLUDED
#define APP_MULTISPLIT_H_INCLUDED

#include "jace_task.h"

//  The application's callbacks.
extern const jace_app_t app_multisplit;

#endif
