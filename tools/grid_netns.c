/*  =========================================================================
    grid_netns - a virtual grid's clusters in network namespaces, joined by
    one backbone that the kernel limits

    See grid_netns.h for the topology and why.  Every change is an `ip`,
    `tc` or `sysctl` command run from an argument vector (no shell), logged
    with its error output in DIR/logs/netns.log.  DIR/netns is read back by
    `jace-grid stop`, so it is parsed as untrusted input: it may only name
    objects whose names this module makes (jace-TAG...), never eth0.
    =========================================================================
*/
#include "grid_netns.h"
#include "grid_proc.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <dirent.h>

//  Names of a run: jace-TAG for the backbone namespace and the host link,
//  jace-TAG-CLUSTER for the clusters; TAG is this many [a-z0-9]
#define GRID_NETNS_TAG_LENGTH 6
#define GRID_NETNS_PREFIX "jace-"
//  Where `ip netns` keeps named namespaces
#define GRID_NETNS_RUN_DIR "/run/netns"
//  Each testbed's owner: OWNERS_DIR/TAG holds the real path of its run
//  folder, so that `jace-grid sweep` tells the namespaces of a run folder
//  deleted before `stop` (nothing else knows them any more) from a live
//  run's.  A tmpfs, as /run/netns: both are gone after a reboot.
#define GRID_NETNS_OWNERS_DIR "/run/jace-grid"
//  Held while a run picks its subnet and routes it from the root namespace
#define GRID_NETNS_LOCK_PATH "/run/jace-grid-netns.lock"
#define GRID_NETNS_LOCK_MSEC 10000
//  Second bytes a run may take: 10.213.0.0/16 to 10.222.0.0/16
#define GRID_NETNS_SUBNET_FIRST 213
#define GRID_NETNS_SUBNET_COUNT 10
//  Most arguments of one command, and how long it may take
#define GRID_NETNS_ARGS_MAX 32
#define GRID_NETNS_COMMAND_MSEC 10000
//  tbf's bucket: 10 ms of traffic, at least two full frames, and a queue
//  of 50 ms more; both capped, as the rate may be many Gb/s
#define GRID_NETNS_BURST_SEC 0.01
#define GRID_NETNS_BURST_MIN 3200.0
#define GRID_NETNS_BURST_MAX (4.0 * 1024 * 1024)
#define GRID_NETNS_QUEUE_SEC 0.05
#define GRID_NETNS_QUEUE_MAX (32.0 * 1024 * 1024)
//  Bandwidth of the links the kernel limits, in the latency-only platform:
//  the largest the parser takes, so a megabyte costs 8 ns
#define GRID_NETNS_FREE_MBPS "1e9"
//  Longest DIR/netns line, and most lines
#define GRID_NETNS_LINE_MAX 512
#define GRID_NETNS_RECORDS_MAX (GRID_NETNS_CLUSTERS_MAX + 8)

//  Runs the commands of one testbed and keeps why the last one failed
typedef struct {
    char *log_path;             //  DIR/logs/netns.log
    char error [1024];          //  Reason of the last failure
} runner_t;

struct _grid_netns_t {
    grid_run_t *run;            //  Borrowed; the run folder
    platform_t *platform;       //  Borrowed; the grid to build
    const char *platform_path;  //  Borrowed; the file, for reasons
    runner_t runner;            //  Commands and their errors
    char tag [GRID_NETNS_TAG_LENGTH + 1];
                                //  Random part of every name
    char backbone [GRID_NETNS_NAME_MAX];
                                //  Backbone namespace, also the host link
    int subnet;                 //  Second byte: 10.subnet.0.0/16
    size_t cluster_count;       //  Clusters of the platform
    char (*namespaces) [GRID_NETNS_NAME_MAX];
                                //  Per cluster, its namespace
    char (*addresses) [GRID_NETNS_ADDRESS_MAX];
                                //  Per cluster, the address it binds
};

//  One line of DIR/netns
typedef struct {
    char kind [16];             //  backbone, link, subnet or cluster
    char fields [3][GRID_NETNS_NAME_MAX];
                                //  What follows the kind, in order
    size_t line;                //  Where it was written
} record_t;


//  --------------------------------------------------------------------------
//  Record why something failed.  Returns -1.

static int
s_fail (runner_t *runner, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (runner->error, sizeof runner->error, format, args);
    va_end (args);
    return -1;
}


//  --------------------------------------------------------------------------
//  The command line as one fresh string, for logs and reasons

static char *
s_join (char *const argv [])
{
    size_t size = 1;
    for (size_t index = 0; argv [index]; index++)
        size += strlen (argv [index]) + 1;
    char *text = (char *) zmalloc (size);
    for (size_t index = 0; argv [index]; index++) {
        if (index > 0)
            strcat (text, " ");
        strcat (text, argv [index]);
    }
    return text;
}


//  --------------------------------------------------------------------------
//  The last non-blank line a command wrote to the log after offset, into
//  line (empty when none)

static void
s_last_log_line (const char *path, long offset, char *line, size_t size)
{
    line [0] = 0;
    FILE *file = fopen (path, "r");
    if (!file)
        return;
    char buffer [256];
    if (fseek (file, offset, SEEK_SET) == 0)
        while (fgets (buffer, sizeof buffer, file)) {
            buffer [strcspn (buffer, "\r\n")] = 0;
            if (buffer [strspn (buffer, " \t")])
                snprintf (line, size, "%s", buffer);
        }
    fclose (file);
}


//  --------------------------------------------------------------------------
//  Run one command, its stderr appended to the log after its command line.
//  With output_p, its stdout is returned there (caller frees).  Returns 0,
//  or -1 with the command and its error message in the runner.

static int
s_run_argv (runner_t *runner, char *const argv [], char **output_p)
{
    char *command = s_join (argv);
    long offset = 0;
    FILE *log = fopen (runner->log_path, "a");
    if (log) {
        fprintf (log, "+ %s\n", command);
        offset = ftell (log);
        fclose (log);
    }
    char *output = NULL;
    int status = grid_proc_capture (argv, runner->log_path,
                                    GRID_NETNS_COMMAND_MSEC, &output);
    if (status == 0 && output_p)
        *output_p = output;
    else
        free (output);
    if (status < 0)
        s_fail (runner, "cannot run '%s' (is %s installed and in PATH?), or"
                " it ran over %d s", command, argv [0],
                GRID_NETNS_COMMAND_MSEC / 1000);
    else
    if (status > 0) {
        char detail [256];
        s_last_log_line (runner->log_path, offset, detail, sizeof detail);
        s_fail (runner, "'%s' failed (exit %d)%s%s", command, status,
                detail [0] ? ": " : "", detail);
    }
    free (command);
    return status == 0 ? 0 : -1;
}


//  --------------------------------------------------------------------------
//  Run program with the arguments that follow, up to a NULL

static int
s_run_va (runner_t *runner, char **output_p, const char *program,
          va_list args)
{
    char *argv [GRID_NETNS_ARGS_MAX + 1];
    size_t count = 0;
    argv [count++] = (char *) program;
    const char *argument;
    while ((argument = va_arg (args, const char *)) != NULL) {
        assert (count < GRID_NETNS_ARGS_MAX);
        argv [count++] = (char *) argument;
    }
    argv [count] = NULL;
    return s_run_argv (runner, argv, output_p);
}

static int
s_run (runner_t *runner, const char *program, ...)
{
    va_list args;
    va_start (args, program);
    int rc = s_run_va (runner, NULL, program, args);
    va_end (args);
    return rc;
}

static int
s_query (runner_t *runner, char **output_p, const char *program, ...)
{
    va_list args;
    va_start (args, program);
    int rc = s_run_va (runner, output_p, program, args);
    va_end (args);
    return rc;
}


//  --------------------------------------------------------------------------
//  True if a named network namespace exists

static bool
s_namespace_exists (const char *name)
{
    char path [GRID_NETNS_NAME_MAX + 32];
    snprintf (path, sizeof path, "%s/%s", GRID_NETNS_RUN_DIR, name);
    return access (path, F_OK) == 0;
}


//  --------------------------------------------------------------------------
//  True if the namespace we run in has a network interface of this name

static bool
s_link_exists (const char *name)
{
    char path [GRID_NETNS_NAME_MAX + 32];
    snprintf (path, sizeof path, "/sys/class/net/%s", name);
    return access (path, F_OK) == 0;
}


//  --------------------------------------------------------------------------
//  True if name can be a cluster's part of a namespace name (as the
//  launcher requires of cluster names)

static bool
s_is_cluster_name (const char *name)
{
    size_t length = strlen (name);
    if (length == 0 || length > 40 || name [0] == '.' || name [0] == '-')
        return false;
    for (const char *cursor = name; *cursor; cursor++)
        if (!isalnum ((unsigned char) *cursor) && !strchr ("._-", *cursor))
            return false;
    return true;
}


//  --------------------------------------------------------------------------
//  True if name is jace-TAG, the backbone namespace's and host link's name

static bool
s_is_backbone_name (const char *name)
{
    size_t prefix = strlen (GRID_NETNS_PREFIX);
    if (strncmp (name, GRID_NETNS_PREFIX, prefix) != 0
    ||  strlen (name) != prefix + GRID_NETNS_TAG_LENGTH)
        return false;
    for (const char *cursor = name + prefix; *cursor; cursor++)
        if (!islower ((unsigned char) *cursor)
        &&  !isdigit ((unsigned char) *cursor))
            return false;
    return true;
}


//  --------------------------------------------------------------------------
//  True if name is jace-TAG-CLUSTER, a cluster namespace's name

static bool
s_is_cluster_namespace (const char *name)
{
    size_t tagged = strlen (GRID_NETNS_PREFIX) + GRID_NETNS_TAG_LENGTH;
    if (strlen (name) <= tagged + 1 || name [tagged] != '-')
        return false;
    char backbone [GRID_NETNS_NAME_MAX];
    snprintf (backbone, sizeof backbone, "%.*s", (int) tagged, name);
    return s_is_backbone_name (backbone)
        && s_is_cluster_name (name + tagged + 1);
}


//  --------------------------------------------------------------------------
//  Plan a testbed

grid_netns_t *
grid_netns_new (grid_run_t *run, platform_t *platform,
                const char *platform_path, char *error, size_t error_size)
{
    assert (run && platform && platform_path);
    if (geteuid () != 0) {
        snprintf (error, error_size, "--netns needs root: it makes network"
                  " namespaces, links and qdiscs");
        return NULL;
    }
    size_t count = platform_cluster_count (platform);
    if (count > GRID_NETNS_CLUSTERS_MAX) {
        snprintf (error, error_size, "%s: %zu clusters; a testbed in"
                  " namespaces holds at most %d (a /24 each)",
                  platform_path, count, GRID_NETNS_CLUSTERS_MAX);
        return NULL;
    }
    for (size_t first = 0; first < count; first++)
        for (size_t second = first + 1; second < count; second++)
            if (platform_has_own_link (platform, first, second)) {
                snprintf (error, error_size, "%s: the link between %s and"
                          " %s: in namespaces every cluster shares one"
                          " backbone and none has a link of its own; remove"
                          " the link, or start without --netns",
                          platform_path, platform_cluster_name (platform,
                          first), platform_cluster_name (platform, second));
                return NULL;
            }
    if (platform_backbone_transfers (platform) > 0) {
        snprintf (error, error_size, "%s: backbone transfers = %zu: in"
                  " namespaces tbf makes the backbone one pipe, not KPBS"
                  " lanes; remove transfers, or start without --netns",
                  platform_path, platform_backbone_transfers (platform));
        return NULL;
    }
    for (size_t cluster = 0; cluster < count; cluster++)
        if (!s_is_cluster_name (platform_cluster_name (platform, cluster))) {
            snprintf (error, error_size, "%s: cluster name '%s' cannot"
                      " name a namespace", platform_path,
                      platform_cluster_name (platform, cluster));
            return NULL;
        }
    grid_netns_t *self = (grid_netns_t *) zmalloc (sizeof (grid_netns_t));
    self->run = run;
    self->platform = platform;
    self->platform_path = platform_path;
    self->runner.log_path = grid_run_path (run, "logs/netns.log");
    self->cluster_count = count;
    self->namespaces = zmalloc (count * sizeof *self->namespaces);
    self->addresses = zmalloc (count * sizeof *self->addresses);
    return self;
}


//  --------------------------------------------------------------------------
//  Destroy the plan

void
grid_netns_destroy (grid_netns_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        grid_netns_t *self = *self_p;
        free (self->runner.log_path);
        free (self->namespaces);
        free (self->addresses);
        free (self);
        *self_p = NULL;
    }
}


//  --------------------------------------------------------------------------
//  Append a line to DIR/netns; with truncate, start the file afresh.
//  Lines are written before the object they name is made, so that a
//  launcher killed at any point leaves nothing unrecorded.

static int
s_record (grid_netns_t *self, bool truncate, const char *format, ...)
{
    char *path = grid_run_path (self->run, "netns");
    int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC
                       | (truncate ? O_TRUNC : O_APPEND), 0644);
    free (path);
    if (fd < 0)
        return s_fail (&self->runner, "cannot write %s/netns: %s",
                       grid_run_dir (self->run), strerror (errno));
    va_list args;
    va_start (args, format);
    char *line = zsys_vprintf (format, args);
    va_end (args);
    size_t length = strlen (line);
    bool written = write (fd, line, length) == (ssize_t) length
                && write (fd, "\n", 1) == 1;
    free (line);
    if (close (fd) != 0 || !written)
        return s_fail (&self->runner, "cannot write %s/netns",
                       grid_run_dir (self->run));
    return 0;
}


//  --------------------------------------------------------------------------
//  Pick a tag no namespace or interface of this machine uses yet

static int
s_pick_tag (grid_netns_t *self)
{
    static const char letters [] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 16; attempt++) {
        unsigned char bytes [GRID_NETNS_TAG_LENGTH];
        if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes)
            for (size_t index = 0; index < sizeof bytes; index++)
                bytes [index] = (unsigned char) random ();
        for (size_t index = 0; index < GRID_NETNS_TAG_LENGTH; index++)
            self->tag [index] = letters [bytes [index] % 36];
        self->tag [GRID_NETNS_TAG_LENGTH] = 0;
        snprintf (self->backbone, sizeof self->backbone, "%s%s",
                  GRID_NETNS_PREFIX, self->tag);
        if (!s_namespace_exists (self->backbone)
        &&  !s_link_exists (self->backbone))
            return 0;
    }
    return s_fail (&self->runner, "cannot find a free name for the"
                   " namespaces (every one tried exists)");
}


//  --------------------------------------------------------------------------
//  The owner record of a tag: OWNERS_DIR/TAG, the run folder's real path

static char *
s_owner_path (const char *tag)
{
    return zsys_sprintf ("%s/%s", GRID_NETNS_OWNERS_DIR, tag);
}

static int
s_write_owner (grid_netns_t *self)
{
    char folder [PATH_MAX];
    if (!realpath (grid_run_dir (self->run), folder))
        return s_fail (&self->runner, "cannot resolve %s: %s",
                       grid_run_dir (self->run), strerror (errno));
    if (mkdir (GRID_NETNS_OWNERS_DIR, 0755) != 0 && errno != EEXIST)
        return s_fail (&self->runner, "cannot make %s: %s",
                       GRID_NETNS_OWNERS_DIR, strerror (errno));
    char *path = s_owner_path (self->tag);
    FILE *file = fopen (path, "w");
    bool written = file && fprintf (file, "%s\n", folder) > 0;
    if (file && fclose (file) != 0)
        written = false;
    int rc = written ? 0 : s_fail (&self->runner, "cannot write %s: %s",
                                   path, strerror (errno));
    free (path);
    return rc;
}


//  --------------------------------------------------------------------------
//  Make the backbone namespace.  It forwards between clusters and never
//  sends redirects: a packet from A to B goes in and out of the same
//  bridge, and must keep doing so to cross the backbone's tbf.

static int
s_make_backbone_namespace (grid_netns_t *self)
{
    const char *name = self->backbone;
    if (s_record (self, false, "backbone %s", name)
    ||  s_run (&self->runner, "ip", "netns", "add", name, NULL)
    ||  s_run (&self->runner, "ip", "-n", name, "link", "set", "lo", "up",
               NULL))
        return -1;
    return s_run (&self->runner, "ip", "netns", "exec", name, "sysctl",
                  "-q", "-w", "net.ipv4.ip_forward=1",
                  "net.ipv4.conf.all.send_redirects=0",
                  "net.ipv4.conf.default.send_redirects=0", NULL);
}


//  --------------------------------------------------------------------------
//  True if a query's output has a route other than a default one

static bool
s_has_specific_route (const char *output)
{
    char *copy = strdup (output);
    bool found = false;
    char *saved = NULL;
    for (char *line = strtok_r (copy, "\n", &saved); line && !found;
         line = strtok_r (NULL, "\n", &saved)) {
        char first [64] = "";
        char second [64] = "";
        if (sscanf (line, "%63s %63s", first, second) < 1)
            continue;
        found = !streq (first, "default") && !streq (second, "default");
    }
    free (copy);
    return found;
}


//  --------------------------------------------------------------------------
//  1 if no address or route of this namespace lies in 10.second.0.0/16 or
//  covers it (besides a default route), 0 if one does, -1 if ip failed

static int
s_subnet_is_free (grid_netns_t *self, int second)
{
    char prefix [32];
    snprintf (prefix, sizeof prefix, "10.%d.0.0/16", second);
    const char *relations [] = { "root", "match" };
    for (size_t index = 0; index < 2; index++) {
        char *output = NULL;
        if (s_query (&self->runner, &output, "ip", "-4", "-o", "route",
                     "show", "table", "all", relations [index], prefix,
                     NULL))
            return -1;
        bool taken = s_has_specific_route (output);
        free (output);
        if (taken)
            return 0;
    }
    return 1;
}


//  --------------------------------------------------------------------------
//  Take the lock runs hold while they pick a subnet.  Returns its file
//  descriptor (close it to let go), or -1.

static int
s_lock (grid_netns_t *self)
{
    int fd = open (GRID_NETNS_LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return s_fail (&self->runner, "cannot open %s: %s",
                       GRID_NETNS_LOCK_PATH, strerror (errno));
    int64_t deadline = zclock_mono () + GRID_NETNS_LOCK_MSEC;
    while (flock (fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK || zclock_mono () >= deadline) {
            close (fd);
            return s_fail (&self->runner, "cannot lock %s in %d s: another"
                           " jace-grid holds it", GRID_NETNS_LOCK_PATH,
                           GRID_NETNS_LOCK_MSEC / 1000);
        }
        zclock_sleep (50);
    }
    return fd;
}


//  --------------------------------------------------------------------------
//  Join the root namespace to the backbone and route the subnet to it:
//  the route is what marks the subnet taken for the next run.

static int
s_make_host_link (grid_netns_t *self)
{
    const char *name = self->backbone;
    char host [32];
    char gateway [32];
    char subnet [32];
    snprintf (host, sizeof host, "10.%d.0.1/24", self->subnet);
    snprintf (gateway, sizeof gateway, "10.%d.0.2", self->subnet);
    snprintf (subnet, sizeof subnet, "10.%d.0.0/16", self->subnet);
    if (s_record (self, false, "link %s", name)
    ||  s_run (&self->runner, "ip", "link", "add", name, "type", "veth",
               "peer", "name", "host", "netns", name, NULL)
    ||  s_run (&self->runner, "ip", "addr", "add", host, "dev", name, NULL)
    ||  s_run (&self->runner, "ip", "link", "set", name, "up", NULL)
    ||  s_run (&self->runner, "ip", "route", "add", subnet, "via", gateway,
               "dev", name, NULL))
        return -1;
    return s_record (self, false, "subnet %s 10.%d.0.1", subnet,
                     self->subnet);
}


//  --------------------------------------------------------------------------
//  Pick the first free subnet and take it, under the lock

static int
s_claim_subnet (grid_netns_t *self)
{
    int lock = s_lock (self);
    if (lock < 0)
        return -1;
    int rc = s_fail (&self->runner, "no free subnet for the testbed:"
                     " 10.%d.0.0/16 to 10.%d.0.0/16 all overlap an address"
                     " or route of this machine (ip route show table all)",
                     GRID_NETNS_SUBNET_FIRST, GRID_NETNS_SUBNET_FIRST
                     + GRID_NETNS_SUBNET_COUNT - 1);
    for (int second = GRID_NETNS_SUBNET_FIRST;
         second < GRID_NETNS_SUBNET_FIRST + GRID_NETNS_SUBNET_COUNT;
         second++) {
        int free = s_subnet_is_free (self, second);
        if (free < 0) {
            rc = -1;
            break;
        }
        if (free) {
            self->subnet = second;
            rc = s_make_host_link (self);
            break;
        }
    }
    close (lock);
    return rc;
}


//  --------------------------------------------------------------------------
//  Limit a device's egress to mbps with tbf

static int
s_limit (grid_netns_t *self, const char *namespace_name, const char *device,
         double mbps)
{
    double bytes_per_second = mbps * 1e6 / 8;
    double burst = fmin (fmax (bytes_per_second * GRID_NETNS_BURST_SEC,
                               GRID_NETNS_BURST_MIN), GRID_NETNS_BURST_MAX);
    double limit = burst + fmin (bytes_per_second * GRID_NETNS_QUEUE_SEC,
                                 GRID_NETNS_QUEUE_MAX);
    char rate_text [32];
    char burst_text [32];
    char limit_text [32];
    snprintf (rate_text, sizeof rate_text, "%.0fbit", mbps * 1e6);
    snprintf (burst_text, sizeof burst_text, "%.0f", burst);
    snprintf (limit_text, sizeof limit_text, "%.0f", limit);
    return s_run (&self->runner, "tc", "-n", namespace_name, "qdisc", "add",
                  "dev", device, "root", "tbf", "rate", rate_text, "burst",
                  burst_text, "limit", limit_text, NULL);
}


//  --------------------------------------------------------------------------
//  The backbone: a bridge every cluster's veth joins, and tbf on the
//  bridge device, which every packet between clusters leaves through

static int
s_make_backbone (grid_netns_t *self)
{
    const char *name = self->backbone;
    char address [32];
    snprintf (address, sizeof address, "10.%d.0.2/24", self->subnet);
    if (s_run (&self->runner, "ip", "-n", name, "link", "add", "backbone",
               "type", "bridge", NULL)
    ||  s_run (&self->runner, "ip", "-n", name, "link", "set", "backbone",
               "up", NULL)
    ||  s_run (&self->runner, "ip", "-n", name, "addr", "add", address,
               "dev", "host", NULL)
    ||  s_run (&self->runner, "ip", "-n", name, "link", "set", "host", "up",
               NULL))
        return -1;
    //  One cluster has no backbone to limit.
    if (self->cluster_count < 2)
        return 0;
    return s_limit (self, name, "backbone",
                    platform_bandwidth_mbps (self->platform, 0, 1));
}


//  --------------------------------------------------------------------------
//  One cluster: its namespace, its veth to the bridge (port cINDEX), its
//  subnet 10.S.C.0/24 with C = index + 1, and its uplink's limits

static int
s_make_cluster (grid_netns_t *self, size_t index)
{
    const char *backbone = self->backbone;
    const char *cluster = platform_cluster_name (self->platform, index);
    char *name = self->namespaces [index];
    char *address = self->addresses [index];
    //  Both fit: tags and cluster names are short, bytes below 256.
    snprintf (name, GRID_NETNS_NAME_MAX, "%.15s-%.40s", backbone, cluster);
    snprintf (address, GRID_NETNS_ADDRESS_MAX, "10.%hhu.%hhu.1",
              (unsigned char) self->subnet, (unsigned char) (index + 1));
    char port [32];
    char own [48];
    char router [48];
    char router_prefix [64];
    char subnet [48];
    snprintf (port, sizeof port, "c%zu", index);
    snprintf (own, sizeof own, "%s/24", address);
    snprintf (router, sizeof router, "10.%d.%zu.254", self->subnet,
              index + 1);
    snprintf (router_prefix, sizeof router_prefix, "%s/24", router);
    snprintf (subnet, sizeof subnet, "10.%d.0.0/16", self->subnet);
    runner_t *runner = &self->runner;
    if (s_record (self, false, "cluster %s %s %s", cluster, name, address)
    ||  s_run (runner, "ip", "netns", "add", name, NULL)
    ||  s_run (runner, "ip", "-n", name, "link", "set", "lo", "up", NULL)
    ||  s_run (runner, "ip", "-n", backbone, "link", "add", port, "type",
               "veth", "peer", "name", "uplink", "netns", name, NULL)
    ||  s_run (runner, "ip", "-n", backbone, "link", "set", port, "master",
               "backbone", NULL)
    ||  s_run (runner, "ip", "-n", backbone, "link", "set", port, "up", NULL)
    ||  s_run (runner, "ip", "-n", backbone, "addr", "add", router_prefix,
               "dev", "backbone", NULL)
    ||  s_run (runner, "ip", "-n", name, "addr", "add", own, "dev", "uplink",
               NULL)
    ||  s_run (runner, "ip", "-n", name, "link", "set", "uplink", "up", NULL)
    ||  s_run (runner, "ip", "-n", name, "route", "add", subnet, "via",
               router, NULL))
        return -1;
    double uplink = platform_uplink_mbps (self->platform, index);
    if (uplink > 0
    &&  (s_limit (self, name, "uplink", uplink)
    ||   s_limit (self, backbone, port, uplink)))
        return -1;
    return 0;
}


//  --------------------------------------------------------------------------
//  Build the testbed

int
grid_netns_create (grid_netns_t *self, char *error, size_t error_size)
{
    assert (self);
    int rc = s_record (self, true, "#  what jace-grid start --netns made;"
                       " jace-grid stop removes it");
    if (rc == 0)
        rc = s_pick_tag (self);
    if (rc == 0)
        rc = s_write_owner (self);
    if (rc == 0)
        rc = s_make_backbone_namespace (self);
    if (rc == 0)
        rc = s_claim_subnet (self);
    if (rc == 0)
        rc = s_make_backbone (self);
    for (size_t index = 0; rc == 0 && index < self->cluster_count; index++)
        rc = s_make_cluster (self, index);
    if (rc)
        snprintf (error, error_size, "%s", self->runner.error);
    return rc;
}


//  --------------------------------------------------------------------------
//  Namespace of a cluster

const char *
grid_netns_namespace (grid_netns_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->namespaces [cluster];
}


//  --------------------------------------------------------------------------
//  Address of a cluster

const char *
grid_netns_address (grid_netns_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->addresses [cluster];
}


//  --------------------------------------------------------------------------
//  A value in ZPL double quotes, or single quotes when it holds a double
//  one.  Returns NULL when it holds both (ZPL has no escapes).

static char *
s_quoted (const char *value)
{
    if (!strchr (value, '"'))
        return zsys_sprintf ("\"%s\"", value);
    if (!strchr (value, '\''))
        return zsys_sprintf ("'%s'", value);
    return NULL;
}


//  --------------------------------------------------------------------------
//  Append one cluster of the latency-only platform to text

static void
s_append_cluster (grid_netns_t *self, size_t cluster, char **text)
{
    platform_t *platform = self->platform;
    size_t nodes = platform_cluster_nodes (platform, cluster);
    char *speeds = strdup ("");
    for (size_t node = 0; node < nodes; node++) {
        char *longer = zsys_sprintf ("%s%s%.17g", speeds, node ? " " : "",
                                     platform_node_speed (platform, cluster,
                                                          node));
        free (speeds);
        speeds = longer;
    }
    //  The cluster's power is a node's over its speed.
    double power = platform_node_power (platform, cluster, 0)
                 / platform_node_speed (platform, cluster, 0);
    char *longer = zsys_sprintf (
        "%s    cluster\n"
        "        name = \"%s\"\n"
        "        nodes = %zu\n"
        "        speeds = \"%s\"\n"
        "        power = %.17g\n"
        "        latency_us = %.17g\n"
        "        bandwidth_mbps = %.17g\n"
        "        supernodes = %zu\n",
        *text, platform_cluster_name (platform, cluster), nodes, speeds,
        power, platform_latency_us (platform, cluster, cluster),
        platform_bandwidth_mbps (platform, cluster, cluster),
        platform_cluster_supernodes (platform, cluster));
    free (speeds);
    free (*text);
    *text = longer;
}


//  --------------------------------------------------------------------------
//  Write the latency-only platform

int
grid_netns_write_platform (grid_netns_t *self, const char *relative,
                           char *error, size_t error_size)
{
    assert (self && relative);
    platform_t *platform = self->platform;
    char *name = s_quoted (platform_name (platform));
    if (!name)
        name = strdup ("\"latency-only\"");
    //  Without a link of their own, clusters all have the backbone's
    //  latency; one cluster keeps the default.
    char *backbone = self->cluster_count < 2 ? strdup ("")
                   : zsys_sprintf ("        latency_us = %.17g\n",
                                   platform_latency_us (platform, 0, 1));
    char *text = zsys_sprintf (
        "#  %s - written by jace-grid start --netns from %s\n"
        "#  Between clusters the kernel limits the bandwidth (tc tbf on the\n"
        "#  backbone and the uplinks), so the processes only delay: those\n"
        "#  links cost nothing and nothing is shared.  Inside a cluster,\n"
        "#  traffic runs over its namespace's loopback, which the kernel\n"
        "#  does not limit, so the cluster's own links stay emulated.\n"
        "platform\n"
        "    name = %s\n"
        "    backbone\n"
        "%s"
        "        bandwidth_mbps = %s\n",
        relative, self->platform_path, name, backbone,
        GRID_NETNS_FREE_MBPS);
    free (name);
    free (backbone);
    for (size_t cluster = 0; cluster < self->cluster_count; cluster++)
        s_append_cluster (self, cluster, &text);
    int rc = grid_run_write (self->run, relative, text);
    free (text);
    if (rc) {
        snprintf (error, error_size, "cannot write %s/%s",
                  grid_run_dir (self->run), relative);
        return -1;
    }
    //  Read it back: the processes must accept what we wrote.
    char *path = grid_run_path (self->run, relative);
    char reason [512] = "";
    platform_t *written = platform_load (path, reason, sizeof reason);
    free (path);
    if (!written || platform_node_count (written)
                    != platform_node_count (platform)) {
        snprintf (error, error_size, "the latency-only platform is wrong: %s",
                  reason);
        rc = -1;
    }
    platform_destroy (&written);
    return rc;
}


//  --------------------------------------------------------------------------
//  True if the run folder records a testbed

bool
grid_netns_is_recorded (grid_run_t *run)
{
    assert (run);
    char *path = grid_run_path (run, "netns");
    bool exists = access (path, F_OK) == 0;
    free (path);
    return exists;
}


//  --------------------------------------------------------------------------
//  Check one parsed line: its kind, its number of fields and that every
//  name is one we make.  Returns NULL, or what is wrong.

static const char *
s_check_record (record_t *record, size_t count)
{
    const char *kind = record->kind;
    char (*fields) [GRID_NETNS_NAME_MAX] = record->fields;
    struct in_addr address;
    if (streq (kind, "backbone") || streq (kind, "link")) {
        if (count != 1)
            return "expected a kind and a name";
        if (!s_is_backbone_name (fields [0]))
            return "not a name jace-grid makes (jace-TAG)";
    }
    else
    if (streq (kind, "subnet")) {
        if (count != 2)
            return "expected 'subnet PREFIX HOST-ADDRESS'";
    }
    else
    if (streq (kind, "cluster")) {
        if (count != 3)
            return "expected 'cluster NAME NAMESPACE ADDRESS'";
        if (!s_is_cluster_name (fields [0]))
            return "not a cluster name";
        if (!s_is_cluster_namespace (fields [1]))
            return "not a namespace jace-grid makes (jace-TAG-CLUSTER)";
        if (inet_pton (AF_INET, fields [2], &address) != 1)
            return "not an IPv4 address";
    }
    else
        return "unknown kind (backbone, link, subnet or cluster)";
    return NULL;
}


//  --------------------------------------------------------------------------
//  Parse one line into record.  Returns 0, or -1 with a reason.

static int
s_parse_record (char *line, record_t *record, const char **reason)
{
    char *words [5] = { NULL };
    size_t count = 0;
    char *saved = NULL;
    for (char *word = strtok_r (line, " \t\r\n", &saved); word;
         word = strtok_r (NULL, " \t\r\n", &saved)) {
        if (count == 4) {
            *reason = "too many fields";
            return -1;
        }
        if (strlen (word) >= GRID_NETNS_NAME_MAX) {
            *reason = "field too long";
            return -1;
        }
        words [count++] = word;
    }
    memset (record, 0, sizeof *record);
    if (strlen (words [0]) >= sizeof record->kind) {
        *reason = "unknown kind (backbone, link, subnet or cluster)";
        return -1;
    }
    strcpy (record->kind, words [0]);
    for (size_t index = 1; index < count; index++)
        strcpy (record->fields [index - 1], words [index]);
    *reason = s_check_record (record, count - 1);
    return *reason ? -1 : 0;
}


//  --------------------------------------------------------------------------
//  Read DIR/netns into records (at most GRID_NETNS_RECORDS_MAX).  Returns
//  how many, or -1 with "PATH:LINE: reason" in error.

static int
s_load_records (grid_run_t *run, record_t *records, char *error,
                size_t error_size)
{
    char *path = grid_run_path (run, "netns");
    FILE *file = fopen (path, "r");
    if (!file) {
        snprintf (error, error_size, "cannot read %s: %s", path,
                  strerror (errno));
        free (path);
        return -1;
    }
    char line [GRID_NETNS_LINE_MAX];
    size_t number = 0;
    int count = 0;
    const char *reason = NULL;
    while (!reason && fgets (line, sizeof line, file)) {
        number++;
        if (!strchr (line, '\n') && !feof (file))
            reason = "line too long";
        else
        if (line [0] == '#' || !line [strspn (line, " \t\r\n")])
            continue;
        else
        if (count == GRID_NETNS_RECORDS_MAX)
            reason = "too many lines";
        else
        if (s_parse_record (line, &records [count], &reason) == 0)
            records [count++].line = number;
    }
    fclose (file);
    if (reason) {
        snprintf (error, error_size, "%s:%zu: %s", path, number, reason);
        count = -1;
    }
    free (path);
    return count;
}


//  --------------------------------------------------------------------------
//  Delete a namespace if it is still there

static int
s_delete_namespace (runner_t *runner, const char *name)
{
    if (!s_namespace_exists (name))
        return 0;
    return s_run (runner, "ip", "netns", "del", name, NULL);
}


//  --------------------------------------------------------------------------
//  Remove a recorded testbed.  The host link goes first and explicitly:
//  a namespace is torn down in the background once its name is gone, and
//  its veth with it, but only when no process runs in it any more.

int
grid_netns_remove (grid_run_t *run, char *error, size_t error_size)
{
    assert (run);
    record_t *records = zmalloc (GRID_NETNS_RECORDS_MAX * sizeof (record_t));
    int count = s_load_records (run, records, error, error_size);
    runner_t runner = { grid_run_path (run, "logs/netns.log"), "" };
    int rc = count < 0 ? -1 : 0;
    for (int index = 0; index < count; index++)
        if (streq (records [index].kind, "link")
        &&  s_link_exists (records [index].fields [0])
        &&  s_run (&runner, "ip", "link", "del", records [index].fields [0],
                   NULL))
            rc = -1;
    for (int index = count - 1; index >= 0; index--)
        if (streq (records [index].kind, "cluster")
        &&  s_delete_namespace (&runner, records [index].fields [1]))
            rc = -1;
    for (int index = 0; index < count; index++)
        if (streq (records [index].kind, "backbone")
        &&  s_delete_namespace (&runner, records [index].fields [0]))
            rc = -1;
    if (count >= 0 && rc)
        snprintf (error, error_size, "%s", runner.error);
    for (int index = 0; rc == 0 && index < count; index++)
        if (streq (records [index].kind, "backbone")) {
            char *owner = s_owner_path (records [index].fields [0]
                                        + strlen (GRID_NETNS_PREFIX));
            unlink (owner);
            free (owner);
        }
    if (rc == 0) {
        char *path = grid_run_path (run, "netns");
        if (unlink (path) != 0 && errno != ENOENT) {
            snprintf (error, error_size, "cannot remove %s: %s", path,
                      strerror (errno));
            rc = -1;
        }
        free (path);
    }
    free (runner.log_path);
    free (records);
    return rc;
}


//  --------------------------------------------------------------------------
//  Remove the testbeds whose run folder is gone

//  Remove what testbed jace-TAG made: the host link, every jace-TAG-*
//  namespace, then jace-TAG.  Returns 0 or -1 (the reason in runner).
static int
s_remove_tag (runner_t *runner, const char *tag)
{
    char backbone [GRID_NETNS_NAME_MAX];
    snprintf (backbone, sizeof backbone, "%s%s", GRID_NETNS_PREFIX, tag);
    int rc = 0;
    if (s_link_exists (backbone)
    &&  s_run (runner, "ip", "link", "del", backbone, NULL))
        rc = -1;
    DIR *names = opendir (GRID_NETNS_RUN_DIR);
    struct dirent *entry;
    size_t prefix = strlen (backbone);
    while (names && (entry = readdir (names)))
        if (strncmp (entry->d_name, backbone, prefix) == 0
        &&  entry->d_name [prefix] == '-'
        &&  s_delete_namespace (runner, entry->d_name))
            rc = -1;
    if (names)
        closedir (names);
    if (s_delete_namespace (runner, backbone))
        rc = -1;
    return rc;
}

zlist_t *
grid_netns_sweep (char *error, size_t error_size)
{
    zlist_t *swept = zlist_new ();
    zlist_autofree (swept);
    DIR *owners = opendir (GRID_NETNS_OWNERS_DIR);
    if (!owners)
        return swept;           //  No testbed was ever made here
    runner_t runner = { strdup ("/dev/null"), "" };
    struct dirent *entry;
    while ((entry = readdir (owners))) {
        char backbone [GRID_NETNS_NAME_MAX];
        snprintf (backbone, sizeof backbone, "%s%.*s", GRID_NETNS_PREFIX,
                  GRID_NETNS_TAG_LENGTH, entry->d_name);
        if (strlen (entry->d_name) != GRID_NETNS_TAG_LENGTH
        ||  !s_is_backbone_name (backbone))
            continue;
        char *path = s_owner_path (entry->d_name);
        char folder [PATH_MAX] = "";
        FILE *file = fopen (path, "r");
        bool read = file && fgets (folder, sizeof folder, file);
        if (file)
            fclose (file);
        folder [strcspn (folder, "\n")] = 0;
        struct stat info;
        if (read && *folder == '/' && stat (folder, &info) != 0
        &&  errno == ENOENT) {
            if (s_remove_tag (&runner, entry->d_name) == 0) {
                unlink (path);
                char *line = zsys_sprintf ("%s %s", backbone, folder);
                zlist_append (swept, line);     //  Copied: autofree
                zstr_free (&line);
            }
            else
                snprintf (error, error_size, "%s", runner.error);
        }
        free (path);
    }
    closedir (owners);
    free (runner.log_path);
    return swept;
}


//  --------------------------------------------------------------------------
//  Find a cluster of a recorded testbed

int
grid_netns_lookup (grid_run_t *run, const char *cluster,
                   char *namespace_name, char *address, char *error,
                   size_t error_size)
{
    assert (run && cluster && namespace_name && address);
    record_t *records = zmalloc (GRID_NETNS_RECORDS_MAX * sizeof (record_t));
    int count = s_load_records (run, records, error, error_size);
    int rc = -1;
    for (int index = 0; rc != 0 && index < count; index++)
        if (streq (records [index].kind, "cluster")
        &&  streq (records [index].fields [0], cluster)) {
            snprintf (namespace_name, GRID_NETNS_NAME_MAX, "%s",
                      records [index].fields [1]);
            //  An IPv4 address, checked when it was read
            snprintf (address, GRID_NETNS_ADDRESS_MAX, "%.15s",
                      records [index].fields [2]);
            rc = 0;
        }
    if (rc && count >= 0)
        snprintf (error, error_size, "no cluster %s in %s/netns", cluster,
                  grid_run_dir (run));
    free (records);
    return rc;
}


//  --------------------------------------------------------------------------
//  Cut a cluster off the backbone, or heal the cut

//  Rule preferences of a cut: the lowest the main table's rule (32766)
//  leaves free, two per cluster (to its subnet, from it)
#define GRID_NETNS_CUT_PREF_FIRST 1000

//  The backbone namespace and the cluster's subnet and number, from the
//  records.  Returns 0, or -1 with a reason in error.
static int
s_cut_target (grid_run_t *run, const char *cluster, char *backbone,
              char *subnet, int *index, char *error, size_t error_size)
{
    record_t *records = zmalloc (GRID_NETNS_RECORDS_MAX * sizeof (record_t));
    int count = s_load_records (run, records, error, error_size);
    int clusters = 0;
    *index = -1;
    backbone [0] = '\0';
    for (int line = 0; line < count; line++)
        if (streq (records [line].kind, "backbone"))
            snprintf (backbone, GRID_NETNS_NAME_MAX, "%s",
                      records [line].fields [0]);
        else
        if (streq (records [line].kind, "cluster")) {
            if (streq (records [line].fields [0], cluster)) {
                *index = clusters;
                //  10.S.C.1, checked when read: its /24 is 10.S.C.0/24
                const char *address = records [line].fields [2];
                int host = (int) (strrchr (address, '.') - address);
                snprintf (subnet, GRID_NETNS_ADDRESS_MAX + 8, "%.*s.0/24",
                          host, address);
            }
            clusters++;
        }
    free (records);
    if (count < 0)
        return -1;
    if (*index < 0 || !backbone [0]) {
        snprintf (error, error_size, "no cluster %s in %s/netns", cluster,
                  grid_run_dir (run));
        return -1;
    }
    return 0;
}

int
grid_netns_cut (grid_run_t *run, const char *cluster, bool cut, char *error,
                size_t error_size)
{
    assert (run && cluster);
    char backbone [GRID_NETNS_NAME_MAX];
    char subnet [GRID_NETNS_ADDRESS_MAX + 8];
    int index;
    if (s_cut_target (run, cluster, backbone, subnet, &index, error,
                      error_size))
        return -1;
    char to_pref [16], from_pref [16];
    snprintf (to_pref, sizeof to_pref, "%d",
              GRID_NETNS_CUT_PREF_FIRST + 2 * index);
    snprintf (from_pref, sizeof from_pref, "%d",
              GRID_NETNS_CUT_PREF_FIRST + 2 * index + 1);
    runner_t runner = { grid_run_path (run, "logs/netns.log"), "" };
    char *rules = NULL;
    int rc = s_query (&runner, &rules, "ip", "-n", backbone, "rule", "show",
                      "pref", to_pref, NULL);
    bool is_cut = rc == 0 && rules && rules [strspn (rules, " \t\n")];
    free (rules);
    if (rc == 0 && is_cut == cut) {
        snprintf (runner.error, sizeof runner.error, "cluster %s is %s",
                  cluster, cut ? "cut off already" : "not cut off");
        rc = -1;
    }
    //  Blackhole rules drop what the backbone routes to or from the
    //  cluster, and answer nothing: the cluster's peers see silence, as
    //  behind a dead site's router, not a refused connection.
    if (rc == 0 && cut) {
        rc = s_run (&runner, "ip", "-n", backbone, "rule", "add", "to",
                    subnet, "blackhole", "pref", to_pref, NULL);
        if (rc == 0)
            rc = s_run (&runner, "ip", "-n", backbone, "rule", "add", "from",
                        subnet, "blackhole", "pref", from_pref, NULL);
    }
    else
    if (rc == 0) {
        //  Both, even if the first fails: a half cut heals too
        rc = s_run (&runner, "ip", "-n", backbone, "rule", "del", "pref",
                    to_pref, NULL);
        if (s_run (&runner, "ip", "-n", backbone, "rule", "del", "pref",
                   from_pref, NULL))
            rc = -1;
    }
    if (rc)
        snprintf (error, error_size, "%s", runner.error);
    free (runner.log_path);
    return rc;
}
