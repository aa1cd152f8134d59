/*  =========================================================================
    test_mapping_maheve - the task graph, the ET model, MAHEVE and the
    baseline mappers

    Hand-computed small cases: marks, task lists and reservations for a
    platform with hd below 0.5 and one with hd above; replacement prefers
    the failed node's cluster; every mapper gives a valid one-task-per-node
    mapping through the common interface.
    =========================================================================
*/
#include "mapping.h"
#include "tap.h"

//  hd = 0.0884: A has 6 nodes of power 1, B 3 nodes of power 1.2
static const char *s_low =
    "platform\n    name = low\n"
    "    cluster\n        name = A\n        nodes = 6\n"
    "    cluster\n        name = B\n        nodes = 3\n"
    "        power = 1.2\n        latency_us = 100\n"
    "    backbone\n        latency_us = 10000\n";

//  hd = 0.866: A has 6 nodes of power 0.2, B 2 nodes of power 1
static const char *s_high =
    "platform\n    name = high\n"
    "    cluster\n        name = A\n        nodes = 6\n        speed = 0.2\n"
    "    cluster\n        name = B\n        nodes = 2\n";

//  Five tasks: costs 9 1 2 3 1, edges 0-1 1-2 2-3 3-4 1-3
static tig_t *
s_small_tig (void)
{
    tig_t *tig = tig_new (5);
    double costs [] = { 9, 1, 2, 3, 1 };
    for (size_t task = 0; task < 5; task++)
        tig_set_cost (tig, task, costs [task]);
    tig_add_edge (tig, 0, 1, 1);
    tig_add_edge (tig, 1, 2, 1);
    tig_add_edge (tig, 2, 3, 1);
    tig_add_edge (tig, 3, 4, 1);
    tig_add_edge (tig, 1, 3, 1);
    return tig;
}

static bool
s_same (const size_t *got, const size_t *want, size_t count)
{
    for (size_t index = 0; index < count; index++)
        if (got [index] != want [index])
            return false;
    return true;
}

static void
s_test_tig (void)
{
    tig_t *tig = s_small_tig ();
    is_int (tig_degree (tig, 1), 3, "d_1 = 3");
    is_double (tig_cost (tig, 0), 9, 0, "e_0 = 9");
    tig_add_edge (tig, 0, 1, 2);
    is_double (tig_edge_amount (tig, 1, 0), 3, 0,
               "adding to an edge sums the amounts, both ways");
    tig_destroy (&tig);
    //  100 rows, half-bandwidth 10, 10 blocks of 10 rows: an interior
    //  block needs 10 columns from each side
    tig = tig_new_banded (100, 10, 10);
    is_int (tig_degree (tig, 5), 2, "banded: interior block has 2 deps");
    is_double (tig_edge_amount (tig, 5, 0), 10, 0,
               "banded: it needs 10 values of each neighbour");
    is_int (tig_degree (tig, 0), 1, "banded: end block has 1 dep");
    tig_destroy (&tig);
    ok (tig_new_banded (10, 1, 11) == NULL, "more tasks than rows is "
        "refused");
    //  The banded graph is computed from block bounds: it must equal the
    //  graph of the full band's pattern
    bool same = true;
    for (size_t rows = 5; rows < 40; rows += 7)
        for (size_t half = 0; half < 9; half += 2)
            for (size_t tasks = 1; tasks <= rows && tasks < 7; tasks++) {
                size_t nonzeros = 0;
                size_t *row_index = malloc (rows * rows * sizeof (size_t));
                size_t *column_index = malloc (rows * rows * sizeof (size_t));
                for (size_t i = 0; i < rows; i++)
                    for (size_t j = 0; j < rows; j++)
                        if ((i > j ? i - j : j - i) <= half) {
                            row_index [nonzeros] = i;
                            column_index [nonzeros++] = j;
                        }
                tig_t *pattern = tig_new_from_pattern (rows, nonzeros,
                    row_index, column_index, tasks);
                tig_t *band = tig_new_banded (rows, half, tasks);
                for (size_t task = 0; task < tasks; task++) {
                    same = same && tig_cost (pattern, task)
                                   == tig_cost (band, task)
                        && tig_degree (pattern, task)
                           == tig_degree (band, task);
                    for (size_t edge = 0; same && edge < tig_degree (band,
                                                                    task);
                         edge++) {
                        bool found = false;
                        for (size_t other = 0;
                             other < tig_degree (pattern, task); other++)
                            found = found
                                || (tig_neighbour (pattern, task, other)
                                    == tig_neighbour (band, task, edge)
                                 && tig_edge_amount (pattern, task, other)
                                    == tig_edge_amount (band, task, edge));
                        same = found;
                    }
                }
                tig_destroy (&pattern);
                tig_destroy (&band);
                free (row_index);
                free (column_index);
            }
    ok (same, "the banded graph equals the graph of its full pattern");
    char error [512];
    const char *srcdir = getenv ("JACE_SRCDIR");
    char path [400];
    snprintf (path, sizeof path, "%s/tests/data/planning/band8.mtx",
              srcdir ? srcdir : ".");
    tig = tig_load_matrix_market (path, 4, error, sizeof error);
    if (!ok (tig && tig_degree (tig, 1) == 2 && tig_degree (tig, 0) == 1,
             "a Matrix Market file gives the block graph"))
        diag ("%s", tig ? "wrong degrees" : error);
    tig_destroy (&tig);
    snprintf (path, sizeof path, "%s/tests/data/planning/bad.mtx",
              srcdir ? srcdir : ".");
    tig = tig_load_matrix_market (path, 2, error, sizeof error);
    ok (!tig && strstr (error, "bad.mtx:4:"), "a bad Matrix Market file "
        "is reported with its line");
}

static void
s_test_low (void)
{
    platform_t *platform = platform_parse (s_low, NULL, 0);
    grid_t *grid = grid_new (platform);
    double hd = grid_heterogeneity (grid);
    is_double (hd, 0.08838834764831763, 1e-12, "low: hd = 0.0884");
    is_double (maheve_cluster_mark (grid, 0, hd), 47.394733678796605, 1e-9,
               "low: mark of A (more nodes) = 47.39");
    is_double (maheve_cluster_mark (grid, 1, hd), 25.873724199011743, 1e-9,
               "low: mark of B = 25.87");
    size_t clusters [2];
    maheve_sort_clusters (grid, hd, clusters);
    ok (clusters [0] == 0, "low: the cluster with more nodes comes first");
    tig_t *tig = s_small_tig ();
    size_t order [5], want [] = { 3, 1, 2, 4, 0 };
    maheve_sort_tasks (tig, hd, order);
    ok (s_same (order, want, 5), "low: task list 3 1 2 4 0 (Nb pulls "
        "three dependencies)");
    size_t reserved [2];
    ok (maheve_reserve (grid, 5, reserved) == 0 && reserved [0] == 1
        && reserved [1] == 1, "low: one spare per cluster");
    ok (maheve_reserve (grid, 8, reserved) == 0 && reserved [0] == 0
        && reserved [1] == 1, "low: spares are given up when tasks need "
        "the room");
    ok (maheve_reserve (grid, 10, reserved) == -1, "low: 10 tasks do not "
        "fit on 9 nodes");
    size_t placement [5];
    ok (maheve_map (grid, tig, placement) == 0, "low: MAHEVE maps 5 tasks");
    size_t want_nodes [] = { 4, 1, 2, 0, 3 };
    ok (s_same (placement, want_nodes, 5), "low: the list fills cluster A "
        "in node order");
    is_int (grid_node_state (grid, 5), GRID_RESERVED, "low: A keeps node 5 "
            "as a spare");
    is_int (grid_node_state (grid, 8), GRID_RESERVED, "low: B keeps node 8 "
            "as a spare (A's one leaves 4 of the 5 tasks' spares to give)");
    double time = grid_execution_time (grid, tig, placement);
    //  Task 3 (all in A): 3 flops at 1 GFLOP/s + one value from each of
    //  its 3 neighbours over A's link (50 us, 1000 Mb/s)
    is_double (time, 3e-9 + 3 * (50e-6 + 64e-9), 1e-15, "low: ET(App) = "
               "3 flops / 1e9 flop/s + 3 x (50 us + 64 bits / 1e9 bit/s), "
               "in seconds");
    ok (maheve_replace (grid, tig, placement, 0) == 0 && placement [0] == 5
        && grid_node_state (grid, 4) == GRID_DEAD,
        "low: a failed node is replaced by the spare of its cluster");
    ok (maheve_replace (grid, tig, placement, 0) == 0
        && grid_node_cluster (grid, placement [0]) == 1,
        "low: with its cluster exhausted, the task moves to cluster B");
    grid_destroy (&grid);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

static void
s_test_high (void)
{
    platform_t *platform = platform_parse (s_high, NULL, 0);
    grid_t *grid = grid_new (platform);
    double hd = grid_heterogeneity (grid);
    is_double (hd, 0.8660254037844386, 1e-12, "high: hd = 0.866");
    is_double (maheve_cluster_mark (grid, 0, hd), 13.216028731347034, 1e-9,
               "high: mark of A = 13.22");
    is_double (maheve_cluster_mark (grid, 1, hd), 47.61550201766836, 1e-9,
               "high: mark of B (more power) = 47.62");
    size_t clusters [2];
    maheve_sort_clusters (grid, hd, clusters);
    ok (clusters [0] == 1, "high: the more powerful cluster comes first");
    tig_t *tig = s_small_tig ();
    size_t order [5], want [] = { 0, 1, 3, 2, 4 };
    maheve_sort_tasks (tig, hd, order);
    ok (s_same (order, want, 5), "high: task list 0 1 3 2 4 (heaviest "
        "first, one dependency pulled)");
    size_t placement [5];
    ok (maheve_map (grid, tig, placement) == 0, "high: MAHEVE maps 5 "
        "tasks");
    //  B (nodes 6, 7) keeps one spare, so task 0 alone goes there
    ok (placement [0] == 6 && grid_node_state (grid, 7) == GRID_RESERVED,
        "high: the heaviest task gets B's node, B keeps a spare");
    ok (grid_node_cluster (grid, placement [1]) == 0
        && grid_node_state (grid, 5) == GRID_RESERVED,
        "high: the rest goes to A, which keeps a spare too");
    ok (maheve_replace (grid, tig, placement, 0) == 0 && placement [0] == 7,
        "high: replacement takes B's spare");
    grid_destroy (&grid);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

static bool
s_valid (grid_t *grid, tig_t *tig, const size_t *placement)
{
    size_t nodes = grid_node_count (grid);
    size_t *users = calloc (nodes, sizeof (size_t));
    bool valid = true;
    for (size_t task = 0; task < tig_count (tig); task++) {
        if (placement [task] >= nodes
        ||  grid_node_state (grid, placement [task]) != GRID_USED
        ||  users [placement [task]]++)
            valid = false;
    }
    free (users);
    return valid;
}

static void
s_test_mappers (void)
{
    platform_t *platform = platform_parse (
        "platform\n    name = three\n"
        "    cluster\n        name = A\n        nodes = 8\n        speed = 0.5\n"
        "    cluster\n        name = B\n        nodes = 12\n"
        "    cluster\n        name = C\n        nodes = 4\n        power = 2\n"
        "    link\n        between = \"A C\"\n        latency_us = 500\n",
        NULL, 0);
    tig_t *tig = tig_new_banded (600, 40, 10);
    const char **names = mapper_names ();
    is_int ((long long) (names [4] != NULL && names [5] == NULL), 1,
            "five mappers are known");
    ok (mapper_exists ("maheve") && !mapper_exists ("nope"),
        "mappers are found by name");
    double default_time = 0, maheve_time = 0;
    for (size_t index = 0; names [index]; index++) {
        grid_t *grid = grid_new (platform);
        size_t placement [12];
        char name [120];
        snprintf (name, sizeof name, "%s maps 10 tasks one per node",
                  names [index]);
        ok (mapper_map (names [index], grid, tig, placement) == 0
            && s_valid (grid, tig, placement), name);
        double time = grid_execution_time (grid, tig, placement);
        if (index == 0)
            default_time = time;
        if (streq (names [index], "maheve"))
            maheve_time = time;
        size_t failed = placement [3];
        snprintf (name, sizeof name, "%s replaces a failed node", names [index]);
        ok (mapper_replace (names [index], grid, tig, placement, 3) == 0
            && placement [3] != failed && s_valid (grid, tig, placement)
            && grid_node_state (grid, failed) == GRID_DEAD, name);
        grid_destroy (&grid);
    }
    ok (maheve_time < default_time, "MAHEVE predicts a shorter ET than the "
        "default policy");
    diag ("ET default %.4f, MAHEVE %.4f", default_time, maheve_time);
    grid_t *grid = grid_new (platform);
    size_t placement [30];
    tig_t *big = tig_new (30);
    ok (mapper_map ("maheve", grid, big, placement) == -1
        && mapper_map ("f-ec", grid, big, placement) == -1
        && grid_node_state (grid, 0) == GRID_FREE,
        "30 tasks on 24 nodes are refused, nothing taken");
    ok (mapper_map ("unknown", grid, tig, placement) == -1,
        "an unknown mapper is refused");
    tig_destroy (&big);
    grid_destroy (&grid);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

//  A chain of `tasks` tasks of 1e7 flops, each needing `amount` values
//  from the next
static tig_t *
s_chain (size_t tasks, double amount)
{
    tig_t *tig = tig_new (tasks);
    for (size_t task = 0; task < tasks; task++) {
        tig_set_cost (tig, task, 1e7);
        if (task > 0)
            tig_add_edge (tig, task - 1, task, amount);
    }
    return tig;
}

//  Two clusters equally far from the first: the faster comes first.  A
//  (power 4), F (power 2) and S (power 0.25) joined by the same 20 ms
//  links.  A link weighed against a task's compute time on the cluster's
//  own nodes made F's weigh 8 times S's (F computes 8 times faster) and
//  put S first; against the grid's mean node, the links weigh the same.
static void
s_test_locality_equal_links (void)
{
    platform_t *platform = platform_parse (
        "platform\n    name = equal-links\n"
        "    cluster\n        name = A\n        nodes = 8\n        power = 4\n"
        "    cluster\n        name = F\n        nodes = 8\n        power = 2\n"
        "    cluster\n        name = S\n        nodes = 8\n"
        "        power = 0.25\n"
        "    backbone\n        latency_us = 20000\n"
        "        bandwidth_mbps = 100\n", NULL, 0);
    assert (platform);
    tig_t *tig = s_chain (12, 1000);
    grid_t *grid = grid_new (platform);
    size_t order [3];
    maheve_locality_sort_clusters (grid, tig, grid_heterogeneity (grid),
                                   order);
    ok (order [0] == 0 && order [1] == 1 && order [2] == 2,
        "locality: of two clusters as far away, the faster comes first");
    diag ("locality order %zu %zu %zu (A F S = 0 1 2)", order [0], order [1],
          order [2]);
    grid_destroy (&grid);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

//  MAHEVE's order against the locality order: A (power 2), B (power 1)
//  next to it, C (power 1.5) behind a slow link.  MAHEVE goes A, C, B
//  (marks by power); with locality C's 50 ms link outweighs its power.
static void
s_test_locality (void)
{
    platform_t *platform = platform_parse (
        "platform\n    name = far\n"
        "    cluster\n        name = A\n        nodes = 8\n        power = 2\n"
        "    cluster\n        name = B\n        nodes = 8\n"
        "    cluster\n        name = C\n        nodes = 8\n        power = 1.5\n"
        "    link\n        between = \"A B\"\n        latency_us = 100\n"
        "        bandwidth_mbps = 1000\n"
        "    link\n        between = \"A C\"\n        latency_us = 50000\n"
        "        bandwidth_mbps = 10\n"
        "    link\n        between = \"B C\"\n        latency_us = 50000\n"
        "        bandwidth_mbps = 10\n", NULL, 0);
    assert (platform);
    tig_t *tig = s_chain (12, 100);
    grid_t *grid = grid_new (platform);
    double hd = grid_heterogeneity (grid);
    size_t plain [3], local [3];
    maheve_sort_clusters (grid, hd, plain);
    maheve_locality_sort_clusters (grid, tig, hd, local);
    ok (plain [0] == 0 && plain [1] == 2 && plain [2] == 1,
        "locality: MAHEVE orders A, C (powerful, far), B");
    ok (local [0] == 0 && local [1] == 1 && local [2] == 2,
        "locality: maheve-locality orders A, B, then C behind its slow link");
    size_t placement [12];
    size_t in_c = 0, in_b = 0;
    ok (mapper_map ("maheve", grid, tig, placement) == 0, "locality: MAHEVE "
        "maps 12 tasks");
    double plain_time = grid_execution_time (grid, tig, placement);
    for (size_t task = 0; task < 12; task++)
        in_c += grid_node_cluster (grid, placement [task]) == 2;
    size_t plain_crossings = 0;
    for (size_t task = 1; task < 12; task++)
        plain_crossings += grid_node_cluster (grid, placement [task - 1])
                        != grid_node_cluster (grid, placement [task]);
    grid_destroy (&grid);
    grid = grid_new (platform);
    ok (mapper_map ("maheve-locality", grid, tig, placement) == 0,
        "locality: maheve-locality maps 12 tasks");
    double local_time = grid_execution_time (grid, tig, placement);
    for (size_t task = 0; task < 12; task++)
        in_b += grid_node_cluster (grid, placement [task]) == 1;
    size_t crossings = 0;
    for (size_t task = 1; task < 12; task++)
        crossings += grid_node_cluster (grid, placement [task - 1])
                  != grid_node_cluster (grid, placement [task]);
    ok (crossings <= 2, "locality: the chain "
        "crosses between its two clusters at most twice");
    diag ("chain crossings: MAHEVE %zu, maheve-locality %zu",
          plain_crossings, crossings);
    ok (in_c == 5 && in_b == 5, "locality: the 5 tasks A cannot hold go to "
        "C with MAHEVE, to B with locality");
    ok (local_time < plain_time, "locality: the predicted ET is shorter");
    diag ("ET MAHEVE %.6f s, maheve-locality %.6f s", plain_time,
          local_time);
    //  Replacement: A's spare first, then re-sorted with locality
    size_t task = 0;
    while (grid_node_cluster (grid, placement [task]) != 0)
        task++;
    ok (mapper_replace ("maheve-locality", grid, tig, placement, task) == 0
        && grid_node_cluster (grid, placement [task]) == 0,
        "locality: a failed node of A is replaced by A's spare");
    ok (mapper_replace ("maheve-locality", grid, tig, placement, task) == 0
        && grid_node_cluster (grid, placement [task]) == 1,
        "locality: A exhausted, the task goes to B, not to far C");
    grid_destroy (&grid);
    //  Equal links and equal powers: the same order as MAHEVE
    platform_t *even = platform_parse (
        "platform\n    name = even\n"
        "    cluster\n        name = A\n        nodes = 3\n"
        "    cluster\n        name = B\n        nodes = 9\n"
        "    cluster\n        name = C\n        nodes = 5\n", NULL, 0);
    grid = grid_new (even);
    hd = grid_heterogeneity (grid);
    maheve_sort_clusters (grid, hd, plain);
    maheve_locality_sort_clusters (grid, tig, hd, local);
    ok (s_same (plain, local, 3) && plain [0] == 1 && plain [1] == 2,
        "locality: equal links and powers order as MAHEVE (B, C, A)");
    grid_destroy (&grid);
    platform_destroy (&even);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

//  Graph edges whose two tasks sit in different clusters
static size_t
s_cut (grid_t *grid, tig_t *tig, const size_t *placement)
{
    size_t cut = 0;
    for (size_t task = 0; task < tig_count (tig); task++)
        for (size_t index = 0; index < tig_degree (tig, task); index++) {
            size_t other = tig_neighbour (tig, task, index);
            cut += other > task
                && grid_node_cluster (grid, placement [task])
                != grid_node_cluster (grid, placement [other]);
        }
    return cut;
}

//  maheve-locality's groups on equal clusters: a 16-task chain over three
//  clusters of 7 usable nodes crosses twice (grown from its most valuable
//  task, the chain's first block was left over for the third cluster:
//  three crossings), and a 4 x 4 mesh over two clusters of 8 is cut
//  between two rows (4 edges), the least a mesh of 16 cut in halves has.
static void
s_test_locality_cut (void)
{
    platform_t *three = platform_parse (
        "platform\n    name = three\n"
        "    cluster\n        name = A\n        nodes = 8\n"
        "    cluster\n        name = B\n        nodes = 8\n"
        "    cluster\n        name = C\n        nodes = 8\n", NULL, 0);
    assert (three);
    tig_t *chain = s_chain (16, 100);
    grid_t *grid = grid_new (three);
    size_t placement [16];
    ok (mapper_map ("maheve-locality", grid, chain, placement) == 0
        && s_cut (grid, chain, placement) == 2,
        "locality cut: a chain over three clusters crosses twice");
    diag ("chain over three clusters: %zu crossings",
          s_cut (grid, chain, placement));
    grid_destroy (&grid);
    tig_destroy (&chain);
    platform_destroy (&three);

    platform_t *two = platform_parse (
        "platform\n    name = two\n"
        "    cluster\n        name = A\n        nodes = 9\n"
        "    cluster\n        name = B\n        nodes = 9\n", NULL, 0);
    assert (two);
    tig_t *mesh = tig_new (16);
    for (size_t task = 0; task < 16; task++) {
        tig_set_cost (mesh, task, 1e7);
        if (task % 4)
            tig_add_edge (mesh, task - 1, task, 100);
        if (task >= 4)
            tig_add_edge (mesh, task - 4, task, 100);
    }
    grid = grid_new (two);
    ok (mapper_map ("maheve-locality", grid, mesh, placement) == 0
        && s_cut (grid, mesh, placement) == 4,
        "locality cut: a 4 x 4 mesh over two clusters is cut at 4 edges");
    diag ("mesh over two clusters: %zu edges cut",
          s_cut (grid, mesh, placement));
    grid_destroy (&grid);
    tig_destroy (&mesh);
    platform_destroy (&two);
}

//  A small job on a large grid keeps spares where its tasks run, no more
//  than it has tasks: three clusters of 40 nodes would reserve 4 each,
//  12 idle daemons leased for a 2-task job.
static void
s_test_spares_thrift (void)
{
    platform_t *platform = platform_parse (
        "platform\n    name = big\n"
        "    cluster\n        name = A\n        nodes = 40\n"
        "    cluster\n        name = B\n        nodes = 40\n"
        "    cluster\n        name = C\n        nodes = 40\n", NULL, 0);
    assert (platform);
    tig_t *chain = s_chain (2, 100);
    grid_t *grid = grid_new (platform);
    size_t placement [2], reserved = 0, reserved_where = SIZE_MAX;
    int rc = mapper_map ("maheve", grid, chain, placement);
    for (size_t node = 0; node < grid_node_count (grid); node++)
        if (grid_node_state (grid, node) == GRID_RESERVED) {
            reserved++;
            reserved_where = grid_node_cluster (grid, node);
        }
    ok (rc == 0 && reserved == 2
        && grid_node_cluster (grid, placement [0]) == reserved_where
        && grid_node_cluster (grid, placement [1]) == reserved_where,
        "thrift: a 2-task job on 3 x 40 nodes keeps 2 spares, in its "
        "tasks' cluster");
    diag ("spares kept: %zu", reserved);
    grid_destroy (&grid);
    tig_destroy (&chain);
    platform_destroy (&platform);
}

//  A dead node's task goes to the spare MAHEVE holds in its cluster,
//  even when a free node there is more powerful: the spare is the job's
//  already.  A: speeds 1 1 1 0.5, two tasks: nodes 0 and 1 run them,
//  node 3 (the weakest) is the spare and node 2 stays free.
static void
s_test_reserved_first (void)
{
    platform_t *platform = platform_parse (
        "platform\n    name = one\n"
        "    cluster\n        name = A\n        nodes = 4\n"
        "        speeds = \"1 1 1 0.5\"\n", NULL, 0);
    assert (platform);
    tig_t *chain = s_chain (2, 100);
    grid_t *grid = grid_new (platform);
    size_t placement [2];
    int rc = mapper_map ("maheve", grid, chain, placement);
    bool shape = rc == 0 && grid_node_state (grid, 2) == GRID_FREE
              && grid_node_state (grid, 3) == GRID_RESERVED;
    size_t task = placement [0] == 0 ? 0 : 1;
    ok (shape && mapper_replace ("maheve", grid, chain, placement, task) == 0
        && placement [task] == 3,
        "replace: MAHEVE takes its cluster's spare before a free node");
    grid_destroy (&grid);
    tig_destroy (&chain);
    platform_destroy (&platform);
}

//  The default policy takes nodes in hand-out order
static void
s_test_order (void)
{
    platform_t *platform = platform_parse (s_low, NULL, 0);
    grid_t *grid = grid_new (platform);
    size_t bad [9] = { 0, 1, 2, 3, 4, 5, 6, 7, 7 };
    ok (grid_set_order (grid, bad) == -1 && grid_order_node (grid, 8) == 8,
        "order: a repeated node is refused, index order kept");
    size_t order [9] = { 8, 2, 6, 0, 1, 3, 4, 5, 7 };
    ok (grid_set_order (grid, order) == 0, "order: a permutation is taken");
    tig_t *tig = tig_new (3);
    size_t placement [3], want [] = { 8, 2, 6 };
    ok (mapper_map ("default", grid, tig, placement) == 0
        && s_same (placement, want, 3),
        "order: default maps on the first three in hand-out order");
    ok (mapper_replace ("default", grid, tig, placement, 1) == 0
        && placement [1] == 0, "order: default replaces with the next one");
    tig_destroy (&tig);
    grid_destroy (&grid);
    platform_destroy (&platform);
}

int
main (void)
{
    tap_plan (10 + 15 + 9 + 2 + 11 + 1 + 3 + 9 + 4 + 2 + 1 + 1);
    s_test_tig ();
    s_test_low ();
    s_test_high ();
    s_test_mappers ();
    s_test_locality ();
    s_test_locality_equal_links ();
    s_test_locality_cut ();
    s_test_reserved_first ();
    s_test_spares_thrift ();
    s_test_order ();
    return tap_done ();
}
