/*  =========================================================================
    jace-grid - start, watch, crash and stop a local virtual grid

    One command starts a whole grid described by a platform file as real
    processes on this machine (super-nodes and daemons, with their
    clusters and speeds), another stops it.  The demo and the tests use it;
    so can anyone who wants a heterogeneous grid on a laptop.  Everything
    about a running grid lives in its run folder (see grid_run.h).
    =========================================================================
*/
#include <czmq.h>
#include <getopt.h>

#include "grid_bulk.h"
#include "grid_launch.h"
#include "grid_netns.h"
#include "grid_proc.h"
#include "grid_revive.h"
#include "grid_run.h"

//  Exit codes: 0 success, 1 failure, 2 bad command line
#define EXIT_USAGE 2
//  What s_parse_options found instead of options to run with
#define PARSED_HELP (-1)
#define PARSED_VERSION (-2)
//  Default bound on a start, in seconds
#define GRID_START_TIMEOUT_SEC 30
//  Most unrecorded processes of one run folder stop looks for
#define GRID_MEMBERS_MAX 4096

//  Default grace between SIGTERM and SIGKILL when stopping, in seconds
#define GRID_STOP_GRACE_SEC 5
//  How long a killed process may take to vanish
#define GRID_KILL_WAIT_MSEC 2000
//  Default size of a bulk transfer, and the most we send
#define GRID_BULK_DEFAULT_BYTES 4000000
#define GRID_BULK_MAX_BYTES 100000000000.0

static const char *s_usage =
"Usage: jace-grid COMMAND --run DIR [OPTION]...\n"
"       jace-grid sweep [--grace SEC]\n"
"Start, watch, crash and stop a local virtual grid of Jace processes.\n"
"\n"
"Commands:\n"
"  start --platform FILE --run DIR [--netns] [--bin DIR] [--keys DIR]\n"
"        [--timeout SEC] [--supernode-arg ARG]... [--daemon-arg ARG]...\n"
"        [--verbose]\n"
"      Start every cluster's super-nodes on tcp://127.0.0.1:* (peered with\n"
"      each other), then its daemons with their speed and power, and wait\n"
"      (at most --timeout seconds, default 30) until every daemon is\n"
"      registered.  Prints the first super-node's endpoint on stdout:\n"
"          sn=$(jace-grid start --platform FILE --run DIR)\n"
"      On failure, stops what it started and exits 1.\n"
"      --netns (root only): run each cluster in a network namespace of its\n"
"      own, at 10.S.C.1 (S picked per run, C = 1, 2...), joined by one\n"
"      backbone that tc tbf limits to the platform's bandwidth_mbps, and\n"
"      each cluster's uplink to its uplink_mbps; the processes emulate\n"
"      only latencies (DIR/platform-latency-only).  This machine reaches\n"
"      every cluster through a route; DIR/netns lists what was made.\n"
"  stop --run DIR [--grace SEC]\n"
"      SIGTERM every recorded process, SIGKILL those still there after\n"
"      --grace seconds (default 5), and remove DIR/pids, then every\n"
"      namespace, link and qdisc of a --netns start.  Logs are kept.\n"
"      Daemons and super-nodes that name a file of DIR but are not in\n"
"      DIR/pids (a launcher killed before it recorded them) go too, even\n"
"      when DIR itself was deleted.\n"
"  sweep [--grace SEC]\n"
"      Stop (as stop does) every daemon and super-node of this user whose\n"
"      --platform file's folder no longer exists: grids whose run folder\n"
"      was deleted before they were stopped.  Prints \"PID FOLDER\" for\n"
"      each; then, as root, removes the namespaces and links of --netns\n"
"      grids whose run folder is gone, printing \"netns jace-TAG FOLDER\".\n"
"  status --run DIR\n"
"      List the recorded processes and whether each is alive.  Exits 0\n"
"      only if all are.\n"
"  kill --run DIR (--daemon NAME | --supernode NAME | --random N)...\n"
"      SIGKILL the named processes, or N live daemons picked at random,\n"
"      to emulate crashes.  Prints the names killed, one per line.\n"
"  revive --run DIR\n"
"      Start again every recorded daemon that is dead, with its command\n"
"      line but a new id (NAME+1, then NAME+2...): a volatile node that\n"
"      comes back joins as a new one.  Prints \"OLD NEW\" per daemon.\n"
"  bulk --run DIR --from CLUSTER --to CLUSTER [--bytes N] [--timeout SEC]\n"
"      In a --netns grid, time one TCP transfer of N bytes (default 4M;\n"
"      suffixes k, M, G are powers of 1000) from one cluster's namespace\n"
"      to another's, or within one, and print the rate it got (giving up\n"
"      after --timeout seconds, default 30):\n"
"          from A to B: 4000000 bytes in 3.215 s, 9.953 Mb/s\n"
"  cut --run DIR --cluster NAME\n"
"      In a --netns grid, cut a cluster off the backbone: every packet\n"
"      to or from it is dropped without an answer, so the rest of the grid\n"
"      and this machine hear nothing from its processes (they live on, and\n"
"      reach each other), as when a site's link goes down.\n"
"  heal --run DIR --cluster NAME\n"
"      Join a cut cluster to the backbone again.\n"
"\n"
"Options:\n"
"  --platform FILE   platform file (ZPL; see jace-platform(5))\n"
"  --netns           start the clusters in network namespaces\n"
"  --run DIR         run folder: pids, supernodes, platform, logs/\n"
"  --bin DIR         where jace-supernode, jace-daemon and jace-spawner\n"
"                    are (default: next to jace-grid, else PATH)\n"
"  --keys DIR        CURVE certificates (jace-keygen), given to every\n"
"                    process\n"
"  --supernode-arg ARG, --daemon-arg ARG\n"
"                    extra argument for every super-node or daemon, e.g.\n"
"                    --daemon-arg=--heartbeat --daemon-arg=200\n"
"  --verbose         report each step on stderr\n"
"  -h, --help        show this help (also after a command)\n"
"  -V, --version     print the version and exit\n"
"\n"
"Processes are named CLUSTER-snK (super-nodes) and CLUSTER-N (daemons,\n"
"also their --id); each logs to DIR/logs/NAME.log.  DIR/pids has one line\n"
"per process: role name pid endpoint-or-dash cluster.\n";

//  Options of every command; each command uses some of them
typedef struct {
    grid_launch_options_t launch;   //  What start needs
    int grace_sec;                  //  stop: SIGTERM to SIGKILL
    zlist_t *kill_daemons;          //  kill: daemon names, borrowed
    zlist_t *kill_supernodes;       //  kill: super-node names, borrowed
    int kill_random;                //  kill: daemons picked at random
    const char *bulk_from;          //  bulk: sending cluster
    const char *bulk_to;            //  bulk: receiving cluster
    size_t bulk_bytes;              //  bulk: bytes to send
    const char *cluster;            //  cut, heal: the cluster
} grid_options_t;


//  --------------------------------------------------------------------------
//  Complain about the command line

static int
s_usage_error (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "jace-grid: ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\nTry 'jace-grid --help' for more information.\n");
    va_end (args);
    return EXIT_USAGE;
}


//  --------------------------------------------------------------------------
//  Parse a positive integer option.  Returns 0, or -1 if text is not one.

static int
s_parse_count (const char *text, int max, int *value)
{
    char *end = NULL;
    errno = 0;
    long parsed = strtol (text, &end, 10);
    if (errno || end == text || *end || parsed <= 0 || parsed > max)
        return -1;
    *value = (int) parsed;
    return 0;
}


//  --------------------------------------------------------------------------
//  Parse a byte count: a whole number with an optional k, M or G (powers
//  of 1000).  Returns 0, or -1 if text is not one in [1, max].

static int
s_parse_bytes (const char *text, double max, size_t *value)
{
    char *end = NULL;
    errno = 0;
    double parsed = strtod (text, &end);
    if (errno || end == text || !isdigit ((unsigned char) text [0]))
        return -1;
    const char *suffixes = "kMG";
    const char *suffix = *end ? strchr (suffixes, *end) : NULL;
    if (suffix) {
        parsed *= pow (1000, (double) (suffix - suffixes + 1));
        end++;
    }
    if (*end || parsed < 1 || parsed > max || parsed != floor (parsed))
        return -1;
    *value = (size_t) parsed;
    return 0;
}


//  --------------------------------------------------------------------------
//  Append an extra argument for super-nodes or daemons

static int
s_add_extra (const char **extra, size_t *count, const char *argument)
{
    if (*count == GRID_LAUNCH_EXTRA_MAX)
        return s_usage_error ("more than %d extra arguments",
                              GRID_LAUNCH_EXTRA_MAX);
    extra [(*count)++] = argument;
    return 0;
}


//  --------------------------------------------------------------------------
//  Apply one parsed option.  Returns 0, or EXIT_USAGE.

static int
s_apply_option (grid_options_t *options, const char *name, const char *value)
{
    grid_launch_options_t *launch = &options->launch;
    int number = 0;
    if (streq (name, "platform"))
        launch->platform_path = value;
    else
    if (streq (name, "run"))
        launch->run_dir = value;
    else
    if (streq (name, "bin"))
        launch->bin_dir = value;
    else
    if (streq (name, "keys"))
        launch->keys_dir = value;
    else
    if (streq (name, "verbose"))
        launch->verbose = true;
    else
    if (streq (name, "netns"))
        launch->netns = true;
    else
    if (streq (name, "from"))
        options->bulk_from = value;
    else
    if (streq (name, "to"))
        options->bulk_to = value;
    else
    if (streq (name, "cluster"))
        options->cluster = value;
    else
    if (streq (name, "bytes")) {
        if (s_parse_bytes (value, GRID_BULK_MAX_BYTES, &options->bulk_bytes))
            return s_usage_error ("--bytes wants a whole number of bytes"
                                  " (with k, M or G), not '%s'", value);
    }
    else
    if (streq (name, "supernode-arg"))
        return s_add_extra (launch->supernode_extra,
                            &launch->supernode_extra_count, value);
    else
    if (streq (name, "daemon-arg"))
        return s_add_extra (launch->daemon_extra,
                            &launch->daemon_extra_count, value);
    else
    if (streq (name, "timeout") || streq (name, "grace")) {
        if (s_parse_count (value, 86400, &number))
            return s_usage_error ("--%s wants a number of seconds, not '%s'",
                                  name, value);
        if (streq (name, "timeout"))
            launch->timeout_msec = number * 1000;
        else
            options->grace_sec = number;
    }
    else
    if (streq (name, "random")) {
        if (s_parse_count (value, 1000000, &options->kill_random))
            return s_usage_error ("--random wants a positive count, not"
                                  " '%s'", value);
    }
    else
    if (streq (name, "daemon"))
        zlist_append (options->kill_daemons, (void *) value);
    else
    if (streq (name, "supernode"))
        zlist_append (options->kill_supernodes, (void *) value);
    return 0;
}


//  --------------------------------------------------------------------------
//  Parse the options after the command.  Each command accepts only the
//  options listed for it in allowed ("platform run ..."), so a typo is an
//  error rather than silently ignored.  Returns 0, PARSED_HELP,
//  PARSED_VERSION or EXIT_USAGE.

static int
s_parse_options (grid_options_t *options, const char *command,
                 const char *allowed, int argc, char **argv)
{
    static const struct option table [] = {
        { "platform", required_argument, NULL, 0 },
        { "run", required_argument, NULL, 0 },
        { "bin", required_argument, NULL, 0 },
        { "keys", required_argument, NULL, 0 },
        { "timeout", required_argument, NULL, 0 },
        { "supernode-arg", required_argument, NULL, 0 },
        { "daemon-arg", required_argument, NULL, 0 },
        { "verbose", no_argument, NULL, 0 },
        { "grace", required_argument, NULL, 0 },
        { "daemon", required_argument, NULL, 0 },
        { "supernode", required_argument, NULL, 0 },
        { "random", required_argument, NULL, 0 },
        { "netns", no_argument, NULL, 0 },
        { "from", required_argument, NULL, 0 },
        { "to", required_argument, NULL, 0 },
        { "bytes", required_argument, NULL, 0 },
        { "cluster", required_argument, NULL, 0 },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    opterr = 0;
    optind = 1;
    int which = 0;
    int code;
    while ((code = getopt_long (argc, argv, ":hV", table, &which)) != -1) {
        if (code == 'h' || code == 'V')
            return code == 'h' ? PARSED_HELP : PARSED_VERSION;
        if (code == '?' || code == ':')
            return s_usage_error ("%s: %s option '%s'", command,
                                  code == '?' ? "unknown" : "incomplete",
                                  argv [optind - 1]);
        const char *name = table [which].name;
        char word [32];
        snprintf (word, sizeof word, " %s ", name);
        char *padded = zsys_sprintf (" %s ", allowed);
        bool accepted = strstr (padded, word) != NULL;
        free (padded);
        if (!accepted)
            return s_usage_error ("%s does not take --%s", command, name);
        int rc = s_apply_option (options, name, optarg);
        if (rc)
            return rc;
    }
    if (optind < argc)
        return s_usage_error ("%s: unexpected argument '%s'", command,
                              argv [optind]);
    if (!options->launch.run_dir && !streq (command, "sweep"))
        return s_usage_error ("%s needs --run DIR", command);
    return 0;
}


//  --------------------------------------------------------------------------
//  Load the records of a run folder, or say why not.  Returns NULL if there
//  is no grid recorded there.

static grid_run_t *
s_load_run (const char *dir, bool quiet_if_none)
{
    grid_run_t *run = grid_run_new (dir);
    if (!grid_run_has_pids (run)) {
        if (!quiet_if_none)
            fprintf (stderr, "jace-grid: no grid recorded in %s (no %s/pids)"
                     "\n", dir, dir);
        grid_run_destroy (&run);
        return NULL;
    }
    char reason [512];
    if (grid_run_load (run, reason, sizeof reason)) {
        fprintf (stderr, "jace-grid: %s\n", reason);
        grid_run_destroy (&run);
    }
    return run;
}


//  --------------------------------------------------------------------------
//  jace-grid start

static int
s_command_start (grid_options_t *options)
{
    if (!options->launch.platform_path)
        return s_usage_error ("start needs --platform FILE");
    return grid_launch_start (&options->launch) == 0 ? 0 : 1;
}


//  --------------------------------------------------------------------------
//  Stop the recorded processes.  Returns 0, or 1 when some would not die
//  (their records are then kept).

static int
s_stop_processes (grid_run_t *run, int grace_sec)
{
    const char *dir = grid_run_dir (run);
    size_t alive = grid_launch_stop (run, grace_sec * 1000);
    if (alive > 0) {
        fprintf (stderr, "jace-grid: %zu processes would not die; %s/pids"
                 " kept\n", alive, dir);
        return 1;
    }
    if (grid_run_remove_pids (run)) {
        fprintf (stderr, "jace-grid: cannot remove %s/pids: %s\n", dir,
                 strerror (errno));
        return 1;
    }
    return 0;
}


//  --------------------------------------------------------------------------
//  Stop the daemons and super-nodes that name a file of the run folder
//  but not in its pids file: a launcher killed between starting one and
//  recording it leaves such a process.  SIGTERM, SIGKILL after the grace.
//  Returns 0, or 1 when some would not die; *found says how many there
//  were.

static int
s_stop_unrecorded (const char *dir, int grace_sec, size_t *found)
{
    pid_t pids [GRID_MEMBERS_MAX];
    size_t count = grid_proc_find_members (dir, pids, GRID_MEMBERS_MAX);
    *found = count;
    for (int signum = SIGTERM; count > 0; signum = SIGKILL) {
        for (size_t index = 0; index < count; index++)
            grid_proc_signal (pids [index], signum);
        int64_t deadline = zclock_mono ()
                         + (signum == SIGTERM ? grace_sec * 1000 : 2000);
        while (count > 0 && zclock_mono () < deadline) {
            zclock_sleep (50);
            count = grid_proc_find_members (dir, pids, GRID_MEMBERS_MAX);
        }
        if (signum == SIGKILL)
            break;
    }
    if (count > 0)
        fprintf (stderr, "jace-grid: %zu processes of %s not in its pids "
                 "file would not die\n", count, dir);
    return count > 0 ? 1 : 0;
}


//  --------------------------------------------------------------------------
//  jace-grid stop.  The namespaces go after the processes, and even when
//  some of those survived: a namespace whose name is removed ends with the
//  last process in it, and leaves nothing behind meanwhile.

static int
s_command_stop (grid_options_t *options)
{
    const char *dir = options->launch.run_dir;
    grid_run_t *run = s_load_run (dir, true);
    int rc = run ? s_stop_processes (run, options->grace_sec) : 0;
    size_t unrecorded = 0;
    rc |= s_stop_unrecorded (dir, options->grace_sec, &unrecorded);
    if (unrecorded > 0 && !zsys_file_exists (dir))
        fprintf (stderr, "jace-grid: stopped %zu processes of %s, deleted "
                 "before its grid was stopped\n", unrecorded, dir);
    else
    if (unrecorded > 0)
        fprintf (stderr, "jace-grid: stopped %zu processes of %s that its "
                 "pids file did not name (started by hand, or by a launcher "
                 "killed before it recorded them)\n", unrecorded, dir);
    bool stopped = run != NULL || unrecorded > 0;
    grid_run_destroy (&run);

    run = grid_run_new (dir);
    if (grid_netns_is_recorded (run)) {
        char reason [1024];
        if (grid_netns_remove (run, reason, sizeof reason)) {
            fprintf (stderr, "jace-grid: %s\n", reason);
            rc = 1;
        }
    }
    else
    if (!stopped)
        fprintf (stderr, "jace-grid: nothing to stop in %s\n", dir);
    grid_run_destroy (&run);
    return rc;
}


//  --------------------------------------------------------------------------
//  jace-grid sweep: the daemons and super-nodes of grids whose run folder
//  was deleted before they were stopped.  Nothing else can find them
//  (stop needs the folder's pids file), and idle, they still beat and
//  probe: some 250 of them once held a 2-core machine's load near 8.

//  Stop the daemons and super-nodes whose run folder is gone, printing
//  each.  Returns 0, or 1 when some would not die.
static int
s_sweep_processes (int grace_sec)
{
    grid_proc_orphan_t *orphans = (grid_proc_orphan_t *)
        zmalloc (GRID_MEMBERS_MAX * sizeof (grid_proc_orphan_t));
    size_t count = grid_proc_find_orphans (orphans, GRID_MEMBERS_MAX);
    for (size_t index = 0; index < count; index++) {
        printf ("%d %s\n", (int) orphans [index].pid, orphans [index].folder);
        grid_proc_signal (orphans [index].pid, SIGTERM);
    }
    size_t alive = count;
    for (int signum = SIGTERM; alive > 0; signum = SIGKILL) {
        int64_t deadline = zclock_mono ()
                         + (signum == SIGTERM ? grace_sec * 1000
                                              : GRID_KILL_WAIT_MSEC);
        do {
            zclock_sleep (50);
            alive = 0;
            for (size_t index = 0; index < count; index++)
                alive += grid_proc_is_alive (orphans [index].pid);
        } while (alive > 0 && zclock_mono () < deadline);
        if (signum == SIGKILL || alive == 0)
            break;
        for (size_t index = 0; index < count; index++)
            if (grid_proc_is_alive (orphans [index].pid))
                grid_proc_signal (orphans [index].pid, SIGKILL);
    }
    free (orphans);
    if (alive > 0)
        fprintf (stderr, "jace-grid: %zu of the %zu processes swept would "
                 "not die\n", alive, count);
    else
        fprintf (stderr, "jace-grid: swept %zu processes of grids whose run "
                 "folder is gone\n", count);
    return alive > 0 ? 1 : 0;
}

//  Remove the namespaces of --netns grids whose run folder is gone (only
//  root makes them), printing each.  Returns 0, or 1 if one would not go.
static int
s_sweep_namespaces (void)
{
    if (geteuid () != 0)
        return 0;
    char reason [1024] = "";
    zlist_t *swept = grid_netns_sweep (reason, sizeof reason);
    for (char *line = (char *) zlist_first (swept); line;
         line = (char *) zlist_next (swept))
        printf ("netns %s\n", line);
    if (*reason)
        fprintf (stderr, "jace-grid: %s\n", reason);
    if (zlist_size (swept))
        fprintf (stderr, "jace-grid: removed the namespaces of %zu "
                 "testbed%s whose run folder is gone\n",
                 zlist_size (swept), zlist_size (swept) == 1 ? "" : "s");
    zlist_destroy (&swept);
    return *reason ? 1 : 0;
}

//  The processes first: a namespace's name removed while a process runs
//  in it lives on until that process ends.
static int
s_command_sweep (grid_options_t *options)
{
    int rc = s_sweep_processes (options->grace_sec);
    return s_sweep_namespaces () | rc;
}


//  --------------------------------------------------------------------------
//  jace-grid status

static int
s_command_status (grid_options_t *options)
{
    grid_run_t *run = s_load_run (options->launch.run_dir, false);
    if (!run)
        return 1;
    size_t dead = 0;
    printf ("%-9s %-16s %8s %-5s %-10s %s\n", "ROLE", "NAME", "PID",
            "STATE", "CLUSTER", "ENDPOINT");
    for (size_t index = 0; index < grid_run_size (run); index++) {
        grid_proc_record_t *record = grid_run_record (run, index);
        bool alive = grid_proc_is_alive (record->pid);
        if (!alive)
            dead++;
        printf ("%-9s %-16s %8d %-5s %-10s %s\n", record->role, record->name,
                (int) record->pid, alive ? "alive" : "dead", record->cluster,
                record->endpoint);
    }
    grid_run_destroy (&run);
    return dead == 0 ? 0 : 1;
}


//  --------------------------------------------------------------------------
//  SIGKILL one recorded process and wait until it is gone.  Returns 0, or
//  -1 when it is still there.

static int
s_kill_record (grid_proc_record_t *record)
{
    if (!grid_proc_is_alive (record->pid)) {
        fprintf (stderr, "jace-grid: %s %s is not running\n", record->role,
                 record->name);
        return 0;
    }
    grid_proc_signal (record->pid, SIGKILL);
    int64_t deadline = zclock_mono () + GRID_KILL_WAIT_MSEC;
    while (grid_proc_is_alive (record->pid) && zclock_mono () < deadline)
        zclock_sleep (10);
    if (grid_proc_is_alive (record->pid)) {
        fprintf (stderr, "jace-grid: %s %s (pid %d) survived SIGKILL\n",
                 record->role, record->name, (int) record->pid);
        return -1;
    }
    printf ("%s\n", record->name);
    return 0;
}


//  --------------------------------------------------------------------------
//  Kill the processes named in a list.  Returns 0, or -1 if one is unknown
//  or would not die.

static int
s_kill_named (grid_run_t *run, const char *role, zlist_t *names)
{
    int rc = 0;
    for (const char *name = (const char *) zlist_first (names); name;
         name = (const char *) zlist_next (names)) {
        grid_proc_record_t *record = grid_run_find (run, role, name);
        if (!record) {
            fprintf (stderr, "jace-grid: no %s named %s in %s/pids\n",
                     role, name, grid_run_dir (run));
            rc = -1;
        }
        else
        if (s_kill_record (record))
            rc = -1;
    }
    return rc;
}


//  --------------------------------------------------------------------------
//  Kill count live daemons picked at random

static int
s_kill_random (grid_run_t *run, int count)
{
    size_t size = grid_run_size (run);
    grid_proc_record_t **live = (grid_proc_record_t **)
        zmalloc ((size + 1) * sizeof (grid_proc_record_t *));
    size_t live_count = 0;
    for (size_t index = 0; index < size; index++) {
        grid_proc_record_t *record = grid_run_record (run, index);
        if (streq (record->role, "daemon") && grid_proc_is_alive (record->pid))
            live [live_count++] = record;
    }
    int rc = 0;
    if ((size_t) count > live_count) {
        fprintf (stderr, "jace-grid: cannot kill %d daemons, only %zu"
                 " alive\n", count, live_count);
        rc = -1;
    }
    srandom ((unsigned) (zclock_time () ^ getpid ()));
    for (int killed = 0; rc == 0 && killed < count; killed++) {
        //  Partial Fisher-Yates: pick from the live ones not yet taken.
        size_t pick = killed + (size_t) random () % (live_count - killed);
        grid_proc_record_t *chosen = live [pick];
        live [pick] = live [killed];
        live [killed] = chosen;
        rc = s_kill_record (chosen);
    }
    free (live);
    return rc;
}


//  --------------------------------------------------------------------------
//  jace-grid kill

static int
s_command_kill (grid_options_t *options)
{
    if (zlist_size (options->kill_daemons) == 0
    &&  zlist_size (options->kill_supernodes) == 0
    &&  options->kill_random == 0)
        return s_usage_error ("kill needs --daemon NAME, --supernode NAME"
                              " or --random N");
    grid_run_t *run = s_load_run (options->launch.run_dir, false);
    if (!run)
        return 1;
    int rc = s_kill_named (run, "daemon", options->kill_daemons);
    if (s_kill_named (run, "supernode", options->kill_supernodes))
        rc = -1;
    if (options->kill_random > 0 && s_kill_random (run, options->kill_random))
        rc = -1;
    grid_run_destroy (&run);
    return rc == 0 ? 0 : 1;
}


//  --------------------------------------------------------------------------
//  jace-grid revive

static int
s_command_revive (grid_options_t *options)
{
    grid_run_t *run = s_load_run (options->launch.run_dir, false);
    if (!run)
        return 1;
    int revived = grid_revive_dead (run);
    grid_run_destroy (&run);
    return revived < 0 ? 1 : 0;
}


//  --------------------------------------------------------------------------
//  True if the run in dir was started with --netns, else false with why
//  (bulk, cut and heal work on namespaces only)

static bool
s_netns_recorded (grid_run_t *run, const char *dir, char *reason,
                  size_t reason_size)
{
    if (grid_netns_is_recorded (run))
        return true;
    snprintf (reason, reason_size, "no namespaces recorded in %s (no "
              "%s/netns): start the grid with --netns", dir, dir);
    return false;
}


//  --------------------------------------------------------------------------
//  jace-grid bulk

static int
s_command_bulk (grid_options_t *options)
{
    if (!options->bulk_from || !options->bulk_to)
        return s_usage_error ("bulk needs --from CLUSTER and --to CLUSTER");
    const char *dir = options->launch.run_dir;
    grid_run_t *run = grid_run_new (dir);
    char from_namespace [GRID_NETNS_NAME_MAX];
    char from_address [GRID_NETNS_ADDRESS_MAX];
    char to_namespace [GRID_NETNS_NAME_MAX];
    char to_address [GRID_NETNS_ADDRESS_MAX];
    char reason [1024] = "";
    double seconds = 0;
    int rc = -1;
    if (s_netns_recorded (run, dir, reason, sizeof reason)
    &&  grid_netns_lookup (run, options->bulk_from, from_namespace,
                           from_address, reason, sizeof reason) == 0
    &&  grid_netns_lookup (run, options->bulk_to, to_namespace, to_address,
                           reason, sizeof reason) == 0)
        rc = grid_bulk_transfer (from_namespace, to_namespace, to_address,
                                 options->bulk_bytes,
                                 options->launch.timeout_msec, &seconds,
                                 reason, sizeof reason);
    if (rc == 0)
        printf ("from %s to %s: %zu bytes in %.3f s, %.3f Mb/s\n",
                options->bulk_from, options->bulk_to, options->bulk_bytes,
                seconds, options->bulk_bytes * 8 / seconds / 1e6);
    else
        fprintf (stderr, "jace-grid: bulk from %s to %s: %s\n",
                 options->bulk_from, options->bulk_to, reason);
    grid_run_destroy (&run);
    return rc == 0 ? 0 : 1;
}


//  --------------------------------------------------------------------------
//  jace-grid cut, jace-grid heal

static int
s_cut_or_heal (grid_options_t *options, bool cut)
{
    const char *command = cut ? "cut" : "heal";
    if (!options->cluster)
        return s_usage_error ("%s needs --cluster NAME", command);
    const char *dir = options->launch.run_dir;
    grid_run_t *run = grid_run_new (dir);
    char reason [1024] = "";
    int rc = -1;
    if (s_netns_recorded (run, dir, reason, sizeof reason))
        rc = grid_netns_cut (run, options->cluster, cut, reason,
                             sizeof reason);
    if (rc)
        fprintf (stderr, "jace-grid: %s %s: %s\n", command, options->cluster,
                 reason);
    grid_run_destroy (&run);
    return rc == 0 ? 0 : 1;
}

static int
s_command_cut (grid_options_t *options)
{
    return s_cut_or_heal (options, true);
}

static int
s_command_heal (grid_options_t *options)
{
    return s_cut_or_heal (options, false);
}


//  --------------------------------------------------------------------------
//  Options each command takes, and the command itself

typedef struct {
    const char *name;                       //  Command word
    const char *options;                    //  Options it accepts
    int (*run) (grid_options_t *options);   //  What it does
} grid_command_t;

static const grid_command_t s_commands [] = {
    { "start", "platform run netns bin keys timeout supernode-arg"
               " daemon-arg verbose", s_command_start },
    { "stop", "run grace", s_command_stop },
    { "status", "run", s_command_status },
    { "kill", "run daemon supernode random", s_command_kill },
    { "revive", "run", s_command_revive },
    { "bulk", "run from to bytes timeout", s_command_bulk },
    { "cut", "run cluster", s_command_cut },
    { "heal", "run cluster", s_command_heal },
    { "sweep", "grace", s_command_sweep },
};


int
main (int argc, char **argv)
{
    if (argc < 2)
        return s_usage_error ("missing command (start, stop, status, kill,"
                              " revive, bulk, cut, heal, sweep)");
    if (streq (argv [1], "--help") || streq (argv [1], "-h")
    ||  streq (argv [1], "help")) {
        fputs (s_usage, stdout);
        return 0;
    }
    if (streq (argv [1], "--version") || streq (argv [1], "-V")) {
        printf ("jace-grid %s\n", PACKAGE_VERSION);
        return 0;
    }
    const grid_command_t *command = NULL;
    for (size_t index = 0; index < sizeof s_commands / sizeof s_commands [0];
         index++)
        if (streq (argv [1], s_commands [index].name))
            command = &s_commands [index];
    if (!command)
        return s_usage_error ("unknown command '%s'", argv [1]);

    grid_options_t options;
    memset (&options, 0, sizeof options);
    options.launch.timeout_msec = GRID_START_TIMEOUT_SEC * 1000;
    options.grace_sec = GRID_STOP_GRACE_SEC;
    options.bulk_bytes = GRID_BULK_DEFAULT_BYTES;
    options.kill_daemons = zlist_new ();
    options.kill_supernodes = zlist_new ();
    int rc = s_parse_options (&options, command->name, command->options,
                              argc - 1, argv + 1);
    if (rc == PARSED_HELP || rc == PARSED_VERSION) {
        //  --help or --version after the command, as before it
        if (rc == PARSED_HELP)
            fputs (s_usage, stdout);
        else
            printf ("jace-grid %s\n", PACKAGE_VERSION);
        rc = 0;
    }
    else
    if (rc == 0)
        rc = command->run (&options);
    zlist_destroy (&options.kill_daemons);
    zlist_destroy (&options.kill_supernodes);
    return rc;
}
