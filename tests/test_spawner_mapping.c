/*  =========================================================================
    test_spawner_mapping - the spawner places a job where its mapping says,
    and plans again when a planned daemon is taken before it is leased

    The super-node and the daemons are played by the test (a ROUTER each,
    plain links), so every step is seen and timed by messages, not clocks:
    the spawner asks for the grid's listing, reserves by id exactly the
    daemons MAHEVE chose on it (the library's plan on the same model),
    hears that one was taken meanwhile, asks for the listing again, plans
    again without it, and finally sends each task's ASSIGN to the daemon
    of the new plan.  The same job with job/mapping = default reserves the
    first daemons in listing order, whatever their cluster and power.
    =========================================================================
*/
#include "tap.h"
#include "spawner_live.h"
#include "spawner_plan.h"
#include "spawner_server.h"

#define DAEMONS 8
#define TASKS 3
#define WAIT_MSEC 20000         //  Bound on every wait of the test

typedef struct {
    zsock_t *supernode;         //  The super-node the spawner talks to
    zsock_t *daemons [DAEMONS]; //  The daemons' control endpoints
    jace_node_t nodes [DAEMONS];    //  As the listing describes them
} grid_t_;

//  Two clusters listed interleaved: B's daemons are twice as fast.
static void
s_grid_new (grid_t_ *grid)
{
    grid->supernode = zsock_new_router ("tcp://127.0.0.1:*");
    assert (grid->supernode);
    for (int i = 0; i < DAEMONS; i++) {
        grid->daemons [i] = zsock_new_router ("tcp://127.0.0.1:*");
        assert (grid->daemons [i]);
        jace_node_t *node = &grid->nodes [i];
        memset (node, 0, sizeof *node);
        snprintf (node->id, sizeof node->id, "d%d", i);
        char *endpoint = zsock_last_endpoint (grid->daemons [i]);
        snprintf (node->endpoint, sizeof node->endpoint, "%s", endpoint);
        snprintf (node->data, sizeof node->data, "%s", endpoint);
        zstr_free (&endpoint);
        snprintf (node->cluster, sizeof node->cluster, "%s",
                  i % 2 ? "B" : "A");
        node->power = i % 2 ? 2.0 : 1.0;
        //  Every daemon has the job's application (protocol 5).
        snprintf (node->apps, sizeof node->apps, "multisplit");
        node->cores = 1;
        node->memory = 1024;
        node->state = JACE_NODE_FREE;
        node->task = -1;
    }
}

static void
s_grid_destroy (grid_t_ *grid)
{
    zsock_destroy (&grid->supernode);
    for (int i = 0; i < DAEMONS; i++)
        zsock_destroy (&grid->daemons [i]);
}

static jace_msg_t *
s_listing (grid_t_ *grid)
{
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, "sn");
    for (int i = 0; i < DAEMONS; i++)
        jace_msg_add_node (reply, &grid->nodes [i]);
    jace_msg_set_param (reply, "link/A/B/latency_us", "2000");
    jace_msg_set_param (reply, "link/B/A/latency_us", "2000");
    return reply;
}

//  Serve the spawner as a super-node until it sends a RESERVE, which is
//  returned (or NULL after WAIT_MSEC): STATUS gets the listing, the rest
//  (lease renewals) nothing.
static jace_msg_t *
s_serve_until_reserve (grid_t_ *grid, size_t *listings)
{
    zpoller_t *poller = zpoller_new (grid->supernode, NULL);
    int64_t deadline = zclock_mono () + WAIT_MSEC;
    jace_msg_t *reserve = NULL;
    while (!reserve && zclock_mono () < deadline) {
        if (!zpoller_wait (poller, 100))
            continue;
        jace_msg_t *msg = jace_msg_recv (grid->supernode, NULL, 0, NULL, 0);
        if (!msg)
            continue;
        if (jace_msg_type (msg) == JACE_MSG_STATUS) {
            jace_msg_t *reply = s_listing (grid);
            jace_msg_set_routing_id (reply, jace_msg_routing_id (msg));
            jace_msg_send (&reply, grid->supernode);
            (*listings)++;
        }
        else
        if (jace_msg_type (msg) == JACE_MSG_RESERVE) {
            reserve = msg;
            msg = NULL;
        }
        jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return reserve;
}

//  GRANT the RESERVE's daemons but `skip` (may be NULL).
static void
s_grant (grid_t_ *grid, jace_msg_t *reserve, const char *skip)
{
    jace_msg_t *grant = jace_msg_new (JACE_MSG_GRANT);
    jace_msg_set_sender (grant, "sn");
    jace_msg_set_job (grant, jace_msg_job (reserve));
    jace_msg_set_count (grant, jace_msg_count (reserve));
    for (size_t i = 0; i < jace_msg_node_count (reserve); i++) {
        const char *id = jace_msg_node (reserve, i)->id;
        for (int d = 0; d < DAEMONS; d++)
            if (streq (grid->nodes [d].id, id)
            &&  !(skip && streq (skip, id))) {
                jace_node_t node = grid->nodes [d];
                node.state = JACE_NODE_LEASED;
                jace_msg_add_node (grant, &node);
            }
    }
    jace_msg_set_routing_id (grant, jace_msg_routing_id (reserve));
    jace_msg_send (&grant, grid->supernode);
}

static bool
s_reserve_names (jace_msg_t *reserve, const char *id)
{
    for (size_t i = 0; i < jace_msg_node_count (reserve); i++)
        if (streq (jace_msg_node (reserve, i)->id, id))
            return true;
    return false;
}

//  The plan the library makes on the grid's listing, `free` (may be NULL)
//  counted free whatever the listing says.
static int
s_expected_plan (grid_t_ *grid, const char *mapping, spawner_job_t *job,
                 spawner_plan_t *plan)
{
    jace_msg_t *listing = s_listing (grid);
    char reason [256];
    spawner_live_t *live = spawner_live_new (listing, NULL, 0, reason,
                                             sizeof reason);
    tig_t *tig = spawner_plan_graph (job, TASKS, reason, sizeof reason);
    int rc = live && tig ? spawner_plan_map (mapping, live, tig,
        (size_t) spawner_job_spares (job), plan, reason, sizeof reason) : -1;
    if (rc)
        diag (reason);
    //  Node numbers to ids: the test compares ids.
    for (size_t i = 0; rc == 0 && i < plan->tasks; i++)
        plan->placement [i] = (size_t) atoi (
            spawner_live_node (live, plan->placement [i])->id + 1);
    for (size_t i = 0; rc == 0 && i < plan->spare_count; i++)
        plan->spares [i] = (size_t) atoi (
            spawner_live_node (live, plan->spares [i])->id + 1);
    tig_destroy (&tig);
    spawner_live_destroy (&live);
    jace_msg_destroy (&listing);
    return rc;
}

//  Wait for the ASSIGN of every task; writes the daemon of each rank.
static size_t
s_collect_assigns (grid_t_ *grid, int *daemon_of)
{
    zpoller_t *poller = zpoller_new (NULL);
    for (int i = 0; i < DAEMONS; i++)
        zpoller_add (poller, grid->daemons [i]);
    zpoller_add (poller, grid->supernode);
    size_t seen = 0;
    int64_t deadline = zclock_mono () + WAIT_MSEC;
    while (seen < TASKS && zclock_mono () < deadline) {
        zsock_t *which = (zsock_t *) zpoller_wait (poller, 100);
        if (!which)
            continue;
        jace_msg_t *msg = jace_msg_recv (which, NULL, 0, NULL, 0);
        for (int i = 0; msg && i < DAEMONS; i++)
            if (which == grid->daemons [i]
            &&  jace_msg_type (msg) == JACE_MSG_ASSIGN
            &&  jace_msg_task (msg) >= 0 && jace_msg_task (msg) < TASKS) {
                daemon_of [jace_msg_task (msg)] = i;
                seen++;
            }
        jace_msg_destroy (&msg);
    }
    zpoller_destroy (&poller);
    return seen;
}

static void
s_write_job (const char *path, const char *mapping)
{
    FILE *file = fopen (path, "w");
    assert (file);
    fprintf (file,
             "job\n"
             "    application = \"multisplit\"\n"
             "    tasks = %d\n"
             "    mapping = \"%s\"\n"
             "    reserve_timeout = 30\n"
             "    max_seconds = 60\n"
             "problem\n"
             "    kind = \"poisson2d\"\n"
             "    n = 30\n", TASKS, mapping);
    fclose (file);
}

static zactor_t *
s_spawner_new (grid_t_ *grid, const char *folder, spawner_job_t *job,
               spawner_options_t *options, spawner_server_config_t *config,
               char *endpoint)
{
    char *bound = zsock_last_endpoint (grid->supernode);
    snprintf (endpoint, 256, "%s", bound);
    zstr_free (&bound);
    memset (options, 0, sizeof *options);
    options->supernode = endpoint;
    options->quiet = true;
    static char events [256], secrets [256];
    snprintf (events, sizeof events, "%s/events.jsonl", folder);
    snprintf (secrets, sizeof secrets, "%s/secrets", folder);
    options->events_path = events;
    options->secrets_dir = secrets;
    *config = (spawner_server_config_t) { .job = job, .options = options };
    return zactor_new (spawner_server_actor, config);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_set_logident ("test_spawner_mapping");
    tap_plan (11);
    char folder [] = "/tmp/jace-mapping.XXXXXX";
    assert (mkdtemp (folder));
    char job_path [256], reason [512] = "", endpoint [256];
    snprintf (job_path, sizeof job_path, "%s/job.zpl", folder);

    //  MAHEVE, a daemon taken between planning and leasing
    s_write_job (job_path, "maheve");
    spawner_job_t *job = spawner_job_load (job_path, NULL, reason,
                                           sizeof reason);
    ok (job != NULL, "a job with job/mapping = maheve loads");
    if (!job)
        diag (reason);
    grid_t_ grid;
    s_grid_new (&grid);
    spawner_plan_t expected = { .tasks = 0 };
    ok (s_expected_plan (&grid, "maheve", job, &expected) == 0,
        "the library plans the job on the listing");
    spawner_options_t options;
    spawner_server_config_t config;
    zactor_t *spawner = s_spawner_new (&grid, folder, job, &options,
                                       &config, endpoint);
    size_t listings = 0;
    jace_msg_t *reserve = s_serve_until_reserve (&grid, &listings);
    bool same = reserve && listings > 0 && (size_t) jace_msg_count (reserve)
                == expected.tasks + expected.spare_count
             && jace_msg_node_count (reserve)
                == expected.tasks + expected.spare_count;
    for (size_t i = 0; same && i < expected.tasks; i++)
        same = s_reserve_names (reserve, grid.nodes [expected.placement [i]].id);
    for (size_t i = 0; same && i < expected.spare_count; i++)
        same = s_reserve_names (reserve, grid.nodes [expected.spares [i]].id);
    ok (same, "after one listing, the spawner reserves by id exactly the "
        "daemons and spares the library's MAHEVE plan names");
    //  The first task's daemon is taken by someone else meanwhile.
    int taken = (int) expected.placement [0];
    if (reserve)
        s_grant (&grid, reserve, grid.nodes [taken].id);
    jace_msg_destroy (&reserve);
    grid.nodes [taken].state = JACE_NODE_LEASED;
    size_t before = listings;
    reserve = s_serve_until_reserve (&grid, &listings);
    ok (reserve && listings > before,
        "a planned daemon taken meanwhile makes the spawner look again");
    ok (reserve && !s_reserve_names (reserve, grid.nodes [taken].id),
        "and reserve others, never the taken one");
    if (reserve)
        s_grant (&grid, reserve, NULL);
    jace_msg_destroy (&reserve);
    int daemon_of [TASKS] = { -1, -1, -1 };
    size_t assigned = s_collect_assigns (&grid, daemon_of);
    bool avoided = assigned == TASKS;
    for (int i = 0; i < TASKS; i++)
        avoided = avoided && daemon_of [i] != taken;
    ok (avoided, "every task is assigned, none to the taken daemon");
    //  The second plan: the listing with the taken daemon leased, the
    //  daemons granted before (held by the spawner) free for it.
    spawner_plan_clear (&expected);
    grid.nodes [taken].state = JACE_NODE_LEASED;
    ok (s_expected_plan (&grid, "maheve", job, &expected) == 0
        && daemon_of [0] == (int) expected.placement [0]
        && daemon_of [1] == (int) expected.placement [1]
        && daemon_of [2] == (int) expected.placement [2],
        "tasks run where the new plan puts them");
    char events [256];
    snprintf (events, sizeof events, "%s/events.jsonl", folder);
    ok (tap_file_has (events, "\"event\":\"replan\""),
        "the events record the re-plan");
    ok (tap_file_has (events, "\"event\":\"plan\"")
        && tap_file_has (events, "\"mapping\":\"maheve\""),
        "and the plan, with its mapping");
    zactor_destroy (&spawner);
    spawner_plan_clear (&expected);
    spawner_job_destroy (&job);
    s_grid_destroy (&grid);

    //  default: the listing's order, blind to cluster and power
    s_write_job (job_path, "default");
    job = spawner_job_load (job_path, NULL, reason, sizeof reason);
    ok (job != NULL, "a job with job/mapping = default loads");
    s_grid_new (&grid);
    spawner = s_spawner_new (&grid, folder, job, &options, &config,
                             endpoint);
    listings = 0;
    reserve = s_serve_until_reserve (&grid, &listings);
    bool in_order = reserve && jace_msg_node_count (reserve) == TASKS;
    for (int i = 0; in_order && i < TASKS; i++)
        in_order = s_reserve_names (reserve, grid.nodes [i].id);
    ok (in_order, "default reserves the first daemons listed (A's slow "
        "and B's fast alike)");
    jace_msg_destroy (&reserve);
    zactor_destroy (&spawner);
    spawner_job_destroy (&job);
    s_grid_destroy (&grid);
    char command [512];
    snprintf (command, sizeof command, "rm -rf '%s'", folder);
    if (system (command) != 0)
        diag ("could not remove the test's folder");
    return tap_done ();
}
