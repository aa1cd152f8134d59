/*  =========================================================================
    test_spawner_chain - an application without `describe` is mapped on
    the chain graph and runs

    jace_task.h promises that without describe "each task costs its rows
    and needs one value from each rank neighbour".  Both applications of
    the table describe their graphs, so nothing exercised that promise.
    This test adds to the application table (app_table_add, as a loaded
    plugin is added) "chain2d": jacobi2d less its describe.  Jacobi's true graph
    is a chain, so the fallback is the right model for it too.

    It checks the graph the spawner builds (costs and edges), that MAHEVE
    places the chain on the faster cluster of a listing, and that a job of
    chain2d on a super-node and four daemons, all actors in this process,
    is planned and ends with a verified answer.
    =========================================================================
*/
#include "tap.h"
#include "app_jacobi2d.h"
#include "app_table.h"
#include "daemon_server.h"
#include "supernode_server.h"
#include "spawner_nodes.h"
#include "spawner_plan.h"
#include "spawner_server.h"

#include <cblas.h>

#define TASKS 4
#define ROWS 24                 //  problem/n: grid rows, split in TASKS
#define WAIT_MSEC 60000         //  Bound on the job's run

//  jacobi2d without describe, filled in by main.
static jace_app_t s_chain2d;

//  --------------------------------------------------------------------------

static void
s_write_job (const char *path)
{
    FILE *file = fopen (path, "w");
    assert (file);
    fprintf (file,
             "job\n"
             "    application = \"chain2d\"\n"
             "    tasks = %d\n"
             "    tolerance = 1e-6\n"
             "    max_seconds = 50\n"
             "    heartbeat_timeout = 3000\n"
             "problem\n"
             "    kind = \"poisson2d\"\n"
             "    n = %d\n", TASKS, ROWS);
    fclose (file);
}

//  Each task costs its rows (ROWS / TASKS) and shares one value each way
//  with each rank neighbour: an edge of 2 (the mapping sums both ways).
static void
s_test_graph (spawner_job_t *job)
{
    char reason [512] = "";
    tig_t *tig = spawner_plan_graph (job, TASKS, reason, sizeof reason);
    if (!ok (tig != NULL, "a job without describe gets a task graph")) {
        diag ("%s", reason);
        return;
    }
    bool costs = true, edges = true;
    for (size_t task = 0; task < TASKS; task++) {
        costs = costs && tig_cost (tig, task) == ROWS / TASKS;
        size_t expected = (task > 0) + (task + 1 < TASKS);
        edges = edges && tig_degree (tig, task) == expected;
        for (size_t index = 0; index < tig_degree (tig, task); index++) {
            size_t other = tig_neighbour (tig, task, index);
            edges = edges && (other + 1 == task || task + 1 == other)
                  && tig_edge_amount (tig, task, index) == 2;
        }
    }
    ok (costs, "each task costs its rows");
    ok (edges, "each task is joined to its rank neighbours only, by 2 "
        "values an iteration");
    tig_destroy (&tig);
}

static jace_node_t
s_node (const char *id, const char *cluster, double power)
{
    jace_node_t node = { .power = power, .cores = 1, .memory = 1024,
                         .state = JACE_NODE_FREE, .task = -1 };
    snprintf (node.id, sizeof node.id, "%s", id);
    snprintf (node.cluster, sizeof node.cluster, "%s", cluster);
    snprintf (node.endpoint, sizeof node.endpoint, "tcp://%s:1", id);
    return node;
}

//  Six fast daemons in A (one kept as MAHEVE's spare), four slow ones in
//  B, 5 ms apart: MAHEVE keeps the chain in A.
static void
s_test_mapping (spawner_job_t *job)
{
    jace_msg_t *listing = jace_msg_new (JACE_MSG_STATUS_REPLY);
    for (int index = 0; index < 6; index++) {
        char id [16];
        snprintf (id, sizeof id, "a%d", index);
        jace_node_t node = s_node (id, "A", 4);
        jace_msg_add_node (listing, &node);
        snprintf (id, sizeof id, "b%d", index);
        node = s_node (id, "B", 1);
        if (index < 4)
            jace_msg_add_node (listing, &node);
    }
    jace_msg_set_param (listing, "link/A/B/latency_us", "5000");
    char reason [512] = "";
    spawner_live_t *live = spawner_live_new (listing, NULL, 0, reason,
                                             sizeof reason);
    tig_t *tig = spawner_plan_graph (job, TASKS, reason, sizeof reason);
    spawner_plan_t plan = { .tasks = 0 };
    int rc = live && tig ? spawner_plan_map ("maheve", live, tig, 0, &plan,
                                             reason, sizeof reason)
                         : -1;
    if (!ok (rc == 0 && plan.tasks == TASKS, "MAHEVE maps the chain"))
        diag ("%s", reason);
    bool in_a = rc == 0;
    for (size_t task = 0; in_a && task < plan.tasks; task++) {
        const jace_node_t *node = spawner_live_node (live,
                                                     plan.placement [task]);
        in_a = streq (node->cluster, "A");
        for (size_t other = 0; other < task; other++)
            in_a = in_a && plan.placement [other] != plan.placement [task];
    }
    ok (in_a, "every task on its own daemon of the faster cluster");
    ok (rc == 0 && isfinite (plan.predicted_seconds)
        && plan.predicted_seconds > 0,
        "the plan predicts a finite time per iteration");
    spawner_plan_clear (&plan);
    tig_destroy (&tig);
    spawner_live_destroy (&live);
    jace_msg_destroy (&listing);
}

//  Wait until the super-node lists `count` daemons.
static bool
s_wait_registered (const char *supernode, size_t count)
{
    int64_t deadline = zclock_mono () + 20000;
    while (zclock_mono () < deadline) {
        jace_msg_t *registry = spawner_nodes_query (supernode, NULL, 5000);
        size_t known = registry ? jace_msg_node_count (registry) : 0;
        jace_msg_destroy (&registry);
        if (known == count)
            return true;
        zclock_sleep (100);
    }
    return false;
}

static void
s_test_run (spawner_job_t *job, const char *job_path, const char *folder)
{
    supernode_config_t sn_config = { .bind = "tcp://127.0.0.1:*",
                                     .heartbeat_msec = 100,
                                     .timeout_msec = 2000 };
    zactor_t *supernode = zactor_new (supernode_server_actor, &sn_config);
    char *endpoint = supernode_server_endpoint (supernode);
    const char *supernodes [1] = { endpoint };
    zactor_t *daemons [TASKS];
    for (int index = 0; index < TASKS; index++) {
        char id [16];
        snprintf (id, sizeof id, "chain-d%d", index);
        daemon_config_t config = {
            .supernodes = supernodes, .supernode_count = 1,
            .cluster = index % 2 ? "B" : "A", .id = id, .speed = 1,
            .power = 1, .heartbeat_msec = 100,
            .checkpoint_memory = 16 << 20 };
        daemons [index] = zactor_new (daemon_server_actor, &config);
    }
    ok (endpoint && s_wait_registered (endpoint, TASKS),
        "a super-node and four daemons run as actors");

    char events [256], secrets [256];
    snprintf (events, sizeof events, "%s/events.jsonl", folder);
    snprintf (secrets, sizeof secrets, "%s/secrets", folder);
    spawner_options_t options = { .job_file = job_path,
                                  .supernode = endpoint,
                                  .events_path = events,
                                  .secrets_dir = secrets, .quiet = true };
    spawner_server_config_t config = { .job = job, .options = &options };
    zactor_t *spawner = zactor_new (spawner_server_actor, &config);
    zpoller_t *poller = zpoller_new (spawner, NULL);
    int rc = -1;
    if (zpoller_wait (poller, WAIT_MSEC) == spawner) {
        char *event = zstr_recv (spawner);
        char *code = zstr_recv (spawner);
        rc = code ? atoi (code) : -1;
        zstr_free (&event);
        zstr_free (&code);
    }
    zpoller_destroy (&poller);
    ok (tap_file_has (events, "\"event\":\"plan\",")
        && tap_file_has (events, "\"mapping\":\"maheve\""),
        "the job is planned by MAHEVE");
    ok (rc == 0, "the job of an application without describe ends with a "
        "verified answer");
    zactor_destroy (&spawner);
    for (int index = 0; index < TASKS; index++)
        zactor_destroy (&daemons [index]);
    zactor_destroy (&supernode);
    zstr_free (&endpoint);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_set_logident ("test_spawner_chain");
    openblas_set_num_threads (1);
    tap_plan (10);
    s_chain2d = app_jacobi2d;
    s_chain2d.name = "chain2d";
    s_chain2d.describe = NULL;
    char why [256];
    if (app_table_add (&s_chain2d, "test_spawner_chain", why, sizeof why)) {
        printf ("Bail out! %s\n", why);
        return 1;
    }

    char folder [] = "/tmp/jace-chain.XXXXXX";
    assert (mkdtemp (folder));
    char job_path [256], reason [512] = "";
    snprintf (job_path, sizeof job_path, "%s/job.zpl", folder);
    s_write_job (job_path);
    spawner_job_t *job = spawner_job_load (job_path, NULL, reason,
                                           sizeof reason);
    if (!ok (job != NULL && spawner_job_app (job) == &s_chain2d,
             "a job of chain2d loads, with the test's application"))
        diag ("%s", reason);
    if (job) {
        s_test_graph (job);
        s_test_mapping (job);
        s_test_run (job, job_path, folder);
    }
    spawner_job_destroy (&job);
    //  The folder also holds the events and the job's end record, which
    //  the spawner leaves beside its secret.
    zdir_t *dir = zdir_new (folder, NULL);
    zdir_remove (dir, true);
    zdir_destroy (&dir);
    return tap_done ();
}
