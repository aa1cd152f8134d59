/*  =========================================================================
    platform - clusters, nodes and links of a (virtual) grid

    The parser validates everything (it reads user files) and reports the
    first problem as "line N: reason"; it never asserts on input.
    =========================================================================
*/
#include "mapping.h"

//  Defaults documented in platform.h and docs/PLANNING.md
#define PLATFORM_INTRA_LATENCY_US       50.0
#define PLATFORM_INTRA_BANDWIDTH_MBPS   1000.0
#define PLATFORM_BACKBONE_LATENCY_US    5000.0
#define PLATFORM_BACKBONE_BANDWIDTH_MBPS 100.0
//  Most simultaneous transfers a backbone may declare (jace_links' limit)
#define PLATFORM_TRANSFERS_MAX 4096
//  Bounds of what a platform may say.  Beyond them the emulator's delays
//  overflowed (latency_us = 1e30 made the slowest link the fastest), the
//  heterogeneity degree did (powers 1e308: hd 0), and a typo of nodes
//  exhausted memory in jace-map.
#define PLATFORM_NODES_MAX 100000
#define PLATFORM_LATENCY_MAX_US 1e8
#define PLATFORM_BANDWIDTH_MIN_MBPS 1e-3
#define PLATFORM_BANDWIDTH_MAX_MBPS 1e9     //  jace-grid --netns: "free"
//  What jace-daemon takes for --power and --speed: a file the virtual
//  grid cannot start (speed 0.0001) was mapped by jace-map as if it could
#define PLATFORM_POWER_MIN 1e-9
#define PLATFORM_POWER_MAX 1e6
#define PLATFORM_SPEED_MIN 1e-3
//  Cluster names name daemons, files and processes (jace-grid)
#define PLATFORM_NAME_MAX 40

typedef struct {
    char *name;                 //  Cluster name, unique in the platform
    size_t nodes;               //  Number of nodes
    size_t first;               //  Global index of the first node
    double *speeds;             //  Speed factor of each node, in (0, 1]
    double power;               //  Power of a speed-1 node
    size_t supernodes;          //  Super-nodes the launcher starts here
    double uplink_mbps;         //  Shared uplink's bandwidth, 0: unshaped
} cluster_t;

struct _platform_t {
    char *name;                 //  Platform name
    size_t cluster_count;       //  Number of clusters
    cluster_t *clusters;        //  Clusters in file order
    size_t node_count;          //  Nodes over all clusters
    double *latency_us;         //  cluster_count^2 latencies, row = from
    double *bandwidth_mbps;     //  cluster_count^2 bandwidths, row = from
    bool *own_link;             //  cluster_count^2: a `link` joins the pair
    size_t *link_transfers;     //  cluster_count^2: a link's KPBS k, or 0
    size_t *measured_transfers; //  cluster_count^2: transfers at full
                                //  speed the overlay measured, or 0
    bool backbone_shared;       //  Links are shared resources (issue 14)
    size_t backbone_transfers;  //  KPBS k of the backbone, 0: any number
};

//  Parsing context: where we are and the first error met
typedef struct {
    char *error;                //  Caller's buffer, may be NULL
    size_t error_size;          //  Size of the caller's buffer
} parser_t;

static int
s_fail (parser_t *parser, zpl_t *item, const char *format, ...)
{
    if (!parser->error || parser->error_size == 0)
        return -1;
    char reason [256];
    va_list args;
    va_start (args, format);
    vsnprintf (reason, sizeof reason, format, args);
    va_end (args);
    if (item && zpl_line (item))
        snprintf (parser->error, parser->error_size, "line %zu: %s",
                  zpl_line (item), reason);
    else
        snprintf (parser->error, parser->error_size, "%s", reason);
    return -1;
}

//  Read a finite number from a whole string
static bool
s_to_double (const char *text, double *value)
{
    if (!text || !*text)
        return false;
    char *end;
    errno = 0;
    *value = strtod (text, &end);
    return errno == 0 && *end == '\0' && isfinite (*value);
}

//  Read the optional number "name" under item; keeps *value if absent
static int
s_number (parser_t *parser, zpl_t *item, const char *name, double *value)
{
    zpl_t *field = zpl_locate (item, name);
    if (!field)
        return 0;
    if (!s_to_double (zpl_value (field), value))
        return s_fail (parser, field, "%s is not a number: '%s'", name,
                       zpl_value (field) ? zpl_value (field) : "");
    return 0;
}

//  Read the optional positive whole number "name" under item
static int
s_count (parser_t *parser, zpl_t *item, const char *name, size_t minimum,
         size_t *value)
{
    zpl_t *field = zpl_locate (item, name);
    if (!field)
        return 0;
    double number;
    if (!s_to_double (zpl_value (field), &number) || number != floor (number)
    ||  number < (double) minimum || number > 1e9)
        return s_fail (parser, field, "%s must be a whole number >= %zu",
                       name, minimum);
    *value = (size_t) number;
    return 0;
}

//  Read a latency and a bandwidth, both positive
static int
s_link_figures (parser_t *parser, zpl_t *item, double *latency,
                double *bandwidth)
{
    if (s_number (parser, item, "latency_us", latency)
    ||  s_number (parser, item, "bandwidth_mbps", bandwidth))
        return -1;
    if (*latency < 0 || *latency > PLATFORM_LATENCY_MAX_US)
        return s_fail (parser, zpl_locate (item, "latency_us"),
                       "latency_us must be in [0, %g]",
                       PLATFORM_LATENCY_MAX_US);
    if (*bandwidth < PLATFORM_BANDWIDTH_MIN_MBPS
    ||  *bandwidth > PLATFORM_BANDWIDTH_MAX_MBPS)
        return s_fail (parser, zpl_locate (item, "bandwidth_mbps"),
                       "bandwidth_mbps must be in [%g, %g]",
                       PLATFORM_BANDWIDTH_MIN_MBPS,
                       PLATFORM_BANDWIDTH_MAX_MBPS);
    return 0;
}

//  True if name can name daemons, files and processes: up to 40
//  letters, digits, '.', '_' or '-', not starting with '.' or '-'
static bool
s_plain_name (const char *name)
{
    if (!*name || strlen (name) > PLATFORM_NAME_MAX || name [0] == '.'
    ||  name [0] == '-')
        return false;
    for (const char *cursor = name; *cursor; cursor++)
        if (!isalnum ((unsigned char) *cursor) && !strchr ("._-", *cursor))
            return false;
    return true;
}

//  Known item names under `parent` (called `what`), so that typing
//  mistakes are reported, not ignored
static int
s_check_names (parser_t *parser, zpl_t *parent, const char *what,
               const char *const *known)
{
    for (zpl_t *item = zpl_child (parent); item; item = zpl_next (item)) {
        size_t index = 0;
        while (known [index] && !streq (known [index], zpl_name (item)))
            index++;
        if (!known [index]) {
            const char *nearest = zpl_nearest (zpl_name (item), known);
            return s_fail (parser, item, "unknown item '%s' in %s%s%s%s",
                           zpl_name (item), what,
                           nearest ? " (did you mean " : "",
                           nearest ? nearest : "", nearest ? "?)" : "");
        }
        //  Given twice, the first was read and the second ignored
        //  (nodes = 4 then nodes = 2 made 4 nodes); clusters and links
        //  come many to a platform.
        if (streq (zpl_name (item), "cluster")
        ||  streq (zpl_name (item), "link"))
            continue;
        for (zpl_t *other = zpl_child (parent); other != item;
             other = zpl_next (other))
            if (streq (zpl_name (other), zpl_name (item)))
                return s_fail (parser, item, "'%s' is given twice in %s "
                               "(first on line %zu)", zpl_name (item), what,
                               zpl_line (other));
    }
    return 0;
}

//  Parse "speeds": exactly one factor in (0, 1] per node
static int
s_parse_speeds (parser_t *parser, zpl_t *item, cluster_t *cluster)
{
    zpl_t *field = zpl_locate (item, "speeds");
    const char *cursor = zpl_value (field) ? zpl_value (field) : "";
    size_t count = 0;
    while (true) {
        while (isspace ((unsigned char) *cursor))
            cursor++;
        if (!*cursor)
            break;
        char *end;
        errno = 0;
        double speed = strtod (cursor, &end);
        if (end == cursor || errno || !isfinite (speed)
        ||  (*end && !isspace ((unsigned char) *end)))
            return s_fail (parser, field, "speeds holds a non-number");
        if (speed < PLATFORM_SPEED_MIN || speed > 1)
            return s_fail (parser, field, "speed %g is out of [%g, 1]", speed,
                           PLATFORM_SPEED_MIN);
        if (count < cluster->nodes)
            cluster->speeds [count] = speed;
        count++;
        cursor = end;
    }
    if (count != cluster->nodes)
        return s_fail (parser, field,
                       "speeds has %zu values for %zu nodes", count,
                       cluster->nodes);
    return 0;
}

//  Parse one cluster item
static int
s_parse_cluster (parser_t *parser, zpl_t *item, cluster_t *cluster,
                 double *latency, double *bandwidth)
{
    zpl_t *name = zpl_locate (item, "name");
    if (!name || !zpl_value (name) || !*zpl_value (name))
        return s_fail (parser, item, "cluster has no name");
    cluster->name = strdup (zpl_value (name));
    if (!s_plain_name (cluster->name))
        return s_fail (parser, name, "cluster name '%s' cannot name daemons, "
                       "files and processes; use up to %d letters, digits, "
                       "'.', '_' or '-'", cluster->name, PLATFORM_NAME_MAX);
    cluster->nodes = 0;
    static const char *const known [] = {
        "name", "nodes", "speed", "speeds", "power", "latency_us",
        "bandwidth_mbps", "supernodes", "uplink_mbps", NULL
    };
    //  Names first: "nodez = 4" is a typing mistake to point at, more
    //  than a cluster without nodes
    if (s_check_names (parser, item, "cluster", known))
        return -1;
    if (!zpl_locate (item, "nodes"))
        return s_fail (parser, item, "cluster %s has no nodes",
                       cluster->name);
    cluster->supernodes = 1;
    cluster->power = 1.0;
    double speed = 1.0;
    if (s_count (parser, item, "nodes", 1, &cluster->nodes)
    ||  s_count (parser, item, "supernodes", 0, &cluster->supernodes)
    ||  s_number (parser, item, "speed", &speed)
    ||  s_number (parser, item, "power", &cluster->power)
    ||  s_number (parser, item, "uplink_mbps", &cluster->uplink_mbps)
    ||  s_link_figures (parser, item, latency, bandwidth))
        return -1;
    if (zpl_locate (item, "uplink_mbps")
    &&  (cluster->uplink_mbps < PLATFORM_BANDWIDTH_MIN_MBPS
         || cluster->uplink_mbps > PLATFORM_BANDWIDTH_MAX_MBPS))
        return s_fail (parser, zpl_locate (item, "uplink_mbps"),
                       "uplink_mbps must be in [%g, %g]",
                       PLATFORM_BANDWIDTH_MIN_MBPS,
                       PLATFORM_BANDWIDTH_MAX_MBPS);
    if (cluster->nodes > PLATFORM_NODES_MAX)
        return s_fail (parser, zpl_locate (item, "nodes"), "more than %d "
                       "nodes in all", PLATFORM_NODES_MAX);
    if (speed < PLATFORM_SPEED_MIN || speed > 1)
        return s_fail (parser, zpl_locate (item, "speed"),
                       "speed %g is out of [%g, 1]", speed,
                       PLATFORM_SPEED_MIN);
    if (zpl_locate (item, "speed") && zpl_locate (item, "speeds"))
        return s_fail (parser, zpl_locate (item, "speeds"),
                       "speed and speeds both given: speeds sets every "
                       "node's, give one of them");
    if (cluster->power < PLATFORM_POWER_MIN
    ||  cluster->power > PLATFORM_POWER_MAX)
        return s_fail (parser, zpl_locate (item, "power"),
                       "power must be in [%g, %g]", PLATFORM_POWER_MIN,
                       PLATFORM_POWER_MAX);
    cluster->speeds = (double *) malloc (cluster->nodes * sizeof (double));
    assert (cluster->speeds);
    for (size_t node = 0; node < cluster->nodes; node++)
        cluster->speeds [node] = speed;
    if (zpl_locate (item, "speeds"))
        return s_parse_speeds (parser, item, cluster);
    return 0;
}

//  Parse one link item and store it both ways
static int
s_parse_link (parser_t *parser, platform_t *self, zpl_t *item)
{
    static const char *const known [] = {
        "between", "latency_us", "bandwidth_mbps", "transfers", NULL
    };
    if (s_check_names (parser, item, "link", known))
        return -1;
    zpl_t *between = zpl_locate (item, "between");
    char first [128], second [128], extra [2];
    if (!between || !zpl_value (between)
    ||  sscanf (zpl_value (between), "%127s %127s %1s", first, second,
                extra) != 2)
        return s_fail (parser, between ? between : item,
                       "link needs between = \"CLUSTER CLUSTER\"");
    int from = platform_cluster_index (self, first);
    int to = platform_cluster_index (self, second);
    if (from < 0 || to < 0)
        return s_fail (parser, between, "link names unknown cluster '%s'",
                       from < 0 ? first : second);
    if (from == to)
        return s_fail (parser, between, "link joins cluster %s to itself",
                       first);
    size_t count = self->cluster_count;
    if (self->own_link [from * count + to])
        return s_fail (parser, between, "a second link between %s and %s: "
                       "give one per pair", first, second);
    double latency = self->latency_us [from * count + to];
    double bandwidth = self->bandwidth_mbps [from * count + to];
    if (s_link_figures (parser, item, &latency, &bandwidth))
        return -1;
    //  A link is a resource of its own only on a shared backbone (as
    //  the backbone's own transfers are): then k lanes of it, like the
    //  backbone's.
    zpl_t *transfers = zpl_locate (item, "transfers");
    size_t lanes = 0;
    if (s_count (parser, item, "transfers", 1, &lanes))
        return -1;
    if (transfers && !self->backbone_shared)
        return s_fail (parser, transfers, "transfers needs a shared "
                       "backbone (shared = 1 in backbone)");
    if (lanes > PLATFORM_TRANSFERS_MAX)
        return s_fail (parser, transfers, "transfers must be at most %d",
                       PLATFORM_TRANSFERS_MAX);
    self->link_transfers [from * count + to] = lanes;
    self->link_transfers [to * count + from] = lanes;
    self->latency_us [from * count + to] = latency;
    self->latency_us [to * count + from] = latency;
    self->bandwidth_mbps [from * count + to] = bandwidth;
    self->bandwidth_mbps [to * count + from] = bandwidth;
    self->own_link [from * count + to] = true;
    self->own_link [to * count + from] = true;
    return 0;
}

//  Count the children called name
static size_t
s_children_named (zpl_t *item, const char *name)
{
    size_t count = 0;
    for (zpl_t *child = zpl_child (item); child; child = zpl_next (child))
        if (streq (zpl_name (child), name))
            count++;
    return count;
}

//  Parse every cluster, filling the diagonal of the link matrices
static int
s_parse_clusters (parser_t *parser, platform_t *self, zpl_t *root)
{
    size_t count = self->cluster_count;
    size_t index = 0;
    for (zpl_t *item = zpl_child (root); item; item = zpl_next (item)) {
        if (!streq (zpl_name (item), "cluster"))
            continue;
        cluster_t *cluster = &self->clusters [index];
        double latency = PLATFORM_INTRA_LATENCY_US;
        double bandwidth = PLATFORM_INTRA_BANDWIDTH_MBPS;
        if (s_parse_cluster (parser, item, cluster, &latency, &bandwidth))
            return -1;
        for (size_t other = 0; other < index; other++)
            if (streq (self->clusters [other].name, cluster->name))
                return s_fail (parser, item, "duplicate cluster name '%s'",
                               cluster->name);
        self->latency_us [index * count + index] = latency;
        self->bandwidth_mbps [index * count + index] = bandwidth;
        cluster->first = self->node_count;
        self->node_count += cluster->nodes;
        if (self->node_count > PLATFORM_NODES_MAX)
            return s_fail (parser, zpl_locate (item, "nodes"), "more than "
                           "%d nodes in all", PLATFORM_NODES_MAX);
        index++;
    }
    return 0;
}

//  Parse the backbone's sharing: `shared` (0 or 1) and `transfers` (the
//  KPBS k).  Transfers imply a shared backbone; without either, links are
//  per flow as they always were, so older platform files keep the
//  behaviour their benchmarks were measured with.
static int
s_parse_sharing (parser_t *parser, platform_t *self, zpl_t *backbone)
{
    static const char *const known [] = {
        "latency_us", "bandwidth_mbps", "shared", "transfers", NULL
    };
    if (s_check_names (parser, backbone, "backbone", known))
        return -1;
    zpl_t *shared = zpl_locate (backbone, "shared");
    zpl_t *transfers = zpl_locate (backbone, "transfers");
    size_t flag = transfers ? 1 : 0;
    if (s_count (parser, backbone, "shared", 0, &flag)
    ||  s_count (parser, backbone, "transfers", 1,
                 &self->backbone_transfers))
        return -1;
    if (flag > 1)
        return s_fail (parser, shared, "shared must be 0 or 1");
    if (transfers && flag == 0)
        return s_fail (parser, transfers, "transfers needs a shared "
                       "backbone (shared = 1)");
    if (self->backbone_transfers > PLATFORM_TRANSFERS_MAX)
        return s_fail (parser, transfers, "transfers must be at most %d",
                       PLATFORM_TRANSFERS_MAX);
    self->backbone_shared = flag == 1;
    return 0;
}

//  Fill the platform from the "platform" item
static int
s_parse_platform (parser_t *parser, platform_t *self, zpl_t *root)
{
    zpl_t *name = zpl_locate (root, "name");
    if (!name || !zpl_value (name) || !*zpl_value (name))
        return s_fail (parser, root, "platform has no name");
    self->name = strdup (zpl_value (name));
    static const char *const known [] = {
        "name", "backbone", "cluster", "link", NULL
    };
    if (s_check_names (parser, root, "platform", known))
        return -1;
    double latency = PLATFORM_BACKBONE_LATENCY_US;
    double bandwidth = PLATFORM_BACKBONE_BANDWIDTH_MBPS;
    zpl_t *backbone = zpl_locate (root, "backbone");
    if (backbone && (s_link_figures (parser, backbone, &latency, &bandwidth)
                     || s_parse_sharing (parser, self, backbone)))
        return -1;
    size_t count = s_children_named (root, "cluster");
    if (count == 0)
        return s_fail (parser, root, "platform has no cluster");
    self->cluster_count = count;
    self->clusters = (cluster_t *) calloc (count, sizeof (cluster_t));
    self->latency_us = (double *) malloc (count * count * sizeof (double));
    self->bandwidth_mbps = (double *) malloc (count * count * sizeof (double));
    self->own_link = (bool *) calloc (count * count, sizeof (bool));
    self->link_transfers = (size_t *) calloc (count * count,
                                              sizeof (size_t));
    self->measured_transfers = (size_t *) calloc (count * count,
                                                  sizeof (size_t));
    assert (self->clusters && self->latency_us && self->bandwidth_mbps
            && self->own_link && self->link_transfers
            && self->measured_transfers);
    for (size_t cell = 0; cell < count * count; cell++) {
        self->latency_us [cell] = latency;
        self->bandwidth_mbps [cell] = bandwidth;
    }
    if (s_parse_clusters (parser, self, root))
        return -1;
    //  Clusters may lean on another's super-node, not all of them
    size_t supernodes = 0;
    for (size_t cluster = 0; cluster < count; cluster++)
        supernodes += self->clusters [cluster].supernodes;
    if (supernodes == 0)
        return s_fail (parser, zpl_locate (root, "cluster"), "no cluster "
                       "has a super-node (supernodes = 0 in each): its "
                       "daemons would have none to register with");
    for (zpl_t *item = zpl_child (root); item; item = zpl_next (item))
        if (streq (zpl_name (item), "link") && s_parse_link (parser, self, item))
            return -1;
    return 0;
}

//  --------------------------------------------------------------------------
//  Parse a platform from a string

platform_t *
platform_parse (const char *text, char *error, size_t error_size)
{
    assert (text);
    parser_t parser = { error, error_size };
    zpl_t *tree = zpl_parse (text, error, error_size);
    if (!tree)
        return NULL;
    platform_t *self = (platform_t *) calloc (1, sizeof (platform_t));
    assert (self);
    static const char *const known [] = { "platform", NULL };
    zpl_t *root = zpl_locate (tree, "platform");
    int rc = s_check_names (&parser, tree, "the file", known);
    if (rc == 0)
        rc = root ? s_parse_platform (&parser, self, root)
                  : s_fail (&parser, NULL, "no 'platform' item");
    if (rc == 0 && zpl_next (root))
        rc = s_fail (&parser, zpl_next (root), "unexpected item '%s' after "
                     "the platform", zpl_name (zpl_next (root)));
    zpl_destroy (&tree);
    if (rc)
        platform_destroy (&self);
    return self;
}

//  --------------------------------------------------------------------------
//  Load a platform file

platform_t *
platform_load (const char *path, char *error, size_t error_size)
{
    assert (path);
    char *text = zpl_read_file (path, ZPL_FILE_MAX, error, error_size);
    if (!text)
        return NULL;
    char reason [512] = "";
    platform_t *self = platform_parse (text, reason, sizeof reason);
    free (text);
    if (!self && error) {
        //  "line N: why" becomes "PATH:N: why", as compilers print it
        size_t line;
        int consumed = 0;
        if (sscanf (reason, "line %zu: %n", &line, &consumed) == 1
        &&  consumed > 0)
            snprintf (error, error_size, "%s:%zu: %s", path, line,
                      reason + consumed);
        else
            snprintf (error, error_size, "%s: %s", path, reason);
    }
    return self;
}

//  --------------------------------------------------------------------------
//  Copy a platform with every node repeated `slots` times

static char *
s_strdup (const char *text)
{
    char *copy = strdup (text);
    assert (copy);
    return copy;
}

platform_t *
platform_with_slots (platform_t *self, size_t slots)
{
    assert (self);
    assert (slots >= 1);
    size_t links = self->cluster_count * self->cluster_count;
    platform_t *copy = (platform_t *) calloc (1, sizeof (platform_t));
    assert (copy);
    copy->name = s_strdup (self->name);
    copy->cluster_count = self->cluster_count;
    copy->clusters = (cluster_t *) calloc (self->cluster_count,
                                           sizeof (cluster_t));
    copy->latency_us = (double *) malloc (links * sizeof (double));
    copy->bandwidth_mbps = (double *) malloc (links * sizeof (double));
    assert (copy->clusters && copy->latency_us && copy->bandwidth_mbps);
    memcpy (copy->latency_us, self->latency_us, links * sizeof (double));
    memcpy (copy->bandwidth_mbps, self->bandwidth_mbps,
            links * sizeof (double));
    copy->own_link = (bool *) malloc (links * sizeof (bool));
    assert (copy->own_link);
    memcpy (copy->own_link, self->own_link, links * sizeof (bool));
    copy->link_transfers = (size_t *) malloc (links * sizeof (size_t));
    assert (copy->link_transfers);
    memcpy (copy->link_transfers, self->link_transfers,
            links * sizeof (size_t));
    copy->measured_transfers = (size_t *) malloc (links * sizeof (size_t));
    assert (copy->measured_transfers);
    memcpy (copy->measured_transfers, self->measured_transfers,
            links * sizeof (size_t));
    copy->backbone_shared = self->backbone_shared;
    copy->backbone_transfers = self->backbone_transfers;
    for (size_t index = 0; index < self->cluster_count; index++) {
        const cluster_t *from = &self->clusters [index];
        cluster_t *to = &copy->clusters [index];
        *to = *from;
        to->name = s_strdup (from->name);
        to->nodes = from->nodes * slots;
        to->first = copy->node_count;
        to->speeds = (double *) malloc (to->nodes * sizeof (double));
        assert (to->speeds);
        for (size_t node = 0; node < to->nodes; node++)
            to->speeds [node] = from->speeds [node / slots];
        copy->node_count += to->nodes;
    }
    return copy;
}

//  --------------------------------------------------------------------------
//  Destroy a platform

//  --------------------------------------------------------------------------
//  A platform from a live description (a registry listing)

static int
s_check_live (size_t cluster_count, const char *const *names,
              const size_t *nodes, const double *power,
              const double *latency_us, const double *bandwidth_mbps,
              char *error, size_t error_size)
{
    parser_t parser = { error, error_size };
    if (cluster_count == 0)
        return s_fail (&parser, NULL, "no cluster");
    size_t node = 0;
    for (size_t c = 0; c < cluster_count; c++) {
        if (!names [c] || !*names [c])
            return s_fail (&parser, NULL, "cluster %zu has no name", c);
        for (size_t other = 0; other < c; other++)
            if (streq (names [other], names [c]))
                return s_fail (&parser, NULL, "cluster '%s' given twice",
                               names [c]);
        if (nodes [c] == 0)
            return s_fail (&parser, NULL, "cluster '%s' has no node",
                           names [c]);
        for (size_t i = 0; i < nodes [c]; i++, node++)
            if (!isfinite (power [node]) || power [node] <= 0)
                return s_fail (&parser, NULL, "node %zu of cluster '%s' "
                               "has power %g", i, names [c], power [node]);
    }
    for (size_t i = 0; i < cluster_count * cluster_count; i++)
        if (!isfinite (latency_us [i]) || latency_us [i] < 0
        ||  !isfinite (bandwidth_mbps [i]) || bandwidth_mbps [i] <= 0)
            return s_fail (&parser, NULL, "link %zu -> %zu: latency %g us, "
                           "bandwidth %g Mb/s", i / cluster_count,
                           i % cluster_count, latency_us [i],
                           bandwidth_mbps [i]);
    return 0;
}

platform_t *
platform_new_live (const char *name, size_t cluster_count,
                   const char *const *names, const size_t *nodes,
                   const double *power, const double *latency_us,
                   const double *bandwidth_mbps, char *error,
                   size_t error_size)
{
    assert (name && names && nodes && power && latency_us && bandwidth_mbps);
    if (s_check_live (cluster_count, names, nodes, power, latency_us,
                      bandwidth_mbps, error, error_size))
        return NULL;
    platform_t *self = (platform_t *) calloc (1, sizeof *self);
    assert (self);
    self->name = strdup (name);
    self->cluster_count = cluster_count;
    self->clusters = (cluster_t *) calloc (cluster_count, sizeof (cluster_t));
    assert (self->clusters);
    for (size_t c = 0; c < cluster_count; c++) {
        cluster_t *cluster = &self->clusters [c];
        cluster->name = strdup (names [c]);
        cluster->nodes = nodes [c];
        cluster->first = self->node_count;
        cluster->supernodes = 1;
        cluster->speeds = (double *) calloc (nodes [c], sizeof (double));
        assert (cluster->speeds);
        //  A cluster's power is its fastest node's, so that every speed
        //  is in (0, 1] and speed x power is each node's own power.
        const double *own = power + cluster->first;
        for (size_t i = 0; i < nodes [c]; i++)
            if (own [i] > cluster->power)
                cluster->power = own [i];
        for (size_t i = 0; i < nodes [c]; i++)
            cluster->speeds [i] = own [i] / cluster->power;
        self->node_count += nodes [c];
    }
    size_t links = cluster_count * cluster_count;
    self->latency_us = (double *) malloc (links * sizeof (double));
    self->bandwidth_mbps = (double *) malloc (links * sizeof (double));
    assert (self->latency_us && self->bandwidth_mbps);
    memcpy (self->latency_us, latency_us, links * sizeof (double));
    memcpy (self->bandwidth_mbps, bandwidth_mbps, links * sizeof (double));
    //  A live grid's links are measured, not declared: none is shared.
    self->own_link = (bool *) calloc (links, sizeof (bool));
    self->link_transfers = (size_t *) calloc (links, sizeof (size_t));
    self->measured_transfers = (size_t *) calloc (links, sizeof (size_t));
    assert (self->own_link && self->link_transfers
            && self->measured_transfers);
    return self;
}

void
platform_destroy (platform_t **self_p)
{
    assert (self_p);
    platform_t *self = *self_p;
    if (!self)
        return;
    for (size_t index = 0; index < self->cluster_count; index++) {
        free (self->clusters [index].name);
        free (self->clusters [index].speeds);
    }
    free (self->clusters);
    free (self->latency_us);
    free (self->bandwidth_mbps);
    free (self->own_link);
    free (self->link_transfers);
    free (self->measured_transfers);
    free (self->name);
    free (self);
    *self_p = NULL;
}

const char *
platform_name (platform_t *self)
{
    assert (self);
    return self->name;
}

size_t
platform_cluster_count (platform_t *self)
{
    assert (self);
    return self->cluster_count;
}

const char *
platform_cluster_name (platform_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->clusters [cluster].name;
}

int
platform_cluster_index (platform_t *self, const char *name)
{
    assert (self);
    assert (name);
    for (size_t index = 0; index < self->cluster_count; index++)
        if (self->clusters [index].name
        &&  streq (self->clusters [index].name, name))
            return (int) index;
    return -1;
}

size_t
platform_cluster_nodes (platform_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->clusters [cluster].nodes;
}

size_t
platform_cluster_supernodes (platform_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->clusters [cluster].supernodes;
}

double
platform_node_speed (platform_t *self, size_t cluster, size_t node)
{
    assert (self);
    assert (cluster < self->cluster_count);
    assert (node < self->clusters [cluster].nodes);
    return self->clusters [cluster].speeds [node];
}

double
platform_node_power (platform_t *self, size_t cluster, size_t node)
{
    return platform_node_speed (self, cluster, node)
         * self->clusters [cluster].power;
}

double
platform_latency_us (platform_t *self, size_t from_cluster,
                     size_t to_cluster)
{
    assert (self);
    assert (from_cluster < self->cluster_count);
    assert (to_cluster < self->cluster_count);
    return self->latency_us [from_cluster * self->cluster_count + to_cluster];
}

double
platform_bandwidth_mbps (platform_t *self, size_t from_cluster,
                         size_t to_cluster)
{
    assert (self);
    assert (from_cluster < self->cluster_count);
    assert (to_cluster < self->cluster_count);
    return self->bandwidth_mbps [from_cluster * self->cluster_count
                                 + to_cluster];
}

size_t
platform_node_count (platform_t *self)
{
    assert (self);
    return self->node_count;
}

size_t
platform_node_index (platform_t *self, size_t cluster, size_t node)
{
    assert (self);
    assert (cluster < self->cluster_count);
    assert (node < self->clusters [cluster].nodes);
    return self->clusters [cluster].first + node;
}

size_t
platform_node_cluster (platform_t *self, size_t index)
{
    assert (self);
    assert (index < self->node_count);
    size_t cluster = 0;
    while (index >= self->clusters [cluster].first
                    + self->clusters [cluster].nodes)
        cluster++;
    return cluster;
}

double
platform_uplink_mbps (platform_t *self, size_t cluster)
{
    assert (self);
    assert (cluster < self->cluster_count);
    return self->clusters [cluster].uplink_mbps;
}

bool
platform_backbone_is_shared (platform_t *self)
{
    assert (self);
    return self->backbone_shared;
}

size_t
platform_backbone_transfers (platform_t *self)
{
    assert (self);
    return self->backbone_transfers;
}

bool
platform_has_own_link (platform_t *self, size_t first, size_t second)
{
    assert (self);
    assert (first < self->cluster_count);
    assert (second < self->cluster_count);
    return self->own_link [first * self->cluster_count + second];
}

size_t
platform_link_transfers (platform_t *self, size_t first, size_t second)
{
    assert (self);
    assert (first < self->cluster_count);
    assert (second < self->cluster_count);
    return self->link_transfers [first * self->cluster_count + second];
}

void
platform_set_measured_transfers (platform_t *self, size_t from, size_t to,
                                 size_t transfers)
{
    assert (self);
    assert (from < self->cluster_count && to < self->cluster_count);
    self->measured_transfers [from * self->cluster_count + to] = transfers;
}

size_t
platform_measured_transfers (platform_t *self, size_t from, size_t to)
{
    assert (self);
    assert (from < self->cluster_count && to < self->cluster_count);
    return self->measured_transfers [from * self->cluster_count + to];
}
