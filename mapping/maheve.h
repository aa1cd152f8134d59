/*  =========================================================================
    maheve - MAHEVE mapping (Couturier, Laiymani & Miquee, HeteroPar 2010)
    and the common interface of the mappers

    MAHEVE sorts the clusters by the mark M_i = NC_Pf_i^hd + NC_F_i^(1-hd)
    (equation 1), sorts the tasks by Q_i = e_i^hd * d_i^(1-hd) (equation
    2) pulling Nb_i = d_i^(1-hd) dependencies along each, maps the list on
    the sorted clusters' most powerful nodes while reserving spares in
    every cluster, and replaces a failed node by a spare of the same
    cluster, else by a node of the best cluster re-sorted on the current
    platform.

    Choices the paper leaves open (see docs/PLANNING.md):
    - normN divides by the total number of free nodes (the paper prints
      the sum of average powers, which does not give "the rate of
      computing nodes");
    - a cluster of f >= 2 free nodes reserves max(1, floor(rho f)) spares,
      rho = MAHEVE_SPARE_RATIO; spares are released, largest reserve
      first, when the tasks would not fit;
    - at most one spare per task is kept: a cluster keeps as many of its
      reserve as it takes tasks, the rest of that budget goes to the
      clusters that take none, in their order; taken literally on a
      large grid, a 4-task job leased 60 idle spares of 600 daemons;
    - nodes are used most powerful first, so spares are the weakest;
    - Nb_i is rounded to the nearest integer, dependencies pulled in
      decreasing Q order; ties everywhere go to the lower index.

    Every mapper (MAHEVE, the default policy, FT-AIAC-QM, FT-F-EC) is
    reached by name through mapper_map and mapper_replace.
    =========================================================================
*/
#ifndef JACE_MAHEVE_H_INCLUDED
#define JACE_MAHEVE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Share of each cluster's free nodes kept as spares
#define MAHEVE_SPARE_RATIO 0.1

//  Mark of a cluster (equation 1) for heterogeneity degree hd, over the
//  nodes that are free or reserved
double
    maheve_cluster_mark (grid_t *grid, size_t cluster, double hd);

//  Clusters by decreasing mark; writes cluster_count indices
void
    maheve_sort_clusters (grid_t *grid, double hd, size_t *order);

//  Evaluation Q_i of a task (equation 2)
double
    maheve_task_value (tig_t *tig, size_t task, double hd);

//  The final task list: tasks by decreasing Q, each followed by Nb_i of
//  its dependencies not yet listed; writes tig_count indices
void
    maheve_sort_tasks (tig_t *tig, double hd, size_t *order);

//  Spares kept in each cluster when mapping tasks tasks; writes
//  cluster_count counts.  Returns -1 if the tasks do not fit.
int
    maheve_reserve (grid_t *grid, size_t tasks, size_t *reserved);

//  Initial mapping: writes placement[task] = node, marks the nodes used
//  and the spares reserved.  Returns 0, or -1 if there are not enough
//  available nodes (nothing changed then).
int
    maheve_map (grid_t *grid, tig_t *tig, size_t *placement);

//  Replace the node of task (marked dead): a reserved node of its
//  cluster, else a free one, else one of the best re-sorted cluster.
//  Returns 0 or -1.
int
    maheve_replace (grid_t *grid, tig_t *tig, size_t *placement,
                    size_t task);

//  MAHEVE with locality (the paper's conclusion): the first cluster is
//  the best mark M; each next one the remaining cluster j with the best
//  M_j / (1 + rho_j), rho_j = (wl + 64 c_mean / bw over the link from the
//  closest chosen cluster to j) / (e_mean / mean power of j): the time to
//  move the TIG's mean edge over that link in units of a mean task's
//  computation there.  Writes cluster_count indices.
void
    maheve_locality_sort_clusters (grid_t *grid, tig_t *tig, double hd,
                                   size_t *order);

//  MAHEVE on the locality order; same spares and contract as maheve_map
int
    maheve_locality_map (grid_t *grid, tig_t *tig, size_t *placement);

//  A node of the failed node's cluster, else the best of the clusters
//  re-sorted with the locality marks on the grid as it is now, the
//  clusters that hold the job's other tasks counting as already chosen
//  (rho_j from the closest of them; a cluster's own link for itself)
int
    maheve_locality_replace (grid_t *grid, tig_t *tig, size_t *placement,
                             size_t task);

//  The default policy of JaceP2P-V2: tasks in order on the free nodes in
//  the order the daemons are handed out (grid_set_order; node index
//  order by default), blind to cluster and power.  Same contract as
//  maheve_map.
int
    mapper_default_map (grid_t *grid, tig_t *tig, size_t *placement);

//  Default replacement: the first available node in hand-out order
int
    mapper_default_replace (grid_t *grid, tig_t *tig, size_t *placement,
                            size_t task);

//  Names of the mappers, NULL-terminated: "default", "aiac-qm", "f-ec",
//  "maheve", "maheve-locality"
const char **
    mapper_names (void);

//  True if name is a mapper
bool
    mapper_exists (const char *name);

//  Map with the named mapper; -1 if unknown or no room
int
    mapper_map (const char *name, grid_t *grid, tig_t *tig,
                size_t *placement);

//  Replace a failed task's node with the named mapper's policy
int
    mapper_replace (const char *name, grid_t *grid, tig_t *tig,
                    size_t *placement, size_t task);

#endif
