/*  =========================================================================
    spawner_server - one job, from leasing to a verified answer, as an actor

    The spawner is an actor like the super-node and the daemon: one poll
    loop over its pipe, its super-node, its status endpoint and a link per
    task, with every ready socket drained on each pass and each message
    reaching its task in O(1) (the poll item's index is the task's rank).
    Nothing in the loop blocks: leasing a replacement, streaming a task's
    data and gathering a snapshot are states the loop steps through.

    The job goes through explicit states:

        LEASING     waiting for daemons for every task and spare
        ASSIGNING   tasks placed; ASSIGNs and task data on their way,
                    waiting for every ACCEPT
        RUNNING     every task started
        REPLACING   running, and some task is being moved to a new daemon
        VERIFYING   running, and a snapshot of the answer is being gathered
        FINISHING   verified, failed or cancelled: telling the daemons
        DONE        over; the result has been sent on the pipe

    Each job has a secret, made at submit and saved in the user's secrets
    folder until the job ends (a crashed spawner leaves it for `resume`);
    every message to the job's daemons is sealed with the key derived from
    it, and their messages, and a CANCEL, count only when sealed with it
    (docs/SECURITY.md).

    The pipe takes "$TERM" and "CANCEL" (a reason follows); when the job is
    over the actor sends "DONE" and the exit code ("0" for a verified
    answer, "1" otherwise) once.  spawner_run () is the driver that runs it
    from the command line; tests run it in-process beside super-node and
    daemon actors.
    =========================================================================
*/
#ifndef SPAWNER_SERVER_H_INCLUDED
#define SPAWNER_SERVER_H_INCLUDED

#include "spawner_job.h"
#include "jace_auth.h"

//  How the user asked to run the job.
typedef struct {
    const char *job_file;       //  For messages
    const char *supernode;      //  First super-node endpoint
    const char **supernodes;    //  Every one, failover order, or NULL
    size_t supernode_count;     //  Entries in supernodes
    const char *keys_dir;       //  CURVE keys directory, or NULL
    const char *cert;           //  Our certificate (default spawner)
    const char *secrets_dir;    //  Job secrets folder, or NULL (default)
    const char *bind;           //  Status endpoint (default loopback:*)
    const char *out_path;       //  Where to write the answer, or NULL
    const char *events_path;    //  JSON-lines event log, or NULL
    bool events_append;         //  Add to the log instead of replacing it
    const char *report_path;    //  Text report after the job, or NULL
    const char *plot_path;      //  Plot of the report (.png/.svg), or NULL
    bool insecure;              //  Allow a non-loopback status endpoint
    bool quiet;                 //  No progress lines
} spawner_options_t;

//  What the actor runs; read before zactor_new returns.
typedef struct {
    spawner_job_t *job;         //  The job (borrowed; outlives the actor)
    const spawner_options_t *options;   //  Borrowed; outlives the actor
    const char *job_id;         //  Resume this job, or NULL for a new one
    zlist_t *adopted;           //  Resume: its daemons' answers to ADOPT
                                //  (jace_msg_t ASSIGNs), borrowed
    zlist_t *listed;            //  Resume: ids of the daemons the grid
                                //  listed working for the job, borrowed
    const jace_key_t *job_key;  //  Resume: the job key, from the secret
                                //  file the job was submitted with
} spawner_server_config_t;

//  The actor; args is a spawner_server_config_t.
void
    spawner_server_actor (zsock_t *pipe, void *args);

//  The job id of a running spawner actor (caller frees).
char *
    spawner_server_job_id (zactor_t *server);

#endif
