/*  =========================================================================
    spawner_stall - whether a link explains a job that stopped converging
    =========================================================================
*/
#include "spawner_stall.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int
s_compare_doubles (const void *first, const void *second)
{
    double a = *(const double *) first, b = *(const double *) second;
    return a < b ? -1 : a > b ? 1 : 0;
}

//  Median computing time of an iteration, in seconds, of the tasks on
//  either cluster that reported one, or 0.
static double
s_iteration_seconds (size_t tasks, const size_t *cluster, const double *usecs,
                     size_t first, size_t second)
{
    double *periods = (double *) malloc ((tasks + 1) * sizeof (double));
    assert (periods);
    size_t count = 0;
    for (size_t task = 0; task < tasks; task++)
        if ((cluster [task] == first || cluster [task] == second)
        &&  usecs [task] > 0)
            periods [count++] = usecs [task] * 1e-6;
    qsort (periods, count, sizeof (double), s_compare_doubles);
    double median = count ? periods [count / 2] : 0;
    free (periods);
    return median;
}

//  The values a round of the job puts across each pair of clusters,
//  lower index first (clusters x clusters, to free): every edge of the
//  task graph once, its amount both directions' needs.
static double *
s_values_across (tig_t *tig, const size_t *cluster, size_t clusters)
{
    double *values = (double *) calloc (clusters * clusters + 1,
                                        sizeof (double));
    assert (values);
    for (size_t task = 0; task < tig_count (tig); task++)
        for (size_t index = 0; index < tig_degree (tig, task); index++) {
            size_t other = tig_neighbour (tig, task, index);
            size_t a = cluster [task], b = cluster [other];
            if (other < task || a >= clusters || b >= clusters || a == b)
                continue;
            values [(a < b ? a : b) * clusters + (a < b ? b : a)]
                += tig_edge_amount (tig, task, index);
        }
    return values;
}

bool
spawner_stall_slow_link (platform_t *platform, tig_t *tig,
                         const size_t *cluster, const double *usecs,
                         char *why, size_t why_size)
{
    assert (platform && tig && cluster && usecs && why && why_size > 0);
    *why = 0;
    size_t clusters = platform_cluster_count (platform);
    double *values = s_values_across (tig, cluster, clusters);
    //  The pair whose values arrive the most iterations old
    double worst = 0, worst_link = 0, worst_period = 0;
    size_t worst_a = 0, worst_b = 0;
    for (size_t a = 0; a < clusters; a++)
        for (size_t b = a + 1; b < clusters; b++) {
            double crossing = values [a * clusters + b];
            double bandwidth = platform_bandwidth_mbps (platform, a, b);
            if (crossing <= 0 || bandwidth <= 0)
                continue;
            double period = s_iteration_seconds (tig_count (tig), cluster,
                                                 usecs, a, b);
            double link = 1e-6 * platform_latency_us (platform, a, b)
                        + 64 * crossing / (bandwidth * 1e6);
            if (period > 0 && link / period > worst) {
                worst = link / period;
                worst_link = link;
                worst_period = period;
                worst_a = a;
                worst_b = b;
            }
        }
    bool slow = worst >= SPAWNER_STALL_LINK_ITERATIONS;
    if (slow)
        snprintf (why, why_size, "the link between clusters %s and %s is "
                  "the likely cause: a round of the values the tasks "
                  "exchange across it (%.0f values, both ways) takes %.3g s "
                  "at its %.3g Mb/s and %.3g ms, and they compute an "
                  "iteration in %.3g ms, so what crosses it is about %.0f "
                  "iterations old; place the job on fewer clusters "
                  "(job/mapping = maheve-locality weighs the links) or on "
                  "faster links",
                  platform_cluster_name (platform, worst_a),
                  platform_cluster_name (platform, worst_b),
                  values [worst_a * clusters + worst_b], worst_link,
                  platform_bandwidth_mbps (platform, worst_a, worst_b),
                  1e-3 * platform_latency_us (platform, worst_a, worst_b),
                  worst_period * 1e3, worst);
    free (values);
    return slow;
}
