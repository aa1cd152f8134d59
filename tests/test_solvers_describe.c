/*  =========================================================================
    test_solvers_describe - the task graphs the applications give the
    mapping (jace_app_t.describe, docs/MAPPING.md section 3)

    Each application's describe must give, for a partition in blocks, the
    same costs and needs as a brute-force count straight from the problem:
    for multisplit, 2 x the nonzeros of each block's rows and, for each
    pair of blocks, the distinct columns of block j used by block i's rows
    (one pass over the rows per pair, the O(tasks^2 n) count describe
    avoids); for jacobi2d, 6 flops per grid point and the grid points of
    the other blocks that each block's 5-point stencil reads.  A describe
    of these applications never makes an ignored graph call (errors 0),
    and refuses a partition that does not cover the problem.
    =========================================================================
*/
#include "jace_task.h"
#include "app_jacobi2d.h"
#include "app_multisplit.h"
#include "problems.h"
#include "tap.h"

//  A problem of an application, loaded as the spawner loads it.
static void *
s_load (const jace_app_t *app, const char *const *pairs)
{
    zhash_t *params = zhash_new ();
    for (size_t k = 0; pairs [k]; k += 2)
        zhash_insert (params, pairs [k], (void *) pairs [k + 1]);
    char reason [256] = "";
    void *problem = app->load (params, reason, sizeof reason);
    if (!problem)
        diag ("load failed: %s", reason);
    zhash_destroy (&params);
    return problem;
}

//  The graph's needs as a dense tasks x tasks matrix (row = task).
static double *
s_dense_needs (const jace_graph_t *graph, int64_t tasks)
{
    double *needs = (double *) zmalloc ((size_t) (tasks * tasks)
                                        * sizeof (double));
    for (size_t index = 0; index < jace_graph_need_count (graph); index++) {
        int64_t task, from;
        double values;
        jace_graph_need (graph, index, &task, &from, &values);
        needs [task * tasks + from] += values;
    }
    return needs;
}

//  Compare a described graph with the expected costs and needs; four
//  checks.
static void
s_check_graph (const jace_app_t *app, void *problem, const int64_t *first_row,
               int64_t tasks, const double *cost, const double *needs,
               const char *name)
{
    jace_graph_t *graph = jace_graph_new (tasks);
    char check [160];
    snprintf (check, sizeof check, "%s: describe succeeds", name);
    is_int (app->describe (problem, first_row, tasks, graph), 0, check);
    snprintf (check, sizeof check, "%s: describe makes no ignored call",
              name);
    is_int ((long long) jace_graph_errors (graph), 0, check);

    bool same_cost = true;
    for (int64_t t = 0; t < tasks; t++)
        if (jace_graph_cost (graph, t) != cost [t]) {
            diag ("  task %" PRId64 " costs %g, brute force %g", t,
                  jace_graph_cost (graph, t), cost [t]);
            same_cost = false;
        }
    snprintf (check, sizeof check, "%s: costs equal the brute-force count",
              name);
    ok (same_cost, check);

    double *got = s_dense_needs (graph, tasks);
    bool same_needs = true;
    size_t pairs = 0;
    for (int64_t k = 0; k < tasks * tasks; k++)
        pairs += needs [k] > 0;
    diag ("%s: %zu pairs with needs by brute force", name, pairs);
    for (int64_t i = 0; i < tasks; i++)
        for (int64_t j = 0; j < tasks; j++)
            if (got [i * tasks + j] != needs [i * tasks + j]) {
                diag ("  task %" PRId64 " needs %g from %" PRId64
                      ", brute force %g", i, got [i * tasks + j], j,
                      needs [i * tasks + j]);
                same_needs = false;
            }
    snprintf (check, sizeof check, "%s: needs equal the brute-force count",
              name);
    ok (same_needs, check);
    free (got);
    jace_graph_destroy (&graph);
}

//  Multisplit by brute force: every pair (i, j) scans block i's rows for
//  the columns of block j, marking each column once.
static void
s_check_multisplit (const csr_t *A, void *problem, const int64_t *first_row,
                    int64_t tasks, const char *name)
{
    double *cost = (double *) zmalloc ((size_t) tasks * sizeof (double));
    double *needs = (double *) zmalloc ((size_t) (tasks * tasks)
                                        * sizeof (double));
    bool *used = (bool *) zmalloc ((size_t) A->ncols * sizeof (bool));
    for (int64_t i = 0; i < tasks; i++) {
        cost [i] = 2.0 * (double) (A->row_ptr [first_row [i + 1]]
                                   - A->row_ptr [first_row [i]]);
        for (int64_t j = 0; j < tasks; j++) {
            if (j == i)
                continue;
            memset (used, 0, (size_t) A->ncols * sizeof (bool));
            for (int64_t row = first_row [i]; row < first_row [i + 1]; row++)
                for (int64_t k = A->row_ptr [row]; k < A->row_ptr [row + 1];
                     k++) {
                    int32_t column = A->col_idx [k];
                    if (column >= first_row [j] && column < first_row [j + 1])
                        used [column] = true;
                }
            for (int64_t column = first_row [j]; column < first_row [j + 1];
                 column++)
                needs [i * tasks + j] += used [column];
        }
    }
    s_check_graph (&app_multisplit, problem, first_row, tasks, cost, needs,
                   name);
    free (used);
    free (cost);
    free (needs);
}

//  Jacobi2d by brute force: each grid point of block i reads its four
//  neighbours; those in another block j are counted once each.
static void
s_check_jacobi2d (void *problem, int64_t n, const int64_t *first_row,
                  int64_t tasks, const char *name)
{
    double *cost = (double *) zmalloc ((size_t) tasks * sizeof (double));
    double *needs = (double *) zmalloc ((size_t) (tasks * tasks)
                                        * sizeof (double));
    int64_t *owner = (int64_t *) malloc ((size_t) n * sizeof (int64_t));
    bool *read = (bool *) malloc ((size_t) (n * n) * sizeof (bool));
    for (int64_t t = 0; t < tasks; t++)
        for (int64_t row = first_row [t]; row < first_row [t + 1]; row++)
            owner [row] = t;
    static const int offsets [4][2] = { { -1, 0 }, { 1, 0 }, { 0, -1 },
                                        { 0, 1 } };
    for (int64_t t = 0; t < tasks; t++) {
        memset (read, 0, (size_t) (n * n) * sizeof (bool));
        for (int64_t i = first_row [t]; i < first_row [t + 1]; i++)
            for (int64_t j = 0; j < n; j++) {
                cost [t] += 6;
                for (int k = 0; k < 4; k++) {
                    int64_t row = i + offsets [k][0];
                    int64_t column = j + offsets [k][1];
                    if (row >= 0 && row < n && column >= 0 && column < n
                    &&  owner [row] != t && !read [row * n + column]) {
                        read [row * n + column] = true;
                        needs [t * tasks + owner [row]] += 1;
                    }
                }
            }
    }
    s_check_graph (&app_jacobi2d, problem, first_row, tasks, cost, needs,
                   name);
    free (read);
    free (owner);
    free (cost);
    free (needs);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (4 * 4 + 3);
    char reason [256];

    //  poisson2d on a 12 x 12 grid: four even blocks of 36 rows, then
    //  blocks that cut grid lines in the middle, one of them empty.
    const char *poisson [] = { "problem/kind", "poisson2d", "problem/n",
                               "12", NULL };
    void *problem = s_load (&app_multisplit, poisson);
    csr_t *A = NULL;
    problems_poisson2d (12, 0, 144, &A, reason, sizeof reason);
    int64_t even [] = { 0, 36, 72, 108, 144 };
    s_check_multisplit (A, problem, even, 4, "poisson2d, 4 even blocks");
    int64_t uneven [] = { 0, 17, 17, 90, 144 };
    s_check_multisplit (A, problem, uneven, 4,
                        "poisson2d, 4 uneven blocks, one empty");
    jace_graph_t *graph = jace_graph_new (4);
    int64_t short_of_n [] = { 0, 36, 72, 108, 140 };
    ok (app_multisplit.describe (problem, short_of_n, 4, graph) == -1
        && jace_graph_need_count (graph) == 0,
        "multisplit refuses blocks that do not cover the matrix");
    jace_graph_destroy (&graph);
    csr_destroy (&A);
    app_multisplit.unload (&problem);

    //  nascg of order 400, band 150: blocks need blocks beyond their rank
    //  neighbours.
    const char *nascg [] = { "problem/kind", "nascg", "problem/n", "400",
                             "problem/bandwidth", "150", "problem/per_row",
                             "4", "problem/seed", "3", NULL };
    problem = s_load (&app_multisplit, nascg);
    problems_nascg_t spec = { 400, 150, 4, 1, 3 };
    problems_nascg (&spec, 0, 400, &A, reason, sizeof reason);
    int64_t nascg_even [] = { 0, 100, 200, 300, 400 };
    s_check_multisplit (A, problem, nascg_even, 4, "nascg, 4 even blocks");
    csr_destroy (&A);
    app_multisplit.unload (&problem);

    //  jacobi2d on a 10 x 10 grid, blocks of grid rows.
    const char *grid [] = { "problem/n", "10", NULL };
    problem = s_load (&app_jacobi2d, grid);
    int64_t rows [] = { 0, 3, 6, 8, 10 };
    s_check_jacobi2d (problem, 10, rows, 4, "jacobi2d, 4 blocks");
    graph = jace_graph_new (4);
    int64_t empty [] = { 0, 3, 3, 8, 10 };
    ok (app_jacobi2d.describe (problem, empty, 4, graph) == -1,
        "jacobi2d refuses an empty block (its task could not run)");
    int64_t past_n [] = { 0, 3, 6, 8, 11 };
    ok (app_jacobi2d.describe (problem, past_n, 4, graph) == -1,
        "jacobi2d refuses blocks past the grid");
    jace_graph_destroy (&graph);
    app_jacobi2d.unload (&problem);
    return tap_done ();
}
