/*  =========================================================================
    eta - the brute-force redistribution time estimator eta_o and the
    decision whether scheduling pays

    eta_o (Wagner & Jeannot, INRIA RR-5361, Figure 5) simulates sending
    every message at once over a backbone that carries k transfers at full
    speed and is shared fairly beyond that: in each round every node splits
    its free bandwidth among its edges that have none yet (nodes by
    decreasing degree), the first transfer to finish sets the round's
    length, and the round is stretched by max(sum of fractions / k, 1).
    =========================================================================
*/
#ifndef JACE_ETA_H_INCLUDED
#define JACE_ETA_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  eta_o for the n1 x n2 row-major matrix w (seconds at full speed, >= 0)
//  and k >= 1 simultaneous full-speed transfers
double
    eta_brute_force (const double *w, size_t n1, size_t n2, size_t k);

//  Decide whether scheduling pays: computes the OGGP cost (with step cost
//  beta) and the brute-force time eta_o + beta (one set-up, all messages
//  at once); stores them when the pointers are not NULL.  True if
//  the schedule is faster than letting the transport share the backbone.
bool
    eta_scheduling_pays (const double *w, size_t n1, size_t n2, size_t k,
                         double beta, double *scheduled, double *brute);

#endif
