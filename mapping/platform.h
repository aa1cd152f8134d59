/*  =========================================================================
    platform - the description of a (virtual) grid: clusters of nodes with
    their speeds and powers, and the links between clusters

    Read from a ZPL platform file (the format the local virtual-grid
    launcher uses, see docs/PLANNING.md):

        platform
            name = "two-clusters"
            backbone                    #  default link between clusters
                latency_us = 5000
                bandwidth_mbps = 100
                shared = 1              #  optional: one resource for all
                transfers = 2           #  optional: at most 2 at once
            cluster
                name = "A"
                nodes = 4
                speed = 1.0             #  0 < speed <= 1 (default 1)
                speeds = "1 1 0.5 0.5"  #  optional, one per node
                power = 1.0             #  power of a speed-1 node (default 1)
                latency_us = 50         #  intra-cluster (default 50)
                bandwidth_mbps = 10000  #  intra-cluster (default 1000)
                supernodes = 1          #  default 1
                uplink_mbps = 1000      #  optional shared uplink
            link                        #  optional, overrides the backbone
                between = "A B"
                latency_us = 2000
                bandwidth_mbps = 1000
                transfers = 2           #  optional: at most 2 at once

    The backbone defaults to 5000 us and 100 Mb/s.  A platform is read-only
    once loaded; the free/used state of nodes lives in grid_t.

    Shared links (how a local virtual grid emulates contention, see
    shared_links.h): by default every flow between two tasks has its link
    to itself, as in older files.  `uplink_mbps` makes a cluster's uplink
    a resource all its inter-cluster traffic shares, each way (default:
    none).  `shared = 1` makes the backbone one resource every transfer
    between clusters without a `link` of their own shares, at most
    bandwidth_mbps in all, and each `link` one resource for its pair.
    `transfers = k` (implies shared = 1) makes the backbone a KPBS one: at
    most k transfers at once, each at bandwidth_mbps (so k x bandwidth_mbps
    in all); a transfer beyond k waits.  In a `link`, `transfers = k`
    (which needs shared = 1 in backbone) makes that pair's link a KPBS
    one alike.  Unknown keys are errors.
    =========================================================================
*/
#ifndef JACE_PLATFORM_H_INCLUDED
#define JACE_PLATFORM_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Opaque description of clusters, nodes and links
typedef struct _platform_t platform_t;

//  Load a platform file.  Returns NULL on failure, and writes
//  "PATH:LINE: reason" (or "PATH: reason") into error when not NULL.
platform_t *
    platform_load (const char *path, char *error, size_t error_size);

//  Parse a platform from a string.  Returns NULL on failure, with
//  "line N: reason" (or a reason without a line) in error.
platform_t *
    platform_parse (const char *text, char *error, size_t error_size);

//  A copy of the platform in which every node is `slots` nodes of the
//  same cluster, speed and power, adjacent in the node order: node j of a
//  cluster becomes nodes j slots .. j slots + slots - 1.  It models
//  `slots` daemons per machine (one per core, say) for the mappers, which
//  place one task per node.  The caller destroys the copy.
platform_t *
    platform_with_slots (platform_t *self, size_t slots);

//  A platform from a live description, as a registry lists daemons:
//  cluster_count clusters named names [c] with nodes [c] nodes each;
//  power [i] the measured power of node i in global order (clusters in
//  order, then their nodes); latency_us and bandwidth_mbps the
//  cluster_count x cluster_count links (row = from).  Each cluster's power
//  is its fastest node's and each node's speed its power over that, so
//  platform_node_power gives back power [i].  Returns NULL on bad input
//  (no cluster, an empty or repeated name, an empty cluster, a power not
//  finite and positive, a negative latency, a bandwidth not positive),
//  with the reason in error.
platform_t *
    platform_new_live (const char *name, size_t cluster_count,
                       const char *const *names, const size_t *nodes,
                       const double *power, const double *latency_us,
                       const double *bandwidth_mbps, char *error,
                       size_t error_size);

//  Destroy a platform; nullifies the reference.  Safe on NULL.
void
    platform_destroy (platform_t **self_p);

//  Name of the platform
const char *
    platform_name (platform_t *self);

//  Number of clusters (at least 1)
size_t
    platform_cluster_count (platform_t *self);

//  Name of a cluster
const char *
    platform_cluster_name (platform_t *self, size_t cluster);

//  Index of the cluster with this name, or -1 when there is none
int
    platform_cluster_index (platform_t *self, const char *name);

//  Number of nodes in a cluster (at least 1)
size_t
    platform_cluster_nodes (platform_t *self, size_t cluster);

//  Number of super-nodes the launcher starts in a cluster
size_t
    platform_cluster_supernodes (platform_t *self, size_t cluster);

//  Speed factor of a node, in (0, 1]
double
    platform_node_speed (platform_t *self, size_t cluster, size_t node);

//  Computing power of a node: the cluster's power times the node's speed
double
    platform_node_power (platform_t *self, size_t cluster, size_t node);

//  Latency between two clusters in microseconds (intra when equal)
double
    platform_latency_us (platform_t *self, size_t from_cluster,
                         size_t to_cluster);

//  Bandwidth between two clusters in Mb/s (intra when equal)
double
    platform_bandwidth_mbps (platform_t *self, size_t from_cluster,
                             size_t to_cluster);

//  Bandwidth of a cluster's shared uplink in Mb/s, or 0 when it has none
double
    platform_uplink_mbps (platform_t *self, size_t cluster);

//  True if inter-cluster links are shared resources (backbone shared = 1)
bool
    platform_backbone_is_shared (platform_t *self);

//  Most transfers the backbone carries at once (KPBS k), or 0: any number
size_t
    platform_backbone_transfers (platform_t *self);

//  True if a `link` item joins the two clusters (they bypass the backbone)
bool
    platform_has_own_link (platform_t *self, size_t first, size_t second);

//  Most transfers the two clusters' `link` carries at once (its KPBS k),
//  or 0: any number, or no link of their own
size_t
    platform_link_transfers (platform_t *self, size_t first, size_t second);

//  Transfers the link from -> to carries at full speed at once, as the
//  overlay measured them (several bulk probes sent together; a live
//  model's), or 0: not measured
void
    platform_set_measured_transfers (platform_t *self, size_t from,
                                     size_t to, size_t transfers);
size_t
    platform_measured_transfers (platform_t *self, size_t from, size_t to);

//  Total number of nodes over all clusters
size_t
    platform_node_count (platform_t *self);

//  Global index (clusters in file order, nodes in order) of a node
size_t
    platform_node_index (platform_t *self, size_t cluster, size_t node);

//  Cluster of the node with this global index
size_t
    platform_node_cluster (platform_t *self, size_t index);

#endif
