/*  =========================================================================
    jace_auth - job secrets, job keys and lease tokens

    Three secrets keep a job to the one who submitted it, whatever the
    network lets through (docs/SECURITY.md):

    - The job secret, 32 random bytes made at submit, lives only in a file
      of its user's (mode 0600, in a 0700 folder).  `resume`, `cancel` and
      `kill` read it there; it never travels.
    - The job key, derived from the secret, is what travels: ASSIGN gives
      it to each daemon of the job, and every job message (control, data,
      checkpoints) is sealed with it (jace_msg_seal).  A process that holds
      neither can neither steer the job nor feed it values.
    - A lease key, made by each daemon at start and given only to its
      super-node (HELLO, CURVE or loopback), lets the super-node issue
      lease tokens the daemon checks alone: the token for job J, spawner
      S and daemon D is the BLAKE2b of (J, S, D) keyed with D's lease key.
      A daemon takes an ASSIGN only with the token its super-node issued
      for that job to that spawner (S is the spawner's CURVE key, or ""
      without keys).

    Keys are plain values (jace_key_t); as text they are Z85, 40 chars.
    =========================================================================
*/
#ifndef JACE_AUTH_H_INCLUDED
#define JACE_AUTH_H_INCLUDED

#include "jace_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

//  A secret or key: a plain value, copy it freely, wipe it when done.
typedef struct {
    unsigned char bytes [JACE_KEY_BYTES];
} jace_key_t;

//  Fill key with random bytes (libsodium's CSPRNG).
void
    jace_key_random (jace_key_t *key);

//  Key as Z85 text into text (JACE_KEY_TEXT + 1 bytes).
void
    jace_key_encode (const jace_key_t *key, char *text);

//  Key from Z85 text.  Returns 0, or -1 if text is not a key.
int
    jace_key_decode (jace_key_t *key, const char *text);

//  Overwrite a key that is no longer needed.
void
    jace_key_wipe (jace_key_t *key);

//  The job key of a job secret: what ASSIGN carries and seals use.
void
    jace_job_key (const jace_key_t *secret, jace_key_t *job_key);

//  The lease token (Z85, JACE_KEY_TEXT + 1 bytes) for job, leased to the
//  spawner whose CURVE key is spawner_id ("" without keys), on daemon
//  daemon_id, under that daemon's lease key.
void
    jace_lease_token (const jace_key_t *lease_key, const char *job,
                      const char *spawner_id, const char *daemon_id,
                      char *token);

//  True if token is the lease token for (job, spawner_id, daemon_id)
//  under lease_key (constant time).
bool
    jace_lease_token_valid (const jace_key_t *lease_key, const char *job,
                            const char *spawner_id, const char *daemon_id,
                            const char *token);

//  The proof that job `job` is over (Z85, JACE_KEY_TEXT + 1 bytes): a
//  keyed BLAKE2b under its job key.  The spawner that ends the job makes
//  it; super-nodes, which cannot check it, pass it on to daemons still on
//  the job, and a daemon drops its task on their word only with it: a
//  process without the job key cannot stop the job that way.
void
    jace_job_over_proof (const jace_key_t *job_key, const char *job,
                         char *proof);

//  True if proof is job's proof of being over under job_key (constant
//  time).
bool
    jace_job_over_proof_valid (const jace_key_t *job_key, const char *job,
                               const char *proof);

//  Where job secrets live by default: $JACE_SECRETS, else
//  $XDG_STATE_HOME/jace/secrets, else $HOME/.local/state/jace/secrets.
//  Returns a fresh string the caller frees.
char *
    jace_secret_dir_default (void);

//  Save a job's secret as DIR/JOB.secret, readable by its user only
//  (DIR is made 0700 if missing).  Returns 0, or -1 with the reason.
int
    jace_secret_save (const char *dir, const char *job,
                      const jace_key_t *secret, char *reason,
                      size_t reason_size);

//  Load a job's secret from DIR/JOB.secret.  Refuses a file others can
//  read or write (as munged does), or not owned by us.  Returns 0, or -1
//  with the reason (no such file: "no secret for job J in DIR ...").
int
    jace_secret_load (const char *dir, const char *job, jace_key_t *secret,
                      char *reason, size_t reason_size);

//  A job ended: record how as DIR/JOB.ended (one line, with the time),
//  then remove DIR/JOB.secret, so that a command that finds no secret can
//  say the job ended rather than that it is not ours (the record exists
//  before the secret goes).  Records older than JACE_ENDED_KEEP_DAYS are
//  removed meanwhile.  Safe if the secret is gone.
#define JACE_ENDED_KEEP_DAYS 30
void
    jace_secret_retire (const char *dir, const char *job,
                        const char *outcome);

//  True if DIR/JOB.ended records the job's end; its line (time and
//  outcome, without the newline) in `text`.
bool
    jace_secret_ended (const char *dir, const char *job, char *text,
                       size_t text_size);

#ifdef __cplusplus
}
#endif

#endif
