/*  =========================================================================
    test_spawner_scatter - the scatter's relays and send order

    Daemons of clusters B and C (behind one backbone, so they tie in the
    order by bandwidth) interleaved by rank, the data in A: each of B and
    C gets one relay, the first of its tasks in the send order, which all
    its other tasks name; a cluster's tasks go in one run; A's tasks and
    D's lone task get none.  The model pays a relayed cluster's round
    trip once: with equal blocks, the predicted data phase is shorter by
    that round trip for each relayed task.  scatter/relay = off relays
    nothing, nor does a root the platform lacks, and an unknown value is
    refused naming the key.  Sixty-four equal daemons behind one link:
    1,000 iterations at the model's rates starve all but a few (the
    model's compute is a lower bound), while
    scatter/iterations = auto keeps every share near the others.
    =========================================================================
*/
#include "tap.h"
#include "spawner_scatter.h"

#define COUNT 8
#define ROWS 80000

static const char *s_platform =
    "platform\n"
    "    name = \"relays\"\n"
    "    backbone\n"
    "        latency_us = 20000\n"
    "        bandwidth_mbps = 20\n"
    "    cluster\n"
    "        name = \"A\"\n"
    "        nodes = 2\n"
    "    cluster\n"
    "        name = \"B\"\n"
    "        nodes = 3\n"
    "    cluster\n"
    "        name = \"C\"\n"
    "        nodes = 2\n"
    "    cluster\n"
    "        name = \"D\"\n"
    "        nodes = 1\n";

//  Rank r runs in cluster s_clusters [r]
static const char *s_clusters [COUNT] = {
    "B", "A", "C", "B", "C", "D", "B", "A"
};

static spawner_scatter_t *
s_plan_from (platform_t *platform, const char *root, const char *relay,
             const char *distribution, int64_t *first)
{
    zhash_t *params = zhash_new ();
    zhash_insert (params, "scatter/root", (void *) root);
    zhash_insert (params, "scatter/relay", (void *) relay);
    zhash_insert (params, "scatter/distribution", (void *) distribution);
    spawner_scatter_config_t config;
    char reason [256];
    int rc = spawner_scatter_config (params, &config, reason, sizeof reason);
    zhash_destroy (&params);
    assert (rc == 0);
    jace_node_t nodes [COUNT];
    memset (nodes, 0, sizeof nodes);
    for (size_t rank = 0; rank < COUNT; rank++) {
        snprintf (nodes [rank].id, sizeof nodes [rank].id, "d%zu", rank);
        snprintf (nodes [rank].cluster, sizeof nodes [rank].cluster, "%s",
                  s_clusters [rank]);
        nodes [rank].power = 1;
    }
    spawner_scatter_load_t load = {
        .rows = ROWS, .bytes_per_row = 100, .flops_per_row = 10
    };
    return spawner_scatter_new (&config, &load, nodes, COUNT, platform, first,
                                reason, sizeof reason);
}

static spawner_scatter_t *
s_plan (platform_t *platform, const char *relay, const char *distribution,
        int64_t *first)
{
    return s_plan_from (platform, "A", relay, distribution, first);
}

//  True if every task of a relayed cluster names the first of them in the
//  send order, the others none, and each cluster's tasks go in one run.
static bool
s_relays_right (spawner_scatter_t *scatter)
{
    bool right = true;
    int64_t run_first = -1;     //  First rank of the current run
    char seen [COUNT + 1] = ""; //  Clusters met, one letter each
    for (size_t position = 0; position < COUNT; position++) {
        size_t rank = spawner_scatter_rank_at (scatter, position);
        const char *cluster = s_clusters [rank];
        if (position == 0
        ||  !streq (cluster, s_clusters [run_first])) {
            right &= strchr (seen, cluster [0]) == NULL;
            seen [strlen (seen)] = cluster [0];
            run_first = (int64_t) rank;
        }
        bool relayed = streq (cluster, "B") || streq (cluster, "C");
        right &= spawner_scatter_relay_of (scatter, rank)
              == (relayed ? run_first : -1);
    }
    return right;
}

//  The fewest and most rows of the count blocks that `cut` starts
static void
s_spread (const int64_t *cut, size_t count, int64_t *least, int64_t *most)
{
    *least = INT64_MAX;
    *most = 0;
    for (size_t rank = 0; rank < count; rank++) {
        int64_t rows = cut [rank + 1] - cut [rank];
        *least = rows < *least ? rows : *least;
        *most = rows > *most ? rows : *most;
    }
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (13);
    char error [256];
    platform_t *platform = platform_parse (s_platform, error, sizeof error);
    assert (platform);
    int64_t first [COUNT + 1];

    spawner_scatter_t *scatter = s_plan (platform, "auto", "balanced", first);
    ok (scatter && s_relays_right (scatter),
        "B and C get one relay each, the first of theirs in the send order, "
        "and their tasks go in one run");
    bool whole = first [0] == 0 && first [COUNT] == ROWS;
    for (size_t rank = 0; rank < COUNT; rank++)
        whole &= first [rank + 1] > first [rank];
    ok (whole, "every task gets rows, all of them in all");
    char *json = spawner_scatter_plan_json (scatter);
    ok (strstr (json, "\"relay\":\"auto\"") && strstr (json, "\"relays\":["),
        "the plan's event names the relays");
    free (json);
    spawner_scatter_destroy (&scatter);

    //  Equal blocks: the same bytes either way, one round trip less for
    //  each task behind a relay (B's two, C's one)
    scatter = s_plan (platform, "auto", "uniform", first);
    double relayed = spawner_scatter_predicted_transfer (scatter);
    spawner_scatter_destroy (&scatter);
    scatter = s_plan (platform, "off", "uniform", first);
    double direct = spawner_scatter_predicted_transfer (scatter);
    diag ("predicted data phase: %.4f s relayed, %.4f s straight", relayed,
          direct);
    ok (fabs (direct - relayed - 3 * 2 * 0.020) < 1e-6,
        "the model pays a relayed cluster's round trip once");
    bool none = true;
    for (size_t rank = 0; rank < COUNT; rank++)
        none &= spawner_scatter_relay_of (scatter, rank) == -1;
    ok (none, "scatter/relay = off relays nothing");
    spawner_scatter_destroy (&scatter);

    //  A root the model lacks (a typo): where the data is is unknown, so
    //  no cluster gets a relay, and the event says so
    scatter = s_plan_from (platform, "Z", "auto", "balanced", first);
    none = scatter && !spawner_scatter_root_known (scatter);
    for (size_t rank = 0; none && rank < COUNT; rank++)
        none &= spawner_scatter_relay_of (scatter, rank) == -1;
    ok (none, "a root the platform lacks is unknown, and relays nothing");
    json = scatter ? spawner_scatter_plan_json (scatter) : NULL;
    ok (json && strstr (json, "\"root\":\"Z\",\"root_known\":false"),
        "the plan's event says the root is unknown");
    free (json);
    spawner_scatter_destroy (&scatter);

    //  Sixty-four equal daemons, all in the root's cluster
    spawner_scatter_config_t many;
    zhash_t *params = zhash_new ();
    zhash_insert (params, "scatter/root", (void *) "A");
    char reason [256] = "";
    ok (spawner_scatter_config (params, &many, reason, sizeof reason) == 0
        && many.iterations < 0, "scatter/iterations is auto by default");
    jace_node_t *equal = (jace_node_t *) zmalloc (64 * sizeof (jace_node_t));
    for (size_t rank = 0; rank < 64; rank++) {
        snprintf (equal [rank].cluster, sizeof equal [rank].cluster, "A");
        equal [rank].power = 1;
    }
    spawner_scatter_load_t load = {
        .rows = 360000, .bytes_per_row = 96, .flops_per_row = 10
    };
    int64_t cut [65];
    scatter = spawner_scatter_new (&many, &load, equal, 64, platform, cut,
                                   reason, sizeof reason);
    int64_t least, most;
    s_spread (cut, 64, &least, &most);
    diag ("auto: rows %" PRId64 " to %" PRId64, least, most);
    ok (scatter && least * 10 >= most * 8,
        "auto: no daemon gets less than 0.8 of the largest share");
    spawner_scatter_destroy (&scatter);
    many.iterations = 1000;
    scatter = spawner_scatter_new (&many, &load, equal, 64, platform, cut,
                                   reason, sizeof reason);
    s_spread (cut, 64, &least, &most);
    diag ("1,000 iterations: rows %" PRId64 " to %" PRId64, least, most);
    ok (scatter && least * 10 < most, "1,000 iterations at the model's "
        "rates starve the late daemons (what auto prevents)");
    spawner_scatter_destroy (&scatter);
    free (equal);
    zhash_destroy (&params);

    params = zhash_new ();
    zhash_insert (params, "scatter/iterations", (void *) "many");
    ok (spawner_scatter_config (params, &many, reason, sizeof reason) == -1
        && strstr (reason, "scatter/iterations") && strstr (reason, "auto"),
        "scatter/iterations that is neither a count nor auto is refused");
    zhash_destroy (&params);

    params = zhash_new ();
    zhash_insert (params, "scatter/relay", (void *) "always");
    spawner_scatter_config_t config;
    ok (spawner_scatter_config (params, &config, reason, sizeof reason) == -1
        && streq (reason, "scatter/relay = 'always' is unknown (known: off, "
                  "auto)"), "an unknown scatter/relay is refused, naming the "
        "key and its values");
    zhash_destroy (&params);
    params = zhash_new ();
    ok (spawner_scatter_config (params, &config, reason, sizeof reason) == 0
        && config.relay, "relays are on by default");
    zhash_destroy (&params);
    platform_destroy (&platform);
    return tap_done ();
}
