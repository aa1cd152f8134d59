/*  =========================================================================
    spawner_replacement - where a task goes when its daemon dies

    A replacement policy chooses, for a task whose daemon died, one of the
    job's spares (daemons leased and not used yet), or says which cluster
    to ask the super-node for when no spare suits.  Policies are reached by
    name (job/replacement):

        same-cluster   a spare of the dead daemon's cluster, else the most
                       powerful spare; with no spare, lease one preferring
                       that cluster (the default)
        any            the first spare; with none, lease any daemon (the
                       default policy of JaceP2P-V2)

    Only job/mapping = simple reads job/replacement.  The spawner runs
    `any` through this module; `same-cluster` it runs as simple's
    replacement on the live grid (spawner_plan_replace), which after the
    spares takes a free daemon of the cluster, else the most powerful
    free one, rather than whatever a super-node grants.  Every other
    mapping replaces by its own rule (mapping/maheve.h, aiac_qm.h,
    fec.h) through spawner_mapper_replace.
    =========================================================================
*/
#ifndef SPAWNER_REPLACEMENT_H_INCLUDED
#define SPAWNER_REPLACEMENT_H_INCLUDED

#include "jace_msg.h"

typedef struct {
    const char *name;
    //  Index of the spare to take for a task whose daemon `dead` died, or
    //  -1 to lease a new one.  spares[] are leased daemons no task used.
    int (*pick_spare) (const jace_node_t *dead, const jace_node_t *spares,
                       size_t count);
    //  Cluster to prefer when leasing a new daemon ("" for any).
    const char *(*lease_cluster) (const jace_node_t *dead);
} spawner_replacement_t;

//  The policy of that name, or NULL.
const spawner_replacement_t *
    spawner_replacement_find (const char *name);

//  The policies' names, comma-separated, for messages.
const char *
    spawner_replacement_names (void);

#endif
