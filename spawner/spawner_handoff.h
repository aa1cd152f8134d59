/*  =========================================================================
    spawner_handoff - the order in which a rebalance's slices cross
    between clusters

    With direct handoff (job/rebalance_handoff) each task of the new cut
    asks the old cut's owners for its part of the iterate.  Inside a
    cluster the slices go at once; between clusters they share the
    backbone, and the transfers old owner -> new task form the KPBS
    traffic matrix that GGP and OGGP schedule (docs/PLANNING.md section
    6): steps of at most k transfers, each sender and receiver in one
    transfer a step.  This module plans that: with `auto`, OGGP when
    eta_o says scheduling pays, else everything at once; each transfer
    gets the first step that carries part of it, and a task asks an
    owner only once the slices of its earlier steps are in.  Pure: no
    sockets, no clock.
    =========================================================================
*/
#ifndef SPAWNER_HANDOFF_H_INCLUDED
#define SPAWNER_HANDOFF_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  What the plan chose and predicted
typedef struct {
    const char *used;           //  "oggp", "ggp" or "all"
    size_t steps;               //  Steps of the schedule (1 for all)
    size_t transfers;           //  Transfers between clusters
    double bytes;               //  ... their bytes
    double scheduled_s;         //  eta_o's prediction with the schedule
    double at_once_s;           //  ... and sending everything at once
} spawner_handoff_plan_t;

//  True if `schedule` is one this module knows: auto, oggp, ggp, all.
bool
    spawner_handoff_schedule_known (const char *schedule);

//  Plan the slices of a rebalance of `count` tasks: bytes [i * count + j]
//  is what old owner i gives new task j, cluster [i] the cluster of task
//  i's daemon (the same in both cuts), seconds_per_byte [a * clusters +
//  b] the link from cluster a to b as measured (0: not measured), k the
//  transfers the backbone carries at full speed (>= 1), beta a step's
//  cost in seconds.  Writes into step [i * count + j] the step at which
//  task j asks owner i (0 inside a cluster, and for everything when
//  nothing is scheduled).  Returns 0, or -1 for an unknown schedule.
int
    spawner_handoff_plan (const char *schedule, const double *bytes,
                          const size_t *cluster, size_t count,
                          const double *seconds_per_byte, size_t clusters,
                          size_t k, double beta, size_t *step,
                          spawner_handoff_plan_t *plan);

#endif
