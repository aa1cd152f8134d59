/*  =========================================================================
    jace-spawner - submit a job to a Jace grid, or look at the grid
    =========================================================================
*/
#include "spawner_job.h"
#include "spawner_nodes.h"
#include "spawner_run.h"
#include "jace_process.h"

#include <getopt.h>

#define PROGRAM "jace-spawner"

static void
s_usage (FILE *out)
{
    fprintf (out,
"Usage: " PROGRAM " submit JOBFILE --supernode EP [options]\n"
"       " PROGRAM " nodes --supernode EP [--json] [--keys DIR]\n"
"\n"
"submit   lease daemons, run the job, verify the answer; exits 0 only when\n"
"         the true relative residual is under the job's tolerance\n"
"nodes    list the daemons a super-node and its peers know\n"
"\n"
"  -s, --supernode EP     super-node to talk to (required)\n"
"  -S, --set KEY=VALUE    override a job-file key, e.g. --set job/tasks=8\n"
"                         (repeatable)\n"
"  -o, --out FILE         write the verified answer (.npy: NumPy; other\n"
"                         names: Matrix Market array)\n"
"  -e, --events FILE      write every event as a JSON line; the last line\n"
"                         of a successful job is {\"event\":\"result\",...,\n"
"                         \"residual\":R,...}\n"
"  -k, --keys DIR         CURVE keys from jace-keygen\n"
"  -c, --cert NAME        our certificate in DIR (default: spawner)\n"
"  -b, --bind EP          job status endpoint (default tcp://127.0.0.1:*)\n"
"      --insecure         allow a non-loopback status endpoint without keys\n"
"  -q, --quiet            no progress lines\n"
"      --json             (nodes) print a JSON array\n"
"      --timeout MS       (nodes) how long to wait for the answer (5000)\n"
"  -h, --help             this help\n");
}

typedef struct {
    spawner_options_t run;      //  What submit needs
    zlist_t *overrides;         //  --set items (borrowed strings)
    bool json;                  //  nodes --json
    long timeout_msec;          //  nodes --timeout
} arguments_t;

static int
s_parse (int argc, char *argv [], arguments_t *args)
{
    static struct option options [] = {
        { "supernode", required_argument, 0, 's' },
        { "set", required_argument, 0, 'S' },
        { "out", required_argument, 0, 'o' },
        { "events", required_argument, 0, 'e' },
        { "keys", required_argument, 0, 'k' },
        { "cert", required_argument, 0, 'c' },
        { "bind", required_argument, 0, 'b' },
        { "insecure", no_argument, 0, 'I' },
        { "quiet", no_argument, 0, 'q' },
        { "json", no_argument, 0, 'J' },
        { "timeout", required_argument, 0, 'T' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 }
    };
    int option;
    while ((option = getopt_long (argc, argv, "s:S:o:e:k:c:b:qh", options,
                                  NULL)) != -1) {
        switch (option) {
            case 's': args->run.supernode = optarg; break;
            case 'S': zlist_append (args->overrides, optarg); break;
            case 'o': args->run.out_path = optarg; break;
            case 'e': args->run.events_path = optarg; break;
            case 'k': args->run.keys_dir = optarg; break;
            case 'c': args->run.cert = optarg; break;
            case 'b': args->run.bind = optarg; break;
            case 'I': args->run.insecure = true; break;
            case 'q': args->run.quiet = true; break;
            case 'J': args->json = true; break;
            case 'T':
                if (jace_process_parse_int (PROGRAM, "--timeout", optarg, 1,
                                            3600000, &args->timeout_msec))
                    return 2;
                break;
            case 'h': s_usage (stdout); exit (0);
            default: s_usage (stderr); return 2;
        }
    }
    if (!args->run.supernode) {
        fprintf (stderr, PROGRAM ": --supernode EP is required\n");
        return 2;
    }
    return 0;
}

static int
s_submit (arguments_t *args)
{
    char reason [1024] = "";
    spawner_job_t *job = spawner_job_load (args->run.job_file,
                                           args->overrides, reason,
                                           sizeof reason);
    if (!job) {
        fprintf (stderr, PROGRAM ": %s\n", reason);
        return 2;
    }
    int rc = spawner_run (job, &args->run);
    spawner_job_destroy (&job);
    return rc;
}

int
main (int argc, char *argv [])
{
    jace_process_init ("spawner");
    if (argc < 2 || streq (argv [1], "-h") || streq (argv [1], "--help")) {
        s_usage (argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *command = argv [1];
    arguments_t args = { .overrides = zlist_new (), .timeout_msec = 5000 };
    int first_option = 2;
    if (streq (command, "submit")) {
        if (argc < 3 || argv [2][0] == '-') {
            fprintf (stderr, PROGRAM ": submit needs a JOBFILE\n");
            zlist_destroy (&args.overrides);
            return 2;
        }
        args.run.job_file = argv [2];
        first_option = 3;
    }
    else
    if (!streq (command, "nodes")) {
        fprintf (stderr, PROGRAM ": unknown command '%s' (submit, nodes)\n",
                 command);
        zlist_destroy (&args.overrides);
        return 2;
    }
    int rc = s_parse (argc - first_option + 1, argv + first_option - 1,
                      &args);
    if (rc == 0 && optind < argc - first_option + 1) {
        fprintf (stderr, PROGRAM ": unexpected argument '%s'\n",
                 argv [first_option - 1 + optind]);
        rc = 2;
    }
    if (rc == 0)
        rc = streq (command, "submit")
           ? s_submit (&args)
           : spawner_nodes_list (args.run.supernode, args.run.keys_dir,
                                 args.run.cert, args.json,
                                 (int) args.timeout_msec);
    zlist_destroy (&args.overrides);
    return rc;
}
