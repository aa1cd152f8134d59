/*  =========================================================================
    spawner_handoff - the order in which a rebalance's slices cross
    between clusters
    =========================================================================
*/
#include "spawner_handoff.h"
#include "collectives.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define NO_STEP ((size_t) -1)

static const char *s_schedules [] = { "auto", "oggp", "ggp", "all" };
#define SCHEDULES (sizeof s_schedules / sizeof s_schedules [0])

bool
spawner_handoff_schedule_known (const char *schedule)
{
    for (size_t i = 0; schedule && i < SCHEDULES; i++)
        if (strcmp (schedule, s_schedules [i]) == 0)
            return true;
    return false;
}

//  The traffic between clusters in seconds at full speed, into w; false
//  when some of it crosses a link not measured (nothing can be
//  predicted).  Counts the transfers and their bytes into plan.
static bool
s_traffic (const double *bytes, const size_t *cluster, size_t count,
           const double *seconds_per_byte, size_t clusters, double *w,
           spawner_handoff_plan_t *plan)
{
    bool measured = true;
    for (size_t i = 0; i < count; i++)
        for (size_t j = 0; j < count; j++) {
            size_t a = cluster [i], b = cluster [j];
            if (a == b || bytes [i * count + j] <= 0)
                continue;
            assert (a < clusters && b < clusters);
            double pace = seconds_per_byte [a * clusters + b];
            measured &= pace > 0;
            w [i * count + j] = bytes [i * count + j] * pace;
            plan->transfers++;
            plan->bytes += bytes [i * count + j];
        }
    return measured;
}

//  Each transfer's step: the first of the schedule that carries part of
//  it.
static void
s_steps (bool optimal, const double *w, size_t count, size_t k, double beta,
         size_t *step, spawner_handoff_plan_t *plan)
{
    ggp_schedule_t *schedule = optimal ? oggp_schedule (w, count, count, k,
                                                        beta)
                                       : ggp_schedule (w, count, count, k,
                                                       beta);
    for (size_t e = 0; e < count * count; e++)
        step [e] = w [e] > 0 ? NO_STEP : 0;
    plan->steps = schedule ? ggp_schedule_step_count (schedule) : 1;
    for (size_t s = 0; schedule && s < plan->steps; s++)
        for (size_t t = 0; t < ggp_schedule_step_size (schedule, s); t++) {
            const ggp_transfer_t *transfer = ggp_schedule_transfer (schedule,
                                                                    s, t);
            size_t e = transfer->sender * count + transfer->receiver;
            if (transfer->sender < count && transfer->receiver < count
            &&  step [e] == NO_STEP)
                step [e] = s;
        }
    //  Every transfer has a step; were the schedule missing (no memory),
    //  all would go in the first.
    for (size_t e = 0; e < count * count; e++)
        if (step [e] == NO_STEP)
            step [e] = 0;
    ggp_schedule_destroy (&schedule);
}

int
spawner_handoff_plan (const char *schedule, const double *bytes,
                      const size_t *cluster, size_t count,
                      const double *seconds_per_byte, size_t clusters,
                      size_t k, double beta, size_t *step,
                      spawner_handoff_plan_t *plan)
{
    assert (bytes && cluster && seconds_per_byte && step && plan);
    assert (k >= 1);
    if (!spawner_handoff_schedule_known (schedule))
        return -1;
    memset (plan, 0, sizeof *plan);
    plan->used = "all";
    plan->steps = 1;
    memset (step, 0, count * count * sizeof (size_t));
    double *w = (double *) calloc (count * count + 1, sizeof (double));
    assert (w);
    bool measured = s_traffic (bytes, cluster, count, seconds_per_byte,
                               clusters, w, plan);
    bool pays = false;
    if (measured && plan->transfers > 0)
        pays = eta_scheduling_pays (w, count, count, k, beta,
                                    &plan->scheduled_s, &plan->at_once_s);
    //  Without a measure of every link crossed, nothing is scheduled
    if (measured && plan->transfers > 0 && strcmp (schedule, "all") != 0)
        plan->used = strcmp (schedule, "auto") == 0 ? (pays ? "oggp" : "all")
                   : schedule;
    if (strcmp (plan->used, "all") != 0)
        s_steps (strcmp (plan->used, "oggp") == 0, w, count, k, beta, step,
                 plan);
    free (w);
    return 0;
}
