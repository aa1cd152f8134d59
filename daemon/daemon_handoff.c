/*  =========================================================================
    daemon_handoff - a rebalance's iterate, straight between daemons

    The asks and answers travel on the tasks' data links, through the
    emulated network on a virtual grid, so slices between clusters cross
    the same links the job's values do.
    =========================================================================
*/
#include "daemon_handoff.h"

#include <inttypes.h>

struct _daemon_handoff_t {
    //  What we keep, as an old owner
    char job [JACE_ID_MAX];     //  Job of the kept block, "" if none
    int64_t snapshot;           //  Its snapshot
    int64_t first;              //  Its first unknown
    double *values;             //  Its values
    size_t count;               //  ... how many
    //  What we gather, as a new owner
    jace_handoff_t *gathering;  //  NULL when not gathering
    int64_t gathering_snapshot; //  The snapshot asked for
    int64_t *steps;             //  Step at which we ask each old owner
    int64_t step;               //  The step we are at
    size_t taken;               //  Values taken so far
    size_t from_others;         //  ... of them in slices
    size_t slices;              //  Slices taken
};

daemon_handoff_t *
daemon_handoff_new (void)
{
    return (daemon_handoff_t *) zmalloc (sizeof (daemon_handoff_t));
}

void
daemon_handoff_destroy (daemon_handoff_t **self_p)
{
    assert (self_p);
    daemon_handoff_t *self = *self_p;
    if (self) {
        free (self->values);
        jace_handoff_destroy (&self->gathering);
        free (self->steps);
        free (self);
        *self_p = NULL;
    }
}

void
daemon_handoff_keep (daemon_handoff_t *self, const char *job,
                     int64_t snapshot, int64_t first, const double *values,
                     size_t count)
{
    assert (self && job && (values || count == 0));
    double *copy = (double *) malloc ((count + 1) * sizeof (double));
    assert (copy);
    memcpy (copy, values, count * sizeof (double));
    free (self->values);
    self->values = copy;
    self->count = count;
    self->first = first;
    self->snapshot = snapshot;
    snprintf (self->job, sizeof self->job, "%s", job);
}

void
daemon_handoff_forget (daemon_handoff_t *self)
{
    assert (self);
    free (self->values);
    self->values = NULL;
    self->count = 0;
    *self->job = 0;
}

void
daemon_handoff_forget_other (daemon_handoff_t *self, const char *job)
{
    assert (self && job);
    if (!streq (self->job, job))
        daemon_handoff_forget (self);
}

//  The ranges of an ask (its one I64 payload of begin, end pairs) into
//  *ranges (the caller frees), or -1 with the reason.
static int
s_ask_ranges (const jace_msg_t *ask, int64_t **ranges, size_t *pairs,
              char *reason, size_t reason_size)
{
    size_t length = jace_msg_payload_count (ask) == 1
                  ? jace_msg_payload_length (ask, 0) : 0;
    if (jace_msg_payload_count (ask) != 1
    ||  jace_msg_payload_kind (ask, 0) != JACE_PAYLOAD_I64
    ||  length == 0 || length % 2) {
        snprintf (reason, reason_size, "SLICE_ASK from %s does not carry "
                  "one list of begin, end pairs", jace_msg_sender (ask));
        return -1;
    }
    *ranges = (int64_t *) malloc (length * sizeof (int64_t));
    assert (*ranges);
    jace_msg_payload_copy (ask, 0, *ranges);
    *pairs = length / 2;
    return 0;
}

jace_msg_t *
daemon_handoff_answer (daemon_handoff_t *self, const jace_msg_t *ask,
                       const char *sender, jace_task_t *task, char *reason,
                       size_t reason_size)
{
    assert (self && ask && sender && task);
    int64_t asker = jace_msg_task (ask);
    if (asker < 0 || asker >= jace_task_count (task)
    ||  asker == jace_task_rank (task)) {
        snprintf (reason, reason_size, "SLICE_ASK from %s for task %" PRId64
                  ", not another task of the job", jace_msg_sender (ask),
                  asker);
        return NULL;
    }
    if (!streq (self->job, jace_msg_job (ask))
    ||  self->snapshot != jace_msg_iteration (ask)) {
        snprintf (reason, reason_size, "SLICE_ASK from %s for snapshot %"
                  PRId64 " of job %s: we keep %s", jace_msg_sender (ask),
                  jace_msg_iteration (ask), jace_msg_job (ask),
                  *self->job ? "another" : "none");
        return NULL;
    }
    int64_t *ranges = NULL;
    size_t pairs = 0;
    if (s_ask_ranges (ask, &ranges, &pairs, reason, reason_size))
        return NULL;
    double *values = (double *) malloc ((self->count + 1) * sizeof (double));
    assert (values);
    int64_t copied = jace_handoff_serve (ranges, pairs, self->first,
                                         self->values, self->count, values);
    free (ranges);
    if (copied < 0) {
        snprintf (reason, reason_size, "SLICE_ASK from %s: a range is not "
                  "inside our unknowns %" PRId64 "..%" PRId64 " or not after "
                  "the one before it", jace_msg_sender (ask), self->first,
                  self->first + (int64_t) self->count);
        free (values);
        return NULL;
    }
    jace_msg_t *slice = jace_msg_new (JACE_MSG_SLICE);
    jace_msg_set_sender (slice, sender);
    jace_msg_set_job (slice, jace_task_job (task));
    jace_msg_set_task (slice, jace_task_rank (task));
    jace_msg_set_epoch (slice, jace_task_epoch (task));
    jace_msg_set_iteration (slice, self->snapshot);
    jace_msg_add_payload (slice, JACE_PAYLOAD_F64, values, (size_t) copied);
    jace_msg_seal (slice, jace_task_job_key (task)->bytes);
    free (values);
    return slice;
}

//  The old cut from the ASSIGN's params, into old_first (count + 1), or
//  -1.
static int
s_old_cut (jace_task_t *task, int64_t *old_first)
{
    char key [64];
    for (int64_t i = 0; i <= jace_task_count (task); i++) {
        snprintf (key, sizeof key, "block/handoff_first/%" PRId64, i);
        old_first [i] = jace_task_param_int (task, key, -1);
        if (old_first [i] < 0)
            return -1;
    }
    return 0;
}

//  Our own old block, from what we keep: -1 with the reason if we keep
//  another snapshot.
static int
s_take_own (daemon_handoff_t *self, jace_task_t *task, char *reason,
            size_t reason_size)
{
    int64_t rank = jace_task_rank (task);
    size_t pairs = 0;
    const int64_t *ranges = jace_handoff_asks (self->gathering, rank, &pairs);
    if (!ranges)
        return 0;
    if (!streq (self->job, jace_task_job (task))
    ||  self->snapshot != self->gathering_snapshot) {
        snprintf (reason, reason_size, "our own block of snapshot %" PRId64
                  " is not kept here", self->gathering_snapshot);
        return -1;
    }
    double *values = (double *) malloc ((self->count + 1) * sizeof (double));
    assert (values);
    int64_t copied = jace_handoff_serve (ranges, pairs, self->first,
                                         self->values, self->count, values);
    int rc = copied < 0 ? -1
           : jace_handoff_take (self->gathering, rank, values,
                                (size_t) copied, reason, reason_size);
    if (rc == 0)
        self->taken += (size_t) copied;
    if (copied < 0)
        snprintf (reason, reason_size, "our kept block does not hold our "
                  "part of the new rows");
    free (values);
    return rc;
}

//  The step at which we ask each owner (block/handoff_step/<owner>, 0
//  when not given: the spawner scheduled the slices between clusters).
static void
s_read_steps (daemon_handoff_t *self, jace_task_t *task)
{
    free (self->steps);
    self->steps = (int64_t *) malloc (((size_t) jace_task_count (task) + 1)
                                      * sizeof (int64_t));
    assert (self->steps);
    char key [64];
    for (int64_t owner = 0; owner < jace_task_count (task); owner++) {
        snprintf (key, sizeof key, "block/handoff_step/%" PRId64, owner);
        int64_t step = jace_task_param_int (task, key, 0);
        self->steps [owner] = step > 0 ? step : 0;
    }
    self->step = 0;
}

//  Ask the old owners of the present step for their parts.
static void
s_ask_owners (daemon_handoff_t *self, jace_task_t *task, const char *sender)
{
    for (int64_t owner = 0; owner < jace_task_count (task); owner++) {
        size_t pairs = 0;
        const int64_t *ranges = jace_handoff_asks (self->gathering, owner,
                                                   &pairs);
        if (!ranges || owner == jace_task_rank (task)
        ||  self->steps [owner] != self->step)
            continue;
        jace_msg_t *ask = jace_msg_new (JACE_MSG_SLICE_ASK);
        jace_msg_set_sender (ask, sender);
        jace_msg_set_job (ask, jace_task_job (task));
        jace_msg_set_task (ask, jace_task_rank (task));
        jace_msg_set_epoch (ask, jace_task_epoch (task));
        jace_msg_set_iteration (ask, self->gathering_snapshot);
        jace_msg_add_payload (ask, JACE_PAYLOAD_I64, ranges, 2 * pairs);
        jace_msg_seal (ask, jace_task_job_key (task)->bytes);
        //  A full link drops it: the gathering then times out, and the
        //  spawner gives the task the iterate itself.
        jace_task_send_msg (task, owner, &ask);
    }
}

//  Once the owners of our step answered, ask those of the next step that
//  has any we still wait for.
static void
s_next_step (daemon_handoff_t *self, jace_task_t *task, const char *sender)
{
    int64_t next = -1;
    for (int64_t owner = 0; owner < jace_task_count (task); owner++) {
        if (!jace_handoff_waits_for (self->gathering, owner))
            continue;
        if (self->steps [owner] <= self->step)
            return;             //  This step's answers are not all in
        if (next < 0 || self->steps [owner] < next)
            next = self->steps [owner];
    }
    if (next < 0)
        return;                 //  Every answer is in
    self->step = next;
    s_ask_owners (self, task, sender);
}

int
daemon_handoff_begin (daemon_handoff_t *self, jace_task_t *task,
                      const char *sender, char *reason, size_t reason_size)
{
    assert (self && task && sender);
    daemon_handoff_abandon (self);
    if (!jace_task_param (task, "block/handoff_snapshot"))
        return 0;
    int64_t snapshot = jace_task_param_int (task, "block/handoff_snapshot",
                                            -1);
    int64_t iteration = jace_task_param_int (task, "block/handoff_iteration",
                                             -1);
    int64_t *old_first = (int64_t *) malloc (
        ((size_t) jace_task_count (task) + 1) * sizeof (int64_t));
    assert (old_first);
    int rc = -1;
    if (snapshot < 1 || iteration < 0 || s_old_cut (task, old_first))
        snprintf (reason, reason_size, "ASSIGN with block/handoff_snapshot "
                  "lacks a sound block/handoff_iteration or "
                  "block/handoff_first/0..%" PRId64, jace_task_count (task));
    else {
        self->gathering = jace_handoff_new (task, old_first, iteration,
                                            reason, reason_size);
        self->gathering_snapshot = snapshot;
        if (self->gathering)
            rc = s_take_own (self, task, reason, reason_size);
    }
    free (old_first);
    if (rc) {
        daemon_handoff_abandon (self);
        return -1;
    }
    s_read_steps (self, task);
    s_ask_owners (self, task, sender);
    s_next_step (self, task, sender);
    return 1;
}

int
daemon_handoff_take (daemon_handoff_t *self, jace_task_t *task,
                     const char *sender, const jace_msg_t *slice,
                     char *reason, size_t reason_size)
{
    assert (self && task && sender && slice);
    if (!self->gathering) {
        snprintf (reason, reason_size, "SLICE from %s while we gather none",
                  jace_msg_sender (slice));
        return -1;
    }
    if (jace_msg_iteration (slice) != self->gathering_snapshot) {
        snprintf (reason, reason_size, "SLICE from %s of snapshot %" PRId64
                  ", we gather %" PRId64, jace_msg_sender (slice),
                  jace_msg_iteration (slice), self->gathering_snapshot);
        return -1;
    }
    if (jace_msg_payload_count (slice) != 1
    ||  jace_msg_payload_kind (slice, 0) != JACE_PAYLOAD_F64) {
        snprintf (reason, reason_size, "SLICE from %s does not carry one "
                  "list of values", jace_msg_sender (slice));
        return -1;
    }
    size_t count = jace_msg_payload_length (slice, 0);
    double *values = (double *) malloc ((count + 1) * sizeof (double));
    assert (values);
    jace_msg_payload_copy (slice, 0, values);
    int rc = jace_handoff_take (self->gathering, jace_msg_task (slice),
                                values, count, reason, reason_size);
    free (values);
    if (rc == 0) {
        self->taken += count;
        self->from_others += count;
        self->slices++;
        s_next_step (self, task, sender);
    }
    return rc;
}

bool
daemon_handoff_gathering (const daemon_handoff_t *self)
{
    assert (self);
    return self->gathering != NULL;
}

bool
daemon_handoff_complete (const daemon_handoff_t *self)
{
    assert (self);
    return self->gathering && jace_handoff_missing (self->gathering) == 0;
}

void
daemon_handoff_missing (const daemon_handoff_t *self, char *text,
                        size_t text_size)
{
    assert (self && text && text_size > 0);
    *text = 0;
    if (!self->gathering)
        return;
    size_t used = 0;
    for (int64_t owner = 0; owner < jace_handoff_count (self->gathering);
         owner++)
        if (jace_handoff_waits_for (self->gathering, owner) && used < text_size)
            used += (size_t) snprintf (text + used, text_size - used, "%s%"
                                       PRId64, used ? " " : "", owner);
}

jace_preload_t *
daemon_handoff_finish (daemon_handoff_t *self, size_t *values,
                       size_t *from_others, size_t *slices)
{
    assert (self && values && from_others && slices);
    if (!daemon_handoff_complete (self))
        return NULL;
    jace_preload_t *preload = jace_handoff_preload (self->gathering);
    *values = self->taken;
    *from_others = self->from_others;
    *slices = self->slices;
    daemon_handoff_abandon (self);
    return preload;
}

void
daemon_handoff_abandon (daemon_handoff_t *self)
{
    assert (self);
    jace_handoff_destroy (&self->gathering);
    self->gathering_snapshot = 0;
    self->step = 0;
    self->taken = self->from_others = self->slices = 0;
}
