/*  =========================================================================
    jace-spawner - submit a job to a Jace grid, look at the grid, resume a
    job, crash its daemons on purpose, report on a finished job
    =========================================================================
*/
#include "spawner_job.h"
#include "app_plugin.h"
#include "spawner_jobs.h"
#include "spawner_kill.h"
#include "spawner_nodes.h"
#include "spawner_report.h"
#include "spawner_run.h"
#include "jace_process.h"
#include "solvers.h"

#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#define PROGRAM "jace-spawner"
#define SUPERNODES_MAX 64
#define APPS_DIRS_MAX 64

//  --apps directories (submit, resume).
static const char *s_apps_dirs [APPS_DIRS_MAX];
static size_t s_apps_dir_count;

static void
s_usage (FILE *out)
{
    fprintf (out,
"Usage: " PROGRAM " submit JOBFILE --supernode EP [options]\n"
"       " PROGRAM " resume JOBID --supernode EP [options]\n"
"       " PROGRAM " nodes --supernode EP [--json] [--keys DIR]\n"
"       " PROGRAM " jobs --supernode EP [--json] [--keys DIR]\n"
"       " PROGRAM " status JOBID --supernode EP [--json] [--keys DIR]\n"
"       " PROGRAM " cancel JOBID --supernode EP [--keys DIR] [--secrets DIR]\n"
"       " PROGRAM " drain JOBID (--cluster NAME | --stop) --supernode EP\n"
"                    [--keys DIR] [--secrets DIR]\n"
"       " PROGRAM " rebalance JOBID --supernode EP [--keys DIR]\n"
"                    [--secrets DIR]\n"
"       " PROGRAM " kill --job JOBID --supernode EP (--task K | --random N)\n"
"                    [--every SEC [--rounds M]] [--seed S] [--run DIR]\n"
"                    [--secrets DIR]\n"
"       " PROGRAM " kill --crash-supernode --supernode EP [--run DIR]\n"
"       " PROGRAM " report EVENTS [--plot FILE]\n"
"\n"
"submit   lease daemons, run the job, verify the answer; exits 0 only when\n"
"         the true relative residual is under the job's tolerance\n"
"resume   take over a job whose spawner died: its daemons kept iterating;\n"
"         rebuild the job from them and carry on to the verified answer\n"
"nodes    list the daemons a super-node and its peers know\n"
"jobs     list the jobs running on the grid, and those waiting for\n"
"         daemons: daemons, state, age, owner spawner (\"orphaned\" when no\n"
"         spawner answers for a job, \"ended\" when this machine's record\n"
"         says it ended and its daemons are being freed)\n"
"status   the task table of a running job, from its spawner: each task's\n"
"         daemon, cluster and state, and the job's state and residual;\n"
"         why a waiting job waits; how and when an ended job ended\n"
"cancel   end a running job: its spawner stops its daemons and exits\n"
"         non-zero; with no spawner, its daemons are told to stop\n"
"         (resume, cancel and kill need the job's secret: only the user\n"
"         who submitted a job may control it)\n"
"drain    move every task of a running job off a cluster (maintenance, a\n"
"         site going away): in steps (drain/schedule), never two tasks\n"
"         that exchange values at once, each to the daemon the job's\n"
"         mapping chooses elsewhere, restarting from its checkpoint; the\n"
"         job goes on to its verified answer.  --stop ends the drain under\n"
"         way: the tasks moved stay, the others stay on the cluster\n"
"rebalance  cut a running job's rows again in proportion to the rates its\n"
"         tasks measured (a slower replacement, a node that slowed down),\n"
"         if they drift from the cut by more than job/rebalance_threshold;\n"
"         the tasks stay on their daemons and go on from the iterate\n"
"kill     crash daemons of a running job like a power cut: SIGKILL through\n"
"         jace-grid's pid records with --run DIR, else a CRASH message that\n"
"         makes the daemon exit at once; --every repeats until the job ends\n"
"report   the failures of a finished job from its event log: crashes,\n"
"         detections, recoveries, time lost; --plot draws the residual\n"
"\n"
"  -s, --supernode EP     super-node to talk to (required; submit and\n"
"                         resume take several, in failover order)\n"
"  -S, --set KEY=VALUE    override a job-file key, e.g. --set job/tasks=8\n"
"                         (repeatable)\n"
"  -o, --out FILE         write the verified answer (.npy: NumPy; other\n"
"                         names: Matrix Market array)\n"
"  -e, --events FILE      write every event as a JSON line; the last line\n"
"                         of a successful job is {\"event\":\"result\",...,\n"
"                         \"residual\":R,...} (resume adds to the file)\n"
"  -r, --report FILE      after the job, write its failure report (needs\n"
"                         --events)\n"
"  -p, --plot FILE        with --report or report: plot the residual over\n"
"                         time, failures marked (.png or .svg; gnuplot)\n"
"  -k, --keys DIR         CURVE keys from jace-keygen\n"
"  -c, --cert NAME        our certificate in DIR (default: spawner)\n"
"      --secrets DIR      (submit, resume, cancel, kill, status) job secrets\n"
"                         folder (default $JACE_SECRETS, else\n"
"                         $XDG_STATE_HOME/jace/secrets, else\n"
"                         ~/.local/state/jace/secrets): submit\n"
"                         keeps JOB.secret there (mode 0600) until the job\n"
"                         ends; resume, cancel and kill need it\n"
"  -b, --bind EP          job status endpoint (default tcp://127.0.0.1:*)\n"
"      --insecure         allow a non-loopback status endpoint without keys\n"
"      --apps DIR         (submit, resume) load the application plugins\n"
"                         (*.so) of DIR (repeatable; then those of the\n"
"                         JACE_APPS path and of " JACE_APPSDIR ")\n"
"  -q, --quiet            no progress lines\n"
"      --json             (nodes, jobs, status) print JSON\n"
"      --timeout MS       (nodes, jobs, status, cancel) how long to wait for an\n"
"                         answer (5000)\n"
"  -j, --job JOBID        (kill) the job whose daemons to crash\n"
"  -t, --task K           (kill) crash the daemon of task K\n"
"      --random N         (kill) crash N of the job's daemons at random\n"
"      --every SEC        (kill) repeat every SEC seconds\n"
"      --rounds M         (kill) at most M rounds (default: until the job\n"
"                         has no daemon left)\n"
"      --seed S           (kill) random choice, for a replay (default: clock)\n"
"      --run DIR          (kill) jace-grid run folder: SIGKILL by pid\n"
"      --crash-supernode  (kill) crash the super-node --supernode names\n"
"      --cluster NAME     (drain) the cluster to move the tasks off\n"
"      --stop             (drain) stop the job's drain under way\n"
"  -h, --help             this help (also after a command)\n"
"  -V, --version          print the version and exit\n");
}

typedef struct {
    spawner_options_t run;      //  What submit and resume need
    const char *supernodes [SUPERNODES_MAX];
    spawner_kill_options_t kill;    //  What kill needs
    zlist_t *overrides;         //  --set items (borrowed strings)
    bool json;                  //  nodes --json
    const char *cluster;        //  drain --cluster
    bool stop_drain;            //  drain --stop
    long timeout_msec;          //  nodes --timeout
} arguments_t;

static int
s_parse_kill_option (int option, arguments_t *args)
{
    long number;
    switch (option) {
        case 'j': args->kill.job = optarg; return 0;
        case 't':
            if (jace_process_parse_int (PROGRAM, "--task", optarg, 0,
                                        1 << 30, &number))
                return 2;
            args->kill.task = number;
            return 0;
        case 'R':
            if (jace_process_parse_int (PROGRAM, "--random", optarg, 1,
                                        1 << 30, &number))
                return 2;
            args->kill.random = number;
            return 0;
        case 'E':
            return jace_process_parse_double (PROGRAM, "--every", optarg,
                                              0.01, 1e6, &args->kill.every)
                   ? 2 : 0;
        case 'N':
            if (jace_process_parse_int (PROGRAM, "--rounds", optarg, 1,
                                        1 << 30, &number))
                return 2;
            args->kill.rounds = number;
            return 0;
        case 'D':
            if (jace_process_parse_int (PROGRAM, "--seed", optarg, 1,
                                        0x7fffffffL, &number))
                return 2;
            args->kill.seed = (uint64_t) number;
            return 0;
        case 'U': args->kill.run_dir = optarg; return 0;
        case 'X': args->kill.crash_supernode = true; return 0;
        default: return -1;
    }
}

static int
s_parse (int argc, char *argv [], arguments_t *args)
{
    static struct option options [] = {
        { "supernode", required_argument, 0, 's' },
        { "set", required_argument, 0, 'S' },
        { "out", required_argument, 0, 'o' },
        { "events", required_argument, 0, 'e' },
        { "report", required_argument, 0, 'r' },
        { "plot", required_argument, 0, 'p' },
        { "keys", required_argument, 0, 'k' },
        { "cert", required_argument, 0, 'c' },
        { "secrets", required_argument, 0, 'K' },
        { "bind", required_argument, 0, 'b' },
        { "insecure", no_argument, 0, 'I' },
        { "quiet", no_argument, 0, 'q' },
        { "json", no_argument, 0, 'J' },
        { "timeout", required_argument, 0, 'T' },
        { "job", required_argument, 0, 'j' },
        { "task", required_argument, 0, 't' },
        { "random", required_argument, 0, 'R' },
        { "every", required_argument, 0, 'E' },
        { "rounds", required_argument, 0, 'N' },
        { "seed", required_argument, 0, 'D' },
        { "run", required_argument, 0, 'U' },
        { "crash-supernode", no_argument, 0, 'X' },
        { "cluster", required_argument, 0, 'L' },
        { "stop", no_argument, 0, 'P' },
        { "apps", required_argument, 0, 'a' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 }
    };
    int option;
    while ((option = getopt_long (argc, argv, "s:S:o:e:r:p:k:c:b:qj:t:h",
                                  options, NULL)) != -1) {
        int rc = s_parse_kill_option (option, args);
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        switch (option) {
            case 's':
                if (args->run.supernode_count == SUPERNODES_MAX) {
                    fprintf (stderr, PROGRAM ": at most %d --supernode\n",
                             SUPERNODES_MAX);
                    return 2;
                }
                if (jace_process_parse_endpoint (PROGRAM, "--supernode",
                                                 optarg))
                    return 2;
                args->supernodes [args->run.supernode_count++] = optarg;
                break;
            case 'S': zlist_append (args->overrides, optarg); break;
            case 'o': args->run.out_path = optarg; break;
            case 'e': args->run.events_path = optarg; break;
            case 'r': args->run.report_path = optarg; break;
            case 'p': args->run.plot_path = optarg; break;
            case 'k': args->run.keys_dir = optarg; break;
            case 'c': args->run.cert = optarg; break;
            case 'K': args->run.secrets_dir = optarg; break;
            case 'b': args->run.bind = optarg; break;
            case 'I': args->run.insecure = true; break;
            case 'q': args->run.quiet = true; break;
            case 'J': args->json = true; break;
            case 'L': args->cluster = optarg; break;
            case 'P': args->stop_drain = true; break;
            case 'a':
                if (s_apps_dir_count == APPS_DIRS_MAX) {
                    fprintf (stderr, PROGRAM ": at most %d --apps\n",
                             APPS_DIRS_MAX);
                    return 2;
                }
                s_apps_dirs [s_apps_dir_count++] = optarg;
                break;
            case 'T':
                if (jace_process_parse_int (PROGRAM, "--timeout", optarg, 1,
                                            3600000, &args->timeout_msec))
                    return 2;
                break;
            case 'h': s_usage (stdout); exit (0);
            default: s_usage (stderr); return 2;
        }
    }
    args->run.supernodes = args->supernodes;
    args->run.supernode = args->supernodes [0];
    args->kill.supernode = args->run.supernode;
    args->kill.keys_dir = args->run.keys_dir;
    args->kill.cert = args->run.cert;
    args->kill.secrets_dir = args->run.secrets_dir;
    return 0;
}

//  True if a file can be written at path later: an existing regular file
//  we may write, or a new one in a folder we may write.  Checked before
//  the job runs: a verified answer was lost to a mistyped --out folder.
static bool
s_writable (const char *option, const char *path)
{
    struct stat info;
    const char *why = NULL;
    //  A pipe or a device (/dev/stdout, a FIFO) is written as a file is
    if (stat (path, &info) == 0)
        why = !S_ISREG (info.st_mode) && !S_ISFIFO (info.st_mode)
              && !S_ISCHR (info.st_mode) ? "not a regular file"
            : access (path, W_OK) ? strerror (errno) : NULL;
    else {
        char *copy = strdup (path);
        assert (copy);
        const char *folder = dirname (copy);
        if (stat (folder, &info) != 0)
            why = "its folder does not exist";
        else
        if (!S_ISDIR (info.st_mode) || access (folder, W_OK | X_OK))
            why = "its folder cannot be written";
        free (copy);
    }
    if (why)
        fprintf (stderr, PROGRAM ": %s %s: %s\n", option, path, why);
    return why == NULL;
}

//  What each command requires beyond its own argument.
static int
s_check (const char *command, arguments_t *args)
{
    //  `report` reads --events; the other commands write it
    if ((args->run.out_path && !s_writable ("--out", args->run.out_path))
    ||  (args->run.report_path
         && !s_writable ("--report", args->run.report_path))
    ||  (args->run.plot_path && !s_writable ("--plot", args->run.plot_path))
    ||  (args->run.events_path && !streq (command, "report")
         && !s_writable ("--events", args->run.events_path)))
        return 2;
    if (args->run.plot_path
    &&  !spawner_report_plot_format_known (args->run.plot_path)) {
        fprintf (stderr, PROGRAM ": --plot %s: unknown plot format; name "
                 "the file .png or .svg\n", args->run.plot_path);
        return 2;
    }
    const char *missing = NULL;
    if (!streq (command, "report") && !args->run.supernode)
        missing = "--supernode EP is required";
    else
    if (args->run.report_path && !args->run.events_path)
        missing = "--report needs --events FILE (the report is made from it)";
    else
    if (streq (command, "kill") && !args->kill.crash_supernode
    &&  (!args->kill.job || (args->kill.task < 0) == (args->kill.random == 0)))
        missing = "kill needs --job JOBID and one of --task K or --random N "
                  "(or --crash-supernode)";
    else
    if (streq (command, "drain")
    &&  (!args->cluster || !*args->cluster) == !args->stop_drain)
        missing = args->stop_drain
                ? "drain takes --cluster NAME or --stop, not both"
                : "drain needs one of --cluster NAME or --stop";
    if (missing) {
        fprintf (stderr, PROGRAM ": %s\n", missing);
        return 2;
    }
    return 0;
}

static int
s_write_report (const spawner_options_t *options)
{
    FILE *out = fopen (options->report_path, "w");
    if (!out) {
        fprintf (stderr, PROGRAM ": cannot write %s: %s\n",
                 options->report_path, strerror (errno));
        return 1;
    }
    char reason [1024] = "";
    int rc = spawner_report_write (options->events_path, out,
                                   options->plot_path, reason,
                                   sizeof reason);
    fclose (out);
    if (rc)
        fprintf (stderr, PROGRAM ": report: %s\n", reason);
    return rc ? 1 : 0;
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
    if (args->run.report_path && s_write_report (&args->run) && rc == 0)
        rc = 1;
    return rc;
}

static int
s_resume (arguments_t *args, const char *job_id)
{
    int rc = spawner_resume (job_id, &args->run);
    if (args->run.report_path && s_write_report (&args->run) && rc == 0)
        rc = 1;
    return rc;
}

static int
s_report (arguments_t *args, const char *events)
{
    char reason [1024] = "";
    if (spawner_report_write (events, stdout, args->run.plot_path, reason,
                              sizeof reason)) {
        fprintf (stderr, PROGRAM ": %s\n", reason);
        return 1;
    }
    return 0;
}

//  The application plugins a job may name (submit and resume load and
//  verify jobs).
static int
s_load_apps (void)
{
    char reason [1024];
    if (app_plugin_load_all (s_apps_dirs, s_apps_dir_count, reason,
                             sizeof reason) >= 0)
        return 0;
    fprintf (stderr, PROGRAM ": %s\n", reason);
    return 1;
}

static int
s_dispatch (const char *command, const char *operand, arguments_t *args)
{
    if ((streq (command, "submit") || streq (command, "resume"))
    &&  s_load_apps ())
        return 1;
    if (streq (command, "submit"))
        return s_submit (args);
    if (streq (command, "resume"))
        return s_resume (args, operand);
    if (streq (command, "kill"))
        return spawner_kill (&args->kill);
    if (streq (command, "report"))
        return s_report (args, operand);
    if (streq (command, "status"))
        return spawner_jobs_status (operand, args->run.supernode,
                                    args->run.keys_dir, args->run.cert,
                                    args->run.secrets_dir, args->json,
                                    (int) args->timeout_msec);
    if (streq (command, "jobs"))
        return spawner_jobs_list (args->run.supernode, args->run.keys_dir,
                                  args->run.cert, args->run.secrets_dir,
                                  args->json, (int) args->timeout_msec);
    if (streq (command, "cancel"))
        return spawner_jobs_cancel (operand, args->run.supernode,
                                    args->run.keys_dir, args->run.cert,
                                    args->run.secrets_dir,
                                    (int) args->timeout_msec);
    if (streq (command, "drain"))
        return spawner_jobs_drain (operand, args->stop_drain ? NULL
                                                     : args->cluster,
                                   args->run.supernode, args->run.keys_dir,
                                   args->run.cert, args->run.secrets_dir,
                                   (int) args->timeout_msec);
    if (streq (command, "rebalance"))
        return spawner_jobs_rebalance (operand, args->run.supernode,
                                       args->run.keys_dir, args->run.cert,
                                       args->run.secrets_dir,
                                       (int) args->timeout_msec);
    return spawner_nodes_list (args->run.supernode, args->run.keys_dir,
                               args->run.cert, args->json,
                               (int) args->timeout_msec);
}

//  Memory freed while the job is prepared (the problem's generation or
//  file read) serves what comes in while it runs.  By default glibc maps
//  each block over 128 KiB afresh and gives ZeroMQ's I/O thread an arena
//  of its own, so every RESULT (25,000 rows: 200 KB) arrived into new
//  pages: on this kind of VM, page faults took a 2-task job from the
//  tasks' convergence to its verified answer in 3-4 ms instead of ~2
//  (BENCHMARKS.md, "The spawner's fresh pages").  One arena, blocks up
//  to SPAWNER_HEAP_BLOCK_MAX from the heap, and a heap never trimmed: a
//  spawner serves one job and exits.
#define SPAWNER_HEAP_BLOCK_MAX (32 * 1024 * 1024)

static void
s_keep_freed_memory (void)
{
#ifdef __GLIBC__
    //  An allocator that ignores these (a sanitizer's) costs speed only
    mallopt (M_ARENA_MAX, 1);
    mallopt (M_MMAP_THRESHOLD, SPAWNER_HEAP_BLOCK_MAX);
    mallopt (M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int
main (int argc, char *argv [])
{
    jace_process_init ("spawner");
    solvers_blas_single_threaded ();
    s_keep_freed_memory ();
    if (argc < 2) {
        s_usage (stderr);
        return 2;
    }
    //  --help and --version win wherever they are, as users type them
    //  after the command they are stuck on
    for (int i = 1; i < argc && !streq (argv [i], "--"); i++) {
        if (streq (argv [i], "-h") || streq (argv [i], "--help")) {
            s_usage (stdout);
            return 0;
        }
        if (streq (argv [i], "-V") || streq (argv [i], "--version")) {
            printf (PROGRAM " %s\n", PACKAGE_VERSION);
            return 0;
        }
    }
    const char *command = argv [1];
    static const char *with_operand [] = { "submit", "resume", "report",
                                           "cancel", "drain", "status",
                                           "rebalance" };
    static const char *operand_name [] = { "JOBFILE", "JOBID", "EVENTS",
                                           "JOBID", "JOBID", "JOBID",
                                           "JOBID" };
    const char *operand = NULL;
    bool known = streq (command, "nodes") || streq (command, "kill")
              || streq (command, "jobs");
    size_t commands = sizeof with_operand / sizeof *with_operand;
    for (size_t i = 0; i < commands; i++)
        if (streq (command, with_operand [i])) {
            if (argc < 3 || argv [2][0] == '-') {
                fprintf (stderr, PROGRAM ": %s needs a %s\n", command,
                         operand_name [i]);
                return 2;
            }
            operand = argv [2];
            known = true;
        }
    if (!known) {
        fprintf (stderr, PROGRAM ": unknown command '%s' (submit, resume, "
                 "nodes, jobs, status, cancel, drain, rebalance, kill, "
                 "report)\n", command);
        return 2;
    }
    arguments_t args = { .overrides = zlist_new (), .timeout_msec = 5000,
                         .kill = { .task = -1 } };
    args.run.job_file = operand;
    int first_option = operand ? 3 : 2;
    int rc = s_parse (argc - first_option + 1, argv + first_option - 1,
                      &args);
    if (rc == 0 && optind < argc - first_option + 1) {
        fprintf (stderr, PROGRAM ": unexpected argument '%s'\n",
                 argv [first_option - 1 + optind]);
        rc = 2;
    }
    if (rc == 0)
        rc = s_check (command, &args);
    if (rc == 0)
        rc = s_dispatch (command, operand, &args);
    zlist_destroy (&args.overrides);
    return rc;
}
