/*  =========================================================================
    spawner_run - one job from reservation to a verified answer

    Leases daemons from a super-node (retrying until the job's
    reserve_timeout), places one task on each with its block of rows and
    the table of every task's daemon, starts them together, watches their
    heartbeats and progress, and when every task reports local convergence
    gathers a snapshot of the answer and computes its true relative
    residual.  Only a snapshot that passes ends the job; a failing one lets
    the iterations go on and is retried with a growing back-off.  The
    answer written and printed is exactly the vector that was verified.
    =========================================================================
*/
#ifndef SPAWNER_RUN_H_INCLUDED
#define SPAWNER_RUN_H_INCLUDED

#include "spawner_job.h"

//  How the user asked to run the job.
typedef struct {
    const char *job_file;       //  For messages
    const char *supernode;      //  First super-node endpoint
    const char **supernodes;    //  Every one, failover order, or NULL
    size_t supernode_count;     //  Entries in supernodes
    const char *keys_dir;       //  CURVE keys directory, or NULL
    const char *cert;           //  Our certificate (default spawner)
    const char *bind;           //  Status endpoint (default loopback:*)
    const char *out_path;       //  Where to write the answer, or NULL
    const char *events_path;    //  JSON-lines event log, or NULL
    bool events_append;         //  Add to the log instead of replacing it
    const char *report_path;    //  Text report after the job, or NULL
    const char *plot_path;      //  Plot of the report (.png/.svg), or NULL
    bool insecure;              //  Allow a non-loopback status endpoint
    bool quiet;                 //  No progress lines
} spawner_options_t;

//  Run the job.  Returns 0 only for a verified answer; otherwise 1, with
//  the reason printed on stderr and in the event log.
int
    spawner_run (spawner_job_t *job, const spawner_options_t *options);

//  Take over job `job_id` whose spawner died: find its daemons through the
//  super-node, learn the job from them (ADOPT), and carry on to a verified
//  answer as spawner_run does.  Returns 0 only for a verified answer.
int
    spawner_resume (const char *job_id, const spawner_options_t *options);

#endif
