/*  =========================================================================
    spawner_secret - a job's secret, as the spawner and its tools hold it

    At submit the spawner makes the job's secret and saves it in its
    user's secrets folder (`--secrets DIR`, else jace_secret_dir_default);
    `resume`, `cancel` and `kill` load it from there.  Only the job key
    derived from it travels: every job message the spawner's side sends is
    sealed with it, and every message of the job it receives must be
    (docs/SECURITY.md).  The secret itself is wiped from memory as soon as
    the key is made.
    =========================================================================
*/
#ifndef SPAWNER_SECRET_H_INCLUDED
#define SPAWNER_SECRET_H_INCLUDED

#include "jace_auth.h"
#include "jace_security.h"

//  The secrets folder: `option` if given, else the default.  Caller frees.
char *
    spawner_secret_dir (const char *option);

//  Make a new secret for `job`, save it in `dir`, and give its job key.
//  Returns the secret file's path (caller frees), or NULL with the reason.
char *
    spawner_secret_make (const char *dir, const char *job,
                         jace_key_t *job_key, char *reason,
                         size_t reason_size);

//  The job key of `job` from its secret file in `dir` (`option`, or the
//  default when NULL).  Returns 0; -2 if the job ended (its spawner left
//  a record of how: the reason says when and how); else -1 with a reason
//  that names the file and --secrets, for a user to act on.
int
    spawner_secret_open (const char *option, const char *job,
                         jace_key_t *job_key, char *reason,
                         size_t reason_size);

//  Hold job `job`'s secret file in `dir` (`option`, or the default when
//  NULL) for this process, with an exclusive flock: the job's spawner
//  holds it until it exits, so a second spawner of the job on this
//  machine (two resumes typed at once) is refused at once instead of
//  fighting the first for the daemons.  A process that dies, even by
//  SIGKILL, lets go.  Returns the descriptor to keep (spawner_secret_
//  let_go closes it), or -1 with the reason.
int
    spawner_secret_hold (const char *option, const char *job, char *reason,
                         size_t reason_size);

//  True if a process of this machine holds job `job`'s secret file in
//  `dir` (`option`, or the default when NULL): its spawner runs here.
//  Tests with a shared lock, let go at once.
bool
    spawner_secret_in_use (const char *option, const char *job);

//  Seconds since job `job`'s secret file in `dir` (`option`, or the
//  default when NULL) was written, at its submission; NAN if it is not
//  there.  A resumed spawner tells the job's whole time by it.
double
    spawner_secret_age (const char *option, const char *job);

//  Let go of a held secret file; sets *fd_p to -1.  Safe on -1.
void
    spawner_secret_let_go (int *fd_p);

//  Seal a job message with the job key and send it (consumes *msg_p).
//  Every field must be set first.  Returns as jace_msg_send.
int
    spawner_secret_send (jace_msg_t **msg_p, const jace_key_t *job_key,
                         zsock_t *link);

//  True if msg is sealed with the job key; otherwise logs (rate-limited)
//  and counts it as unauthorised in `security`, and returns false.
bool
    spawner_secret_check (jace_security_t *security, const jace_msg_t *msg,
                          const jace_key_t *job_key, const char *who);

//  True if `text` (Z85, as ASSIGN's key field) is the job key.
bool
    spawner_secret_is_key (const char *text, const jace_key_t *job_key);

#endif
