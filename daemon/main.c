/*  =========================================================================
    jace-daemon - one task per node, registered with a super-node
    =========================================================================
*/
#include "daemon_server.h"
#include "app_plugin.h"
#include "jace_process.h"
#include "solvers.h"

#include <getopt.h>

#define PROGRAM "jace-daemon"
#define SUPERNODES_MAX 64
#define APPS_DIRS_MAX 64

//  --apps directories, and --list-apps.
static const char *s_apps_dirs [APPS_DIRS_MAX];
static size_t s_apps_dir_count;
static bool s_list_apps;

static void
s_usage (FILE *out)
{
    fprintf (out,
"Usage: " PROGRAM " --supernode EP [--supernode EP]... [options]\n"
"\n"
"Offer this node to a Jace grid: register with a super-node (failing over\n"
"to the next one given), run one task at a time for a spawner, exchange\n"
"data directly with neighbour daemons.\n"
"\n"
"  -s, --supernode EP    super-node endpoint (repeatable, failover order)\n"
"  -C, --cluster NAME    cluster this node belongs to (default: default)\n"
"      --speed F         emulate a slower node, 0 < F <= 1 (default 1)\n"
"      --power P         computing power to report, skipping the start-up\n"
"                        OpenBLAS benchmark (GFLOP/s)\n"
"      --platform FILE   emulate the latency and bandwidth this platform\n"
"                        file gives between clusters (local virtual grids)\n"
"      --links FILE      with --platform: share the uplinks and backbone\n"
"                        the platform declares shared with every daemon\n"
"                        mapping FILE (jace-grid makes it in its run folder)\n"
"  -b, --bind EP         control endpoint (default tcp://127.0.0.1:*);\n"
"                        the data endpoint binds the same host\n"
"      --advertise HOST  host name others reach us at, for wildcard binds\n"
"      --id ID           daemon id (default: generated)\n"
"  -k, --keys DIR        CURVE keys from jace-keygen: encrypt every link\n"
"  -c, --cert NAME       our certificate in DIR (default: daemon)\n"
"      --insecure        allow binding a non-loopback endpoint without keys\n"
"      --heartbeat MS    heartbeat period (default 1000)\n"
"      --checkpoint-memory MIB\n"
"                        most memory for neighbours' checkpoints; a copy\n"
"                        that would exceed it is refused (default 1024)\n"
"      --max-task-memory MIB\n"
"                        most task data (a matrix's rows) to accept; a task\n"
"                        declaring more is refused, for another daemon\n"
"                        (default: half the physical memory)\n"
"      --apps DIR        load the application plugins (*.so) of DIR\n"
"                        (repeatable; then those of the JACE_APPS path and\n"
"                        of " JACE_APPSDIR ")\n"
"      --list-apps       list the applications we can run, and exit\n"
"  -v, --verbose         log every message\n"
"  -h, --help            this help\n"
"  -V, --version         print the version and exit\n");
}

static int
s_parse (int argc, char *argv [], daemon_config_t *config,
         const char **supernodes)
{
    static struct option options [] = {
        { "supernode", required_argument, 0, 's' },
        { "cluster", required_argument, 0, 'C' },
        { "speed", required_argument, 0, 'S' },
        { "power", required_argument, 0, 'P' },
        { "platform", required_argument, 0, 'L' },
        { "links", required_argument, 0, 'N' },
        { "bind", required_argument, 0, 'b' },
        { "advertise", required_argument, 0, 'A' },
        { "id", required_argument, 0, 'i' },
        { "keys", required_argument, 0, 'k' },
        { "cert", required_argument, 0, 'c' },
        { "insecure", no_argument, 0, 'I' },
        { "heartbeat", required_argument, 0, 'H' },
        { "checkpoint-memory", required_argument, 0, 'M' },
        { "max-task-memory", required_argument, 0, 'T' },
        { "apps", required_argument, 0, 'a' },
        { "list-apps", no_argument, 0, 'l' },
        { "verbose", no_argument, 0, 'v' },
        { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    long number;
    int option;
    while ((option = getopt_long (argc, argv, "s:C:b:k:c:vhV", options,
                                  NULL)) != -1) {
        switch (option) {
            case 's':
                if (config->supernode_count == SUPERNODES_MAX) {
                    fprintf (stderr, PROGRAM ": at most %d --supernode\n",
                             SUPERNODES_MAX);
                    return 2;
                }
                if (jace_process_parse_endpoint (PROGRAM, "--supernode",
                                                 optarg))
                    return 2;
                supernodes [config->supernode_count++] = optarg;
                break;
            case 'C': config->cluster = optarg; break;
            case 'S':
                if (jace_process_parse_double (PROGRAM, "--speed", optarg,
                                               1e-3, 1, &config->speed))
                    return 2;
                break;
            case 'P':
                if (jace_process_parse_double (PROGRAM, "--power", optarg,
                                               1e-9, 1e6, &config->power))
                    return 2;
                break;
            case 'L': config->platform = optarg; break;
            case 'N': config->links = optarg; break;
            case 'b': config->bind = optarg; break;
            case 'A': config->advertise = optarg; break;
            case 'i': config->id = optarg; break;
            case 'k': config->keys_dir = optarg; break;
            case 'c': config->cert = optarg; break;
            case 'I': config->insecure = true; break;
            case 'H':
                if (jace_process_parse_int (PROGRAM, "--heartbeat", optarg,
                                            10, 600000, &number))
                    return 2;
                config->heartbeat_msec = (int) number;
                break;
            case 'M':
                if (jace_process_parse_int (PROGRAM, "--checkpoint-memory",
                                            optarg, 0, 1 << 30, &number))
                    return 2;
                config->checkpoint_memory = (size_t) number << 20;
                break;
            case 'T':
                if (jace_process_parse_int (PROGRAM, "--max-task-memory",
                                            optarg, 1, 1 << 30, &number))
                    return 2;
                config->task_memory = (uint64_t) number << 20;
                break;
            case 'a':
                if (s_apps_dir_count == APPS_DIRS_MAX) {
                    fprintf (stderr, PROGRAM ": at most %d --apps\n",
                             APPS_DIRS_MAX);
                    return 2;
                }
                s_apps_dirs [s_apps_dir_count++] = optarg;
                break;
            case 'l': s_list_apps = true; break;
            case 'v': config->verbose = true; break;
            case 'h': s_usage (stdout); exit (0);
            case 'V': printf (PROGRAM " %s\n", PACKAGE_VERSION); exit (0);
            default: s_usage (stderr); return 2;
        }
    }
    if ((config->supernode_count == 0 && !s_list_apps) || optind < argc) {
        fprintf (stderr, PROGRAM ": %s\n", optind < argc
                 ? "unexpected arguments" : "--supernode EP is required");
        s_usage (stderr);
        return 2;
    }
    if (config->id && (!*config->id || strlen (config->id) >= 64
                       || !jace_name_plain (config->id))) {
        fprintf (stderr, PROGRAM ": --id must have 1 to 63 printable "
                 "characters, no space, quote or backslash\n");
        return 2;
    }
    if (config->cluster && (strlen (config->cluster) >= 64
                            || !jace_name_plain (config->cluster))) {
        fprintf (stderr, PROGRAM ": --cluster must have at most 63 "
                 "printable characters, no space, quote or backslash\n");
        return 2;
    }
    return 0;
}

int
main (int argc, char *argv [])
{
    jace_process_init ("daemon");
    solvers_blas_single_threaded ();
    const char *supernodes [SUPERNODES_MAX];
    daemon_config_t config = { .speed = 1, .supernodes = supernodes,
                               .checkpoint_memory = (size_t) 1024 << 20 };
    int rc = s_parse (argc, argv, &config, supernodes);
    if (rc)
        return rc;
    char reason [1024];
    if (app_plugin_load_all (s_apps_dirs, s_apps_dir_count, reason,
                             sizeof reason) < 0) {
        fprintf (stderr, PROGRAM ": %s\n", reason);
        return 1;
    }
    if (s_list_apps) {
        app_plugin_print (stdout);
        return 0;
    }
    zactor_t *server = zactor_new (daemon_server_actor, &config);
    char *endpoint = daemon_server_endpoint (server);
    rc = endpoint && jace_process_wait (server) == 0 ? 0 : 1;
    zstr_free (&endpoint);
    zactor_destroy (&server);
    return rc;
}
