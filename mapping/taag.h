/*  =========================================================================
    taag - topology-aware scheduling of process groups (TAAG)

    Bosa, Schreiner & Priewasser, "Report on the First Feature-Complete
    Prototype of a Distributed Supercomputing API for the Grid" (Austrian
    Grid, 2010), section 3.  Links between hosts get latency levels by
    order of magnitude (1 for the fastest class); hosts are gathered into
    latency clusters (each host alone is a level-0 cluster) whose capacity
    is their CPUs times a coefficient; a schema (Groups, Graph, Tree or
    Ring) gives the process partitions to try, pruned as the report says;
    each partition is mapped group by group, largest first, onto the
    first cluster of lowest level with room, and the mapping of least cost
    (max level inside groups, then max and average latency between linked
    groups) wins.  The result is written as a ZPL mapping file that every
    process can query: its group, its local manager, its neighbours.

    Schemas, as text: GROUPS{N, MIN, MINGROUPS} (N processes in at least
    MINGROUPS groups of at least MIN; GROUPS(N, MIN) means MINGROUPS 1),
    RING{N, MIN, MINGROUPS} (groups linked in a ring), TREE{N, MIN,
    MINGROUPS} (a global manager, and per group a local manager placed
    with its N-share of leaves), GRAPH{G, 0, [S1, ..., SG], [A-B, ...]}
    (fixed groups and links).
    =========================================================================
*/
#ifndef JACE_TAAG_H_INCLUDED
#define JACE_TAAG_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Hosts with CPUs and the latency of every pair, in milliseconds
typedef struct _taag_topology_t taag_topology_t;

//  A latency cluster: hosts whose links are all within a level
typedef struct {
    size_t level;               //  Highest latency level inside
    size_t capacity;            //  CPUs times the coefficient
    size_t count;               //  Number of hosts
    size_t *hosts;              //  Host indices, ascending
} taag_cluster_t;

//  Process partitions of a schema, kept after pruning
typedef struct _taag_partitions_t taag_partitions_t;

//  A parsed schema
typedef struct _taag_schema_t taag_schema_t;

//  A mapping of processes to hosts, groups and roles
typedef struct _taag_mapping_t taag_mapping_t;

//  Roles of processes
typedef enum {
    TAAG_WORKER,                //  Member of a group
    TAAG_LOCAL_MANAGER,         //  First process of a group
    TAAG_GLOBAL_MANAGER         //  Root of a Tree schema
} taag_role_t;

//  Topology of hosts named H1..Hn, 1 CPU each, all latencies 0
taag_topology_t *
    taag_topology_new (size_t hosts);

//  Topology of a platform: each node a host of 1 CPU, latencies of the
//  clusters' links (same node 0)
taag_topology_t *
    taag_topology_new_from_platform (platform_t *platform);

//  Virtual topology for tests and benchmarks: hosts in sites of 8-20,
//  sites in regions; 1, 2 or 4 CPUs; sub-ms latencies in a site, ms in a
//  region, tens of ms between regions.  Same seed, same topology.
taag_topology_t *
    taag_topology_new_virtual (size_t hosts, unsigned seed);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    taag_topology_destroy (taag_topology_t **self_p);

//  Set the CPUs of a host
void
    taag_topology_set_cpus (taag_topology_t *self, size_t host,
                            size_t cpus);

//  Set the latency between two hosts, both ways (ms, >= 0)
void
    taag_topology_set_latency (taag_topology_t *self, size_t first,
                               size_t second, double latency_ms);

//  Number of hosts
size_t
    taag_topology_host_count (taag_topology_t *self);

//  Name of a host
const char *
    taag_topology_host_name (taag_topology_t *self, size_t host);

//  Latency level of a link: 0 for a host with itself, then 1, 2, ... by
//  order of magnitude of the latency, fastest first
size_t
    taag_latency_level (taag_topology_t *self, size_t first, size_t second);

//  Latency clusters sorted by level, then capacity descending.  Returns
//  a fresh array of *count clusters; free with taag_clusters_destroy.
taag_cluster_t *
    taag_latency_clusters (taag_topology_t *self, size_t coefficient,
                           size_t *count);

//  Free clusters returned by taag_latency_clusters
void
    taag_clusters_destroy (taag_cluster_t **clusters_p, size_t count);

//  Parse a schema.  Returns NULL with the reason in error.
taag_schema_t *
    taag_schema_parse (const char *text, char *error, size_t error_size);

//  Destroy a schema; nullifies the reference.  Safe on NULL.
void
    taag_schema_destroy (taag_schema_t **self_p);

//  Every partition of the schema (groups by decreasing size); when
//  clusters is not NULL, pruned as in the report against them
taag_partitions_t *
    taag_partitions (taag_schema_t *schema, const taag_cluster_t *clusters,
                     size_t cluster_count);

//  Destroy partitions; nullifies the reference.  Safe on NULL.
void
    taag_partitions_destroy (taag_partitions_t **self_p);

//  Number of partitions
size_t
    taag_partitions_count (taag_partitions_t *self);

//  Number of groups of a partition
size_t
    taag_partitions_groups (taag_partitions_t *self, size_t partition);

//  Size of one group of a partition
size_t
    taag_partitions_size (taag_partitions_t *self, size_t partition,
                          size_t group);

//  Best mapping of the schema on the topology, or NULL if the processes
//  do not fit (error says why)
taag_mapping_t *
    taag_map (taag_topology_t *topology, taag_schema_t *schema,
              size_t coefficient, char *error, size_t error_size);

//  Destroy a mapping; nullifies the reference.  Safe on NULL.
void
    taag_mapping_destroy (taag_mapping_t **self_p);

//  Cost of the mapping: max level inside groups, max and average latency
//  between linked groups (ms)
void
    taag_mapping_cost (taag_mapping_t *self, size_t *level, double *max_ms,
                       double *average_ms);

//  Number of processes
size_t
    taag_mapping_process_count (taag_mapping_t *self);

//  Number of groups
size_t
    taag_mapping_group_count (taag_mapping_t *self);

//  Group of a process (SIZE_MAX for a global manager)
size_t
    taag_mapping_group (taag_mapping_t *self, size_t rank);

//  Role of a process
taag_role_t
    taag_mapping_role (taag_mapping_t *self, size_t rank);

//  Host name of a process
const char *
    taag_mapping_host (taag_mapping_t *self, size_t rank);

//  Local manager of a process's group (the global manager for itself)
size_t
    taag_mapping_local_manager (taag_mapping_t *self, size_t rank);

//  Neighbours of a process: its group's other members; for managers also
//  the managers of the groups linked to theirs.  Copies up to max ranks
//  and returns how many there are.
size_t
    taag_mapping_neighbours (taag_mapping_t *self, size_t rank,
                             size_t *neighbours, size_t max);

//  Write the mapping file (ZPL).  Returns 0 or -1.
int
    taag_mapping_save (taag_mapping_t *self, const char *path);

//  Read a mapping file.  Returns NULL with "PATH:LINE: reason" in error.
taag_mapping_t *
    taag_mapping_load (const char *path, char *error, size_t error_size);

#endif
