/*  =========================================================================
    test_spawner_stall - whether a link explains a job that stopped
    converging

    A chain of 4 tasks, two on each of two clusters, whose tasks compute
    an iteration in 2 ms: the middle edge crosses the link.
    Checked: over a 0.1 Mb/s link the link is named, with its clusters,
    its figures and how old the values crossing it are; over 1000 Mb/s,
    with every task in one cluster, or before any task reported its
    iteration time, nothing is named (the application's advice stands).
    =========================================================================
*/
#include "spawner_stall.h"
#include "tap.h"

#include <stdint.h>
#include <stdlib.h>

static platform_t *
s_platform (const char *bandwidth_mbps)
{
    char text [512];
    snprintf (text, sizeof text,
              "platform\n"
              "    name = \"two-sites\"\n"
              "    backbone\n"
              "        latency_us = 2000\n"
              "        bandwidth_mbps = %s\n"
              "    cluster\n"
              "        name = \"near\"\n"
              "        nodes = 2\n"
              "    cluster\n"
              "        name = \"far\"\n"
              "        nodes = 2\n", bandwidth_mbps);
    char error [256] = "";
    platform_t *platform = platform_parse (text, error, sizeof error);
    if (!platform)
        diag ("platform: %s", error);
    return platform;
}

int
main (void)
{
    tap_plan (7);
    //  Built as the spawner builds it, a need at a time: each task needs
    //  2,000 values of each neighbour, so 4,000 cross a cut a round
    tig_t *tig = tig_new (4);
    for (size_t task = 0; task + 1 < 4; task++) {
        tig_add_edge (tig, task, task + 1, 2000);
        tig_add_edge (tig, task + 1, task, 2000);
    }
    size_t split [] = { 0, 0, 1, 1 };
    size_t together [] = { 0, 0, 0, 0 };
    double usecs [] = { 2000, 2000, 2000, 2000 };
    double unreported [] = { 0, 0, 0, 0 };
    char why [640];

    platform_t *slow = s_platform ("0.1");
    bool named = slow && spawner_stall_slow_link (slow, tig, split, usecs,
                                                  why, sizeof why);
    diag ("%s", why);
    ok (named, "over a 0.1 Mb/s link the link is named");
    ok (strstr (why, "between clusters near and far")
        && strstr (why, "4000 values, both ways")
        && strstr (why, "at its 0.1 Mb/s and 2 ms"),
        "with its clusters, the values crossing it and its figures");
    //  64 x 4000 bits at 0.1 Mb/s, plus 2 ms: 2.562 s, 1281 iterations
    ok (strstr (why, "takes 2.56 s") && strstr (why, "about 1281 "
        "iterations old"), "and how old the values crossing it are");
    ok (slow && !spawner_stall_slow_link (slow, tig, together, usecs, why,
                                          sizeof why) && !*why,
        "with every task in one cluster, nothing is named");
    ok (slow && !spawner_stall_slow_link (slow, tig, split, unreported, why,
                                          sizeof why),
        "nor before any task reported its iteration time");
    platform_destroy (&slow);

    platform_t *fast = s_platform ("1000");
    ok (fast && !spawner_stall_slow_link (fast, tig, split, usecs, why,
                                          sizeof why),
        "over 1000 Mb/s the link is not named (values 1.1 iterations "
        "old)");
    platform_destroy (&fast);

    //  A task whose cluster is not known counts in no pair
    platform_t *again = s_platform ("0.1");
    size_t unknown [] = { 0, 0, SIZE_MAX, SIZE_MAX };
    ok (again && !spawner_stall_slow_link (again, tig, unknown, usecs, why,
                                           sizeof why),
        "tasks of unknown clusters are left out");
    platform_destroy (&again);
    tig_destroy (&tig);
    return tap_done ();
}
