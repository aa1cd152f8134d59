/*  =========================================================================
    scatter - load-balanced scatter distributions

    Genaud, Giersch & Vivien, "Load-Balancing Scatter Operations for Grid
    Computing" (LIP RR-2003-17).  The root sends each processor its share
    in turn (single port), so processor i ends at
        T_i = sum_{j <= i} Tcomm(j, n_j) + Tcomp(i, n_i)      (equation 2)
    and we look for the distribution n_1..n_p of n items that minimises
    max_i T_i.  The root is the last processor.  Algorithm 1 is exact for
    any non-negative costs null at 0, in O(p n^2); Algorithm 2 is exact for
    increasing costs and much faster; the heuristic solves the rational
    linear program (3) with GLPK and rounds it, within the bound of
    equation (4) of the optimum.
    =========================================================================
*/
#ifndef JACE_SCATTER_H_INCLUDED
#define JACE_SCATTER_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Affine costs of one processor: T(x) = fixed + per_item * x for x > 0,
//  and T(0) = 0.  All figures in seconds, >= 0.
typedef struct {
    double comp_fixed;          //  Start-up of a computation
    double comp_per_item;       //  mu: seconds to compute one item
    double comm_fixed;          //  Latency of the root's send
    double comm_per_item;       //  lambda: seconds to receive one item
} scatter_proc_t;

//  General cost functions for the exact algorithms: time for processor
//  proc to compute (comm false) or receive (comm true) items items.
//  Must be >= 0 and 0 for 0 items; Algorithm 2 also needs them
//  non-decreasing in items.
typedef double (scatter_cost_fn) (void *args, size_t proc, size_t items,
                                  bool comm);

//  The cost function of affine processors (args: the scatter_proc_t
//  array), for the exact algorithms
double
    scatter_affine_cost (void *args, size_t proc, size_t items, bool comm);

//  Makespan (equation 2) of a distribution over affine processors, in
//  the given order (the root last)
double
    scatter_makespan (const scatter_proc_t *procs, size_t count,
                      const size_t *distribution);

//  Algorithm 1 for any costs: writes the optimal distribution of items
//  over count processors and returns its makespan.  O(count items^2).
double
    scatter_optimal_general (scatter_cost_fn *cost, void *args,
                             size_t count, size_t items,
                             size_t *distribution);

//  Algorithm 2 for non-decreasing costs: same contract, far faster
double
    scatter_optimal_increasing (scatter_cost_fn *cost, void *args,
                                size_t count, size_t items,
                                size_t *distribution);

//  Optimal distribution over affine processors (Algorithm 2)
double
    scatter_optimal (const scatter_proc_t *procs, size_t count,
                     size_t items, size_t *distribution);

//  Guaranteed heuristic: the rational optimum of linear program (3),
//  rounded so every share moves by less than one item.  Writes the
//  distribution, stores the rational optimum in *rational when not NULL,
//  and returns the makespan; returns -1 if the solver fails.
double
    scatter_heuristic (const scatter_proc_t *procs, size_t count,
                       size_t items, size_t *distribution,
                       double *rational);

//  The additive bound of equation (4): sum_j Tcomm(j, 1) +
//  max_i Tcomp(i, 1)
double
    scatter_heuristic_bound (const scatter_proc_t *procs, size_t count);

//  Uniform distribution (MPI_Scatter): items / count each, the remainder
//  to the first processors; returns its makespan
double
    scatter_uniform (const scatter_proc_t *procs, size_t count,
                     size_t items, size_t *distribution);

//  Ordering policy (section 4.3): writes into order the indices of the
//  processors by decreasing bandwidth (increasing comm_per_item, then
//  comm_fixed), the root last
void
    scatter_order_by_bandwidth (const scatter_proc_t *procs, size_t count,
                                size_t root, size_t *order);

//  Choice of the root (section 3.4).  per_item is a count x count matrix:
//  per_item[r * count + i] is the time to send one item from r to i;
//  fetch[r] the time to bring all items from where they are stored to r
//  (0 for processors on that computer).  Each candidate r orders the
//  others by bandwidth, runs the heuristic, and pays fetch[r]; returns
//  the best root and stores its total time in *time when not NULL.
size_t
    scatter_best_root (const scatter_proc_t *procs, size_t count,
                       const double *per_item, const double *fetch,
                       size_t items, double *time);

#endif
