/*  =========================================================================
    spawner_faults - crashes a job file schedules, for reproducible runs
    =========================================================================
*/
#include "spawner_faults.h"
#include "jace_task.h"

#include <math.h>

#define LISTED_MAX 1024

struct _spawner_faults_t {
    int64_t every_msec;         //  Between rounds, 0 if no schedule
    int64_t first_msec;         //  Before the first round
    int64_t first_iteration;    //  Or: first round at this iteration
    bool first_by_every;        //  ... once every task is there, not the
                                //  first one (faults/first_iteration_by)
    int64_t first_fired;        //  When the first round fired (msec)
    int64_t count;              //  Daemons per round
    int64_t rounds;             //  Rounds at most, 0: no limit
    int64_t done;               //  Rounds reported so far
    uint64_t random;            //  Generator state (splitmix64)
    int64_t listed [LISTED_MAX];    //  faults/tasks
    size_t listed_count;
};

//  splitmix64: small, fast, and the same sequence everywhere for a seed.
static uint64_t
s_next_random (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

size_t
spawner_faults_shuffle (uint64_t *random, int64_t *items, size_t item_count,
                        size_t count)
{
    assert (random && (items || item_count == 0));
    size_t picked = count < item_count ? count : item_count;
    for (size_t i = 0; i < picked; i++) {
        size_t j = i + (size_t) (s_next_random (random) % (item_count - i));
        int64_t chosen = items [j];
        items [j] = items [i];
        items [i] = chosen;
    }
    return picked;
}

static int
s_read_tasks (spawner_faults_t *self, const char *text, int64_t tasks,
              char *reason, size_t reason_size)
{
    const char *cursor = text;
    while (*cursor) {
        char *end = NULL;
        long long task = strtoll (cursor, &end, 10);
        if (end == cursor || task < 0 || task >= tasks
        ||  self->listed_count == LISTED_MAX) {
            snprintf (reason, reason_size, "faults/tasks = '%s' is not a "
                      "list of task numbers in [0, %" PRId64 ")", text,
                      tasks);
            return -1;
        }
        for (size_t i = 0; i < self->listed_count; i++)
            if (self->listed [i] == (int64_t) task) {
                snprintf (reason, reason_size, "faults/tasks = '%s' names "
                          "task %lld twice (a round crashes each task "
                          "once)", text, task);
                return -1;
            }
        self->listed [self->listed_count++] = (int64_t) task;
        cursor = end;
        while (*cursor == ' ' || *cursor == ',')
            cursor++;
    }
    return 0;
}

//  faults/first_iteration_by: `any` (the default), the first round when
//  the fastest task reaches faults/first_iteration; `every`, when the
//  slowest does (so that every task has checkpointed by then).
static int
s_read_by (spawner_faults_t *self, zhash_t *params, bool by_iteration,
           char *reason, size_t reason_size)
{
    const char *by = (const char *) zhash_lookup (params,
                                                  "faults/first_iteration_by");
    if (!by)
        return 0;
    if (!streq (by, "any") && !streq (by, "every")) {
        snprintf (reason, reason_size, "faults/first_iteration_by = '%s' "
                  "is neither any (the first task to get there) nor every "
                  "(the last)", by);
        return -1;
    }
    if (!by_iteration) {
        snprintf (reason, reason_size, "faults/first_iteration_by needs "
                  "faults/first_iteration");
        return -1;
    }
    self->first_by_every = streq (by, "every");
    return 0;
}

const char *const spawner_faults_keys [] = {
    "faults/every", "faults/count", "faults/first", "faults/first_iteration",
    "faults/first_iteration_by", "faults/rounds", "faults/seed",
    "faults/tasks", NULL
};

spawner_faults_t *
spawner_faults_new (zhash_t *params, int64_t tasks, char *reason,
                    size_t reason_size)
{
    assert (params);
    spawner_faults_t *self = (spawner_faults_t *) zmalloc (sizeof *self);
    double every, first, count, rounds, seed, first_iteration;
    const char *listed = (const char *) zhash_lookup (params, "faults/tasks");
    if (jace_param_number (params, "faults/every", 0, 0, 1e6, &every,
                           reason, reason_size)
    ||  jace_param_number (params, "faults/first", every, 0, 1e6, &first,
                           reason, reason_size)
    ||  jace_param_number (params, "faults/first_iteration", 0, 0, 1e15,
                           &first_iteration, reason, reason_size)
    ||  jace_param_number (params, "faults/count", listed ? 0 : 1, 0,
                           (double) tasks, &count, reason, reason_size)
    ||  jace_param_number (params, "faults/rounds", 0, 0, 1e9, &rounds,
                           reason, reason_size)
    ||  jace_param_number (params, "faults/seed", 1, 0, 1e18, &seed,
                           reason, reason_size)
    ||  (listed && s_read_tasks (self, listed, tasks, reason, reason_size))) {
        spawner_faults_destroy (&self);
        return NULL;
    }
    if (count != floor (count) || rounds != floor (rounds)) {
        snprintf (reason, reason_size, "faults/count and faults/rounds must "
                  "be integers");
        spawner_faults_destroy (&self);
        return NULL;
    }
    //  Without a time, an iteration or a list there is no round: a
    //  count or a number of rounds would be ignored without a word.
    const char *idle = zhash_lookup (params, "faults/count") ? "faults/count"
                     : zhash_lookup (params, "faults/rounds")
                     ? "faults/rounds" : NULL;
    if (idle && !listed && every == 0 && first_iteration == 0
    &&  !zhash_lookup (params, "faults/first")) {
        snprintf (reason, reason_size, "%s needs faults/every, "
                  "faults/first or faults/first_iteration (when to "
                  "crash): without them no daemon is crashed", idle);
        spawner_faults_destroy (&self);
        return NULL;
    }
    if (listed && every == 0 && !zhash_lookup (params, "faults/first")
    &&  first_iteration == 0) {
        snprintf (reason, reason_size, "faults/tasks needs faults/first "
                  "or faults/first_iteration (when to crash them)");
        spawner_faults_destroy (&self);
        return NULL;
    }
    if (s_read_by (self, params, first_iteration > 0, reason, reason_size)) {
        spawner_faults_destroy (&self);
        return NULL;
    }
    self->every_msec = (int64_t) (every * 1000);
    self->first_msec = (int64_t) (first * 1000);
    self->first_iteration = (int64_t) first_iteration;
    self->count = (int64_t) count;
    //  A list alone is one round; with `every`, random rounds follow it.
    self->rounds = listed && every == 0 ? 1 : (int64_t) rounds;
    self->random = (uint64_t) seed;
    return self;
}

void
spawner_faults_destroy (spawner_faults_t **self_p)
{
    assert (self_p);
    free (*self_p);
    *self_p = NULL;
}

bool
spawner_faults_enabled (spawner_faults_t *self)
{
    assert (self);
    return self->every_msec > 0 || self->listed_count > 0
        || (self->first_iteration > 0 && self->count > 0);
}

size_t
spawner_faults_due (spawner_faults_t *self, int64_t elapsed,
                    int64_t slowest, int64_t fastest)
{
    assert (self);
    if (!spawner_faults_enabled (self)
    ||  (self->rounds > 0 && self->done >= self->rounds))
        return 0;
    //  A round every `every` seconds after the first one; the first one
    //  at `first` seconds, or when the job has reached `first_iteration`
    //  (so that it certainly crashes a running job, on any machine).
    if (self->first_iteration > 0 && self->done == 0) {
        int64_t iteration = self->first_by_every ? slowest : fastest;
        if (iteration < self->first_iteration)
            return 0;
        self->first_fired = elapsed;
    }
    else {
        int64_t first = self->first_iteration > 0 ? self->first_fired
                                                  : self->first_msec;
        int64_t next = first + self->done * self->every_msec;
        if (elapsed < next || (self->done > 0 && self->every_msec == 0))
            return 0;
    }
    bool listed_round = self->done == 0 && self->listed_count > 0;
    self->done++;
    return listed_round ? self->listed_count : (size_t) self->count;
}

static bool
s_contains (const int64_t *list, size_t count, int64_t value)
{
    for (size_t i = 0; i < count; i++)
        if (list [i] == value)
            return true;
    return false;
}

size_t
spawner_faults_pick (spawner_faults_t *self, const int64_t *candidates,
                     size_t candidate_count, size_t count, int64_t *victims)
{
    assert (self);
    size_t picked = 0;
    if (self->done == 1 && self->listed_count > 0) {
        for (size_t i = 0; i < self->listed_count && picked < count; i++)
            if (s_contains (candidates, candidate_count, self->listed [i])
            &&  !s_contains (victims, picked, self->listed [i]))
                victims [picked++] = self->listed [i];
        return picked;
    }
    int64_t *pool = (int64_t *) zmalloc ((candidate_count + 1)
                                         * sizeof (int64_t));
    memcpy (pool, candidates, candidate_count * sizeof (int64_t));
    picked = spawner_faults_shuffle (&self->random, pool, candidate_count,
                                     count);
    memcpy (victims, pool, picked * sizeof (int64_t));
    free (pool);
    return picked;
}
