/*  =========================================================================
    spawner_resume - what a resumed job is, as its daemons describe it

    A job whose spawner died goes on: its daemons keep iterating.  To
    resume it, ask the super-node which daemons work for the job, send each
    an ADOPT sealed with the job key (from the job's secret file: only the
    job's user can resume it), and collect their answers: each returns its
    ASSIGN as it stands, with the job key, checked (application, parameters, every task's daemon and epoch, and
    its sources).  The job is rebuilt from the parameters; the server
    (spawner_server) takes the answers over, the newest epoch of each task
    winning, and replaces the tasks whose daemon did not answer; a task
    whose daemon holds a rebalance's new rows it never started on, while
    the others run the old cut, is assigned its old rows again there.

    What the daemons cannot say, the job's spawner leaves beside the
    job's secret for a resume to carry on: the cluster it was draining
    (DIR/JOB.drain, written when the drain begins and removed when it
    ends, is refused, or the job ends).
    =========================================================================
*/
#ifndef SPAWNER_RESUME_H_INCLUDED
#define SPAWNER_RESUME_H_INCLUDED

#include "spawner_server.h"

//  The ADOPT answers (a list of jace_msg_t ASSIGNs, possibly empty; the
//  caller destroys it with spawner_resume_forget) of the daemons working
//  for job_id, as the super-node options->supernode knows them: each
//  ADOPT sealed with job_key, and only answers that carry it (key field)
//  kept.  Daemons that did not answer are told to stop; the answers of
//  those on a rebalance's cut that never started, while the others run,
//  are marked (spawner_resume_unstarted_cut, spawner_resume_off_cut).
//  Writes the reason when none answered.  *listed_p gets the ids of the
//  daemons the super-node listed working for the job (the caller
//  destroys it): a daemon of the job not among them died while the job
//  had no spawner.
zlist_t *
    spawner_resume_gather (const char *job_id,
                           const spawner_options_t *options,
                           const jace_key_t *job_key, zlist_t **listed_p,
                           char *reason, size_t reason_size);

//  True if every answer cuts the job's rows the same way (its ASSIGN's
//  block/first/0 .. block/first/<tasks>).  A spawner killed while it
//  re-assigned the tasks of a rebalance, with some ASSIGNs still in its
//  sockets, leaves daemons on two cuts, which no resumed job could put
//  together: false, and the reason names a task on each.
bool
    spawner_resume_same_cut (zlist_t *answers, char *reason,
                             size_t reason_size);

//  Daemons left on two cuts by a rebalance its spawner did not finish,
//  where the tasks of one cut run and those of the other never started
//  (the rebalance's new tasks, set up or still gathering their slices,
//  waiting for the START that died with the spawner; each ADOPT answer
//  says whether its task started, block/started): true, with
//  off_cut [i] set for each of the `count` answers not on the cut that
//  runs.  The job resumes on that cut, and those tasks are assigned
//  their rows of it again, on the same daemons.  False, with off_cut
//  all unset, when the answers are on one cut, or no one cut alone runs
//  (spawner_resume_same_cut then refuses them).
bool
    spawner_resume_unstarted_cut (jace_msg_t *const *answers, size_t count,
                                  bool *off_cut);

//  True if the answer is of a daemon spawner_resume_gather found off the
//  cut that runs (as spawner_resume_unstarted_cut chose): its task is
//  assigned again on it, on that cut.  The functions below leave such
//  answers out.
bool
    spawner_resume_off_cut (const jace_msg_t *answer);

//  The job the answers describe, or NULL with the reason (the answers
//  disagree on the cut, or the job they describe is not valid).
spawner_job_t *
    spawner_resume_job (zlist_t *answers, const char *job_id, char *reason,
                        size_t reason_size);

//  Note that job `job` drains `cluster`, in the secrets folder `dir`
//  (cluster NULL: it drains nothing).  Returns 0, or -1 with the reason.
int
    spawner_resume_note_drain (const char *dir, const char *job,
                               const char *cluster, char *reason,
                               size_t reason_size);

//  The cluster job `job`'s spawner was draining, by its note in `dir`,
//  into cluster (JACE_ID_MAX bytes).  Returns 1 if there is one, 0 if
//  none, -1 with the reason if the note cannot be read or names no valid
//  cluster.
int
    spawner_resume_drain (const char *dir, const char *job, char *cluster,
                          char *reason, size_t reason_size);

//  Destroy the answers and the list; nullifies the reference.
void
    spawner_resume_forget (zlist_t **answers_p);

#endif
