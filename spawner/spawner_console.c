/*  =========================================================================
    spawner_console - what the user watching a job sees
    =========================================================================
*/
#include "spawner_console.h"

#include <math.h>

#define PROGRESS_PRINT_MSEC 2000
#define LIVE_TABLE_MSEC 250

struct _spawner_console_t {
    char job [JACE_ID_MAX];     //  Job id
    bool quiet;                 //  Print nothing while running
    bool live_table;            //  stderr is a terminal: redraw a table
    size_t table_lines;         //  Lines of the table drawn last time
    int64_t next_print;         //  Next refresh (msec since submission)
};


//  --------------------------------------------------------------------------

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

void
spawner_console_destroy (spawner_console_t **self_p)
{
    assert (self_p);
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
    if (task->phase != SPAWNER_TASK_RUNNING)
        return task->phase == SPAWNER_TASK_WAITING ? "placing" : "starting";
    if (task->restoring)
        return "restoring";
    switch (task->state) {
        case JACE_TASK_RUNNING:   return "running";
        case JACE_TASK_CONVERGED: return "converged";
        case JACE_TASK_EXHAUSTED: return "at cap";
        default:                  return "starting";
    }
}

//  Redraw the task table in place (ANSI: cursor up, clear line).
static void
s_draw_table (spawner_console_t *self, int64_t now,
              const spawner_task_t *tasks, size_t count, int64_t snapshots,
              double residual)
{
    if (self->table_lines)
        fprintf (stderr, "\033[%zuA", self->table_lines);
    fprintf (stderr, "\033[2K%s  %.1f s  snapshots %" PRId64 "  last "
             "residual %.2e\n", self->job, now / 1000.0, snapshots, residual);
    fprintf (stderr, "\033[2K%5s  %-16s %-10s %12s %12s  %s\n", "TASK",
             "DAEMON", "CLUSTER", "ITERATION", "CHANGE", "STATE");
    for (size_t i = 0; i < count; i++)
        fprintf (stderr, "\033[2K%5zu  %-16s %-10s %12" PRId64 " %12.3e  "
                 "%s\n", i, tasks [i].daemon.id, tasks [i].daemon.cluster,
                 tasks [i].iteration, tasks [i].change,
                 spawner_console_state_name (&tasks [i]));
    self->table_lines = count + 2;
}

static void
s_print_line (spawner_console_t *self, int64_t now,
              const spawner_task_t *tasks, size_t count)
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
             ", max change %.2e, locally converged %zu/%zu\n", self->job,
             now / 1000.0, min, max, change, converged, count);
}

int64_t
spawner_console_update (spawner_console_t *self, int64_t now,
                        const spawner_task_t *tasks, size_t count,
                        int64_t snapshots, double residual)
{
    assert (self);
    if (self->quiet)
        return INT64_MAX / 4;
    if (now >= self->next_print) {
        //  A table taller than a terminal scrolls instead of redrawing.
        if (self->live_table && count <= 60) {
            s_draw_table (self, now, tasks, count, snapshots, residual);
            self->next_print = now + LIVE_TABLE_MSEC;
        }
        else {
            s_print_line (self, now, tasks, count);
            self->next_print = now + PROGRESS_PRINT_MSEC;
        }
    }
    return self->next_print - now;
}

void
spawner_console_summary (const spawner_summary_t *summary,
                         const spawner_task_t *tasks, size_t count)
{
    int64_t min, max;
    spawner_console_iteration_range (tasks, count, &min, &max);
    printf ("job %s: verified answer\n", summary->job);
    printf ("  application    %s, %zu tasks, %" PRId64 " unknowns\n",
            summary->application, count, summary->unknowns);
    printf ("  daemons       ");
    for (size_t i = 0; i < count; i++)
        printf (" %s@%s", tasks [i].daemon.id, tasks [i].daemon.cluster);
    printf ("\n  time           %.3f s\n", summary->seconds);
    printf ("  iterations     %" PRId64 "..%" PRId64 " per task\n", min, max);
    printf ("  residual       %.3e (relative, true ||b - Ax|| / ||b||; "
            "tolerance %.1e)\n", summary->residual, summary->tolerance);
    if (!isnan (summary->error))
        printf ("  error          %.3e (max-norm, against the known "
                "solution)\n", summary->error);
    if (summary->crashes)
        printf ("  crashed        %" PRId64 " daemons on purpose (job file "
                "schedule)\n", summary->crashes);
    if (summary->replacements)
        printf ("  replaced       %" PRId64 " dead daemons during the job: "
                "%" PRId64 " restarted from a checkpoint, %" PRId64 " from "
                "the initial state\n", summary->replacements,
                summary->from_checkpoint, summary->from_initial);
    if (summary->out_path)
        printf ("  solution       %s\n", summary->out_path);
    fflush (stdout);
}
