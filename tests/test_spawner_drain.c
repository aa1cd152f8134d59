/*  =========================================================================
    test_spawner_drain - the steps of a drain

    Every task moves exactly once; no step ever holds two tasks that
    exchange values (their checkpoint copies must stay on running
    daemons); `one` moves them one by one, `all` as few steps as that
    rule allows, OGGP and GGP at most k per step before the split, and
    `auto` follows eta_o's verdict.
    =========================================================================
*/
#include "spawner_drain.h"
#include "collectives.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TASKS 40

//  A task graph as an adjacency matrix
typedef struct {
    bool edge [MAX_TASKS][MAX_TASKS];
} graph_t;

static bool
s_neighbours (size_t first, size_t second, void *arg)
{
    graph_t *graph = (graph_t *) arg;
    return graph->edge [first][second];
}

static void
s_chain (graph_t *graph, size_t count)
{
    memset (graph, 0, sizeof *graph);
    for (size_t i = 0; i + 1 < count; i++)
        graph->edge [i][i + 1] = graph->edge [i + 1][i] = true;
}

//  Each of `count` ranks in exactly one step, and no step with two
//  neighbours; the largest step's size in *widest.
static bool
s_sound (spawner_drain_t *drain, const size_t *ranks, size_t count,
         graph_t *graph, size_t *widest)
{
    int seen [MAX_TASKS] = { 0 };
    size_t total = 0;
    *widest = 0;
    for (size_t step = 0; step < spawner_drain_step_count (drain); step++) {
        size_t size = spawner_drain_step_size (drain, step);
        if (size == 0)
            return false;
        *widest = size > *widest ? size : *widest;
        for (size_t i = 0; i < size; i++) {
            size_t a = spawner_drain_step_task (drain, step, i);
            seen [a]++;
            total++;
            for (size_t j = 0; j < i; j++)
                if (graph->edge [a][spawner_drain_step_task (drain, step,
                                                             j)])
                    return false;
        }
    }
    for (size_t i = 0; i < count; i++)
        if (seen [ranks [i]] != 1)
            return false;
    return total == count;
}

int
main (void)
{
    tap_plan (11);
    graph_t graph;
    size_t ranks [MAX_TASKS];
    double seconds [MAX_TASKS];
    size_t widest;

    //  Tasks 2..7 of a chain of 10 move, each 1 s of state
    s_chain (&graph, 10);
    for (size_t i = 0; i < 6; i++) {
        ranks [i] = i + 2;
        seconds [i] = 1;
    }
    ok (spawner_drain_new ("sideways", ranks, seconds, 6, 1, 0,
                           s_neighbours, &graph) == NULL
        && !spawner_drain_schedule_known ("sideways")
        && spawner_drain_schedule_known ("oggp"),
        "an unknown schedule is refused");

    spawner_drain_t *drain = spawner_drain_new ("one", ranks, seconds, 6, 2,
                                                0.01, s_neighbours, &graph);
    ok (spawner_drain_step_count (drain) == 6
        && spawner_drain_step_task (drain, 0, 0) == 2
        && spawner_drain_step_task (drain, 5, 0) == 7,
        "one: six steps of one task, in rank order");
    spawner_drain_destroy (&drain);

    drain = spawner_drain_new ("all", ranks, seconds, 6, 2, 0.01,
                               s_neighbours, &graph);
    ok (spawner_drain_step_count (drain) == 2
        && s_sound (drain, ranks, 6, &graph, &widest) && widest == 3,
        "all: a chain moves in two steps (every other task), no two "
        "neighbours together");
    spawner_drain_destroy (&drain);

    //  No edges among the movers: all is one step
    memset (&graph, 0, sizeof graph);
    drain = spawner_drain_new ("all", ranks, seconds, 6, 2, 0.01,
                               s_neighbours, &graph);
    ok (spawner_drain_step_count (drain) == 1
        && strcmp (spawner_drain_used (drain), "all") == 0,
        "all: independent tasks move in one step");
    spawner_drain_destroy (&drain);

    //  OGGP with k = 2 on independent tasks of unequal weights: at most
    //  2 per step (a transfer split over steps moves in its first), the
    //  heavy ones first (bottleneck matchings)
    double unequal [] = { 4, 1, 4, 1, 4, 1 };
    drain = spawner_drain_new ("oggp", ranks, unequal, 6, 2, 0.01,
                               s_neighbours, &graph);
    ok (s_sound (drain, ranks, 6, &graph, &widest) && widest <= 2
        && spawner_drain_step_count (drain) >= 3,
        "oggp, k = 2: steps of at most two, each task once");
    ok (spawner_drain_step_size (drain, 0) == 2
        && unequal [spawner_drain_step_task (drain, 0, 0) - 2] == 4
        && unequal [spawner_drain_step_task (drain, 0, 1) - 2] == 4,
        "oggp starts with two of the longest transfers");
    spawner_drain_destroy (&drain);
    drain = spawner_drain_new ("ggp", ranks, unequal, 6, 2, 0.01,
                               s_neighbours, &graph);
    ok (s_sound (drain, ranks, 6, &graph, &widest) && widest <= 2,
        "ggp, k = 2: at most two per step, each task once");
    spawner_drain_destroy (&drain);

    //  auto follows eta_o: the same decision as eta_scheduling_pays
    double w [36] = { 0 };
    for (size_t i = 0; i < 6; i++)
        w [i * 6 + i] = unequal [i];
    int agree = 0;
    double betas [] = { 0, 0.01, 1, 100 };
    for (size_t b = 0; b < 4; b++) {
        bool pays = eta_scheduling_pays (w, 6, 6, 2, betas [b], NULL, NULL);
        drain = spawner_drain_new ("auto", ranks, unequal, 6, 2, betas [b],
                                   s_neighbours, &graph);
        double scheduled, at_once;
        spawner_drain_predicted (drain, &scheduled, &at_once);
        agree += strcmp (spawner_drain_used (drain), pays ? "oggp" : "all")
                 == 0 && scheduled > 0 && at_once > 0;
        diag ("beta %g: %s (scheduled %.2f s, at once %.2f s)", betas [b],
              spawner_drain_used (drain), scheduled, at_once);
        spawner_drain_destroy (&drain);
    }
    is_int (agree, 4, "auto chooses oggp exactly when eta_o says "
            "scheduling pays");

    //  Random graphs, weights and k: always sound
    srand (7);
    int sound = 0, bounded = 0;
    const char *schedules [] = { "auto", "oggp", "ggp", "all", "one" };
    for (int trial = 0; trial < 200; trial++) {
        size_t count = 1 + (size_t) rand () % 30;
        memset (&graph, 0, sizeof graph);
        for (size_t a = 0; a < MAX_TASKS; a++)
            for (size_t b = 0; b < a; b++)
                graph.edge [a][b] = graph.edge [b][a] = rand () % 5 == 0;
        for (size_t i = 0; i < count; i++) {
            ranks [i] = (i * 7 + (size_t) trial) % MAX_TASKS;
            seconds [i] = rand () % 4 ? (double) (rand () % 100) / 10 : 0;
        }
        //  distinct ranks: 7 is prime to MAX_TASKS only if count <= 40
        size_t k = 1 + (size_t) rand () % 4;
        const char *schedule = schedules [trial % 5];
        drain = spawner_drain_new (schedule, ranks, seconds, count, k,
                                   (double) (rand () % 3) / 10,
                                   s_neighbours, &graph);
        sound += s_sound (drain, ranks, count, &graph, &widest);
        bounded += strcmp (spawner_drain_used (drain), "oggp")
                   && strcmp (spawner_drain_used (drain), "ggp")
                   ? 1 : widest <= k;
        spawner_drain_destroy (&drain);
    }
    is_int (sound, 200, "200 random drains: every task once, never two "
            "neighbours in a step");
    is_int (bounded, 200, "and KPBS schedules never more than k per step");
    drain = spawner_drain_new ("auto", ranks, seconds, 0, 1, 0,
                               s_neighbours, &graph);
    ok (drain && spawner_drain_step_count (drain) == 0,
        "nothing to move: no step");
    spawner_drain_destroy (&drain);
    return tap_done ();
}
