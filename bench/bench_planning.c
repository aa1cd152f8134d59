/*  =========================================================================
    bench_planning - timings of the planning library (issue 5)

    Scatter of 817,101 items over the 16 processors of RR-2003-17 Table 1
    (exact Algorithm 2 and the LP heuristic), MAHEVE on large platforms,
    TAAG's Groups schemas on virtual topologies, GGP/OGGP on 100 x 100
    traffic matrices (uniform and sparse).  Prints one line per figure;
    see BENCHMARKS.md.
    =========================================================================
*/
#include "mapping.h"
#include "collectives.h"
#include <time.h>

static double
s_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

static void
s_bench_scatter (void)
{
    double mu [] = { 0.009288, 0.009365, 0.004629, 0.004885, 0.003976,
                     0.003976, 0.016156, 0.016156 };
    double lambda [] = { 0, 1.12e-5, 1.00e-5, 1.70e-5, 8.15e-5, 8.15e-5,
                         2.10e-5, 2.10e-5 };
    scatter_proc_t table [16], ordered [16];
    for (size_t proc = 0; proc < 16; proc++)
        table [proc] = (scatter_proc_t) {
            0, proc < 8 ? mu [proc] : 0.009677, 0,
            proc < 8 ? lambda [proc] : 3.53e-5
        };
    size_t order [16], distribution [16];
    scatter_order_by_bandwidth (table, 16, 0, order);
    for (size_t index = 0; index < 16; index++)
        ordered [index] = table [order [index]];
    double start = s_now ();
    double optimal = scatter_optimal (ordered, 16, 817101, distribution);
    double exact = s_now () - start;
    int runs = 1000;
    double heuristic = 0;
    start = s_now ();
    for (int run = 0; run < runs; run++)
        heuristic = scatter_heuristic (ordered, 16, 817101, distribution,
                                       NULL);
    double fast = (s_now () - start) / runs;
    printf ("scatter n=817101 p=16: Algorithm 2 %.3f s (makespan %.4f s); "
            "heuristic %.1f us (makespan %.4f s)\n", exact, optimal,
            fast * 1e6, heuristic);
}

//  A platform of clusters x nodes with speeds 0.25..1 and powers 0.5..2
static char *
s_platform_text (size_t clusters, size_t nodes)
{
    size_t size = 256 + clusters * 256;
    char *text = malloc (size);
    size_t used = snprintf (text, size, "platform\n    name = bench\n");
    for (size_t cluster = 0; cluster < clusters; cluster++)
        used += snprintf (text + used, size - used,
                          "    cluster\n        name = C%zu\n"
                          "        nodes = %zu\n        speed = %.2f\n"
                          "        power = %.2f\n", cluster, nodes,
                          0.25 + 0.75 * (cluster % 4) / 3.0,
                          0.5 + 1.5 * (cluster % 5) / 4.0);
    return text;
}

//  MAHEVE on clusters x nodes machines with `slots` daemons each
static void
s_bench_maheve (size_t tasks, size_t clusters, size_t nodes, size_t slots)
{
    char *text = s_platform_text (clusters, nodes);
    platform_t *platform = platform_parse (text, NULL, 0);
    free (text);
    if (slots > 1) {
        platform_t *slotted = platform_with_slots (platform, slots);
        platform_destroy (&platform);
        platform = slotted;
    }
    tig_t *tig = tig_new_banded (tasks * 10, 15, tasks);
    grid_t *grid = grid_new (platform);
    size_t *placement = malloc (tasks * sizeof (size_t));
    double start = s_now ();
    int rc = maheve_map (grid, tig, placement);
    double elapsed = s_now () - start;
    printf ("maheve %zu tasks on %zu nodes x %zu slots (%zu clusters): "
            "%.3f s (%s)\n", tasks, clusters * nodes, slots, clusters, elapsed,
            rc == 0 ? "mapped" : "does not fit: one task per node");
    free (placement);
    grid_destroy (&grid);
    tig_destroy (&tig);
    platform_destroy (&platform);
}

static void
s_bench_taag (const char *text, size_t hosts)
{
    taag_topology_t *topology = taag_topology_new_virtual (hosts, 1);
    taag_schema_t *schema = taag_schema_parse (text, NULL, 0);
    size_t cpus = 0;
    size_t count;
    taag_cluster_t *clusters = taag_latency_clusters (topology, 1, &count);
    cpus = clusters [count - 1].capacity;
    taag_clusters_destroy (&clusters, count);
    double start = s_now ();
    char error [200];
    taag_mapping_t *mapping = taag_map (topology, schema, 1, error,
                                        sizeof error);
    double elapsed = s_now () - start;
    printf ("taag %s on %zu hosts (%zu CPUs): %.3f s, %zu groups\n", text,
            hosts, cpus, elapsed,
            mapping ? taag_mapping_group_count (mapping) : 0);
    taag_mapping_destroy (&mapping);
    taag_schema_destroy (&schema);
    taag_topology_destroy (&topology);
}

//  An n x n traffic matrix uniform in [0, 10) s from a fixed LCG seed;
//  sparse keeps about one cell in ten
static double *
s_traffic_matrix (size_t n, bool sparse)
{
    double *w = malloc (n * n * sizeof (double));
    unsigned state = 1;
    for (size_t cell = 0; cell < n * n; cell++) {
        state = state * 1103515245u + 12345u;
        w [cell] = ((state >> 16) % 1000) / 100.0;
        if (sparse && (state >> 8) % 10 != 0)
            w [cell] = 0;
    }
    return w;
}

static int
s_compare_doubles (const void *first, const void *second)
{
    double a = *(const double *) first, b = *(const double *) second;
    return (a > b) - (a < b);
}

//  Times GGP and OGGP on one matrix: the median, least and most of
//  GGP_RUNS single runs, because the machine is shared and single runs
//  vary by up to 2x
#define GGP_RUNS 21

static void
s_bench_ggp (const char *kind, bool sparse, size_t k, double beta)
{
    size_t n = 100;
    double *w = s_traffic_matrix (n, sparse);
    for (int optimized = 0; optimized < 2; optimized++) {
        double times [GGP_RUNS];
        ggp_schedule_t *schedule = NULL;
        for (int run = 0; run < GGP_RUNS; run++) {
            ggp_schedule_destroy (&schedule);
            double start = s_now ();
            schedule = optimized ? oggp_schedule (w, n, n, k, beta)
                                 : ggp_schedule (w, n, n, k, beta);
            times [run] = s_now () - start;
        }
        qsort (times, GGP_RUNS, sizeof (double), s_compare_doubles);
        printf ("%s 100x100 %s k=%zu beta=%g: median %.2f ms (%.2f-%.2f, "
                "%d runs), %zu steps, cost %.2f (lower bound %.1f, "
                "eta_o %.1f)\n", optimized ? "oggp" : "ggp", kind, k, beta,
                times [GGP_RUNS / 2] * 1e3, times [0] * 1e3,
                times [GGP_RUNS - 1] * 1e3, GGP_RUNS,
                ggp_schedule_step_count (schedule),
                ggp_schedule_cost (schedule),
                ggp_cost_lower_bound (w, n, n, k, beta),
                eta_brute_force (w, n, n, k));
        ggp_schedule_destroy (&schedule);
    }
    free (w);
}

int
main (void)
{
    s_bench_scatter ();
    s_bench_maheve (10000, 4, 500, 1);
    s_bench_maheve (10000, 4, 500, 5);
    s_bench_maheve (10000, 4, 500, 6);
    s_bench_maheve (2000, 20, 500, 1);
    s_bench_maheve (10000, 20, 500, 1);
    s_bench_maheve (10000, 24, 500, 1);
    s_bench_taag ("GROUPS{64,4,1}", 100);
    s_bench_taag ("GROUPS{50,4,1}", 200);
    s_bench_taag ("GROUPS{80,8,2}", 200);
    s_bench_ggp ("uniform", false, 10, 1);
    s_bench_ggp ("uniform", false, 50, 1);
    s_bench_ggp ("uniform", false, 10, 5);
    s_bench_ggp ("uniform", false, 50, 5);
    s_bench_ggp ("sparse", true, 10, 1);
    s_bench_ggp ("sparse", true, 50, 1);
    return 0;
}
