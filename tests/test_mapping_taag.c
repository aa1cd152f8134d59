/*  =========================================================================
    test_mapping_taag - TAAG latency levels, clusters, partitions, mapping
    and the mapping file

    GROUPS(16, 4) gives the 11 partitions of the report's Figure 2; a
    ten-host topology in the spirit of Figure 2a checks levels, latency
    clusters, the pruning and the chosen mapping; the GRAPH schema of the
    report's n-body test maps galaxies 1 and 3 on alex and 2 on altix1.
    =========================================================================
*/
#include "mapping.h"
#include "tap.h"
#include <unistd.h>

//  Ten hosts, CPUs as in Figure 2a: H1-H4 one site, H5-H8 another (the
//  two a few ms apart), H9-H10 a third 11.2 ms away
static taag_topology_t *
s_figure2_topology (void)
{
    taag_topology_t *topology = taag_topology_new (10);
    size_t cpus [] = { 4, 2, 2, 2, 2, 2, 2, 2, 4, 4 };
    for (size_t host = 0; host < 10; host++) {
        taag_topology_set_cpus (topology, host, cpus [host]);
        for (size_t other = 0; other < host; other++) {
            size_t site = host < 4 ? 0 : host < 8 ? 1 : 2;
            size_t other_site = other < 4 ? 0 : other < 8 ? 1 : 2;
            double latency = site == other_site ? 0.11 + 0.01 * (host % 3)
                           : site == 2 || other_site == 2 ? 11.2
                           : 2.5 + 0.1 * (host % 2);
            taag_topology_set_latency (topology, host, other, latency);
        }
    }
    return topology;
}

static void
s_test_partitions (void)
{
    taag_schema_t *schema = taag_schema_parse ("GROUPS(16, 4)", NULL, 0);
    ok (schema != NULL, "GROUPS(16, 4) parses");
    taag_partitions_t *partitions = taag_partitions (schema, NULL, 0);
    is_int (taag_partitions_count (partitions), 11,
            "GROUPS(16, 4) has 11 partitions (Figure 2b)");
    const char *want [] = {
        "16", "12 4", "11 5", "10 6", "9 7", "8 8", "8 4 4", "7 5 4",
        "6 6 4", "6 5 5", "4 4 4 4"
    };
    //  The figure lists them by number of groups, then by first size
    bool all = true;
    for (size_t wanted = 0; wanted < 11; wanted++) {
        bool found = false;
        for (size_t index = 0; index < 11 && !found; index++) {
            char text [64] = "";
            for (size_t group = 0;
                 group < taag_partitions_groups (partitions, index); group++)
                snprintf (text + strlen (text), sizeof text - strlen (text),
                          group ? " %zu" : "%zu",
                          taag_partitions_size (partitions, index, group));
            found = streq (text, want [wanted]);
        }
        all = all && found;
    }
    ok (all, "they are the 11 partitions listed in Figure 2b");
    taag_partitions_destroy (&partitions);
    taag_schema_destroy (&schema);
    schema = taag_schema_parse ("GROUPS{16,4,3}", NULL, 0);
    partitions = taag_partitions (schema, NULL, 0);
    is_int (taag_partitions_count (partitions), 5,
            "GROUPS{16,4,3} keeps the 5 partitions of 3 or 4 groups");
    taag_partitions_destroy (&partitions);
    taag_schema_destroy (&schema);
    char error [300];
    ok (!taag_schema_parse ("GROUPS{4,8}", error, sizeof error)
        && strstr (error, "bad schema"), "a schema that cannot be met is "
        "refused");
    ok (!taag_schema_parse ("STAR{4,2}", error, sizeof error),
        "an unknown schema is refused");
    ok (!taag_schema_parse ("GRAPH{2,0,[3,3],[0-5]}", error, sizeof error),
        "a graph link to an unknown group is refused");
}

static void
s_test_clusters (void)
{
    taag_topology_t *topology = s_figure2_topology ();
    is_int (taag_latency_level (topology, 0, 0), 0, "a host with itself is "
            "level 0");
    is_int (taag_latency_level (topology, 0, 1), 1, "0.1 ms links are "
            "level 1");
    is_int (taag_latency_level (topology, 0, 5), 2, "2.5 ms links are "
            "level 2");
    is_int (taag_latency_level (topology, 0, 9), 3, "11.2 ms links are "
            "level 3");
    size_t count;
    taag_cluster_t *clusters = taag_latency_clusters (topology, 1, &count);
    is_int (count, 15, "10 hosts, 3 sites, 2 wider clusters");
    ok (clusters [0].level == 0 && clusters [0].capacity == 4,
        "the list starts with the biggest hosts");
    ok (clusters [10].level == 1 && clusters [10].capacity == 10
        && clusters [10].count == 4 && clusters [10].hosts [0] == 0,
        "then the level-1 site H1-H4 of capacity 10");
    ok (clusters [13].level == 2 && clusters [13].capacity == 18,
        "then H1-H8 at level 2");
    ok (clusters [14].level == 3 && clusters [14].capacity == 26
        && clusters [14].count == 10, "and all hosts at level 3");
    taag_schema_t *schema = taag_schema_parse ("GROUPS(16, 4)", NULL, 0);
    taag_partitions_t *partitions = taag_partitions (schema, clusters,
                                                     count);
    is_int (taag_partitions_count (partitions), 8, "pruning keeps the 8 "
            "partitions with one group or a group the size of a cluster");
    taag_partitions_destroy (&partitions);
    taag_clusters_destroy (&clusters, count);
    size_t doubled;
    clusters = taag_latency_clusters (topology, 2, &doubled);
    is_int (clusters [count - 1].capacity, 52, "the coefficient multiplies "
            "capacities");
    taag_clusters_destroy (&clusters, doubled);
    taag_schema_destroy (&schema);
    taag_topology_destroy (&topology);
}

static void
s_test_mapping (void)
{
    taag_topology_t *topology = s_figure2_topology ();
    taag_schema_t *schema = taag_schema_parse ("GROUPS(16, 4)", NULL, 0);
    char error [300];
    taag_mapping_t *mapping = taag_map (topology, schema, 1, error,
                                        sizeof error);
    ok (mapping != NULL, "GROUPS(16, 4) maps on the ten hosts");
    size_t level;
    double max_ms, average_ms;
    taag_mapping_cost (mapping, &level, &max_ms, &average_ms);
    is_int (level, 1, "every group stays inside one site (level 1)");
    is_int (taag_mapping_group_count (mapping), 2, "two groups avoid the "
            "11.2 ms site");
    ok (max_ms < 3, "the groups are linked over the 2.5 ms link");
    bool first_site = true;
    for (size_t rank = 0; rank < 10; rank++) {
        const char *host = taag_mapping_host (mapping, rank);
        first_site = first_site && (streq (host, "H1") || streq (host, "H2")
                                    || streq (host, "H3")
                                    || streq (host, "H4"));
    }
    ok (first_site, "the group of 10 fills H1-H4");
    is_int (taag_mapping_group (mapping, 12), 1, "rank 12 is in group 1");
    is_int (taag_mapping_local_manager (mapping, 5), 0, "rank 5's manager is "
            "rank 0");
    size_t neighbours [32];
    is_int (taag_mapping_neighbours (mapping, 0, neighbours, 32), 10,
            "a manager's neighbours: 9 members and the other manager");
    is_int (taag_mapping_neighbours (mapping, 3, neighbours, 32), 9,
            "a worker's neighbours: its group");
    char path [] = "/tmp/test_mapping_taag_XXXXXX";
    int handle = mkstemp (path);
    close (handle);
    ok (taag_mapping_save (mapping, path) == 0, "the mapping file is "
        "written");
    taag_mapping_t *loaded = taag_mapping_load (path, error, sizeof error);
    if (!ok (loaded && taag_mapping_process_count (loaded) == 16
             && taag_mapping_group (loaded, 12) == 1
             && taag_mapping_local_manager (loaded, 12) == 10
             && streq (taag_mapping_host (loaded, 15),
                       taag_mapping_host (mapping, 15))
             && taag_mapping_neighbours (loaded, 0, neighbours, 32) == 10,
             "the mapping file reads back with the same answers"))
        diag ("%s", error);
    taag_mapping_destroy (&loaded);
    FILE *file = fopen (path, "w");
    fprintf (file, "mapping\n    schema = x\n    processes = 2\n"
             "    process\n        rank = 0\n        role = \"boss\"\n"
             "        host = H1\n");
    fclose (file);
    loaded = taag_mapping_load (path, error, sizeof error);
    ok (!loaded && strstr (error, ":4: bad role"), "a bad mapping file is "
        "reported with its line");
    unlink (path);
    taag_mapping_destroy (&mapping);
    taag_schema_destroy (&schema);

    schema = taag_schema_parse ("TREE{12, 4, 1}", NULL, 0);
    mapping = taag_map (topology, schema, 1, error, sizeof error);
    ok (mapping && taag_mapping_role (mapping, 0) == TAAG_GLOBAL_MANAGER
        && taag_mapping_role (mapping, 1) == TAAG_LOCAL_MANAGER
        && taag_mapping_process_count (mapping)
           == 13 + taag_mapping_group_count (mapping),
        "TREE: a global manager and a local manager per group");
    ok (mapping && taag_mapping_neighbours (mapping, 0, neighbours, 32)
                   == taag_mapping_group_count (mapping),
        "TREE: the global manager talks to every local manager");
    taag_mapping_destroy (&mapping);
    taag_schema_destroy (&schema);
    schema = taag_schema_parse ("RING{16, 4, 3}", NULL, 0);
    mapping = taag_map (topology, schema, 1, error, sizeof error);
    ok (mapping && taag_mapping_group_count (mapping) >= 3,
        "RING: at least three groups");
    taag_mapping_destroy (&mapping);
    taag_schema_destroy (&schema);
    schema = taag_schema_parse ("GROUPS{40, 4, 1}", NULL, 0);
    mapping = taag_map (topology, schema, 1, error, sizeof error);
    ok (!mapping && strstr (error, "no partition"), "40 processes do not "
        "fit 26 CPUs");
    taag_schema_destroy (&schema);
    taag_topology_destroy (&topology);
}

//  The report's n-body test: alex (12 CPUs), altix1 (6 CPUs)
static void
s_test_graph (void)
{
    taag_topology_t *topology = taag_topology_new (2);
    taag_topology_set_cpus (topology, 0, 12);
    taag_topology_set_cpus (topology, 1, 6);
    taag_topology_set_latency (topology, 0, 1, 4.0);
    taag_schema_t *schema = taag_schema_parse ("GRAPH{3, 0, [3, 6, 9], []}",
                                               NULL, 0);
    char error [200];
    taag_mapping_t *mapping = taag_map (topology, schema, 1, error,
                                        sizeof error);
    ok (mapping && streq (taag_mapping_host (mapping, 0), "H1")
        && streq (taag_mapping_host (mapping, 3), "H2")
        && streq (taag_mapping_host (mapping, 9), "H1"),
        "GRAPH{3,0,[3,6,9],[]}: galaxies 1 and 3 on alex, 2 on altix1");
    size_t level;
    taag_mapping_cost (mapping, &level, NULL, NULL);
    is_int (level, 0, "no galaxy crosses the WAN");
    taag_mapping_destroy (&mapping);
    taag_schema_destroy (&schema);
    taag_topology_destroy (&topology);
}

int
main (void)
{
    tap_plan (7 + 11 + 16 + 2);
    s_test_partitions ();
    s_test_clusters ();
    s_test_mapping ();
    s_test_graph ();
    return tap_done ();
}
