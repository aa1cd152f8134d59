/*  =========================================================================
    banded_lu - direct solver for banded blocks through LAPACK (OpenBLAS)

    Detects the lower and upper bandwidths kl and ku of a square CSR block,
    packs it into LAPACK band storage (leading dimension 2 kl + ku + 1, the
    extra kl rows holding the fill-in of partial pivoting), factors it once
    with dgbtrf and then solves any number of right-hand sides with dgbtrs.

    Cost: storage 8 (2 kl + ku + 1) n bytes, factorisation about
    2 n kl (kl + ku) flops, each solve about 2 n (2 kl + ku) flops.  Cheap
    for narrow bands (2D Poisson blocks, NAS-CG-like blocks with a small
    bandwidth), prohibitive for wide ones (a 3D Poisson block of an N^3 grid
    has kl = ku = N^2): banded_lu_factor refuses blocks whose storage would
    exceed a caller-given limit instead of exhausting memory.
    =========================================================================
*/
#ifndef BANDED_LU_H_INCLUDED
#define BANDED_LU_H_INCLUDED

#include "csr.h"

#ifdef __cplusplus
extern "C" {
#endif

//  Failures of banded_lu_factor
#define BANDED_LU_SINGULAR      -1  //  A zero pivot: the block is singular
#define BANDED_LU_TOO_LARGE     -2  //  Band storage over the byte limit

//  A factored band matrix, ready to solve
typedef struct _banded_lu_t banded_lu_t;

//  Lower (kl) and upper (ku) bandwidths of square A: the largest i - j and
//  j - i over the stored entries (explicit zeros count).
void
    banded_lu_bandwidth (const csr_t *A, int32_t *kl_p, int32_t *ku_p);

//  Bytes of band storage the factorisation of A needs (the factors, not
//  counting the pivot indices).
size_t
    banded_lu_bytes (const csr_t *A);

//  Pack and factor square A (borrowed, only read).  Returns 0 and the
//  factors in *self_p, BANDED_LU_TOO_LARGE if banded_lu_bytes (A) exceeds
//  max_bytes (0 means no limit), or BANDED_LU_SINGULAR (no factors kept).
int
    banded_lu_factor (const csr_t *A, size_t max_bytes, banded_lu_t **self_p);

//  Destroy the factors; nullifies the reference. Safe on NULL.
void
    banded_lu_destroy (banded_lu_t **self_p);

//  Solve A x = b with the factors.  b and x have n entries and may be the
//  same array.  Allocates nothing.
void
    banded_lu_solve (const banded_lu_t *self, const double *b, double *x);

//  Order n of the factored matrix.
int32_t
    banded_lu_order (const banded_lu_t *self);

#ifdef __cplusplus
}
#endif

#endif
