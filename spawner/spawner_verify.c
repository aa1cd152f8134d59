/*  =========================================================================
    spawner_verify - the job's answer, gathered and checked
    =========================================================================
*/
#include "spawner_verify.h"

#include <math.h>
#include <sys/mman.h>

//  Pages of the answer vector: see s_answer_new
#define HUGE_PAGE_BYTES (2 * 1024 * 1024)

#define VERIFY_BACKOFF_MIN_MSEC 100
#define VERIFY_BACKOFF_MAX_MSEC 2000
//  A young job waits less: an eighth of the time it has run, at least
//  VERIFY_BACKOFF_FLOOR_MSEC.  A 70 ms job whose first snapshot missed
//  the tolerance by 10% (the NAS-CG-like system, 2 tasks, ILU(0) blocks)
//  waited 100 ms and 40 iterations, and ended 2.3x later at 4e-16.
#define VERIFY_BACKOFF_SHARE 8
#define VERIFY_BACKOFF_FLOOR_MSEC 2
#define VERIFY_PROGRESS 0.75    //  Residual ratio that keeps checks frequent
#define STALL_PROGRESS 0.99     //  Residual ratio a job must beat to count
                                //  as still converging

struct _spawner_verify_t {
    spawner_job_t *job;         //  Borrowed
    size_t tasks;               //  Blocks in the answer
    const int64_t *first_row;   //  Borrowed block starts, tasks + 1
    bool *collected;            //  Per task: block of this snapshot in
    size_t collected_count;     //  Blocks in
    double *x;                  //  The answer being gathered
    int64_t unknowns;           //  Length of x
    int64_t snapshot;           //  Id being gathered, or 0
    int64_t snapshots;          //  Snapshots begun so far
    int64_t next_allowed;       //  Earliest next snapshot (msec)
    int64_t backoff;            //  Current back-off (msec)
    bool disturbed;             //  A task replaced since the last check
    int64_t created;            //  When the job's checks began (msec)
    double residual;            //  Residual of the last snapshot checked
    int64_t checked;            //  Snapshots checked
    int64_t last_checked;       //  Id of the last snapshot checked, or 0
    double mark;                //  Residual of the last snapshot that
                                //  beat the one before it by 1%
    int64_t mark_at;            //  Its number among the checked ones
};


//  --------------------------------------------------------------------------

//  A zeroed vector of count doubles.  RESULTs write it at the job's end,
//  when the tasks wait for the verification: in fresh 4 KiB pages each
//  first write faults, and on a VM 800 KB took 2.5-3.8 ms to copy in.
//  Allocated in whole 2 MiB pages and marked for transparent huge pages
//  (where the kernel grants them: its "madvise" mode), a megabyte costs
//  one fault; zeroed here, what faults is faulted at the job's start,
//  while nothing waits on the spawner.
static double *
s_answer_new (int64_t count)
{
    size_t bytes = (size_t) count * sizeof (double);
    bytes = (bytes + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    void *answer = NULL;
    if (posix_memalign (&answer, HUGE_PAGE_BYTES, bytes))
        return (double *) zmalloc ((size_t) count * sizeof (double));
#ifdef MADV_HUGEPAGE
    madvise (answer, bytes, MADV_HUGEPAGE);     //  A hint: may be refused
#endif
    memset (answer, 0, (size_t) count * sizeof (double));
    return (double *) answer;
}

spawner_verify_t *
spawner_verify_new (spawner_job_t *job, size_t tasks,
                    const int64_t *first_row)
{
    assert (job && tasks > 0 && first_row);
    spawner_verify_t *self = (spawner_verify_t *) zmalloc (sizeof *self);
    self->job = job;
    self->tasks = tasks;
    self->first_row = first_row;
    self->collected = (bool *) zmalloc (tasks * sizeof (bool));
    self->unknowns = spawner_job_rows (job)
                   * spawner_job_unknowns_per_row (job);
    self->x = s_answer_new (self->unknowns);
    self->backoff = VERIFY_BACKOFF_MIN_MSEC;
    self->created = zclock_mono ();
    self->residual = INFINITY;
    self->mark = INFINITY;
    return self;
}

void
spawner_verify_destroy (spawner_verify_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free ((*self_p)->collected);
        free ((*self_p)->x);
        free (*self_p);
        *self_p = NULL;
    }
}

bool
spawner_verify_may_begin (spawner_verify_t *self, int64_t now)
{
    assert (self);
    return self->snapshot == 0 && now >= self->next_allowed;
}

int64_t
spawner_verify_wait (spawner_verify_t *self, int64_t now)
{
    assert (self);
    if (self->snapshot)
        return -1;
    return now >= self->next_allowed ? 0 : self->next_allowed - now;
}

int64_t
spawner_verify_begin (spawner_verify_t *self)
{
    assert (self);
    self->snapshot = ++self->snapshots;
    memset (self->collected, 0, self->tasks * sizeof (bool));
    self->collected_count = 0;
    return self->snapshot;
}

int64_t
spawner_verify_snapshot (spawner_verify_t *self)
{
    assert (self);
    return self->snapshot;
}

void
spawner_verify_abandon (spawner_verify_t *self)
{
    assert (self);
    self->snapshot = 0;
}

int
spawner_verify_on_result (spawner_verify_t *self, size_t rank,
                          jace_msg_t *msg)
{
    assert (self && rank < self->tasks);
    if (self->snapshot == 0 || jace_msg_count (msg) != self->snapshot
    ||  self->collected [rank])
        return 0;               //  A late answer to an older snapshot
    int64_t per_row = spawner_job_unknowns_per_row (self->job);
    int64_t first = self->first_row [rank] * per_row;
    int64_t count = (self->first_row [rank + 1] - self->first_row [rank])
                  * per_row;
    if (jace_msg_payload_count (msg) != 1
    ||  jace_msg_payload_kind (msg, 0) != JACE_PAYLOAD_F64
    ||  jace_msg_first (msg) != first
    ||  (int64_t) jace_msg_payload_length (msg, 0) != count) {
        zsys_warning ("spawner: RESULT of task %zu does not match its block "
                      "(first %" PRId64 ", %zu values), dropped", rank,
                      jace_msg_first (msg), jace_msg_payload_count (msg)
                      ? jace_msg_payload_length (msg, 0) : 0);
        return -1;
    }
    jace_msg_payload_copy (msg, 0, self->x + first);
    self->collected [rank] = true;
    self->collected_count++;
    return 0;
}

bool
spawner_verify_gathered (spawner_verify_t *self)
{
    assert (self);
    return self->snapshot && self->collected_count == self->tasks;
}

//  The shortest back-off at `now`: an eighth of the time the job has run,
//  within [VERIFY_BACKOFF_FLOOR_MSEC, VERIFY_BACKOFF_MIN_MSEC].
static int64_t
s_least_backoff (spawner_verify_t *self, int64_t now)
{
    int64_t least = (now - self->created) / VERIFY_BACKOFF_SHARE;
    return least < VERIFY_BACKOFF_FLOOR_MSEC ? VERIFY_BACKOFF_FLOOR_MSEC
         : least > VERIFY_BACKOFF_MIN_MSEC ? VERIFY_BACKOFF_MIN_MSEC : least;
}

//  A residual that fell by a quarter or more since the last snapshot is
//  closing in on the tolerance: check again soon.  One that did not is
//  slow or stuck: back off.
static void
s_back_off (spawner_verify_t *self, int64_t now, double previous)
{
    int64_t least = s_least_backoff (self, now);
    if (self->residual <= VERIFY_PROGRESS * previous || self->disturbed)
        self->backoff = least;
    else
        self->backoff = self->backoff * 2 > VERIFY_BACKOFF_MAX_MSEC
                      ? VERIFY_BACKOFF_MAX_MSEC : self->backoff * 2;
    self->next_allowed = now + self->backoff;
}

bool
spawner_verify_has_block (spawner_verify_t *self, size_t rank)
{
    assert (self && rank < self->tasks);
    return self->snapshot && self->collected [rank];
}

void
spawner_verify_disturbed (spawner_verify_t *self, int64_t now)
{
    assert (self);
    self->backoff = s_least_backoff (self, now);
    self->disturbed = true;
    if (self->next_allowed > now)
        self->next_allowed = now;
}

bool
spawner_verify_check (spawner_verify_t *self, int64_t now)
{
    assert (self && spawner_verify_gathered (self));
    const jace_app_t *app = spawner_job_app (self->job);
    double previous = self->residual;
    self->residual = app->residual (spawner_job_problem (self->job), self->x,
                                    self->unknowns);
    self->last_checked = self->snapshot;
    self->snapshot = 0;
    self->checked++;
    if (!isfinite (self->mark)
    ||  self->residual <= STALL_PROGRESS * self->mark) {
        self->mark = self->residual;
        self->mark_at = self->checked;
    }
    bool passed = isfinite (self->residual)
               && self->residual <= spawner_job_tolerance (self->job);
    if (!passed)
        s_back_off (self, now, previous);
    self->disturbed = false;
    return passed;
}

bool
spawner_verify_stalled (spawner_verify_t *self, int64_t window,
                        double *mark, bool *growing)
{
    assert (self && mark && growing);
    *mark = self->mark;
    *growing = self->residual > self->mark;
    return window > 0 && isfinite (self->mark)
        && self->checked - self->mark_at >= window;
}

double
spawner_verify_residual (spawner_verify_t *self)
{
    assert (self);
    return self->residual;
}

int64_t
spawner_verify_last_checked (spawner_verify_t *self)
{
    assert (self);
    return self->last_checked;
}

int64_t
spawner_verify_count (spawner_verify_t *self)
{
    assert (self);
    return self->snapshots;
}

const double *
spawner_verify_answer (spawner_verify_t *self, int64_t *unknowns)
{
    assert (self);
    if (unknowns)
        *unknowns = self->unknowns;
    return self->x;
}
