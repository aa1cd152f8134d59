/*  =========================================================================
    fec - FT-F-EC, the communication-driven baseline mapper
    =========================================================================
*/
#include "mapping.h"

//  Tasks each cluster takes: proportional to its power, largest
//  remainders first, capped by its free nodes
static void
s_shares (grid_t *grid, size_t tasks, const double *power, size_t *share)
{
    size_t clusters = platform_cluster_count (grid_platform (grid));
    double total = 0;
    for (size_t cluster = 0; cluster < clusters; cluster++)
        total += power [cluster];
    size_t given = 0;
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        double exact = total > 0 ? tasks * power [cluster] / total : 0;
        share [cluster] = (size_t) floor (exact);
        size_t room = grid_cluster_available (grid, cluster);
        if (share [cluster] > room)
            share [cluster] = room;
        given += share [cluster];
    }
    while (given < tasks) {
        //  The cluster with room whose exact share lost the most
        size_t best = SIZE_MAX;
        double best_loss = -INFINITY;
        for (size_t cluster = 0; cluster < clusters; cluster++) {
            if (share [cluster] >= grid_cluster_available (grid, cluster))
                continue;
            double loss = tasks * power [cluster] / total - share [cluster];
            if (loss > best_loss) {
                best_loss = loss;
                best = cluster;
            }
        }
        assert (best != SIZE_MAX);
        share [best]++;
        given++;
    }
}

//  Farhat's greedy growth of one part of size tasks; part[t] set to mark
static void
s_grow_part (tig_t *tig, size_t *part, size_t mark, size_t size,
             size_t *links)
{
    size_t count = tig_count (tig);
    size_t grown = 0;
    for (size_t task = 0; task < count; task++)
        links [task] = 0;
    while (grown < size) {
        //  Most edges into the part; else a seed with fewest free
        //  neighbours, preferring tasks next to parts already built
        size_t chosen = SIZE_MAX;
        for (size_t task = 0; task < count; task++) {
            if (part [task] != SIZE_MAX)
                continue;
            if (chosen == SIZE_MAX || links [task] > links [chosen])
                chosen = task;
        }
        if (links [chosen] == 0) {
            size_t best_free = SIZE_MAX;
            bool best_border = false;
            for (size_t task = 0; task < count; task++) {
                if (part [task] != SIZE_MAX)
                    continue;
                size_t free_neighbours = 0;
                bool border = false;
                for (size_t index = 0; index < tig_degree (tig, task);
                     index++) {
                    size_t other = tig_neighbour (tig, task, index);
                    free_neighbours += part [other] == SIZE_MAX;
                    border = border || part [other] != SIZE_MAX;
                }
                if ((border && !best_border)
                ||  (border == best_border && free_neighbours < best_free)) {
                    best_free = free_neighbours;
                    best_border = border;
                    chosen = task;
                }
            }
        }
        part [chosen] = mark;
        grown++;
        for (size_t index = 0; index < tig_degree (tig, chosen); index++)
            links [tig_neighbour (tig, chosen, index)]++;
    }
}

int
fec_map (grid_t *grid, tig_t *tig, size_t *placement)
{
    assert (grid && tig && placement);
    size_t tasks = tig_count (tig), nodes = grid_node_count (grid);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    size_t free_nodes = 0;
    for (size_t node = 0; node < nodes; node++)
        free_nodes += grid_node_state (grid, node) == GRID_FREE;
    if (free_nodes < tasks)
        return -1;
    double *power = (double *) calloc (clusters, sizeof (double));
    size_t *share = (size_t *) malloc (clusters * sizeof (size_t));
    size_t *order = (size_t *) malloc (clusters * sizeof (size_t));
    size_t *part = (size_t *) malloc ((tasks + 1) * sizeof (size_t));
    size_t *links = (size_t *) malloc ((tasks + 1) * sizeof (size_t));
    assert (power && share && order && part && links);
    for (size_t node = 0; node < nodes; node++)
        if (grid_node_state (grid, node) == GRID_FREE)
            power [grid_node_cluster (grid, node)] += grid_node_power (grid,
                                                                      node);
    s_shares (grid, tasks, power, share);
    //  Clusters by decreasing power (selection: clusters are few)
    bool *taken = (bool *) calloc (clusters, sizeof (bool));
    assert (taken);
    for (size_t rank = 0; rank < clusters; rank++) {
        size_t best = SIZE_MAX;
        for (size_t cluster = 0; cluster < clusters; cluster++)
            if (!taken [cluster]
            &&  (best == SIZE_MAX || power [cluster] > power [best]))
                best = cluster;
        taken [best] = true;
        order [rank] = best;
    }
    free (taken);
    for (size_t task = 0; task < tasks; task++)
        part [task] = SIZE_MAX;
    for (size_t rank = 0; rank < clusters; rank++)
        s_grow_part (tig, part, order [rank], share [order [rank]], links);
    //  Inside each cluster: heaviest task on the most powerful node
    for (size_t cluster = 0; cluster < clusters; cluster++)
        while (true) {
            size_t heaviest = SIZE_MAX;
            for (size_t task = 0; task < tasks; task++)
                if (part [task] == cluster
                &&  (heaviest == SIZE_MAX
                     || tig_cost (tig, task) > tig_cost (tig, heaviest)))
                    heaviest = task;
            if (heaviest == SIZE_MAX)
                break;
            size_t node = grid_best_node (grid, cluster);
            assert (node != SIZE_MAX);
            placement [heaviest] = node;
            grid_set_state (grid, node, GRID_USED);
            part [heaviest] = SIZE_MAX - 1;
        }
    free (power);
    free (share);
    free (order);
    free (part);
    free (links);
    return 0;
}

int
fec_replace (grid_t *grid, tig_t *tig, size_t *placement, size_t task)
{
    assert (grid && tig && placement);
    size_t failed = placement [task];
    grid_set_state (grid, failed, GRID_DEAD);
    size_t node = grid_best_node (grid, grid_node_cluster (grid, failed));
    if (node == SIZE_MAX) {
        //  The cluster holding most of the task's neighbours
        size_t clusters = platform_cluster_count (grid_platform (grid));
        size_t *neighbours = (size_t *) calloc (clusters, sizeof (size_t));
        assert (neighbours);
        for (size_t index = 0; index < tig_degree (tig, task); index++)
            neighbours [grid_node_cluster (grid,
                placement [tig_neighbour (tig, task, index)])]++;
        size_t best = SIZE_MAX;
        for (size_t cluster = 0; cluster < clusters; cluster++) {
            size_t candidate = grid_best_node (grid, cluster);
            if (candidate != SIZE_MAX
            &&  (best == SIZE_MAX
                 || neighbours [cluster]
                    > neighbours [grid_node_cluster (grid, best)]))
                best = candidate;
        }
        free (neighbours);
        node = best;
    }
    if (node == SIZE_MAX)
        return -1;
    grid_set_state (grid, node, GRID_USED);
    placement [task] = node;
    return 0;
}
