/*  =========================================================================
    aiac_qm - FT-AIAC-QM, the computation-driven baseline mapper

    Since the communication term of ET only depends on clusters, the best
    node for a task in a cluster is that cluster's most powerful candidate;
    each placement therefore weighs one node per cluster.
    =========================================================================
*/
#include "mapping.h"

//  ET of task on node, counting only the neighbours already placed
//  (placement SIZE_MAX for the others)
static double
s_partial_time (grid_t *grid, tig_t *tig, const size_t *placement,
                size_t task, size_t node)
{
    double time = tig_cost (tig, task)
                / (GRID_FLOPS_PER_GFLOPS * grid_node_power (grid, node));
    for (size_t index = 0; index < tig_degree (tig, task); index++) {
        size_t other = placement [tig_neighbour (tig, task, index)];
        if (other != SIZE_MAX)
            time += grid_link_time (grid, node, other,
                                    tig_edge_amount (tig, task, index));
    }
    return time;
}

//  Most powerful candidate node of each cluster, SIZE_MAX if none
static void
s_best_candidates (grid_t *grid, const bool *candidate, size_t *best)
{
    size_t clusters = platform_cluster_count (grid_platform (grid));
    for (size_t cluster = 0; cluster < clusters; cluster++)
        best [cluster] = SIZE_MAX;
    for (size_t node = 0; node < grid_node_count (grid); node++) {
        if (!candidate [node])
            continue;
        size_t *slot = &best [grid_node_cluster (grid, node)];
        if (*slot == SIZE_MAX
        ||  grid_node_power (grid, node) > grid_node_power (grid, *slot))
            *slot = node;
    }
}

//  Node among the candidates that minimises the task's partial ET
static size_t
s_choose (grid_t *grid, tig_t *tig, const size_t *placement,
          const bool *candidate, size_t task, size_t *best)
{
    s_best_candidates (grid, candidate, best);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    size_t chosen = SIZE_MAX;
    double chosen_time = INFINITY;
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        size_t node = best [cluster];
        if (node == SIZE_MAX)
            continue;
        double time = s_partial_time (grid, tig, placement, task, node);
        if (time < chosen_time) {
            chosen_time = time;
            chosen = node;
        }
    }
    return chosen;
}

//  Tasks in BFS order from the heaviest, every component covered
static void
s_bfs_order (tig_t *tig, size_t *order)
{
    size_t count = tig_count (tig);
    bool *seen = (bool *) calloc (count + 1, sizeof (bool));
    assert (seen);
    size_t head = 0, tail = 0;
    while (tail < count) {
        size_t heaviest = SIZE_MAX;
        for (size_t task = 0; task < count; task++)
            if (!seen [task] && (heaviest == SIZE_MAX
                                 || tig_cost (tig, task)
                                    > tig_cost (tig, heaviest)))
                heaviest = task;
        seen [heaviest] = true;
        order [tail++] = heaviest;
        while (head < tail) {
            size_t task = order [head++];
            for (size_t index = 0; index < tig_degree (tig, task); index++) {
                size_t other = tig_neighbour (tig, task, index);
                if (!seen [other]) {
                    seen [other] = true;
                    order [tail++] = other;
                }
            }
        }
    }
    free (seen);
}

//  One improvement round: move the slowest task to a spare or swap it
//  with another task if that lowers ET(App).  Returns true if it did.
static bool
s_improve (grid_t *grid, tig_t *tig, size_t *placement, bool *candidate,
           size_t *best)
{
    size_t tasks = tig_count (tig);
    size_t slowest = 0;
    double current = -1;
    for (size_t task = 0; task < tasks; task++) {
        double time = grid_task_time (grid, tig, placement, task);
        if (time > current) {
            current = time;
            slowest = task;
        }
    }
    size_t from = placement [slowest];
    size_t best_node = SIZE_MAX, best_swap = SIZE_MAX;
    double best_time = current;
    s_best_candidates (grid, candidate, best);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        if (best [cluster] == SIZE_MAX)
            continue;
        placement [slowest] = best [cluster];
        double time = grid_execution_time (grid, tig, placement);
        if (time < best_time) {
            best_time = time;
            best_node = best [cluster];
        }
    }
    placement [slowest] = from;
    //  Swaps cost a full ET each: only for graphs of moderate size
    for (size_t other = 0; other < tasks && tasks <= 512; other++) {
        if (other == slowest)
            continue;
        placement [slowest] = placement [other];
        placement [other] = from;
        double time = grid_execution_time (grid, tig, placement);
        placement [other] = placement [slowest];
        placement [slowest] = from;
        if (time < best_time) {
            best_time = time;
            best_swap = other;
            best_node = SIZE_MAX;
        }
    }
    if (best_swap != SIZE_MAX) {
        placement [slowest] = placement [best_swap];
        placement [best_swap] = from;
        return true;
    }
    if (best_node == SIZE_MAX)
        return false;
    candidate [best_node] = false;
    candidate [from] = true;
    placement [slowest] = best_node;
    return true;
}

int
aiac_qm_map (grid_t *grid, tig_t *tig, size_t *placement)
{
    assert (grid && tig && placement);
    size_t tasks = tig_count (tig), nodes = grid_node_count (grid);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    size_t free_nodes = 0;
    for (size_t node = 0; node < nodes; node++)
        free_nodes += grid_node_state (grid, node) == GRID_FREE;
    if (free_nodes < tasks)
        return -1;
    //  Candidates: the free nodes; the |T| most powerful are taken first
    //  because each task picks the best node of each cluster
    bool *candidate = (bool *) calloc (nodes, sizeof (bool));
    size_t *order = (size_t *) malloc ((tasks + 1) * sizeof (size_t));
    size_t *best = (size_t *) malloc (clusters * sizeof (size_t));
    assert (candidate && order && best);
    for (size_t node = 0; node < nodes; node++)
        candidate [node] = grid_node_state (grid, node) == GRID_FREE;
    for (size_t task = 0; task < tasks; task++)
        placement [task] = SIZE_MAX;
    s_bfs_order (tig, order);
    for (size_t rank = 0; rank < tasks; rank++) {
        size_t task = order [rank];
        size_t node = s_choose (grid, tig, placement, candidate, task, best);
        placement [task] = node;
        candidate [node] = false;
    }
    for (size_t round = 0; round < AIAC_QM_ITERATIONS; round++)
        if (!s_improve (grid, tig, placement, candidate, best))
            break;
    for (size_t task = 0; task < tasks; task++)
        grid_set_state (grid, placement [task], GRID_USED);
    free (candidate);
    free (order);
    free (best);
    return 0;
}

int
aiac_qm_replace (grid_t *grid, tig_t *tig, size_t *placement, size_t task)
{
    assert (grid && tig && placement);
    grid_set_state (grid, placement [task], GRID_DEAD);
    size_t nodes = grid_node_count (grid);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    bool *candidate = (bool *) calloc (nodes, sizeof (bool));
    size_t *best = (size_t *) malloc (clusters * sizeof (size_t));
    assert (candidate && best);
    for (size_t node = 0; node < nodes; node++)
        candidate [node] = grid_node_is_available (grid, node);
    size_t node = s_choose (grid, tig, placement, candidate, task, best);
    free (candidate);
    free (best);
    if (node == SIZE_MAX)
        return -1;
    grid_set_state (grid, node, GRID_USED);
    placement [task] = node;
    return 0;
}
