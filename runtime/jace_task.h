/*  =========================================================================
    jace_task - the task API: what an application writer implements and
    calls

    An application is a jace_app_t: a few callbacks the spawner uses to
    size and verify a job, and the callbacks a daemon runs for one task
    (set up the local problem, one iteration, the local block of the
    answer).  During an iteration the application reads the newest values
    received from each neighbour and sends its own; sends never block, and
    a newer value always replaces an older one.  The runtime does the rest:
    placement, messaging, heartbeats, convergence detection, verification.
    =========================================================================
*/
#ifndef JACE_TASK_H_INCLUDED
#define JACE_TASK_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_task_t jace_task_t;

//  An application.  Job parameters are the job file's keys flattened to
//  "section/key" -> value strings (e.g. "problem/n" -> "64").
typedef struct {
    const char *name;           //  Name job files use (job/application)

    //  Spawner side.  The problem splits into `rows` rows of
    //  `unknowns_per_row` unknowns each; tasks receive whole rows.
    //  Returns 0, or -1 with the reason (bad parameters).
    int (*shape) (zhash_t *params, int64_t *rows, int64_t *unknowns_per_row,
                  char *reason, size_t reason_size);

    //  Spawner side.  True relative residual ||b - Ax|| / ||b|| of the
    //  whole answer x (rows * unknowns_per_row values).
    double (*residual) (zhash_t *params, const double *x, int64_t n);

    //  Daemon side.  Build the local problem for this task; returns the
    //  application's state, or NULL with the reason.
    void *(*setup) (jace_task_t *task, char *reason, size_t reason_size);

    //  Daemon side.  One iteration: read neighbours' newest values, compute,
    //  send, and report the local change with jace_task_set_change.
    //  Returns 0, or -1 if the task cannot go on.
    int (*iterate) (jace_task_t *task, void *state);

    //  Daemon side.  The local block of the answer: `count` values from
    //  unknown number `first`.  Borrowed from state.
    const double *(*solution) (void *state, int64_t *first, size_t *count);

    //  Daemon side.  Free the state; nullifies the reference.
    void (*destroy) (void **state_p);
} jace_app_t;

//  This task's number, 0 .. jace_task_count () - 1.
int64_t
    jace_task_rank (const jace_task_t *self);

//  Number of tasks in the job.
int64_t
    jace_task_count (const jace_task_t *self);

//  Job parameter, or NULL.  Borrowed.
const char *
    jace_task_param (const jace_task_t *self, const char *key);

//  Job parameter as a number, or fallback if absent or not a number.
int64_t
    jace_task_param_int (const jace_task_t *self, const char *key,
                         int64_t fallback);
double
    jace_task_param_double (const jace_task_t *self, const char *key,
                            double fallback);

//  First row and number of rows this task owns.
int64_t
    jace_task_first_row (const jace_task_t *self);
int64_t
    jace_task_row_count (const jace_task_t *self);

//  First row owned by task `rank` (rows of the job when rank == count).
int64_t
    jace_task_row_of (const jace_task_t *self, int64_t rank);

//  Iterations this task has completed.
int64_t
    jace_task_iteration (const jace_task_t *self);

//  Send `count` values, standing for unknowns first .. first+count-1, to
//  task `to`.  Never blocks: returns 0, or -1 if the value was dropped
//  because the link is full (a newer one will follow).
int
    jace_task_send (jace_task_t *self, int64_t to, const double *values,
                    size_t count, int64_t first);

//  Newest values received from task `from`, or NULL if none yet.  Writes
//  their count, first unknown and the sender's iteration.  Borrowed until
//  the next iteration.
const double *
    jace_task_newest (jace_task_t *self, int64_t from, size_t *count,
                      int64_t *first, int64_t *iteration);

//  Report this iteration's local change (max-norm of the update).
void
    jace_task_set_change (jace_task_t *self, double change);

#ifdef __cplusplus
}
#endif

#endif
