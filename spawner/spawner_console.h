/*  =========================================================================
    spawner_console - what the user watching a job sees

    On a terminal, a live table of the tasks redrawn in place (4 times a
    second) in the bottom rows, log lines scrolling above it; its last
    frame shows how the job ended.  Otherwise, or when it would not fit,
    one progress line every 2 s on stderr; nothing with --quiet.  At the end, the summary of a
    verified job on stdout.  Printing costs one pass over the tasks per
    refresh, never per message.
    =========================================================================
*/
#ifndef SPAWNER_CONSOLE_H_INCLUDED
#define SPAWNER_CONSOLE_H_INCLUDED

#include "spawner_task.h"

typedef struct _spawner_console_t spawner_console_t;

//  What the summary of a verified job says.
typedef struct {
    const char *job;            //  Job id
    const char *application;    //  Its name
    const char *residual_meaning;   //  What its residual measures, or NULL
    int64_t unknowns;           //  Length of the answer
    double seconds;             //  Submission (or the resume) to the
                                //  verified answer
    double since_submit;        //  A resumed job: submission to the
                                //  verified answer, or NAN
    double residual;            //  Verified relative residual
    double tolerance;           //  The job's tolerance
    double error;               //  Max-norm error, or NAN if unknown
    int64_t crashes;            //  Daemons the job's schedule crashed
    int64_t replacements;       //  Tasks moved to another daemon
    int64_t drain_moves;        //  ... of them moved off drained clusters
    int64_t resume_moves;       //  ... of them a resume did not adopt
    const char *draining;       //  Cluster still being drained, or NULL
    const char *drain_waiting;  //  Why its drain waits, or ""
    int64_t from_checkpoint;    //  ... restarted from a checkpoint
    int64_t from_initial;       //  ... restarted from the initial state
    int64_t from_drain;         //  ... from the iterate a drain gathered
    const char *out_path;       //  Where the answer went, or NULL
} spawner_summary_t;

//  A console for job `job`; quiet prints nothing while running.
spawner_console_t *
    spawner_console_new (const char *job, bool quiet);

//  Destroy; nullifies the reference. Safe on NULL.
void
    spawner_console_destroy (spawner_console_t **self_p);

//  Refresh the table or print a progress line if one is due at `now`
//  (msec since submission).  `first_row` holds the tasks' block starts
//  (count + 1; task i has rows first_row [i] to first_row [i + 1]), for
//  the table's ROWS column.  `note`, when not NULL, is what the job is
//  doing besides (a drain), shown after the heading or the line.
//  Returns msec until the next one is due.
int64_t
    spawner_console_update (spawner_console_t *self, int64_t now,
                            const spawner_task_t *tasks, size_t count,
                            const int64_t *first_row, int64_t snapshots,
                            double residual, const char *note);

//  The job is over: the live table's last frame shows how it ended (the
//  verified residual, or failure), every task done or stopped, and gives
//  the terminal back below it.  Nothing without a live table.
void
    spawner_console_finish (spawner_console_t *self, int64_t now,
                            const spawner_task_t *tasks, size_t count,
                            const int64_t *first_row, double residual,
                            double tolerance, const char *failure);

//  Lowest and highest iteration among the tasks.
void
    spawner_console_iteration_range (const spawner_task_t *tasks,
                                     size_t count, int64_t *min,
                                     int64_t *max);

//  A task's state as the table shows it: placing, starting, restoring,
//  running, converged, at cap.
const char *
    spawner_console_state_name (const spawner_task_t *task);

//  Print the summary of a verified job on stdout.
void
    spawner_console_summary (const spawner_summary_t *summary,
                             const spawner_task_t *tasks, size_t count);

#endif
