/*  =========================================================================
    test_spawner_rebalance - the decision to cut a job's rows again

    Rows go in proportion to the rates the tasks measured (rows per
    second of computing); a cut within the threshold of its fair shares
    stays; every task keeps a row; the blocks cover the job's rows in
    order.
    =========================================================================
*/
#include "spawner_rebalance.h"
#include "tap.h"

#include <czmq.h>

//  True if first (count + 1 starts) cuts `rows` in order, a row each
static bool
s_covers (const int64_t *first, size_t count, int64_t rows)
{
    if (first [0] != 0 || first [count] != rows)
        return false;
    for (size_t i = 0; i < count; i++)
        if (first [i + 1] <= first [i])
            return false;
    return true;
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (14);
    int64_t even [3] = { 0, 100, 200 };
    int64_t next [8];           //  Room for the largest case below
    double drift;

    //  Equal blocks, one node four times slower: 4:1 in rows per second
    double slow [2] = { 1000, 4000 };
    bool change = spawner_rebalance_plan (even, slow, 2, 0.25, 1, next, &drift);
    ok (change, "a task four times slower than its peer calls for a new cut");
    ok (next [1] == 160 && s_covers (next, 2, 200),
        "the rows go 160:40, in proportion to the rates");
    is_double (drift, 1.5, 1e-9, "the slow task holds 2.5 times its share");

    //  Half a step: halfway to the fair cut
    change = spawner_rebalance_plan (even, slow, 2, 0.25, 0.5, next, &drift);
    ok (change && next [1] == 130 && s_covers (next, 2, 200),
        "half a step goes 130:70, halfway to 160:40");
    is_double (drift, 1.5, 1e-9, "the drift is the full one all the same");

    //  The new cut, measured again at the same speed per row: balanced
    int64_t fair [3] = { 0, 160, 200 };
    double balanced [2] = { 1600, 1600 };
    change = spawner_rebalance_plan (fair, balanced, 2, 0.25, 1, next, &drift);
    ok (!change, "a cut the rates agree with stays");
    is_double (drift, 0, 1e-9, "with no drift");

    //  A drift under the threshold stays, over it moves
    double mild [2] = { 1000, 1200 };
    change = spawner_rebalance_plan (even, mild, 2, 0.25, 1, next, &drift);
    ok (!change && drift < 0.25, "a drift of 10% under a 25% threshold stays");
    change = spawner_rebalance_plan (even, mild, 2, 0.05, 1, next, &drift);
    ok (change && next [1] > 100, "and moves rows over a 5% threshold");

    //  A crawling task keeps one row
    int64_t four [5] = { 0, 1, 2, 3, 4 };
    double crawl [4] = { 1, 1, 1, 1e9 };
    change = spawner_rebalance_plan (four, crawl, 4, 0.25, 1, next, &drift);
    ok (!change && s_covers (next, 4, 4),
        "one row each cannot move: the cut stays whole");
    int64_t wide [4] = { 0, 500, 1000, 1500 };
    double three [3] = { 1, 1, 1e7 };
    spawner_rebalance_plan (wide, three, 3, 0.25, 1, next, &drift);
    ok (s_covers (next, 3, 1500) && next [3] - next [2] == 1,
        "a task ten million times slower keeps one row");

    //  Uneven blocks that each take the same time: their nodes' speeds
    //  differ as their rows do, so the cut is fair and stays
    int64_t uneven [4] = { 0, 10, 110, 400 };
    double same_time [3] = { 500, 500, 500 };
    change = spawner_rebalance_plan (uneven, same_time, 3, 0.01, 1, next,
                                     &drift);
    ok (!change && drift < 1e-9,
        "blocks that each take the same time to iterate are fair");

    //  One task: nothing to share
    int64_t one [2] = { 0, 50 };
    double alone [1] = { 123 };
    change = spawner_rebalance_plan (one, alone, 1, 0, 1, next, &drift);
    ok (!change && next [0] == 0 && next [1] == 50, "a single task stays");

    //  Many tasks: shares within a row of the exact ones
    enum { MANY = 7 };
    int64_t start [MANY + 1];
    double usecs [MANY];
    for (size_t i = 0; i <= MANY; i++)
        start [i] = (int64_t) i * 1000;
    double total = 0;
    for (size_t i = 0; i < MANY; i++) {
        usecs [i] = 1000.0 * (double) (i + 1);
        total += 1.0 / (double) (i + 1);
    }
    spawner_rebalance_plan (start, usecs, MANY, 0.25, 1, next, &drift);
    bool close = s_covers (next, MANY, MANY * 1000);
    for (size_t i = 0; i < MANY; i++) {
        double exact = MANY * 1000.0 / (double) (i + 1) / total;
        if (fabs ((double) (next [i + 1] - next [i]) - exact) > 1.0)
            close = false;
    }
    ok (close, "seven tasks of rates 1 .. 1/7 get their shares within a row");
    return tap_done ();
}
