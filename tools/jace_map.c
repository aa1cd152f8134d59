/*  =========================================================================
    jace-map - where a job would run, before running it

    jace-map --job FILE (--platform FILE | --supernode EP [--keys DIR]
             [--cert NAME]) [--algo NAME|all] [--tasks N] [--set K=V]...
             [--json]

    Reads the same job files as jace-spawner (spawner_job_load: the same
    applications, keys and checks) and maps the job's task graph (its
    application's describe, or a chain) with the same code the spawner
    uses (spawner_plan): on a platform file, whose nodes are named as
    jace-grid names its daemons (CLUSTER-N), or on the live grid a
    super-node lists, with the links it measured.  Prints hd and, for each
    mapping, the daemon of every task, the spares and the predicted
    ET(App) in seconds per iteration (docs/MAPPING.md section 4).  Bad
    input: "FILE:LINE: reason" (or "FILE: reason"), status 1; bad usage:
    status 2.
    =========================================================================
*/
#include "spawner_plan.h"
#include "solvers.h"
#include "app_plugin.h"
#include "spawner_events.h"
#include "spawner_nodes.h"
#include "jace_process.h"

#include <getopt.h>

#define PROGRAM "jace-map"
//  --apps given at most this often, as jace-spawner takes it
#define APPS_DIRS_MAX 16

//  Options of one run
typedef struct {
    const char *job;            //  --job FILE
    const char *platform;       //  --platform FILE
    const char *supernode;      //  --supernode EP
    const char *keys_dir;       //  --keys DIR
    const char *cert;           //  --cert NAME
    const char *algorithm;      //  --algo NAME, "all", or NULL: the job's
    long tasks;                 //  --tasks N, or -1
    bool json;                  //  --json
    zlist_t *overrides;         //  --set KEY=VALUE
    const char *apps [APPS_DIRS_MAX];   //  --apps DIR, in order
    size_t app_dirs;
} options_t;

static void
s_usage (FILE *stream)
{
    fprintf (stream,
        "usage: " PROGRAM " --job FILE (--platform FILE | --supernode EP)\n"
        "                [--algo NAME|all] [--tasks N] [--set KEY=VALUE]...\n"
        "                [--keys DIR] [--cert NAME] [--apps DIR]... [--json]\n"
        "\n"
        "Maps a jace-spawner job file's tasks (one per daemon) as the spawner\n"
        "would and prints hd, the daemon of every task, the spares and the\n"
        "predicted ET(App) per iteration.\n"
        "\n"
        "  -j, --job FILE        the job file, as jace-spawner submit reads it\n"
        "  -p, --platform FILE   a platform file (daemons named CLUSTER-N, as\n"
        "                        jace-grid names them; all free)\n"
        "  -s, --supernode EP    the live grid: the daemons and links a\n"
        "                        super-node lists (free daemons only are used)\n"
        "  -a, --algo NAME|all   mapping (default: the job's job/mapping):\n"
        "                        %s\n"
        "  -t, --tasks N         override job/tasks\n"
        "      --set KEY=VALUE   override any job key (as jace-spawner)\n"
        "  -k, --keys DIR        CURVE keys from jace-keygen (--supernode)\n"
        "  -c, --cert NAME       our certificate in DIR (default: spawner)\n"
        "      --apps DIR        load the application plugins (*.so) of DIR\n"
        "                        (repeatable; then those of the JACE_APPS\n"
        "                        path and the installed folder), as\n"
        "                        jace-spawner submit --apps does\n"
        "      --json            one JSON object\n"
        "  -h, --help            this help\n"
        "  -V, --version         the version\n", spawner_plan_names ());
}

//  A figure in seconds, in the unit that reads best
static void
s_seconds (double seconds, char *text, size_t size)
{
    if (seconds >= 1)
        snprintf (text, size, "%.3g s", seconds);
    else
    if (seconds >= 1e-3)
        snprintf (text, size, "%.3g ms", seconds * 1e3);
    else
        snprintf (text, size, "%.3g us", seconds * 1e6);
}

//  A JSON string (ids are printable; quote what needs it)
static void
s_json_string (const char *text)
{
    //  The spawner's event escaping: the same JSON strings as its events
    size_t size = 6 * strlen (text) + 8;
    char *escaped = (char *) malloc (size);
    assert (escaped);
    spawner_events_escape (escaped, size, text);
    printf ("\"%s\"", escaped);
    free (escaped);
}

//  Spares named in the text output; --json names every one
#define MAP_SPARES_SHOWN 24

static void
s_print_plan (spawner_live_t *live, spawner_plan_t *plan,
              size_t spares_wanted, bool json, bool first)
{
    if (json) {
        //  A platform of powers near 0 predicts an infinite time, which
        //  JSON cannot say ("inf" made the whole output unreadable)
        char predicted [32] = "null";
        if (isfinite (plan->predicted_seconds))
            snprintf (predicted, sizeof predicted, "%.17g",
                      plan->predicted_seconds);
        printf ("%s{\"algorithm\": \"%s\", \"predicted_et_seconds\": %s, "
                "\"plan_msec\": %.6g, \"mapping\": [", first ? "" : ", ",
                plan->mapping, predicted, plan->plan_msec);
        for (size_t task = 0; task < plan->tasks; task++) {
            printf ("%s", task ? ", " : "");
            s_json_string (spawner_live_node (live,
                                              plan->placement [task])->id);
        }
        printf ("], \"spares\": [");
        for (size_t index = 0; index < plan->spare_count; index++) {
            printf ("%s", index ? ", " : "");
            s_json_string (spawner_live_node (live,
                                              plan->spares [index])->id);
        }
        printf ("], \"spares_wanted\": %zu}", spares_wanted);
        return;
    }
    char time [64];
    s_seconds (plan->predicted_seconds, time, sizeof time);
    printf ("%-16s predicted ET %s per iteration (planned in %.3f ms)\n"
            "  mapping:", plan->mapping, time, plan->plan_msec);
    for (size_t task = 0; task < plan->tasks; task++)
        printf (" %zu:%s", task,
                spawner_live_node (live, plan->placement [task])->id);
    //  A grid of thousands reserves hundreds: the first ones name them
    printf ("\n  spares: ");
    size_t shown = plan->spare_count < MAP_SPARES_SHOWN
                 ? plan->spare_count : MAP_SPARES_SHOWN;
    for (size_t index = 0; index < shown; index++)
        printf ("%s%s", index ? " " : "",
                spawner_live_node (live, plan->spares [index])->id);
    if (plan->spare_count > shown)
        printf (" and %zu more (%zu in all; --json lists them)",
                plan->spare_count - shown, plan->spare_count);
    printf ("%s", plan->spare_count ? "" : "none");
    //  job/spares is a floor the grid may not have room for: say so
    if (plan->spare_count < spares_wanted)
        printf (" (%zu wanted: no more free daemons)", spares_wanted);
    printf ("\n");
}

//  What the models are made from: the platform file, or the super-node's
//  listing.  Returns 0, or 1 with the reason printed.
static int
s_source (options_t *options, platform_t **platform_p,
          jace_msg_t **listing_p)
{
    if (options->platform) {
        char reason [4400] = "";
        *platform_p = platform_load (options->platform, reason,
                                     sizeof reason);
        if (!*platform_p)
            fprintf (stderr, "%s\n", reason);
        return *platform_p ? 0 : 1;
    }
    jace_security_t *security = spawner_nodes_security (options->keys_dir,
                                                        options->cert);
    if (!security)
        return 1;
    *listing_p = spawner_nodes_query (options->supernode, security, 5000);
    jace_security_destroy (&security);
    return *listing_p ? 0 : 1;
}

//  A fresh live model (each mapping starts from the same grid); NULL with
//  the reason printed
static spawner_live_t *
s_live (options_t *options, platform_t *platform, jace_msg_t *listing)
{
    char reason [1024] = "";
    spawner_live_t *live = platform
        ? spawner_live_from_platform (platform, reason, sizeof reason)
        : spawner_live_new (listing, NULL, 0, reason, sizeof reason);
    if (!live)
        fprintf (stderr, "%s: %s\n", platform ? options->platform
                                              : options->supernode, reason);
    return live;
}

static int
s_run (options_t *options)
{
    char reason [4400] = "";
    //  A job of a plugin maps as the spawner would map it: with the plugins
    //  of --apps, the JACE_APPS path and the installed folder.
    if (app_plugin_load_all (options->apps, options->app_dirs, reason,
                             sizeof reason) < 0) {
        fprintf (stderr, PROGRAM ": %s\n", reason);
        return 1;
    }
    spawner_job_t *job = spawner_job_load (options->job, options->overrides,
                                           reason, sizeof reason);
    if (!job) {
        fprintf (stderr, "%s\n", reason);
        return 1;
    }
    const char *algorithm = options->algorithm ? options->algorithm
                          : spawner_job_mapping (job);
    size_t tasks = (size_t) spawner_job_tasks (job);
    tig_t *tig = spawner_plan_graph (job, tasks, reason, sizeof reason);
    if (!tig) {
        fprintf (stderr, "%s: %s\n", options->job, reason);
        spawner_job_destroy (&job);
        return 1;
    }
    platform_t *platform = NULL;
    jace_msg_t *listing = NULL;
    spawner_live_t *probe = NULL;
    size_t lacking = 0;
    if (s_source (options, &platform, &listing) == 0) {
        //  As the spawner sees the grid: daemons without the job's
        //  application taken (jace-map chose them, the spawner did not)
        if (listing)
            listing = spawner_nodes_for_app (&listing,
                                             spawner_job_app (job)->name,
                                             &lacking);
        probe = s_live (options, platform, listing);
    }
    if (!probe) {
        tig_destroy (&tig);
        platform_destroy (&platform);
        jace_msg_destroy (&listing);
        spawner_job_destroy (&job);
        return 1;
    }
    size_t daemons = spawner_live_count (probe);
    double hd = grid_heterogeneity (spawner_live_grid (probe));
    const char *source = options->platform ? options->platform
                       : options->supernode;
    if (options->json) {
        printf ("{\"job\": ");
        s_json_string (options->job);
        printf (", \"application\": \"%s\", \"tasks\": %zu, "
                "\"platform\": ", spawner_job_app (job)->name, tasks);
        s_json_string (source);
        printf (", \"daemons\": %zu, \"clusters\": %zu, "
                "\"links_measured\": %zu, \"links_total\": %zu, "
                "\"hd\": %.17g, \"without_app\": %zu, \"results\": [",
                daemons,
                platform_cluster_count (spawner_live_platform (probe)),
                spawner_live_links_measured (probe),
                spawner_live_links_total (probe), hd, lacking);
    }
    else
        printf ("job %s: %s, %zu tasks, %" PRId64 " spares wanted\n"
                "platform %s: %zu daemons in %zu clusters, links measured "
                "%zu of %zu, hd %.4f\n", options->job,
                spawner_job_app (job)->name, tasks, spawner_job_spares (job),
                source, daemons,
                platform_cluster_count (spawner_live_platform (probe)),
                spawner_live_links_measured (probe),
                spawner_live_links_total (probe), hd);
    if (lacking && !options->json)
        printf ("%zu free daemon%s without application %s, left out\n",
                lacking, lacking == 1 ? "" : "s",
                spawner_job_app (job)->name);
    spawner_live_destroy (&probe);
    const char *single [] = { algorithm, NULL };
    const char *const *names = streq (algorithm, "all") ? spawner_plan_list ()
                                                        : single;
    int rc = 0;
    for (size_t index = 0; names [index]; index++) {
        //  A fresh model for each mapping: each starts from the same grid
        spawner_live_t *live = s_live (options, platform, listing);
        if (!live) {
            rc = 1;
            break;
        }
        spawner_plan_t plan;
        memset (&plan, 0, sizeof plan);
        if (spawner_plan_map (names [index], live, tig,
                              (size_t) spawner_job_spares (job), &plan,
                              reason, sizeof reason) == 0)
            s_print_plan (live, &plan, (size_t) spawner_job_spares (job),
                          options->json, index == 0);
        else {
            fprintf (stderr, PROGRAM ": %s\n", reason);
            rc = 1;
        }
        spawner_plan_clear (&plan);
        spawner_live_destroy (&live);
    }
    if (options->json)
        printf ("]}\n");
    tig_destroy (&tig);
    platform_destroy (&platform);
    jace_msg_destroy (&listing);
    spawner_job_destroy (&job);
    return rc;
}

int
main (int argc, char *argv [])
{
    solvers_blas_single_threaded ();
    options_t options = { .tasks = -1 };
    options.overrides = zlist_new ();
    zlist_autofree (options.overrides);
    static const struct option longs [] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "json", no_argument, NULL, 'J' },
        { "job", required_argument, NULL, 'j' },
        { "platform", required_argument, NULL, 'p' },
        { "supernode", required_argument, NULL, 's' },
        { "keys", required_argument, NULL, 'k' },
        { "cert", required_argument, NULL, 'c' },
        { "algo", required_argument, NULL, 'a' },
        { "tasks", required_argument, NULL, 't' },
        { "set", required_argument, NULL, 'S' },
        { "apps", required_argument, NULL, 'A' },
        { NULL, 0, NULL, 0 }
    };
    int option, rc = -1;
    while (rc < 0
       && (option = getopt_long (argc, argv, "hVj:p:s:k:c:a:t:", longs,
                                 NULL)) != -1) {
        char *end;
        switch (option) {
            case 'h': s_usage (stdout); rc = 0; break;
            case 'V': printf (PROGRAM " %s\n", PACKAGE_VERSION); rc = 0;
                      break;
            case 'J': options.json = true; break;
            case 'j': options.job = optarg; break;
            case 'p': options.platform = optarg; break;
            case 's':
                if (jace_process_parse_endpoint (PROGRAM, "--supernode",
                                                 optarg))
                    return 2;
                options.supernode = optarg;
                break;
            case 'k': options.keys_dir = optarg; break;
            case 'c': options.cert = optarg; break;
            case 'a': options.algorithm = optarg; break;
            case 'S': zlist_append (options.overrides, optarg); break;
            case 'A':
                if (options.app_dirs == APPS_DIRS_MAX) {
                    fprintf (stderr, PROGRAM ": at most %d --apps\n",
                             APPS_DIRS_MAX);
                    rc = 2;
                }
                else
                    options.apps [options.app_dirs++] = optarg;
                break;
            case 't':
                options.tasks = strtol (optarg, &end, 10);
                if (*end || end == optarg || options.tasks < 1
                ||  options.tasks > JACE_NODES_MAX) {
                    fprintf (stderr, PROGRAM ": --tasks needs a whole number "
                             "from 1 to %d\n", JACE_NODES_MAX);
                    rc = 2;
                }
                break;
            default: s_usage (stderr); rc = 2; break;
        }
    }
    if (rc < 0) {
        if (optind < argc || !options.job
        ||  (!options.platform) == (!options.supernode)) {
            s_usage (stderr);
            rc = 2;
        }
        else
        if (options.cert && !options.keys_dir) {
            fprintf (stderr, PROGRAM ": --cert names a certificate of "
                     "--keys DIR, which is not given\n");
            rc = 2;
        }
        else
        if (options.algorithm && !streq (options.algorithm, "all")
        &&  !spawner_plan_exists (options.algorithm)) {
            fprintf (stderr, PROGRAM ": unknown mapping '%s' (%s or all)\n",
                     options.algorithm, spawner_plan_names ());
            rc = 2;
        }
    }
    if (rc < 0) {
        if (options.tasks > 0) {
            char *task_override = zsys_sprintf ("job/tasks=%ld",
                                                options.tasks);
            zlist_append (options.overrides, task_override);
            zstr_free (&task_override);
        }
        rc = s_run (&options);
    }
    zlist_destroy (&options.overrides);
    return rc;
}
