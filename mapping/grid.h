/*  =========================================================================
    grid - the live state of a platform's nodes for the mappers

    Wraps a platform (borrowed) with the state of each node: free, used by
    a task, reserved as a spare, or dead, and the order in which the
    daemons are handed out (the default policy's order).  Computes the
    heterogeneity degree hd and the execution-time model ET(App) of MAHEVE
    section 3.1 in seconds: task costs in flops, powers in GFLOP/s,
    latencies in seconds, bandwidths in bit/s, needs in doubles (64 bits).
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

//  flop/s of one GFLOP/s (platform powers are GFLOP/s)
#define GRID_FLOPS_PER_GFLOPS 1e9

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

//  Seconds to receive `values` doubles from cluster `from` in cluster
//  `to`: wl + 64 values / bw
double
    grid_cluster_link_time (grid_t *self, size_t from, size_t to,
                            double values);

//  The same between the clusters of two nodes
double
    grid_link_time (grid_t *self, size_t first, size_t second,
                    double values);

//  Set the hand-out order: order [rank] is the node handed out rank-th,
//  a permutation of 0 .. node count - 1 (copied).  Returns 0, or -1 if it
//  is not a permutation (the order is unchanged).  Default: index order.
int
    grid_set_order (grid_t *self, const size_t *order);

//  The node handed out rank-th
size_t
    grid_order_node (grid_t *self, size_t rank);

//  ET(V_i) = e_i / wn_i + sum_j (wl_ij + 64 c_ij / bw_ij) in seconds for
//  task under placement (task -> node): e_i in flops, wn_i = power x 1e9
//  flop/s, wl_ij in s, bw_ij in bit/s, c_ij in doubles
double
    grid_task_time (grid_t *self, tig_t *tig, const size_t *placement,
                    size_t task);

//  ET(App) = max_i ET(V_i), seconds per iteration
double
    grid_execution_time (grid_t *self, tig_t *tig, const size_t *placement);

#endif
