/*  =========================================================================
    spawner_faults - crashes a job file schedules, for reproducible runs

    The optional faults section of a job file:

        faults
            every = 20        #  seconds between two rounds of crashes
            count = 2         #  daemons crashed per round (default 1)
            first = 20        #  seconds before the first round (default: every)
            first_iteration = 50  #  or: the first round when a task has
                              #  done that many iterations (then every
                              #  `every` s); a crash certain to hit a
                              #  running job whatever the machine's speed
            rounds = 0        #  rounds at most; 0: until the job ends
            seed = 1          #  random choice of the victims (default 1)
            tasks = "1 0 2"   #  crash exactly these tasks, in the first
                              #  round, instead of a random choice

    The same seed gives the same choices from the same candidates, so a
    run can be replayed.  The spawner crashes the daemons it picks (CRASH:
    the daemon exits at once, without a goodbye).
    =========================================================================
*/
#ifndef SPAWNER_FAULTS_H_INCLUDED
#define SPAWNER_FAULTS_H_INCLUDED

#include <czmq.h>

typedef struct _spawner_faults_t spawner_faults_t;

//  The keys of the faults section, NULL-terminated (spawner_job checks
//  a job file against them).
extern const char *const spawner_faults_keys [];

//  The schedule in params ("faults/..." keys) for a job of `tasks` tasks.
//  Returns NULL with the reason when a key is malformed.  A job without a
//  faults section gets an empty schedule.
spawner_faults_t *
    spawner_faults_new (zhash_t *params, int64_t tasks, char *reason,
                        size_t reason_size);

//  Destroy the schedule; nullifies the reference.  Safe on NULL.
void
    spawner_faults_destroy (spawner_faults_t **self_p);

//  True if the job schedules any crash.
bool
    spawner_faults_enabled (spawner_faults_t *self);

//  At `elapsed` msec since the job started, its least and most advanced
//  tasks at iterations slowest and fastest: the number of daemons to
//  crash now (0 when no round is due; each round is reported once).
size_t
    spawner_faults_due (spawner_faults_t *self, int64_t elapsed,
                        int64_t slowest, int64_t fastest);

//  Pick up to `count` victims among the `candidates` tasks (the ones
//  working right now), writing them to victims.  Returns how many.  The
//  first round of a schedule with explicit tasks picks those (when they
//  are candidates).
size_t
    spawner_faults_pick (spawner_faults_t *self, const int64_t *candidates,
                         size_t candidate_count, size_t count,
                         int64_t *victims);

//  Shuffle the first `count` of items[0 .. item_count) into a random pick
//  (a partial Fisher-Yates shuffle) driven by a splitmix64 generator whose
//  state is *random: the same state gives the same pick.  Returns how many
//  were picked (count, or item_count if fewer).  Shared with the kill tool.
size_t
    spawner_faults_shuffle (uint64_t *random, int64_t *items,
                            size_t item_count, size_t count);

#endif
