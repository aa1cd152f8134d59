/*  =========================================================================
    scatter - load-balanced scatter distributions (RR-2003-17)

    The dynamic programs keep only two columns of costs (processor i and
    i+1) and a table of the share chosen for each (processor, items) pair,
    so n = 817,101 items over 16 processors needs 52 MB and no list
    building.
    =========================================================================
*/
#include "collectives.h"
#include <glpk.h>

//  --------------------------------------------------------------------------
//  Cost of an affine processor, null at 0 items

double
scatter_affine_cost (void *args, size_t proc, size_t items, bool comm)
{
    const scatter_proc_t *procs = (const scatter_proc_t *) args;
    if (items == 0)
        return 0;
    return comm ? procs [proc].comm_fixed
                  + procs [proc].comm_per_item * (double) items
                : procs [proc].comp_fixed
                  + procs [proc].comp_per_item * (double) items;
}

double
scatter_makespan (const scatter_proc_t *procs, size_t count,
                  const size_t *distribution)
{
    assert (procs);
    assert (distribution);
    double sent = 0, makespan = 0;
    for (size_t proc = 0; proc < count; proc++) {
        void *args = (void *) procs;
        sent += scatter_affine_cost (args, proc, distribution [proc], true);
        double end = sent + scatter_affine_cost (args, proc, distribution [proc],
                                           false);
        makespan = fmax (makespan, end);
    }
    return makespan;
}

//  Tables shared by both dynamic programs
typedef struct {
    size_t items;               //  n
    double *next;               //  cost[d, i+1] for d = 0..n
    double *current;            //  cost[d, i] being computed
    uint32_t *share;            //  share[i * (n+1) + d]: items given to i
} program_t;

static void
s_program_init (program_t *program, scatter_cost_fn *cost, void *args,
                size_t count, size_t items)
{
    assert (items < UINT32_MAX);
    program->items = items;
    program->next = (double *) malloc ((items + 1) * sizeof (double));
    program->current = (double *) malloc ((items + 1) * sizeof (double));
    program->share = (uint32_t *) malloc (count * (items + 1)
                                          * sizeof (uint32_t));
    assert (program->next && program->current && program->share);
    //  The root (last) takes everything that is left
    size_t last = count - 1;
    for (size_t d = 0; d <= items; d++) {
        program->next [d] = cost (args, last, d, true)
                          + cost (args, last, d, false);
        program->share [last * (items + 1) + d] = (uint32_t) d;
    }
}

//  Walk the share table into a distribution; frees the tables
static double
s_program_finish (program_t *program, size_t count, size_t *distribution)
{
    size_t left = program->items;
    for (size_t proc = 0; proc < count; proc++) {
        distribution [proc] = program->share [proc * (program->items + 1)
                                              + left];
        left -= distribution [proc];
    }
    assert (left == 0);
    double best = program->next [program->items];
    free (program->next);
    free (program->current);
    free (program->share);
    return best;
}

//  --------------------------------------------------------------------------
//  Algorithm 1

double
scatter_optimal_general (scatter_cost_fn *cost, void *args, size_t count,
                         size_t items, size_t *distribution)
{
    assert (cost);
    assert (count >= 1);
    assert (distribution);
    program_t program;
    s_program_init (&program, cost, args, count, items);
    for (size_t proc = count - 1; proc-- > 0;) {
        uint32_t *share = &program.share [proc * (items + 1)];
        for (size_t d = 0; d <= items; d++) {
            size_t best_share = 0;
            double best = program.next [d];
            for (size_t e = 1; e <= d; e++) {
                double m = cost (args, proc, e, true)
                         + fmax (cost (args, proc, e, false),
                                 program.next [d - e]);
                if (m < best) {
                    best = m;
                    best_share = e;
                }
            }
            share [d] = (uint32_t) best_share;
            program.current [d] = best;
        }
        double *swap = program.next;
        program.next = program.current;
        program.current = swap;
    }
    return s_program_finish (&program, count, distribution);
}

//  Lines 11-26 of Algorithm 2: the share e_max past which computing
//  dominates, found by binary search, and its cost
static size_t
s_largest_useful_share (scatter_cost_fn *cost, void *args, size_t proc,
                        size_t d, const double *next, double *best)
{
    if (cost (args, proc, 0, false) >= next [d]) {
        *best = cost (args, proc, 0, true) + cost (args, proc, 0, false);
        return 0;
    }
    if (cost (args, proc, d, false) < next [0]) {
        *best = cost (args, proc, d, true) + next [0];
        return d;
    }
    size_t low = 0, high = d, e = d / 2;
    while (e != low) {
        if (cost (args, proc, e, false) < next [d - e])
            low = e;
        else
            high = e;
        e = (low + high) / 2;
    }
    *best = cost (args, proc, high, true) + cost (args, proc, high, false);
    return high;
}

//  --------------------------------------------------------------------------
//  Algorithm 2

double
scatter_optimal_increasing (scatter_cost_fn *cost, void *args, size_t count,
                            size_t items, size_t *distribution)
{
    assert (cost);
    assert (count >= 1);
    assert (distribution);
    program_t program;
    s_program_init (&program, cost, args, count, items);
    for (size_t proc = count - 1; proc-- > 0;) {
        uint32_t *share = &program.share [proc * (items + 1)];
        for (size_t d = 0; d <= items; d++) {
            double best;
            size_t best_share = s_largest_useful_share (cost, args, proc, d,
                                                        program.next, &best);
            //  Below e_max computing is hidden by the others' cost, and
            //  once that cost alone reaches the best we can stop
            for (size_t e = best_share; e-- > 0;) {
                double m = cost (args, proc, e, true) + program.next [d - e];
                if (m < best) {
                    best = m;
                    best_share = e;
                }
                else
                if (program.next [d - e] >= best)
                    break;
            }
            share [d] = (uint32_t) best_share;
            program.current [d] = best;
        }
        double *swap = program.next;
        program.next = program.current;
        program.current = swap;
    }
    return s_program_finish (&program, count, distribution);
}

//  One column of Algorithm 2 for an affine processor.  With e_max the
//  smallest share whose computing outlasts the others (found by binary
//  search in Algorithm 2), every share e in [1, e_max) costs
//      comm_fixed + lambda e + next[d - e]
//  so the best of them is comm_fixed + lambda d + min over the window
//  k in [d - e_max + 1, d - 1] of (next[k] - lambda k).  As d grows, e_max
//  grows by 0 or 1 (next never decreases) so both ends of the window only
//  move up: a monotone queue gives each minimum in amortised O(1), and
//  the column costs O(n) instead of O(n * window).
static void
s_affine_column (const scatter_proc_t *proc, size_t items,
                 const double *next, double *current, uint32_t *share,
                 size_t *queue)
{
    void *args = (void *) proc;
    size_t head = 0, tail = 0;      //  Queue of k, h(k) increasing
    size_t largest = 0;             //  e_max, carried from d - 1
    double lambda = proc->comm_per_item;
    for (size_t d = 0; d <= items; d++) {
        while (scatter_affine_cost (args, 0, largest, false)
               < next [d - largest])
            largest++;          //  Stops at d at the latest: next[0] = 0
        if (d >= 1) {
            size_t k = d - 1;
            double value = next [k] - lambda * (double) k;
            while (tail > head && next [queue [tail - 1]]
                   - lambda * (double) queue [tail - 1] >= value)
                tail--;
            queue [tail++] = k;
        }
        size_t low = d + 1 - largest;
        while (tail > head && queue [head] < low)
            head++;
        //  e = 0, then e = e_max, then the best e in [1, e_max)
        double best = next [d];
        size_t best_share = 0;
        double at_largest = scatter_affine_cost (args, 0, largest, true)
                          + scatter_affine_cost (args, 0, largest, false);
        if (largest > 0 && at_largest < best) {
            best = at_largest;
            best_share = largest;
        }
        if (tail > head) {
            size_t k = queue [head];
            double value = proc->comm_fixed + lambda * (double) (d - k)
                         + next [k];
            if (value < best) {
                best = value;
                best_share = d - k;
            }
        }
        current [d] = best;
        share [d] = (uint32_t) best_share;
    }
}

double
scatter_optimal (const scatter_proc_t *procs, size_t count, size_t items,
                 size_t *distribution)
{
    assert (procs);
    assert (count >= 1);
    assert (distribution);
    program_t program;
    s_program_init (&program, scatter_affine_cost, (void *) procs, count,
                    items);
    size_t *queue = (size_t *) malloc ((items + 1) * sizeof (size_t));
    assert (queue);
    for (size_t proc = count - 1; proc-- > 0;) {
        s_affine_column (&procs [proc], items, program.next, program.current,
                         &program.share [proc * (items + 1)], queue);
        double *swap = program.next;
        program.next = program.current;
        program.current = swap;
    }
    free (queue);
    return s_program_finish (&program, count, distribution);
}

//  Solve linear program (3) in rationals; returns 0 and fills shares
static int
s_solve_rational (const scatter_proc_t *procs, size_t count, size_t items,
                  double *shares, double *time)
{
    glp_prob *problem = glp_create_prob ();
    glp_set_obj_dir (problem, GLP_MIN);
    int columns = (int) count + 1;          //  n_1..n_p, then T
    glp_add_cols (problem, columns);
    for (int column = 1; column < columns; column++)
        glp_set_col_bnds (problem, column, GLP_LO, 0, 0);
    glp_set_col_bnds (problem, columns, GLP_FR, 0, 0);
    glp_set_obj_coef (problem, columns, 1);
    glp_add_rows (problem, (int) count + 1);
    size_t capacity = (count + 2) * (count + 2) + 1;
    int *rows_index = (int *) malloc (capacity * sizeof (int));
    int *columns_index = (int *) malloc (capacity * sizeof (int));
    double *values = (double *) malloc (capacity * sizeof (double));
    assert (rows_index && columns_index && values);
    int entries = 0;
    //  Row 1: the shares add up to n
    glp_set_row_bnds (problem, 1, GLP_FX, (double) items, (double) items);
    for (int column = 1; column < columns; column++) {
        entries++;
        rows_index [entries] = 1;
        columns_index [entries] = column;
        values [entries] = 1;
    }
    //  Row i+1: T - sum_{j<=i} lambda_j n_j - mu_i n_i >= fixed parts
    double fixed = 0;
    for (size_t proc = 0; proc < count; proc++) {
        int row = (int) proc + 2;
        fixed += procs [proc].comm_fixed;
        glp_set_row_bnds (problem, row, GLP_LO,
                          fixed + procs [proc].comp_fixed, 0);
        for (size_t before = 0; before <= proc; before++) {
            entries++;
            rows_index [entries] = row;
            columns_index [entries] = (int) before + 1;
            values [entries] = -procs [before].comm_per_item
                             - (before == proc ? procs [proc].comp_per_item
                                               : 0);
        }
        entries++;
        rows_index [entries] = row;
        columns_index [entries] = columns;
        values [entries] = 1;
    }
    glp_load_matrix (problem, entries, rows_index, columns_index, values);
    glp_smcp parameters;
    glp_init_smcp (&parameters);
    parameters.msg_lev = GLP_MSG_OFF;
    int rc = -1;
    if (glp_simplex (problem, &parameters) == 0
    &&  glp_get_status (problem) == GLP_OPT) {
        for (size_t proc = 0; proc < count; proc++)
            shares [proc] = fmax (0, glp_get_col_prim (problem,
                                                       (int) proc + 1));
        *time = glp_get_obj_val (problem);
        rc = 0;
    }
    glp_delete_prob (problem);
    //  GLPK keeps an environment per thread until glp_free_env: a spawner
    //  actor that scattered and ended would leak it.  We are GLPK's only
    //  user, and the next solve builds it again.
    glp_free_env ();
    free (rows_index);
    free (columns_index);
    free (values);
    return rc;
}

//  The rounding scheme of section 3.3: every share moves by less than one
//  and the sum is kept.  The first share rounded is the one nearest an
//  integer; then, while the error is negative we round up the share
//  nearest its ceiling, else round down the one nearest its floor; the
//  last share absorbs the error.
static void
s_round (const double *shares, size_t count, size_t items,
         size_t *distribution)
{
    bool *done = (bool *) calloc (count, sizeof (bool));
    assert (done);
    double error = 0;
    for (size_t round = 0; round + 1 < count; round++) {
        size_t best = SIZE_MAX;
        double best_gap = INFINITY, best_value = 0;
        for (size_t proc = 0; proc < count; proc++) {
            if (done [proc])
                continue;
            double value = round == 0 ? nearbyint (shares [proc])
                         : error < 0 ? ceil (shares [proc])
                         : floor (shares [proc]);
            double gap = fabs (value - shares [proc]);
            if (gap < best_gap) {
                best = proc;
                best_gap = gap;
                best_value = value;
            }
        }
        done [best] = true;
        distribution [best] = (size_t) best_value;
        error += best_value - shares [best];
    }
    size_t given = 0;
    for (size_t proc = 0; proc < count; proc++)
        if (done [proc])
            given += distribution [proc];
    for (size_t proc = 0; proc < count; proc++)
        if (!done [proc]) {
            //  Rational shares add up to n, so the last share is about
            //  shares[proc] - error; take exactly what is left
            assert (given <= items);
            distribution [proc] = items - given;
        }
    free (done);
}

//  --------------------------------------------------------------------------
//  Guaranteed heuristic

double
scatter_heuristic (const scatter_proc_t *procs, size_t count, size_t items,
                   size_t *distribution, double *rational)
{
    assert (procs);
    assert (count >= 1);
    assert (distribution);
    double *shares = (double *) malloc (count * sizeof (double));
    assert (shares);
    double time;
    if (s_solve_rational (procs, count, items, shares, &time)) {
        free (shares);
        return -1;
    }
    s_round (shares, count, items, distribution);
    free (shares);
    if (rational)
        *rational = time;
    return scatter_makespan (procs, count, distribution);
}

double
scatter_heuristic_bound (const scatter_proc_t *procs, size_t count)
{
    assert (procs);
    double bound = 0, slowest = 0;
    for (size_t proc = 0; proc < count; proc++) {
        bound += procs [proc].comm_fixed + procs [proc].comm_per_item;
        slowest = fmax (slowest, procs [proc].comp_fixed
                                 + procs [proc].comp_per_item);
    }
    return bound + slowest;
}

double
scatter_uniform (const scatter_proc_t *procs, size_t count, size_t items,
                 size_t *distribution)
{
    assert (procs);
    assert (count >= 1);
    for (size_t proc = 0; proc < count; proc++)
        distribution [proc] = items / count + (proc < items % count);
    return scatter_makespan (procs, count, distribution);
}

void
scatter_order_by_bandwidth (const scatter_proc_t *procs, size_t count,
                            size_t root, size_t *order)
{
    assert (procs);
    assert (root < count);
    size_t placed = 0;
    for (size_t proc = 0; proc < count; proc++)
        if (proc != root)
            order [placed++] = proc;
    //  Insertion sort: count is the number of processors, and stable
    for (size_t index = 1; index < placed; index++) {
        size_t proc = order [index];
        size_t at = index;
        while (at > 0) {
            const scatter_proc_t *before = &procs [order [at - 1]];
            bool slower = before->comm_per_item > procs [proc].comm_per_item
                       || (before->comm_per_item == procs [proc].comm_per_item
                           && before->comm_fixed > procs [proc].comm_fixed);
            if (!slower)
                break;
            order [at] = order [at - 1];
            at--;
        }
        order [at] = proc;
    }
    order [placed] = root;
}

size_t
scatter_best_root (const scatter_proc_t *procs, size_t count,
                   const double *per_item, const double *fetch,
                   size_t items, double *time)
{
    assert (procs);
    assert (per_item && fetch);
    scatter_proc_t *seen = (scatter_proc_t *) malloc (count
                                                      * sizeof (*seen));
    scatter_proc_t *ordered = (scatter_proc_t *) malloc (count
                                                         * sizeof (*seen));
    size_t *order = (size_t *) malloc (count * sizeof (size_t));
    size_t *distribution = (size_t *) malloc (count * sizeof (size_t));
    assert (seen && ordered && order && distribution);
    size_t best_root = 0;
    double best = INFINITY;
    for (size_t root = 0; root < count; root++) {
        //  The processors as seen from this root
        for (size_t proc = 0; proc < count; proc++) {
            seen [proc] = procs [proc];
            seen [proc].comm_per_item = per_item [root * count + proc];
            if (proc == root)
                seen [proc].comm_fixed = 0;
        }
        scatter_order_by_bandwidth (seen, count, root, order);
        for (size_t index = 0; index < count; index++)
            ordered [index] = seen [order [index]];
        double total = fetch [root]
                     + scatter_heuristic (ordered, count, items,
                                          distribution, NULL);
        if (total < best) {
            best = total;
            best_root = root;
        }
    }
    free (seen);
    free (ordered);
    free (order);
    free (distribution);
    if (time)
        *time = best;
    return best_root;
}
