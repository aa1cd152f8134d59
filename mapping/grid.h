/*  =========================================================================
    grid - the live state of a platform's nodes for the mappers

    Wraps a platform (borrowed) with the state of each node: free, used by
    a task, reserved as a spare, or dead.  Computes the heterogeneity
    degree hd and the execution-time model ET(App) of MAHEVE section 3.1.
    Nodes are numbered globally, as platform_node_index does.
    =========================================================================
*/
#ifndef JACE_GRID_H_INCLUDED
#define JACE_GRID_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    GRID_FREE,                  //  Available
    GRID_USED,                  //  Runs a task
    GRID_RESERVED,              //  Kept as a spare by the mapper
    GRID_DEAD                   //  Failed; never used again
} grid_state_t;

typedef struct _grid_t grid_t;

//  Create the state of every node of platform (borrowed), all free
grid_t *
    grid_new (platform_t *platform);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    grid_destroy (grid_t **self_p);

//  The platform (borrowed)
platform_t *
    grid_platform (grid_t *self);

//  Number of nodes
size_t
    grid_node_count (grid_t *self);

//  Cluster of a node
size_t
    grid_node_cluster (grid_t *self, size_t node);

//  Computing power of a node
double
    grid_node_power (grid_t *self, size_t node);

//  State of a node
grid_state_t
    grid_node_state (grid_t *self, size_t node);

//  Set the state of a node
void
    grid_set_state (grid_t *self, size_t node, grid_state_t state);

//  True if a task may be placed on the node (free or reserved)
bool
    grid_node_is_available (grid_t *self, size_t node);

//  Number of available (free or reserved) nodes in a cluster
size_t
    grid_cluster_available (grid_t *self, size_t cluster);

//  Most powerful available node of a cluster (lowest index on ties), or
//  SIZE_MAX if none
size_t
    grid_best_node (grid_t *self, size_t cluster);

//  Heterogeneity degree: sigma / average of the powers of the nodes that
//  are not dead, clamped to [0, 1]
double
    grid_heterogeneity (grid_t *self);

//  Latency in seconds between the clusters of two nodes
double
    grid_latency (grid_t *self, size_t first, size_t second);

//  ET(V_i) = e_i / wn_i + sum_j c_ij * wl_ij for task under placement
//  (task -> node)
double
    grid_task_time (grid_t *self, tig_t *tig, const size_t *placement,
                    size_t task);

//  ET(App) = max_i ET(V_i)
double
    grid_execution_time (grid_t *self, tig_t *tig, const size_t *placement);

#endif
