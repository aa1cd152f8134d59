/*  =========================================================================
    app_exchange - total exchanges with checksummed pieces, counted so
    that the spawner's verification fails when one went wrong

    Not a solver: a job of K rounds of jace_task_alltoallv.  In round x,
    task s gives task d a piece whose size and bytes are a function of
    (seed, x, s, d), so the receiver checks every byte of what it got and
    the spawner can recompute, for every task, how many pieces, bytes and
    which tags it must have received.  During set-up each task asks some
    others for a few unknowns (task r asks task s for (r + s) mod 3 of
    them), so the set-up exchange is checked as well: every owner checks
    it was asked exactly that.

    Each task's answer block (one row per task) holds its counts; the
    "residual" is 0 when every task received every piece of every round
    exactly once with the right bytes and was asked exactly right, not a
    number (the job fails at once) when a piece or a request list was
    wrong or counted twice, and 1 while rounds are missing.

    Parameters (exchange section):
      rounds    K, the rounds (default 10)
      bytes     size of a piece (fixed) or the largest (random), default
                1024
      sizes     "fixed" (every piece `bytes`) or "random" (0 .. bytes,
                a fifth of them empty), default "random"
      seed      of the pieces' bytes and sizes (default 1)
      warmup    rounds left out of the timing (default 1)
      pause_ms  sleep after each round, so that crashes scheduled on
                progress land between rounds of a slow job (default 0)
    and exchange/algorithm (lg, direct, flat), read by the daemons.

    The timing (fields 7 and 8 of a row): CLOCK_MONOTONIC seconds when the
    task began its first round after the warm-up and when it ended its
    last; on one machine (a virtual grid) the job's exchange time is the
    latest end minus the earliest begin.
    =========================================================================
*/
#ifndef APP_EXCHANGE_H_INCLUDED
#define APP_EXCHANGE_H_INCLUDED

#include "jace_task.h"

//  Values in each task's row of the answer
#define APP_EXCHANGE_FIELDS 9

//  The application's callbacks.
extern const jace_app_t app_exchange;

#endif
