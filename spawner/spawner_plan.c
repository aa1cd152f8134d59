/*  =========================================================================
    spawner_plan - a job's mapping on the live model, and its replacements
    =========================================================================
*/
#include "spawner_plan.h"
#include "jace_graph.h"

#include <math.h>
#include <time.h>

//  The spawner's mappings, its default first: the mapping library's
//  (test_spawner_plan checks that none is missing) and `simple`.
static const char *s_names [] = {
    "maheve", "maheve-locality", "aiac-qm", "f-ec", "default", "simple",
    NULL
};
#define PLAN_MAPPINGS (sizeof s_names / sizeof s_names [0] - 1)

const char *const *
spawner_plan_list (void)
{
    return s_names;
}

//  Written out rather than joined at run time, so that it needs no
//  shared buffer between the spawner's threads; test_spawner_plan checks
//  it names exactly s_names.
const char *
spawner_plan_names (void)
{
    return "maheve, maheve-locality, aiac-qm, f-ec, default, simple";
}

const char *
spawner_plan_canonical (const char *name)
{
    for (size_t index = 0; name && index < PLAN_MAPPINGS; index++)
        if (streq (s_names [index], name))
            return s_names [index];
    return NULL;
}

bool
spawner_plan_exists (const char *name)
{
    return spawner_plan_canonical (name) != NULL;
}

static double
s_now_msec (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

//  --------------------------------------------------------------------------
//  The task graph

tig_t *
spawner_plan_graph (spawner_job_t *job, size_t tasks, char *reason,
                    size_t reason_size)
{
    assert (job);
    const jace_app_t *app = spawner_job_app (job);
    if (tasks == 0 || (int64_t) tasks > spawner_job_rows (job)) {
        snprintf (reason, reason_size, "%s: cannot split %" PRId64 " rows "
                  "in %zu tasks", app->name, spawner_job_rows (job), tasks);
        return NULL;
    }
    //  An even partition: equal powers
    double *power = (double *) zmalloc (tasks * sizeof (double));
    int64_t *first = (int64_t *) zmalloc ((tasks + 1) * sizeof (int64_t));
    for (size_t task = 0; task < tasks; task++)
        power [task] = 1;
    int rc = spawner_job_partition (job, power, tasks, first);
    assert (rc == 0);
    free (power);
    jace_graph_t *graph = jace_graph_new ((int64_t) tasks);
    if (app->describe) {
        rc = app->describe (spawner_job_problem (job), first,
                            (int64_t) tasks, graph);
        if (rc)
            snprintf (reason, reason_size, "application %s: describe "
                      "failed for %zu tasks", app->name, tasks);
        else
        if (jace_graph_errors (graph) > 0) {
            snprintf (reason, reason_size, "application %s: describe made "
                      "%zu bad calls (a task out of range, a cost or an "
                      "amount not finite and positive)", app->name,
                      jace_graph_errors (graph));
            rc = -1;
        }
    }
    else
        //  Each task costs its rows and needs one value from each rank
        //  neighbour
        for (size_t task = 0; task < tasks; task++) {
            jace_graph_set_cost (graph, (int64_t) task,
                                 (double) (first [task + 1] - first [task]));
            if (task > 0)
                jace_graph_add_need (graph, (int64_t) task,
                                     (int64_t) task - 1, 1);
            if (task + 1 < tasks)
                jace_graph_add_need (graph, (int64_t) task,
                                     (int64_t) task + 1, 1);
        }
    free (first);
    tig_t *tig = NULL;
    if (rc == 0) {
        tig = tig_new (tasks);
        for (size_t task = 0; task < tasks; task++)
            tig_set_cost (tig, task, jace_graph_cost (graph,
                                                      (int64_t) task));
        //  Needs are symmetric for the mapping: both directions add up
        for (size_t index = 0; index < jace_graph_need_count (graph);
             index++) {
            int64_t task, from;
            double values;
            jace_graph_need (graph, index, &task, &from, &values);
            if (task != from)
                tig_add_edge (tig, (size_t) task, (size_t) from, values);
        }
    }
    jace_graph_destroy (&graph);
    return tig;
}

//  --------------------------------------------------------------------------
//  simple: nodes by cluster name, then power descending, then daemon id

static spawner_live_t *s_sort_live;     //  qsort has no context argument

static int
s_compare_simple (const void *first, const void *second)
{
    const jace_node_t *a = spawner_live_node (s_sort_live,
                                              *(const size_t *) first);
    const jace_node_t *b = spawner_live_node (s_sort_live,
                                              *(const size_t *) second);
    int by_cluster = strcmp (a->cluster, b->cluster);
    if (by_cluster)
        return by_cluster;
    if (a->power != b->power)
        return a->power > b->power ? -1 : 1;
    return strcmp (a->id, b->id);
}

//  Every node in simple's order; the caller frees it
static size_t *
s_simple_order (spawner_live_t *live)
{
    size_t count = spawner_live_count (live);
    size_t *order = (size_t *) zmalloc ((count + 1) * sizeof (size_t));
    for (size_t node = 0; node < count; node++)
        order [node] = node;
    s_sort_live = live;
    qsort (order, count, sizeof (size_t), s_compare_simple);
    s_sort_live = NULL;
    return order;
}

static int
s_simple_map (spawner_live_t *live, tig_t *tig, size_t *placement)
{
    grid_t *grid = spawner_live_grid (live);
    size_t count = spawner_live_count (live), tasks = tig_count (tig);
    size_t free_nodes = 0;
    for (size_t node = 0; node < count; node++)
        free_nodes += grid_node_state (grid, node) == GRID_FREE;
    if (free_nodes < tasks)
        return -1;
    size_t *order = s_simple_order (live);
    size_t task = 0;
    for (size_t rank = 0; rank < count && task < tasks; rank++)
        if (grid_node_state (grid, order [rank]) == GRID_FREE) {
            placement [task++] = order [rank];
            grid_set_state (grid, order [rank], GRID_USED);
        }
    free (order);
    return 0;
}

//  simple's replacement: a reserved node of the same cluster, else the
//  most powerful reserved, else a free node of the same cluster, else the
//  most powerful free (ties in simple's order).  SIZE_MAX if none.
static size_t
s_simple_pick (spawner_live_t *live, size_t cluster)
{
    grid_t *grid = spawner_live_grid (live);
    size_t count = spawner_live_count (live);
    size_t *order = s_simple_order (live);
    size_t chosen = SIZE_MAX;
    grid_state_t states [] = { GRID_RESERVED, GRID_FREE };
    for (size_t pass = 0; pass < 2 && chosen == SIZE_MAX; pass++) {
        //  Same cluster first, in simple's order
        for (size_t rank = 0; rank < count && chosen == SIZE_MAX; rank++)
            if (grid_node_state (grid, order [rank]) == states [pass]
            &&  grid_node_cluster (grid, order [rank]) == cluster)
                chosen = order [rank];
        //  Else the most powerful of that state anywhere
        for (size_t rank = 0; rank < count && chosen == SIZE_MAX; rank++)
            if (grid_node_state (grid, order [rank]) == states [pass]) {
                size_t best = order [rank];
                for (size_t next = rank + 1; next < count; next++)
                    if (grid_node_state (grid, order [next]) == states [pass]
                    &&  grid_node_power (grid, order [next])
                        > grid_node_power (grid, best))
                        best = order [next];
                chosen = best;
            }
    }
    free (order);
    return chosen;
}

//  --------------------------------------------------------------------------
//  Spares beyond the mapping's own: the next nodes it would choose

static void
s_top_up (const char *mapping, spawner_live_t *live, size_t wanted)
{
    grid_t *grid = spawner_live_grid (live);
    size_t count = spawner_live_count (live);
    size_t held = 0;
    for (size_t node = 0; node < count; node++)
        held += grid_node_state (grid, node) == GRID_RESERVED;
    size_t *order = NULL;
    if (streq (mapping, "simple"))
        order = s_simple_order (live);
    while (held < wanted) {
        size_t chosen = SIZE_MAX;
        if (streq (mapping, "default")) {
            for (size_t rank = 0; rank < count && chosen == SIZE_MAX; rank++)
                if (grid_node_state (grid, grid_order_node (grid, rank))
                    == GRID_FREE)
                    chosen = grid_order_node (grid, rank);
        }
        else
        if (order) {
            for (size_t rank = 0; rank < count && chosen == SIZE_MAX; rank++)
                if (grid_node_state (grid, order [rank]) == GRID_FREE)
                    chosen = order [rank];
        }
        else
            //  MAHEVE, aiac-qm, f-ec: the most powerful free node
            for (size_t node = 0; node < count; node++)
                if (grid_node_state (grid, node) == GRID_FREE
                &&  (chosen == SIZE_MAX
                     || grid_node_power (grid, node)
                        > grid_node_power (grid, chosen)))
                    chosen = node;
        if (chosen == SIZE_MAX)
            break;              //  No more: the plan holds fewer
        grid_set_state (grid, chosen, GRID_RESERVED);
        held++;
    }
    free (order);
}

//  --------------------------------------------------------------------------

int
spawner_plan_map (const char *mapping, spawner_live_t *live, tig_t *tig,
                  size_t spares_wanted, spawner_plan_t *plan, char *reason,
                  size_t reason_size)
{
    assert (live && tig && plan);
    if (!spawner_plan_exists (mapping)) {
        snprintf (reason, reason_size, "mapping '%s' is unknown (known: %s)",
                  mapping ? mapping : "", spawner_plan_names ());
        return -1;
    }
    double start = s_now_msec ();
    grid_t *grid = spawner_live_grid (live);
    size_t tasks = tig_count (tig);
    size_t *placement = (size_t *) zmalloc ((tasks + 1) * sizeof (size_t));
    int rc = streq (mapping, "simple")
           ? s_simple_map (live, tig, placement)
           : mapper_map (mapping, grid, tig, placement);
    if (rc) {
        size_t free_nodes = 0;
        for (size_t node = 0; node < spawner_live_count (live); node++)
            free_nodes += grid_node_state (grid, node) == GRID_FREE;
        snprintf (reason, reason_size, "%s cannot map %zu tasks on %zu "
                  "free daemons (one task per daemon)", mapping, tasks,
                  free_nodes);
        free (placement);
        return -1;
    }
    s_top_up (mapping, live, spares_wanted);
    memset (plan, 0, sizeof *plan);
    snprintf (plan->mapping, sizeof plan->mapping, "%s", mapping);
    plan->tasks = tasks;
    plan->placement = placement;
    size_t count = spawner_live_count (live);
    plan->spares = (size_t *) zmalloc ((count + 1) * sizeof (size_t));
    for (size_t node = 0; node < count; node++)
        if (grid_node_state (grid, node) == GRID_RESERVED)
            plan->spares [plan->spare_count++] = node;
    plan->hd = grid_heterogeneity (grid);
    plan->predicted_seconds = grid_execution_time (grid, tig, placement);
    plan->plan_msec = s_now_msec () - start;
    return 0;
}

static size_t
s_reserved_count (grid_t *grid)
{
    size_t count = 0;
    for (size_t node = 0; node < grid_node_count (grid); node++)
        count += grid_node_state (grid, node) == GRID_RESERVED;
    return count;
}

//  Neighbours of task (in the graph) placed in cluster
static size_t
s_neighbours_in (grid_t *grid, tig_t *tig, const size_t *placement,
                 size_t task, size_t cluster)
{
    size_t count = 0;
    for (size_t index = 0; index < tig_degree (tig, task); index++)
        count += grid_node_cluster (grid,
                    placement [tig_neighbour (tig, task, index)]) == cluster;
    return count;
}

int
spawner_plan_replace (const char *mapping, spawner_live_t *live,
                      tig_t *tig, size_t *placement, size_t task,
                      bool drained, char *why, size_t why_size)
{
    assert (live && tig && placement);
    assert (task < tig_count (tig));
    if (!spawner_plan_exists (mapping)) {
        snprintf (why, why_size, "mapping '%s' is unknown (known: %s)",
                  mapping ? mapping : "", spawner_plan_names ());
        return -1;
    }
    grid_t *grid = spawner_live_grid (live);
    platform_t *platform = spawner_live_platform (live);
    size_t failed = placement [task];
    size_t cluster = grid_node_cluster (grid, failed);
    const char *name = platform_cluster_name (platform, cluster);
    grid_set_state (grid, failed, GRID_DEAD);
    //  A reserve one smaller after the choice: the node was a spare
    size_t spares_before = s_reserved_count (grid);
    int rc;
    if (streq (mapping, "simple")) {
        size_t node = s_simple_pick (live, cluster);
        rc = node == SIZE_MAX ? -1 : 0;
        if (rc == 0) {
            grid_set_state (grid, node, GRID_USED);
            placement [task] = node;
        }
    }
    else
        rc = mapper_replace (mapping, grid, tig, placement, task);
    if (rc) {
        placement [task] = failed;
        snprintf (why, why_size, "no daemon is left to replace task %zu",
                  task);
        return -1;
    }
    size_t chosen = placement [task];
    size_t chosen_cluster = grid_node_cluster (grid, chosen);
    const char *other = platform_cluster_name (platform, chosen_cluster);
    const char *kind = s_reserved_count (grid) < spares_before
                     ? "reserved" : "free";
    //  Why not its own cluster: a drained one may have free nodes, kept off
    const char *not_own = drained ? "is being drained"
                                  : "has no node available";
    //  Whether the node was one of the job's spares, in every reason
    if (streq (mapping, "default"))
        snprintf (why, why_size, "first %s daemon in hand-out order", kind);
    else
    if (streq (mapping, "aiac-qm"))
        snprintf (why, why_size, "the available node that minimises its ET "
                  "(a %s node of %s)", kind, other);
    else
    if (chosen_cluster == cluster)
        snprintf (why, why_size, "a %s node of its cluster %s", kind, name);
    else
    if (streq (mapping, "f-ec") && s_neighbours_in (grid, tig, placement,
                                                    task, chosen_cluster))
        snprintf (why, why_size, "cluster %s %s: the cluster holding most of "
                  "its neighbours, %s", name, not_own, other);
    else
    if (streq (mapping, "f-ec"))
        snprintf (why, why_size, "cluster %s %s, and no cluster of its "
                  "neighbours has a node: the first with one, %s", name,
                  not_own, other);
    else
    if (streq (mapping, "simple"))
        snprintf (why, why_size, "cluster %s %s: the most powerful %s node, "
                  "in %s", name, not_own, kind, other);
    else
        snprintf (why, why_size, "cluster %s %s: a %s node of the best "
                  "of the re-sorted clusters, %s", name, not_own, kind, other);
    return 0;
}

void
spawner_plan_clear (spawner_plan_t *plan)
{
    assert (plan);
    free (plan->placement);
    free (plan->spares);
    memset (plan, 0, sizeof *plan);
}
