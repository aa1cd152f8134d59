/*  =========================================================================
    spawner_job - a job as the user describes it: the ZPL job file

    Loads the job file, applies --set KEY=VALUE overrides, checks every key
    the runtime relies on (with the file name and the offending key in the
    message), and flattens the whole tree into "section/key" -> value
    parameters that travel to every task.

        job
            application = jacobi2d    #  what to run
            tasks = 8                 #  tasks, one daemon each
            tolerance = 1e-6          #  relative residual to reach
            max_iterations = 1000000  #  per task; 0 = no cap
            max_seconds = 300         #  wall-time cap of the whole job
            reserve_timeout = 30      #  seconds to wait for daemons
            heartbeat_timeout = 3000  #  ms of silence before a daemon is dead
            stall_snapshots = 20      #  end the job when its verified
                                      #  residual has not fallen 1% over
                                      #  this many snapshots (0: never)
            spares = 0                #  daemons leased beforehand for
                                      #  replacements
            mapping = maheve          #  spawner_plan.h: maheve,
                                      #  maheve-locality, aiac-qm, f-ec,
                                      #  default, simple
            replacement = same-cluster    #  or any (mapping simple only;
                                          #  alone, it means simple)
        problem
            n = 64                    #  application parameters
        checkpoint
            copies = 2                #  neighbours keeping each checkpoint
            every_seconds = 2         #  checkpoint period (0: off) ...
            every_iterations = 0      #  ... or every so many iterations
        faults                        #  scheduled crashes: spawner_faults.h
        report
            sample_seconds = 0        #  true residual sampled this often
        scatter                       #  data handed out at the start
            distribution = balanced   #  or power, uniform
            order = decreasing        #  bandwidth from root; increasing,
                                      #  rank
            root = A                  #  cluster the data leaves from
            iterations = 1000         #  iterations the balance counts
    =========================================================================
*/
#ifndef SPAWNER_JOB_H_INCLUDED
#define SPAWNER_JOB_H_INCLUDED

#include "jace_task.h"
#include "spawner_faults.h"
#include "spawner_replacement.h"
#include "spawner_scatter.h"

typedef struct _spawner_job_t spawner_job_t;

//  Load and check a job file, applying overrides ("KEY=VALUE" strings,
//  may be NULL).  Returns NULL with the reason ("FILE: ...") on failure.
spawner_job_t *
    spawner_job_load (const char *path, zlist_t *overrides,
                      char *reason, size_t reason_size);

//  The job a running task's parameters describe (a resumed job: the
//  daemons hand back what the spawner sent them).  `what` names the job
//  in reasons.  Returns NULL with the reason on failure.
spawner_job_t *
    spawner_job_adopt (zhash_t *params, const char *what, char *reason,
                       size_t reason_size);

//  Destroy job; nullifies the reference. Safe on NULL.
void
    spawner_job_destroy (spawner_job_t **self_p);

//  The application to run (found in the application table).
const jace_app_t *
    spawner_job_app (spawner_job_t *self);

//  The job's parameters, flattened; borrowed.
zhash_t *
    spawner_job_params (spawner_job_t *self);

//  The application's loaded problem (for shape, residual, attach);
//  borrowed.
void *
    spawner_job_problem (spawner_job_t *self);

//  Checked values of the job section.
int64_t spawner_job_tasks (spawner_job_t *self);
double spawner_job_tolerance (spawner_job_t *self);
int64_t spawner_job_max_iterations (spawner_job_t *self);
double spawner_job_max_seconds (spawner_job_t *self);
double spawner_job_reserve_timeout (spawner_job_t *self);
int64_t spawner_job_heartbeat_timeout (spawner_job_t *self);
int64_t spawner_job_spares (spawner_job_t *self);
double spawner_job_sample_seconds (spawner_job_t *self);
int64_t spawner_job_stall_snapshots (spawner_job_t *self);

//  The crashes the job file schedules (never NULL); borrowed.
spawner_faults_t *spawner_job_faults (spawner_job_t *self);

//  The replacement policy job/replacement names (default same-cluster).
const spawner_replacement_t *spawner_job_replacement (spawner_job_t *self);

//  The mapping job/mapping names (default maheve; simple when only
//  job/replacement is set).
const char *spawner_job_mapping (spawner_job_t *self);

//  True unless job/detector = fixed: failure detection adapts to measured
//  gaps and ignores the spawner's own stalls (spawner_detector.h); fixed
//  is the plain job/heartbeat_timeout, kept to measure the difference.
bool spawner_job_adaptive_detector (spawner_job_t *self);

//  True unless job/watch_links = off: a daemon whose link drops and whose
//  port then refuses us is dead at once (spawner_watch.h), not after its
//  silence; off leaves every loss to the detector, to measure it alone.
bool spawner_job_watch_links (spawner_job_t *self);

//  Rows and unknowns per row of the problem.
int64_t spawner_job_rows (spawner_job_t *self);
int64_t spawner_job_unknowns_per_row (spawner_job_t *self);

//  The scatter section (spawner_scatter.h); borrowed.
const spawner_scatter_config_t *spawner_job_scatter (spawner_job_t *self);
//  drain/schedule: how a drain groups its moves (spawner_drain.h)
const char *spawner_job_drain_schedule (spawner_job_t *self);
//  job/rebalance = auto (default off): cut the rows again when the tasks'
//  measured rates drift from the cut by more than
//  job/rebalance_threshold (default 0.25, a task's rows relative to its
//  fair share), which `jace-spawner rebalance` uses too
bool spawner_job_rebalance_auto (spawner_job_t *self);
double spawner_job_rebalance_threshold (spawner_job_t *self);
//  job/rebalance_handoff = direct (default): a rebalance's new tasks take
//  the iterate from the daemons that held it (SLICE_ASK, SLICE); spawner:
//  the spawner sends it with each ASSIGN
bool spawner_job_rebalance_direct (spawner_job_t *self);
//  job/rebalance_schedule: how direct slices cross between clusters
//  (spawner_handoff): auto (default: OGGP where eta_o predicts a gain,
//  else all at once), oggp, ggp, all
const char *spawner_job_rebalance_schedule (spawner_job_t *self);
//  checkpoint/copies, checkpoint/every_iterations (0: none) and
//  checkpoint/every_seconds (0: none): a task checkpoints at whichever
//  comes first
int64_t spawner_job_checkpoint_copies (spawner_job_t *self);
int64_t spawner_job_checkpoint_iterations (spawner_job_t *self);
double spawner_job_checkpoint_seconds (spawner_job_t *self);

//  Split the rows into `count` blocks in proportion to `power` (one entry
//  per task, > 0), every block at least one row.  Writes count + 1 block
//  starts into first (first [count] == rows).  Returns 0, or -1 if there
//  are fewer rows than tasks.
int
    spawner_job_partition (spawner_job_t *self, const double *power,
                           size_t count, int64_t *first);

#endif
