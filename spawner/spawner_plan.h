/*  =========================================================================
    spawner_plan - a job's mapping on the live model, and its replacements

    The one place where a mapping name becomes a placement: the spawner and
    jace-map both call it, so they map alike (docs/MAPPING.md section 4).
    Mappings: maheve (default), maheve-locality, aiac-qm, f-ec, default
    (JaceP2P-V2: hand-out order, blind to cluster and power), simple (by
    cluster name, then power, then daemon id).
    =========================================================================
*/
#ifndef SPAWNER_PLAN_H_INCLUDED
#define SPAWNER_PLAN_H_INCLUDED

#include "spawner_job.h"
#include "spawner_live.h"

//  A placement: node of every task, spares, what the model predicts.
typedef struct {
    char mapping [32];          //  The mapping that made it
    size_t tasks;               //  Entries in placement
    size_t *placement;          //  Task -> node of the live model
    size_t *spares;             //  Nodes held as spares
    size_t spare_count;         //  Entries in spares
    double hd;                  //  Heterogeneity degree of the model
    double predicted_seconds;   //  ET(App), seconds per iteration
    double plan_msec;           //  Time spent mapping
} spawner_plan_t;

//  The mappings' names, NULL-terminated, the default first.
const char *const *
    spawner_plan_list (void);

//  The mappings' names, comma-separated, for messages.
const char *
    spawner_plan_names (void);

//  The mapping's name as a static string, or NULL if name is not one.
const char *
    spawner_plan_canonical (const char *name);

//  True if name is a mapping.
bool
    spawner_plan_exists (const char *name);

//  The job's task graph from its application's describe callback (or a
//  chain when it has none) on an even partition of its rows into `tasks`
//  blocks.  Returns NULL with the reason.
tig_t *
    spawner_plan_graph (spawner_job_t *job, size_t tasks, char *reason,
                        size_t reason_size);

//  Map the tig's tasks on the live model's available nodes with mapping,
//  holding at least spares_wanted spares (fewer if the daemons run out).
//  Fills plan (zeroed, or emptied with spawner_plan_clear; clear it after
//  use) and marks the grid (tasks' nodes GRID_USED, spares
//  GRID_RESERVED).  Returns 0, or -1 with the reason (unknown mapping,
//  fewer available nodes than tasks; the grid is unchanged then).
int
    spawner_plan_map (const char *mapping, spawner_live_t *live, tig_t *tig,
                      size_t spares_wanted, spawner_plan_t *plan,
                      char *reason, size_t reason_size);

//  The node of task `task` (placement [task], marked GRID_DEAD by the
//  caller) has failed: the mapping's replacement writes the task's new
//  node to placement [task] and marks it used.  why gets the decision's
//  reason ("a reserved node of its cluster A", ...); `drained` says the
//  node's cluster is being drained (its free nodes kept off), so that
//  the reason says so rather than that it has no node.  Returns 0, or -1
//  with the reason in why when no node is available.
int
    spawner_plan_replace (const char *mapping, spawner_live_t *live,
                          tig_t *tig, size_t *placement, size_t task,
                          bool drained, char *why, size_t why_size);

//  Free what a plan holds; it can be filled again.
void
    spawner_plan_clear (spawner_plan_t *plan);

#endif
