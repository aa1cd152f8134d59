/*  =========================================================================
    jace_graph - what an application tells the mapping about its tasks

    Needs are kept in a hash keyed by the (task, from) pair, so a describe
    that adds the same pair row by row costs one entry, not one per call.
    =========================================================================
*/
#include <czmq.h>
#include <math.h>
#include "jace_graph.h"

typedef struct {
    int64_t task;               //  Who needs
    int64_t from;               //  Whose values
    double values;              //  Doubles per iteration
} need_t;

struct _jace_graph_t {
    int64_t tasks;              //  Tasks in the graph
    double *cost;               //  Flops per iteration, per task
    zhashx_t *index;            //  "task/from" -> position in needs + 1
    need_t *needs;              //  Distinct pairs, in order of arrival
    size_t need_count;          //  Entries used in needs
    size_t need_room;           //  Entries allocated
    size_t errors;              //  Ignored calls
};

jace_graph_t *
jace_graph_new (int64_t tasks)
{
    if (tasks <= 0)
        return NULL;
    jace_graph_t *self = (jace_graph_t *) zmalloc (sizeof *self);
    self->tasks = tasks;
    self->cost = (double *) zmalloc ((size_t) tasks * sizeof (double));
    self->index = zhashx_new ();
    return self;
}

void
jace_graph_destroy (jace_graph_t **self_p)
{
    assert (self_p);
    jace_graph_t *self = *self_p;
    if (!self)
        return;
    free (self->cost);
    free (self->needs);
    zhashx_destroy (&self->index);
    free (self);
    *self_p = NULL;
}

static bool
s_task_valid (const jace_graph_t *self, int64_t task)
{
    return task >= 0 && task < self->tasks;
}

void
jace_graph_set_cost (jace_graph_t *self, int64_t task, double flops)
{
    assert (self);
    if (!s_task_valid (self, task) || !isfinite (flops) || flops < 0) {
        self->errors++;
        return;
    }
    self->cost [task] = flops;
}

void
jace_graph_add_need (jace_graph_t *self, int64_t task, int64_t from,
                     double values)
{
    assert (self);
    if (!s_task_valid (self, task) || !s_task_valid (self, from)
    ||  task == from || !isfinite (values) || values <= 0) {
        self->errors++;
        return;
    }
    char key [48];
    snprintf (key, sizeof key, "%" PRId64 "/%" PRId64, task, from);
    size_t position = (size_t) (uintptr_t) zhashx_lookup (self->index, key);
    if (position) {
        self->needs [position - 1].values += values;
        return;
    }
    if (self->need_count == self->need_room) {
        self->need_room = self->need_room ? 2 * self->need_room : 64;
        self->needs = (need_t *) realloc (self->needs,
                                          self->need_room * sizeof (need_t));
        assert (self->needs);
    }
    self->needs [self->need_count++] = (need_t) { task, from, values };
    zhashx_insert (self->index, key, (void *) (uintptr_t) self->need_count);
}

int64_t
jace_graph_tasks (const jace_graph_t *self)
{
    assert (self);
    return self->tasks;
}

double
jace_graph_cost (const jace_graph_t *self, int64_t task)
{
    assert (self);
    return s_task_valid (self, task) ? self->cost [task] : 0;
}

size_t
jace_graph_need_count (const jace_graph_t *self)
{
    assert (self);
    return self->need_count;
}

void
jace_graph_need (const jace_graph_t *self, size_t index, int64_t *task,
                 int64_t *from, double *values)
{
    assert (self);
    assert (index < self->need_count);
    *task = self->needs [index].task;
    *from = self->needs [index].from;
    *values = self->needs [index].values;
}

size_t
jace_graph_errors (const jace_graph_t *self)
{
    assert (self);
    return self->errors;
}
