/*  =========================================================================
    maheve - MAHEVE mapping and the common interface of the mappers
    =========================================================================
*/
#include "mapping.h"

//  Free (or reserved) node count and average power of a cluster
static void
s_cluster_figures (grid_t *grid, size_t cluster, double *free_nodes,
                   double *average_power)
{
    double count = 0, power = 0;
    for (size_t node = 0; node < grid_node_count (grid); node++)
        if (grid_node_cluster (grid, node) == cluster
        &&  grid_node_is_available (grid, node)) {
            count++;
            power += grid_node_power (grid, node);
        }
    *free_nodes = count;
    *average_power = count > 0 ? power / count : 0;
}

//  --------------------------------------------------------------------------
//  Mark of a cluster, equation (1)

double
maheve_cluster_mark (grid_t *grid, size_t cluster, double hd)
{
    assert (grid);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    assert (cluster < clusters);
    double all_nodes = 0, all_powers = 0, nodes = 0, power = 0;
    for (size_t other = 0; other < clusters; other++) {
        double count, average;
        s_cluster_figures (grid, other, &count, &average);
        all_nodes += count;
        all_powers += average;
        if (other == cluster) {
            nodes = count;
            power = average;
        }
    }
    if (nodes == 0)
        return 0;               //  Nothing to offer
    double normalised_nodes = nodes * 100 / all_nodes;
    double normalised_power = power * 100 / all_powers;
    return pow (normalised_power, hd) + pow (normalised_nodes, 1 - hd);
}

//  Sort indices by decreasing key, lower index first on ties (stable
//  merge sort: tasks can be many)
static void
s_sort_by_key (size_t *order, size_t count, const double *key)
{
    if (count < 2)
        return;
    size_t half = count / 2;
    s_sort_by_key (order, half, key);
    s_sort_by_key (order + half, count - half, key);
    size_t *merged = (size_t *) malloc (count * sizeof (size_t));
    assert (merged);
    size_t left = 0, right = half, out = 0;
    while (left < half || right < count) {
        bool take_left = right == count
                      || (left < half
                          && (key [order [left]] > key [order [right]]
                              || (key [order [left]] == key [order [right]]
                                  && order [left] < order [right])));
        merged [out++] = take_left ? order [left++] : order [right++];
    }
    memcpy (order, merged, count * sizeof (size_t));
    free (merged);
}

void
maheve_sort_clusters (grid_t *grid, double hd, size_t *order)
{
    assert (grid && order);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    double *marks = (double *) malloc (clusters * sizeof (double));
    assert (marks);
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        marks [cluster] = maheve_cluster_mark (grid, cluster, hd);
        order [cluster] = cluster;
    }
    s_sort_by_key (order, clusters, marks);
    free (marks);
}

double
maheve_task_value (tig_t *tig, size_t task, double hd)
{
    assert (tig);
    return pow (tig_cost (tig, task), hd)
         * pow ((double) tig_degree (tig, task), 1 - hd);
}

//  --------------------------------------------------------------------------
//  The final task list

void
maheve_sort_tasks (tig_t *tig, double hd, size_t *order)
{
    assert (tig && order);
    size_t count = tig_count (tig);
    double *values = (double *) malloc ((count + 1) * sizeof (double));
    size_t *by_value = (size_t *) malloc ((count + 1) * sizeof (size_t));
    bool *listed = (bool *) calloc (count + 1, sizeof (bool));
    size_t *pulled = (size_t *) malloc ((count + 1) * sizeof (size_t));
    assert (values && by_value && listed && pulled);
    for (size_t task = 0; task < count; task++) {
        values [task] = maheve_task_value (tig, task, hd);
        by_value [task] = task;
    }
    s_sort_by_key (by_value, count, values);
    size_t placed = 0;
    for (size_t rank = 0; rank < count; rank++) {
        size_t task = by_value [rank];
        if (listed [task])
            continue;
        listed [task] = true;
        order [placed++] = task;
        //  Nb_i dependencies not yet listed, best Q first
        size_t degree = tig_degree (tig, task);
        size_t wanted = (size_t) nearbyint (pow ((double) degree, 1 - hd));
        size_t candidates = 0;
        for (size_t index = 0; index < degree; index++) {
            size_t other = tig_neighbour (tig, task, index);
            if (!listed [other])
                pulled [candidates++] = other;
        }
        s_sort_by_key (pulled, candidates, values);
        for (size_t index = 0; index < candidates && index < wanted;
             index++) {
            listed [pulled [index]] = true;
            order [placed++] = pulled [index];
        }
    }
    assert (placed == count);
    free (values);
    free (by_value);
    free (listed);
    free (pulled);
}

//  --------------------------------------------------------------------------
//  Spares of each cluster

int
maheve_reserve (grid_t *grid, size_t tasks, size_t *reserved)
{
    assert (grid && reserved);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    size_t usable = 0;
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        size_t free_nodes = grid_cluster_available (grid, cluster);
        size_t spares = (size_t) floor (MAHEVE_SPARE_RATIO * free_nodes);
        reserved [cluster] = free_nodes >= 2 ? (spares ? spares : 1) : 0;
        usable += free_nodes - reserved [cluster];
    }
    while (usable < tasks) {
        size_t largest = 0;
        for (size_t cluster = 1; cluster < clusters; cluster++)
            if (reserved [cluster] > reserved [largest])
                largest = cluster;
        if (reserved [largest] == 0)
            return -1;
        reserved [largest]--;
        usable++;
    }
    return 0;
}

//  Available nodes of a cluster, most powerful first
static size_t
s_cluster_nodes (grid_t *grid, size_t cluster, size_t *nodes, double *key)
{
    size_t count = 0;
    for (size_t node = 0; node < grid_node_count (grid); node++) {
        key [node] = grid_node_power (grid, node);
        if (grid_node_cluster (grid, node) == cluster
        &&  grid_node_is_available (grid, node))
            nodes [count++] = node;
    }
    s_sort_by_key (nodes, count, key);
    return count;
}

//  --------------------------------------------------------------------------
//  Initial mapping

//  --------------------------------------------------------------------------
//  Locality (the paper's conclusion): clusters by mark over (1 + rho)

//  Mean amount of the TIG's edges (each counted once) and mean task cost
static void
s_tig_means (tig_t *tig, double *edge, double *cost)
{
    double amounts = 0, edges = 0, costs = 0;
    for (size_t task = 0; task < tig_count (tig); task++) {
        costs += tig_cost (tig, task);
        for (size_t index = 0; index < tig_degree (tig, task); index++)
            if (tig_neighbour (tig, task, index) > task) {
                amounts += tig_edge_amount (tig, task, index);
                edges++;
            }
    }
    *edge = edges > 0 ? amounts / edges : 0;
    *cost = tig_count (tig) ? costs / (double) tig_count (tig) : 0;
}

//  The locality order; `anchored` (may be NULL) marks the clusters that
//  already hold tasks: they count as chosen for the links, so a
//  replacement looks for a cluster near the job's other tasks.
static void
s_locality_sort (grid_t *grid, tig_t *tig, double hd, const bool *anchored,
                 size_t *order)
{
    assert (grid && tig && order);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    double *marks = (double *) malloc (clusters * sizeof (double));
    double *power = (double *) malloc (clusters * sizeof (double));
    bool *chosen = (bool *) calloc (clusters, sizeof (bool));
    bool *near = (bool *) calloc (clusters, sizeof (bool));
    assert (marks && power && chosen && near);
    bool any_near = false;
    for (size_t cluster = 0; anchored && cluster < clusters; cluster++)
        if (anchored [cluster])
            near [cluster] = any_near = true;
    double nodes = 0, node_power = 0;
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        double count;
        marks [cluster] = maheve_cluster_mark (grid, cluster, hd);
        s_cluster_figures (grid, cluster, &count, &power [cluster]);
        nodes += count;
        node_power += count * power [cluster];
    }
    double edge, cost;
    s_tig_means (tig, &edge, &cost);
    //  A link is weighed against a task's compute time on the grid's mean
    //  node, the same for every cluster.  Against the cluster's own, a
    //  fast cluster's short compute made its links weigh more than a slow
    //  one's: on table1-hd072 the slowest cluster (6 times slower than
    //  lille, as far from the others) came before lille and took 6 of a
    //  job's 16 tasks.
    double mean_power = nodes > 0 ? node_power / nodes : 0;
    double compute = mean_power > 0
                   ? cost / (GRID_FLOPS_PER_GFLOPS * mean_power) : 0;
    for (size_t rank = 0; rank < clusters; rank++) {
        size_t best = SIZE_MAX;
        double best_key = 0;
        for (size_t cluster = 0; cluster < clusters; cluster++) {
            if (chosen [cluster])
                continue;
            double key = marks [cluster];
            if (any_near) {
                //  The link from the closest cluster already chosen
                double link = HUGE_VAL;
                for (size_t other = 0; other < clusters; other++)
                    if (near [other])
                        link = fmin (link, grid_cluster_link_time (
                            grid, other, cluster, edge));
                double rho = compute > 0 ? link / compute
                           : link > 0 ? HUGE_VAL : 0;
                key = marks [cluster] / (1 + rho);
            }
            if (best == SIZE_MAX || key > best_key) {
                best = cluster;
                best_key = key;
            }
        }
        chosen [best] = near [best] = any_near = true;
        order [rank] = best;
    }
    free (marks);
    free (power);
    free (chosen);
    free (near);
}

void
maheve_locality_sort_clusters (grid_t *grid, tig_t *tig, double hd,
                               size_t *order)
{
    s_locality_sort (grid, tig, hd, NULL, order);
}

//  The clusters in the variant's order
static void
s_sort_clusters (grid_t *grid, tig_t *tig, double hd, bool locality,
                 size_t *order)
{
    if (locality)
        maheve_locality_sort_clusters (grid, tig, hd, order);
    else
        maheve_sort_clusters (grid, hd, order);
}

//  Amount of a task's edges to the tasks of group `which` (SIZE_MAX:
//  to the tasks not placed yet), or, with `any`, to every task placed
//  so far
static double
s_edges_to (tig_t *tig, size_t task, const size_t *group, size_t which,
            bool any)
{
    double amount = 0;
    for (size_t index = 0; index < tig_degree (tig, task); index++) {
        size_t other = group [tig_neighbour (tig, task, index)];
        if (any ? other != SIZE_MAX : other == which)
            amount += tig_edge_amount (tig, task, index);
    }
    return amount;
}

//  How a task left would join group `which`, most wanted first:
//  touching the group; the gain, its edges into the group less its
//  edges to the tasks left (greedy graph growing: the group takes the
//  task that adds least to its border, so a chain or a mesh is taken
//  from one side and no task is stranded between two groups); its edges
//  to every task placed, so a new group starts beside the last; its
//  MAHEVE value (equation (2)).
#define GROW_KEYS 4
static void
s_grow_key (tig_t *tig, size_t task, const size_t *group, size_t which,
            const double *value, double *key)
{
    double inside = s_edges_to (tig, task, group, which, false);
    key [0] = inside > 0;
    key [1] = inside - s_edges_to (tig, task, group, SIZE_MAX, false);
    key [2] = s_edges_to (tig, task, group, which, true);
    key [3] = value [task];
}

//  maheve-locality's task order (the paper's conclusion asks for marks
//  that account for locality; this is the other half).  MAHEVE lists a
//  task with a few of its dependencies and fills the clusters in that
//  order, so a chain of blocks crosses between clusters at almost every
//  pair; each crossing is a message over the backbone every iteration.
//  Here each cluster, in its order, takes sizes[c] tasks grown as a
//  connected group (s_grow_key), which keeps the graph's cut between
//  clusters small.  With nothing placed yet, the first group starts at
//  a task with the fewest edges (a chain's end, a mesh's corner): grown
//  from the most valuable task, as first built, a chain's first block
//  was left over for a third cluster, two crossings where one was
//  needed.  Ties go to the lower index.  O(tasks^2 x degree).
static void
s_grow_groups (tig_t *tig, double hd, const size_t *sizes, size_t groups,
               size_t *order)
{
    size_t count = tig_count (tig);
    double *value = (double *) malloc ((count + 1) * sizeof (double));
    size_t *group = (size_t *) malloc ((count + 1) * sizeof (size_t));
    assert (value && group);
    for (size_t task = 0; task < count; task++) {
        value [task] = maheve_task_value (tig, task, hd);
        group [task] = SIZE_MAX;
    }
    size_t placed = 0;
    for (size_t which = 0; which < groups && placed < count; which++)
        for (size_t k = 0; k < sizes [which] && placed < count; k++) {
            size_t best = SIZE_MAX;
            double best_key [GROW_KEYS] = { 0 };
            for (size_t task = 0; task < count; task++) {
                if (group [task] != SIZE_MAX)
                    continue;
                double key [GROW_KEYS];
                s_grow_key (tig, task, group, which, value, key);
                bool better = best == SIZE_MAX;
                for (int i = 0; !better && i < GROW_KEYS; i++) {
                    if (key [i] != best_key [i]) {
                        better = key [i] > best_key [i];
                        break;
                    }
                }
                if (better) {
                    best = task;
                    memcpy (best_key, key, sizeof key);
                }
            }
            group [best] = which;
            order [placed++] = best;
        }
    assert (placed == count);
    free (value);
    free (group);
}

//  The spares each cluster keeps of its reserve, in an array the caller
//  frees.  The paper preserves nodes in the clusters the mapping fills:
//  a cluster keeps as many as it takes tasks, no more; what that leaves
//  of one spare per task goes to the clusters that take none, in their
//  order, for when no super-node answers and a cluster runs out.  Every
//  cluster's whole reserve leased 60 idle spares for a 4-task job on a
//  600-daemon grid.
static size_t *
s_spares_kept (grid_t *grid, const size_t *cluster_order, size_t clusters,
               size_t tasks, const size_t *reserved)
{
    size_t *placed = (size_t *) calloc (clusters + 1, sizeof (size_t));
    size_t *kept = (size_t *) calloc (clusters + 1, sizeof (size_t));
    assert (placed && kept);
    size_t left = tasks, budget = tasks;
    for (size_t rank = 0; rank < clusters; rank++) {
        size_t cluster = cluster_order [rank];
        size_t usable = grid_cluster_available (grid, cluster)
                      - reserved [cluster];
        placed [cluster] = usable < left ? usable : left;
        left -= placed [cluster];
        kept [cluster] = reserved [cluster] < placed [cluster]
                       ? reserved [cluster] : placed [cluster];
        budget -= kept [cluster];
    }
    for (size_t rank = 0; rank < clusters; rank++) {
        size_t cluster = cluster_order [rank];
        if (placed [cluster])
            continue;
        kept [cluster] = reserved [cluster] < budget ? reserved [cluster]
                                                     : budget;
        budget -= kept [cluster];
    }
    free (placed);
    return kept;
}

static int
s_map (grid_t *grid, tig_t *tig, size_t *placement, bool locality)
{
    assert (grid && tig && placement);
    size_t clusters = platform_cluster_count (grid_platform (grid));
    size_t tasks = tig_count (tig);
    size_t *reserved = (size_t *) malloc (clusters * sizeof (size_t));
    assert (reserved);
    if (maheve_reserve (grid, tasks, reserved)) {
        free (reserved);
        return -1;
    }
    double hd = grid_heterogeneity (grid);
    size_t *cluster_order = (size_t *) malloc (clusters * sizeof (size_t));
    size_t *task_order = (size_t *) malloc ((tasks + 1) * sizeof (size_t));
    size_t nodes_count = grid_node_count (grid);
    size_t *nodes = (size_t *) malloc (nodes_count * sizeof (size_t));
    double *key = (double *) malloc (nodes_count * sizeof (double));
    assert (cluster_order && task_order && nodes && key);
    s_sort_clusters (grid, tig, hd, locality, cluster_order);
    if (locality) {
        //  What each cluster will take, in the clusters' order
        size_t *sizes = (size_t *) malloc (clusters * sizeof (size_t));
        assert (sizes);
        for (size_t rank = 0; rank < clusters; rank++) {
            size_t cluster = cluster_order [rank];
            sizes [rank] = s_cluster_nodes (grid, cluster, nodes, key)
                         - reserved [cluster];
        }
        s_grow_groups (tig, hd, sizes, clusters, task_order);
        free (sizes);
    }
    else
        maheve_sort_tasks (tig, hd, task_order);
    size_t *kept = s_spares_kept (grid, cluster_order, clusters, tasks,
                                  reserved);
    size_t next = 0;
    for (size_t rank = 0; rank < clusters; rank++) {
        size_t cluster = cluster_order [rank];
        size_t count = s_cluster_nodes (grid, cluster, nodes, key);
        size_t usable = count - reserved [cluster];
        for (size_t index = 0; index < usable && next < tasks; index++) {
            placement [task_order [next++]] = nodes [index];
            grid_set_state (grid, nodes [index], GRID_USED);
        }
        for (size_t index = usable; index < usable + kept [cluster]
                                    && index < count; index++)
            grid_set_state (grid, nodes [index], GRID_RESERVED);
    }
    assert (next == tasks);
    free (reserved);
    free (kept);
    free (cluster_order);
    free (task_order);
    free (nodes);
    free (key);
    return 0;
}

//  --------------------------------------------------------------------------
//  Replacement

int
maheve_map (grid_t *grid, tig_t *tig, size_t *placement)
{
    return s_map (grid, tig, placement, false);
}

int
maheve_locality_map (grid_t *grid, tig_t *tig, size_t *placement)
{
    return s_map (grid, tig, placement, true);
}

//  The most powerful node of `cluster` kept as a spare, or SIZE_MAX.
//  MAHEVE replaces a dead node by a reserved node of its cluster (section
//  3.3): the job holds it already, where a free node must still be won
//  from the super-node.  Taken by power among all available nodes, a
//  free node beat the cluster's spare (the mapping reserves the weakest),
//  and the spare sat leased and idle to the end of the job.
static size_t
s_best_reserved (grid_t *grid, size_t cluster)
{
    size_t best = SIZE_MAX;
    for (size_t node = 0; node < grid_node_count (grid); node++)
        if (grid_node_cluster (grid, node) == cluster
        &&  grid_node_state (grid, node) == GRID_RESERVED
        &&  (best == SIZE_MAX
             || grid_node_power (grid, node) > grid_node_power (grid, best)))
            best = node;
    return best;
}

static int
s_replace (grid_t *grid, tig_t *tig, size_t *placement, size_t task,
           bool locality)
{
    assert (grid && tig && placement);
    assert (task < tig_count (tig));
    size_t failed = placement [task];
    grid_set_state (grid, failed, GRID_DEAD);
    size_t cluster = grid_node_cluster (grid, failed);
    size_t node = s_best_reserved (grid, cluster);
    if (node == SIZE_MAX)
        node = grid_best_node (grid, cluster);
    if (node == SIZE_MAX) {
        //  The platform changed: sort the clusters again on what is left
        size_t clusters = platform_cluster_count (grid_platform (grid));
        size_t *order = (size_t *) malloc (clusters * sizeof (size_t));
        assert (order);
        double hd = grid_heterogeneity (grid);
        if (locality) {
            //  Near the clusters that hold the job's other tasks
            bool *anchored = (bool *) calloc (clusters, sizeof (bool));
            assert (anchored);
            for (size_t other = 0; other < tig_count (tig); other++)
                if (other != task)
                    anchored [grid_node_cluster (grid,
                                                 placement [other])] = true;
            s_locality_sort (grid, tig, hd, anchored, order);
            free (anchored);
        }
        else
            maheve_sort_clusters (grid, hd, order);
        for (size_t rank = 0; rank < clusters && node == SIZE_MAX; rank++) {
            node = s_best_reserved (grid, order [rank]);
            if (node == SIZE_MAX)
                node = grid_best_node (grid, order [rank]);
        }
        free (order);
    }
    if (node == SIZE_MAX)
        return -1;
    grid_set_state (grid, node, GRID_USED);
    placement [task] = node;
    return 0;
}

int
maheve_replace (grid_t *grid, tig_t *tig, size_t *placement, size_t task)
{
    return s_replace (grid, tig, placement, task, false);
}

int
maheve_locality_replace (grid_t *grid, tig_t *tig, size_t *placement,
                         size_t task)
{
    return s_replace (grid, tig, placement, task, true);
}

//  --------------------------------------------------------------------------
//  Default policy

int
mapper_default_map (grid_t *grid, tig_t *tig, size_t *placement)
{
    assert (grid && tig && placement);
    size_t tasks = tig_count (tig);
    size_t free_nodes = 0;
    for (size_t node = 0; node < grid_node_count (grid); node++)
        free_nodes += grid_node_state (grid, node) == GRID_FREE;
    if (free_nodes < tasks)
        return -1;
    //  Free nodes in hand-out order, blind to cluster and power
    size_t rank = 0;
    for (size_t task = 0; task < tasks; task++) {
        while (grid_node_state (grid, grid_order_node (grid, rank))
               != GRID_FREE)
            rank++;
        size_t node = grid_order_node (grid, rank);
        placement [task] = node;
        grid_set_state (grid, node, GRID_USED);
    }
    return 0;
}

int
mapper_default_replace (grid_t *grid, tig_t *tig, size_t *placement,
                        size_t task)
{
    assert (grid && tig && placement);
    grid_set_state (grid, placement [task], GRID_DEAD);
    for (size_t rank = 0; rank < grid_node_count (grid); rank++) {
        size_t node = grid_order_node (grid, rank);
        if (grid_node_is_available (grid, node)) {
            grid_set_state (grid, node, GRID_USED);
            placement [task] = node;
            return 0;
        }
    }
    return -1;
}

//  The mappers by name
typedef struct {
    const char *name;           //  Name the spawner and tools use
    int (*map) (grid_t *, tig_t *, size_t *);           //  Initial mapping
    int (*replace) (grid_t *, tig_t *, size_t *, size_t);   //  Replacement
} mapper_t;

static const mapper_t s_mappers [] = {
    { "default", mapper_default_map, mapper_default_replace },
    { "aiac-qm", aiac_qm_map, aiac_qm_replace },
    { "f-ec", fec_map, fec_replace },
    { "maheve", maheve_map, maheve_replace },
    { "maheve-locality", maheve_locality_map, maheve_locality_replace },
};

#define MAPPER_COUNT (sizeof s_mappers / sizeof s_mappers [0])

static const mapper_t *
s_mapper (const char *name)
{
    for (size_t index = 0; name && index < MAPPER_COUNT; index++)
        if (streq (s_mappers [index].name, name))
            return &s_mappers [index];
    return NULL;
}

const char **
mapper_names (void)
{
    //  Filled from s_mappers, the one place a mapper is named; constant
    //  after the first call, whoever makes it.
    static const char *names [MAPPER_COUNT + 1];
    for (size_t index = 0; index < MAPPER_COUNT; index++)
        names [index] = s_mappers [index].name;
    return names;
}

bool
mapper_exists (const char *name)
{
    return s_mapper (name) != NULL;
}

int
mapper_map (const char *name, grid_t *grid, tig_t *tig, size_t *placement)
{
    const mapper_t *mapper = s_mapper (name);
    return mapper ? mapper->map (grid, tig, placement) : -1;
}

int
mapper_replace (const char *name, grid_t *grid, tig_t *tig,
                size_t *placement, size_t task)
{
    const mapper_t *mapper = s_mapper (name);
    return mapper ? mapper->replace (grid, tig, placement, task) : -1;
}
