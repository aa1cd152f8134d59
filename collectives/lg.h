/*  =========================================================================
    lg - plans of the LG (Local Group) total exchange and of the direct
    all-to-all

    LG (Jeannot & Steffenel, Euro-Par 2007) does a total exchange between
    two clusters with a local phase that packs every inter-cluster message
    onto the right node, then ceil(n2/n1) inter-cluster steps in which
    node i of the small cluster swaps one buffer with node i + n1*s of the
    big one: 2*max(n1,n2) backbone messages instead of 2*n1*n2.

    Beyond the paper: any number of clusters (cluster pairs run in the
    rounds of a round-robin tournament, disjoint pairs at the same time),
    a last group of the big cluster smaller than n1 (its messages to the
    nodes it has no partner for cross to a partner and are relayed in one
    final local step), and unequal message sizes (alltoallv: empty
    messages are not sent, every transfer carries its byte count).

    Nodes are numbered 0..N-1, clusters in order.  Message M(i,j) has id
    i*N + j.  Step 0 is the local phase; steps 1..S are inter-cluster;
    a last local relay step follows when needed.
    =========================================================================
*/
#ifndef JACE_LG_H_INCLUDED
#define JACE_LG_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  One buffer sent from one node to another during one step
typedef struct {
    size_t step;                //  Step the transfer takes place in
    size_t from;                //  Sending node
    size_t to;                  //  Receiving node
    bool inter;                 //  True when it crosses two clusters
    size_t first;               //  First of its message ids in the plan
    size_t count;               //  Number of messages packed in it
    double bytes;               //  Sum of the sizes of those messages
} lg_transfer_t;

//  One hop of one message's route
typedef struct {
    size_t step;                //  Step of the hop
    size_t from;                //  Node the message leaves
    size_t to;                  //  Node the message reaches
} lg_hop_t;

//  Most hops a route can have: stage, cross, relay
#define LG_MAX_HOPS 3

//  A plan: transfers sorted by step, sender, receiver
typedef struct _lg_plan_t lg_plan_t;

//  Plan LG for clusters of cluster_nodes[c] nodes (every count >= 1).
//  sizes is NULL (all messages of size 1) or an N x N row-major matrix of
//  non-negative message sizes; zero-size messages are not sent.
lg_plan_t *
    lg_plan (const size_t *cluster_nodes, size_t cluster_count,
             const double *sizes);

//  Plan the direct algorithm: in step s (1..N-1) node i sends M(i, i+s
//  mod N) straight to its destination.  Same arguments as lg_plan.
lg_plan_t *
    lg_plan_direct (const size_t *cluster_nodes, size_t cluster_count,
                    const double *sizes);

//  Destroy a plan; nullifies the reference.  Safe on NULL.
void
    lg_plan_destroy (lg_plan_t **self_p);

//  Number of nodes N
size_t
    lg_plan_node_count (lg_plan_t *self);

//  Cluster of a node
size_t
    lg_plan_node_cluster (lg_plan_t *self, size_t node);

//  Number of steps, local phase and relay step included
size_t
    lg_plan_step_count (lg_plan_t *self);

//  Number of transfers
size_t
    lg_plan_transfer_count (lg_plan_t *self);

//  Transfer by index (borrowed)
const lg_transfer_t *
    lg_plan_transfer (lg_plan_t *self, size_t index);

//  Message id of the index-th message packed in a transfer
size_t
    lg_plan_transfer_message (lg_plan_t *self, size_t transfer,
                              size_t index);

//  Number of transfers that cross the backbone
size_t
    lg_plan_backbone_messages (lg_plan_t *self);

//  Route of M(source, destination): copies up to max hops into hops and
//  returns the route's length (0 for a message that is not sent).
size_t
    lg_plan_route (lg_plan_t *self, size_t source, size_t destination,
                   lg_hop_t *hops, size_t max);

//  Predicted time of the plan when a transfer costs latency + bytes /
//  bandwidth (inter or intra figures), steps run one after the other and
//  each lasts as long as its longest transfer.
double
    lg_plan_time (lg_plan_t *self, double intra_latency,
                  double intra_bandwidth, double inter_latency,
                  double inter_bandwidth);

#endif
