/*  =========================================================================
    jace_task_runtime - the side of a task only the daemon sees

    Creating a task from its ASSIGN, delivering neighbours' DATA to it and
    counting its iterations.  Not installed: application writers use
    jace_task.h.
    =========================================================================
*/
#ifndef JACE_TASK_RUNTIME_H_INCLUDED
#define JACE_TASK_RUNTIME_H_INCLUDED

#include "jace_msg.h"
#include "jace_security.h"
#include "jace_shaper.h"
#include "jace_auth.h"
#include "jace_exchange.h"
#include "jace_task.h"

//  The job keys the daemon's side of every task reads (the worker, the
//  server and this runtime), NULL-terminated.  Declared here, beside the
//  runtime the spawner links too, so that the spawner can refuse a job
//  key nobody reads.  A new key read on the daemon side goes here.
extern const char *const jace_task_runtime_keys [];

//  The values exchange/algorithm may take, NULL-terminated (the daemon
//  plans each; unset is lg).
extern const char *const jace_task_exchange_algorithms [];

//  Check the values of those keys no other part checks (job/mode,
//  job/local_tolerance, job/converge_iterations, exchange/*), so that
//  the spawner refuses a job whose daemons would misread them
//  ("mode = fast" ran asynchronously); jace_task_new checks them too.
//  Returns 0, or -1 with "KEY = 'VALUE' ..." in reason.
int
    jace_task_runtime_check (zhash_t *params, char *reason,
                             size_t reason_size);

//  Create the task an ASSIGN describes, taking the message (its payloads
//  are the task's blocks); security is borrowed (keys for the links to
//  neighbours).  The ASSIGN's `key` is the job key (Z85): every DATA and
//  request list the task sends is sealed with it.  Returns NULL with the
//  reason if the ASSIGN is inconsistent or has no valid job key.
jace_task_t *
    jace_task_new (jace_msg_t **assign_p, jace_security_t *security,
                   char *reason, size_t reason_size);

//  Destroy task; nullifies the reference. Safe on NULL.
void
    jace_task_destroy (jace_task_t **self_p);

//  Job id and epoch of the task.
const char *
    jace_task_job (const jace_task_t *self);

//  The job key every message of the job is sealed with (from ASSIGN).
const jace_key_t *
    jace_task_job_key (const jace_task_t *self);
int64_t
    jace_task_epoch (const jace_task_t *self);

//  Local change the application reported for its last iteration.
double
    jace_task_change (const jace_task_t *self);

//  True if the application called jace_task_set_converged during its last
//  iteration; clears it.
bool
    jace_task_take_converged (jace_task_t *self);

//  Why the application's iterate gave up (jace_task_set_failure), or NULL
//  if it did not say.
const char *
    jace_task_failure (const jace_task_t *self);

//  The application's jace_task_set_source_wait, in msec (0: none).
int
    jace_task_source_wait (const jace_task_t *self);

//  Count one completed iteration.
void
    jace_task_count_iteration (jace_task_t *self);

//  Keep a neighbour's DATA if it is newer than what we hold.  Returns 0
//  (kept, or stale and dropped), or -1 with the reason if it does not
//  belong to this task at all, or if its iteration is further ahead than
//  its sender could have reached (MAX_ITERATION_RATE in jace_task.c).
//  The caller has checked its seal (jace_msg_sealed with the job key).
int
    jace_task_deliver (jace_task_t *self, jace_msg_t *data, char *reason,
                       size_t reason_size);

//  Route this task's sends through an emulated network (borrowed; the
//  shaper must be destroyed before the task, as it holds its sockets).
void
    jace_task_set_shaper (jace_task_t *self, jace_shaper_t *shaper);

//  Asynchronous iterations: values for tasks of other clusters go on links
//  of their own that keep one vector queued and TCP's buffer to two, so a
//  slow link carries the newest values, not a backlog of stale ones (the
//  newest is dropped when the link is full: another follows).  Never in
//  synchronous mode, whose every iteration's values must arrive.
void
    jace_task_keep_remote_fresh (jace_task_t *self);

//  Sends a full link refused so far (their values go again later unless
//  newer ones went first: jace_task_send_unsent).
uint64_t
    jace_task_dropped (const jace_task_t *self);

//  Send again the newest values a full link refused (jace_task_send),
//  to each task no newer values went to.  Returns true if a link is
//  still full: call again soon.
bool
    jace_task_send_unsent (jace_task_t *self);

//  DATA refused so far because its iteration was out of its sender's
//  reach.
uint64_t
    jace_task_out_of_reach (const jace_task_t *self);

//  Begin the set-up exchange (round 0 of the job's total exchanges):
//  our request list to each of our sources (every other task, with
//  possibly an empty list, when jace_task_set_sinks was never called),
//  and, along routes (jace_task_set_routes), an empty one to every task
//  we have a route to.  Lists that came before are taken now.  Returns
//  the number of messages that could not be sent.
size_t
    jace_task_send_requests (jace_task_t *self);

//  Our sources: the tasks we asked for values during setup, in rank order.
//  Writes them to ranks (room for jace_task_count () entries, or NULL to
//  count only) and returns how many there are.  ACCEPT carries them.
size_t
    jace_task_sources (const jace_task_t *self, int64_t *ranks);

//  Our sinks, as START lists them (the tasks that will ask us for values):
//  from now on only their request lists are awaited, every other task
//  counts as asking nothing.  ranks must be sorted, distinct, other tasks'
//  ranks; returns 0, or -1 with the reason (nothing changed) if not.
int
    jace_task_set_sinks (jace_task_t *self, const int64_t *ranks,
                         size_t count, char *reason, size_t reason_size);

//  Task node->task now runs on daemon `node` with epoch node->epoch: send
//  to its new data endpoint, ignore its old epoch, send it our request
//  list again if it is one of our sources (to every task when exchanges
//  are routed), and our pieces of our last two exchanges, and pull
//  straight from their givers the pieces of the exchange under way that
//  went through it.  Returns 0, or -1 if the move is not newer than what
//  we know.
int
    jace_task_remap (jace_task_t *self, const jace_node_t *node);

//  True once the set-up exchange is done: the request list of every sink
//  has arrived (of every other task, when jace_task_set_sinks was never
//  called), and every list we relay has gone on.
bool
    jace_task_requests_complete (const jace_task_t *self);

//  What the set-up exchange still waits for, in words ("request lists of
//  tasks 3 9", "the exchange's round 0"), for a log line.
void
    jace_task_requests_missing (const jace_task_t *self, char *text,
                                size_t size);

//  True when every task we asked for values has sent those of the
//  previous iteration or newer (the synchronous mode's condition), or,
//  for a task that resumes a job under way (jace_task_set_iteration: a
//  checkpoint, or a replacement's initial state), while some of them has
//  not sent to us yet: they wait for us to catch up.
bool
    jace_task_sources_ready (const jace_task_t *self);

//  True when a task we asked for values has sent those of our current
//  iteration or a newer one: it went on iterating past the one we ended.
bool
    jace_task_sources_ahead (const jace_task_t *self);

//  Keep what our links still queue when the task is destroyed, for up to
//  msec (links drop it at once otherwise): a task assigned again (a
//  rebalance) may have just answered another task's SLICE_ASK.
void
    jace_task_linger (jace_task_t *self, int msec);

//  Send any message to task `to` on its data link (through the emulated
//  network if there is one); takes *msg_p.  Returns 0, or -1 if it was
//  dropped (link full or unreachable).
int
    jace_task_send_msg (jace_task_t *self, int64_t to, jace_msg_t **msg_p);

//  The tasks that keep our checkpoint number `round`: up to `copies` of
//  them written to holders.  Neighbours first (our cluster, then the
//  nearest rank), rotating over the neighbours from round to round;
//  when there are fewer neighbours than copies, the nearest other tasks
//  make up the number (and then every round goes to the same tasks).
//  With `offsite` and two copies or more, a round whose holders all run
//  in our cluster gives its last copy to the nearest task in another
//  cluster instead (a neighbour if one is there), so that a copy
//  survives a whole cluster's loss.  Returns how many were written.
//  Call after the request exchange.
size_t
    jace_task_checkpoint_holders (const jace_task_t *self, size_t copies,
                                  bool offsite, int64_t round,
                                  int64_t *holders);

//  True if task `rank` keeps copies of our checkpoints in some round, by
//  jace_task_checkpoint_holders with the same copies and offsite.
bool
    jace_task_is_holder (const jace_task_t *self, size_t copies,
                         bool offsite, int64_t rank);

//  The tasks a replacement asks for its checkpoint copies (FETCH): with
//  `offsite` and two copies or more, every other task (the off-site
//  holder was chosen from where its predecessor ran, among the tasks
//  as they were placed then); else its neighbours (sources and sinks)
//  when there are at least `copies` of them, as holders rotate over
//  them, else the fixed holder set jace_task_checkpoint_holders gives.
//  targets has room for jace_task_count () entries; returns how many
//  were written (none when copies is 0).  Call after
//  jace_task_set_sinks.
size_t
    jace_task_fetch_targets (const jace_task_t *self, size_t copies,
                             bool offsite, int64_t *targets);

//  Append to checkpoint `copy` the newest values we hold from each
//  neighbour (two payloads: int64 [from, first, iteration, epoch, count]
//  per neighbour, and the values), so that a task restored from it
//  computes its first iteration against the values its state was
//  computed with, not against zeros.
void
    jace_task_save_newest (const jace_task_t *self, jace_msg_t *copy);

//  Take the neighbours' values a checkpoint saved, for each neighbour we
//  have received nothing from yet (anything received is newer).  Returns
//  how many neighbours' values were taken.
size_t
    jace_task_restore_newest (jace_task_t *self, const jace_msg_t *copy);

//  Append to checkpoint `copy` (after jace_task_save_newest) our pieces
//  of the total exchanges we completed last, as far as our log holds
//  them (two payloads: int64 [rounds, first round, then each round's size
//  per task], and the pieces end to end, rounds in order).  A task that
//  completed round r may die before the others got its pieces of r;
//  restored at r, it runs r + 1 next and could not give them again
//  otherwise.  Tasks lost together may restore from copies of different
//  rounds, so the copy reaches back over our last three copies' rounds
//  (the last round up to 64 MiB, the older ones together as many bytes
//  as the copy's state, the payload before, or 1 MiB if that is less).
//  Each call counts as a copy made.
void
    jace_task_save_pieces (jace_task_t *self, jace_msg_t *copy);

//  Put the pieces a checkpoint saved back in our exchange log (after
//  jace_task_restore_newest, which restores the exchange count).
//  Returns 0, or -1 when the copy holds none that fit this task (any
//  other shape is not trusted: nothing is taken), or a round could not
//  be logged.
int
    jace_task_restore_pieces (jace_task_t *self, const jace_msg_t *copy);

//  The job's iterate a rebalance sent with our ASSIGN, as the spawner
//  gathered it: every unknown of the job, or, when the application said
//  what each task reads, our rows and those unknowns only (nothing of
//  the size of the job is built from them).
typedef struct _jace_preload_t jace_preload_t;

//  The iterate our ASSIGN brought, or NULL when it brought none.  The
//  caller destroys it.
jace_preload_t *
    jace_task_preloaded (const jace_task_t *self);

//  Destroy a preloaded iterate; nullifies the reference.
void
    jace_preload_destroy (jace_preload_t **self_p);

//  The iteration the job goes on from.
int64_t
    jace_preload_iteration (const jace_preload_t *self);

//  Our rows' unknowns (*count of them), in order.
const double *
    jace_preload_rows (const jace_preload_t *self, size_t *count);

//  Unknown `index` of the job's iterate: 0 for one the spawner did not
//  send (nothing of ours reads it).
double
    jace_preload_value (const jace_preload_t *self, int64_t index);

//  Take, from the job's iterate, the values we ask each source for
//  (jace_task_request, in that order, as the source would send them), as
//  if it had sent them at the preload's iteration - 1: the first
//  iteration after a rebalance then computes against the iterate, not
//  against zeros.  Sources we heard from already keep what they sent.
void
    jace_task_seed_newest (jace_task_t *self, const jace_preload_t *preload);

//  A rebalance's iterate taken straight from the tasks that held it: the
//  old cut's owners keep their rows of the snapshot the spawner took,
//  and each task of the new cut asks each of them for the part of its
//  new rows and of the unknowns it reads that they hold, in ranges of
//  unknowns.  Nothing then goes through the spawner.
typedef struct _jace_handoff_t jace_handoff_t;

//  What our task needs of the iterate: its rows and, its requests made
//  (jace_task_request), the unknowns it reads; old_first holds the old
//  cut's row starts (count + 1 of them; unknowns per row as in the
//  ASSIGN).  The job goes on from `iteration`.  NULL, with the reason,
//  if the old cut is not a cut of the job's rows.
jace_handoff_t *
    jace_handoff_new (jace_task_t *task, const int64_t *old_first,
                      int64_t iteration, char *reason, size_t reason_size);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    jace_handoff_destroy (jace_handoff_t **self_p);

//  The ranges of unknowns to ask old owner `owner` for, as begin, end
//  pairs (*pairs of them), sorted; NULL when we need nothing of it.
const int64_t *
    jace_handoff_asks (const jace_handoff_t *self, int64_t owner,
                       size_t *pairs);

//  Number of values owner's ranges cover.
size_t
    jace_handoff_ask_length (const jace_handoff_t *self, int64_t owner);

//  Take old owner `owner`'s values of its ranges, in order.  Returns 0,
//  or -1 with the reason (we asked it nothing, it answered already, or
//  the count is not what we asked).
int
    jace_handoff_take (jace_handoff_t *self, int64_t owner,
                       const double *values, size_t count, char *reason,
                       size_t reason_size);

//  Owners we still wait for.
size_t
    jace_handoff_missing (const jace_handoff_t *self);

//  Tasks of the old cut.
int64_t
    jace_handoff_count (const jace_handoff_t *self);

//  True if we asked old owner `owner` and its values are not in yet.
bool
    jace_handoff_waits_for (const jace_handoff_t *self, int64_t owner);

//  The gathered iterate, as a rebalance's ASSIGN would bring it (NULL
//  while an owner is missing).  The caller destroys it.
jace_preload_t *
    jace_handoff_preload (jace_handoff_t *self);

//  Copy into out the values of `pairs` ranges (begin, end pairs of
//  unknowns) from a block of `count` unknowns starting at `first`: an
//  old owner answering.  Returns the number copied (at most count: out
//  needs no more room), or -1 if a range is empty, not after the one
//  before it, or not inside the block.
int64_t
    jace_handoff_serve (const int64_t *ranges, size_t pairs, int64_t first,
                        const double *block, size_t count, double *out);

//  Set the number of completed iterations (a task restored from a
//  checkpoint goes on from the checkpoint's iteration; a replacement that
//  starts from its initial state sets 0).  The task then counts as
//  behind its sources (jace_task_sources_ready).
void
    jace_task_set_iteration (jace_task_t *self, int64_t iteration);

//  The daemon of task `rank` as our table has it (our own for our rank).
const jace_node_t *
    jace_task_node (const jace_task_t *self, int64_t rank);

//  The routes of the job's total exchanges this task takes part in (the
//  daemon plans them: daemon_exchange); without any, every piece goes
//  straight to its destination.  Every task of the job must have routes
//  of one plan; when they change (a task moved to another cluster), the
//  exchange under way ends by direct pulls.  Returns 0, or -1 with the
//  reason if a route is not valid (nothing changed).
int
    jace_task_set_routes (jace_task_t *self, const jace_route_t *routes,
                          size_t count, char *reason, size_t reason_size);

//  Wait at most msec for input and handle it: the daemon's loop, which
//  delivers neighbours' messages with jace_task_deliver.  Returns 0, or
//  -1 if the task must stop (the exchange then returns -1 at once).
typedef int (jace_task_wait_fn) (void *arg, int msec);

//  How jace_task_alltoallv waits for its pieces; without a waiter it
//  returns -1.
void
    jace_task_set_waiter (jace_task_t *self, jace_task_wait_fn *wait,
                          void *arg);

//  Microseconds jace_task_alltoallv has spent waiting for its pieces so
//  far: time in an iteration that is not computing.
int64_t
    jace_task_waited_usecs (const jace_task_t *self);

//  The timed part of the exchange under way (the set-up exchange: the
//  daemon calls it while it waits for request lists).  Returns msec
//  until it needs to run again, or -1 when no exchange is under way.
int64_t
    jace_task_exchange_tick (jace_task_t *self);

//  Why the exchange under way cannot complete, or NULL.
const char *
    jace_task_exchange_failure (const jace_task_t *self);

//  The work iterate reported (jace_task_set_work) since the last call,
//  0 for none.
double
    jace_task_take_work (jace_task_t *self);

#endif
