/*  =========================================================================
    spawner_rebalance - whether a running job's rows should be shared out
    again, and how

    A job's rows are cut once, at placement, in proportion to the powers
    the daemons advertise.  What a task really does shows in its reports:
    the microseconds its daemon computes one iteration (PROGRESS), for the
    rows it holds.  Its rate is rows per second of computing; its fair
    share of the job's rows is in proportion to that rate.  A replacement
    of another power, or a node that slowed down, drifts the shares away
    from the cut; when a task's rows differ from its fair share by more
    than a threshold (relative to the share), the job is cut again.

    A pure function: no state, no messages.
    =========================================================================
*/
#ifndef SPAWNER_REBALANCE_H_INCLUDED
#define SPAWNER_REBALANCE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Cut `count` tasks' rows again in proportion to their rates.
//  `first_row` holds the current block starts (count + 1 of them, the
//  last one the job's rows); `usecs_per_iteration` [i] what task i's
//  daemon computes one iteration of its block in (each > 0).  Writes in
//  new_first (count + 1; every task keeps one row at least) the cut that
//  goes `step` (0 < step <= 1) of the way from the current one to the
//  fair one, and, in *drift, the largest relative difference of a task's
//  rows from its fair share.  Returns true if that drift exceeds
//  `threshold` and the new cut differs from the current one: the job
//  should be cut again.
//
//  The fair share takes a task's rows per second to stay what it
//  measured; where an iteration's cost grows faster than its rows (an
//  inner Krylov solve on a larger block needs more iterations), a full
//  step overshoots, and the next rebalance moves rows back: half steps
//  once the nodes are known damp that.
bool
    spawner_rebalance_plan (const int64_t *first_row,
                            const double *usecs_per_iteration, size_t count,
                            double threshold, double step,
                            int64_t *new_first, double *drift);

#endif
