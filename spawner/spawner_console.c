/*  =========================================================================
    spawner_console - what the user watching a job sees
    =========================================================================
*/
#include "spawner_console.h"

#include <stdarg.h>
#include <math.h>
#include <sys/ioctl.h>

#define PROGRESS_PRINT_MSEC 2000
#define LIVE_TABLE_MSEC 250
//  Rows left above the table for log lines, at least
#define LOG_ROWS_MIN 4
//  Longest frame: header, column names and this many task rows
#define FRAME_TASKS_MAX 60

struct _spawner_console_t {
    char job [JACE_ID_MAX];     //  Job id
    bool quiet;                 //  Print nothing while running
    bool live_table;            //  stderr is a terminal: redraw a table
    int screen_rows;            //  Terminal rows the region was set for,
                                //  0 when no region is set
    int table_rows;             //  Rows the table keeps at the bottom
    int64_t next_print;         //  Next refresh (msec since submission)
};

//  The live table lives in the bottom rows of the terminal, below a
//  scrolling region (DECSTBM) that holds everything else written to
//  stderr: log lines from any thread scroll above it and stay visible,
//  and the table is redrawn at absolute rows, so nothing stacks however
//  many lines were logged between two frames.  Each frame is one write
//  under the stderr lock, so a log line never lands inside it.

spawner_console_t *
spawner_console_new (const char *job, bool quiet)
{
    assert (job);
    spawner_console_t *self = (spawner_console_t *) zmalloc (sizeof *self);
    snprintf (self->job, sizeof self->job, "%s", job);
    self->quiet = quiet;
    self->live_table = !quiet && isatty (STDERR_FILENO);
    return self;
}

//  Give the terminal its whole screen back, the cursor below the table
static void
s_release_screen (spawner_console_t *self)
{
    if (!self->screen_rows)
        return;
    flockfile (stderr);
    fprintf (stderr, "\0337\033[r\0338\033[%d;1H\n", self->screen_rows);
    fflush (stderr);
    funlockfile (stderr);
    self->screen_rows = 0;
}

void
spawner_console_destroy (spawner_console_t **self_p)
{
    assert (self_p);
    if (*self_p)
        s_release_screen (*self_p);
    free (*self_p);
    *self_p = NULL;
}

void
spawner_console_iteration_range (const spawner_task_t *tasks, size_t count,
                                 int64_t *min, int64_t *max)
{
    *min = count ? INT64_MAX : 0;
    *max = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t iteration = tasks [i].iteration;
        *min = iteration < *min ? iteration : *min;
        *max = iteration > *max ? iteration : *max;
    }
}

const char *
spawner_console_state_name (const spawner_task_t *task)
{
    //  Before it runs: which step of its start it waits on, so that a
    //  long start (a large file's scatter) shows where it stands.
    switch (task->phase) {
        case SPAWNER_TASK_WAITING:  return "placing";
        case SPAWNER_TASK_SENDING:  return task->assigned_at ? "loading"
                                                             : "queued";
        case SPAWNER_TASK_ASSIGNED:
        case SPAWNER_TASK_ACCEPTED: return "setting up";
        default:                    break;
    }
    if (task->restoring)
        return "restoring";
    switch (task->state) {
        case JACE_TASK_RUNNING:   return "running";
        case JACE_TASK_CONVERGED: return "converged";
        case JACE_TASK_EXHAUSTED: return "at cap";
        default:                  return "starting";
    }
}

//  The terminal's size, or false when stderr has none
static bool
s_screen_size (int *rows, int *columns)
{
    struct winsize size;
    if (ioctl (STDERR_FILENO, TIOCGWINSZ, &size) || size.ws_row == 0
    ||  size.ws_col == 0)
        return false;
    *rows = size.ws_row;
    *columns = size.ws_col;
    return true;
}

//  Reserve the bottom `table_rows` rows of a `rows`-row screen: make room
//  below the cursor (so nothing already written is covered), then confine
//  scrolling to the rows above.  DECSTBM homes the cursor: save and
//  restore it around.
static void
s_reserve_screen (spawner_console_t *self, zchunk_t *frame, int rows,
                  int table_rows)
{
    if (self->screen_rows) {
        //  Resized: clear the old table, set the region again
        zchunk_extend (frame, "\0337", 2);
        char move [32];
        int length = snprintf (move, sizeof move, "\033[%d;1H\033[J",
                               self->screen_rows - self->table_rows + 1);
        zchunk_extend (frame, move, length);
        zchunk_extend (frame, "\0338", 2);
    }
    for (int row = 0; row < table_rows; row++)
        zchunk_extend (frame, "\n", 1);
    char text [64];
    int length = snprintf (text, sizeof text, "\033[%dA\0337\033[1;%dr\0338",
                           table_rows, rows - table_rows);
    zchunk_extend (frame, text, length);
    self->screen_rows = rows;
    self->table_rows = table_rows;
}

//  Append one table row at screen row `row`, cut to the screen's width
static void
s_frame_row (zchunk_t *frame, int row, int columns, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    if ((int) strlen (text) >= columns)
        text [columns - 1] = 0;
    char move [32];
    int length = row ? snprintf (move, sizeof move, "\033[%d;1H\033[2K", row)
                     : snprintf (move, sizeof move, "\033[2K");
    zchunk_extend (frame, move, length);
    zchunk_extend (frame, text, strlen (text));
    if (!row)
        zchunk_extend (frame, "\n", 1);
}

//  The table's rows from screen row `top` down, or at the cursor as
//  lines when top is 0
static void
s_frame_table (zchunk_t *frame, int top, int columns, const char *heading,
               const spawner_task_t *tasks, size_t count,
               const int64_t *first_row, const char *final_state)
{
    int next = top ? 1 : 0;
    s_frame_row (frame, top, columns, "%s", heading);
    s_frame_row (frame, top + next, columns,
                 "%5s  %-16s %-10s %10s %12s %12s  %s", "TASK", "DAEMON",
                 "CLUSTER", "ROWS", "ITERATION", "CHANGE", "STATE");
    for (size_t i = 0; i < count; i++)
        s_frame_row (frame, top ? top + 2 + (int) i : 0, columns,
                     "%5zu  %-16s %-10s %10" PRId64 " %12" PRId64
                     " %12.3e  %s", i, tasks [i].daemon.id,
                     tasks [i].daemon.cluster,
                     first_row [i + 1] - first_row [i], tasks [i].iteration,
                     tasks [i].change,
                     final_state ? final_state
                                 : spawner_console_state_name (&tasks [i]));
}

//  Write a frame in one go, under the stream's lock, and free it
static void
s_frame_write (zchunk_t **frame_p)
{
    flockfile (stderr);
    fwrite (zchunk_data (*frame_p), 1, zchunk_size (*frame_p), stderr);
    fflush (stderr);
    funlockfile (stderr);
    zchunk_destroy (frame_p);
}

//  Draw the table in the reserved rows: a heading line, the column names,
//  a row per task.  Returns false when the screen is too small for it
//  (the caller prints lines instead).
static bool
s_draw_table (spawner_console_t *self, const char *heading,
              const spawner_task_t *tasks, size_t count,
              const int64_t *first_row)
{
    int rows, columns;
    int table_rows = (int) count + 2;
    if (!s_screen_size (&rows, &columns)
    ||  count > FRAME_TASKS_MAX || rows < table_rows + LOG_ROWS_MIN)
        return false;
    zchunk_t *frame = zchunk_new (NULL, 4096);
    if (rows != self->screen_rows || table_rows != self->table_rows)
        s_reserve_screen (self, frame, rows, table_rows);
    zchunk_extend (frame, "\0337", 2);
    s_frame_table (frame, rows - table_rows + 1, columns, heading, tasks,
                   count, first_row, NULL);
    zchunk_extend (frame, "\0338", 2);
    s_frame_write (&frame);
    return true;
}

static void
s_print_line (spawner_console_t *self, int64_t now,
              const spawner_task_t *tasks, size_t count, const char *note)
{
    int64_t min, max;
    spawner_console_iteration_range (tasks, count, &min, &max);
    double change = 0;
    size_t converged = 0;
    for (size_t i = 0; i < count; i++) {
        change = fmax (change, tasks [i].change);
        converged += tasks [i].state == JACE_TASK_CONVERGED;
    }
    fprintf (stderr, "%s: %.1f s, iterations %" PRId64 "..%" PRId64
             ", max change %.2e, locally converged %zu/%zu%s%s\n", self->job,
             now / 1000.0, min, max, change, converged, count,
             note ? "; " : "", note ? note : "");
}

int64_t
spawner_console_update (spawner_console_t *self, int64_t now,
                        const spawner_task_t *tasks, size_t count,
                        const int64_t *first_row, int64_t snapshots,
                        double residual, const char *note)
{
    assert (self);
    if (self->quiet)
        return INT64_MAX / 4;
    if (now >= self->next_print) {
        //  A table taller than the terminal: progress lines instead
        char heading [512], last [64] = "no residual verified yet";
        if (snapshots > 0 && isfinite (residual))
            snprintf (last, sizeof last, "last residual %.2e", residual);
        snprintf (heading, sizeof heading, "%s  %.1f s  snapshots %" PRId64
                  "  %s%s%s", self->job, now / 1000.0, snapshots, last,
                  note ? "  " : "", note ? note : "");
        if (self->live_table
        &&  s_draw_table (self, heading, tasks, count, first_row))
            self->next_print = now + LIVE_TABLE_MSEC;
        else {
            s_release_screen (self);
            s_print_line (self, now, tasks, count, note);
            self->next_print = now + PROGRESS_PRINT_MSEC;
        }
    }
    return self->next_print - now;
}

void
spawner_console_finish (spawner_console_t *self, int64_t now,
                        const spawner_task_t *tasks, size_t count,
                        const int64_t *first_row, double residual,
                        double tolerance, const char *failure)
{
    assert (self);
    if (!self->screen_rows)
        return;
    //  The last frame says how the job ended, not what it was doing
    char heading [512];
    if (failure)
        snprintf (heading, sizeof heading, "%s  %.1f s  FAILED: %s",
                  self->job, now / 1000.0, failure);
    else
        snprintf (heading, sizeof heading, "%s  %.1f s  verified: residual "
                  "%.2e (tolerance %.1e)", self->job, now / 1000.0,
                  residual, tolerance);
    //  Drawn right below the last log line, the whole screen given back:
    //  what follows (the summary) comes next, nothing scrolls away
    int rows, columns;
    if (!s_screen_size (&rows, &columns))
        columns = 80;
    zchunk_t *frame = zchunk_new (NULL, 4096);
    const char *release = "\0337\033[r\0338\033[J";
    zchunk_extend (frame, release, strlen (release));
    s_frame_table (frame, 0, columns, heading, tasks, count, first_row,
                   failure ? "stopped" : "done");
    s_frame_write (&frame);
    self->screen_rows = 0;
}

//  How many of the job's daemons each cluster holds, in the order the
//  tasks first use them.  Every daemon by name made a line of thousands of
//  characters at 128 tasks; the task table, the events and --report name
//  each.
static void
s_print_clusters (const spawner_task_t *tasks, size_t count)
{
    size_t clusters = 0;
    size_t *first = (size_t *) calloc (count ? count : 1, sizeof *first);
    size_t *daemons = (size_t *) calloc (count ? count : 1, sizeof *daemons);
    assert (first && daemons);
    for (size_t i = 0; i < count; i++) {
        size_t seen = 0;
        while (seen < clusters && !streq (tasks [first [seen]].daemon.cluster,
                                          tasks [i].daemon.cluster))
            seen++;
        if (seen == clusters)
            first [clusters++] = i;
        daemons [seen]++;
    }
    printf ("  daemons        %zu in %zu cluster%s:", count, clusters,
            clusters == 1 ? "" : "s");
    for (size_t seen = 0; seen < clusters; seen++)
        printf ("%s %s %zu", seen ? "," : "",
                tasks [first [seen]].daemon.cluster, daemons [seen]);
    printf ("\n");
    free (first);
    free (daemons);
}

//  An error against the known solution past which the summary says that
//  the system may not have one solution (the known ones are of order 1)
#define SUMMARY_FAR_ERROR 1e-2

void
spawner_console_summary (const spawner_summary_t *summary,
                         const spawner_task_t *tasks, size_t count)
{
    int64_t min, max;
    spawner_console_iteration_range (tasks, count, &min, &max);
    printf ("job %s: verified answer\n", summary->job);
    printf ("  application    %s, %zu tasks, %" PRId64 " unknowns\n",
            summary->application, count, summary->unknowns);
    s_print_clusters (tasks, count);
    //  A resumed spawner's own time is only the resumed part
    if (isnan (summary->since_submit))
        printf ("  time           %.3f s\n", summary->seconds);
    else
        printf ("  time           %.3f s since the resume, %.1f s since the "
                "job was submitted\n", summary->seconds,
                summary->since_submit);
    printf ("  iterations     %" PRId64 "..%" PRId64 " per task\n", min, max);
    printf ("  residual       %.3e (%s; tolerance %.1e)\n", summary->residual,
            summary->residual_meaning ? summary->residual_meaning
                                      : "the application's residual",
            summary->tolerance);
    if (!isnan (summary->error))
        printf ("  error          %.3e (max-norm, against the known "
                "solution)\n", summary->error);
    //  A residual under the tolerance far from the known solution: the
    //  system has other solutions, or nearly (a singular matrix with two
    //  equal rows gave error 2.4, reported without a word)
    if (summary->error > SUMMARY_FAR_ERROR)
        printf ("  note           the answer solves the system to the "
                "tolerance but is far from\n"
                "                 the known solution: is the matrix "
                "singular or badly conditioned?\n");
    if (summary->crashes)
        printf ("  crashed        %" PRId64 " daemon%s on purpose (job file "
                "schedule)\n", summary->crashes,
                summary->crashes == 1 ? "" : "s");
    int64_t lost = summary->replacements - summary->drain_moves
                 - summary->resume_moves;
    if (summary->replacements) {
        printf ("  replaced       %" PRId64 " daemon%s %s (",
                summary->replacements, summary->replacements == 1 ? "" : "s",
                isnan (summary->since_submit) ? "during the job"
                                              : "since the resume");
        const char *separator = "";
        if (lost) {
            printf ("%" PRId64 " lost", lost);
            separator = ", ";
        }
        if (summary->drain_moves) {
            printf ("%s%" PRId64 " drained", separator, summary->drain_moves);
            separator = ", ";
        }
        if (summary->resume_moves)
            printf ("%s%" PRId64 " not taken back by the resume",
                    separator, summary->resume_moves);
        printf ("): %" PRId64 " restarted from a checkpoint, %" PRId64
                " from the initial state", summary->from_checkpoint,
                summary->from_initial);
        if (summary->from_drain)
            printf (", %" PRId64 " from the iterate the drain gathered (no "
                    "copies)", summary->from_drain);
        //  The others restored nothing: their task took its rows anew (a
        //  rebalance's iterate in its ASSIGN, or the scatter's data
        //  before it had iterated), or was replaced again, or the job
        //  ended, first.  Unsaid, the counts did not add up.
        int64_t other = summary->replacements - summary->from_checkpoint
                      - summary->from_initial - summary->from_drain;
        if (other > 0)
            printf (", %" PRId64 " from neither (a rebalance's iterate, "
                    "the data of a task not yet started, or replaced "
                    "again first)", other);
        printf ("\n");
    }
    if (summary->draining)
        printf ("  drain          of cluster %s not finished when the job "
                "ended%s%s\n",
                summary->draining,
                summary->drain_waiting && *summary->drain_waiting ? ": " : "",
                summary->drain_waiting ? summary->drain_waiting : "");
    if (summary->out_path)
        printf ("  solution       %s\n", summary->out_path);
    fflush (stdout);
}
