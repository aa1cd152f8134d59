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

    MAHEVE's replacement (mapping/maheve.h) plugs in here when the spawner
    maps with MAHEVE.
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
