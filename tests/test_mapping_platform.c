/*  =========================================================================
    test_mapping_platform - the platform file parser

    Good files load with every field and default as documented; each kind
    of bad file is rejected with a reason that names the line.
    =========================================================================
*/
#include "mapping.h"
#include "tap.h"

static const char *s_two_clusters =
    "#  comment line\n"
    "platform\n"
    "    name = \"two-clusters\"\n"
    "    backbone                      #  default link\n"
    "        latency_us = 5000\n"
    "        bandwidth_mbps = 100\n"
    "    cluster\n"
    "        name = \"A\"\n"
    "        nodes = 4\n"
    "        speeds = \"1 1 0.5 0.5\"\n"
    "        power = 2.0\n"
    "        latency_us = 50\n"
    "        bandwidth_mbps = 10000\n"
    "        supernodes = 2\n"
    "    cluster\n"
    "        name = 'B'\n"
    "        nodes = 3\n"
    "        speed = 0.25\n"
    "    cluster\n"
    "        name = C\n"
    "        nodes = 1\n"
    "    link\n"
    "        between = \"A B\"\n"
    "        latency_us = 2000\n"
    "        bandwidth_mbps = 1000\n";

static void
s_test_good (void)
{
    char error [256] = "";
    platform_t *platform = platform_parse (s_two_clusters, error,
                                           sizeof error);
    if (!ok (platform != NULL, "a valid platform parses"))
        diag ("%s", error);
    if (!platform)
        return;
    ok (streq (platform_name (platform), "two-clusters"), "name is read");
    is_int (platform_cluster_count (platform), 3, "three clusters");
    ok (streq (platform_cluster_name (platform, 1), "B"),
        "single-quoted name is read");
    ok (streq (platform_cluster_name (platform, 2), "C"),
        "bare name is read");
    is_int (platform_cluster_nodes (platform, 0), 4, "A has 4 nodes");
    is_int (platform_cluster_supernodes (platform, 0), 2,
            "A has 2 super-nodes");
    is_int (platform_cluster_supernodes (platform, 1), 1,
            "super-nodes default to 1");
    is_double (platform_node_speed (platform, 0, 2), 0.5, 0,
               "speeds overrides speed per node");
    is_double (platform_node_power (platform, 0, 3), 1.0, 1e-12,
               "node power is power times speed");
    is_double (platform_node_power (platform, 1, 2), 0.25, 1e-12,
               "power defaults to 1");
    is_double (platform_node_speed (platform, 2, 0), 1.0, 0,
               "speed defaults to 1");
    is_double (platform_latency_us (platform, 0, 0), 50, 0,
               "intra-cluster latency is read");
    is_double (platform_latency_us (platform, 1, 1), 50, 0,
               "intra-cluster latency defaults to 50 us");
    is_double (platform_bandwidth_mbps (platform, 2, 2), 1000, 0,
               "intra-cluster bandwidth defaults to 1000 Mb/s");
    is_double (platform_latency_us (platform, 1, 0), 2000, 0,
               "link overrides backbone, both directions");
    is_double (platform_bandwidth_mbps (platform, 0, 1), 1000, 0,
               "link bandwidth is read");
    is_double (platform_latency_us (platform, 0, 2), 5000, 0,
               "other pairs use the backbone");
    is_double (platform_bandwidth_mbps (platform, 2, 1), 100, 0,
               "backbone bandwidth is read");
    is_int (platform_node_count (platform), 8, "8 nodes in all");
    is_int (platform_node_index (platform, 1, 2), 6,
            "global index runs over clusters");
    is_int (platform_node_cluster (platform, 7), 2,
            "global index maps back to its cluster");
    is_int (platform_cluster_index (platform, "B"), 1, "cluster found by name");
    is_int (platform_cluster_index (platform, "Z"), -1,
            "unknown cluster is -1");
    ok (!platform_backbone_is_shared (platform)
        && platform_backbone_transfers (platform) == 0
        && platform_uplink_mbps (platform, 0) == 0
        && shared_links_count (platform) == 0,
        "by default no link is shared: each flow has its own, as before");
    platform_destroy (&platform);
    ok (platform == NULL, "destroy nullifies the reference");
    platform_destroy (&platform);
}

typedef struct {
    const char *text;           //  A bad platform file
    const char *reason;         //  Substring the error must contain
} bad_case_t;

static void
s_test_bad (void)
{
    const char *head = "platform\n    name = p\n";
    bad_case_t cases [] = {
        { "platform\n    cluster\n        name = A\n        nodes = 1\n",
          "line 1: platform has no name" },
        { "    cluster\n        nodes = 1\n", "line 3: cluster has no name" },
        { "    cluster\n        name = A\n        nodes = 0\n",
          "line 5: nodes must be a whole number >= 1" },
        { "    cluster\n        name = A\n", "cluster A has no nodes" },
        { "    cluster\n        name = A\n        nodez = 4\n",
          "line 5: unknown item 'nodez' in cluster (did you mean nodes?)" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        supernodes = 0\n    cluster\n        name = B\n"
          "        nodes = 2\n        supernodes = 0\n",
          "line 3: no cluster has a super-node" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        speed = 1.5\n", "line 6: speed 1.5 is out of [0.001, 1]" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        speed = 0\n", "out of [0.001, 1]" },
        //  jace-daemon takes no slower speed: the grid could not start
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        speed = 0.0001\n", "line 6: speed 0.0001 is out of [0.001, 1]" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        power = 1e-300\n", "line 6: power must be in [1e-09, 1e+06]" },
        { "    cluster\n        name = A\n        nodes = 3\n"
          "        speeds = \"1 0.5\"\n", "speeds has 2 values for 3 nodes" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        speeds = \"1 x\"\n", "speeds holds a non-number" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "    link\n        between = \"A Q\"\n",
          "line 7: link names unknown cluster 'Q'" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = A\n        nodes = 1\n",
          "line 6: duplicate cluster name 'A'" },
        { "    cluster\n        name = A\n        nodes = four\n",
          "line 5: nodes must be a whole number" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        latency_us = 5ms\n", "latency_us is not a number" },
        { "    backbone\n        bandwidth_mbps = 0\n    cluster\n"
          "        name = A\n        nodes = 2\n",
          "line 4: bandwidth_mbps must be in [0.001, 1e+09]" },
        { "", "platform has no cluster" },
        { "   cluster\n", "line 3: indentation must be a multiple of 4" },
        { "    cluster\n        name = \"A\n", "unterminated quoted value" },
        { "    clusters\n", "unknown item 'clusters'" },
        { "    backbone\n        shared = 2\n",
          "line 4: shared must be 0 or 1" },
        { "    backbone\n        transfers = 0\n",
          "line 4: transfers must be a whole number >= 1" },
        { "    backbone\n        shared = 0\n        transfers = 2\n",
          "line 5: transfers needs a shared backbone" },
        { "    backbone\n        transfers = 5000\n",
          "transfers must be at most 4096" },
        { "    backbone\n        transfer = 2\n",
          "line 4: unknown item 'transfer' in backbone" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        uplink_mbps = 0\n",
          "line 6: uplink_mbps must be in [0.001, 1e+09]" },
        //  Bounds: beyond them the emulator and hd overflowed, and
        //  jace-map ran out of memory
        { "    cluster\n        name = A\n        nodes = 100000000\n",
          "line 5: more than 100000 nodes in all" },
        { "    cluster\n        name = A\n        nodes = 60000\n"
          "    cluster\n        name = B\n        nodes = 60000\n",
          "line 8: more than 100000 nodes in all" },
        { "    backbone\n        latency_us = 1e30\n",
          "line 4: latency_us must be in [0, 1e+08]" },
        { "    backbone\n        bandwidth_mbps = 1e-30\n",
          "line 4: bandwidth_mbps must be in [0.001, 1e+09]" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        power = 1e308\n", "line 6: power must be in [1e-09, 1e+06]" },
        //  Read once, or refused: the first of two was read, silently
        { "    cluster\n        name = A\n        nodes = 4\n"
          "        nodes = 2\n",
          "line 6: 'nodes' is given twice in cluster (first on line 5)" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        speed = 0.5\n        speeds = \"1 1\"\n",
          "line 7: speed and speeds both given" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = B\n        nodes = 2\n"
          "    link\n        between = \"A B\"\n"
          "    link\n        between = \"B A\"\n",
          "line 12: a second link between B and A" },
        { "    cluster\n        name = \"my cluster\"\n        nodes = 2\n",
          "line 4: cluster name 'my cluster' cannot name daemons" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        uplink_mbps = fast\n", "uplink_mbps is not a number" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "        uplink = 10\n", "line 6: unknown item 'uplink' in cluster" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = B\n        nodes = 2\n"
          "    link\n        between = \"A B\"\n        shared = 1\n",
          "line 11: unknown item 'shared' in link" },
        { "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = B\n        nodes = 2\n"
          "    link\n        between = \"A B\"\n        transfers = 2\n",
          "line 11: transfers needs a shared backbone (shared = 1 in backbone)" },
        { "    backbone\n        shared = 1\n"
          "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = B\n        nodes = 2\n"
          "    link\n        between = \"A B\"\n        transfers = 0\n",
          "line 13: transfers must be a whole number >= 1" },
        { "    backbone\n        shared = 1\n"
          "    cluster\n        name = A\n        nodes = 2\n"
          "    cluster\n        name = B\n        nodes = 2\n"
          "    link\n        between = \"A B\"\n        transfers = 5000\n",
          "line 13: transfers must be at most 4096" },
    };
    size_t count = sizeof cases / sizeof cases [0];
    for (size_t index = 0; index < count; index++) {
        char text [1024];
        //  The first case carries its own header
        snprintf (text, sizeof text, "%s%s", index ? head : "",
                  cases [index].text);
        char error [256] = "";
        platform_t *platform = platform_parse (text, error, sizeof error);
        char name [300];
        snprintf (name, sizeof name, "rejected with '%s'",
                  cases [index].reason);
        if (!ok (!platform && strstr (error, cases [index].reason), name))
            diag ("error was '%s'", error);
        platform_destroy (&platform);
    }
    //  Saved by an editor with a byte order mark: said as such, not as
    //  "expected a name"
    char error [256] = "";
    platform_t *platform = platform_parse ("\xef\xbb\xbfplatform\n"
        "    cluster\n        name = A\n        nodes = 2\n", error,
        sizeof error);
    if (!ok (!platform && strstr (error, "line 1: the file begins with a "
                                  "UTF-8 byte order mark: remove it"),
             "a byte order mark is said to be one"))
        diag ("error was '%s'", error);
    platform_destroy (&platform);
}

static void
s_test_files (void)
{
    const char *srcdir = getenv ("JACE_SRCDIR");
    char path [1024];
    snprintf (path, sizeof path, "%s/examples/platforms/two-clusters.platform",
              srcdir ? srcdir : ".");
    char error [1200] = "";
    platform_t *platform = platform_load (path, error, sizeof error);
    if (!ok (platform != NULL, "example two-clusters.platform loads"))
        diag ("%s", error);
    if (platform)
        is_int (platform_node_count (platform), 10, "it has 10 nodes");
    else
        ok (false, "it has 10 nodes");
    platform_destroy (&platform);

    snprintf (path, sizeof path, "%s/examples/platforms/local8.platform",
              srcdir ? srcdir : ".");
    platform = platform_load (path, error, sizeof error);
    ok (platform && platform_node_count (platform) == 8
        && platform_cluster_count (platform) == 2,
        "example local8.platform is 2 clusters of 4");
    platform_destroy (&platform);

    snprintf (path, sizeof path, "%s/tests/data/planning/bad-speed.platform",
              srcdir ? srcdir : ".");
    platform = platform_load (path, error, sizeof error);
    char want [1100];
    snprintf (want, sizeof want, "%s:8: speed", path);
    if (!ok (!platform && strstr (error, want) == error,
             "a bad file is reported as FILE:LINE: reason"))
        diag ("error was '%s'", error);
    platform = platform_load ("/nonexistent/x.platform", error, sizeof error);
    ok (!platform && strstr (error, "/nonexistent/x.platform: ") == error,
        "a missing file is reported with its path");
    //  A device never ends: it was read until memory ran out
    platform = platform_load ("/dev/zero", error, sizeof error);
    ok (!platform && streq (error, "/dev/zero: not a regular file"),
        "a device is refused, not read");
    char big [] = "/tmp/test_mapping_platform.XXXXXX";
    int fd = mkstemp (big);
    assert (fd >= 0);
    assert (ftruncate (fd, ZPL_FILE_MAX + 1) == 0);
    close (fd);
    platform = platform_load (big, error, sizeof error);
    ok (!platform && strstr (error, "larger than 16777216 bytes"),
        "a file over ZPL_FILE_MAX is refused");
    unlink (big);
    char nul [] = "/tmp/test_mapping_platform.XXXXXX";
    fd = mkstemp (nul);
    assert (fd >= 0 && write (fd, "platform\n\0", 10) == 10);
    close (fd);
    platform = platform_load (nul, error, sizeof error);
    ok (!platform && strstr (error, "holds a NUL byte"),
        "a file with a NUL byte is refused");
    unlink (nul);
}

//  Three daemons per machine: every node becomes three of its cluster,
//  speed and power, adjacent; links are unchanged.
static void
s_test_slots (void)
{
    platform_t *platform = platform_parse (s_two_clusters, NULL, 0);
    platform_t *slotted = platform_with_slots (platform, 3);
    is_int (platform_node_count (slotted), 3 * 8, "3 slots: 24 nodes");
    is_int (platform_cluster_nodes (slotted, 0), 12, "A has 12 slots");
    bool same = true;
    for (size_t cluster = 0; cluster < 3; cluster++)
        for (size_t node = 0; node < platform_cluster_nodes (slotted, cluster);
             node++) {
            size_t index = platform_node_index (slotted, cluster, node);
            same = same
                && platform_node_cluster (slotted, index) == cluster
                && platform_node_power (slotted, cluster, node)
                   == platform_node_power (platform, cluster, node / 3)
                && platform_node_speed (slotted, cluster, node)
                   == platform_node_speed (platform, cluster, node / 3);
        }
    ok (same, "slot j of a cluster has the cluster, speed and power of node j / 3");
    ok (platform_latency_us (slotted, 0, 1) == 2000
        && platform_bandwidth_mbps (slotted, 1, 2) == 100
        && platform_latency_us (slotted, 1, 1)
           == platform_latency_us (platform, 1, 1),
        "links are kept");
    platform_destroy (&slotted);
    platform_destroy (&platform);
}

//  A platform built from live powers and links is the parsed one: same
//  node powers, same heterogeneity, and MAHEVE maps a job the same way.
static void
s_test_live (void)
{
    platform_t *parsed = platform_parse (s_two_clusters, NULL, 0);
    assert (parsed);
    size_t clusters = platform_cluster_count (parsed);
    const char *names [3];
    size_t nodes [3];
    double power [16], latency [9], bandwidth [9];
    for (size_t c = 0; c < clusters; c++) {
        names [c] = platform_cluster_name (parsed, c);
        nodes [c] = platform_cluster_nodes (parsed, c);
        for (size_t i = 0; i < nodes [c]; i++)
            power [platform_node_index (parsed, c, i)] =
                platform_node_power (parsed, c, i);
        for (size_t d = 0; d < clusters; d++) {
            latency [c * clusters + d] = platform_latency_us (parsed, c, d);
            bandwidth [c * clusters + d] =
                platform_bandwidth_mbps (parsed, c, d);
        }
    }
    char error [256] = "";
    platform_t *live = platform_new_live ("live", clusters, names, nodes,
                                          power, latency, bandwidth, error,
                                          sizeof error);
    if (!ok (live != NULL, "a live platform is built from a listing"))
        diag ("%s", error);
    if (!live) {
        platform_destroy (&parsed);
        return;
    }
    bool same = platform_node_count (live) == platform_node_count (parsed);
    for (size_t c = 0; c < clusters; c++)
        for (size_t i = 0; i < nodes [c]; i++)
            same = same && fabs (platform_node_power (live, c, i)
                                 - platform_node_power (parsed, c, i)) < 1e-12
                        && platform_node_speed (live, c, i) <= 1;
    ok (same, "each node has its own power back, speeds within (0, 1]");
    ok (platform_latency_us (live, 0, 1) == platform_latency_us (parsed, 0, 1)
        && platform_bandwidth_mbps (live, 2, 0)
           == platform_bandwidth_mbps (parsed, 2, 0), "links are kept");
    grid_t *grid_live = grid_new (live), *grid_parsed = grid_new (parsed);
    is_double (grid_heterogeneity (grid_live),
               grid_heterogeneity (grid_parsed), 1e-12, "same hd");
    tig_t *tig = tig_new_banded (400, 30, 5);
    size_t placed_live [5], placed_parsed [5];
    int rc = maheve_map (grid_live, tig, placed_live)
           | maheve_map (grid_parsed, tig, placed_parsed);
    ok (rc == 0 && memcmp (placed_live, placed_parsed,
                           sizeof placed_live) == 0,
        "MAHEVE maps a job on it as on the parsed platform");
    tig_destroy (&tig);
    grid_destroy (&grid_live);
    grid_destroy (&grid_parsed);
    platform_destroy (&live);

    //  Bad listings are refused with a reason.
    const char *twice [3] = { "A", "B", "A" };
    ok (!platform_new_live ("x", 3, twice, nodes, power, latency, bandwidth,
                            error, sizeof error)
        && strstr (error, "given twice"), "a repeated cluster is refused");
    double zero [16];
    memcpy (zero, power, sizeof zero);
    zero [1] = 0;
    ok (!platform_new_live ("x", 3, names, nodes, zero, latency, bandwidth,
                            error, sizeof error)
        && strstr (error, "power"), "a node without power is refused");
    size_t empty [3] = { nodes [0], 0, nodes [2] };
    ok (!platform_new_live ("x", 3, names, empty, power, latency, bandwidth,
                            error, sizeof error)
        && strstr (error, "no node"), "an empty cluster is refused");
    platform_destroy (&parsed);
}

//  Uplinks, a KPBS backbone and a link, numbered as shared_links.h says
static void
s_test_shared (void)
{
    const char *text =
        "platform\n    name = shared\n"
        "    backbone\n        bandwidth_mbps = 100\n        transfers = 2\n"
        "    cluster\n        name = A\n        nodes = 2\n"
        "        uplink_mbps = 1000\n"
        "    cluster\n        name = B\n        nodes = 1\n"
        "    cluster\n        name = C\n        nodes = 1\n"
        "    link\n        between = \"B A\"\n        bandwidth_mbps = 500\n"
        "        transfers = 3\n";
    char error [256] = "";
    platform_t *platform = platform_parse (text, error, sizeof error);
    if (!ok (platform && platform_backbone_is_shared (platform)
             && platform_backbone_transfers (platform) == 2
             && platform_uplink_mbps (platform, 0) == 1000
             && platform_uplink_mbps (platform, 1) == 0,
             "transfers = 2 makes a shared KPBS backbone; uplinks are read"))
        diag ("%s", error);
    if (!platform)
        return;
    //  A out, A in, the backbone, the link A-B
    is_int (shared_links_count (platform), 4,
            "a shared uplink counts both ways, plus backbone and link");
    double mbps [4];
    size_t transfers [4];
    for (size_t index = 0; index < 4; index++)
        shared_links_resource (platform, index, &mbps [index],
                               &transfers [index]);
    ok (mbps [0] == 1000 && transfers [0] == 0 && mbps [1] == 1000
        && mbps [2] == 100 && transfers [2] == 2
        && mbps [3] == 500 && transfers [3] == 3,
        "each resource has its bandwidth and transfer limit (the link's k "
        "its own)");
    ok (platform_link_transfers (platform, 0, 1) == 3
        && platform_link_transfers (platform, 1, 0) == 3
        && platform_link_transfers (platform, 0, 2) == 0,
        "a link's k is read both ways; a pair on the backbone has none");
    size_t path [SHARED_LINKS_PATH_MAX];
    size_t hops = shared_links_path (platform, 0, 2, path);
    ok (hops == 2 && path [0] == 0 && path [1] == 2,
        "A to C crosses A's uplink out and the backbone");
    hops = shared_links_path (platform, 2, 0, path);
    ok (hops == 2 && path [0] == 1 && path [1] == 2,
        "C to A crosses the backbone and A's uplink in");
    hops = shared_links_path (platform, 1, 0, path);
    ok (hops == 2 && path [0] == 1 && path [1] == 3,
        "B to A crosses their own link, not the backbone");
    ok (shared_links_path (platform, 0, 0, path) == 0,
        "traffic inside a cluster crosses no shared resource");
    platform_t *slotted = platform_with_slots (platform, 2);
    ok (shared_links_count (slotted) == 4
        && platform_has_own_link (slotted, 0, 1)
        && platform_link_transfers (slotted, 1, 0) == 3,
        "slots keep the shared links and their k");
    platform_destroy (&slotted);
    platform_destroy (&platform);
}

int
main (void)
{
    tap_plan (98);
    s_test_good ();
    s_test_shared ();
    s_test_bad ();
    s_test_files ();
    s_test_slots ();
    s_test_live ();
    return tap_done ();
}
