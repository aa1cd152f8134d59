/*  =========================================================================
    app_jacobi2d - asynchronous Jacobi on the 2D Poisson problem

    The first AIAC application: the 5-point Laplacian on an N x N grid with
    zero Dirichlet boundary and a unit source (4 u_ij - sum of the four
    neighbours = 1), split into blocks of grid rows.  Each iteration uses
    the newest boundary rows received from the tasks above and below, and
    sends its own first and last rows to them without waiting.

    Parameters: problem/n, the grid side N (default 32).
    =========================================================================
*/
#ifndef APP_JACOBI2D_H_INCLUDED
#define APP_JACOBI2D_H_INCLUDED

#include "jace_task.h"

//  The application's callbacks.
extern const jace_app_t app_jacobi2d;

#endif
