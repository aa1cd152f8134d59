/*  =========================================================================
    grid_launch - start and stop a whole local virtual grid

    See grid_launch.h for the order of things.  The launcher blocks SIGINT
    and SIGTERM while it starts a grid and looks for them between steps,
    so an interrupted start still stops what it started; the processes it
    spawns get an empty signal mask back.
    =========================================================================
*/
#include "grid_launch.h"
#include "grid_netns.h"
#include "grid_proc.h"
#include "grid_revive.h"

#include <czmq.h>
#include <sys/resource.h>
#include "jace_links.h"
#include "platform.h"
#include "shared_links.h"

//  How often the launcher looks at files and processes while it waits
#define GRID_LAUNCH_POLL_MSEC 20
//  How often it asks the super-nodes which daemons they know
#define GRID_LAUNCH_QUERY_MSEC 250
//  Bound on one `jace-spawner nodes` query
#define GRID_LAUNCH_QUERY_TIMEOUT_MSEC 5000
//  Grace before SIGKILL when a failed start stops its processes
#define GRID_LAUNCH_ABORT_GRACE_MSEC 3000
//  Largest endpoint file or nodes listing we read
#define GRID_LAUNCH_ENDPOINT_FILE_MAX 4096
#define GRID_LAUNCH_NODES_MAX (16 * 1024 * 1024)
//  What one idle process of the grid takes on this machine (a daemon:
//  11.7 MB resident and 5 threads, measured with ps on 2026-11-28): a
//  platform asking for more than the machine holds is refused before the
//  first process starts, not after thousands of them.
#define GRID_LAUNCH_PROCESS_MIB 12
#define GRID_LAUNCH_PROCESS_THREADS 5

//  A growing argument vector of fresh strings, NULL terminated
typedef struct {
    char **items;               //  Arguments, then NULL
    size_t size;                //  Arguments before the NULL
    size_t capacity;            //  Slots allocated
} argv_t;

//  The state of one start
typedef struct {
    const grid_launch_options_t *options;   //  Borrowed; what was asked
    platform_t *platform;       //  The grid to start
    grid_run_t *run;            //  Run folder and process records
    char *bin_dir;              //  Where the binaries are, or NULL for PATH
    zlist_t *supernodes;        //  Super-node endpoints, start order
    size_t *cluster_first;      //  Per cluster: index of its first sn
    grid_netns_t *netns;        //  The clusters' namespaces, or NULL
    const char *platform_file;  //  What processes get, in the run folder
    int64_t deadline;           //  zclock_mono () bound on the start
    sigset_t interrupts;        //  SIGINT and SIGTERM, blocked meanwhile
    sigset_t saved_mask;        //  Signal mask to restore afterwards
    char error [1024];          //  Why the start failed
    char failed_name [GRID_RUN_NAME_MAX];
                                //  Process whose log explains it, or ""
} launcher_t;


//  --------------------------------------------------------------------------
//  Append a formatted argument

static void
s_argv_push (argv_t *self, const char *format, ...)
{
    if (self->size + 2 > self->capacity) {
        self->capacity = self->capacity ? self->capacity * 2 : 32;
        self->items = (char **) realloc (self->items,
                                         self->capacity * sizeof (char *));
        assert (self->items);
    }
    va_list args;
    va_start (args, format);
    self->items [self->size++] = zsys_vprintf (format, args);
    va_end (args);
    self->items [self->size] = NULL;
}


//  --------------------------------------------------------------------------
//  A vector holding just the program, whose fresh string it takes

static argv_t
s_argv_start (char *program)
{
    argv_t self = { NULL, 0, 0 };
    s_argv_push (&self, "%s", program);
    free (program);
    return self;
}


//  --------------------------------------------------------------------------
//  Free the arguments

static void
s_argv_free (argv_t *self)
{
    for (size_t index = 0; index < self->size; index++)
        free (self->items [index]);
    free (self->items);
    memset (self, 0, sizeof *self);
}


//  --------------------------------------------------------------------------
//  Record why the start failed (the first reason wins)

static int
s_fail (launcher_t *self, const char *format, ...)
{
    if (self->error [0] == 0) {
        va_list args;
        va_start (args, format);
        vsnprintf (self->error, sizeof self->error, format, args);
        va_end (args);
    }
    return -1;
}


//  --------------------------------------------------------------------------
//  True if SIGINT or SIGTERM arrived; consumes it

static bool
s_interrupted (launcher_t *self)
{
    sigset_t pending;
    sigpending (&pending);
    if (!sigismember (&pending, SIGINT) && !sigismember (&pending, SIGTERM))
        return false;
    struct timespec now = { 0, 0 };
    sigtimedwait (&self->interrupts, NULL, &now);
    return true;
}


//  --------------------------------------------------------------------------
//  Path of a binary, or its bare name when it is looked up in PATH

static char *
s_binary (launcher_t *self, const char *name)
{
    return self->bin_dir ? zsys_sprintf ("%s/%s", self->bin_dir, name)
                         : strdup (name);
}


//  --------------------------------------------------------------------------
//  Folder holding jace-grid itself, if the grid's binaries are there too:
//  true in a build tree and once installed.  NULL otherwise.

static char *
s_own_bin_dir (void)
{
    char path [PATH_MAX];
    ssize_t size = readlink ("/proc/self/exe", path, sizeof path - 1);
    if (size <= 0)
        return NULL;
    path [size] = 0;
    char *slash = strrchr (path, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    char *candidate = zsys_sprintf ("%s/jace-supernode", path);
    bool usable = access (candidate, X_OK) == 0;
    free (candidate);
    return usable ? strdup (path) : NULL;
}


//  --------------------------------------------------------------------------
//  True if name is an executable in PATH

static bool
s_in_path (const char *name)
{
    const char *path = getenv ("PATH");
    char *copy = strdup (path ? path : "/usr/bin:/bin");
    bool found = false;
    char *saved = NULL;
    for (char *dir = strtok_r (copy, ":", &saved); dir && !found;
         dir = strtok_r (NULL, ":", &saved)) {
        char *candidate = zsys_sprintf ("%s/%s", *dir ? dir : ".", name);
        found = access (candidate, X_OK) == 0;
        free (candidate);
    }
    free (copy);
    return found;
}


//  --------------------------------------------------------------------------
//  Decide where the binaries are and check that all three are there

static int
s_find_binaries (launcher_t *self)
{
    const char *names [] = { "jace-supernode", "jace-daemon", "jace-spawner" };
    self->bin_dir = self->options->bin_dir ? strdup (self->options->bin_dir)
                                           : s_own_bin_dir ();
    for (size_t index = 0; index < 3; index++) {
        char *binary = s_binary (self, names [index]);
        bool found = self->bin_dir ? access (binary, X_OK) == 0
                                   : s_in_path (binary);
        free (binary);
        if (!found)
            return s_fail (self, "no executable %s in %s (build it, or give"
                           " --bin DIR)", names [index],
                           self->bin_dir ? self->bin_dir : "PATH");
    }
    return 0;
}


//  --------------------------------------------------------------------------
//  Refuse a platform this machine cannot hold: a typo of nodes = 100000
//  started 1,305 daemons before it was interrupted.

static int
s_check_room (launcher_t *self)
{
    size_t processes = 0;
    for (size_t cluster = 0;
         cluster < platform_cluster_count (self->platform); cluster++)
        processes += platform_cluster_nodes (self->platform, cluster)
                   + platform_cluster_supernodes (self->platform, cluster);
    double memory_mib = (double) sysconf (_SC_PHYS_PAGES)
                      * (double) sysconf (_SC_PAGESIZE) / (1024.0 * 1024.0);
    size_t by_memory = (size_t) (memory_mib / GRID_LAUNCH_PROCESS_MIB);
    if (memory_mib > 0 && processes > by_memory)
        return s_fail (self, "%s: %zu processes (daemons and super-nodes) "
                       "on this machine, which holds about %zu: %.0f MiB "
                       "of memory, %d MiB for each idle one",
                       self->options->platform_path, processes, by_memory,
                       memory_mib, GRID_LAUNCH_PROCESS_MIB);
    struct rlimit limit;
    if (getrlimit (RLIMIT_NPROC, &limit) == 0
    &&  limit.rlim_cur != RLIM_INFINITY
    &&  processes * GRID_LAUNCH_PROCESS_THREADS > limit.rlim_cur)
        return s_fail (self, "%s: %zu processes (daemons and super-nodes) "
                       "of %d threads each, over this user's limit of %llu "
                       "(ulimit -u)", self->options->platform_path,
                       processes, GRID_LAUNCH_PROCESS_THREADS,
                       (unsigned long long) limit.rlim_cur);
    return 0;
}


//  --------------------------------------------------------------------------
//  Load the platform and check that its names are usable

static int
s_load_platform (launcher_t *self)
{
    char reason [512] = "";
    self->platform = platform_load (self->options->platform_path,
                                    reason, sizeof reason);
    //  The parser refuses cluster names that cannot name files and
    //  processes.
    if (!self->platform)
        return s_fail (self, "%s", reason);
    return s_check_room (self);
}


//  --------------------------------------------------------------------------
//  Refuse to start over a grid that still runs in the same folder

static int
s_check_run_dir_free (launcher_t *self)
{
    if (!grid_run_has_pids (self->run))
        return 0;
    char reason [512];
    if (grid_run_load (self->run, reason, sizeof reason))
        return s_fail (self, "%s (remove it if no grid runs there)", reason);
    for (size_t index = 0; index < grid_run_size (self->run); index++)
        if (grid_proc_is_alive (grid_run_record (self->run, index)->pid))
            return s_fail (self, "a grid is already running in %s (stop it"
                           " with: jace-grid stop --run %s)",
                           self->options->run_dir, self->options->run_dir);
    //  A stale record of a dead grid: start afresh.
    grid_run_destroy (&self->run);
    self->run = grid_run_new (self->options->run_dir);
    return 0;
}


//  --------------------------------------------------------------------------
//  Remove the namespaces a dead grid left in the folder (its launcher was
//  killed, and nobody ran stop), before a new start records its own

static int
s_remove_stale_netns (launcher_t *self)
{
    if (!grid_netns_is_recorded (self->run))
        return 0;
    fprintf (stderr, "jace-grid: removing the namespaces an earlier start"
             " left (%s/netns)\n", self->options->run_dir);
    char reason [1024];
    if (grid_netns_remove (self->run, reason, sizeof reason))
        return s_fail (self, "%s", reason);
    return 0;
}


//  --------------------------------------------------------------------------
//  With --netns, check that the testbed can be built before anything is
//  started.  Processes get the platform file as it is, or its
//  latency-only variant in a testbed.

static int
s_plan_netns (launcher_t *self)
{
    self->platform_file = "platform";
    if (!self->options->netns)
        return 0;
    self->platform_file = "platform-latency-only";
    char reason [1024];
    self->netns = grid_netns_new (self->run, self->platform,
                                  self->options->platform_path, reason,
                                  sizeof reason);
    return self->netns ? 0 : s_fail (self, "%s", reason);
}


//  --------------------------------------------------------------------------
//  Build the testbed and write the platform its processes get

static int
s_make_netns (launcher_t *self)
{
    if (!self->netns)
        return 0;
    char reason [1024];
    if (grid_netns_create (self->netns, reason, sizeof reason)
    ||  grid_netns_write_platform (self->netns, self->platform_file, reason,
                                   sizeof reason))
        return s_fail (self, "%s", reason);
    if (self->options->verbose)
        for (size_t cluster = 0;
             cluster < platform_cluster_count (self->platform); cluster++)
            fprintf (stderr, "jace-grid: cluster %s runs in namespace %s at"
                     " %s\n", platform_cluster_name (self->platform,
                     cluster), grid_netns_namespace (self->netns, cluster),
                     grid_netns_address (self->netns, cluster));
    return 0;
}


//  --------------------------------------------------------------------------
//  Create DIR/links, the reservations of the links the platform shares,
//  all free: a grid started again in the folder starts with idle links.

static int
s_create_links (launcher_t *self)
{
    size_t count = shared_links_count (self->platform);
    jace_links_resource_t *resources = (jace_links_resource_t *) zmalloc (
        (count ? count : 1) * sizeof (jace_links_resource_t));
    for (size_t index = 0; index < count; index++)
        shared_links_resource (self->platform, index,
                               &resources [index].bandwidth_mbps,
                               &resources [index].transfers);
    char *path = grid_run_path (self->run, "links");
    char reason [512];
    int rc = jace_links_create (path, resources, count, reason,
                                sizeof reason);
    free (path);
    free (resources);
    return rc ? s_fail (self, "%s", reason) : 0;
}


//  --------------------------------------------------------------------------
//  Create the run folder and copy the platform file into it

static int
s_prepare_run_dir (launcher_t *self)
{
    char reason [512];
    if (grid_run_create (self->run, reason, sizeof reason))
        return s_fail (self, "%s", reason);
    char *text = grid_run_read_file (self->options->platform_path,
                                     GRID_LAUNCH_NODES_MAX);
    if (!text || grid_run_write (self->run, "platform", text)
    ||  grid_run_write (self->run, "supernodes", "")) {
        free (text);
        return s_fail (self, "cannot write into %s", self->options->run_dir);
    }
    free (text);
    if (!self->netns)
        return s_create_links (self);
    //  The kernel shares the links in a testbed: no reservations.
    char *links = grid_run_path (self->run, "links");
    unlink (links);
    free (links);
    return 0;
}


//  --------------------------------------------------------------------------
//  Print the end of a process's log on stderr, to show why it failed

static void
s_print_log_tail (launcher_t *self, const char *name)
{
    char *relative = zsys_sprintf ("logs/%s.log", name);
    char *path = grid_run_path (self->run, relative);
    FILE *file = fopen (path, "r");
    char lines [5][256];
    size_t count = 0;
    while (file && fgets (lines [count % 5], sizeof lines [0], file))
        count++;
    if (file)
        fclose (file);
    if (count > 0)
        fprintf (stderr, "jace-grid: last lines of %s:\n", path);
    for (size_t line = count > 5 ? count - 5 : 0; line < count; line++)
        fprintf (stderr, "  | %s%s", lines [line % 5],
                 strchr (lines [line % 5], '\n') ? "" : "\n");
    free (path);
    free (relative);
}


//  --------------------------------------------------------------------------
//  Start one process, record it and save the records, so that even a
//  start that fails half way leaves a pids file naming what runs.

static pid_t
s_start_process (launcher_t *self, argv_t *args, const char *role,
                 const char *name, const char *cluster)
{
    char *relative = zsys_sprintf ("logs/%s.log", name);
    char *log_path = grid_run_path (self->run, relative);
    unlink (log_path);          //  Left by an earlier grid in this folder
    char reason [512];
    pid_t pid = grid_proc_spawn (args->items, log_path, reason,
                                 sizeof reason);
    free (log_path);
    free (relative);
    if (pid < 0) {
        s_fail (self, "%s %s: %s", role, name, reason);
        return -1;
    }
    if (grid_run_add (self->run, role, name, pid, NULL, cluster)
    ||  grid_run_save (self->run)) {
        grid_proc_signal (pid, SIGKILL);
        s_fail (self, "cannot record %s %s in %s/pids", role, name,
                self->options->run_dir);
        return -1;
    }
    if (streq (role, "daemon")
    &&  grid_revive_save_argv (self->run, name, args->items)) {
        s_fail (self, "cannot save the command line of %s in %s/argv",
                name, self->options->run_dir);
        return -1;
    }
    if (self->options->verbose)
        fprintf (stderr, "jace-grid: started %s %s (pid %d)\n",
                 role, name, (int) pid);
    return pid;
}


//  --------------------------------------------------------------------------
//  Fail if a process we started has ended already

static int
s_check_running (launcher_t *self, grid_proc_record_t *record)
{
    char how [128];
    if (!grid_proc_has_ended (record->pid, how, sizeof how))
        return 0;
    if (self->error [0] == 0)
        snprintf (self->failed_name, sizeof self->failed_name, "%s",
                  record->name);
    return s_fail (self, "%s %s %s; its log is %s/logs/%s.log",
                   record->role, record->name, how, self->options->run_dir,
                   record->name);
}


//  --------------------------------------------------------------------------
//  Fail if the start took too long or was interrupted

static int
s_check_time (launcher_t *self, const char *waiting_for)
{
    if (s_interrupted (self))
        return s_fail (self, "interrupted while waiting for %s",
                       waiting_for);
    if (zclock_mono () >= self->deadline)
        return s_fail (self, "timed out after %d s waiting for %s (raise"
                       " --timeout, or see the logs in %s/logs)",
                       self->options->timeout_msec / 1000, waiting_for,
                       self->options->run_dir);
    return 0;
}


//  --------------------------------------------------------------------------
//  The endpoint in an endpoint file once it is complete, or NULL.  The
//  super-node writes it whole and renames it, but a newline is required
//  anyway, so a file written some other way is not read half done.

static char *
s_read_endpoint (const char *path)
{
    char *text = grid_run_read_file (path, GRID_LAUNCH_ENDPOINT_FILE_MAX);
    char *newline = text ? strchr (text, '\n') : NULL;
    if (!newline) {
        free (text);
        return NULL;
    }
    *newline = 0;
    return text;
}


//  --------------------------------------------------------------------------
//  True if an endpoint is one we can pass on: scheme://address, no blanks

static bool
s_is_endpoint (const char *text)
{
    if (!strstr (text, "://") || strlen (text) >= GRID_RUN_ENDPOINT_MAX)
        return false;
    for (const char *cursor = text; *cursor; cursor++)
        if (!isgraph ((unsigned char) *cursor))
            return false;
    return true;
}


//  --------------------------------------------------------------------------
//  Wait until a super-node has written its endpoint; record it

static int
s_wait_endpoint (launcher_t *self, grid_proc_record_t *record,
                 const char *endpoint_file)
{
    char *waiting_for = zsys_sprintf ("the endpoint of supernode %s",
                                      record->name);
    char *endpoint = NULL;
    int rc = 0;
    while (!(endpoint = s_read_endpoint (endpoint_file))) {
        rc = s_check_running (self, record) ? -1
           : s_check_time (self, waiting_for);
        if (rc)
            break;
        zclock_sleep (GRID_LAUNCH_POLL_MSEC);
    }
    free (waiting_for);
    if (rc)
        return -1;
    if (!s_is_endpoint (endpoint)) {
        s_fail (self, "supernode %s wrote '%s' in %s, not an endpoint",
                record->name, endpoint, endpoint_file);
        free (endpoint);
        return -1;
    }
    snprintf (record->endpoint, sizeof record->endpoint, "%s", endpoint);
    zlist_append (self->supernodes, endpoint);     //  Copied: autofree
    free (endpoint);
    endpoint = (char *) zlist_last (self->supernodes);
    if (self->options->verbose)
        fprintf (stderr, "jace-grid: supernode %s serves %s\n",
                 record->name, endpoint);
    return grid_run_save (self->run);
}


//  --------------------------------------------------------------------------
//  Arguments every grid process gets from the launcher's own options

static void
s_push_common (launcher_t *self, argv_t *args, const char *const *extra,
               size_t extra_count)
{
    if (self->options->keys_dir) {
        s_argv_push (args, "--keys");
        s_argv_push (args, "%s", self->options->keys_dir);
    }
    for (size_t index = 0; index < extra_count; index++)
        s_argv_push (args, "%s", extra [index]);
}


//  --------------------------------------------------------------------------
//  A command line that starts binary in a cluster: in the cluster's
//  namespace, through `ip netns exec` (which execs it, so the pid we
//  record is the process's own), when the grid has namespaces

static argv_t
s_argv_in_cluster (launcher_t *self, size_t cluster, const char *binary)
{
    if (!self->netns)
        return s_argv_start (s_binary (self, binary));
    argv_t args = s_argv_start (strdup ("ip"));
    s_argv_push (&args, "netns");
    s_argv_push (&args, "exec");
    s_argv_push (&args, "%s", grid_netns_namespace (self->netns, cluster));
    char *path = s_binary (self, binary);
    s_argv_push (&args, "%s", path);
    free (path);
    return args;
}


//  --------------------------------------------------------------------------
//  In a testbed, bind the cluster's address.  Without keys that needs
//  --insecure, as it is not loopback; but only this machine reaches the
//  namespaces, through its host link, as only it reaches loopback.

static void
s_push_cluster_bind (launcher_t *self, argv_t *args, size_t cluster)
{
    s_argv_push (args, "--bind");
    if (!self->netns) {
        s_argv_push (args, "tcp://127.0.0.1:*");
        return;
    }
    s_argv_push (args, "tcp://%s:*",
                 grid_netns_address (self->netns, cluster));
    if (!self->options->keys_dir)
        s_argv_push (args, "--insecure");
}


//  --------------------------------------------------------------------------
//  Start one super-node, peered with all those started before it

static int
s_start_supernode (launcher_t *self, size_t cluster_index, size_t number)
{
    const char *cluster = platform_cluster_name (self->platform,
                                                 cluster_index);
    char *name = zsys_sprintf ("%s-sn%zu", cluster, number);
    char *relative = zsys_sprintf ("endpoints/%s", name);
    char *endpoint_file = grid_run_path (self->run, relative);
    unlink (endpoint_file);     //  Left by an earlier grid

    argv_t args = s_argv_in_cluster (self, cluster_index, "jace-supernode");
    s_push_cluster_bind (self, &args, cluster_index);
    s_argv_push (&args, "--endpoint-file");
    s_argv_push (&args, "%s", endpoint_file);
    for (char *peer = (char *) zlist_first (self->supernodes); peer;
         peer = (char *) zlist_next (self->supernodes)) {
        s_argv_push (&args, "--peer");
        s_argv_push (&args, "%s", peer);
    }
    //  Its cluster, and the platform's links, which its probes are held
    //  for as the daemons' data is, shared links too: the links it
    //  measures are the grid's.
    s_argv_push (&args, "--cluster");
    s_argv_push (&args, "%s", cluster);
    char *platform = grid_run_path (self->run, self->platform_file);
    s_argv_push (&args, "--platform");
    s_argv_push (&args, "%s", platform);
    free (platform);
    if (!self->netns) {
        char *links = grid_run_path (self->run, "links");
        s_argv_push (&args, "--links");
        s_argv_push (&args, "%s", links);
        free (links);
    }
    s_push_common (self, &args, self->options->supernode_extra,
                   self->options->supernode_extra_count);

    int rc = -1;
    if (s_start_process (self, &args, "supernode", name, cluster) > 0) {
        grid_proc_record_t *record = grid_run_find (self->run, "supernode",
                                                    name);
        rc = s_wait_endpoint (self, record, endpoint_file);
    }
    s_argv_free (&args);
    free (endpoint_file);
    free (relative);
    free (name);
    return rc;
}


//  --------------------------------------------------------------------------
//  Start every cluster's super-nodes and write DIR/supernodes

static int
s_start_supernodes (launcher_t *self)
{
    size_t clusters = platform_cluster_count (self->platform);
    self->cluster_first = (size_t *) zmalloc (clusters * sizeof (size_t));
    for (size_t cluster = 0; cluster < clusters; cluster++) {
        self->cluster_first [cluster] = zlist_size (self->supernodes);
        size_t count = platform_cluster_supernodes (self->platform, cluster);
        for (size_t number = 0; number < count; number++)
            if (s_start_supernode (self, cluster, number))
                return -1;
    }
    if (zlist_size (self->supernodes) == 0)
        return s_fail (self, "%s has no super-node to start",
                       self->options->platform_path);

    size_t size = zlist_size (self->supernodes) * GRID_RUN_ENDPOINT_MAX + 1;
    char *text = (char *) zmalloc (size);
    for (char *endpoint = (char *) zlist_first (self->supernodes); endpoint;
         endpoint = (char *) zlist_next (self->supernodes)) {
        strcat (text, endpoint);
        strcat (text, "\n");
    }
    int rc = grid_run_write (self->run, "supernodes", text);
    free (text);
    return rc ? s_fail (self, "cannot write %s/supernodes",
                        self->options->run_dir) : 0;
}


//  --------------------------------------------------------------------------
//  The super-nodes of a daemon in failover order: its own cluster's
//  first, starting at one that spreads the cluster's daemons over them,
//  then every other one in start order.

static void
s_push_supernodes (launcher_t *self, argv_t *args, size_t cluster,
                   size_t node)
{
    size_t total = zlist_size (self->supernodes);
    size_t own_first = self->cluster_first [cluster];
    size_t own_count = platform_cluster_supernodes (self->platform, cluster);
    char **endpoints = (char **) zmalloc (total * sizeof (char *));
    size_t index = 0;
    for (char *endpoint = (char *) zlist_first (self->supernodes); endpoint;
         endpoint = (char *) zlist_next (self->supernodes))
        endpoints [index++] = endpoint;
    for (size_t turn = 0; turn < own_count; turn++) {
        s_argv_push (args, "--supernode");
        s_argv_push (args, "%s",
                     endpoints [own_first + (node + turn) % own_count]);
    }
    for (index = 0; index < total; index++)
        if (index < own_first || index >= own_first + own_count) {
            s_argv_push (args, "--supernode");
            s_argv_push (args, "%s", endpoints [index]);
        }
    free (endpoints);
}


//  --------------------------------------------------------------------------
//  Start one daemon

static int
s_start_daemon (launcher_t *self, size_t cluster, size_t node)
{
    const char *cluster_name = platform_cluster_name (self->platform,
                                                      cluster);
    char *name = zsys_sprintf ("%s-%zu", cluster_name, node);
    argv_t args = s_argv_in_cluster (self, cluster, "jace-daemon");
    if (self->netns)
        s_push_cluster_bind (self, &args, cluster);
    s_argv_push (&args, "--id");
    s_argv_push (&args, "%s", name);
    s_argv_push (&args, "--cluster");
    s_argv_push (&args, "%s", cluster_name);
    s_argv_push (&args, "--speed");
    s_argv_push (&args, "%.17g",
                 platform_node_speed (self->platform, cluster, node));
    s_argv_push (&args, "--power");
    s_argv_push (&args, "%.17g",
                 platform_node_power (self->platform, cluster, node));
    //  The daemons emulate the platform's links between their clusters,
    //  sharing those it shares; in a testbed, only their latency.
    char *platform = grid_run_path (self->run, self->platform_file);
    s_argv_push (&args, "--platform");
    s_argv_push (&args, "%s", platform);
    free (platform);
    if (!self->netns) {
        char *links = grid_run_path (self->run, "links");
        s_argv_push (&args, "--links");
        s_argv_push (&args, "%s", links);
        free (links);
    }
    s_push_supernodes (self, &args, cluster, node);
    s_push_common (self, &args, self->options->daemon_extra,
                   self->options->daemon_extra_count);
    pid_t pid = s_start_process (self, &args, "daemon", name, cluster_name);
    s_argv_free (&args);
    free (name);
    return pid > 0 ? 0 : -1;
}


//  --------------------------------------------------------------------------
//  Start every daemon of every cluster

static int
s_start_daemons (launcher_t *self)
{
    for (size_t cluster = 0;
         cluster < platform_cluster_count (self->platform); cluster++)
        for (size_t node = 0;
             node < platform_cluster_nodes (self->platform, cluster); node++)
            if (s_start_daemon (self, cluster, node)
            ||  s_check_time (self, "the daemons to start"))
                return -1;
    return 0;
}


//  --------------------------------------------------------------------------
//  Add to ids the "id" of every object in a JSON array of objects, as its
//  raw text (quotes and escapes kept: it is only compared).  Returns the
//  number of objects, or -1 when text is not an array.  An object with no
//  id counts under a name of its own (#SOURCE.N), so it is never merged.

static int
s_collect_ids (const char *text, zhash_t *ids, size_t source)
{
    const char *cursor = text + strspn (text, " \t\r\n");
    if (*cursor != '[')
        return -1;
    int depth = 0;
    int objects = 0;
    bool has_id = true;
    for (; *cursor; cursor++) {
        if (*cursor == '"') {
            const char *start = cursor++;
            while (*cursor && *cursor != '"')
                cursor += *cursor == '\\' && cursor [1] ? 2 : 1;
            if (!*cursor)
                return -1;
            const char *after = cursor + 1 + strspn (cursor + 1, " \t\r\n");
            if (depth != 2 || *after != ':'
            ||  cursor - start != 3 || strncmp (start, "\"id\"", 4) != 0)
                continue;
            //  The value of "id": a string or a bare token.
            const char *value = after + 1 + strspn (after + 1, " \t\r\n");
            size_t length = *value == '"' ? strcspn (value + 1, "\"") + 2
                                          : strcspn (value, ",} \t\r\n");
            char *id = zsys_sprintf ("%.*s", (int) length, value);
            zhash_insert (ids, id, "");
            free (id);
            has_id = true;
        }
        else
        if (*cursor == '[' || *cursor == '{') {
            if (++depth == 2 && *cursor == '{') {
                objects++;
                has_id = false;
            }
        }
        else
        if (*cursor == ']' || *cursor == '}') {
            if (depth-- == 2 && !has_id) {
                char *own = zsys_sprintf ("#%zu.%d", source, objects);
                zhash_insert (ids, own, "");
                free (own);
                has_id = true;
            }
        }
    }
    return depth == 0 ? objects : -1;
}


//  --------------------------------------------------------------------------
//  Number of distinct daemons one super-node lists, or -1 if it does not
//  answer in time.  Its stderr goes to the launcher's own log.

static int
s_count_listed (launcher_t *self, const char *endpoint, size_t source)
{
    argv_t args = s_argv_start (s_binary (self, "jace-spawner"));
    s_argv_push (&args, "nodes");
    s_argv_push (&args, "--supernode");
    s_argv_push (&args, "%s", endpoint);
    s_argv_push (&args, "--json");
    s_push_common (self, &args, NULL, 0);
    char *log_path = grid_run_path (self->run, "logs/jace-grid.log");
    char *output = NULL;
    int status = grid_proc_capture (args.items, log_path,
                                    GRID_LAUNCH_QUERY_TIMEOUT_MSEC, &output);
    zhash_t *ids = zhash_new ();
    int count = status == 0 && s_collect_ids (output, ids, source) >= 0
              ? (int) zhash_size (ids) : -1;
    zhash_destroy (&ids);
    free (output);
    free (log_path);
    s_argv_free (&args);
    return count;
}


//  --------------------------------------------------------------------------
//  The fewest daemons any super-node lists.  Peered super-nodes share
//  their registries, so once every daemon has registered somewhere each
//  one lists them all; a script can then ask any of them.

static int
s_fewest_listed (launcher_t *self)
{
    int fewest = INT_MAX;
    size_t source = 0;
    for (char *endpoint = (char *) zlist_first (self->supernodes); endpoint;
         endpoint = (char *) zlist_next (self->supernodes), source++) {
        int count = s_count_listed (self, endpoint, source);
        if (count < fewest)
            fewest = count;
    }
    return fewest;
}


//  --------------------------------------------------------------------------
//  Wait until every super-node lists every daemon we started, watching
//  that none of our processes died meanwhile

static int
s_wait_registered (launcher_t *self)
{
    int expected = (int) platform_node_count (self->platform);
    while (true) {
        for (size_t index = 0; index < grid_run_size (self->run); index++)
            if (s_check_running (self, grid_run_record (self->run, index)))
                return -1;
        int listed = s_fewest_listed (self);
        if (listed >= expected)
            break;
        char *waiting_for = zsys_sprintf ("every super-node to list the %d"
                                          " daemons (%d so far)", expected,
                                          listed < 0 ? 0 : listed);
        int rc = s_check_time (self, waiting_for);
        free (waiting_for);
        if (rc)
            return -1;
        zclock_sleep (GRID_LAUNCH_QUERY_MSEC);
    }
    if (self->options->verbose)
        fprintf (stderr, "jace-grid: every super-node lists the %d daemons\n",
                 expected);
    return 0;
}


//  --------------------------------------------------------------------------
//  After a failed start, remove the namespaces it made, if any

static void
s_remove_netns (launcher_t *self)
{
    char reason [1024];
    if (grid_netns_is_recorded (self->run)
    &&  grid_netns_remove (self->run, reason, sizeof reason))
        fprintf (stderr, "jace-grid: %s; run jace-grid stop --run %s to try"
                 " again\n", reason, self->options->run_dir);
}


//  --------------------------------------------------------------------------
//  Free what the launcher holds

static void
s_launcher_free (launcher_t *self)
{
    sigprocmask (SIG_SETMASK, &self->saved_mask, NULL);
    grid_netns_destroy (&self->netns);
    platform_destroy (&self->platform);
    grid_run_destroy (&self->run);
    zlist_destroy (&self->supernodes);
    free (self->cluster_first);
    free (self->bin_dir);
}


//  --------------------------------------------------------------------------
//  Start a grid

int
grid_launch_start (const grid_launch_options_t *options)
{
    assert (options);
    launcher_t self;
    memset (&self, 0, sizeof self);
    self.options = options;
    self.run = grid_run_new (options->run_dir);
    self.supernodes = zlist_new ();
    zlist_autofree (self.supernodes);
    self.deadline = zclock_mono () + options->timeout_msec;
    sigemptyset (&self.interrupts);
    sigaddset (&self.interrupts, SIGINT);
    sigaddset (&self.interrupts, SIGTERM);
    sigprocmask (SIG_BLOCK, &self.interrupts, &self.saved_mask);
    grid_proc_close_inherited_fds ();

    int rc = s_load_platform (&self);
    if (rc == 0)
        rc = s_find_binaries (&self);
    if (rc == 0)
        rc = s_check_run_dir_free (&self);
    if (rc == 0)
        rc = s_remove_stale_netns (&self);
    if (rc == 0)
        rc = s_plan_netns (&self);
    bool started = false;
    if (rc == 0 && (rc = s_prepare_run_dir (&self)) == 0) {
        started = true;
        rc = s_make_netns (&self);
    }
    if (rc == 0)
        rc = s_start_supernodes (&self);
    if (rc == 0)
        rc = s_start_daemons (&self);
    if (rc == 0)
        rc = s_wait_registered (&self);

    if (rc == 0)
        printf ("%s\n", (char *) zlist_first (self.supernodes));
    else {
        fprintf (stderr, "jace-grid: %s\n", self.error);
        if (self.failed_name [0])
            s_print_log_tail (&self, self.failed_name);
        if (started) {
            fprintf (stderr, "jace-grid: stopping what was started (%zu"
                     " processes)\n", grid_run_size (self.run));
            grid_launch_stop (self.run, GRID_LAUNCH_ABORT_GRACE_MSEC);
            grid_run_remove_pids (self.run);
            s_remove_netns (&self);
        }
    }
    s_launcher_free (&self);
    return rc;
}


//  --------------------------------------------------------------------------
//  Number of recorded processes alive; reaps our own children first

static size_t
s_count_alive (grid_run_t *run)
{
    grid_proc_reap_children ();
    size_t alive = 0;
    for (size_t index = 0; index < grid_run_size (run); index++)
        if (grid_proc_is_alive (grid_run_record (run, index)->pid))
            alive++;
    return alive;
}


//  --------------------------------------------------------------------------
//  Signal every live recorded process, then wait up to wait_msec for all
//  of them to end.  Returns how many are still alive.

static size_t
s_signal_and_wait (grid_run_t *run, int signum, int wait_msec)
{
    for (size_t index = 0; index < grid_run_size (run); index++) {
        pid_t pid = grid_run_record (run, index)->pid;
        if (grid_proc_is_alive (pid))
            grid_proc_signal (pid, signum);
    }
    int64_t deadline = zclock_mono () + wait_msec;
    size_t alive = s_count_alive (run);
    while (alive > 0 && zclock_mono () < deadline) {
        zclock_sleep (GRID_LAUNCH_POLL_MSEC);
        alive = s_count_alive (run);
    }
    return alive;
}


//  --------------------------------------------------------------------------
//  Stop every recorded process

size_t
grid_launch_stop (grid_run_t *run, int grace_msec)
{
    assert (run);
    size_t alive = s_signal_and_wait (run, SIGTERM, grace_msec);
    if (alive > 0)
        alive = s_signal_and_wait (run, SIGKILL, 2000);
    return alive;
}
