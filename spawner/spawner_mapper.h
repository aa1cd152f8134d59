/*  =========================================================================
    spawner_mapper - a job's placement on the live grid, kept up to date

    Between the plan (spawner_plan, pure) and the lease (spawner_lease,
    sockets): holds the job's task graph and the newest listing of the
    grid, makes the initial plan with the daemons the lease holds counted
    as free, asks the lease for exactly the planned daemons, re-plans when
    some were taken meanwhile, and chooses each replacement with the
    mapping's own policy on the grid as it is now (docs/MAPPING.md).
    =========================================================================
*/
#ifndef SPAWNER_MAPPER_H_INCLUDED
#define SPAWNER_MAPPER_H_INCLUDED

#include "spawner_job.h"
#include "spawner_lease.h"
#include "spawner_plan.h"
#include "spawner_task.h"

typedef struct _spawner_mapper_t spawner_mapper_t;

//  The mapper of `job` for `tasks` tasks: builds the task graph.  Returns
//  NULL with the reason.
spawner_mapper_t *
    spawner_mapper_new (spawner_job_t *job, size_t tasks, char *reason,
                        size_t reason_size);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    spawner_mapper_destroy (spawner_mapper_t **self_p);

//  The job's mapping name.
const char *
    spawner_mapper_mapping (spawner_mapper_t *self);

//  Take the newest listing of the grid (a STATUS_REPLY; *listing_p is
//  consumed), read at `now` (msec).
void
    spawner_mapper_set_listing (spawner_mapper_t *self,
                                jace_msg_t **listing_p, int64_t now);

//  Milliseconds the task graph took to build (the application's
//  describe, O(nonzeros) for a matrix).
double
    spawner_mapper_graph_msec (spawner_mapper_t *self);

//  The whole job's work per iteration (the task graph's costs summed,
//  flops).
double
    spawner_mapper_work (spawner_mapper_t *self);

//  Daemons of the newest listing leased by or working for a job other
//  than job_id: what a job short of daemons waits for.  0 before any
//  listing.
size_t
    spawner_mapper_busy_elsewhere (spawner_mapper_t *self,
                                   const char *job_id);

//  When the newest listing was read (msec), or 0 for none yet.
int64_t
    spawner_mapper_listing_time (spawner_mapper_t *self);

//  Plan the job on the newest listing, the lease's spares counted free,
//  `refused` (may be NULL) counted taken; release the spares the plan
//  does not use and ask the lease for the others by id.  Returns 0, or -1
//  with the reason (no listing, too few daemons: try again later).
int
    spawner_mapper_plan (spawner_mapper_t *self, spawner_lease_t *lease,
                         zlist_t *refused, char *reason, size_t reason_size);

//  The current plan (valid after spawner_mapper_plan returned 0).
const spawner_plan_t *
    spawner_mapper_current (spawner_mapper_t *self);

//  The live model of the current plan (borrowed), or NULL.
spawner_live_t *
    spawner_mapper_live (spawner_mapper_t *self);

//  The grid's platform (clusters, powers, links) as the super-nodes last
//  measured it: the newest listing's model, else the current plan's.  A
//  resumed job plans nothing: its drains and rebalances weigh their moves
//  on this.  Borrowed, valid until the next listing; NULL before any.
platform_t *
    spawner_mapper_platform (spawner_mapper_t *self);

//  The job's task graph (borrowed).
tig_t *
    spawner_mapper_graph (spawner_mapper_t *self);

//  The daemon the plan chose for task `rank` (borrowed).
const jace_node_t *
    spawner_mapper_task_node (spawner_mapper_t *self, size_t rank);

//  From now on no task is placed on a daemon of `cluster` (a drain):
//  replacements see its daemons as dead.
void
    spawner_mapper_exclude_cluster (spawner_mapper_t *self,
                                    const char *cluster);

//  Place tasks on `cluster` again (a drain refused before it began).
void
    spawner_mapper_readmit_cluster (spawner_mapper_t *self,
                                    const char *cluster);

//  Place tasks on every excluded cluster again.
void
    spawner_mapper_readmit_all (spawner_mapper_t *self);

//  The excluded clusters, as "A, B" into names ("" when none).
void
    spawner_mapper_excluded_names (spawner_mapper_t *self, char *names,
                                   size_t size);

//  True if `cluster` is excluded.
bool
    spawner_mapper_excluded (spawner_mapper_t *self, const char *cluster);

//  Choose the new daemon of task `rank`, whose daemon died: on the newest
//  listing, with the tasks' daemons used (dead ones dead: `dead` lists
//  their ids, may be NULL), the lease's spares reserved and `refused`
//  (may be NULL) taken.  `fresh`: the listing was taken after the loss,
//  so a spare it does not name is dead; else (no super-node answers) the
//  spares are trusted, and only they are chosen from: a free daemon
//  needs a super-node's grant.  Writes the daemon and the decision's
//  reason.
//  Returns 0, or -1 with the reason in why.
int
    spawner_mapper_replace (spawner_mapper_t *self, spawner_lease_t *lease,
                            const spawner_task_t *tasks, size_t task_count,
                            size_t rank, zlist_t *dead, zlist_t *refused,
                            bool fresh, jace_node_t *chosen, char *why,
                            size_t why_size);

#endif
