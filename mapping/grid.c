/*  =========================================================================
    grid - the live state of a platform's nodes for the mappers
    =========================================================================
*/
#include "mapping.h"

struct _grid_t {
    platform_t *platform;       //  Borrowed; owned by the caller
    size_t count;               //  Number of nodes
    size_t *cluster;            //  Cluster of each node
    double *power;              //  Power of each node
    grid_state_t *state;        //  State of each node
    size_t *order;              //  Hand-out order: rank -> node
};

grid_t *
grid_new (platform_t *platform)
{
    assert (platform);
    grid_t *self = (grid_t *) calloc (1, sizeof (grid_t));
    assert (self);
    self->platform = platform;
    self->count = platform_node_count (platform);
    self->cluster = (size_t *) malloc (self->count * sizeof (size_t));
    self->power = (double *) malloc (self->count * sizeof (double));
    self->state = (grid_state_t *) calloc (self->count,
                                           sizeof (grid_state_t));
    self->order = (size_t *) malloc ((self->count + 1) * sizeof (size_t));
    assert (self->cluster && self->power && self->state && self->order);
    for (size_t rank = 0; rank < self->count; rank++)
        self->order [rank] = rank;
    for (size_t cluster = 0; cluster < platform_cluster_count (platform);
         cluster++)
        for (size_t node = 0; node < platform_cluster_nodes (platform,
                                                             cluster); node++) {
            size_t index = platform_node_index (platform, cluster, node);
            self->cluster [index] = cluster;
            self->power [index] = platform_node_power (platform, cluster,
                                                       node);
            self->state [index] = GRID_FREE;
        }
    return self;
}

void
grid_destroy (grid_t **self_p)
{
    assert (self_p);
    grid_t *self = *self_p;
    if (!self)
        return;
    free (self->cluster);
    free (self->power);
    free (self->state);
    free (self->order);
    free (self);
    *self_p = NULL;
}

platform_t *
grid_platform (grid_t *self)
{
    assert (self);
    return self->platform;
}

size_t
grid_node_count (grid_t *self)
{
    assert (self);
    return self->count;
}

size_t
grid_node_cluster (grid_t *self, size_t node)
{
    assert (self);
    assert (node < self->count);
    return self->cluster [node];
}

double
grid_node_power (grid_t *self, size_t node)
{
    assert (self);
    assert (node < self->count);
    return self->power [node];
}

grid_state_t
grid_node_state (grid_t *self, size_t node)
{
    assert (self);
    assert (node < self->count);
    return self->state [node];
}

void
grid_set_state (grid_t *self, size_t node, grid_state_t state)
{
    assert (self);
    assert (node < self->count);
    self->state [node] = state;
}

bool
grid_node_is_available (grid_t *self, size_t node)
{
    grid_state_t state = grid_node_state (self, node);
    return state == GRID_FREE || state == GRID_RESERVED;
}

size_t
grid_cluster_available (grid_t *self, size_t cluster)
{
    assert (self);
    size_t count = 0;
    for (size_t node = 0; node < self->count; node++)
        count += self->cluster [node] == cluster
              && grid_node_is_available (self, node);
    return count;
}

size_t
grid_best_node (grid_t *self, size_t cluster)
{
    assert (self);
    size_t best = SIZE_MAX;
    for (size_t node = 0; node < self->count; node++)
        if (self->cluster [node] == cluster
        &&  grid_node_is_available (self, node)
        &&  (best == SIZE_MAX || self->power [node] > self->power [best]))
            best = node;
    return best;
}

double
grid_heterogeneity (grid_t *self)
{
    assert (self);
    double sum = 0, squares = 0;
    size_t alive = 0;
    for (size_t node = 0; node < self->count; node++)
        if (self->state [node] != GRID_DEAD) {
            sum += self->power [node];
            squares += self->power [node] * self->power [node];
            alive++;
        }
    if (alive == 0 || sum <= 0)
        return 0;
    double average = sum / (double) alive;
    double variance = fmax (0, squares / (double) alive - average * average);
    return fmin (1, sqrt (variance) / average);
}

double
grid_latency (grid_t *self, size_t first, size_t second)
{
    assert (self);
    return 1e-6 * platform_latency_us (self->platform,
                                       grid_node_cluster (self, first),
                                       grid_node_cluster (self, second));
}

double
grid_cluster_link_time (grid_t *self, size_t from, size_t to, double values)
{
    assert (self);
    double latency = 1e-6 * platform_latency_us (self->platform, from, to);
    double bandwidth = 1e6 * platform_bandwidth_mbps (self->platform, from,
                                                      to);
    return latency + (bandwidth > 0 ? 64 * values / bandwidth : 0);
}

double
grid_link_time (grid_t *self, size_t first, size_t second, double values)
{
    return grid_cluster_link_time (self, grid_node_cluster (self, first),
                                   grid_node_cluster (self, second), values);
}

int
grid_set_order (grid_t *self, const size_t *order)
{
    assert (self && order);
    bool *seen = (bool *) calloc (self->count + 1, sizeof (bool));
    assert (seen);
    int rc = 0;
    for (size_t rank = 0; rank < self->count && rc == 0; rank++) {
        if (order [rank] >= self->count || seen [order [rank]])
            rc = -1;
        else
            seen [order [rank]] = true;
    }
    free (seen);
    if (rc == 0)
        memcpy (self->order, order, self->count * sizeof (size_t));
    return rc;
}

size_t
grid_order_node (grid_t *self, size_t rank)
{
    assert (self);
    assert (rank < self->count);
    return self->order [rank];
}

double
grid_task_time (grid_t *self, tig_t *tig, const size_t *placement,
                size_t task)
{
    assert (self);
    assert (tig && placement);
    size_t node = placement [task];
    double time = tig_cost (tig, task)
                / (GRID_FLOPS_PER_GFLOPS * grid_node_power (self, node));
    for (size_t index = 0; index < tig_degree (tig, task); index++) {
        size_t other = tig_neighbour (tig, task, index);
        time += grid_link_time (self, node, placement [other],
                                tig_edge_amount (tig, task, index));
    }
    return time;
}

double
grid_execution_time (grid_t *self, tig_t *tig, const size_t *placement)
{
    double slowest = 0;
    for (size_t task = 0; task < tig_count (tig); task++)
        slowest = fmax (slowest, grid_task_time (self, tig, placement, task));
    return slowest;
}
