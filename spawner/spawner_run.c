/*  =========================================================================
    spawner_run - the driver: run a job's spawner actor to its end

    The actor (spawner_server) does the work; the driver starts it, waits
    for its result and passes a signal on as a cancellation, so the daemons
    are stopped and the lease given back whatever ends the job.
    =========================================================================
*/
#include "spawner_run.h"
#include "spawner_jobs.h"
#include "spawner_resume.h"
#include "spawner_secret.h"

#include <pthread.h>
#include <signal.h>

//  Destroy the actor, waiting for its thread to end.  zactor_destroy's
//  wait returns early if a signal interrupts it (SIGTERM from `timeout`
//  as a job ended, seen under load): main then went on to exit, CZMQ's
//  shutdown closed the still running actor's sockets ("dangling DEALER
//  socket") and the actor's thread aborted on an assertion.  SIGINT and
//  SIGTERM are held off this thread meanwhile; another takes them (CZMQ's
//  handler only raises a flag), and the job has ended anyway.
static void
s_destroy_actor (zactor_t **actor_p)
{
    sigset_t held, before;
    sigemptyset (&held);
    sigaddset (&held, SIGINT);
    sigaddset (&held, SIGTERM);
    pthread_sigmask (SIG_BLOCK, &held, &before);
    zactor_destroy (actor_p);
    pthread_sigmask (SIG_SETMASK, &before, NULL);
}

//  Run the actor described by config to the end; returns its exit code.
static int
s_run_actor (spawner_server_config_t *config)
{
    zactor_t *actor = zactor_new (spawner_server_actor, config);
    zpoller_t *poller = zpoller_new (actor, NULL);
    zpoller_set_nonstop (poller, true);
    int rc = 1;
    bool cancelled = false;
    while (true) {
        void *which = zpoller_wait (poller, 200);
        if (zsys_interrupted && !cancelled) {
            //  The actor sees the signal too; saying so is harmless.
            zstr_sendm (actor, "CANCEL");
            zstr_send (actor, "interrupted by a signal");
            cancelled = true;
        }
        if (which != actor)
            continue;
        char *event = zstr_recv (actor);
        if (event && streq (event, "DONE")) {
            char *code = zstr_recv (actor);
            rc = code ? atoi (code) : 1;
            zstr_free (&code);
            zstr_free (&event);
            break;
        }
        zstr_free (&event);
    }
    zpoller_destroy (&poller);
    s_destroy_actor (&actor);
    return rc;
}

int
spawner_run (spawner_job_t *job, const spawner_options_t *options)
{
    assert (job && options && options->supernode);
    spawner_server_config_t config = { .job = job, .options = options };
    return s_run_actor (&config);
}

//  --------------------------------------------------------------------------
//  Resuming a job whose spawner died (spawner_resume.h)

int
spawner_resume (const char *job_id, const spawner_options_t *options)
{
    assert (job_id && options && options->supernode);
    char reason [2048] = "";
    //  Only the job's user holds its secret; nothing is sent without it.
    jace_key_t job_key;
    if (spawner_secret_open (options->secrets_dir, job_id, &job_key, reason,
                             sizeof reason)) {
        fprintf (stderr, "jace-spawner: %s\n", reason);
        return 1;
    }
    //  Held to the end: a second resume on this machine is refused at
    //  once; two resumes fought over the daemons until one job failed.
    int held = spawner_secret_hold (options->secrets_dir, job_id, reason,
                                    sizeof reason);
    if (held < 0) {
        fprintf (stderr, "jace-spawner: cannot resume job %s: %s\n", job_id,
                 reason);
        jace_key_wipe (&job_key);
        return 1;
    }
    char owner [256];
    if (spawner_jobs_owner_answers (job_id, options->supernode,
                                    options->keys_dir, options->cert,
                                    owner, sizeof owner)) {
        fprintf (stderr, "jace-spawner: cannot resume job %s: its spawner "
                 "at %s still answers for it (resume takes over a job whose "
                 "spawner died; jace-spawner status %s shows it)\n", job_id,
                 owner, job_id);
        jace_key_wipe (&job_key);
        spawner_secret_let_go (&held);
        return 1;
    }
    zlist_t *listed = NULL;
    zlist_t *answers = spawner_resume_gather (job_id, options, &job_key,
                                              &listed, reason, sizeof reason);
    spawner_job_t *job = spawner_resume_job (answers, job_id, reason,
                                             sizeof reason);
    int rc = 1;
    if (job) {
        spawner_server_config_t config = { .job = job, .options = options,
                                           .job_id = job_id,
                                           .adopted = answers,
                                           .listed = listed,
                                           .job_key = &job_key };
        rc = s_run_actor (&config);
        spawner_job_destroy (&job);
    }
    else
        fprintf (stderr, "jace-spawner: cannot resume job %s: %s\n", job_id,
                 reason);
    spawner_resume_forget (&answers);
    zlist_destroy (&listed);
    jace_key_wipe (&job_key);
    spawner_secret_let_go (&held);
    return rc;
}
