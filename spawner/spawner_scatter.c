/*  =========================================================================
    spawner_scatter - how a job's data is handed out at its start

    A link the model does not know (no root cluster named, a cluster the
    live model lacks) costs every daemon the same: LINK_DEFAULT_*, the
    live model's own default for a link inside a cluster.  The order then
    keeps task order and the distribution follows power alone.  A root the
    live model lacks (a typo, or a cluster with no free daemon listed)
    gets no relays: which cluster holds the data is then unknown, and a
    relay in it would only add a hop.
    =========================================================================
*/
#include "spawner_scatter.h"
#include "collectives.h"
#include "mapping.h"

#include <math.h>

#define LINK_DEFAULT_LATENCY_US 50
#define LINK_DEFAULT_MBPS 1000
//  scatter/iterations = auto: at least this many iterations, and enough
//  that computing a power-proportional share takes COMPUTE_RATIO times
//  the data phase (see s_auto_iterations)
#define SCATTER_ITERATIONS_AUTO -1
#define AUTO_ITERATIONS_MIN 1000
#define COMPUTE_RATIO 10

struct _spawner_scatter_t {
    spawner_scatter_config_t config;
    size_t count;               //  Daemons
    size_t *order;              //  Ranks, in send order
    int64_t *relay;             //  Per rank: its relay's rank, or -1
    bool root_known;            //  The root is a cluster of the model
    int64_t *rows;              //  Rows of each rank
    double iterations;          //  Iterations the model counts
    double predicted;           //  max T_i, seconds
    double predicted_transfer;  //  Last data in, seconds
    int64_t started;            //  First send (msec), 0 before
    int64_t *data_in;           //  Per rank: data in (msec), 0 before
    int64_t *iterated;          //  Per rank: counted iterations done
    size_t data_in_count;       //  Ranks whose data is in
    size_t iterated_count;      //  Ranks done with the counted iterations
    int64_t last_data_in;       //  When the last data came in
    int64_t last_iterated;      //  When the last rank was done
};

//  --------------------------------------------------------------------------
//  The job's section

static const char *s_distributions [] = { "balanced", "power", "uniform" };
static const char *s_orders [] = { "decreasing", "increasing", "rank" };
static const char *s_relays [] = { "off", "auto" };

//  Index of value in names (count of them), or -1
static int
s_find (const char **names, size_t count, const char *value)
{
    for (size_t i = 0; i < count; i++)
        if (streq (names [i], value))
            return (int) i;
    return -1;
}

static int
s_choice (zhash_t *params, const char *key, const char **names,
          size_t count, int *value, char *reason, size_t reason_size)
{
    const char *text = (const char *) zhash_lookup (params, key);
    if (!text)
        return 0;
    int found = s_find (names, count, text);
    if (found < 0) {
        char known [128] = "";
        for (size_t i = 0; i < count; i++)
            snprintf (known + strlen (known), sizeof known - strlen (known),
                      "%s%s", i ? ", " : "", names [i]);
        snprintf (reason, reason_size, "%s = '%s' is unknown (known: %s)",
                  key, text, known);
        return -1;
    }
    *value = found;
    return 0;
}

//  scatter/iterations: a count, or `auto` (the default): -1
static int
s_iterations (zhash_t *params, double *iterations, char *reason,
              size_t reason_size)
{
    const char *text = (const char *) zhash_lookup (params,
                                                    "scatter/iterations");
    *iterations = SCATTER_ITERATIONS_AUTO;
    if (!text || streq (text, "auto"))
        return 0;
    if (jace_param_number (params, "scatter/iterations", 0, 0, 1e9,
                           iterations, reason, reason_size) == 0)
        return 0;
    snprintf (reason + strlen (reason), reason_size - strlen (reason),
              ", or auto");
    return -1;
}

const char *const spawner_scatter_keys [] = {
    "scatter/distribution", "scatter/order", "scatter/iterations",
    "scatter/root", "scatter/relay", NULL
};

int
spawner_scatter_config (zhash_t *params, spawner_scatter_config_t *config,
                        char *reason, size_t reason_size)
{
    assert (params && config);
    memset (config, 0, sizeof *config);
    int distribution = SPAWNER_SCATTER_BALANCED;
    int order = SPAWNER_SCATTER_DECREASING;
    int relay = 1;
    if (s_choice (params, "scatter/distribution", s_distributions, 3,
                  &distribution, reason, reason_size)
    ||  s_choice (params, "scatter/order", s_orders, 3, &order, reason,
                  reason_size)
    ||  s_choice (params, "scatter/relay", s_relays, 2, &relay, reason,
                  reason_size)
    ||  s_iterations (params, &config->iterations, reason, reason_size))
        return -1;
    config->distribution = (spawner_scatter_distribution_t) distribution;
    config->order = (spawner_scatter_order_t) order;
    config->relay = relay == 1;
    const char *root = (const char *) zhash_lookup (params, "scatter/root");
    if (root && !jace_name_plain (root)) {
        snprintf (reason, reason_size, "scatter/root = '%s' is not a "
                  "cluster name", root);
        return -1;
    }
    snprintf (config->root, sizeof config->root, "%s", root ? root : "");
    return 0;
}

const char *
spawner_scatter_distribution_name (spawner_scatter_distribution_t value)
{
    return s_distributions [value];
}

const char *
spawner_scatter_order_name (spawner_scatter_order_t value)
{
    return s_orders [value];
}

//  --------------------------------------------------------------------------
//  The plan

//  The costs of daemon `node` for rows of `load`, from `root` (a cluster
//  index, or -1 when unknown).
static scatter_proc_t
s_costs (const spawner_scatter_config_t *config,
         const spawner_scatter_load_t *load, const jace_node_t *node,
         platform_t *platform, int root)
{
    double latency_us = LINK_DEFAULT_LATENCY_US;
    double mbps = LINK_DEFAULT_MBPS;
    int cluster = platform && root >= 0
                ? platform_cluster_index (platform, node->cluster) : -1;
    if (cluster >= 0) {
        latency_us = platform_latency_us (platform, (size_t) root,
                                          (size_t) cluster);
        mbps = platform_bandwidth_mbps (platform, (size_t) root,
                                        (size_t) cluster);
    }
    double power = node->power > 0 ? node->power : 1;
    scatter_proc_t costs = {
        .comp_fixed = 0,
        .comp_per_item = fmax (config->iterations, 1) * load->flops_per_row
                       / (power * GRID_FLOPS_PER_GFLOPS),
        //  The root's port is free for the next daemon once this one's
        //  last acknowledgement is back: a round trip, not one latency
        //  (relay-wide: 2.33 s predicted with one, 2.86 s measured)
        .comm_fixed = 2 * latency_us * 1e-6,
        .comm_per_item = mbps > 0 ? load->bytes_per_row * 8 / (mbps * 1e6)
                                  : 0
    };
    return costs;
}

//  Ranks in send order: by bandwidth from the root (the paper's policy,
//  or its reverse for comparison), ties in task order; or task order.
static void
s_order (const spawner_scatter_config_t *config, const scatter_proc_t *procs,
         size_t count, size_t *order)
{
    for (size_t rank = 0; rank < count; rank++)
        order [rank] = rank;
    if (config->order == SPAWNER_SCATTER_RANK || count < 2)
        return;
    //  The library puts its root last: give it the slowest daemon, which
    //  the order by decreasing bandwidth puts last anyway.
    size_t slowest = count - 1;
    for (size_t rank = count - 1; rank-- > 0;)
        if (procs [rank].comm_per_item > procs [slowest].comm_per_item
        ||  (procs [rank].comm_per_item == procs [slowest].comm_per_item
             && procs [rank].comm_fixed > procs [slowest].comm_fixed))
            slowest = rank;
    scatter_order_by_bandwidth (procs, count, slowest, order);
    if (config->order == SPAWNER_SCATTER_INCREASING)
        for (size_t i = 0; i < count / 2; i++) {
            size_t swap = order [i];
            order [i] = order [count - 1 - i];
            order [count - 1 - i] = swap;
        }
}

//  The iterations `auto` counts.  A job's compute is known only roughly
//  before it runs: the work per row is the application's lower bound
//  (one inner iteration for Krylov blocks), the power a dense benchmark's
//  (or, on a virtual grid, a speed factor), and how many iterations the
//  job will take is unknown.  Counted as 1,000 iterations at those rates,
//  it came to about the data phase, and the linear program starved every
//  daemon served after the first few: 64 tasks on two clusters got rows
//  99029, 91649, 84795, 78431, 6037 and 1 each for the other 59, and the
//  job took 289 s where equal shares took 5.7 s (BENCHMARKS.md).  An
//  iterative job computes far longer than it takes to hand its data out,
//  so auto counts at least enough iterations that computing a
//  power-proportional share takes COMPUTE_RATIO times that share's data
//  phase: the shares then lean away from late and far daemons by what
//  their wait costs, not more.  Too many costs little (shares near
//  power's); too few starves daemons: hence a ratio well above the 1-3.5
//  measured from data phase to answer in the benchmarks.  per_iteration:
//  each daemon's costs for one iteration; rows the job's.
static double
s_auto_iterations (const scatter_proc_t *per_iteration,
                   const jace_node_t *nodes, size_t count, int64_t rows)
{
    double *power = (double *) malloc (count * sizeof (double));
    int64_t *first = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    assert (power && first);
    for (size_t i = 0; i < count; i++)
        power [i] = nodes [i].power > 0 ? nodes [i].power : 1;
    spawner_scatter_proportional (power, count, rows, first);
    double data = 0, compute = 0;
    for (size_t i = 0; i < count; i++) {
        double share = (double) (first [i + 1] - first [i]);
        data += per_iteration [i].comm_fixed
              + per_iteration [i].comm_per_item * share;
        compute = fmax (compute, per_iteration [i].comp_fixed
                                 + per_iteration [i].comp_per_item * share);
    }
    free (power);
    free (first);
    double iterations = compute > 0 ? COMPUTE_RATIO * data / compute : 0;
    return fmax (iterations, AUTO_ITERATIONS_MIN);
}

//  Relays: in each cluster but the root's with two tasks or more there,
//  the first in the send order relays the others' data, and they move up
//  behind it so that the cluster's data goes in one run (a cluster's
//  daemons share its link: they tie in the order by bandwidth anyway).
static void
s_plan_relays (const spawner_scatter_config_t *config, bool root_known,
               const jace_node_t *nodes, size_t count, size_t *order,
               int64_t *relay)
{
    for (size_t rank = 0; rank < count; rank++)
        relay [rank] = -1;
    if (!config->relay || !root_known)
        return;
    size_t *grouped = (size_t *) malloc (count * sizeof (size_t));
    bool *placed = (bool *) zmalloc (count * sizeof (bool));
    assert (grouped);
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        size_t first = order [i];
        if (placed [first])
            continue;
        placed [first] = true;
        grouped [used++] = first;
        const char *cluster = nodes [first].cluster;
        if (streq (cluster, config->root))
            continue;
        for (size_t j = i + 1; j < count; j++) {
            size_t other = order [j];
            if (!placed [other] && streq (nodes [other].cluster, cluster)) {
                placed [other] = true;
                grouped [used++] = other;
                relay [other] = (int64_t) first;
                relay [first] = (int64_t) first;
            }
        }
    }
    memcpy (order, grouped, count * sizeof (size_t));
    free (grouped);
    free (placed);
}

//  Rows per position of the send order (each at least one), for the
//  chosen distribution.  Returns 0, or -1 if the linear program fails.
static int
s_distribute (const spawner_scatter_config_t *config,
              const scatter_proc_t *ordered, const jace_node_t *nodes,
              const size_t *order, size_t count, int64_t rows,
              size_t *shares)
{
    size_t spare = (size_t) (rows - (int64_t) count);
    if (config->distribution == SPAWNER_SCATTER_BALANCED) {
        if (scatter_heuristic (ordered, count, spare, shares, NULL) < 0)
            return -1;
    }
    else
    if (config->distribution == SPAWNER_SCATTER_UNIFORM)
        scatter_uniform (ordered, count, spare, shares);
    else {
        double *power = (double *) malloc (count * sizeof (double));
        int64_t *first = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
        assert (power && first);
        for (size_t i = 0; i < count; i++)
            power [i] = nodes [order [i]].power;
        spawner_scatter_proportional (power, count, rows, first);
        for (size_t i = 0; i < count; i++)
            shares [i] = (size_t) (first [i + 1] - first [i] - 1);
        free (power);
        free (first);
    }
    for (size_t i = 0; i < count; i++)
        shares [i]++;
    return 0;
}

spawner_scatter_t *
spawner_scatter_new (const spawner_scatter_config_t *config,
                     const spawner_scatter_load_t *load,
                     const jace_node_t *nodes, size_t count,
                     platform_t *platform, int64_t *first_row,
                     char *reason, size_t reason_size)
{
    assert (config && load && nodes && first_row);
    assert (count > 0 && load->rows >= (int64_t) count);
    int root = platform && *config->root
             ? platform_cluster_index (platform, config->root) : -1;
    scatter_proc_t *procs = (scatter_proc_t *) malloc (count
                                                       * sizeof *procs);
    scatter_proc_t *ordered = (scatter_proc_t *) malloc (count
                                                         * sizeof *procs);
    size_t *shares = (size_t *) malloc (count * sizeof (size_t));
    spawner_scatter_t *self = (spawner_scatter_t *) zmalloc (sizeof *self);
    self->order = (size_t *) malloc (count * sizeof (size_t));
    self->relay = (int64_t *) malloc (count * sizeof (int64_t));
    self->rows = (int64_t *) malloc (count * sizeof (int64_t));
    self->data_in = (int64_t *) zmalloc (count * sizeof (int64_t));
    self->iterated = (int64_t *) zmalloc (count * sizeof (int64_t));
    assert (procs && ordered && shares && self->order && self->rows);
    self->config = *config;
    self->count = count;
    self->root_known = root >= 0;
    for (size_t rank = 0; rank < count; rank++)
        procs [rank] = s_costs (config, load, &nodes [rank], platform, root);
    self->iterations = config->iterations;
    if (config->iterations == SCATTER_ITERATIONS_AUTO) {
        self->iterations = s_auto_iterations (procs, nodes, count,
                                              load->rows);
        for (size_t rank = 0; rank < count; rank++)
            procs [rank].comp_per_item *= self->iterations;
    }
    s_order (config, procs, count, self->order);
    s_plan_relays (config, self->root_known, nodes, count, self->order,
                   self->relay);
    for (size_t i = 0; i < count; i++) {
        size_t rank = self->order [i];
        ordered [i] = procs [rank];
        //  Behind its relay, in the same run: the link's latency is paid
        if (self->relay [rank] >= 0 && self->relay [rank] != (int64_t) rank)
            ordered [i].comm_fixed = 0;
    }
    if (s_distribute (config, ordered, nodes, self->order, count, load->rows,
                      shares)) {
        snprintf (reason, reason_size, "the scatter's linear program has no "
                  "solution (GLPK failed)");
        spawner_scatter_destroy (&self);
    }
    else {
        self->predicted = scatter_makespan (ordered, count, shares);
        for (size_t i = 0; i < count; i++) {
            self->rows [self->order [i]] = (int64_t) shares [i];
            self->predicted_transfer += ordered [i].comm_fixed
                + ordered [i].comm_per_item * (double) shares [i];
        }
        first_row [0] = 0;
        for (size_t rank = 0; rank < count; rank++)
            first_row [rank + 1] = first_row [rank] + self->rows [rank];
    }
    free (procs);
    free (ordered);
    free (shares);
    return self;
}

void
spawner_scatter_destroy (spawner_scatter_t **self_p)
{
    assert (self_p);
    spawner_scatter_t *self = *self_p;
    if (!self)
        return;
    free (self->order);
    free (self->relay);
    free (self->rows);
    free (self->data_in);
    free (self->iterated);
    free (self);
    *self_p = NULL;
}

size_t
spawner_scatter_rank_at (spawner_scatter_t *self, size_t position)
{
    assert (self && position < self->count);
    return self->order [position];
}

int64_t
spawner_scatter_relay_of (spawner_scatter_t *self, size_t rank)
{
    assert (self && rank < self->count);
    return self->relay [rank];
}

bool spawner_scatter_root_known (spawner_scatter_t *self)
    { assert (self); return self->root_known; }
double spawner_scatter_predicted (spawner_scatter_t *self)
    { assert (self); return self->predicted; }
double spawner_scatter_predicted_transfer (spawner_scatter_t *self)
    { assert (self); return self->predicted_transfer; }

char *
spawner_scatter_plan_json (spawner_scatter_t *self)
{
    assert (self);
    size_t size = 512 + self->count * 72;
    char *json = (char *) malloc (size);
    assert (json);
    size_t used = (size_t) snprintf (json, size, ",\"distribution\":\"%s\","
        "\"order\":\"%s\",\"root\":\"%s\",\"root_known\":%s,\"relay\":\"%s\","
        "\"iterations\":%g,"
        "\"predicted_seconds\":%.6f,\"predicted_transfer_seconds\":%.6f,"
        "\"send_order\":[",
        s_distributions [self->config.distribution],
        s_orders [self->config.order], self->config.root,
        self->root_known ? "true" : "false", s_relays [self->config.relay],
        self->iterations, self->predicted, self->predicted_transfer);
    for (size_t i = 0; i < self->count; i++)
        used += (size_t) snprintf (json + used, size - used, "%s%zu",
                                   i ? "," : "", self->order [i]);
    used += (size_t) snprintf (json + used, size - used, "],\"rows\":[");
    for (size_t rank = 0; rank < self->count; rank++)
        used += (size_t) snprintf (json + used, size - used, "%s%" PRId64,
                                   rank ? "," : "", self->rows [rank]);
    used += (size_t) snprintf (json + used, size - used, "],\"relays\":[");
    for (size_t rank = 0; rank < self->count; rank++)
        used += (size_t) snprintf (json + used, size - used, "%s%" PRId64,
                                   rank ? "," : "", self->relay [rank]);
    snprintf (json + used, size - used, "]");
    return json;
}

//  --------------------------------------------------------------------------
//  Measurement

void
spawner_scatter_started (spawner_scatter_t *self, int64_t now)
{
    assert (self);
    if (!self->started)
        self->started = now;
}

bool
spawner_scatter_data_in (spawner_scatter_t *self, size_t rank, int64_t now)
{
    assert (self && rank < self->count);
    if (self->data_in [rank])
        return false;
    self->data_in [rank] = now;
    self->last_data_in = now;
    return ++self->data_in_count == self->count;
}

bool
spawner_scatter_progress (spawner_scatter_t *self, size_t rank,
                          int64_t iteration, int64_t now)
{
    assert (self && rank < self->count);
    int64_t counted = (int64_t) fmax (1, ceil (self->iterations));
    if (self->iterated [rank] || iteration < counted)
        return false;
    self->iterated [rank] = now;
    self->last_iterated = now;
    return ++self->iterated_count == self->count;
}

double
spawner_scatter_measured_transfer (spawner_scatter_t *self)
{
    assert (self);
    return self->data_in_count == self->count && self->started
         ? (self->last_data_in - self->started) / 1000.0 : -1;
}

double
spawner_scatter_measured (spawner_scatter_t *self)
{
    assert (self);
    return self->iterated_count == self->count && self->started
         ? (self->last_iterated - self->started) / 1000.0 : -1;
}

//  --------------------------------------------------------------------------

void
spawner_scatter_proportional (const double *weight, size_t count,
                              int64_t rows, int64_t *first)
{
    assert (weight && first && count > 0 && rows >= (int64_t) count);
    double total = 0;
    for (size_t i = 0; i < count; i++)
        total += weight [i] > 0 ? weight [i] : 0;
    int64_t spare = rows - (int64_t) count;
    int64_t *share = (int64_t *) malloc (count * sizeof (int64_t));
    double *remainder = (double *) malloc (count * sizeof (double));
    assert (share && remainder);
    int64_t given = 0;
    for (size_t i = 0; i < count; i++) {
        double exact = total > 0
                     ? spare * (weight [i] > 0 ? weight [i] : 0) / total
                     : (double) spare / (double) count;
        share [i] = 1 + (int64_t) floor (exact);
        remainder [i] = exact - floor (exact);
        given += share [i];
    }
    //  Largest remainders first
    while (given < rows) {
        size_t best = 0;
        for (size_t i = 1; i < count; i++)
            if (remainder [i] > remainder [best])
                best = i;
        share [best]++;
        remainder [best] = -1;
        given++;
    }
    first [0] = 0;
    for (size_t i = 0; i < count; i++)
        first [i + 1] = first [i] + share [i];
    free (share);
    free (remainder);
}
