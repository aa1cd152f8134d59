/*  =========================================================================
    daemon_handoff - a rebalance's iterate, straight between daemons

    A rebalance cuts the rows again while the job runs; every task then
    needs the iterate of the snapshot the spawner took, on its new rows
    and on the unknowns it reads.  The old cut's owners hold it: each
    daemon keeps its block of the last snapshot it was COLLECTed for, and
    answers a SLICE_ASK (ranges of unknowns, by job and snapshot) with a
    SLICE of those values.  A task assigned with `block/handoff_snapshot`
    asks each old owner for what it held of its needs (its own old block
    it serves itself), and is restored from what came, as from an
    iterate the spawner sent.  Asks and answers are sealed with the job
    key; a slice is taken only if it answers an ask of this snapshot,
    once, with the count asked.
    =========================================================================
*/
#ifndef DAEMON_HANDOFF_H_INCLUDED
#define DAEMON_HANDOFF_H_INCLUDED

#include "jace_msg.h"
#include "jace_task_runtime.h"

typedef struct _daemon_handoff_t daemon_handoff_t;

//  Create, keeping nothing and gathering nothing.
daemon_handoff_t *
    daemon_handoff_new (void);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    daemon_handoff_destroy (daemon_handoff_t **self_p);

//  Keep our block of snapshot `snapshot` of job `job`: `count` unknowns
//  from `first` (copied), replacing what was kept.
void
    daemon_handoff_keep (daemon_handoff_t *self, const char *job,
                         int64_t snapshot, int64_t first,
                         const double *values, size_t count);

//  Forget the kept block (the job ended).
void
    daemon_handoff_forget (daemon_handoff_t *self);

//  Forget the kept block unless it is of job `job` (another job came).
void
    daemon_handoff_forget_other (daemon_handoff_t *self, const char *job);

//  The SLICE answering a SLICE_ASK of our job from our kept block, with
//  our ids (sender, rank, epoch) and sealed with the job key, or NULL
//  with the reason (no block of that snapshot, ranges out of it).
jace_msg_t *
    daemon_handoff_answer (daemon_handoff_t *self, const jace_msg_t *ask,
                           const char *sender, jace_task_t *task,
                           char *reason, size_t reason_size);

//  If task's ASSIGN asks for slices (block/handoff_snapshot), start
//  gathering them: ask each old owner with jace_task_send_msg, take our
//  own old block from what we keep.  Returns 1 while gathering, 0 when
//  the ASSIGN asks none, -1 with the reason (malformed params, or our
//  own block is not kept for that snapshot).
int
    daemon_handoff_begin (daemon_handoff_t *self, jace_task_t *task,
                          const char *sender, char *reason,
                          size_t reason_size);

//  Take a SLICE for the task gathering, and once the owners of a step
//  answered, ask those of the next (block/handoff_step/<owner>: the
//  spawner's schedule of the slices between clusters).  Returns 0, or -1
//  with the reason (none gathered, another snapshot, not asked, wrong
//  count).
int
    daemon_handoff_take (daemon_handoff_t *self, jace_task_t *task,
                         const char *sender, const jace_msg_t *slice,
                         char *reason, size_t reason_size);

//  True while the task gathers slices.
bool
    daemon_handoff_gathering (const daemon_handoff_t *self);

//  True when every slice asked for came.
bool
    daemon_handoff_complete (const daemon_handoff_t *self);

//  The ranks of the old owners not answered yet, as text ("2 5"), into
//  text.
void
    daemon_handoff_missing (const daemon_handoff_t *self, char *text,
                            size_t text_size);

//  The gathered iterate (when complete), ending the gathering; the caller
//  destroys it.  NULL while incomplete.  *values gets how many values it
//  holds, *from_others how many of them came in slices from other
//  daemons, *slices in how many.
jace_preload_t *
    daemon_handoff_finish (daemon_handoff_t *self, size_t *values,
                           size_t *from_others, size_t *slices);

//  Stop gathering (the task went).
void
    daemon_handoff_abandon (daemon_handoff_t *self);

#endif
