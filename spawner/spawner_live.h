/*  =========================================================================
    spawner_live - the live platform model a job is mapped on

    The daemons a super-node lists (its own and its peers'), each a node of
    its cluster with its measured power, the links between clusters as the
    super-nodes measured them (STATUS_REPLY params link/A/B/...), and the
    daemons' states as a grid_t for the mappers (docs/MAPPING.md section
    4).  Unmeasured links get defaults: intra-cluster 50 us and 1000 Mb/s,
    inter-cluster the slowest measured one, else 5000 us and 100 Mb/s.
    Nodes are numbered as the platform numbers them (clusters in the order
    the listing first names them, then daemons in listing order); the
    grid's hand-out order (grid_set_order) is the listing's order.
    =========================================================================
*/
#ifndef SPAWNER_LIVE_H_INCLUDED
#define SPAWNER_LIVE_H_INCLUDED

#include "jace_msg.h"
#include "mapping.h"

typedef struct _spawner_live_t spawner_live_t;

//  The model of a STATUS_REPLY (borrowed), plus the records `extra`
//  (extra_count of them, may be NULL) of daemons the listing may have lost
//  (our tasks' daemons, dead ones included) when it does not name them.
//  Free daemons are GRID_FREE, others GRID_USED; records that make no
//  sense are left out (spawner_live_skipped).  Returns NULL with the
//  reason when no usable daemon is left.
spawner_live_t *
    spawner_live_new (jace_msg_t *listing, const jace_node_t *extra,
                      size_t extra_count, char *reason, size_t reason_size);

//  The model of a platform (borrowed, must outlive the model): every node
//  a free daemon named as jace-grid names it (CLUSTER-N, N from 0 in each
//  cluster), power as the platform gives it, links as the platform says.
spawner_live_t *
    spawner_live_from_platform (platform_t *platform, char *reason,
                                size_t reason_size);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    spawner_live_destroy (spawner_live_t **self_p);

//  The platform and the grid (borrowed).
platform_t *
    spawner_live_platform (spawner_live_t *self);
grid_t *
    spawner_live_grid (spawner_live_t *self);

//  Number of nodes (daemons).
size_t
    spawner_live_count (spawner_live_t *self);

//  The daemon of node `node` (borrowed).
const jace_node_t *
    spawner_live_node (spawner_live_t *self, size_t node);

//  The node of daemon `id`, or -1.
int64_t
    spawner_live_find (spawner_live_t *self, const char *id);

//  Records of the listing left out (no sense: jace_node_valid, no
//  cluster, past the most clusters a model holds), and why the first was.
size_t
    spawner_live_skipped (spawner_live_t *self, const char **reason);

//  Ordered cluster pairs (A != B) whose latency was measured, and pairs
//  in all.
size_t
    spawner_live_links_measured (spawner_live_t *self);
size_t
    spawner_live_links_total (spawner_live_t *self);

#endif
