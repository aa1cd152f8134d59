/*  =========================================================================
    test_spawner_actors - a whole grid in one process: a super-node, eight
    daemons and a spawner, each an actor, talking over loopback

    The job is long enough that it is certainly running when the test,
    having seen a task pass iteration CRASH_AT in the event log, destroys
    the actors of two working daemons (a crash, as far as anyone else can
    tell).  The spawner must replace both from its spares and still return
    a verified answer; then every daemon left must be free, and the job's
    secret (kept in the test's folder) removed.
    =========================================================================
*/
#include "tap.h"
#include "daemon_server.h"
#include "supernode_server.h"
#include "spawner_nodes.h"
#include "spawner_server.h"

#include <cblas.h>

#define DAEMONS 8
#define CRASH_AT 20             //  Iteration a task must pass first
#define WAIT_MSEC 120000        //  Bound on every wait of the test

//  The largest iteration any progress event of the log reports.
static int64_t
s_max_iteration (const char *events)
{
    FILE *file = fopen (events, "r");
    if (!file)
        return 0;
    char line [4096];
    int64_t most = 0;
    while (fgets (line, sizeof line, file)) {
        const char *at = strstr (line, "\"event\":\"progress\"")
                       ? strstr (line, "\"iteration\":") : NULL;
        if (at) {
            int64_t iteration = atoll (at + 12);
            most = iteration > most ? iteration : most;
        }
    }
    fclose (file);
    return most;
}

//  Ids of the daemons working for a job, as the super-node sees them.
static size_t
s_working (const char *supernode, char ids [][JACE_ID_MAX], size_t most)
{
    jace_msg_t *registry = spawner_nodes_query (supernode, NULL, 5000);
    size_t count = 0;
    for (size_t i = 0; registry && i < jace_msg_node_count (registry); i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        if (node->state == JACE_NODE_WORKING && count < most)
            snprintf (ids [count++], JACE_ID_MAX, "%s", node->id);
    }
    jace_msg_destroy (&registry);
    return count;
}

static void
s_write_job (const char *path)
{
    FILE *file = fopen (path, "w");
    assert (file);
    fprintf (file,
             "job\n"
             "    application = \"multisplit\"\n"
             "    tasks = 4\n"
             "    tolerance = 1e-10\n"
             "    max_seconds = 110\n"
             "    heartbeat_timeout = 1500\n"
             "    spares = 2\n"
             "problem\n"
             "    kind = \"poisson3d\"\n"
             "    n = 40\n"
             "solver\n"
             "    inner_tolerance = 1e-12\n"
             "checkpoint\n"
             "    copies = 2\n"
             "    every_iterations = 5\n");
    fclose (file);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_set_logident ("test_spawner_actors");
    openblas_set_num_threads (1);
    tap_plan (9);
    char folder [] = "/tmp/jace-actors.XXXXXX";
    assert (mkdtemp (folder));
    char job_path [256], events [256];
    snprintf (job_path, sizeof job_path, "%s/job.zpl", folder);
    snprintf (events, sizeof events, "%s/events.jsonl", folder);
    s_write_job (job_path);

    supernode_config_t sn_config = { .bind = "tcp://127.0.0.1:*",
                                     .heartbeat_msec = 100,
                                     .timeout_msec = 1000 };
    zactor_t *supernode = zactor_new (supernode_server_actor, &sn_config);
    char *endpoint = supernode_server_endpoint (supernode);
    ok (endpoint != NULL, "the super-node actor binds loopback");
    const char *supernodes [1] = { endpoint };
    zactor_t *daemons [DAEMONS];
    char names [DAEMONS][16];
    for (int i = 0; i < DAEMONS; i++) {
        snprintf (names [i], sizeof names [i], "actor-d%d", i);
        daemon_config_t config = {
            .supernodes = supernodes, .supernode_count = 1,
            .cluster = i % 2 ? "B" : "A", .id = names [i], .speed = 1,
            .power = 1, .heartbeat_msec = 100,
            .checkpoint_memory = 64 << 20 };
        daemons [i] = zactor_new (daemon_server_actor, &config);
    }
    char ids [DAEMONS][JACE_ID_MAX];
    int64_t deadline = zclock_mono () + WAIT_MSEC;
    while (zclock_mono () < deadline) {
        jace_msg_t *registry = spawner_nodes_query (endpoint, NULL, 5000);
        size_t known = registry ? jace_msg_node_count (registry) : 0;
        jace_msg_destroy (&registry);
        if (known == DAEMONS)
            break;
        zclock_sleep (100);
    }

    char reason [512] = "";
    spawner_job_t *job = spawner_job_load (job_path, NULL, reason,
                                           sizeof reason);
    ok (job != NULL, "the job file loads");
    if (!job)
        diag (reason);
    //  Secrets in the test's folder, never in the user's home.
    char secrets [256];
    snprintf (secrets, sizeof secrets, "%s/secrets", folder);
    spawner_options_t options = { .job_file = job_path,
                                  .supernode = endpoint,
                                  .events_path = events,
                                  .secrets_dir = secrets, .quiet = true };
    spawner_server_config_t config = { .job = job, .options = &options };
    zactor_t *spawner = zactor_new (spawner_server_actor, &config);

    //  Crash two working daemons once the job is certainly iterating.
    zpoller_t *poller = zpoller_new (spawner, NULL);
    while (s_max_iteration (events) < CRASH_AT && zclock_mono () < deadline
           && !zpoller_wait (poller, 50))
        ;
    ok (s_max_iteration (events) >= CRASH_AT,
        "the job passes iteration 20 (progress, not time, triggers crashes)");
    size_t working = s_working (endpoint, ids, DAEMONS);
    ok (working == 4, "four daemons work for the job");
    size_t crashed = 0;
    for (int i = 0; i < DAEMONS && crashed < 2; i++)
        for (size_t k = 0; k < working; k++)
            if (daemons [i] && streq (ids [k], names [i])) {
                zactor_destroy (&daemons [i]);
                crashed++;
                break;
            }

    int rc = -1;
    if (zpoller_wait (poller, WAIT_MSEC) == spawner) {
        char *event = zstr_recv (spawner);
        char *code = zstr_recv (spawner);
        rc = code ? atoi (code) : -1;
        zstr_free (&event);
        zstr_free (&code);
    }
    zpoller_destroy (&poller);
    ok (rc == 0, "the job ends with a verified answer after two crashes");
    ok (tap_file_has (events, "\"event\":\"replace\""),
        "the log records the replacements");
    ok (tap_file_has (events, "\"event\":\"result\""),
        "the log ends with the result");
    zactor_destroy (&spawner);
    //  The daemons heard STOP: none works for the job any more.
    size_t still = DAEMONS;
    deadline = zclock_mono () + 10000;
    while (still > 0 && zclock_mono () < deadline) {
        still = s_working (endpoint, ids, DAEMONS);
        zclock_sleep (100);
    }
    ok (still == 0, "every daemon left is free after the job");
    char *job_id = NULL;
    char secret [512] = "";
    FILE *log = fopen (events, "r");
    char line [4096];
    if (log && fgets (line, sizeof line, log)) {
        char *at = strstr (line, "\"job\":\"");
        if (at && (job_id = strdup (at + 7)) && strchr (job_id, '"'))
            *strchr (job_id, '"') = 0;
    }
    if (log)
        fclose (log);
    if (job_id)
        snprintf (secret, sizeof secret, "%s/%s.secret", secrets, job_id);
    ok (*secret && access (secret, F_OK) != 0,
        "the job's secret file is gone after the job");
    free (job_id);

    spawner_job_destroy (&job);
    for (int i = 0; i < DAEMONS; i++)
        zactor_destroy (&daemons [i]);
    zactor_destroy (&supernode);
    zstr_free (&endpoint);
    //  The secrets folder keeps the job's end record.
    zdir_t *dir = zdir_new (folder, NULL);
    zdir_remove (dir, true);
    zdir_destroy (&dir);
    return tap_done ();
}
