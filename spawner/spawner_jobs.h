/*  =========================================================================
    spawner_jobs - `jace-spawner jobs` and `jace-spawner cancel`

    jobs: the jobs running on a grid, as the super-node sees them (daemons
    working for each job id, the lease's owner and age), completed by each
    owner spawner's own word (its state, from its status endpoint).  A job
    whose daemons work while its owner does not answer is shown as
    "orphaned": its daemons leave it by themselves after
    job/orphan_timeout, or at once with `cancel`.

    cancel: needs the job's secret (from --secrets DIR, else the default
    folder; refused with the reason, nothing sent, when it cannot be
    read).  Asks the job's owner spawner to cancel (it stops its daemons,
    gives the lease back and exits non-zero, "cancelled by ...").  When the
    owner does not answer, tells each daemon of the job to stop directly.
    Either way it then waits until no daemon works for the job and says how
    many were freed.
    =========================================================================
*/
#ifndef SPAWNER_JOBS_H_INCLUDED
#define SPAWNER_JOBS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "jace_auth.h"

//  Print the grid's jobs (a table, or a JSON array with --json); a job
//  no spawner answers for that this machine's records (in secrets_dir,
//  NULL: the default folder) say ended is "ended", not "orphaned".
//  Returns 0, or 1 with the reason on stderr.
int
    spawner_jobs_list (const char *supernode, const char *keys_dir,
                       const char *cert, const char *secrets_dir, bool json,
                       int timeout_msec);

//  Cancel job `job_id`, proving it ours with its secret in secrets_dir
//  (NULL: the default folder), and wait until its daemons are free (at
//  most timeout_msec for each step).  Returns 0 when no daemon works for the
//  job any more, 1 otherwise (the reason on stderr).
int
    spawner_jobs_cancel (const char *job_id, const char *supernode,
                         const char *keys_dir, const char *cert,
                         const char *secrets_dir, int timeout_msec);

//  Ask the spawner that owns job_id (found through the super-node) to
//  move every task of the job off `cluster`, with a DRAIN sealed with the
//  job key; `cluster` NULL stops the drain under way (a DRAIN naming no
//  cluster).  Returns 0 when it took the request (the drain goes on while
//  the job runs: events drain, drain_move, drained; or drain_stopped), 1
//  otherwise (the reason on stderr).
int
    spawner_jobs_drain (const char *job_id, const char *cluster,
                        const char *supernode, const char *keys_dir,
                        const char *cert, const char *secrets_dir,
                        int timeout_msec);

//  Ask the spawner that owns job_id to cut the job's rows again in
//  proportion to its tasks' measured rates, with a REBALANCE sealed with
//  the job key.  Prints what the spawner decided (new rows, or why the
//  rows stay).  Returns 0 when it took the request (events
//  rebalance_plan, rebalance_assign, rebalance_done), 1 otherwise (the
//  reason on stderr).
int
    spawner_jobs_rebalance (const char *job_id, const char *supernode,
                            const char *keys_dir, const char *cert,
                            const char *secrets_dir, int timeout_msec);

//  `jace-spawner status JOBID`: ask the job's spawner (found through the
//  super-node's lease) for its task table and print it, or with json one
//  object: job, state, tasks, age_seconds, snapshots, residual and a
//  "table" array (task, daemon, cluster, endpoint, state).  A job whose
//  end record is in secrets_dir (NULL: the default folder) is said to
//  have ended, how and when.  Returns 0, or 1 with the reason on stderr
//  (no such job, its spawner does not answer).
int
    spawner_jobs_status (const char *job_id, const char *supernode,
                         const char *keys_dir, const char *cert,
                         const char *secrets_dir, bool json,
                         int timeout_msec);

//  True if the spawner that owns job_id (found through the super-node's
//  lease) answers for it; its endpoint then goes into owner.  resume
//  takes over only a job whose spawner is gone: two spawners of one job
//  would each replace the tasks the other placed.
bool
    spawner_jobs_owner_answers (const char *job_id, const char *supernode,
                                const char *keys_dir, const char *cert,
                                char *owner, size_t owner_size);

//  The key of job_id's secret (from secrets_dir, NULL: the default
//  folder) into job_key: 0, or -1 with the reason on stderr.  That reason
//  is "no job runs" when the grid of supernode knows no such job (the
//  spawner deletes a job's secret when the job ends), else why the secret
//  could not be read.
int
    spawner_jobs_open_secret (const char *job_id, const char *supernode,
                              const char *keys_dir, const char *cert,
                              const char *secrets_dir, jace_key_t *job_key);

#endif
