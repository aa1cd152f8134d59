/*  =========================================================================
    spawner_live - the live platform model a job is mapped on
    =========================================================================
*/
#include "spawner_live.h"

#include <math.h>

//  Defaults of unmeasured links (docs/MAPPING.md section 4)
#define LIVE_INTRA_LATENCY_US       50
#define LIVE_INTRA_BANDWIDTH_MBPS   1000
#define LIVE_INTER_LATENCY_US       5000
#define LIVE_INTER_BANDWIDTH_MBPS   100
//  Most clusters a model holds: its link tables grow as their square
//  (256 clusters: 1 MiB), and no grid has that many.  Daemons of further
//  clusters are skipped, as records that make no sense are.
#define LIVE_CLUSTERS_MAX           256

struct _spawner_live_t {
    platform_t *platform;       //  The model's platform
    bool own_platform;          //  We destroy it
    grid_t *grid;               //  States and hand-out order
    jace_node_t *nodes;         //  Daemon of each platform node
    size_t count;               //  Nodes
    size_t measured;            //  Ordered cluster pairs measured
    size_t total;               //  Ordered cluster pairs in all
    zhashx_t *index;            //  Daemon id -> node + 1
    size_t skipped;             //  Records left out
    char skip_reason [160];     //  Why the first was
};

//  A daemon as collected, before the platform numbers it
typedef struct {
    jace_node_t node;           //  Its record
    size_t cluster;             //  Cluster, in order of first naming
    bool free;                  //  Free in every listing that names it
} live_entry_t;

//  A strictly parsed decimal: the whole text, finite.  False otherwise.
static bool
s_decimal (const char *text, double *value)
{
    if (!text || !*text || isspace ((unsigned char) *text))
        return false;
    char *end;
    errno = 0;
    double number = strtod (text, &end);
    if (errno || *end || !isfinite (number))
        return false;
    *value = number;
    return true;
}

//  Index of a cluster name in names [0 .. count), or -1
static int
s_cluster_find (char **names, size_t count, const char *name)
{
    for (size_t index = 0; index < count; index++)
        if (streq (names [index], name))
            return (int) index;
    return -1;
}

//  What is collected from the records: entries, clusters, and what was
//  left out.  Ids are indexed (entry + 1), so a listing of n daemons is
//  collected in O(n).
typedef struct {
    live_entry_t *entries;
    size_t count;
    char **names;               //  Cluster names, in order of first naming
    size_t clusters;
    zhashx_t *ids;              //  Daemon id -> entry + 1
    size_t skipped;
    char skip_reason [160];
} collect_t;

static void
s_skip (collect_t *collect, const char *id, const char *why)
{
    if (collect->skipped++ == 0)
        snprintf (collect->skip_reason, sizeof collect->skip_reason,
                  "daemon '%.40s': %s", id, why);
}

//  Add a record unless its id is known.  A record that makes no sense
//  (jace_node_valid; a daemon naming no cluster) is left out, counted:
//  one bad record must not keep a job off the rest of the grid.
static void
s_collect (collect_t *collect, const jace_node_t *node, bool listed)
{
    char why [96];
    if (!jace_node_valid (node, why, sizeof why)) {
        s_skip (collect, node->id, why);
        return;
    }
    if (!*node->cluster) {
        s_skip (collect, node->id, "names no cluster");
        return;
    }
    size_t known = (size_t) (uintptr_t) zhashx_lookup (collect->ids,
                                                        node->id);
    if (known) {
        //  Listed twice (a failover): once, free only if free in both
        if (listed && node->state != JACE_NODE_FREE)
            collect->entries [known - 1].free = false;
        return;
    }
    int cluster = s_cluster_find (collect->names, collect->clusters,
                                  node->cluster);
    if (cluster < 0 && collect->clusters == LIVE_CLUSTERS_MAX) {
        s_skip (collect, node->id, "more clusters than a model holds");
        return;
    }
    if (cluster < 0) {
        collect->names [collect->clusters] = strdup (node->cluster);
        cluster = (int) collect->clusters++;
    }
    live_entry_t *entry = &collect->entries [collect->count++];
    entry->node = *node;
    entry->cluster = (size_t) cluster;
    entry->free = listed && node->state == JACE_NODE_FREE;
    zhashx_insert (collect->ids, node->id,
                   (void *) (uintptr_t) collect->count);
}

//  Read link/<A>/<B>/<what> params into the matrices (NAN, or 0 transfers:
//  unmeasured)
static void
s_read_links (jace_msg_t *listing, char **names, size_t clusters,
              double *latency, double *bandwidth, size_t *transfers)
{
    zhash_t *params = jace_msg_params (listing);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params)) {
        const char *key = zhash_cursor (params);
        if (strncmp (key, "link/", 5) != 0)
            continue;
        const char *from = key + 5;
        const char *slash = strchr (from, '/');
        if (!slash || slash == from)
            continue;
        const char *to = slash + 1;
        const char *last = strchr (to, '/');
        if (!last || last == to || strchr (last + 1, '/'))
            continue;
        char first [JACE_ID_MAX], second [JACE_ID_MAX];
        if ((size_t) (slash - from) >= sizeof first
        ||  (size_t) (last - to) >= sizeof second)
            continue;
        snprintf (first, sizeof first, "%.*s", (int) (slash - from), from);
        snprintf (second, sizeof second, "%.*s", (int) (last - to), to);
        int a = s_cluster_find (names, clusters, first);
        int b = s_cluster_find (names, clusters, second);
        double number;
        if (a < 0 || b < 0 || !s_decimal (value, &number))
            continue;
        size_t cell = (size_t) a * clusters + (size_t) b;
        if (streq (last + 1, "latency_us") && number >= 0)
            latency [cell] = number;
        else
        if (streq (last + 1, "bandwidth_mbps") && number > 0)
            bandwidth [cell] = number;
        else
        if (streq (last + 1, "transfers") && number >= 1 && number <= 1e6)
            transfers [cell] = (size_t) number;
    }
}

//  Fill unmeasured links with the defaults; count the measured pairs
static size_t
s_fill_links (size_t clusters, double *latency, double *bandwidth)
{
    //  A pair is published both ways; take the other way when one is lost
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = 0; b < clusters; b++) {
            size_t cell = a * clusters + b, back = b * clusters + a;
            if (isnan (latency [cell]) && !isnan (latency [back]))
                latency [cell] = latency [back];
            if (isnan (bandwidth [cell]) && !isnan (bandwidth [back]))
                bandwidth [cell] = bandwidth [back];
        }
    double slowest_latency = NAN, slowest_bandwidth = NAN;
    size_t measured = 0;
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = 0; b < clusters; b++) {
            size_t cell = a * clusters + b;
            if (a == b)
                continue;
            if (!isnan (latency [cell])) {
                measured++;
                if (isnan (slowest_latency) || latency [cell] > slowest_latency)
                    slowest_latency = latency [cell];
            }
            if (!isnan (bandwidth [cell])
            &&  (isnan (slowest_bandwidth)
                 || bandwidth [cell] < slowest_bandwidth))
                slowest_bandwidth = bandwidth [cell];
        }
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = 0; b < clusters; b++) {
            size_t cell = a * clusters + b;
            if (isnan (latency [cell]))
                latency [cell] = a == b ? LIVE_INTRA_LATENCY_US
                               : isnan (slowest_latency)
                               ? LIVE_INTER_LATENCY_US : slowest_latency;
            if (isnan (bandwidth [cell]))
                bandwidth [cell] = a == b ? LIVE_INTRA_BANDWIDTH_MBPS
                                 : isnan (slowest_bandwidth)
                                 ? LIVE_INTER_BANDWIDTH_MBPS
                                 : slowest_bandwidth;
        }
    return measured;
}

spawner_live_t *
spawner_live_new (jace_msg_t *listing, const jace_node_t *extra,
                  size_t extra_count, char *reason, size_t reason_size)
{
    assert (listing);
    size_t listed = jace_msg_node_count (listing);
    size_t room = listed + (extra ? extra_count : 0);
    if (listed == 0) {
        snprintf (reason, reason_size, "the super-node lists no daemon");
        return NULL;
    }
    collect_t collect = {
        .entries = (live_entry_t *) zmalloc (room * sizeof (live_entry_t)),
        .names = (char **) zmalloc (room * sizeof (char *)),
        .ids = zhashx_new () };
    spawner_live_t *self = NULL;
    double *latency = NULL, *bandwidth = NULL, *power = NULL;
    size_t *transfers = NULL;
    size_t *nodes = NULL, *order = NULL;
    int rc = 0;
    for (size_t index = 0; index < listed; index++)
        s_collect (&collect, jace_msg_node (listing, index), true);
    for (size_t index = 0; extra && index < extra_count; index++)
        s_collect (&collect, &extra [index], false);
    live_entry_t *entries = collect.entries;
    char **names = collect.names;
    size_t count = collect.count, clusters = collect.clusters;
    if (count == 0) {
        snprintf (reason, reason_size, "no usable daemon in the listing: "
                  "%s", collect.skip_reason);
        goto out;
    }
    latency = (double *) zmalloc (clusters * clusters * sizeof (double));
    bandwidth = (double *) zmalloc (clusters * clusters * sizeof (double));
    for (size_t cell = 0; cell < clusters * clusters; cell++)
        latency [cell] = bandwidth [cell] = NAN;
    transfers = (size_t *) zmalloc (clusters * clusters * sizeof (size_t));
    s_read_links (listing, names, clusters, latency, bandwidth, transfers);
    size_t measured = s_fill_links (clusters, latency, bandwidth);

    //  Platform numbering: clusters in order, daemons in listing order
    nodes = (size_t *) zmalloc (clusters * sizeof (size_t));
    for (size_t index = 0; index < count; index++)
        nodes [entries [index].cluster]++;
    size_t *start = (size_t *) zmalloc ((clusters + 1) * sizeof (size_t));
    for (size_t cluster = 0; cluster < clusters; cluster++)
        start [cluster + 1] = start [cluster] + nodes [cluster];
    power = (double *) zmalloc (count * sizeof (double));
    order = (size_t *) zmalloc (count * sizeof (size_t));
    self = (spawner_live_t *) zmalloc (sizeof *self);
    self->count = count;
    self->nodes = (jace_node_t *) zmalloc (count * sizeof (jace_node_t));
    for (size_t index = 0; index < count; index++) {
        size_t node = start [entries [index].cluster]++;
        power [node] = entries [index].node.power;
        self->nodes [node] = entries [index].node;
        order [index] = node;
    }
    free (start);
    char why [256];
    self->platform = platform_new_live ("live", clusters,
                                        (const char *const *) names, nodes,
                                        power, latency, bandwidth, why,
                                        sizeof why);
    if (!self->platform) {
        snprintf (reason, reason_size, "the listing makes no platform: %s",
                  why);
        spawner_live_destroy (&self);
        goto out;
    }
    self->own_platform = true;
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = 0; b < clusters; b++)
            platform_set_measured_transfers (self->platform, a, b,
                                             transfers [a * clusters + b]);
    self->grid = grid_new (self->platform);
    for (size_t index = 0; index < count; index++)
        grid_set_state (self->grid, order [index],
                        entries [index].free ? GRID_FREE : GRID_USED);
    rc = grid_set_order (self->grid, order);
    assert (rc == 0);
    self->measured = measured;
    self->total = clusters * (clusters - 1);
    self->skipped = collect.skipped;
    snprintf (self->skip_reason, sizeof self->skip_reason, "%s",
              collect.skip_reason);
    self->index = zhashx_new ();
    for (size_t node = 0; node < count; node++)
        zhashx_insert (self->index, self->nodes [node].id,
                       (void *) (uintptr_t) (node + 1));

out:
    for (size_t cluster = 0; cluster < collect.clusters; cluster++)
        free (collect.names [cluster]);
    free (collect.names);
    free (collect.entries);
    zhashx_destroy (&collect.ids);
    free (latency);
    free (bandwidth);
    free (transfers);
    free (power);
    free (nodes);
    free (order);
    return self;
}

spawner_live_t *
spawner_live_from_platform (platform_t *platform, char *reason,
                            size_t reason_size)
{
    assert (platform);
    spawner_live_t *self = (spawner_live_t *) zmalloc (sizeof *self);
    self->platform = platform;
    self->grid = grid_new (platform);
    self->count = platform_node_count (platform);
    self->nodes = (jace_node_t *) zmalloc ((self->count + 1)
                                           * sizeof (jace_node_t));
    for (size_t cluster = 0; cluster < platform_cluster_count (platform);
         cluster++) {
        const char *name = platform_cluster_name (platform, cluster);
        for (size_t local = 0;
             local < platform_cluster_nodes (platform, cluster); local++) {
            //  As jace-grid names its daemons (tools/grid_launch.c)
            jace_node_t *node = &self->nodes [platform_node_index (
                platform, cluster, local)];
            snprintf (node->id, sizeof node->id, "%s-%zu", name, local);
            snprintf (node->cluster, sizeof node->cluster, "%s", name);
            node->power = platform_node_power (platform, cluster, local);
            node->cores = 1;
            node->state = JACE_NODE_FREE;
            node->task = -1;
            if (!isfinite (node->power) || node->power <= 0) {
                snprintf (reason, reason_size, "node %s has power %g",
                          node->id, node->power);
                spawner_live_destroy (&self);
                return NULL;
            }
        }
    }
    size_t clusters = platform_cluster_count (platform);
    self->total = self->measured = clusters * (clusters - 1);
    self->index = zhashx_new ();
    for (size_t node = 0; node < self->count; node++)
        zhashx_insert (self->index, self->nodes [node].id,
                       (void *) (uintptr_t) (node + 1));
    return self;
}

void
spawner_live_destroy (spawner_live_t **self_p)
{
    assert (self_p);
    spawner_live_t *self = *self_p;
    if (!self)
        return;
    grid_destroy (&self->grid);
    if (self->own_platform)
        platform_destroy (&self->platform);
    free (self->nodes);
    zhashx_destroy (&self->index);
    free (self);
    *self_p = NULL;
}

platform_t *
spawner_live_platform (spawner_live_t *self)
{
    assert (self);
    return self->platform;
}

grid_t *
spawner_live_grid (spawner_live_t *self)
{
    assert (self);
    return self->grid;
}

size_t
spawner_live_count (spawner_live_t *self)
{
    assert (self);
    return self->count;
}

const jace_node_t *
spawner_live_node (spawner_live_t *self, size_t node)
{
    assert (self);
    assert (node < self->count);
    return &self->nodes [node];
}

int64_t
spawner_live_find (spawner_live_t *self, const char *id)
{
    assert (self && id);
    size_t node = (size_t) (uintptr_t) zhashx_lookup (self->index, id);
    return node ? (int64_t) node - 1 : -1;
}

size_t
spawner_live_skipped (spawner_live_t *self, const char **reason)
{
    assert (self);
    if (reason)
        *reason = self->skip_reason;
    return self->skipped;
}

size_t
spawner_live_links_measured (spawner_live_t *self)
{
    assert (self);
    return self->measured;
}

size_t
spawner_live_links_total (spawner_live_t *self)
{
    assert (self);
    return self->total;
}
