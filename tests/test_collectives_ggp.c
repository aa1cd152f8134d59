/*  =========================================================================
    test_collectives_ggp - GGP, OGGP, the lower bounds and eta_o

    The examples E1-E8 of ../shared/reference/algorithms.md section 1.6,
    the eta_o examples of RR-5361 (Figures 3 and 6-8), the invariants of
    section 1.7 on random instances, and the factor 2 against the exact
    optimum, found by a branch-and-bound search (GLPK) over every set of
    matchings.
    =========================================================================
*/
#include "collectives.h"
#include "tap.h"
#include <glpk.h>

typedef struct {
    const char *name;           //  E1..E8
    size_t n1;                  //  Senders
    size_t n2;                  //  Receivers
    double w [9];               //  Row-major weights
    size_t k;                   //  Transfers at a time
    double beta;                //  Step cost
    double ggp_cost;            //  Expected GGP cost
    double ggp_cost_other;      //  Other GGP cost allowed (tie-breaks)
    size_t ggp_steps;           //  Expected GGP steps (of ggp_cost)
    double oggp_cost;           //  Expected OGGP cost
    size_t oggp_steps;          //  Expected OGGP steps
    size_t regular;             //  Expected R
} example_t;

static example_t s_examples [] = {
    { "E1", 1, 1, { 5 }, 1, 1, 6, 6, 1, 6, 1, 5 },
    { "E2", 2, 2, { 4, 0, 0, 4 }, 2, 1, 5, 5, 1, 5, 1, 4 },
    { "E3", 2, 2, { 4, 0, 0, 4 }, 1, 1, 10, 10, 2, 10, 2, 8 },
    { "E4", 2, 2, { 3, 1, 1, 3 }, 2, 1, 6, 6, 2, 6, 2, 4 },
    { "E5", 3, 3, { 2, 1, 1, 1, 2, 1, 1, 1, 2 }, 3, 1, 7, 8, 3, 7, 3, 4 },
    { "E6", 3, 2, { 2, 1, 0, 3, 1, 0 }, 1, 1, 11, 11, 4, 11, 4, 7 },
    { "E7", 2, 2, { 3, 1, 1, 3 }, 2, 2, 8, 8, 2, 8, 2, 3 },
    { "E8", 2, 3, { 6, 1, 1, 0, 2, 2 }, 2, 1, 12, 12, 4, 12, 4, 8 },
};

//  Checks the invariants of algorithms.md 1.7; returns a reason or NULL
static const char *
s_invalid (ggp_schedule_t *schedule, const double *w, size_t n1, size_t n2,
           size_t k, double beta)
{
    size_t limit = k < n1 ? k : n1;
    limit = limit < n2 ? limit : n2;
    double *sent = calloc (n1 * n2, sizeof (double));
    bool *busy = calloc (n1 + n2, sizeof (bool));
    const char *reason = NULL;
    size_t steps = ggp_schedule_step_count (schedule);
    for (size_t step = 0; step < steps && !reason; step++) {
        memset (busy, 0, (n1 + n2) * sizeof (bool));
        size_t size = ggp_schedule_step_size (schedule, step);
        if (size > limit)
            reason = "a step has more than k transfers";
        for (size_t index = 0; index < size && !reason; index++) {
            const ggp_transfer_t *transfer =
                ggp_schedule_transfer (schedule, step, index);
            if (busy [transfer->sender] || busy [n1 + transfer->receiver])
                reason = "a step is not a matching";
            busy [transfer->sender] = busy [n1 + transfer->receiver] = true;
            size_t cell = transfer->sender * n2 + transfer->receiver;
            if (transfer->amount <= 0 || sent [cell] >= w [cell])
                reason = "a step sends on an edge with no data left";
            if (transfer->amount > ggp_schedule_step_length (schedule, step))
                reason = "a transfer is longer than its step";
            sent [cell] += transfer->amount;
        }
    }
    for (size_t cell = 0; cell < n1 * n2 && !reason; cell++)
        if (fabs (sent [cell] - w [cell]) > 1e-9 * (1 + w [cell]))
            reason = "an edge does not receive exactly its data";
    double cost = ggp_schedule_cost (schedule);
    double regular = (double) ggp_schedule_regular_degree (schedule);
    if (!reason && cost < ggp_cost_lower_bound (w, n1, n2, k, beta) - 1e-9)
        reason = "the cost is below the lower bound";
    if (!reason && beta > 0 && cost > 2 * beta * regular + 1e-9)
        reason = "the cost is above 2 beta R";
    if (!reason && beta > 0 && steps > regular)
        reason = "more steps than R";
    if (!reason && steps > ggp_schedule_padded_edges (schedule))
        reason = "more steps than edges of the padded graph";
    free (sent);
    free (busy);
    return reason;
}

static void
s_test_examples (void)
{
    size_t count = sizeof s_examples / sizeof s_examples [0];
    for (size_t index = 0; index < count; index++) {
        example_t *example = &s_examples [index];
        char name [160];
        ggp_schedule_t *ggp = ggp_schedule (example->w, example->n1,
                                            example->n2, example->k,
                                            example->beta);
        double cost = ggp_schedule_cost (ggp);
        size_t steps = ggp_schedule_step_count (ggp);
        snprintf (name, sizeof name, "%s: GGP costs %g (%zu steps)%s",
                  example->name, example->ggp_cost, example->ggp_steps,
                  example->ggp_cost_other != example->ggp_cost
                  ? " or the other tie-break's cost" : "");
        bool same = (fabs (cost - example->ggp_cost) < 1e-9
                     && steps == example->ggp_steps)
                 || fabs (cost - example->ggp_cost_other) < 1e-9;
        if (!ok (same, name))
            diag ("got %g in %zu steps", cost, steps);
        snprintf (name, sizeof name, "%s: R = %zu", example->name,
                  example->regular);
        is_int (ggp_schedule_regular_degree (ggp), example->regular, name);
        const char *reason = s_invalid (ggp, example->w, example->n1,
                                        example->n2, example->k,
                                        example->beta);
        snprintf (name, sizeof name, "%s: GGP schedule is valid",
                  example->name);
        if (!ok (!reason, name))
            diag ("%s", reason);
        ggp_schedule_destroy (&ggp);

        ggp_schedule_t *oggp = oggp_schedule (example->w, example->n1,
                                              example->n2, example->k,
                                              example->beta);
        snprintf (name, sizeof name, "%s: OGGP costs %g in %zu steps",
                  example->name, example->oggp_cost, example->oggp_steps);
        if (!ok (fabs (ggp_schedule_cost (oggp) - example->oggp_cost) < 1e-9
                 && ggp_schedule_step_count (oggp) == example->oggp_steps,
                 name))
            diag ("got %g in %zu steps", ggp_schedule_cost (oggp),
                  ggp_schedule_step_count (oggp));
        reason = s_invalid (oggp, example->w, example->n1, example->n2,
                            example->k, example->beta);
        snprintf (name, sizeof name, "%s: OGGP schedule is valid",
                  example->name);
        if (!ok (!reason, name))
            diag ("%s", reason);
        ggp_schedule_destroy (&oggp);
    }
    //  E7's steps: d = 2 (length 3), then d = 1 (length 1)
    ggp_schedule_t *oggp = oggp_schedule (s_examples [6].w, 2, 2, 2, 2);
    ok (ggp_schedule_step_count (oggp) == 2
        && ggp_schedule_step_length (oggp, 0) == 3
        && ggp_schedule_step_length (oggp, 1) == 1,
        "E7: steps of length 3 then 1");
    ggp_schedule_destroy (&oggp);
}

static void
s_test_degenerate (void)
{
    double empty [4] = { 0 };
    ggp_schedule_t *schedule = ggp_schedule (empty, 2, 2, 1, 1);
    is_int (ggp_schedule_step_count (schedule), 0,
            "an empty matrix needs no step");
    ggp_schedule_destroy (&schedule);
    double single [4] = { 0, 2.5, 0, 0 };
    schedule = oggp_schedule (single, 2, 2, 2, 0.5);
    is_double (ggp_schedule_cost (schedule), 3, 1e-12,
               "a single edge costs w + beta");
    ggp_schedule_destroy (&schedule);
    double fig3 [9] = { 1, 0, 0, 0, 1, 0, 0, 0, 2 };
    schedule = oggp_schedule (fig3, 3, 3, 2, 0);
    ok (!s_invalid (schedule, fig3, 3, 3, 2, 0),
        "beta = 0 gives a valid schedule");
    is_double (ggp_schedule_cost (schedule), 2, 1e-9,
               "beta = 0: Figure 3's pattern is scheduled in 2 s "
               "(Figure 4)");
    ggp_schedule_destroy (&schedule);
    ggp_schedule_destroy (&schedule);
}

//  ---------------------------------------------------------------------
//  Exact optimum: every matching with at most k edges is a possible step;
//  choose the steps (binary y) and their lengths (L) to cover every edge.

typedef struct {
    size_t count;               //  Matchings found
    size_t capacity;            //  Allocated
    unsigned *edges;            //  Bit set of edges (cell index) per matching
} matchings_t;

static void
s_enumerate (const double *w, size_t n1, size_t n2, size_t k, size_t row,
             unsigned used_columns, unsigned edges, size_t size,
             matchings_t *found)
{
    if (row == n1) {
        if (size == 0)
            return;
        if (found->count == found->capacity) {
            found->capacity = found->capacity * 2 + 64;
            found->edges = realloc (found->edges,
                                    found->capacity * sizeof (unsigned));
        }
        found->edges [found->count++] = edges;
        return;
    }
    s_enumerate (w, n1, n2, k, row + 1, used_columns, edges, size, found);
    if (size == k)
        return;
    for (size_t column = 0; column < n2; column++)
        if (w [row * n2 + column] > 0 && !(used_columns & (1u << column)))
            s_enumerate (w, n1, n2, k, row + 1, used_columns | 1u << column,
                         edges | 1u << (row * n2 + column), size + 1, found);
}

static double
s_exact_optimum (const double *w, size_t n1, size_t n2, size_t k,
                 double beta)
{
    matchings_t found = { 0, 0, NULL };
    s_enumerate (w, n1, n2, k, 0, 0, 0, 0, &found);
    if (found.count == 0)
        return 0;
    double longest = 0;
    for (size_t cell = 0; cell < n1 * n2; cell++)
        longest = fmax (longest, w [cell]);
    glp_prob *problem = glp_create_prob ();
    glp_set_obj_dir (problem, GLP_MIN);
    int steps = (int) found.count;
    //  Columns 1..steps: L; steps+1..2 steps: y
    glp_add_cols (problem, 2 * steps);
    for (int step = 1; step <= steps; step++) {
        glp_set_col_bnds (problem, step, GLP_LO, 0, 0);
        glp_set_obj_coef (problem, step, 1);
        glp_set_col_kind (problem, steps + step, GLP_BV);
        glp_set_obj_coef (problem, steps + step, beta);
    }
    int capacity = 2 * steps * (int) (n1 * n2 + 1) + 1;
    int *rows = malloc (capacity * sizeof (int));
    int *columns = malloc (capacity * sizeof (int));
    double *values = malloc (capacity * sizeof (double));
    int entries = 0;
    for (size_t cell = 0; cell < n1 * n2; cell++) {
        if (w [cell] <= 0)
            continue;
        int row = glp_add_rows (problem, 1);
        glp_set_row_bnds (problem, row, GLP_LO, w [cell], 0);
        for (int step = 1; step <= steps; step++)
            if (found.edges [step - 1] & (1u << cell)) {
                entries++;
                rows [entries] = row;
                columns [entries] = step;
                values [entries] = 1;
            }
    }
    //  L <= longest * y
    for (int step = 1; step <= steps; step++) {
        int row = glp_add_rows (problem, 1);
        glp_set_row_bnds (problem, row, GLP_UP, 0, 0);
        entries++;
        rows [entries] = row, columns [entries] = step, values [entries] = 1;
        entries++;
        rows [entries] = row, columns [entries] = steps + step;
        values [entries] = -longest;
    }
    glp_load_matrix (problem, entries, rows, columns, values);
    glp_iocp parameters;
    glp_init_iocp (&parameters);
    parameters.presolve = GLP_ON;
    parameters.msg_lev = GLP_MSG_OFF;
    double optimum = -1;
    if (glp_intopt (problem, &parameters) == 0
    &&  glp_mip_status (problem) == GLP_OPT)
        optimum = glp_mip_obj_val (problem);
    glp_delete_prob (problem);
    free (rows);
    free (columns);
    free (values);
    free (found.edges);
    return optimum;
}

static void
s_test_random (void)
{
    srand (2024);
    size_t instances = 300;
    bool ggp_valid = true, oggp_valid = true, within = true, solved = true;
    double worst = 0;
    for (size_t instance = 0; instance < instances; instance++) {
        size_t n1 = 1 + rand () % 3, n2 = 1 + rand () % 3;
        size_t k = 1 + rand () % 3;
        double betas [] = { 0.5, 1, 2 };
        double beta = betas [rand () % 3];
        double w [9];
        for (size_t cell = 0; cell < n1 * n2; cell++)
            w [cell] = rand () % 3 == 0 ? 0 : beta * (1 + rand () % 4);
        double optimum = s_exact_optimum (w, n1, n2, k, beta);
        solved = solved && optimum >= 0;
        for (int optimized = 0; optimized < 2; optimized++) {
            ggp_schedule_t *schedule = optimized
                ? oggp_schedule (w, n1, n2, k, beta)
                : ggp_schedule (w, n1, n2, k, beta);
            const char *reason = s_invalid (schedule, w, n1, n2, k, beta);
            if (reason) {
                diag ("instance %zu (%s): %s", instance,
                      optimized ? "OGGP" : "GGP", reason);
                if (optimized)
                    oggp_valid = false;
                else
                    ggp_valid = false;
            }
            double cost = ggp_schedule_cost (schedule);
            if (optimum > 0) {
                worst = fmax (worst, cost / optimum);
                within = within && cost <= 2 * optimum + 1e-9;
            }
            ggp_schedule_destroy (&schedule);
        }
    }
    ok (solved, "the exhaustive search solves every small instance");
    ok (ggp_valid, "GGP schedules of 300 random instances are valid");
    ok (oggp_valid, "OGGP schedules of 300 random instances are valid");
    ok (within, "GGP and OGGP stay within twice the exact optimum");
    diag ("worst cost / optimum: %.3f", worst);

    //  Larger instances, validity only
    bool large_valid = true;
    for (size_t instance = 0; instance < 40; instance++) {
        size_t n1 = 1 + rand () % 12, n2 = 1 + rand () % 12;
        size_t k = 1 + rand () % 8;
        double beta = (rand () % 4) * 0.25;
        double *w = malloc (n1 * n2 * sizeof (double));
        for (size_t cell = 0; cell < n1 * n2; cell++)
            w [cell] = rand () % 4 == 0 ? 0 : (rand () % 1000) / 100.0;
        for (int optimized = 0; optimized < 2; optimized++) {
            ggp_schedule_t *schedule = optimized
                ? oggp_schedule (w, n1, n2, k, beta)
                : ggp_schedule (w, n1, n2, k, beta);
            const char *reason = s_invalid (schedule, w, n1, n2, k, beta);
            if (reason)
                diag ("large instance %zu: %s", instance, reason);
            large_valid = large_valid && !reason;
            ggp_schedule_destroy (&schedule);
        }
        free (w);
    }
    ok (large_valid, "schedules of 40 random instances up to 12 x 12 are "
        "valid");
}

//  The benchmark's 100 x 100 matrices, uniform in [0, 10) s from a fixed
//  LCG seed; sparse keeps about one cell in ten
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

//  Padded graphs wider than a word of bits (N = 190 here).  The steps and
//  costs are those the peeler gave when it scanned dense rows: keeping
//  the same matchings keeps the schedules' quality.
static void
s_test_large (void)
{
    typedef struct {
        bool sparse;            //  One cell in ten, or every cell
        bool optimized;         //  OGGP, or GGP
        size_t steps;           //  Steps of the schedule
        double cost;            //  Its cost
    } pinned_t;
    pinned_t pinned [] = {
        { false, false, 4719, 10177.95 }, { false, true, 1127, 6546.77 },
        { true, false, 466, 991.96 }, { true, true, 134, 659.04 },
    };
    for (size_t index = 0; index < 4; index++) {
        pinned_t *expected = &pinned [index];
        double *w = s_traffic_matrix (100, expected->sparse);
        ggp_schedule_t *schedule = expected->optimized
            ? oggp_schedule (w, 100, 100, 10, 1)
            : ggp_schedule (w, 100, 100, 10, 1);
        char name [160];
        snprintf (name, sizeof name, "100 x 100 %s, k = 10, beta = 1: %s "
                  "gives %zu steps costing %.2f",
                  expected->sparse ? "sparse" : "uniform",
                  expected->optimized ? "OGGP" : "GGP", expected->steps,
                  expected->cost);
        const char *reason = s_invalid (schedule, w, 100, 100, 10, 1);
        if (!ok (!reason
                 && ggp_schedule_step_count (schedule) == expected->steps
                 && fabs (ggp_schedule_cost (schedule) - expected->cost)
                    < 1e-6, name))
            diag ("%s; got %zu steps costing %.9f", reason ? reason
                  : "valid", ggp_schedule_step_count (schedule),
                  ggp_schedule_cost (schedule));
        ggp_schedule_destroy (&schedule);
        free (w);
    }
    //  Odd sides around the word boundaries (N from 2 to 179)
    srand (4242);
    bool valid = true;
    for (size_t instance = 0; instance < 30; instance++) {
        size_t n1 = 1 + rand () % 90, n2 = 1 + rand () % 90;
        size_t k = 1 + rand () % 70;
        double beta = 0.5 * (rand () % 5);
        int density = 1 + rand () % 10;
        double *w = malloc (n1 * n2 * sizeof (double));
        for (size_t cell = 0; cell < n1 * n2; cell++)
            w [cell] = rand () % 10 < density ? (rand () % 1000) / 100.0
                                              : 0;
        for (int optimized = 0; optimized < 2; optimized++) {
            ggp_schedule_t *schedule = optimized
                ? oggp_schedule (w, n1, n2, k, beta)
                : ggp_schedule (w, n1, n2, k, beta);
            const char *reason = s_invalid (schedule, w, n1, n2, k, beta);
            if (reason)
                diag ("%zu x %zu, k = %zu, beta = %g: %s", n1, n2, k,
                      beta, reason);
            valid = valid && !reason;
            ggp_schedule_destroy (&schedule);
        }
        free (w);
    }
    ok (valid, "schedules of 30 random instances up to 90 x 90 are valid");
}

static void
s_test_eta (void)
{
    //  Figure 3: 1 -> a (1 s), 2 -> b (1 s), c <-> 3 (2 s), k = 2
    double fig3 [9] = { 1, 0, 0, 0, 1, 0, 0, 0, 2 };
    is_double (eta_brute_force (fig3, 3, 3, 2), 2.5, 1e-12,
               "Figure 3: eta_o = 2.5 s");
    is_double (ggp_lower_bound (fig3, 3, 3, 2), 2, 1e-12,
               "Figure 3: lower bound max(P/k, W) = 2 s");
    //  Figures 6-8 (k = 3): a receives 2, 2, 1 from 1, 2, 3; 1 -> b 4
    double fig6 [6] = { 2, 4, 2, 0, 1, 0 };
    is_double (eta_brute_force (fig6, 3, 2, 3), 6, 1e-12,
               "Figures 6-8: eta_o = 6 s");
    //  eta_o stretches every round by the backbone's sharing, so it never
    //  beats P/k (W(G) it can: the report's shares may over-commit a node)
    srand (99);
    bool above = true;
    for (size_t instance = 0; instance < 200; instance++) {
        size_t n1 = 1 + rand () % 6, n2 = 1 + rand () % 6;
        size_t k = 1 + rand () % 4;
        double w [36];
        for (size_t cell = 0; cell < n1 * n2; cell++)
            w [cell] = rand () % 3 == 0 ? 0 : (rand () % 100) / 10.0;
        double total = 0;
        for (size_t cell = 0; cell < n1 * n2; cell++)
            total += w [cell];
        double eta = eta_brute_force (w, n1, n2, k);
        above = above && isfinite (eta) && eta >= total / k - 1e-9;
    }
    ok (above, "eta_o is finite and never below P/k on random patterns");
    double scheduled, brute;
    ok (eta_scheduling_pays (fig3, 3, 3, 2, 0, &scheduled, &brute),
        "Figure 3 with beta = 0: scheduling pays");
    is_double (brute, 2.5, 1e-12, "the decision reports eta_o");
    is_double (scheduled, 2, 1e-9, "the decision reports the OGGP cost");
    ok (!eta_scheduling_pays (fig3, 3, 3, 2, 1, &scheduled, &brute),
        "Figure 3 with beta = 1: scheduling does not pay");
    //  Fair sharing beyond k: 4 disjoint 1 s transfers, k = 2: 2 s
    double diagonal [16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0,
                             0, 0, 0, 1 };
    is_double (eta_brute_force (diagonal, 4, 4, 2), 2, 1e-12,
               "k = 2 shares the backbone among 4 transfers");
    double none [4] = { 0 };
    is_double (eta_brute_force (none, 2, 2, 1), 0, 0,
               "nothing to send takes no time");
}

int
main (void)
{
    tap_plan (8 * 5 + 1 + 4 + 5 + 5 + 10);
    s_test_examples ();
    s_test_degenerate ();
    s_test_random ();
    s_test_large ();
    s_test_eta ();
    return tap_done ();
}
