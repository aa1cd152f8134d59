/*  =========================================================================
    jace-map - compare task mappings on a platform without running a job

    jace-map --platform FILE (--job FILE | --tasks N) [--algo NAME|all]
             [--slots-per-node K] [--json]

    Prints the heterogeneity degree hd of the platform and, for each
    mapper side by side, the node of every task, the spare nodes left and
    the predicted ET(App) of MAHEVE section 3.1.  Bad input is reported as
    "FILE:LINE: reason" (status 1); bad usage exits with status 2.

    The mappers place one task per node, as MAHEVE does (its section 3.3:
    a failure costs one task).  --slots-per-node K plans for K daemons per
    machine instead (one per core, say): each node of the platform counts
    as K nodes of its power, named NODE#SLOT (A-3#0, A-3#1, ...).

    A job file is ZPL:
        job
            tasks = 16
            matrix = "a.mtx"        #  block rows of a Matrix Market file
        or
            rows = 100000           #  banded matrix: rows and
            half_bandwidth = 500    #  half-bandwidth
    --tasks N stands for a banded matrix of 1000 N rows and half-bandwidth
    1000 (each task depends on the blocks next to it).
    =========================================================================
*/
#include "mapping.h"
#include <getopt.h>

//  Options of one run
typedef struct {
    const char *platform;       //  --platform FILE
    const char *job;            //  --job FILE
    long tasks;                 //  --tasks N
    const char *algorithm;      //  --algo NAME or "all"
    bool json;                  //  --json
    size_t slots;               //  --slots-per-node K
} options_t;

//  Most daemons per machine --slots-per-node accepts
#define MAP_MAX_SLOTS   1024

static void
s_usage (FILE *stream)
{
    fprintf (stream,
        "usage: jace-map --platform FILE (--job FILE | --tasks N) "
        "[--algo NAME|all]\n"
        "                [--slots-per-node K] [--json]\n"
        "\n"
        "Maps the job's tasks (one per node) with each mapper and prints hd,\n"
        "the mapping, the spare nodes and the predicted ET(App).\n"
        "Mappers: default, aiac-qm, f-ec, maheve (all: every one).\n"
        "A job file is ZPL: job / tasks = N, and either matrix = \"FILE.mtx\"\n"
        "(Matrix Market, block rows) or rows = R, half_bandwidth = B.\n"
        "--tasks N maps a banded matrix of 1000 N rows, half-bandwidth 1000.\n"
        "--slots-per-node K counts every node as K nodes of its power\n"
        "(K daemons per machine, e.g. one per core; default 1), named\n"
        "NODE#SLOT.\n");
}

//  Read a whole number item of the job; false if absent or bad
static bool
s_job_count (zpl_t *job, const char *name, size_t *value, const char *path,
             bool required)
{
    zpl_t *item = zpl_locate (job, name);
    if (!item) {
        if (required)
            fprintf (stderr, "%s:%zu: job has no %s\n", path, zpl_line (job),
                     name);
        return false;
    }
    char *end;
    const char *text = zpl_value (item) ? zpl_value (item) : "";
    errno = 0;
    unsigned long long number = strtoull (text, &end, 10);
    if (errno || *end || end == text || number < 1 || number > 100000000) {
        fprintf (stderr, "%s:%zu: %s must be a whole number from 1 to "
                 "100000000\n", path, zpl_line (item), name);
        return false;
    }
    *value = (size_t) number;
    return true;
}

//  The task graph of a job file; NULL on error (printed)
static tig_t *
s_load_job (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file) {
        fprintf (stderr, "%s: %s\n", path, strerror (errno));
        return NULL;
    }
    char text [65536];
    size_t size = fread (text, 1, sizeof text - 1, file);
    fclose (file);
    text [size] = '\0';
    char reason [256];
    zpl_t *tree = zpl_parse (text, reason, sizeof reason);
    if (!tree) {
        fprintf (stderr, "%s: %s\n", path, reason);
        return NULL;
    }
    tig_t *tig = NULL;
    zpl_t *job = zpl_locate (tree, "job");
    size_t tasks, rows, half_band;
    if (!job)
        fprintf (stderr, "%s: no 'job' item\n", path);
    else
    if (s_job_count (job, "tasks", &tasks, path, true)) {
        zpl_t *matrix = zpl_locate (job, "matrix");
        if (matrix && zpl_value (matrix)) {
            //  The matrix path is relative to the job file
            char full [4096];
            const char *slash = strrchr (path, '/');
            if (zpl_value (matrix) [0] != '/' && slash)
                snprintf (full, sizeof full, "%.*s/%s", (int) (slash - path),
                          path, zpl_value (matrix));
            else
                snprintf (full, sizeof full, "%s", zpl_value (matrix));
            char error [4400];
            tig = tig_load_matrix_market (full, tasks, error, sizeof error);
            if (!tig)
                fprintf (stderr, "%s\n", error);
        }
        else
        if (s_job_count (job, "rows", &rows, path, true)
        &&  s_job_count (job, "half_bandwidth", &half_band, path, true)) {
            tig = tig_new_banded (rows, half_band, tasks);
            if (!tig)
                fprintf (stderr, "%s:%zu: cannot cut %zu rows in %zu tasks\n",
                         path, zpl_line (job), rows, tasks);
        }
    }
    zpl_destroy (&tree);
    return tig;
}

//  Name of a node: CLUSTER-INDEX
//  Name of a node: CLUSTER-N, or CLUSTER-N#SLOT with several slots
static void
s_node_name (platform_t *platform, size_t slots, size_t node, char *name,
             size_t size)
{
    size_t cluster = platform_node_cluster (platform, node);
    size_t local = node - platform_node_index (platform, cluster, 0);
    if (slots > 1)
        snprintf (name, size, "%s-%zu#%zu",
                  platform_cluster_name (platform, cluster), local / slots,
                  local % slots);
    else
        snprintf (name, size, "%s-%zu",
                  platform_cluster_name (platform, cluster), local);
}

//  Print one mapper's result
static void
s_print_result (platform_t *platform, size_t slots, grid_t *grid, tig_t *tig,
                const char *algorithm, const size_t *placement, bool json,
                bool first)
{
    char name [256];
    double time = grid_execution_time (grid, tig, placement);
    if (json) {
        printf ("%s{\"algorithm\": \"%s\", \"predicted_et\": %.17g, "
                "\"mapping\": [", first ? "" : ", ", algorithm, time);
        for (size_t task = 0; task < tig_count (tig); task++) {
            s_node_name (platform, slots, placement [task], name, sizeof name);
            printf ("%s\"%s\"", task ? ", " : "", name);
        }
        printf ("], \"spares\": [");
    }
    else {
        printf ("%-8s predicted ET %.6g\n  mapping:", algorithm, time);
        for (size_t task = 0; task < tig_count (tig); task++) {
            s_node_name (platform, slots, placement [task], name, sizeof name);
            printf (" %zu:%s", task, name);
        }
        printf ("\n  spares: ");
    }
    bool any = false, marked = false;
    for (size_t node = 0; node < grid_node_count (grid); node++) {
        if (!grid_node_is_available (grid, node))
            continue;
        s_node_name (platform, slots, node, name, sizeof name);
        bool reserved = grid_node_state (grid, node) == GRID_RESERVED;
        marked = marked || reserved;
        if (json)
            printf ("%s\"%s\"", any ? ", " : "", name);
        else
            printf ("%s%s%s", any ? " " : "", name, reserved ? "*" : "");
        any = true;
    }
    if (json)
        printf ("]}");
    else
        printf ("%s\n", !any ? "none"
                         : marked ? "  (* reserved by the mapper)" : "");
}

static int
s_run (options_t *options, platform_t *platform, tig_t *tig)
{
    const char **names = mapper_names ();
    const char *single [] = { options->algorithm, NULL };
    if (!streq (options->algorithm, "all"))
        names = single;
    grid_t *probe = grid_new (platform);
    double hd = grid_heterogeneity (probe);
    grid_destroy (&probe);
    if (options->json)
        printf ("{\"platform\": \"%s\", \"tasks\": %zu, \"nodes\": %zu, "
                "\"hd\": %.17g, \"results\": [", platform_name (platform),
                tig_count (tig), platform_node_count (platform), hd);
    else
        printf ("platform %s: %zu nodes, hd %.4f; %zu tasks\n",
                platform_name (platform), platform_node_count (platform), hd,
                tig_count (tig));
    size_t *placement = malloc ((tig_count (tig) + 1) * sizeof (size_t));
    assert (placement);
    int rc = 0;
    for (size_t index = 0; names [index]; index++) {
        grid_t *grid = grid_new (platform);
        if (mapper_map (names [index], grid, tig, placement) == 0)
            s_print_result (platform, options->slots, grid, tig,
                            names [index], placement, options->json,
                            index == 0);
        else {
            fprintf (stderr, "jace-map: %s cannot map %zu tasks on %zu "
                     "nodes%s\n", names [index], tig_count (tig),
                     platform_node_count (platform),
                     tig_count (tig) > platform_node_count (platform)
                     ? " (one task per node; --slots-per-node K runs K per "
                       "machine)" : "");
            rc = 1;
        }
        grid_destroy (&grid);
    }
    if (options->json)
        printf ("]}\n");
    free (placement);
    return rc;
}

int
main (int argc, char *argv [])
{
    options_t options = { .tasks = -1, .algorithm = "all", .slots = 1 };
    static const struct option longs [] = {
        { "help", no_argument, NULL, 'h' },
        { "json", no_argument, NULL, 'j' },
        { "platform", required_argument, NULL, 'p' },
        { "job", required_argument, NULL, 'J' },
        { "tasks", required_argument, NULL, 't' },
        { "algo", required_argument, NULL, 'a' },
        { "slots-per-node", required_argument, NULL, 's' },
        { NULL, 0, NULL, 0 }
    };
    int option;
    while ((option = getopt_long (argc, argv, "h", longs, NULL)) != -1) {
        char *end;
        switch (option) {
            case 'h': s_usage (stdout); return 0;
            case 'j': options.json = true; break;
            case 'p': options.platform = optarg; break;
            case 'J': options.job = optarg; break;
            case 'a': options.algorithm = optarg; break;
            case 't':
                options.tasks = strtol (optarg, &end, 10);
                if (*end || end == optarg || options.tasks < 1
                ||  options.tasks > 100000) {
                    fprintf (stderr, "jace-map: --tasks needs a whole number "
                             "from 1 to 100000\n");
                    return 2;
                }
                break;
            case 's': {
                long slots = strtol (optarg, &end, 10);
                if (*end || end == optarg || slots < 1
                ||  slots > MAP_MAX_SLOTS) {
                    fprintf (stderr, "jace-map: --slots-per-node needs a "
                             "whole number from 1 to %d\n", MAP_MAX_SLOTS);
                    return 2;
                }
                options.slots = (size_t) slots;
                break;
            }
            default: s_usage (stderr); return 2;
        }
    }
    if (optind < argc || !options.platform
    ||  (!options.job) == (options.tasks < 0)) {
        s_usage (stderr);
        return 2;
    }
    if (!streq (options.algorithm, "all")
    &&  !mapper_exists (options.algorithm)) {
        fprintf (stderr, "jace-map: unknown mapper '%s' (default, aiac-qm, "
                 "f-ec, maheve or all)\n", options.algorithm);
        return 2;
    }
    char error [4400];
    platform_t *platform = platform_load (options.platform, error,
                                          sizeof error);
    if (!platform) {
        fprintf (stderr, "%s\n", error);
        return 1;
    }
    if (options.slots > 1) {
        platform_t *slotted = platform_with_slots (platform, options.slots);
        platform_destroy (&platform);
        platform = slotted;
    }
    tig_t *tig = options.job ? s_load_job (options.job)
               : tig_new_banded (1000 * (size_t) options.tasks, 1000,
                                 (size_t) options.tasks);
    int rc = 1;
    if (tig)
        rc = s_run (&options, platform, tig);
    tig_destroy (&tig);
    platform_destroy (&platform);
    return rc;
}
