/*  =========================================================================
    spawner_rebalance - whether a running job's rows should be shared out
    again, and how
    =========================================================================
*/
#include "spawner_rebalance.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

//  Block starts `step` of the way from `current` to the shares of
//  `rates`, each block one row at least: the cumulative starts rounded,
//  then pushed apart where rounding left a block empty.
static void
s_cut (const int64_t *current, const double *rates, double total,
       size_t count, double step, int64_t *first)
{
    int64_t rows = current [count];
    double before = 0;
    first [0] = 0;
    for (size_t i = 1; i < count; i++) {
        before += rates [i - 1];
        double fair = (double) rows * before / total;
        int64_t start = (int64_t) llround ((double) current [i]
                                           + step * (fair
                                                     - (double) current [i]));
        int64_t lowest = first [i - 1] + 1;
        int64_t highest = rows - (int64_t) (count - i);
        first [i] = start < lowest ? lowest : start > highest ? highest
                  : start;
    }
    first [count] = rows;
}

bool
spawner_rebalance_plan (const int64_t *first_row,
                        const double *usecs_per_iteration, size_t count,
                        double threshold, double step, int64_t *new_first,
                        double *drift)
{
    assert (first_row && usecs_per_iteration && new_first && drift);
    assert (count >= 1 && step > 0 && step <= 1);
    int64_t rows = first_row [count];
    assert (rows >= (int64_t) count);
    double *rates = (double *) malloc (count * sizeof (double));
    assert (rates);
    double total = 0;
    for (size_t i = 0; i < count; i++) {
        assert (usecs_per_iteration [i] > 0);
        int64_t own = first_row [i + 1] - first_row [i];
        rates [i] = (double) (own > 0 ? own : 1) * 1e6
                  / usecs_per_iteration [i];
        total += rates [i];
    }
    *drift = 0;
    for (size_t i = 0; i < count; i++) {
        double fair = (double) rows * rates [i] / total;
        double own = (double) (first_row [i + 1] - first_row [i]);
        double off = fabs (own - fair) / fair;
        if (off > *drift)
            *drift = off;
    }
    s_cut (first_row, rates, total, count, step, new_first);
    free (rates);
    bool differs = false;
    for (size_t i = 0; i <= count; i++)
        differs |= new_first [i] != first_row [i];
    return differs && *drift > threshold;
}
