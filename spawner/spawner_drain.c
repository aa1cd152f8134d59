/*  =========================================================================
    spawner_drain - the order in which a drain moves a cluster's tasks

    The traffic of a drain is one transfer per moved task, from the
    drained cluster to the task's new daemon: a bipartite graph whose
    senders and receivers are the tasks, weights on the diagonal.  GGP
    and OGGP group those transfers into steps of at most k; eta_o tells
    whether that beats letting the transport share the backbone.
    =========================================================================
*/
#include "spawner_drain.h"
#include "collectives.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define NO_GROUP ((size_t) -1)
#define MIN_SECONDS 1e-6

struct _spawner_drain_t {
    const char *used;           //  Schedule used (a static name)
    double scheduled;           //  Predicted: OGGP's cost, seconds
    double at_once;             //  Predicted: eta_o + beta, seconds
    size_t *tasks;              //  Ranks, in step order
    size_t *step_start;         //  Index in tasks of each step, and end
    size_t step_count;          //  Steps
};

static const char *s_schedules [] = { "auto", "oggp", "ggp", "all", "one" };
#define SCHEDULES (sizeof s_schedules / sizeof s_schedules [0])

bool
spawner_drain_schedule_known (const char *schedule)
{
    for (size_t i = 0; schedule && i < SCHEDULES; i++)
        if (strcmp (schedule, s_schedules [i]) == 0)
            return true;
    return false;
}

//  Step of each task (index into ranks) in a GGP or OGGP schedule of the
//  diagonal traffic matrix: the first step that carries part of its
//  transfer.
static void
s_kpbs_groups (bool optimal, const double *w, size_t count, size_t k,
               double beta, size_t *group)
{
    ggp_schedule_t *schedule = optimal
                             ? oggp_schedule (w, count, count, k, beta)
                             : ggp_schedule (w, count, count, k, beta);
    for (size_t i = 0; i < count; i++)
        group [i] = NO_GROUP;
    size_t steps = schedule ? ggp_schedule_step_count (schedule) : 0;
    for (size_t step = 0; step < steps; step++)
        for (size_t t = 0; t < ggp_schedule_step_size (schedule, step); t++) {
            const ggp_transfer_t *transfer =
                ggp_schedule_transfer (schedule, step, t);
            if (transfer->sender < count
            &&  group [transfer->sender] == NO_GROUP)
                group [transfer->sender] = step;
        }
    //  Every weight is positive, so each task has a step; were the
    //  schedule missing (no memory), all would move in the first.
    for (size_t i = 0; i < count; i++)
        if (group [i] == NO_GROUP)
            group [i] = 0;
    ggp_schedule_destroy (&schedule);
}

//  True if member i exchanges values with an earlier member in sub-step s
static bool
s_clashes (const size_t *members, const size_t *sub, size_t i, size_t s,
           spawner_drain_neighbours_fn *neighbours, void *arg)
{
    for (size_t j = 0; j < i; j++)
        if (sub [j] == s && neighbours (members [i], members [j], arg))
            return true;
    return false;
}

//  Lay the tasks out in steps: groups in order, each split greedily into
//  steps of tasks that do not exchange values (a task joins the first of
//  its group's steps it has no neighbour in).
static void
s_lay_out (spawner_drain_t *self, const size_t *ranks, const size_t *group,
           size_t count, spawner_drain_neighbours_fn *neighbours, void *arg)
{
    size_t *members = (size_t *) calloc (count, sizeof *members);
    size_t *sub = (size_t *) calloc (count, sizeof *sub);
    assert (members && sub);
    size_t laid = 0;
    for (size_t g = 0; laid < count; g++) {
        size_t member_count = 0;
        for (size_t i = 0; i < count; i++)
            if (group [i] == g)
                members [member_count++] = ranks [i];
        size_t subs = 0;
        for (size_t i = 0; i < member_count; i++) {
            size_t s = 0;
            while (s < subs && s_clashes (members, sub, i, s, neighbours,
                                          arg))
                s++;
            sub [i] = s;
            if (s == subs)
                subs++;
        }
        for (size_t s = 0; s < subs; s++) {
            self->step_start [self->step_count++] = laid;
            for (size_t i = 0; i < member_count; i++)
                if (sub [i] == s)
                    self->tasks [laid++] = members [i];
        }
    }
    self->step_start [self->step_count] = laid;
    free (members);
    free (sub);
}

spawner_drain_t *
spawner_drain_new (const char *schedule, const size_t *ranks,
                   const double *seconds, size_t count, size_t k,
                   double beta, spawner_drain_neighbours_fn *neighbours,
                   void *arg)
{
    assert (neighbours && k >= 1);
    if (!spawner_drain_schedule_known (schedule))
        return NULL;
    spawner_drain_t *self = (spawner_drain_t *) calloc (1, sizeof *self);
    size_t slots = count ? count : 1;
    self->tasks = (size_t *) calloc (slots, sizeof (size_t));
    self->step_start = (size_t *) calloc (slots + 1, sizeof (size_t));
    size_t *group = (size_t *) calloc (slots, sizeof (size_t));
    double *w = (double *) calloc (slots * slots, sizeof (double));
    assert (self && self->tasks && self->step_start && group && w);
    //  Every task's state takes some time: a weight of 0 would keep it
    //  out of the schedule's steps
    for (size_t i = 0; i < count; i++)
        w [i * count + i] = seconds [i] > MIN_SECONDS ? seconds [i]
                                                      : MIN_SECONDS;
    bool pays = count > 0
             && eta_scheduling_pays (w, count, count, k, beta,
                                     &self->scheduled, &self->at_once);
    self->used = strcmp (schedule, "auto") == 0 ? (pays ? "oggp" : "all")
               : schedule;
    if (strcmp (self->used, "oggp") == 0 || strcmp (self->used, "ggp") == 0)
        s_kpbs_groups (strcmp (self->used, "oggp") == 0, w, count, k, beta,
                       group);
    else
        for (size_t i = 0; i < count; i++)
            group [i] = strcmp (self->used, "one") == 0 ? i : 0;
    if (count)
        s_lay_out (self, ranks, group, count, neighbours, arg);
    free (group);
    free (w);
    return self;
}

void
spawner_drain_destroy (spawner_drain_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        spawner_drain_t *self = *self_p;
        free (self->tasks);
        free (self->step_start);
        free (self);
        *self_p = NULL;
    }
}

const char *
spawner_drain_used (spawner_drain_t *self)
{
    assert (self);
    return self->used;
}

void
spawner_drain_predicted (spawner_drain_t *self, double *scheduled,
                         double *at_once)
{
    assert (self);
    if (scheduled)
        *scheduled = self->scheduled;
    if (at_once)
        *at_once = self->at_once;
}

size_t
spawner_drain_step_count (spawner_drain_t *self)
{
    assert (self);
    return self->step_count;
}

size_t
spawner_drain_step_size (spawner_drain_t *self, size_t step)
{
    assert (self && step < self->step_count);
    return self->step_start [step + 1] - self->step_start [step];
}

size_t
spawner_drain_step_task (spawner_drain_t *self, size_t step, size_t i)
{
    assert (self && i < spawner_drain_step_size (self, step));
    return self->tasks [self->step_start [step] + i];
}
