/*  =========================================================================
    jace-supernode - registry of free daemons, peered with other super-nodes
    =========================================================================
*/
#include "supernode_server.h"
#include "jace_process.h"
#include "jace_msg.h"

#include <getopt.h>

#define PROGRAM "jace-supernode"

static void
s_usage (FILE *out)
{
    fprintf (out,
"Usage: " PROGRAM " --bind EP [--peer EP]... [options]\n"
"\n"
"Keep the registry of the daemons of a cluster, lease them to spawners, and\n"
"peer with other super-nodes to complete requests this one cannot fill.\n"
"\n"
"  -b, --bind EP            endpoint to serve on, e.g. tcp://127.0.0.1:7400\n"
"                           (port * picks a free one)\n"
"  -p, --peer EP            peer super-node (repeatable; peering is mutual)\n"
"  -k, --keys DIR           CURVE keys from jace-keygen: encrypt every link\n"
"                           and accept only certificates found in DIR\n"
"  -c, --cert NAME          our certificate in DIR (default: supernode)\n"
"      --insecure           allow binding a non-loopback endpoint without keys\n"
"      --heartbeat MS       heartbeat period asked of daemons (default 1000)\n"
"      --timeout MS         silence before a daemon or peer is dropped\n"
"                           (default 4 heartbeats)\n"
"      --max-peers N        most peer super-nodes, configured or learned from\n"
"                           their PEER_STATE (default 32); others are refused\n"
"      --max-lease MS       longest lease granted; a RESERVE asking more, or\n"
"                           0 or less, gets this (default 60000)\n"
"      --max-daemons N      most daemons registered here (default 4096); new\n"
"                           ones beyond are refused, logged and counted, and\n"
"                           at most N records are taken from a peer\n"
"      --cluster NAME       our cluster, for the links we measure (default:\n"
"                           the cluster most of our daemons name)\n"
"      --probe MS           PING peers and daemons about this often to\n"
"                           measure latency, bandwidth and the transfers a\n"
"                           link carries at once (default 1000; 0: never)\n"
"      --platform FILE      virtual grid: hold each PING and PONG we send\n"
"                           for the latency and bandwidth this platform\n"
"                           gives between our cluster and the other's\n"
"      --links FILE         with --platform: also hold them for the grid's\n"
"                           shared uplinks and backbone (jace-grid's\n"
"                           DIR/links), so bulk probes measure what the\n"
"                           daemons' transfers leave of them\n"
"      --endpoint-file PATH write the bound endpoint there once serving\n"
"      --allow-crash        obey CRASH messages (jace-spawner kill\n"
"                           --crash-supernode): for crash tests only\n"
"  -v, --verbose            log every message\n"
"  -h, --help               this help\n"
"  -V, --version            print the version and exit\n");
}

int
main (int argc, char *argv [])
{
    jace_process_init ("supernode");
    supernode_config_t config = { .bind = NULL, .probe_msec = 1000 };
    const char *peers [64];
    const char *endpoint_file = NULL;
    long number;
    static struct option options [] = {
        { "bind", required_argument, 0, 'b' },
        { "peer", required_argument, 0, 'p' },
        { "keys", required_argument, 0, 'k' },
        { "cert", required_argument, 0, 'c' },
        { "insecure", no_argument, 0, 'I' },
        { "heartbeat", required_argument, 0, 'H' },
        { "timeout", required_argument, 0, 'T' },
        { "max-peers", required_argument, 0, 'P' },
        { "max-lease", required_argument, 0, 'L' },
        { "max-daemons", required_argument, 0, 'D' },
        { "endpoint-file", required_argument, 0, 'E' },
        { "cluster", required_argument, 0, 'C' },
        { "probe", required_argument, 0, 'R' },
        { "platform", required_argument, 0, 'F' },
        { "links", required_argument, 0, 'N' },
        { "verbose", no_argument, 0, 'v' },
        { "allow-crash", no_argument, 0, 'X' },
        { "help", no_argument, 0, 'h' },
        { "version", no_argument, 0, 'V' },
        { 0, 0, 0, 0 }
    };
    int option;
    while ((option = getopt_long (argc, argv, "b:p:k:c:vhV", options, NULL)) != -1) {
        switch (option) {
            case 'b': config.bind = optarg; break;
            case 'p':
                if (config.peer_count == 64) {
                    fprintf (stderr, PROGRAM ": at most 64 --peer\n");
                    return 2;
                }
                if (jace_process_parse_endpoint (PROGRAM, "--peer", optarg))
                    return 2;
                peers [config.peer_count++] = optarg;
                break;
            case 'k': config.keys_dir = optarg; break;
            case 'c': config.cert = optarg; break;
            case 'I': config.insecure = true; break;
            case 'H':
                if (jace_process_parse_int (PROGRAM, "--heartbeat", optarg,
                                            10, 600000, &number))
                    return 2;
                config.heartbeat_msec = (int) number;
                break;
            case 'T':
                if (jace_process_parse_int (PROGRAM, "--timeout", optarg,
                                            10, 3600000, &number))
                    return 2;
                config.timeout_msec = (int) number;
                break;
            case 'P':
                if (jace_process_parse_int (PROGRAM, "--max-peers", optarg,
                                            1, 256, &number))
                    return 2;
                config.max_peers = (size_t) number;
                break;
            case 'L':
                if (jace_process_parse_int (PROGRAM, "--max-lease", optarg,
                                            1, 86400000, &number))
                    return 2;
                config.max_lease_msec = number;
                break;
            case 'D':
                //  Every daemon must fit in one listing.
                if (jace_process_parse_int (PROGRAM, "--max-daemons", optarg,
                                            1, JACE_NODES_MAX, &number))
                    return 2;
                config.max_daemons = (size_t) number;
                break;
            case 'E': endpoint_file = optarg; break;
            case 'C':
                if (!*optarg || strlen (optarg) >= JACE_ID_MAX
                ||  !jace_name_plain (optarg)) {
                    fprintf (stderr, PROGRAM ": --cluster must have 1 to "
                             "%d printable characters, no space, quote or "
                             "backslash\n", JACE_ID_MAX - 1);
                    return 2;
                }
                config.cluster = optarg;
                break;
            case 'R':
                if (jace_process_parse_int (PROGRAM, "--probe", optarg,
                                            0, 3600000, &number))
                    return 2;
                config.probe_msec = (int) number;
                break;
            case 'F': config.platform = optarg; break;
            case 'N': config.links = optarg; break;
            case 'v': config.verbose = true; break;
            case 'X': config.allow_crash = true; break;
            case 'h': s_usage (stdout); return 0;
            case 'V': printf (PROGRAM " %s\n", PACKAGE_VERSION); return 0;
            default: s_usage (stderr); return 2;
        }
    }
    if (!config.bind || optind < argc) {
        fprintf (stderr, PROGRAM ": %s\n", config.bind
                 ? "unexpected arguments" : "--bind EP is required");
        s_usage (stderr);
        return 2;
    }
    if (config.links && !config.platform) {
        fprintf (stderr, PROGRAM ": --links %s needs --platform\n",
                 config.links);
        return 2;
    }
    if (config.max_peers && config.peer_count > config.max_peers) {
        fprintf (stderr, PROGRAM ": %zu --peer but --max-peers %zu\n",
                 config.peer_count, config.max_peers);
        return 2;
    }
    config.peers = peers;

    zactor_t *server = zactor_new (supernode_server_actor, &config);
    char *endpoint = supernode_server_endpoint (server);
    int rc = 1;
    if (endpoint) {
        char *line = zsys_sprintf ("%s\n", endpoint);
        if (!endpoint_file || jace_process_write_file (endpoint_file, line) == 0)
            rc = jace_process_wait (server) == 0 ? 0 : 1;
        zstr_free (&line);
    }
    zstr_free (&endpoint);
    zactor_destroy (&server);
    return rc;
}
