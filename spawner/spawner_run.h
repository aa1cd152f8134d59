/*  =========================================================================
    spawner_run - run one job, or resume one, to a verified answer

    The driver of a spawner_server actor (see spawner_server.h for what
    the job goes through): start it, wait for its result, turn SIGINT and
    SIGTERM into a cancellation that stops the job's daemons.
    =========================================================================
*/
#ifndef SPAWNER_RUN_H_INCLUDED
#define SPAWNER_RUN_H_INCLUDED

#include "spawner_server.h"

//  Run the job.  Returns 0 only for a verified answer; otherwise 1, with
//  the reason printed on stderr and in the event log.
int
    spawner_run (spawner_job_t *job, const spawner_options_t *options);

//  Take over job `job_id` whose spawner died: find its daemons through the
//  super-node, learn the job from them (ADOPT), and carry on to a verified
//  answer as spawner_run does.  Returns 0 only for a verified answer.
int
    spawner_resume (const char *job_id, const spawner_options_t *options);

#endif
