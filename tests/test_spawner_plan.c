/*  =========================================================================
    test_spawner_plan - the live model and the plans (docs/MAPPING.md 4)

    A STATUS_REPLY made by hand for a heterogeneous 3-cluster grid, listed
    out of cluster order, with measured, unmeasured and malformed links:
    MAHEVE on the live model equals mapper_map on the same platform built
    with platform_new_live; replacement prefers a reserved node of the dead
    node's cluster, then a re-sorted cluster; default follows the listing;
    simple sorts; bad records are refused; job/mapping; a 64-task plan on
    128 daemons is quick.
    =========================================================================
*/
#include "spawner_plan.h"
#include "tap.h"

#include <math.h>

static jace_node_t
s_node (const char *id, const char *cluster, double power, int64_t state)
{
    jace_node_t node;
    memset (&node, 0, sizeof node);
    snprintf (node.id, sizeof node.id, "%s", id);
    snprintf (node.cluster, sizeof node.cluster, "%s", cluster);
    snprintf (node.endpoint, sizeof node.endpoint, "tcp://127.0.0.1:1");
    node.power = power;
    node.cores = 1;
    node.state = state;
    node.task = -1;
    return node;
}

//  B (8 daemons, 2 GFLOP/s, B-3 2.5), A (6, 4 GFLOP/s, A-5 leased), C (10,
//  1 GFLOP/s, C-9 working), listed B-0 A-0 C-0 B-1 A-1 C-1 ...
static jace_msg_t *
s_listing (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_STATUS_REPLY);
    for (int i = 0; i < 10; i++) {
        char id [32];
        if (i < 8) {
            snprintf (id, sizeof id, "B-%d", i);
            jace_node_t node = s_node (id, "B", i == 3 ? 2.5 : 2.0,
                                       JACE_NODE_FREE);
            jace_msg_add_node (msg, &node);
        }
        if (i < 6) {
            snprintf (id, sizeof id, "A-%d", i);
            jace_node_t node = s_node (id, "A", 4.0, i == 5
                                       ? JACE_NODE_LEASED : JACE_NODE_FREE);
            jace_msg_add_node (msg, &node);
        }
        snprintf (id, sizeof id, "C-%d", i);
        jace_node_t node = s_node (id, "C", 1.0, i == 9
                                   ? JACE_NODE_WORKING : JACE_NODE_FREE);
        jace_msg_add_node (msg, &node);
    }
    jace_msg_set_param (msg, "link/A/B/latency_us", "2000");
    jace_msg_set_param (msg, "link/B/A/latency_us", "2000");
    jace_msg_set_param (msg, "link/A/B/bandwidth_mbps", "500");
    jace_msg_set_param (msg, "link/B/A/bandwidth_mbps", "500");
    jace_msg_set_param (msg, "link/A/C/latency_us", "10000");
    jace_msg_set_param (msg, "link/C/A/latency_us", "10000");
    jace_msg_set_param (msg, "link/A/C/bandwidth_mbps", "50");
    jace_msg_set_param (msg, "link/A/A/latency_us", "40");
    jace_msg_set_param (msg, "link/A/A/samples", "8");
    //  Malformed: ignored
    jace_msg_set_param (msg, "link/B/C/latency_us", "fast");
    jace_msg_set_param (msg, "link/C/B/bandwidth_mbps", "-5");
    jace_msg_set_param (msg, "link/B/B/latency_us", "12abc");
    jace_msg_set_param (msg, "link/A//latency_us", "1");
    jace_msg_set_param (msg, "link/C/C/latency_us/x", "1");
    jace_msg_set_param (msg, "link/Z/C/latency_us", "1");
    return msg;
}

//  A chain of 12 tasks of 1e8 flops, 1000 values each way
static tig_t *
s_chain (size_t tasks)
{
    tig_t *tig = tig_new (tasks);
    for (size_t task = 0; task < tasks; task++) {
        tig_set_cost (tig, task, 1e8);
        if (task > 0)
            tig_add_edge (tig, task - 1, task, 1000);
    }
    return tig;
}

static const char *
s_id (spawner_live_t *live, size_t node)
{
    return spawner_live_node (live, node)->id;
}

static void
s_test_model (void)
{
    jace_msg_t *msg = s_listing ();
    char reason [256] = "";
    spawner_live_t *live = spawner_live_new (msg, NULL, 0, reason,
                                             sizeof reason);
    ok (live != NULL, "the live model of a 3-cluster listing");
    if (!live)
        diag ("%s", reason);
    platform_t *platform = spawner_live_platform (live);
    grid_t *grid = spawner_live_grid (live);
    is_int ((long long) spawner_live_count (live), 24, "24 daemons");
    ok (streq (platform_cluster_name (platform, 0), "B")
        && streq (platform_cluster_name (platform, 1), "A")
        && streq (platform_cluster_name (platform, 2), "C"),
        "clusters in the order the listing first names them");
    ok (streq (s_id (live, 0), "B-0") && streq (s_id (live, 8), "A-0")
        && streq (s_id (live, 23), "C-9")
        && spawner_live_find (live, "A-3") == 11
        && spawner_live_find (live, "nope") == -1,
        "nodes numbered cluster by cluster, in listing order");
    ok (grid_order_node (grid, 0) == 0 && grid_order_node (grid, 1) == 8
        && grid_order_node (grid, 2) == 14 && grid_order_node (grid, 3) == 1,
        "the hand-out order is the listing's");
    ok (grid_node_state (grid, 13) == GRID_USED
        && grid_node_state (grid, 23) == GRID_USED
        && grid_node_state (grid, 12) == GRID_FREE,
        "leased and working daemons are used, free ones free");
    is_double (grid_node_power (grid, 3), 2.5, 0, "measured power kept");
    is_int ((long long) spawner_live_links_measured (live), 4,
            "A-B and A-C measured both ways (malformed B-C ignored)");
    is_int ((long long) spawner_live_links_total (live), 6,
            "6 ordered pairs in all");
    //  Clusters: B 0, A 1, C 2
    ok (platform_latency_us (platform, 1, 1) == 40
        && platform_bandwidth_mbps (platform, 1, 1) == 1000,
        "A's measured intra latency, default intra bandwidth");
    ok (platform_latency_us (platform, 0, 0) == 50
        && platform_bandwidth_mbps (platform, 2, 2) == 1000,
        "unmeasured intra-cluster links: 50 us, 1000 Mb/s");
    ok (platform_latency_us (platform, 0, 2) == 10000
        && platform_bandwidth_mbps (platform, 2, 0) == 50,
        "unmeasured B-C: the slowest measured link (10000 us, 50 Mb/s)");
    ok (platform_bandwidth_mbps (platform, 2, 1) == 50,
        "C/A bandwidth from its A/C twin");
    spawner_live_destroy (&live);

    //  Without any inter-cluster measure: 5000 us, 100 Mb/s
    jace_msg_t *bare = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_node_t one = s_node ("x", "X", 1, JACE_NODE_FREE);
    jace_node_t two = s_node ("y", "Y", 1, JACE_NODE_FREE);
    jace_msg_add_node (bare, &one);
    jace_msg_add_node (bare, &two);
    //  A failover lists y twice, the second time leased: once, used
    two.state = JACE_NODE_LEASED;
    jace_msg_add_node (bare, &two);
    jace_node_t extra [2] = { s_node ("z", "Z", 3, JACE_NODE_WORKING),
                              s_node ("x", "X", 1, JACE_NODE_WORKING) };
    live = spawner_live_new (bare, extra, 2, reason, sizeof reason);
    ok (live && spawner_live_count (live) == 3
        && grid_node_state (spawner_live_grid (live), 1) == GRID_USED
        && grid_node_state (spawner_live_grid (live), 0) == GRID_FREE,
        "a daemon listed twice counts once, used if either says so");
    ok (live && streq (s_id (live, 2), "z")
        && grid_node_state (spawner_live_grid (live), 2) == GRID_USED,
        "an extra record not in the listing is added, used");
    ok (live && platform_latency_us (spawner_live_platform (live), 0, 1)
        == 5000 && platform_bandwidth_mbps (spawner_live_platform (live),
                                            1, 0) == 100
        && spawner_live_links_measured (live) == 0,
        "nothing measured: inter-cluster links 5000 us, 100 Mb/s");
    spawner_live_destroy (&live);
    jace_msg_destroy (&bare);

    //  Bad records
    struct { jace_node_t node; const char *want; } bad [] = {
        { s_node ("p", "P", 0, JACE_NODE_FREE), "power" },
        { s_node ("p", "P", NAN, JACE_NODE_FREE), "power" },
        { s_node ("p", "P", -1, JACE_NODE_FREE), "power" },
        { s_node ("p", "", 1, JACE_NODE_FREE), "cluster" },
        { s_node ("", "P", 1, JACE_NODE_FREE), "id" },
    };
    //  One bad record is left out, with the reason; the rest is the grid.
    jace_msg_t *good = s_listing ();
    live = spawner_live_new (good, NULL, 0, reason, sizeof reason);
    size_t good_count = live ? spawner_live_count (live) : 0;
    spawner_live_destroy (&live);
    jace_msg_destroy (&good);
    bool refused = good_count > 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        jace_msg_t *list = s_listing ();
        jace_msg_add_node (list, &bad [i].node);
        reason [0] = 0;
        live = spawner_live_new (list, NULL, 0, reason, sizeof reason);
        const char *why = "";
        if (!live || spawner_live_count (live) != good_count
        ||  spawner_live_skipped (live, &why) != 1
        ||  !strstr (why, bad [i].want)
        ||  (*bad [i].node.id && spawner_live_find (live, "p") >= 0)) {
            refused = false;
            diag ("record %zu: %s", i, live ? why : reason);
        }
        spawner_live_destroy (&live);
        //  Alone, it leaves no usable daemon: no model, and why.
        jace_msg_t *alone = jace_msg_new (JACE_MSG_STATUS_REPLY);
        jace_msg_add_node (alone, &bad [i].node);
        reason [0] = 0;
        live = spawner_live_new (alone, NULL, 0, reason, sizeof reason);
        if (live || !strstr (reason, bad [i].want)) {
            refused = false;
            diag ("record %zu alone: %s", i, reason);
        }
        spawner_live_destroy (&live);
        jace_msg_destroy (&alone);
        jace_msg_destroy (&list);
    }
    ok (refused, "a record with zero, NaN or negative power, no cluster or "
        "no id is left out with the reason, the rest of the grid kept; "
        "alone, it makes no model");
    jace_msg_t *empty = jace_msg_new (JACE_MSG_STATUS_REPLY);
    ok (spawner_live_new (empty, NULL, 0, reason, sizeof reason) == NULL
        && strstr (reason, "no daemon"), "an empty listing is refused");
    jace_msg_destroy (&empty);
    jace_msg_destroy (&msg);
}

//  MAHEVE on the live model equals mapper_map on the same platform made
//  with platform_new_live; its replacements
static void
s_test_maheve (void)
{
    jace_msg_t *msg = s_listing ();
    char reason [256];
    spawner_live_t *live = spawner_live_new (msg, NULL, 0, reason,
                                             sizeof reason);
    tig_t *tig = s_chain (12);
    spawner_plan_t plan;
    memset (&plan, 0, sizeof plan);
    ok (spawner_plan_map ("maheve", live, tig, 0, &plan, reason,
                          sizeof reason) == 0, "MAHEVE plans 12 tasks");

    const char *names [] = { "B", "A", "C" };
    size_t nodes [] = { 8, 6, 10 };
    double power [24];
    for (size_t i = 0; i < 24; i++)
        power [i] = i < 8 ? (i == 3 ? 2.5 : 2.0) : i < 14 ? 4.0 : 1.0;
    double latency [] = { 50, 2000, 10000, 2000, 40, 10000,
                          10000, 10000, 50 };
    double bandwidth [] = { 1000, 500, 50, 500, 1000, 50, 50, 50, 1000 };
    platform_t *same = platform_new_live ("same", 3, names, nodes, power,
                                          latency, bandwidth, NULL, 0);
    grid_t *grid = grid_new (same);
    grid_set_state (grid, 13, GRID_USED);
    grid_set_state (grid, 23, GRID_USED);
    size_t want [12];
    ok (mapper_map ("maheve", grid, tig, want) == 0
        && memcmp (want, plan.placement, sizeof want) == 0,
        "the live placement is mapper_map's on the same platform");
    bool spares_same = true;
    size_t reserved = 0;
    for (size_t node = 0; node < 24; node++) {
        bool live_spare = grid_node_state (spawner_live_grid (live), node)
                        == GRID_RESERVED;
        reserved += live_spare;
        spares_same = spares_same && live_spare
                    == (grid_node_state (grid, node) == GRID_RESERVED);
    }
    ok (spares_same && reserved == 3 && plan.spare_count == 3,
        "the same spares: one per cluster");
    is_double (plan.predicted_seconds,
               grid_execution_time (grid, tig, want), 1e-15,
               "the same predicted ET, in seconds");
    is_double (plan.hd, grid_heterogeneity (spawner_live_grid (live)), 0,
               "hd of the model");
    diag ("MAHEVE: hd %.3f, predicted %.3f ms, planned in %.3f ms",
          plan.hd, plan.predicted_seconds * 1e3, plan.plan_msec);

    //  Replacement: first A's spare, then the re-sorted clusters
    grid_t *model = spawner_live_grid (live);
    size_t task = 0;
    while (grid_node_cluster (model, plan.placement [task]) != 1)
        task++;
    char why [256] = "";
    grid_set_state (model, plan.placement [task], GRID_DEAD);
    ok (spawner_plan_replace ("maheve", live, tig, plan.placement, task, false,
                              why, sizeof why) == 0
        && grid_node_cluster (model, plan.placement [task]) == 1
        && streq (why, "a reserved node of its cluster A"),
        "a dead node of A: A's reserved node");
    diag ("why: %s", why);
    grid_set_state (model, plan.placement [task], GRID_DEAD);
    ok (spawner_plan_replace ("maheve", live, tig, plan.placement, task, false,
                              why, sizeof why) == 0
        && grid_node_cluster (model, plan.placement [task]) != 1
        && strstr (why, "cluster A has no node available: a ")
        && strstr (why, " node of the best of the re-sorted clusters, "),
        "A exhausted: the re-sorted clusters");
    diag ("why: %s", why);
    spawner_plan_clear (&plan);
    grid_destroy (&grid);
    platform_destroy (&same);
    tig_destroy (&tig);
    spawner_live_destroy (&live);
    jace_msg_destroy (&msg);
}

//  default follows the listing, simple sorts
static void
s_test_default_simple (void)
{
    jace_msg_t *msg = s_listing ();
    char reason [256];
    spawner_live_t *live = spawner_live_new (msg, NULL, 0, reason,
                                             sizeof reason);
    tig_t *tig = s_chain (12);
    spawner_plan_t plan;
    memset (&plan, 0, sizeof plan);
    ok (spawner_plan_map ("default", live, tig, 2, &plan, reason,
                          sizeof reason) == 0, "default plans 12 tasks");
    //  Listing: B-0 A-0 C-0 B-1 A-1 C-1 B-2 A-2 C-2 B-3 A-3 C-3 B-4 A-4
    //  C-4 B-5 (A-5 leased) C-5 ...
    const char *want [] = { "B-0", "A-0", "C-0", "B-1", "A-1", "C-1",
                            "B-2", "A-2", "C-2", "B-3", "A-3", "C-3" };
    bool in_order = true;
    for (size_t task = 0; task < 12; task++)
        in_order = in_order && streq (s_id (live, plan.placement [task]),
                                      want [task]);
    ok (in_order, "default: the first 12 free daemons in listing order, "
        "whatever their cluster and power");
    ok (plan.spare_count == 2
        && streq (s_id (live, plan.spares [0]), "B-4")
        && streq (s_id (live, plan.spares [1]), "A-4"),
        "default: spares are the next in listing order");
    char why [256];
    grid_set_state (spawner_live_grid (live), plan.placement [0], GRID_DEAD);
    ok (spawner_plan_replace ("default", live, tig, plan.placement, 0, false, why,
                              sizeof why) == 0
        && streq (s_id (live, plan.placement [0]), "B-4")
        && streq (why, "first reserved daemon in hand-out order"),
        "default: the first available daemon in hand-out order (its "
        "spare B-4)");
    spawner_plan_clear (&plan);
    spawner_live_destroy (&live);

    live = spawner_live_new (msg, NULL, 0, reason, sizeof reason);
    ok (spawner_plan_map ("simple", live, tig, 2, &plan, reason,
                          sizeof reason) == 0, "simple plans 12 tasks");
    const char *sorted [] = { "A-0", "A-1", "A-2", "A-3", "A-4", "B-3",
                              "B-0", "B-1", "B-2", "B-4", "B-5", "B-6" };
    in_order = true;
    for (size_t task = 0; task < 12; task++)
        in_order = in_order && streq (s_id (live, plan.placement [task]),
                                      sorted [task]);
    ok (in_order, "simple: by cluster name, then power, then id");
    ok (plan.spare_count == 2
        && streq (s_id (live, plan.spares [0]), "B-7")
        && streq (s_id (live, plan.spares [1]), "C-0"),
        "simple: spares are the next in that order");
    grid_set_state (spawner_live_grid (live), plan.placement [0], GRID_DEAD);
    ok (spawner_plan_replace ("simple", live, tig, plan.placement, 0, false, why,
                              sizeof why) == 0
        && streq (s_id (live, plan.placement [0]), "B-7")
        && streq (why, "cluster A has no node available: the most powerful "
                  "reserved node, in B"),
        "simple: A has none, the most powerful reserved (B-7, not C-0)");
    diag ("why: %s", why);
    grid_set_state (spawner_live_grid (live), plan.placement [6], GRID_DEAD);
    ok (spawner_plan_replace ("simple", live, tig, plan.placement, 6, false, why,
                              sizeof why) == 0
        && streq (s_id (live, plan.placement [6]), "C-0"),
        "simple: a reserved node before a free one of the same cluster");
    spawner_plan_clear (&plan);
    spawner_live_destroy (&live);

    //  Every mapping plans; an unknown one is refused
    for (const char *name = "maheve-locality"; name; ) {
        live = spawner_live_new (msg, NULL, 0, reason, sizeof reason);
        int rc = spawner_plan_map (name, live, tig, 4, &plan, reason,
                                   sizeof reason);
        char label [128];
        snprintf (label, sizeof label, "%s plans 12 tasks and 4 spares or "
                  "more", name);
        ok (rc == 0 && plan.spare_count >= 4, label);
        diag ("%s: predicted %.3f ms", name, plan.predicted_seconds * 1e3);
        spawner_plan_clear (&plan);
        spawner_live_destroy (&live);
        name = streq (name, "maheve-locality") ? "aiac-qm"
             : streq (name, "aiac-qm") ? "f-ec" : NULL;
    }
    live = spawner_live_new (msg, NULL, 0, reason, sizeof reason);
    ok (spawner_plan_map ("nope", live, tig, 0, &plan, reason,
                          sizeof reason) == -1 && strstr (reason, "simple"),
        "an unknown mapping is refused, naming the known ones");
    tig_t *big = s_chain (23);
    ok (spawner_plan_map ("maheve", live, big, 0, &plan, reason,
                          sizeof reason) == -1
        && grid_node_state (spawner_live_grid (live), 0) == GRID_FREE,
        "23 tasks on 22 free daemons are refused, nothing taken");
    tig_destroy (&big);
    spawner_live_destroy (&live);
    tig_destroy (&tig);
    jace_msg_destroy (&msg);
}

//  64 tasks on 128 daemons
static void
s_test_speed (void)
{
    jace_msg_t *msg = jace_msg_new (JACE_MSG_STATUS_REPLY);
    for (int i = 0; i < 128; i++) {
        char id [32], cluster [8];
        snprintf (id, sizeof id, "d%03d", i);
        snprintf (cluster, sizeof cluster, "K%d", i % 4);
        jace_node_t node = s_node (id, cluster, 1 + (i % 7) * 0.5,
                                   JACE_NODE_FREE);
        jace_msg_add_node (msg, &node);
    }
    jace_msg_set_param (msg, "link/K0/K1/latency_us", "3000");
    char reason [256];
    tig_t *tig = tig_new_banded (64000, 1000, 64);
    double worst = 0;
    const char *names [] = { "maheve", "maheve-locality", "aiac-qm", "f-ec",
                             "default", "simple" };
    for (size_t i = 0; i < 6; i++) {
        spawner_live_t *live = spawner_live_new (msg, NULL, 0, reason,
                                                 sizeof reason);
        spawner_plan_t plan;
        memset (&plan, 0, sizeof plan);
        int rc = spawner_plan_map (names [i], live, tig, 8, &plan, reason,
                                   sizeof reason);
        assert (rc == 0);
        diag ("64 tasks on 128 daemons, %s: %.3f ms (predicted %.3f ms)",
              names [i], plan.plan_msec, plan.predicted_seconds * 1e3);
        worst = fmax (worst, plan.plan_msec);
        spawner_plan_clear (&plan);
        spawner_live_destroy (&live);
    }
    ok (worst < 200, "64 tasks on 128 daemons plan in well under 200 ms "
        "with every mapping");
    tig_destroy (&tig);
    jace_msg_destroy (&msg);
}

//  A job file in a temporary folder; returns its path (static)
static const char *
s_job (const char *job_lines)
{
    static char path [256];
    snprintf (path, sizeof path, "%s/test_spawner_plan.%d.job",
              getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp", (int) getpid ());
    FILE *file = fopen (path, "w");
    assert (file);
    fprintf (file, "job\n    application = \"jacobi2d\"\n    tasks = 4\n%s"
             "problem\n    kind = \"poisson2d\"\n    n = 16\n", job_lines);
    fclose (file);
    return path;
}

static void
s_test_job (void)
{
    char reason [1024] = "";
    const char *path = s_job ("");
    spawner_job_t *job = spawner_job_load (path, NULL, reason, sizeof reason);
    ok (job && streq (spawner_job_mapping (job), "maheve"),
        "job/mapping defaults to maheve");
    tig_t *tig = job ? spawner_plan_graph (job, 4, reason, sizeof reason)
                     : NULL;
    //  jacobi2d's describe: 16 grid rows in 4 blocks of 4 x 16 points, a
    //  chain whose every need is one grid row (16 values) each way
    ok (tig && tig_count (tig) == 4
        && tig_cost (tig, 0) == 6.0 * 4 * 16   //  6 flops a point
        && tig_degree (tig, 0) == 1 && tig_degree (tig, 1) == 2
        && tig_edge_amount (tig, 0, 0) == 32,
        "the graph is the application's describe: cost and needs per block");
    tig_destroy (&tig);
    spawner_job_destroy (&job);
    job = spawner_job_load (s_job ("    mapping = \"maheve-locality\"\n"),
                            NULL, reason, sizeof reason);
    ok (job && streq (spawner_job_mapping (job), "maheve-locality"),
        "job/mapping = maheve-locality");
    spawner_job_destroy (&job);
    job = spawner_job_load (s_job ("    replacement = \"any\"\n"), NULL,
                            reason, sizeof reason);
    ok (job && streq (spawner_job_mapping (job), "simple"),
        "job/replacement alone maps with simple");
    spawner_job_destroy (&job);
    job = spawner_job_load (s_job ("    replacement = \"any\"\n"
                                   "    mapping = \"simple\"\n"), NULL,
                            reason, sizeof reason);
    ok (job && streq (spawner_job_mapping (job), "simple"),
        "job/replacement with job/mapping = simple");
    spawner_job_destroy (&job);
    job = spawner_job_load (s_job ("    replacement = \"any\"\n"
                                   "    mapping = \"maheve\"\n"), NULL,
                            reason, sizeof reason);
    ok (!job && strstr (reason, "job/replacement applies to job/mapping = "
                        "simple only"), "job/replacement with maheve is an "
        "error that says so");
    diag ("%s", reason);
    job = spawner_job_load (s_job ("    mapping = \"best\"\n"), NULL,
                            reason, sizeof reason);
    ok (!job && strstr (reason, "job/mapping = 'best' is unknown (known: "
                        "maheve, maheve-locality, aiac-qm, f-ec, default, "
                        "simple)"), "an unknown job/mapping lists the known "
        "ones");
    //  Keys only the daemons read are checked here too: "mode = fast" ran
    //  asynchronously
    job = spawner_job_load (s_job ("    mode = \"fast\"\n"), NULL, reason,
                            sizeof reason);
    char want [512];
    snprintf (want, sizeof want, "%s:4: job/mode = 'fast' is unknown "
              "(known: async, sync)", path);
    if (!ok (!job && streq (reason, want), "an unknown job/mode is refused "
             "with its line"))
        diag ("%s", reason);
    zlist_t *overrides = zlist_new ();
    zlist_append (overrides, "job/tasks=2.5");
    job = spawner_job_load (s_job (""), overrides, reason, sizeof reason);
    if (!ok (!job && streq (reason, "--set job/tasks=2.5: job/tasks = '2.5' "
                            "is not a whole number"),
             "a fraction of a task is refused with where it was set"))
        diag ("%s", reason);
    zlist_purge (overrides);
    zlist_append (overrides, "job/tasks=0x4");
    job = spawner_job_load (s_job (""), overrides, reason, sizeof reason);
    ok (!job && strstr (reason, "job/tasks = '0x4' is not a number"),
        "a hexadecimal number is refused");
    zlist_purge (overrides);
    zlist_append (overrides, "exchange/algorithm=tree");
    job = spawner_job_load (s_job (""), overrides, reason, sizeof reason);
    ok (!job && strstr (reason, "exchange/algorithm = 'tree' is unknown "
                        "(known: lg, direct, flat)"),
        "an unknown exchange/algorithm is refused at submission");
    zlist_destroy (&overrides);
    unlink (path);
}

//  Every mapper of the library can be asked of the spawner, by its name,
//  and the list and the message agree.
static void
s_test_names (void)
{
    const char *const *list = spawner_plan_list ();
    bool all = true;
    for (const char **name = mapper_names (); *name; name++)
        all = all && spawner_plan_exists (*name);
    char joined [256] = "";
    size_t count = 0;
    for (; list [count]; count++)
        snprintf (joined + strlen (joined), sizeof joined - strlen (joined),
                  "%s%s", count ? ", " : "", list [count]);
    ok (all && count == 6 && streq (list [0], "maheve")
        && streq (list [count - 1], "simple")
        && streq (spawner_plan_names (), joined),
        "the spawner offers every mapper of the library, and simple, and "
        "its message names exactly its list");
}

int
main (void)
{
    tap_plan (18 + 7 + 14 + 1 + 11 + 1);
    s_test_names ();
    s_test_model ();
    s_test_maheve ();
    s_test_default_simple ();
    s_test_speed ();
    s_test_job ();
    return tap_done ();
}
