/*  =========================================================================
    spawner_drain - the order in which a drain moves a cluster's tasks

    A drain moves every task off a cluster.  Each moved task restarts
    from its neighbours' copies of its checkpoint, and its state crosses
    the backbone towards its new daemon.  The moves are grouped in steps:
    the tasks of one step move together, and the next step waits until
    every task iterates again.

    The steps come from the job's `drain/schedule`:
      one    one task per step (the cautious baseline)
      all    every task at once, the transport sharing the backbone
      oggp   OGGP steps of the traffic (k transfers at a time, beta per
             step, collectives/ggp.h)
      ggp    GGP steps
      auto   OGGP when eta_o says scheduling pays (collectives/eta.h),
             else all at once (the default)
    Whatever the schedule, a step never moves two tasks that exchange
    values: each one's checkpoint copies are held by its neighbours, so
    they stay on daemons that keep running, and nothing is lost.  A step
    that would hold two neighbours is split, in order.  (The caller's
    `neighbours` says which tasks those are: for tasks that run total
    exchanges, every pair.)
    =========================================================================
*/
#ifndef SPAWNER_DRAIN_H_INCLUDED
#define SPAWNER_DRAIN_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

typedef struct _spawner_drain_t spawner_drain_t;

//  True if tasks `first` and `second` exchange values (either way).
typedef bool (spawner_drain_neighbours_fn) (size_t first, size_t second,
                                            void *arg);

//  True if `schedule` names a schedule (for the job file's check).
bool
    spawner_drain_schedule_known (const char *schedule);

//  Plan the moves of `count` tasks, `ranks` theirs, `seconds` [i] the
//  time task ranks [i]'s state takes over the backbone at full speed;
//  the backbone carries `k` >= 1 transfers at full speed and each step
//  costs `beta` seconds to set up.  `neighbours` tells which tasks
//  exchange values.  Returns NULL for an unknown schedule.
spawner_drain_t *
    spawner_drain_new (const char *schedule, const size_t *ranks,
                       const double *seconds, size_t count, size_t k,
                       double beta, spawner_drain_neighbours_fn *neighbours,
                       void *arg);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    spawner_drain_destroy (spawner_drain_t **self_p);

//  The schedule used: "one", "all", "oggp" or "ggp" ("auto" decided).
const char *
    spawner_drain_used (spawner_drain_t *self);

//  Predicted seconds of the scheduled moves (OGGP's cost) and of all at
//  once (eta_o + beta), as the auto decision compared them.
void
    spawner_drain_predicted (spawner_drain_t *self, double *scheduled,
                             double *at_once);

//  Steps, once split so that no step holds two neighbours.
size_t
    spawner_drain_step_count (spawner_drain_t *self);

//  Tasks of a step, and the i-th of them (a rank).
size_t
    spawner_drain_step_size (spawner_drain_t *self, size_t step);
size_t
    spawner_drain_step_task (spawner_drain_t *self, size_t step, size_t i);

#endif
