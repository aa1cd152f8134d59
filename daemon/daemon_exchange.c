/*  =========================================================================
    daemon_exchange - the routes of a job's total exchanges, from where
    its tasks run
    =========================================================================
*/
#include "daemon_exchange.h"
#include "collectives.h"
#include "jace_task_runtime.h"

bool
daemon_exchange_known (const char *algorithm)
{
    for (size_t index = 0; algorithm && jace_task_exchange_algorithms [index];
         index++)
        if (streq (algorithm, jace_task_exchange_algorithms [index]))
            return true;
    return !algorithm;
}

//  Tasks cluster by cluster (clusters in order of their first task),
//  each cluster's in rank order: node_of[rank] and rank_of[node], and
//  the nodes of each cluster.  Returns the number of clusters.
static size_t
s_layout (const char *const *clusters, int64_t tasks, size_t *node_of,
          int64_t *rank_of, size_t *cluster_nodes)
{
    size_t *cluster_of = (size_t *) calloc ((size_t) tasks, sizeof (size_t));
    int64_t *first_rank = (int64_t *) calloc ((size_t) tasks,
                                              sizeof (int64_t));
    assert (cluster_of && first_rank);
    size_t cluster_count = 0;
    for (int64_t rank = 0; rank < tasks; rank++) {
        size_t cluster = 0;
        while (cluster < cluster_count
        &&     !streq (clusters [first_rank [cluster]], clusters [rank]))
            cluster++;
        if (cluster == cluster_count) {
            first_rank [cluster_count] = rank;
            cluster_nodes [cluster_count++] = 0;
        }
        cluster_of [rank] = cluster;
        cluster_nodes [cluster]++;
    }
    size_t node = 0;
    for (size_t cluster = 0; cluster < cluster_count; cluster++)
        for (int64_t rank = 0; rank < tasks; rank++)
            if (cluster_of [rank] == cluster) {
                node_of [rank] = node;
                rank_of [node++] = rank;
            }
    free (cluster_of);
    free (first_rank);
    return cluster_count;
}

//  The plan's route of one piece in ranks, if task `rank` takes part in
//  it and it is more than one hop in step 0.
static bool
s_route (lg_plan_t *plan, const size_t *node_of, const int64_t *rank_of,
         int64_t source, int64_t destination, int64_t rank,
         jace_route_t *route)
{
    lg_hop_t hops [LG_MAX_HOPS];
    size_t length = lg_plan_route (plan, node_of [source],
                                   node_of [destination], hops, LG_MAX_HOPS);
    if (length == 0 || (length == 1 && hops [0].step == 0))
        return false;
    assert (length <= JACE_ROUTE_HOPS_MAX);
    *route = (jace_route_t) { .source = source, .destination = destination,
                              .hop_count = length };
    bool ours = source == rank || destination == rank;
    for (size_t hop = 0; hop < length; hop++) {
        route->hops [hop] = (jace_hop_t) {
            (int64_t) hops [hop].step, rank_of [hops [hop].from],
            rank_of [hops [hop].to]
        };
        ours |= route->hops [hop].from == rank || route->hops [hop].to == rank;
    }
    return ours;
}

jace_route_t *
daemon_exchange_routes (const char *const *clusters, int64_t tasks,
                        int64_t rank, const char *algorithm, size_t *count)
{
    assert (clusters && count);
    assert (tasks >= 1 && rank >= 0 && rank < tasks);
    assert (daemon_exchange_known (algorithm));
    *count = 0;
    if ((algorithm && streq (algorithm, "flat"))
    ||  tasks > DAEMON_EXCHANGE_TASKS_MAX)
        return NULL;
    size_t *node_of = (size_t *) calloc ((size_t) tasks, sizeof (size_t));
    int64_t *rank_of = (int64_t *) calloc ((size_t) tasks, sizeof (int64_t));
    size_t *cluster_nodes = (size_t *) calloc ((size_t) tasks,
                                               sizeof (size_t));
    assert (node_of && rank_of && cluster_nodes);
    size_t cluster_count = s_layout (clusters, tasks, node_of, rank_of,
                                     cluster_nodes);
    lg_plan_t *plan = algorithm && streq (algorithm, "direct")
                    ? lg_plan_direct (cluster_nodes, cluster_count, NULL)
                    : lg_plan (cluster_nodes, cluster_count, NULL);
    //  Ours are at most a few per task: as source, destination, relay.
    size_t capacity = 4 * (size_t) tasks;
    jace_route_t *routes = (jace_route_t *) malloc (capacity
                                                    * sizeof (jace_route_t));
    assert (routes);
    for (int64_t source = 0; source < tasks; source++)
        for (int64_t destination = 0; destination < tasks; destination++) {
            jace_route_t route;
            if (source == destination
            ||  !s_route (plan, node_of, rank_of, source, destination, rank,
                          &route))
                continue;
            if (*count == capacity) {
                capacity *= 2;
                routes = (jace_route_t *) realloc (routes, capacity
                                                   * sizeof (jace_route_t));
                assert (routes);
            }
            routes [(*count)++] = route;
        }
    lg_plan_destroy (&plan);
    free (node_of);
    free (rank_of);
    free (cluster_nodes);
    if (*count == 0)
        free (routes);
    return *count ? routes : NULL;
}
