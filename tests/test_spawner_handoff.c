/*  =========================================================================
    test_spawner_handoff - the steps of a rebalance's slices

    Slices inside a cluster are always asked at once; between clusters
    `all` asks them at once too, OGGP and GGP give each transfer a step
    so that no step holds two transfers of one sender or one receiver,
    nor more than k, `auto` follows eta_o's verdict, and a link not
    measured schedules nothing.
    =========================================================================
*/
#include "spawner_handoff.h"
#include "collectives.h"
#include "tap.h"

#include <czmq.h>
#include <stdlib.h>
#include <string.h>

#define TASKS 6
#define CLUSTERS 2

//  Tasks 0-2 in cluster 0, 3-5 in cluster 1; a rebalance that moves rows
//  across the cut between them and between neighbours inside each.
static const size_t s_cluster [TASKS] = { 0, 0, 0, 1, 1, 1 };

static void
s_traffic (double *bytes)
{
    memset (bytes, 0, TASKS * TASKS * sizeof (double));
    for (size_t i = 0; i < TASKS; i++)
        bytes [i * TASKS + i] = 4e6;            //  Its own rows
    for (size_t i = 0; i + 1 < TASKS; i++) {
        bytes [i * TASKS + i + 1] = 1e6 * (double) (i + 1);
        bytes [(i + 1) * TASKS + i] = 5e5;
    }
    //  Cross traffic of other sizes, both ways
    bytes [0 * TASKS + 4] = 3e6;
    bytes [1 * TASKS + 5] = 2e6;
    bytes [4 * TASKS + 1] = 2.5e6;
    bytes [5 * TASKS + 0] = 1e6;
}

//  The steps honour KPBS: at most k transfers between clusters a step,
//  each sender and receiver in one of them; inside a cluster, step 0.
static bool
s_sound (const double *bytes, const size_t *step, size_t k)
{
    size_t steps = 0;
    for (size_t e = 0; e < TASKS * TASKS; e++)
        if (step [e] + 1 > steps)
            steps = step [e] + 1;
    for (size_t s = 0; s < steps; s++) {
        size_t in_step = 0;
        bool sends [TASKS] = { false }, receives [TASKS] = { false };
        for (size_t i = 0; i < TASKS; i++)
            for (size_t j = 0; j < TASKS; j++) {
                bool across = s_cluster [i] != s_cluster [j];
                if (!across && step [i * TASKS + j] != 0)
                    return false;
                if (!across || bytes [i * TASKS + j] <= 0
                ||  step [i * TASKS + j] != s)
                    continue;
                if (sends [i] || receives [j])
                    return false;
                sends [i] = receives [j] = true;
                in_step++;
            }
        if (in_step > k)
            return false;
    }
    return true;
}

int
main (void)
{
    tap_plan (10);
    double bytes [TASKS * TASKS];
    s_traffic (bytes);
    //  100 Mb/s between the clusters, 10 Gb/s inside
    double pace [CLUSTERS * CLUSTERS] = { 8e-10, 8e-8, 8e-8, 8e-10 };
    size_t step [TASKS * TASKS];
    spawner_handoff_plan_t plan;

    ok (spawner_handoff_plan ("sometimes", bytes, s_cluster, TASKS, pace,
                              CLUSTERS, 1, 0.02, step, &plan) == -1,
        "an unknown schedule is refused");

    spawner_handoff_plan ("all", bytes, s_cluster, TASKS, pace, CLUSTERS, 2,
                          0.02, step, &plan);
    bool zero = true;
    for (size_t e = 0; e < TASKS * TASKS; e++)
        zero &= step [e] == 0;
    ok (zero && streq (plan.used, "all") && plan.steps == 1,
        "all: every slice is asked at once");
    diag ("%zu transfers between clusters, %.0f bytes", plan.transfers,
          plan.bytes);
    ok (plan.transfers == 6 && plan.bytes == 3e6 + 5e5 + 3e6 + 2e6 + 2.5e6
                                             + 1e6,
        "the transfers between clusters and their bytes are counted");

    spawner_handoff_plan ("oggp", bytes, s_cluster, TASKS, pace, CLUSTERS, 1,
                          0.02, step, &plan);
    diag ("OGGP, k = 1: %zu steps", plan.steps);
    ok (streq (plan.used, "oggp") && plan.steps >= 6
        && s_sound (bytes, step, 1),
        "OGGP with k = 1: one transfer between clusters a step");
    spawner_handoff_plan ("oggp", bytes, s_cluster, TASKS, pace, CLUSTERS, 2,
                          0.02, step, &plan);
    ok (s_sound (bytes, step, 2), "OGGP with k = 2: at most two a step, "
        "each task in one");
    spawner_handoff_plan ("ggp", bytes, s_cluster, TASKS, pace, CLUSTERS, 2,
                          0.02, step, &plan);
    ok (streq (plan.used, "ggp") && s_sound (bytes, step, 2),
        "GGP with k = 2 likewise");

    //  auto follows eta_o: with three transfers at a time and no step
    //  cost scheduling wins here; with one at a time and 20 ms a step it
    //  loses, and everything goes at once
    double w [TASKS * TASKS] = { 0 };
    for (size_t i = 0; i < TASKS; i++)
        for (size_t j = 0; j < TASKS; j++)
            if (s_cluster [i] != s_cluster [j])
                w [i * TASKS + j] = bytes [i * TASKS + j] * 8e-8;
    double scheduled, at_once;
    bool pays = eta_scheduling_pays (w, TASKS, TASKS, 3, 0, &scheduled,
                                     &at_once);
    spawner_handoff_plan ("auto", bytes, s_cluster, TASKS, pace, CLUSTERS, 3,
                          0, step, &plan);
    diag ("auto, k = 3, beta 0: %s, %.3f s scheduled against %.3f s at "
          "once", plan.used, scheduled, at_once);
    ok (pays && streq (plan.used, "oggp") && plan.scheduled_s == scheduled
        && plan.at_once_s == at_once && s_sound (bytes, step, 3),
        "auto takes OGGP where eta_o says it pays");
    pays = eta_scheduling_pays (w, TASKS, TASKS, 1, 0.02, NULL, NULL);
    spawner_handoff_plan ("auto", bytes, s_cluster, TASKS, pace, CLUSTERS, 1,
                          0.02, step, &plan);
    ok (!pays && streq (plan.used, "all"), "and sends at once where it "
        "does not");

    //  A link not measured: nothing to predict, nothing scheduled
    double unmeasured [CLUSTERS * CLUSTERS] = { 8e-10, 0, 8e-8, 8e-10 };
    spawner_handoff_plan ("oggp", bytes, s_cluster, TASKS, unmeasured,
                          CLUSTERS, 1, 0.02, step, &plan);
    zero = true;
    for (size_t e = 0; e < TASKS * TASKS; e++)
        zero &= step [e] == 0;
    ok (zero && streq (plan.used, "all"),
        "a link not measured schedules nothing");

    //  One cluster: nothing crosses
    size_t one [TASKS] = { 0 };
    spawner_handoff_plan ("oggp", bytes, one, TASKS, pace, CLUSTERS, 1,
                          0.02, step, &plan);
    ok (plan.transfers == 0 && streq (plan.used, "all"),
        "in one cluster nothing is scheduled");
    return tap_done ();
}
