/*  =========================================================================
    spawner_secret - a job's secret, as the spawner and its tools hold it
    =========================================================================
*/
#include "spawner_secret.h"

#include <sodium.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <math.h>
#include <time.h>

char *
spawner_secret_dir (const char *option)
{
    return option ? strdup (option) : jace_secret_dir_default ();
}

//  The path of job `job`'s secret file in `option` (or the default
//  folder); the caller frees it
static char *
s_secret_path (const char *option, const char *job)
{
    char *dir = spawner_secret_dir (option);
    char *path = zsys_sprintf ("%s/%s.secret", dir, job);
    free (dir);
    return path;
}

char *
spawner_secret_make (const char *dir, const char *job, jace_key_t *job_key,
                     char *reason, size_t reason_size)
{
    assert (dir && job && job_key);
    jace_key_t secret;
    jace_key_random (&secret);
    int rc = jace_secret_save (dir, job, &secret, reason, reason_size);
    jace_job_key (&secret, job_key);
    jace_key_wipe (&secret);
    if (rc) {
        jace_key_wipe (job_key);
        return NULL;
    }
    return zsys_sprintf ("%s/%s.secret", dir, job);
}

int
spawner_secret_open (const char *option, const char *job,
                     jace_key_t *job_key, char *reason, size_t reason_size)
{
    assert (job && job_key);
    char *dir = spawner_secret_dir (option);
    jace_key_t secret;
    char why [1024] = "";
    char ended [256];
    int rc = jace_secret_load (dir, job, &secret, why, sizeof why);
    if (rc == 0)
        jace_job_key (&secret, job_key);
    else
    //  Its spawner removed the secret as the job ended, maybe a moment
    //  ago: say so, not that the job is someone else's
    if (jace_secret_ended (dir, job, ended, sizeof ended)) {
        snprintf (reason, reason_size, "cannot control job %s: it %s",
                  job, ended);
        rc = -2;
    }
    else
    //  jace_secret_load names the file; say how to look elsewhere if it
    //  does not already.
    if (strstr (why, "--secrets"))
        snprintf (reason, reason_size, "cannot control job %s: %s", job,
                  why);
    else
        snprintf (reason, reason_size, "cannot control job %s: %s (%s)",
                  job, why, option ? "secrets folder from --secrets"
                  : "default secrets folder; --secrets DIR names another");
    jace_key_wipe (&secret);
    free (dir);
    return rc;
}

int
spawner_secret_hold (const char *option, const char *job, char *reason,
                     size_t reason_size)
{
    assert (job);
    char *path = s_secret_path (option, job);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        snprintf (reason, reason_size, "cannot open %s: %s", path,
                  strerror (errno));
    else
    if (flock (fd, LOCK_EX | LOCK_NB)) {
        if (errno == EWOULDBLOCK)
            snprintf (reason, reason_size, "another spawner of job %s runs "
                      "on this machine (it holds %s): the job's own, or "
                      "another resume", job, path);
        else
            snprintf (reason, reason_size, "cannot lock %s: %s", path,
                      strerror (errno));
        close (fd);
        fd = -1;
    }
    free (path);
    return fd;
}

bool
spawner_secret_in_use (const char *option, const char *job)
{
    assert (job);
    char *path = s_secret_path (option, job);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    bool held = fd >= 0 && flock (fd, LOCK_SH | LOCK_NB) != 0
             && errno == EWOULDBLOCK;
    if (fd >= 0)
        close (fd);
    free (path);
    return held;
}

double
spawner_secret_age (const char *option, const char *job)
{
    assert (job);
    char *path = s_secret_path (option, job);
    struct stat info;
    double age = NAN;
    if (stat (path, &info) == 0) {
        struct timespec now;
        clock_gettime (CLOCK_REALTIME, &now);
        age = (double) (now.tv_sec - info.st_mtim.tv_sec)
            + (double) (now.tv_nsec - info.st_mtim.tv_nsec) / 1e9;
    }
    free (path);
    return age;
}

void
spawner_secret_let_go (int *fd_p)
{
    assert (fd_p);
    if (*fd_p >= 0)
        close (*fd_p);
    *fd_p = -1;
}

int
spawner_secret_send (jace_msg_t **msg_p, const jace_key_t *job_key,
                     zsock_t *link)
{
    assert (msg_p && *msg_p && job_key);
    jace_msg_seal (*msg_p, job_key->bytes);
    return jace_msg_send (msg_p, link);
}

bool
spawner_secret_check (jace_security_t *security, const jace_msg_t *msg,
                      const jace_key_t *job_key, const char *who)
{
    assert (security && msg && job_key);
    if (jace_msg_sealed (msg, job_key->bytes))
        return true;
    jace_security_unauthorised (security, msg, who, "%s",
                                *jace_msg_token (msg)
                                ? "sealed with another key than the job's"
                                : "not sealed with the job key");
    return false;
}

bool
spawner_secret_is_key (const char *text, const jace_key_t *job_key)
{
    assert (text && job_key);
    jace_key_t key;
    if (jace_key_decode (&key, text))
        return false;
    jace_sodium_init ();
    bool same = sodium_memcmp (key.bytes, job_key->bytes,
                               JACE_KEY_BYTES) == 0;
    jace_key_wipe (&key);
    return same;
}
