/*  =========================================================================
    spawner_verify - the job's answer, gathered and checked

    Convergence never lies: when every task reports local convergence the
    spawner gathers a snapshot (COLLECT, one RESULT per task), assembles
    the vector and computes the true relative residual with the
    application's own `residual` callback.  Only a passing snapshot ends
    the job; after a failing one the iterations go on, and the next
    snapshot follows after VERIFY_BACKOFF_MIN_MSEC (or an eighth of the
    time the job has run, if less) while the residual falls by a quarter
    or more from one to the next, else after a back-off doubling up to
    VERIFY_BACKOFF_MAX_MSEC, so a job closing in is checked often and a
    stuck one never floods its daemons; after a replacement restores, the
    failures behind the back-off were the loss's, and it starts again
    from its least.  The vector kept is
    exactly the one verified.  The residuals checked also say when a job
    stopped converging: no snapshot beating the one before it by 1% over
    job/stall_snapshots of them.
    =========================================================================
*/
#ifndef SPAWNER_VERIFY_H_INCLUDED
#define SPAWNER_VERIFY_H_INCLUDED

#include "spawner_job.h"

typedef struct _spawner_verify_t spawner_verify_t;

//  Verification of `job` (borrowed) cut into `tasks` blocks whose first
//  rows are `first_row` (tasks + 1 entries, borrowed: the caller keeps it
//  current).
spawner_verify_t *
    spawner_verify_new (spawner_job_t *job, size_t tasks,
                        const int64_t *first_row);

//  Destroy; nullifies the reference. Safe on NULL.
void
    spawner_verify_destroy (spawner_verify_t **self_p);

//  True if a snapshot should begin at `now`: none is being gathered and
//  the back-off since the last one has passed.
bool
    spawner_verify_may_begin (spawner_verify_t *self, int64_t now);

//  Msec from `now` until a snapshot may begin (0: now), or -1 while one is
//  being gathered.
int64_t
    spawner_verify_wait (spawner_verify_t *self, int64_t now);

//  Begin a snapshot; returns its id (for COLLECT).
int64_t
    spawner_verify_begin (spawner_verify_t *self);

//  Id of the snapshot being gathered, or 0.
int64_t
    spawner_verify_snapshot (spawner_verify_t *self);

//  Give up the snapshot being gathered (a task moved: its block will not
//  come, or comes from another placement).
void
    spawner_verify_abandon (spawner_verify_t *self);

//  True if the snapshot being gathered holds task `rank`'s block: a task
//  lost after it answered need not cost the snapshot.
bool
    spawner_verify_has_block (spawner_verify_t *self, size_t rank);

//  A task was replaced: the snapshots that failed since it was lost
//  measured the loss, not how the iteration converges.  The next one may
//  begin as soon as every task settles again, and if it fails too, the
//  back-off starts again from its least.
void
    spawner_verify_disturbed (spawner_verify_t *self, int64_t now);

//  Task `rank`'s RESULT.  Returns 0 (kept, or a late answer to an older
//  snapshot, ignored), or -1 with a warning if it does not match the
//  task's block.
int
    spawner_verify_on_result (spawner_verify_t *self, size_t rank,
                              jace_msg_t *result);

//  True when every block of the current snapshot has arrived.
bool
    spawner_verify_gathered (spawner_verify_t *self);

//  Compute the residual of the gathered snapshot at `now`; returns true
//  if it passes the job's tolerance.  Sets the next snapshot's earliest
//  time otherwise.
bool
    spawner_verify_check (spawner_verify_t *self, int64_t now);

//  True if the last `window` snapshots checked (0: never true) have not
//  beaten the residual before them by 1% (STALL_PROGRESS): the iteration
//  stagnates, or grows.  *mark is that residual, *growing whether the
//  last one is above it.
bool
    spawner_verify_stalled (spawner_verify_t *self, int64_t window,
                            double *mark, bool *growing);

//  Residual of the last snapshot checked (INFINITY before any).
double
    spawner_verify_residual (spawner_verify_t *self);

//  Id of the last snapshot checked (its vector is the answer), or 0.
int64_t
    spawner_verify_last_checked (spawner_verify_t *self);

//  Snapshots begun so far.
int64_t
    spawner_verify_count (spawner_verify_t *self);

//  The answer (the last vector gathered) and its length; borrowed.
const double *
    spawner_verify_answer (spawner_verify_t *self, int64_t *unknowns);


#endif
