/*  =========================================================================
    spawner_kill - `jace-spawner kill`: crash daemons of a running job

    The users' way to test recovery.  The job's daemons are found through
    the super-node (its registry lists the job and task each daemon
    works on).  A victim is crashed the way a power cut would end it: with
    SIGKILL through the launcher's pid records when --run names the run
    folder of a local grid (jace-grid), otherwise with a CRASH message
    that makes the daemon exit at once, without a goodbye.  A super-node
    is crashed the same way (by pid record, or by CRASH when it was
    started with --allow-crash).  Crashing a job's daemons needs the job's
    secret (its CRASH is sealed with the job key): only the user who
    submitted the job may.
    =========================================================================
*/
#ifndef SPAWNER_KILL_H_INCLUDED
#define SPAWNER_KILL_H_INCLUDED

#include <czmq.h>

typedef struct {
    const char *supernode;      //  Where to find the job's daemons
    const char *keys_dir;       //  CURVE keys, or NULL
    const char *cert;           //  Our certificate name, or NULL
    const char *job;            //  Job whose daemons to crash
    const char *secrets_dir;    //  Where its secret is, or NULL (default)
    const char *run_dir;        //  jace-grid run folder, or NULL
    int64_t task;               //  Crash this task's daemon, or -1
    int64_t random;             //  ... or this many picked at random
    double every;               //  Repeat every so many seconds, or 0
    int64_t rounds;             //  Rounds at most with every (0: until
                                //  the job has no daemon left)
    uint64_t seed;              //  Random choice (0: from the clock)
    bool crash_supernode;       //  Crash the super-node itself instead
} spawner_kill_options_t;

//  Crash what options say, printing one line per victim on stdout.
//  Returns 0, or 1 with the reason on stderr (no such job or task, ...).
int
    spawner_kill (const spawner_kill_options_t *options);

#endif
