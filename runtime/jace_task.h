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

#include "jace_msg.h"
#include "jace_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_task_t jace_task_t;

//  An application.  Job parameters are the job file's keys flattened to
//  "section/key" -> value strings (e.g. "problem/n" -> "64").
typedef struct {
    //  JACE_APP_ABI (jace.h) of the jace.h the application was built
    //  with.  First, so that a plugin of any ABI can be read this far:
    //  a plugin of another ABI is refused at load.
    int abi;
    const char *name;           //  Name job files use (job/application)

    //  Spawner side.  Check the parameters and load what verifying an
    //  answer needs (e.g. read a matrix file); returns the problem, or
    //  NULL with the reason ("FILE:LINE: ..." for files).  Runs before any
    //  daemon is reserved.
    void *(*load) (zhash_t *params, char *reason, size_t reason_size);

    //  Spawner side.  The problem splits into `rows` rows of
    //  `unknowns_per_row` unknowns each; tasks receive whole rows.
    void (*shape) (void *problem, int64_t *rows, int64_t *unknowns_per_row);

    //  Spawner side.  True relative residual ||b - Ax|| / ||b|| of the
    //  whole answer x (rows * unknowns_per_row values).
    double (*residual) (void *problem, const double *x, int64_t n);

    //  Spawner side, may be NULL.  Max-norm error against the known
    //  solution, or NAN when the solution is not known.
    double (*error) (void *problem, const double *x, int64_t n);

    //  Spawner side, may be NULL.  Attach the data task `task` needs and
    //  cannot build itself (its rows of a file matrix) to its ASSIGN as
    //  payloads; first_row has tasks + 1 block starts.  Returns 0 or -1.
    int (*attach) (void *problem, const int64_t *first_row, int64_t tasks,
                   int64_t task, jace_msg_t *assign);

    //  Spawner side.  Free the problem; nullifies the reference.
    void (*unload) (void **problem_p);

    //  Daemon side.  Build the local problem for this task; returns the
    //  application's state, or NULL with the reason.
    void *(*setup) (jace_task_t *task, char *reason, size_t reason_size);

    //  Daemon side.  One iteration: read neighbours' newest values, compute,
    //  send, and report the local change with jace_task_set_change.
    //  Returns 0, or -1 if the task cannot go on (the values are no longer
    //  finite, the inner solver broke down; jace_task_set_failure says
    //  why).
    int (*iterate) (jace_task_t *task, void *state);

    //  Daemon side.  The local block of the answer: `count` values from
    //  unknown number `first`.  Borrowed from state.
    const double *(*solution) (void *state, int64_t *first, size_t *count);

    //  Daemon side.  Free the state; nullifies the reference.
    void (*destroy) (void **state_p);

    //  Daemon side, may be NULL (no checkpoints: a replaced task starts
    //  again from its initial state).  The state to save, as bytes
    //  borrowed from state until the next iteration.  The runtime copies
    //  them, tags them with the iteration and checksums them.
    const void *(*checkpoint) (void *state, size_t *size);

    //  Daemon side, may be NULL.  Called after setup, before the first
    //  iteration, with the bytes `checkpoint` returned on a previous
    //  daemon; after a rebalance, with the job's iterate on this task's
    //  new rows (the values `solution` gives), so a checkpoint should be
    //  exactly that block.  Returns 0, or -1 with the reason if they do
    //  not fit this task (the runtime then starts from the initial
    //  state).
    int (*restore) (jace_task_t *task, void *state, const void *bytes,
                    size_t size, char *reason, size_t reason_size);

    //  True if an iteration run again on the same neighbour values gives
    //  the same answer (the local block is solved exactly, as in
    //  multisplitting).  In asynchronous mode the runtime then waits, a
    //  bounded time, for a newer neighbour vector before iterating again
    //  rather than spend the core on the same answer: on shared cores the
    //  slower tasks get it.  False for a relaxation that progresses on
    //  its own (one Jacobi sweep per iteration).
    bool idle_without_news;

    //  Spawner side, may be NULL.  Describe the tasks for the mapping
    //  (docs/MAPPING.md): for the blocks first_row (tasks + 1 starts),
    //  each task's work per iteration (jace_graph_set_cost, flops) and
    //  the values it needs from each other task (jace_graph_add_need).
    //  Returns 0, or -1 if it cannot.  Without it, each task costs its
    //  rows and needs one value from each rank neighbour.
    int (*describe) (void *problem, const int64_t *first_row, int64_t tasks,
                     jace_graph_t *graph);

    //  Spawner side, may be NULL.  The unknowns task `task` reads of the
    //  other tasks' under the blocks first_row (tasks + 1 starts): a new
    //  array of their numbers (row x unknowns per row + which), sorted,
    //  into *numbers (the caller frees it), their count into *count.
    //  After a rebalance each task then receives its own rows of the
    //  iterate and these values, not every unknown of the job.  Returns
    //  0, or -1 (the task receives every unknown).
    int (*reads) (void *problem, const int64_t *first_row, int64_t tasks,
                  int64_t task, int64_t **numbers, size_t *count);

    //  Spawner side, may be NULL.  What to tell the user of a job whose
    //  verified residual stopped falling (job/stall_snapshots): which
    //  method does not converge on this problem and what to try, e.g.
    //  "block Jacobi does not converge on this matrix; try solver/outer =
    //  tsirm or solver/overlap".  Borrowed from the problem.
    const char *(*stall_advice) (void *problem);

    //  Every job key the application reads, "section/key", NULL-terminated
    //  (e.g. { "problem/n", NULL }).  The spawner refuses a job file or a
    //  --set that names a key nobody reads, so a typo is an error, not a
    //  silently ignored setting.  NULL: the application declares nothing,
    //  and keys outside the runtime's sections are not checked.
    const char *const *keys;

    //  What `residual` measures, for the job's summary, e.g. "relative,
    //  true ||b - Ax|| / ||b||" (multisplitting).  NULL: "the
    //  application's residual".  A non-linear application's or a
    //  benchmark's is not ||b - Ax||, and the summary said it was.
    const char *residual_meaning;
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

//  All job parameters; borrowed.
zhash_t *
    jace_task_params (const jace_task_t *self);

//  Job parameter as a number, or fallback if absent or not a number.
int64_t
    jace_task_param_int (const jace_task_t *self, const char *key,
                         int64_t fallback);
double
    jace_task_param_double (const jace_task_t *self, const char *key,
                            double fallback);

//  Read parameter `key` of params as a number in [min, max]; an absent
//  key gives fallback.  Returns 0, or -1 with "KEY = 'TEXT' is not a
//  number in [MIN, MAX]" in reason.  For applications' load and setup.
int
    jace_param_number (zhash_t *params, const char *key, double fallback,
                       double min, double max, double *value, char *reason,
                       size_t reason_size);

//  The same for a count (sizes, iterations, seeds): the number must also
//  be whole ("1e3" is, "2.5" is not), or -1 with "KEY = 'TEXT' is not an
//  integer in [MIN, MAX]" in reason.
int
    jace_param_integer (zhash_t *params, const char *key, double fallback,
                        double min, double max, double *value, char *reason,
                        size_t reason_size);

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
//  task `to`.  Never blocks: returns 0, or -1 if the link is full; the
//  runtime then sends these values again once it has room, unless newer
//  ones went first.
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

//  Report, from iterate, the work this iteration did, in a unit of the
//  application's choosing that means the same on every task (flops,
//  matrix entries touched).  A rebalance cuts rows by each daemon's rate:
//  with the work reported, by work per second, the daemon's speed; else
//  by iterations per second, which misleads when the work per row
//  differs between tasks (a block whose inner solve converged early got
//  the largest share on the slowest node).  Optional.
void
    jace_task_set_work (jace_task_t *self, double work);

//  Report, from iterate, that the job's answer meets job/tolerance as far
//  as a residual this task computed with the others says (TSIRM's step
//  knows the true residual of the iterate it makes): the task counts as
//  locally converged now, not after job/converge_iterations iterations of
//  small change.  Holds for this iteration only: call it in each one
//  while it is so.  The spawner still verifies a snapshot before the job
//  ends.
void
    jace_task_set_converged (jace_task_t *self);

//  Report, from iterate, why it cannot go on, just before it returns -1
//  (which solver broke down on which rows, and what to try): the job's
//  failure then gives this reason, not the runtime's guess that the
//  method diverges.  NULL takes a reason back.  Optional.
void
    jace_task_set_failure (jace_task_t *self, const char *reason);

//  Set-up only, asynchronous mode: before each iteration, wait up to msec
//  for every task asked for values (jace_task_request) to have sent those
//  of our previous iteration or newer, the synchronous mode's condition,
//  then iterate anyway.  For a method that gains only when the tasks'
//  iterations move together (TSIRM's window combines the tasks' j-th
//  iterates with one coefficient), while a slow or lost neighbour still
//  holds nobody up for longer than msec.  0, the default, waits for
//  nothing more than a newer vector from any task (idle_without_news).
void
    jace_task_set_source_wait (jace_task_t *self, int msec);

//  Set-up only: ask task `from` for the unknowns `indices` (global
//  numbers).  Before the first iteration the runtime delivers every
//  task's requests to their owners (jace_task_requested), in a total
//  exchange (LG between clusters, as jace_task_alltoallv), so an owner
//  knows exactly what to send to whom; in synchronous mode each iteration
//  also waits for the newest values of every task asked here.
void
    jace_task_request (jace_task_t *self, int64_t from,
                       const int64_t *indices, size_t count);

//  The unknowns task `to` asked us for, or NULL (count 0) if none.
//  Borrowed; valid for the task's life.
const int64_t *
    jace_task_requested (jace_task_t *self, int64_t to, size_t *count);

//  Total exchange (MPI's alltoallv), from `iterate` only.  Every task of
//  the job calls it, the same number of times: the k-th call of each
//  task gives task d the buffers[d] of sizes[d] bytes (any size, 0
//  allowed, NULL when 0; buffers[our rank] comes back to us), and
//  returns in received[s], received_sizes[s] the buffer task s gave us in
//  its k-th call, for every s.  The buffers are copied; received ones
//  are borrowed until the next call.  Between clusters the pieces travel
//  as LG (docs/PLANNING.md), within a cluster straight; the call waits
//  for its pieces, serving the task's messages meanwhile.
//
//  Under failure: a task replaced on a new daemon restarts from its
//  checkpoint (or its initial state) with the call count it had then,
//  and calls again from there; its k-th call gets exactly what each task
//  gave in its k-th call, and every piece is delivered to each task
//  exactly once (copies are discarded by (call, source)).  Each task
//  keeps what it gave for a replacement to fetch, at most
//  exchange/log_mib MiB (default 256), oldest calls dropped first; a
//  piece routed through a dead daemon is fetched straight from its
//  giver; a checkpoint carries the pieces of the task's last completed
//  call, which the others may still wait for.  No wait is unbounded: a
//  call waits exchange/fallback_seconds (default 5) for its schedule,
//  then asks the givers directly.  An
//  application whose buffers of a call depend only on its state then
//  gets the same pieces as in a run without failure.
//
//  Returns 0, or -1 when the task must stop (the job ended, the daemon
//  is shutting down) or the exchange cannot complete (a piece no task
//  holds any more): iterate must then return -1 at once, and the runtime
//  reports which.
int
    jace_task_alltoallv (jace_task_t *self, const void *const *buffers,
                         const size_t *sizes, const void **received,
                         size_t *received_sizes);

//  jace_task_alltoallv calls completed (restored with a checkpoint).
int64_t
    jace_task_exchanges (const jace_task_t *self);

//  Number the next jace_task_alltoallv call count + 1 again: for a task
//  restored from a checkpoint whose application must run again rounds
//  that its predecessor ran after round `count` (an outer GMRES cycle
//  begun before the checkpoint).  The other tasks serve those rounds from
//  their logs.  Allowed before the task's first call since its set-up or
//  restore, for 0 <= count <= jace_task_exchanges.  Returns 0, or -1.
int
    jace_task_replay_exchanges (jace_task_t *self, int64_t count);

//  Data the spawner attached to this task's ASSIGN (e.g. its rows of a
//  matrix read from a file): number of blocks, and block `index`'s kind
//  and length in elements.
size_t
    jace_task_block_count (const jace_task_t *self);
int
    jace_task_block_kind (const jace_task_t *self, size_t index);
size_t
    jace_task_block_length (const jace_task_t *self, size_t index);
//  Copy block `index` into dest (host order; dest holds its length).
void
    jace_task_block_copy (const jace_task_t *self, size_t index, void *dest);

#ifdef __cplusplus
}
#endif

#endif
