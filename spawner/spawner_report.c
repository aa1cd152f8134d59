/*  =========================================================================
    spawner_report - what happened to a job, read back from its event log

    The log is read once, line by line, into a report: the residual and
    change series, the job's last line, and one record per failure that
    follows the failure's events (crash, dead, replace, restored) as they
    come.  The text and the plot are both drawn from that report, so they
    never disagree, and neither shows a figure the log does not hold.
    =========================================================================
*/
#include "spawner_report.h"

#include <czmq.h>
#include <cJSON.h>
#include <signal.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>

//  Task numbers from here on are taken for a corrupt log, not a big job
#define REPORT_TASK_LIMIT (1 << 20)

//  Integers beyond this do not survive a trip through a JSON double
#define REPORT_INTEGER_LIMIT 9007199254740992.0

//  Where a failure's recovery stands
typedef enum {
    FAILURE_OPEN,               //  Not recovered (yet, or ever)
    FAILURE_RESTORED,           //  The task was restored on a new daemon
    FAILURE_INTERRUPTED         //  A later failure of the task took over
} failure_state_t;

//  One failure of a task's daemon.  Times are seconds since submission,
//  NAN until the event that sets them is read.
typedef struct {
    int task;                   //  Task whose daemon failed
    char *daemon;               //  The failed daemon's id, or NULL
    failure_state_t state;      //  Where its recovery stands
    double crashed;             //  "crash" event (issued on purpose)
    double detected;            //  "dead" event
    double silent;              //  Silence that got it declared dead (s)
    double replaced;            //  Last "replace" event
    double restored;            //  "restored" event
    double fetch;               //  Time spent gathering copies (s)
    char *from;                 //  "checkpoint", "initial", "rebalance",
                                //  or NULL
    int64_t iteration;          //  Iteration restored, or -1
    int64_t holder;             //  Task that held the checkpoint, or -1
    int64_t last_iteration;     //  Last progress before detection, or -1
    double down_since;          //  When the task went down, if a failure
                                //  whose recovery this one cut short
                                //  began it; else NAN
} failure_t;

//  One point of a series to plot
typedef struct {
    double time;                //  Seconds since submission
    double value;               //  Residual or change, > 0
    bool passed;                //  The verification passed
} point_t;

//  What we follow of each task between its events
typedef struct {
    int64_t iteration;          //  Last progress iteration, or -1
    size_t round;               //  Progress round it last reported in
} task_t;

//  A growable array of points
typedef struct {
    point_t *items;             //  The points, in log order
    size_t count;               //  Points used
    size_t max;                 //  Points allocated
} series_t;

//  What the log tells, gathered for the text and the plot
typedef struct {
    const char *path;           //  Event log, for messages
    int line;                   //  Line being read, for messages
    const char *event;          //  Name of the event being read; borrowed
    char *reason;               //  First error; borrowed from the caller
    size_t reason_size;         //  Its size
    bool failed;                //  The log was found malformed
    char *job;                  //  Job id, or NULL until a line has one
    bool empty;                 //  No event read yet
    double end;                 //  Latest event time
    failure_t *failures;        //  Every failure, in the order it began
    size_t failure_count;       //  Failures used
    size_t failure_max;         //  Failures allocated
    task_t *tasks;              //  Indexed by task number
    size_t task_count;          //  Tasks allocated
    series_t residuals;         //  Verified residuals
    series_t changes;           //  Max local change per progress round
    series_t resumes;           //  Times a spawner resumed the job
    char **moves;               //  A line per rebalance or drain
    size_t move_count;          //  Lines used
    size_t move_max;            //  Lines allocated
    bool move_open;             //  The last line's rebalance or drain
                                //  has not ended yet
    size_t verifications;       //  Snapshots verified
    size_t passed;              //  Of which passed
    size_t round;               //  Current progress round, from 1
    double round_time;          //  When it began
    double round_change;        //  Its max local change, or NAN
    cJSON *ending;              //  The "result" or "failure" event, or NULL
    double ending_time;         //  Its time
} report_t;

static void
s_fail (report_t *self, const char *format, ...) CHECK_PRINTF (2);

//  Record the first error as "FILE:LINE: ..."; the first is the one to fix,
//  so later ones are dropped.
static void
s_fail (report_t *self, const char *format, ...)
{
    if (self->failed)
        return;
    self->failed = true;
    int used = snprintf (self->reason, self->reason_size, "%s:%d: ",
                         self->path, self->line);
    if (used < 0 || (size_t) used >= self->reason_size)
        return;
    va_list args;
    va_start (args, format);
    vsnprintf (self->reason + used, self->reason_size - (size_t) used,
               format, args);
    va_end (args);
}

//  ---------------------------------------------------------------------
//  Growable arrays; running out of memory aborts, as zmalloc does

static void *
s_grow (void *items, size_t count, size_t *max, size_t size)
{
    if (count < *max)
        return items;
    *max = *max ? *max * 2 : 16;
    void *grown = realloc (items, *max * size);
    assert (grown);
    return grown;
}

static void
s_series_add (series_t *series, double time, double value, bool passed)
{
    series->items = (point_t *) s_grow (series->items, series->count,
                                        &series->max, sizeof (point_t));
    series->items [series->count++] = (point_t) { time, value, passed };
}

//  Begin a failure of task's daemon.  Pointers to earlier failures are
//  invalid afterwards.
static failure_t *
s_failure_add (report_t *self, int task, const char *daemon)
{
    self->failures = (failure_t *) s_grow (self->failures,
                                           self->failure_count,
                                           &self->failure_max,
                                           sizeof (failure_t));
    failure_t *failure = &self->failures [self->failure_count++];
    *failure = (failure_t) {
        .task = task, .daemon = daemon ? strdup (daemon) : NULL,
        .state = FAILURE_OPEN, .crashed = NAN, .detected = NAN,
        .silent = NAN, .replaced = NAN, .restored = NAN, .fetch = NAN,
        .iteration = -1, .holder = -1, .last_iteration = -1,
        .down_since = NAN
    };
    return failure;
}

//  When the daemon stopped: the crash, or else the last time it was heard
static double
s_failed_at (const failure_t *failure)
{
    return isnan (failure->crashed) ? failure->detected - failure->silent
                                    : failure->crashed;
}

//  When the task of `open`, a failure a new one cuts short, went down: a
//  replacement that dies before it restored the task leaves it down
//  from the first failure on (the audit's 1.5 s outage was reported as
//  the second failure's 1.07 s)
static double
s_down_since (const failure_t *open)
{
    return isnan (open->down_since) ? s_failed_at (open) : open->down_since;
}

//  The task's latest failure still open, or NULL
static failure_t *
s_failure_open (report_t *self, int task)
{
    for (size_t index = self->failure_count; index-- > 0;) {
        failure_t *failure = &self->failures [index];
        if (failure->task == task && failure->state == FAILURE_OPEN)
            return failure;
    }
    return NULL;
}

//  ---------------------------------------------------------------------
//  Members of an event.  A member of the wrong type makes the log
//  malformed; an absent one is an unknown figure, unless required.

static cJSON *
s_member (report_t *self, cJSON *event, const char *name, bool required)
{
    cJSON *item = cJSON_GetObjectItemCaseSensitive (event, name);
    if (!item && required) {
        if (self->event)
            s_fail (self, "\"%s\" event without \"%s\"", self->event, name);
        else
            s_fail (self, "no \"%s\"", name);
    }
    return item;
}

static void
s_wrong_type (report_t *self, const char *name, const char *type)
{
    if (self->event)
        s_fail (self, "\"%s\" event: \"%s\" is not %s", self->event, name,
                type);
    else
        s_fail (self, "\"%s\" is not %s", name, type);
}

//  The string member, or NULL
static const char *
s_string (report_t *self, cJSON *event, const char *name, bool required)
{
    cJSON *item = s_member (self, event, name, required);
    if (item && !cJSON_IsString (item)) {
        s_wrong_type (self, name, "a string");
        return NULL;
    }
    return item ? item->valuestring : NULL;
}

//  The number member, or NAN
static double
s_number (report_t *self, cJSON *event, const char *name, bool required)
{
    cJSON *item = s_member (self, event, name, required);
    if (item && (!cJSON_IsNumber (item) || !isfinite (item->valuedouble))) {
        s_wrong_type (self, name, "a finite number");
        return NAN;
    }
    return item ? item->valuedouble : NAN;
}

//  The integer member, or absent when it is missing
static int64_t
s_integer (report_t *self, cJSON *event, const char *name, int64_t absent)
{
    double value = s_number (self, event, name, false);
    if (isnan (value))
        return absent;
    if (value != floor (value) || fabs (value) > REPORT_INTEGER_LIMIT) {
        s_wrong_type (self, name, "an integer");
        return absent;
    }
    return (int64_t) value;
}

//  The event's task number, with room for it in self->tasks; -1 if the
//  member is missing or not a task number
static int
s_task (report_t *self, cJSON *event)
{
    double value = s_number (self, event, "task", true);
    if (isnan (value))
        return -1;
    if (value != floor (value) || value < 0 || value >= REPORT_TASK_LIMIT) {
        s_wrong_type (self, "task", "a task number");
        return -1;
    }
    size_t task = (size_t) value;
    if (task >= self->task_count) {
        size_t count = task + 1;
        self->tasks = (task_t *) realloc (self->tasks,
                                          count * sizeof (task_t));
        assert (self->tasks);
        for (size_t index = self->task_count; index < count; index++)
            self->tasks [index] = (task_t) { -1, 0 };
        self->task_count = count;
    }
    return (int) task;
}

//  ---------------------------------------------------------------------
//  One handler per event we follow

//  A progress round is one line per task; a task reporting twice means
//  the next round has begun.  Only positive changes can go on a log scale.
static void
s_round_close (report_t *self, double time)
{
    if (self->round > 0 && !isnan (self->round_change))
        s_series_add (&self->changes, self->round_time,
                      self->round_change, false);
    self->round++;
    self->round_time = time;
    self->round_change = NAN;
}

static void
s_on_progress (report_t *self, cJSON *event, double time)
{
    int task = s_task (self, event);
    int64_t iteration = s_integer (self, event, "iteration", -1);
    double change = s_number (self, event, "change", false);
    if (self->failed)
        return;
    task_t *slot = &self->tasks [task];
    if (slot->round == self->round)
        s_round_close (self, time);
    slot->round = self->round;
    if (iteration >= 0)
        slot->iteration = iteration;
    if (change > 0)
        self->round_change = isnan (self->round_change)
                           ? change : fmax (self->round_change, change);
}

static void
s_on_verification (report_t *self, cJSON *event, double time)
{
    double residual = s_number (self, event, "residual", false);
    cJSON *passed = s_member (self, event, "passed", false);
    if (passed && !cJSON_IsBool (passed))
        s_wrong_type (self, "passed", "true or false");
    if (self->failed)
        return;
    self->verifications++;
    if (cJSON_IsTrue (passed))
        self->passed++;
    //  -1 stands for a residual that was not finite: nothing to draw
    if (residual > 0)
        s_series_add (&self->residuals, time, residual,
                      cJSON_IsTrue (passed));
}

//  A crash begins a failure, unless it repeats one not yet detected (a
//  kill of a daemon already crashed on schedule).
static void
s_on_crash (report_t *self, cJSON *event, double time)
{
    int task = s_task (self, event);
    const char *daemon = s_string (self, event, "daemon", false);
    if (self->failed)
        return;
    failure_t *open = s_failure_open (self, task);
    if (open && isnan (open->detected) && open->daemon && daemon
    &&  streq (open->daemon, daemon))
        return;
    double down_since = open ? s_down_since (open) : NAN;
    if (open)
        open->state = FAILURE_INTERRUPTED;
    failure_t *failure = s_failure_add (self, task, daemon);
    failure->crashed = time;
    failure->down_since = down_since;
}

//  A detection ends the task's open failure's first stage when it is of
//  the same daemon; otherwise it begins a failure with no crash event.
static void
s_on_dead (report_t *self, cJSON *event, double time)
{
    int task = s_task (self, event);
    const char *daemon = s_string (self, event, "daemon", false);
    double silent_ms = s_number (self, event, "silent_ms", false);
    if (self->failed)
        return;
    failure_t *failure = s_failure_open (self, task);
    bool same = failure && isnan (failure->detected)
             && (!failure->daemon || !daemon
                 || streq (failure->daemon, daemon));
    if (!same) {
        double down_since = failure ? s_down_since (failure) : NAN;
        if (failure)
            failure->state = FAILURE_INTERRUPTED;
        failure = s_failure_add (self, task, daemon);
        failure->down_since = down_since;
    }
    failure->detected = time;
    failure->silent = silent_ms / 1000;
    failure->last_iteration = self->tasks [task].iteration;
}

//  The failure a replacement event belongs to: the task's open failure,
//  once detected; NULL if none
static failure_t *
s_failure_detected (report_t *self, cJSON *event)
{
    int task = s_task (self, event);
    if (self->failed)
        return NULL;
    failure_t *failure = s_failure_open (self, task);
    return failure && !isnan (failure->detected) ? failure : NULL;
}

//  When a first replacement falls through, the spawner finds another:
//  the last one counts.
static void
s_on_replace (report_t *self, cJSON *event, double time)
{
    failure_t *failure = s_failure_detected (self, event);
    if (failure)
        failure->replaced = time;
}

static void
s_on_restored (report_t *self, cJSON *event, double time)
{
    const char *from = s_string (self, event, "from", false);
    int64_t iteration = s_integer (self, event, "iteration", -1);
    int64_t holder = s_integer (self, event, "holder", -1);
    double fetch_ms = s_number (self, event, "fetch_ms", false);
    failure_t *failure = s_failure_detected (self, event);
    if (!failure || self->failed)
        return;
    failure->state = FAILURE_RESTORED;
    failure->restored = time;
    failure->from = from ? strdup (from) : NULL;
    failure->iteration = iteration;
    if (from && streq (from, "initial") && iteration < 0)
        failure->iteration = 0;
    failure->holder = holder;
    failure->fetch = fetch_ms / 1000;
}

//  The job's start: a task whose daemon was lost while the data went out
//  (before any task iterated) was placed anew and got its data again, so
//  it starts from that, as every task does; it has nothing to restore.
static void
s_on_start (report_t *self, cJSON *event, double time)
{
    if (self->failed)
        return;
    for (size_t index = 0; index < self->failure_count; index++) {
        failure_t *failure = &self->failures [index];
        if (failure->state != FAILURE_OPEN || isnan (failure->replaced))
            continue;
        failure->state = FAILURE_RESTORED;
        failure->restored = time;
        failure->from = strdup ("data");
        failure->iteration = 0;
    }
}

//  Rows per task as "A:B:C", the first 8 tasks at most; "?" when the
//  event has no such array
static void
s_rows_text (cJSON *rows, char *text, size_t size)
{
    snprintf (text, size, "?");
    if (!cJSON_IsArray (rows))
        return;
    size_t used = 0;
    int count = cJSON_GetArraySize (rows);
    for (int index = 0; index < count && index < 8 && used < size; index++) {
        cJSON *item = cJSON_GetArrayItem (rows, index);
        used += (size_t) snprintf (text + used, size - used, "%s%.0f",
                                   index ? ":" : "",
                                   cJSON_IsNumber (item) ? item->valuedouble
                                                         : -1.0);
    }
    if (count > 8 && used < size)
        snprintf (text + used, size - used, ":... (%d tasks)", count);
}

//  A new line of the rows' history, or the end of the open one
static void
s_move_end (report_t *self, const char *format, ...) CHECK_PRINTF (2);
static void
s_move_add (report_t *self, const char *format, ...) CHECK_PRINTF (2);

static void
s_move_add (report_t *self, const char *format, ...)
{
    //  A move that began and never ended before this one
    s_move_end (self, ", not finished");
    self->moves = (char **) s_grow (self->moves, self->move_count,
                                    &self->move_max, sizeof (char *));
    va_list args;
    va_start (args, format);
    char *line = zsys_vprintf (format, args);
    va_end (args);
    assert (line);
    self->moves [self->move_count++] = line;
    self->move_open = true;
}

static void
s_move_end (report_t *self, const char *format, ...)
{
    if (!self->move_open || self->move_count == 0)
        return;
    va_list args;
    va_start (args, format);
    char *tail = zsys_vprintf (format, args);
    va_end (args);
    char **line = &self->moves [self->move_count - 1];
    char *whole = zsys_sprintf ("%s%s", *line, tail);
    assert (tail && whole);
    zstr_free (line);
    zstr_free (&tail);
    *line = whole;
    self->move_open = false;
}

static void
s_on_rebalance_plan (report_t *self, cJSON *event, double time)
{
    const char *trigger = s_string (self, event, "trigger", false);
    char before [160], after [160];
    s_rows_text (cJSON_GetObjectItemCaseSensitive (event, "old_rows"),
                 before, sizeof before);
    s_rows_text (cJSON_GetObjectItemCaseSensitive (event, "new_rows"),
                 after, sizeof after);
    if (!self->failed)
        s_move_add (self, "rebalance at %.3f s (%s): %s -> %s rows", time,
                    trigger ? trigger : "?", before, after);
}

static void
s_on_rebalance_done (report_t *self, cJSON *event, double time)
{
    (void) time;
    double seconds = s_number (self, event, "seconds", false);
    if (!self->failed)
        s_move_end (self, ", in %.3f s", seconds);
}

static void
s_on_rebalance_backoff (report_t *self, cJSON *event, double time)
{
    double drift = s_number (self, event, "drift", false);
    double cut = s_number (self, event, "cut_drift", false);
    double next = s_number (self, event, "next_auto_seconds", false);
    if (!self->failed)
        s_move_add (self, "rebalance kept at %.3f s (auto): drift %.3f after "
                    "a cut on %.3f; next look in %.1f s", time, drift, cut,
                    next);
    self->move_open = false;
}

static void
s_on_drain (report_t *self, cJSON *event, double time)
{
    const char *cluster = s_string (self, event, "cluster", false);
    int64_t tasks = s_integer (self, event, "tasks", -1);
    if (!self->failed)
        s_move_add (self, "drain of cluster %s at %.3f s: %" PRId64
                    " tasks", cluster ? cluster : "?", time, tasks);
}

static void
s_on_drained (report_t *self, cJSON *event, double time)
{
    (void) time;
    int64_t steps = s_integer (self, event, "steps", -1);
    double seconds = s_number (self, event, "seconds", false);
    if (!self->failed)
        s_move_end (self, " moved in %" PRId64 " steps, %.3f s", steps,
                    seconds);
}

//  A drain ended before it was done, or refused before it began
static void
s_on_drain_stopped (report_t *self, cJSON *event, double time)
{
    int64_t moved = s_integer (self, event, "moved", -1);
    int64_t left = s_integer (self, event, "left", -1);
    const char *why = s_string (self, event, "why", false);
    if (!self->failed)
        s_move_end (self, ", stopped at %.3f s with %" PRId64 " moved and %"
                    PRId64 " left (%s)", time, moved, left, why ? why : "?");
}

static void
s_on_drain_refused (report_t *self, cJSON *event, double time)
{
    (void) time;
    const char *why = s_string (self, event, "why", false);
    if (!self->failed)
        s_move_end (self, ", refused (%s)", why ? why : "?");
}

static void
s_on_resume (report_t *self, cJSON *event, double time)
{
    s_series_add (&self->resumes, time, 0, false);
}

//  "result" or "failure": kept whole, the outcome prints what it holds
static void
s_on_ending (report_t *self, cJSON *event, double time)
{
    cJSON_Delete (self->ending);
    self->ending = cJSON_Duplicate (event, true);
    assert (self->ending);
    self->ending_time = time;
}

typedef void (report_handler_fn) (report_t *self, cJSON *event, double time);

static const struct {
    const char *name;           //  Event name
    report_handler_fn *handler; //  What to do with it
} s_handlers [] = {
    { "progress", s_on_progress },
    { "verification", s_on_verification },
    { "crash", s_on_crash },
    { "dead", s_on_dead },
    { "replace", s_on_replace },
    { "restored", s_on_restored },
    { "start", s_on_start },
    { "resume", s_on_resume },
    { "rebalance_plan", s_on_rebalance_plan },
    { "rebalance_done", s_on_rebalance_done },
    { "rebalance_backoff", s_on_rebalance_backoff },
    { "drain", s_on_drain },
    { "drained", s_on_drained },
    { "drain_stopped", s_on_drain_stopped },
    { "drain_refused", s_on_drain_refused },
    { "result", s_on_ending },
    { "failure", s_on_ending },
};

//  ---------------------------------------------------------------------
//  Reading the log

static void
s_report_event (report_t *self, cJSON *event)
{
    self->event = NULL;
    const char *name = s_string (self, event, "event", true);
    self->event = name;
    double time = s_number (self, event, "time", true);
    const char *job = s_string (self, event, "job", false);
    if (self->failed)
        return;
    //  Two jobs in one log would mix their failures
    if (job && self->job && !streq (job, self->job)) {
        s_fail (self, "job %s, but the lines before are job %s", job,
                self->job);
        return;
    }
    if (job && !self->job)
        self->job = strdup (job);
    self->end = self->empty ? time : fmax (self->end, time);
    self->empty = false;
    for (size_t index = 0; index < sizeof s_handlers / sizeof *s_handlers;
         index++)
        if (streq (name, s_handlers [index].name))
            s_handlers [index].handler (self, event, time);
}

static void
s_report_line (report_t *self, const char *line, size_t length)
{
    if (strspn (line, " \t\r\n") == length)
        return;
    if (strlen (line) != length) {
        s_fail (self, "NUL byte in the line");
        return;
    }
    const char *end = NULL;
    cJSON *event = cJSON_ParseWithOpts (line, &end, true);
    if (!event)
        s_fail (self, "not valid JSON (column %td)",
                end ? end - line + 1 : (ptrdiff_t) 1);
    else
    if (!cJSON_IsObject (event))
        s_fail (self, "not a JSON object");
    else
        s_report_event (self, event);
    cJSON_Delete (event);
}

static int
s_report_read (report_t *self)
{
    FILE *file = fopen (self->path, "r");
    if (!file) {
        snprintf (self->reason, self->reason_size, "%s: %s", self->path,
                  strerror (errno));
        return -1;
    }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while (!self->failed
       && (length = getline (&line, &capacity, file)) != -1) {
        self->line++;
        s_report_line (self, line, (size_t) length);
    }
    if (!self->failed && ferror (file))
        s_fail (self, "cannot read: %s", strerror (errno));
    free (line);
    fclose (file);
    s_round_close (self, NAN);
    return self->failed ? -1 : 0;
}

static void
s_report_destroy (report_t *self)
{
    for (size_t index = 0; index < self->failure_count; index++) {
        free (self->failures [index].daemon);
        free (self->failures [index].from);
    }
    free (self->failures);
    free (self->tasks);
    free (self->residuals.items);
    free (self->changes.items);
    free (self->resumes.items);
    for (size_t index = 0; index < self->move_count; index++)
        free (self->moves [index]);
    free (self->moves);
    free (self->job);
    cJSON_Delete (self->ending);
}

//  ---------------------------------------------------------------------
//  Figures of a failure, NAN when the log lacks an event they need

static double
s_time_lost (const failure_t *failure)
{
    return failure->state == FAILURE_RESTORED
         ? failure->restored - s_failed_at (failure) : NAN;
}

//  -1 when unknown: also when the task went on from an iteration past
//  the last one it reported (its copy was newer than its last progress
//  line), where how far it had got is not in the log; "0" said nothing
//  was lost where nothing was known
static int64_t
s_iterations_lost (const failure_t *failure)
{
    if (failure->state != FAILURE_RESTORED || failure->iteration < 0
    ||  failure->last_iteration < 0
    ||  failure->iteration > failure->last_iteration)
        return -1;
    return failure->last_iteration - failure->iteration;
}

//  ---------------------------------------------------------------------
//  The text

//  Labels of the text's first column
#define REPORT_LABEL "%-12s"

static const char *
s_plural (size_t count, const char *one, const char *many)
{
    return count == 1 ? one : many;
}

//  "the job ended at T s": why an unfinished recovery stayed so
static void
s_end_phrase (report_t *self, char *text, size_t size)
{
    const char *name = self->ending
        ? cJSON_GetObjectItemCaseSensitive (self->ending, "event")->valuestring
        : NULL;
    if (name && streq (name, "result"))
        snprintf (text, size, "the job ended at %.3f s", self->ending_time);
    else
    if (name)
        snprintf (text, size, "the job failed at %.3f s", self->ending_time);
    else
        snprintf (text, size, "the log ends at %.3f s", self->end);
}

static void
s_append (char *text, size_t size, const char *format, ...) CHECK_PRINTF (3);

//  Append a phrase to a comma-separated list
static void
s_append (char *text, size_t size, const char *format, ...)
{
    size_t used = strlen (text);
    if (used > 0 && used + 2 < size) {
        strcpy (text + used, ", ");
        used += 2;
    }
    va_list args;
    va_start (args, format);
    vsnprintf (text + used, size - used, format, args);
    va_end (args);
}

//  A number of the job's last line, or NAN
static double
s_ending_number (report_t *self, const char *name)
{
    cJSON *item = self->ending
        ? cJSON_GetObjectItemCaseSensitive (self->ending, name) : NULL;
    return cJSON_IsNumber (item) ? item->valuedouble : NAN;
}

//  The result's figures besides the residual, those the log holds
static void
s_print_result_details (report_t *self, FILE *out)
{
    char text [512] = "";
    double tasks = s_ending_number (self, "tasks");
    double unknowns = s_ending_number (self, "unknowns");
    double low = s_ending_number (self, "iterations_min");
    double high = s_ending_number (self, "iterations_max");
    double replacements = s_ending_number (self, "replacements");
    double error = s_ending_number (self, "error");
    if (!isnan (tasks))
        s_append (text, sizeof text, "%.0f tasks", tasks);
    if (!isnan (unknowns))
        s_append (text, sizeof text, "%.0f unknowns", unknowns);
    if (!isnan (low) && !isnan (high))
        s_append (text, sizeof text, "%.0f to %.0f iterations per task",
                  low, high);
    if (!isnan (replacements))
        s_append (text, sizeof text, "%.0f %s", replacements,
                  replacements == 1 ? "replacement" : "replacements");
    if (!isnan (error))
        s_append (text, sizeof text, "error %.3e against the exact solution",
                  error);
    if (*text)
        fprintf (out, REPORT_LABEL "%s\n", "", text);
}

static void
s_print_outcome (report_t *self, FILE *out)
{
    fprintf (out, REPORT_LABEL "%s\n", "job", self->job ? self->job : "-");
    const char *name = self->ending
        ? cJSON_GetObjectItemCaseSensitive (self->ending, "event")->valuestring
        : NULL;
    if (self->empty)
        fprintf (out, REPORT_LABEL "unknown: the log is empty\n", "outcome");
    else
    if (!name)
        fprintf (out, REPORT_LABEL "unfinished: the log ends at %.3f s "
                 "with neither a result nor a failure\n", "outcome",
                 self->end);
    else
    if (streq (name, "failure")) {
        cJSON *reason = cJSON_GetObjectItemCaseSensitive (self->ending,
                                                          "reason");
        fprintf (out, REPORT_LABEL "failed at %.3f s: %s\n", "outcome",
                 self->ending_time, cJSON_IsString (reason)
                 ? reason->valuestring : "(no reason given)");
    }
    else {
        double residual = s_ending_number (self, "residual");
        double tolerance = s_ending_number (self, "tolerance");
        fprintf (out, REPORT_LABEL "verified", "outcome");
        if (!isnan (residual))
            fprintf (out, ": residual %.3e", residual);
        if (!isnan (tolerance))
            fprintf (out, " (tolerance %.3e)", tolerance);
        fprintf (out, " at %.3f s\n", self->ending_time);
        s_print_result_details (self, out);
    }
}

static void
s_print_counts (report_t *self, FILE *out)
{
    if (self->verifications > 0)
        fprintf (out, REPORT_LABEL "%zu verified, %zu passed\n", "snapshots",
                 self->verifications, self->passed);
    for (size_t index = 0; index < self->resumes.count; index++)
        fprintf (out, REPORT_LABEL "by a new spawner at %.3f s\n",
                 index == 0 ? "resumed" : "",
                 self->resumes.items [index].time);
    size_t crashes = 0, detections = 0, recoveries = 0;
    for (size_t index = 0; index < self->failure_count; index++) {
        const failure_t *failure = &self->failures [index];
        crashes += !isnan (failure->crashed);
        detections += !isnan (failure->detected);
        recoveries += failure->state == FAILURE_RESTORED;
    }
    //  Only the crashes the spawner issued itself (the job's faults) are
    //  in the log; others (jace-spawner kill, a real failure) show as
    //  detections.
    fprintf (out, REPORT_LABEL "%zu issued %s, %zu %s, %zu %s\n", "failures",
             crashes, s_plural (crashes, "crash", "crashes"),
             detections, s_plural (detections, "detection", "detections"),
             recoveries, s_plural (recoveries, "recovery", "recoveries"));
    //  The last line's move had not ended when the log did
    for (size_t index = 0; index < self->move_count; index++)
        fprintf (out, REPORT_LABEL "%s%s\n", index == 0 ? "rows" : "",
                 self->moves [index],
                 index + 1 == self->move_count && self->move_open
                 ? ", not finished" : "");
}

//  The figure with its decimals (and sign), or "-" when the log does not
//  give it
static void
s_cell (char *cell, size_t size, double value, int decimals, bool sign)
{
    if (isnan (value))
        snprintf (cell, size, "-");
    else
        snprintf (cell, size, sign ? "%+.*f" : "%.*f", decimals, value);
}

//  How the failure ended, as the table's last column
static void
s_failure_state (report_t *self, const failure_t *failure, char *text,
                 size_t size)
{
    char end [64];
    s_end_phrase (self, end, sizeof end);
    const char *stage = isnan (failure->detected) ? "never detected"
                      : isnan (failure->replaced) ? "no replacement found"
                      : "never restored";
    if (failure->state == FAILURE_INTERRUPTED)
        snprintf (text, size, "%s before task %d failed again", stage,
                  failure->task);
    else
    if (failure->state == FAILURE_OPEN)
        snprintf (text, size, "%s (%s)", stage, end);
    else
    if (failure->from && streq (failure->from, "checkpoint")
    &&  failure->holder >= 0)
        snprintf (text, size, "from checkpoint %" PRId64 " (copy on task %"
                  PRId64 ")", failure->iteration, failure->holder);
    else
    if (failure->from && streq (failure->from, "checkpoint"))
        snprintf (text, size, "from checkpoint %" PRId64,
                  failure->iteration);
    else
    if (failure->from && streq (failure->from, "initial"))
        snprintf (text, size, "from the initial state");
    else
    if (failure->from && streq (failure->from, "rebalance"))
        snprintf (text, size, "from the iterate of a rebalance, iteration %"
                  PRId64, failure->iteration);
    else
    if (failure->from && streq (failure->from, "drain"))
        snprintf (text, size, "from the iterate the drain gathered, "
                  "iteration %" PRId64, failure->iteration);
    else
    if (failure->from && streq (failure->from, "data"))
        snprintf (text, size, "from its data, sent again before the job "
                  "started");
    else
        snprintf (text, size, "from %s", failure->from ? failure->from
                                                       : "an unknown state");
    //  A recovery that a failure of the replacement cut short kept the
    //  task down longer than this failure's own time lost
    size_t length = strlen (text);
    if (failure->state == FAILURE_RESTORED && !isnan (failure->down_since)
    &&  length < size)
        snprintf (text + length, size - length, "; task down since %.3f s",
                  failure->down_since);
}

//  Column widths: times as wide as the latest one, daemons as the longest
typedef struct {
    int daemon;                 //  Daemon id column
    int time;                   //  Every seconds column
} widths_t;

static widths_t
s_widths (report_t *self)
{
    char cell [64];
    snprintf (cell, sizeof cell, "%+.3f", self->end);
    widths_t widths = { 6, (int) strlen (cell) };
    if (widths.time < 9)
        widths.time = 9;
    for (size_t index = 0; index < self->failure_count; index++) {
        const char *daemon = self->failures [index].daemon;
        if (daemon && (int) strlen (daemon) > widths.daemon)
            widths.daemon = (int) strlen (daemon);
    }
    return widths;
}

static void
s_print_failure (report_t *self, const failure_t *failure, widths_t widths,
                 FILE *out)
{
    char crashed [64], detected [64], delay [64], replaced [64];
    char restored [64], iterations [64], lost [64], state [256];
    double failed_at = s_failed_at (failure);
    s_cell (crashed, sizeof crashed, failure->crashed, 3, false);
    s_cell (detected, sizeof detected, failure->detected, 3, false);
    s_cell (delay, sizeof delay, failure->detected - failed_at, 3, true);
    s_cell (replaced, sizeof replaced, failure->replaced, 3, false);
    s_cell (restored, sizeof restored, failure->restored, 3, false);
    int64_t iterations_lost = s_iterations_lost (failure);
    s_cell (iterations, sizeof iterations,
            iterations_lost < 0 ? NAN : (double) iterations_lost, 0, false);
    s_cell (lost, sizeof lost, s_time_lost (failure), 3, false);
    s_failure_state (self, failure, state, sizeof state);
    fprintf (out, "%4d  %-*s  %*s  %*s  %*s  %*s  %*s  %9s  %*s  %s\n",
             failure->task, widths.daemon,
             failure->daemon ? failure->daemon : "-", widths.time, crashed,
             widths.time, detected, widths.time, delay, widths.time,
             replaced, widths.time, restored, iterations, widths.time, lost,
             state);
}

static void
s_print_failures (report_t *self, FILE *out)
{
    if (self->failure_count == 0)
        return;
    widths_t widths = s_widths (self);
    fprintf (out, "\n%4s  %-*s  %*s  %*s  %*s  %*s  %*s  %9s  %*s  %s\n",
             "task", widths.daemon, "daemon", widths.time, "crashed",
             widths.time, "detected", widths.time, "delay", widths.time,
             "replaced", widths.time, "restored", "iter lost", widths.time,
             "time lost", "recovery");
    for (size_t index = 0; index < self->failure_count; index++)
        s_print_failure (self, &self->failures [index], widths, out);
    fprintf (out, "%4s  times in seconds since the job was submitted\n\n",
             "");
}

//  Sums over the recovered failures, each over those where it is known
typedef struct {
    double lost;                //  Time lost
    size_t lost_count;          //  Failures it was known for
    double down;                //  Time the tasks were down: time lost,
                                //  from the first of failures in a row
    bool down_longer;           //  Some failure cut another's recovery
    int64_t iterations;         //  Iterations lost
    size_t iterations_count;    //  Failures they were known for
    double phase [4];           //  Detection, replacement, fetch, restart
    size_t phase_count [4];     //  Failures each was known for
} totals_t;

static void
s_totals_add (totals_t *totals, const failure_t *failure)
{
    double lost = s_time_lost (failure);
    if (!isnan (lost)) {
        totals->lost += lost;
        totals->lost_count++;
        totals->down += isnan (failure->down_since) ? lost
                      : failure->restored - failure->down_since;
        totals->down_longer |= !isnan (failure->down_since);
    }
    int64_t iterations = s_iterations_lost (failure);
    if (iterations >= 0) {
        totals->iterations += iterations;
        totals->iterations_count++;
    }
    //  The four phases add up to the time lost exactly
    double phase [4] = {
        failure->detected - s_failed_at (failure),
        failure->replaced - failure->detected,
        failure->fetch,
        failure->restored - failure->replaced - failure->fetch
    };
    for (int index = 0; index < 4; index++)
        if (!isnan (phase [index])) {
            totals->phase [index] += phase [index];
            totals->phase_count [index]++;
        }
}

static void
s_print_totals (report_t *self, FILE *out)
{
    totals_t totals = { 0 };
    for (size_t index = 0; index < self->failure_count; index++)
        if (self->failures [index].state == FAILURE_RESTORED)
            s_totals_add (&totals, &self->failures [index]);
    if (totals.lost_count > 0)
        fprintf (out, REPORT_LABEL "%.3f s over %zu recovered %s "
                 "(mean %.3f s)\n", "time lost", totals.lost,
                 totals.lost_count,
                 s_plural (totals.lost_count, "failure", "failures"),
                 totals.lost / totals.lost_count);
    if (totals.down_longer)
        fprintf (out, REPORT_LABEL "%.3f s, counting each task down from "
                 "the first of failures in a row (a replacement that "
                 "failed before it restored the task)\n", "downtime",
                 totals.down);
    if (totals.iterations_count > 0)
        fprintf (out, REPORT_LABEL "%" PRId64 " lost over %zu recovered "
                 "%s\n", "iterations", totals.iterations,
                 totals.iterations_count,
                 s_plural (totals.iterations_count, "failure", "failures"));
    static const char *names [4] = {
        "detection", "replacement", "fetch", "restart"
    };
    bool first = true;
    for (int index = 0; index < 4; index++) {
        if (totals.phase_count [index] == 0)
            continue;
        if (first)
            fprintf (out, REPORT_LABEL, "mean split");
        else
            fputs (" + ", out);
        fprintf (out, "%s %.3f s", names [index],
                 totals.phase [index] / totals.phase_count [index]);
        first = false;
    }
    if (!first)
        fputs ("\n", out);
}

//  ---------------------------------------------------------------------
//  The plot, drawn by gnuplot from a script we pipe to it

//  True if the log ends with the job's failure
static bool
s_job_failed (report_t *self)
{
    cJSON *name = self->ending
        ? cJSON_GetObjectItemCaseSensitive (self->ending, "event") : NULL;
    return cJSON_IsString (name) && streq (name->valuestring, "failure");
}

//  Colours and dash types of the three kinds of marks
#define REPORT_CRASH    "lc rgb '#d62728' dt 2"
#define REPORT_DEAD     "lc rgb '#ff7f0e' dt 3"
#define REPORT_RESTORED "lc rgb '#2ca02c' dt 1"
#define REPORT_LOST     "#fde0dd"
#define REPORT_FAILED   "lc rgb '#7f0000' dt 1"

//  True if plot_path names an SVG, false for a PNG; -1 for anything else
static int
s_plot_is_svg (const char *plot_path)
{
    const char *dot = strrchr (plot_path, '.');
    if (dot && strcasecmp (dot, ".svg") == 0)
        return 1;
    if (dot && strcasecmp (dot, ".png") == 0)
        return 0;
    return -1;
}

bool
spawner_report_plot_format_known (const char *plot_path)
{
    assert (plot_path);
    return s_plot_is_svg (plot_path) >= 0;
}

//  The same search popen's shell will do, so a missing gnuplot is told
//  apart from a failing one
static bool
s_gnuplot_installed (void)
{
    const char *path = getenv ("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (true) {
        size_t length = strcspn (path, ":");
        char candidate [4096];
        snprintf (candidate, sizeof candidate, "%.*s/gnuplot",
                  length ? (int) length : 1, length ? path : ".");
        struct stat info;
        if (stat (candidate, &info) == 0 && S_ISREG (info.st_mode)
        &&  access (candidate, X_OK) == 0)
            return true;
        if (path [length] == 0)
            return false;
        path += length + 1;
    }
}

//  A gnuplot single-quoted string: a quote is doubled, nothing else is
//  special; control characters could only break the script
static void
s_plot_quote (FILE *gnuplot, const char *text)
{
    fputc ('\'', gnuplot);
    for (const char *in = text; *in; in++)
        if (*in == '\'')
            fputs ("''", gnuplot);
        else
            fputc ((unsigned char) *in < 0x20 ? '?' : *in, gnuplot);
    fputc ('\'', gnuplot);
}

static void
s_plot_setup (report_t *self, FILE *gnuplot, const char *plot_path,
              bool svg)
{
    if (svg)
        fputs ("set terminal svg size 1000,600 noenhanced "
               "background rgb 'white'\n", gnuplot);
    else
        fputs ("if (strstrt (GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo size 1000,600 noenhanced\n"
               "} else {\n"
               "    set terminal png size 1000,600 noenhanced\n"
               "}\n", gnuplot);
    fputs ("set output ", gnuplot);
    s_plot_quote (gnuplot, plot_path);
    char title [256];
    snprintf (title, sizeof title, "%s: residual over time, with failures",
              self->job ? self->job : "job");
    fputs ("\nset title ", gnuplot);
    s_plot_quote (gnuplot, title);
    fputs ("\nset xlabel 'time since submission (s)'\n"
           "set ylabel 'relative residual ||b - Ax|| / ||b||'\n"
           "set logscale y\n"
           "set format y '%.0e'\n"
           "set grid\n"
           "set key below horizontal\n", gnuplot);
    //  A margin, so that the last points are not cut in half
    fprintf (gnuplot, "set xrange [0:%.9g]\n",
             self->end > 0 ? self->end * 1.02 : 1);
}

//  Marks of one kind closer than this share one label (fraction of the
//  time axis: about two lines of the label font on a 1000-pixel plot)
#define REPORT_MARK_WINDOW 0.02
//  Tasks a shared label names before it only counts them
#define REPORT_LABEL_TASKS 6

//  The kinds of marks, each with its own lane so that labels of events
//  at the same time never cover each other: crashes at the top, left of
//  their line; restorations at the top, right of theirs; detections at
//  the bottom
typedef enum { MARK_CRASH, MARK_DEAD, MARK_RESTORED, MARK_KINDS } mark_kind_t;

static const struct {
    const char *style;          //  Line colour and dashes
    const char *word;           //  Label
    const char *place;          //  Label position, alignment and offset
} s_mark_kinds [MARK_KINDS] = {
    { REPORT_CRASH, "crash",
      "graph 0.98 rotate by 90 right offset character -0.8, 0" },
    { REPORT_DEAD, "dead",
      "graph 0.02 rotate by 90 left offset character -0.8, 0" },
    { REPORT_RESTORED, "restored",
      "graph 0.98 rotate by 90 right offset character 1.6, 0" }
};

//  One vertical mark
typedef struct {
    double time;                //  Seconds since submission
    mark_kind_t kind;
    int task;
} mark_t;

static int
s_mark_compare (const void *a, const void *b)
{
    const mark_t *left = (const mark_t *) a, *right = (const mark_t *) b;
    if (left->kind != right->kind)
        return left->kind < right->kind ? -1 : 1;
    if (left->time != right->time)
        return left->time < right->time ? -1 : 1;
    return left->task - right->task;
}

//  The label of marks [first, last): "crash 3", "crash 1 4 7", or
//  "crash x9" when too many tasks to name
static void
s_plot_group (FILE *gnuplot, const mark_t *marks, size_t first,
              size_t last)
{
    const mark_t *head = &marks [first];
    char label [128];
    int length = snprintf (label, sizeof label, "%s",
                           s_mark_kinds [head->kind].word);
    if (last - first > REPORT_LABEL_TASKS)
        snprintf (label + length, sizeof label - length, " x%zu",
                  last - first);
    else
        for (size_t index = first; index < last; index++)
            length += snprintf (label + length, sizeof label - length,
                                " %d", marks [index].task);
    fprintf (gnuplot, "set label '%s' at first %.9g, %s font ',8' "
             "textcolor rgb '#444444'\n", label, head->time,
             s_mark_kinds [head->kind].place);
}

//  A vertical line per mark; one label per group of marks of a kind
//  within REPORT_MARK_WINDOW of the group's first
static void
s_plot_marks (report_t *self, FILE *gnuplot, mark_t *marks, size_t count)
{
    qsort (marks, count, sizeof *marks, s_mark_compare);
    double window = REPORT_MARK_WINDOW * (self->end > 0 ? self->end : 1);
    size_t first = 0;
    for (size_t index = 0; index < count; index++) {
        fprintf (gnuplot, "set arrow from first %.9g, graph 0 to first "
                 "%.9g, graph 1 nohead %s lw 1.5\n", marks [index].time,
                 marks [index].time, s_mark_kinds [marks [index].kind].style);
        bool last_of_group = index + 1 == count
            || marks [index + 1].kind != marks [first].kind
            || marks [index + 1].time - marks [first].time > window;
        if (last_of_group) {
            s_plot_group (gnuplot, marks, first, index + 1);
            first = index + 1;
        }
    }
}

//  The time lost to each failure, shaded; labels of neighbouring shades
//  take turns at three heights
static void
s_plot_lost (report_t *self, FILE *gnuplot)
{
    static const double heights [] = { 0.5, 0.3, 0.7 };
    double window = REPORT_MARK_WINDOW * (self->end > 0 ? self->end : 1);
    double previous = -INFINITY;
    size_t turn = 0;
    for (size_t index = 0; index < self->failure_count; index++) {
        const failure_t *failure = &self->failures [index];
        double lost = s_time_lost (failure);
        if (isnan (lost))
            continue;
        double failed_at = s_failed_at (failure);
        double middle = (failed_at + failure->restored) / 2;
        turn = fabs (middle - previous) <= window ? (turn + 1) % 3 : 0;
        previous = middle;
        fprintf (gnuplot, "set object rect from first %.9g, graph 0 "
                 "to first %.9g, graph 1 behind fc rgb '"
                 REPORT_LOST "' fs solid 1.0 noborder\n",
                 failed_at, failure->restored);
        fprintf (gnuplot, "set label 'lost %.2f s' at first %.9g, "
                 "graph %.2f rotate by 90 center font ',8' "
                 "textcolor rgb '#a03030'\n", lost, middle,
                 heights [turn]);
    }
}

static void
s_plot_failures (report_t *self, FILE *gnuplot)
{
    s_plot_lost (self, gnuplot);
    mark_t *marks = (mark_t *) calloc (3 * self->failure_count + 1,
                                       sizeof (mark_t));
    assert (marks);
    size_t count = 0;
    for (size_t index = 0; index < self->failure_count; index++) {
        const failure_t *failure = &self->failures [index];
        double times [MARK_KINDS] = {
            failure->crashed, failure->detected, failure->restored
        };
        for (int kind = 0; kind < MARK_KINDS; kind++)
            if (!isnan (times [kind]))
                marks [count++] = (mark_t) { times [kind],
                                             (mark_kind_t) kind,
                                             failure->task };
    }
    s_plot_marks (self, gnuplot, marks, count);
    free (marks);
}

//  A failed job's end: a heavy line and why, so the curve's end is not
//  taken for a pause
static void
s_plot_ending (report_t *self, FILE *gnuplot)
{
    if (!s_job_failed (self))
        return;
    cJSON *reason = cJSON_GetObjectItemCaseSensitive (self->ending,
                                                      "reason");
    char label [96];
    snprintf (label, sizeof label, "job failed: %s", cJSON_IsString (reason)
              ? reason->valuestring : "(no reason given)");
    if (strlen (label) == sizeof label - 1)
        memcpy (label + sizeof label - 4, "...", 3);
    fprintf (gnuplot, "set arrow from first %.9g, graph 0 to first %.9g, "
             "graph 1 nohead " REPORT_FAILED " lw 2.5 front\n",
             self->ending_time, self->ending_time);
    fputs ("set label ", gnuplot);
    s_plot_quote (gnuplot, label);
    fprintf (gnuplot, " at first %.9g, graph 0.5 rotate by 90 center "
             "offset character -1.2, 0 font ',9' textcolor rgb '#7f0000' "
             "front\n", self->ending_time);
}

static void
s_plot_data (FILE *gnuplot, const char *name, const series_t *series)
{
    fprintf (gnuplot, "$%s << EOD\n", name);
    for (size_t index = 0; index < series->count; index++)
        fprintf (gnuplot, "%.9g %.9g %d\n", series->items [index].time,
                 series->items [index].value, series->items [index].passed);
    fputs ("EOD\n", gnuplot);
}

//  Append one element to the plot command
static void
s_plot_element (FILE *gnuplot, bool *first, const char *element)
{
    fputs (*first ? "plot " : ", \\\n     ", gnuplot);
    fputs (element, gnuplot);
    *first = false;
}

static void
s_plot_command (report_t *self, FILE *gnuplot)
{
    bool first = true;
    if (self->changes.count > 0)
        s_plot_element (gnuplot, &first, "$change using 1:2 with lines "
                        "lc rgb '#b8b8b8' title 'max local change'");
    if (self->residuals.count > 0)
        s_plot_element (gnuplot, &first, "$residual using 1:2 with "
                        "linespoints pt 7 ps 0.6 lc rgb '#1f77b4' "
                        "title 'verified residual'");
    if (self->passed > 0)
        s_plot_element (gnuplot, &first, "$residual using 1:($3 > 0 ? $2 : NaN)"
                        " with points pt 7 ps 1.4 lc rgb '#2ca02c' "
                        "title 'passed'");
    double tolerance = s_ending_number (self, "tolerance");
    if (tolerance > 0) {
        char element [128];
        snprintf (element, sizeof element, "%.9g with lines dt 4 "
                  "lc rgb '#555555' title 'tolerance'", tolerance);
        s_plot_element (gnuplot, &first, element);
    }
    //  The marks are arrows, which have no key entries of their own
    bool crash = false, dead = false, restored = false;
    for (size_t index = 0; index < self->failure_count; index++) {
        crash |= !isnan (self->failures [index].crashed);
        dead |= !isnan (self->failures [index].detected);
        restored |= self->failures [index].state == FAILURE_RESTORED;
    }
    if (crash)
        s_plot_element (gnuplot, &first, "NaN with lines " REPORT_CRASH
                        " lw 1.5 title 'crash'");
    if (dead)
        s_plot_element (gnuplot, &first, "NaN with lines " REPORT_DEAD
                        " lw 1.5 title 'detected dead'");
    if (restored)
        s_plot_element (gnuplot, &first, "NaN with lines " REPORT_RESTORED
                        " lw 1.5 title 'restored'");
    if (restored)
        s_plot_element (gnuplot, &first, "NaN with boxes fs solid 1.0 "
                        "fc rgb '" REPORT_LOST "' title 'time lost'");
    if (s_job_failed (self))
        s_plot_element (gnuplot, &first, "NaN with lines " REPORT_FAILED
                        " lw 2.5 title 'job failed'");
    fputs ("\n", gnuplot);
}

static void
s_plot_script (report_t *self, FILE *gnuplot, const char *plot_path,
               bool svg)
{
    s_plot_setup (self, gnuplot, plot_path, svg);
    s_plot_failures (self, gnuplot);
    s_plot_ending (self, gnuplot);
    s_plot_data (gnuplot, "residual", &self->residuals);
    s_plot_data (gnuplot, "change", &self->changes);
    s_plot_command (self, gnuplot);
}

//  Pipe the script to gnuplot and wait for it.  Returns its wait status,
//  or -1 if it could not be started.
static int
s_gnuplot_run (report_t *self, const char *plot_path, bool svg)
{
    //  A gnuplot that dies early must not kill us with SIGPIPE: block it
    //  while we write, then swallow any our writes raised
    sigset_t pipe_signal, saved, pending;
    sigemptyset (&pipe_signal);
    sigaddset (&pipe_signal, SIGPIPE);
    pthread_sigmask (SIG_BLOCK, &pipe_signal, &saved);
    sigpending (&pending);
    bool was_pending = sigismember (&pending, SIGPIPE);

    int status = -1;
    //  Its standard output is never the plot's place: a gnuplot that
    //  cannot open the file writes the image there instead
    FILE *gnuplot = popen ("exec gnuplot >/dev/null", "w");
    if (gnuplot) {
        s_plot_script (self, gnuplot, plot_path, svg);
        status = pclose (gnuplot);
    }
    struct timespec no_wait = { 0, 0 };
    while (!was_pending
       &&  sigtimedwait (&pipe_signal, NULL, &no_wait) == SIGPIPE)
        ;
    pthread_sigmask (SIG_SETMASK, &saved, NULL);
    return status;
}

//  Returns 0 when the plot was written or skipped (the line says which),
//  -1 with the reason when gnuplot failed
static int
s_report_plot (report_t *self, const char *plot_path, FILE *out,
               char *reason, size_t reason_size)
{
    if (self->residuals.count == 0 && self->changes.count == 0) {
        fprintf (out, REPORT_LABEL "skipped: the log has no residual or "
                 "change to draw\n", "plot");
        return 0;
    }
    if (!s_gnuplot_installed ()) {
        fprintf (out, REPORT_LABEL "skipped: no gnuplot in PATH (apt-get "
                 "install gnuplot-nox)\n", "plot");
        return 0;
    }
    //  A folder missing or not ours is said as such, before gnuplot; a
    //  file made for the test goes again if no plot fills it
    struct stat info;
    bool existed = stat (plot_path, &info) == 0;
    int fd = open (plot_path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) {
        snprintf (reason, reason_size, "%s: cannot write the plot: %s",
                  plot_path, strerror (errno));
        return -1;
    }
    close (fd);
    fflush (out);
    int status = s_gnuplot_run (self, plot_path, s_plot_is_svg (plot_path));
    if (status == -1)
        snprintf (reason, reason_size, "%s: cannot run gnuplot: %s",
                  plot_path, strerror (errno));
    else
    if (WIFSIGNALED (status))
        snprintf (reason, reason_size, "%s: gnuplot was killed by signal %d",
                  plot_path, WTERMSIG (status));
    else
    if (WEXITSTATUS (status) != 0)
        snprintf (reason, reason_size, "%s: gnuplot exited with status %d",
                  plot_path, WEXITSTATUS (status));
    else
    if (stat (plot_path, &info) || info.st_size == 0)
        snprintf (reason, reason_size, "%s: gnuplot exited with status 0 "
                  "but wrote no plot", plot_path);
    else {
        fprintf (out, REPORT_LABEL "%s\n", "plot", plot_path);
        return 0;
    }
    fprintf (out, REPORT_LABEL "failed: %s\n", "plot", reason);
    if (!existed && stat (plot_path, &info) == 0 && info.st_size == 0)
        unlink (plot_path);
    return -1;
}

//  ---------------------------------------------------------------------
int
spawner_report_write (const char *events_path, FILE *out,
                      const char *plot_path, char *reason,
                      size_t reason_size)
{
    assert (events_path && out && reason && reason_size > 0);
    if (plot_path && s_plot_is_svg (plot_path) < 0) {
        snprintf (reason, reason_size, "%s: unknown plot format; name "
                  "the file .png or .svg", plot_path);
        return -1;
    }
    report_t self = {
        .path = events_path, .reason = reason, .reason_size = reason_size,
        .empty = true, .round_change = NAN
    };
    int rc = s_report_read (&self);
    if (rc == 0) {
        s_print_outcome (&self, out);
        s_print_counts (&self, out);
        s_print_failures (&self, out);
        s_print_totals (&self, out);
        if (plot_path)
            rc = s_report_plot (&self, plot_path, out, reason, reason_size);
    }
    s_report_destroy (&self);
    if (rc == 0 && (fflush (out) || ferror (out))) {
        snprintf (reason, reason_size, "cannot write the report: %s",
                  strerror (errno));
        rc = -1;
    }
    return rc;
}
