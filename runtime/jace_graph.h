/*  =========================================================================
    jace_graph - what an application tells the mapping about its tasks

    The task interaction graph of MAHEVE section 3.1 as an application
    describes it (jace_app_t.describe): each task's floating-point work
    per iteration (e_i) and the values each task needs from each other
    one per iteration (c_ij).  The spawner turns it into the mapping
    library's graph; the runtime keeps it as plain numbers.
    =========================================================================
*/
#ifndef JACE_GRAPH_H_INCLUDED
#define JACE_GRAPH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_graph_t jace_graph_t;

//  A graph of `tasks` tasks (> 0) of cost 0 and no needs.
jace_graph_t *
    jace_graph_new (int64_t tasks);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    jace_graph_destroy (jace_graph_t **self_p);

//  Set the work of `task` per iteration, in flops (finite, >= 0; other
//  values and out-of-range tasks are ignored and counted as errors).
void
    jace_graph_set_cost (jace_graph_t *self, int64_t task, double flops);

//  Add `values` (finite, > 0) doubles per iteration that `task` needs from
//  `from` (another task).  Repeated pairs add up.
void
    jace_graph_add_need (jace_graph_t *self, int64_t task, int64_t from,
                         double values);

//  Number of tasks.
int64_t
    jace_graph_tasks (const jace_graph_t *self);

//  Work of a task (flops per iteration).
double
    jace_graph_cost (const jace_graph_t *self, int64_t task);

//  Distinct (task, from) pairs with needs, and pair number `index`.
size_t
    jace_graph_need_count (const jace_graph_t *self);
void
    jace_graph_need (const jace_graph_t *self, size_t index, int64_t *task,
                     int64_t *from, double *values);

//  Calls that were ignored (bad task, cost or amount): a describe that
//  made any is an application bug the spawner reports.
size_t
    jace_graph_errors (const jace_graph_t *self);

#ifdef __cplusplus
}
#endif

#endif
