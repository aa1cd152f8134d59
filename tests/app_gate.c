/*  =========================================================================
    app_gate - a test application whose tasks set up only when told to

    tests/test_resume_start.sh builds it as a plugin.  Each task's setup
    writes GATE.setup-RANK, then waits (at most a minute) until the file
    GATE exists: a test can so hold every task between its ASSIGN and its
    ACCEPT, and act on progress rather than on the clock.  The problem is
    x = b with b all ones (A = I): one iteration solves it.
    =========================================================================
*/
#include <jace.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int64_t rows;
} problem_t;

typedef struct {
    int64_t first;
    int64_t count;
    double *x;
} state_t;

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    double rows;
    if (jace_param_number (params, "problem/n", 100, 1, 1e6, &rows, reason,
                           reason_size))
        return NULL;
    if (!zhash_lookup (params, "gate/file")) {
        snprintf (reason, reason_size, "gate/file is required");
        return NULL;
    }
    problem_t *problem = (problem_t *) calloc (1, sizeof *problem);
    if (problem)
        problem->rows = (int64_t) rows;
    return problem;
}

static void
s_unload (void **problem_p)
{
    free (*problem_p);
    *problem_p = NULL;
}

static void
s_shape (void *problem, int64_t *rows, int64_t *unknowns_per_row)
{
    *rows = ((problem_t *) problem)->rows;
    *unknowns_per_row = 1;
}

//  ||b - x|| / ||b|| with b all ones
static double
s_residual (void *problem, const double *x, int64_t n)
{
    (void) problem;
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += (1 - x [i]) * (1 - x [i]);
    return sqrt (sum / (double) n);
}

//  Mark that setup began, then wait for the gate to open.
static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    const char *gate = jace_task_param (task, "gate/file");
    char path [4096];
    snprintf (path, sizeof path, "%s.setup-%" PRId64, gate,
              jace_task_rank (task));
    FILE *mark = fopen (path, "w");
    if (mark)
        fclose (mark);
    for (int tries = 0; access (gate, F_OK) != 0; tries++) {
        if (tries == 6000) {
            snprintf (reason, reason_size, "%s never appeared", gate);
            return NULL;
        }
        usleep (10000);
    }
    state_t *self = (state_t *) calloc (1, sizeof *self);
    self->first = jace_task_first_row (task);
    self->count = jace_task_row_count (task);
    self->x = (double *) calloc ((size_t) self->count + 1, sizeof (double));
    return self;
}

static int
s_iterate (jace_task_t *task, void *state)
{
    state_t *self = (state_t *) state;
    double change = 0;
    for (int64_t i = 0; i < self->count; i++) {
        change = fmax (change, fabs (1 - self->x [i]));
        self->x [i] = 1;
    }
    jace_task_set_change (task, change);
    return 0;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    state_t *self = (state_t *) state;
    *first = self->first;
    *count = (size_t) self->count;
    return self->x;
}

static void
s_destroy (void **state_p)
{
    state_t *self = (state_t *) *state_p;
    if (self)
        free (self->x);
    free (self);
    *state_p = NULL;
}

static const char *const s_keys [] = { "problem/n", "gate/file", NULL };

static const jace_app_t s_gate = {
    .abi = JACE_APP_ABI,
    .name = "gate",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .keys = s_keys
};

const jace_app_t *
jace_app (void)
{
    return &s_gate;
}
