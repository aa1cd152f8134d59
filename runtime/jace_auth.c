/*  =========================================================================
    jace_auth - job secrets, job keys and lease tokens
    =========================================================================
*/
#include "jace_auth.h"

#include <sodium.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <dirent.h>
#include <time.h>

//  Domain of each derivation: a key made for one use is never valid for
//  another.
#define JOB_KEY_DOMAIN "jace job key v1"
#define LEASE_DOMAIN "jace lease token v1"
#define OVER_DOMAIN "jace job over v1"

//  --------------------------------------------------------------------------

void
jace_key_random (jace_key_t *key)
{
    assert (key);
    jace_sodium_init ();
    randombytes_buf (key->bytes, sizeof key->bytes);
}

void
jace_key_encode (const jace_key_t *key, char *text)
{
    assert (key && text);
    zmq_z85_encode (text, key->bytes, sizeof key->bytes);
}

int
jace_key_decode (jace_key_t *key, const char *text)
{
    assert (key && text);
    if (strlen (text) != JACE_KEY_TEXT || !zmq_z85_decode (key->bytes, text))
        return -1;
    return 0;
}

void
jace_key_wipe (jace_key_t *key)
{
    if (key)
        sodium_memzero (key->bytes, sizeof key->bytes);
}

void
jace_job_key (const jace_key_t *secret, jace_key_t *job_key)
{
    assert (secret && job_key);
    jace_sodium_init ();
    crypto_generichash (job_key->bytes, sizeof job_key->bytes,
                        (const unsigned char *) JOB_KEY_DOMAIN,
                        strlen (JOB_KEY_DOMAIN), secret->bytes,
                        sizeof secret->bytes);
}

//  --------------------------------------------------------------------------
//  Lease tokens: strings joined with their NULs, so that no two
//  (job, spawner, daemon) triples hash alike.

static void
s_mac (const jace_key_t *key, const char *domain, const char *job,
       const char *spawner_id, const char *daemon_id, unsigned char *mac)
{
    jace_sodium_init ();
    crypto_generichash_state state;
    crypto_generichash_init (&state, key->bytes, sizeof key->bytes,
                             JACE_KEY_BYTES);
    const char *parts [] = { domain, job, spawner_id, daemon_id };
    for (size_t i = 0; i < 4; i++)
        crypto_generichash_update (&state, (const unsigned char *) parts [i],
                                   strlen (parts [i]) + 1);
    crypto_generichash_final (&state, mac, JACE_KEY_BYTES);
}

void
jace_lease_token (const jace_key_t *lease_key, const char *job,
                  const char *spawner_id, const char *daemon_id, char *token)
{
    assert (lease_key && job && spawner_id && daemon_id && token);
    unsigned char mac [JACE_KEY_BYTES];
    s_mac (lease_key, LEASE_DOMAIN, job, spawner_id, daemon_id, mac);
    zmq_z85_encode (token, mac, sizeof mac);
}

bool
jace_lease_token_valid (const jace_key_t *lease_key, const char *job,
                        const char *spawner_id, const char *daemon_id,
                        const char *token)
{
    assert (lease_key && job && spawner_id && daemon_id && token);
    unsigned char presented [JACE_KEY_BYTES], mac [JACE_KEY_BYTES];
    if (strlen (token) != JACE_KEY_TEXT || !zmq_z85_decode (presented, token))
        return false;
    s_mac (lease_key, LEASE_DOMAIN, job, spawner_id, daemon_id, mac);
    return sodium_memcmp (mac, presented, sizeof mac) == 0;
}

void
jace_job_over_proof (const jace_key_t *job_key, const char *job,
                     char *proof)
{
    assert (job_key && job && proof);
    unsigned char mac [JACE_KEY_BYTES];
    s_mac (job_key, OVER_DOMAIN, job, "", "", mac);
    zmq_z85_encode (proof, mac, sizeof mac);
}

bool
jace_job_over_proof_valid (const jace_key_t *job_key, const char *job,
                           const char *proof)
{
    assert (job_key && job && proof);
    unsigned char presented [JACE_KEY_BYTES], mac [JACE_KEY_BYTES];
    if (strlen (proof) != JACE_KEY_TEXT || !zmq_z85_decode (presented, proof))
        return false;
    s_mac (job_key, OVER_DOMAIN, job, "", "", mac);
    return sodium_memcmp (mac, presented, sizeof mac) == 0;
}

//  --------------------------------------------------------------------------
//  Secret files

char *
jace_secret_dir_default (void)
{
    const char *dir = getenv ("JACE_SECRETS");
    if (dir && *dir)
        return strdup (dir);
    const char *state = getenv ("XDG_STATE_HOME");
    if (state && *state)
        return zsys_sprintf ("%s/jace/secrets", state);
    const char *home = getenv ("HOME");
    return zsys_sprintf ("%s/.local/state/jace/secrets",
                         home && *home ? home : ".");
}

//  A job id is a file name: no path separators, no leading dot.
static bool
s_is_job_name (const char *job)
{
    return *job && *job != '.' && !strchr (job, '/')
        && strlen (job) < JACE_ID_MAX;
}

int
jace_secret_save (const char *dir, const char *job, const jace_key_t *secret,
                  char *reason, size_t reason_size)
{
    assert (dir && job && secret);
    if (!s_is_job_name (job)) {
        snprintf (reason, reason_size, "'%s' cannot name a secret file", job);
        return -1;
    }
    //  zsys_dir_create makes the parents; tighten the last one ourselves.
    if (zsys_dir_create ("%s", dir) || chmod (dir, 0700)) {
        snprintf (reason, reason_size, "cannot make %s (mode 0700): %s", dir,
                  strerror (errno));
        return -1;
    }
    char *path = zsys_sprintf ("%s/%s.secret", dir, job);
    int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    char text [JACE_KEY_TEXT + 2];
    jace_key_encode (secret, text);
    strcat (text, "\n");
    int rc = fd >= 0 && write (fd, text, strlen (text))
                        == (ssize_t) strlen (text) ? 0 : -1;
    if (rc)
        snprintf (reason, reason_size, "cannot write %s: %s", path,
                  strerror (errno));
    if (fd >= 0)
        close (fd);
    sodium_memzero (text, sizeof text);
    free (path);
    return rc;
}

int
jace_secret_load (const char *dir, const char *job, jace_key_t *secret,
                  char *reason, size_t reason_size)
{
    assert (dir && job && secret);
    if (!s_is_job_name (job)) {
        snprintf (reason, reason_size, "'%s' is not a job id", job);
        return -1;
    }
    char *path = zsys_sprintf ("%s/%s.secret", dir, job);
    int rc = -1;
    int fd = open (path, O_RDONLY | O_NOFOLLOW);
    struct stat info;
    char text [JACE_KEY_TEXT + 2] = "";
    if (fd < 0)
        snprintf (reason, reason_size, "no secret for job %s in %s (%s): "
                  "only the user who submitted it may control it; give "
                  "--secrets DIR if it was submitted with another",
                  job, dir, strerror (errno));
    else
    if (fstat (fd, &info) || info.st_uid != geteuid ())
        snprintf (reason, reason_size, "%s is not ours: refused", path);
    else
    if (info.st_mode & (S_IRWXG | S_IRWXO))
        snprintf (reason, reason_size, "%s is open to others (mode %03o): "
                  "refused; chmod 600 it", path,
                  (unsigned) (info.st_mode & 0777));
    else {
        ssize_t size = read (fd, text, JACE_KEY_TEXT + 1);
        if (size >= JACE_KEY_TEXT)
            text [JACE_KEY_TEXT] = 0;
        if (size < JACE_KEY_TEXT || jace_key_decode (secret, text))
            snprintf (reason, reason_size, "%s does not hold a job secret",
                      path);
        else
            rc = 0;
    }
    if (fd >= 0)
        close (fd);
    sodium_memzero (text, sizeof text);
    free (path);
    return rc;
}

//  Remove the end records of DIR older than JACE_ENDED_KEEP_DAYS.
static void
s_prune_ended (const char *dir)
{
    DIR *folder = opendir (dir);
    if (!folder)
        return;
    time_t oldest = time (NULL) - (time_t) JACE_ENDED_KEEP_DAYS * 86400;
    struct dirent *entry;
    while ((entry = readdir (folder))) {
        size_t length = strlen (entry->d_name);
        struct stat info;
        if (length > 6 && streq (entry->d_name + length - 6, ".ended")
        &&  fstatat (dirfd (folder), entry->d_name, &info,
                     AT_SYMLINK_NOFOLLOW) == 0
        &&  S_ISREG (info.st_mode) && info.st_mtime < oldest)
            unlinkat (dirfd (folder), entry->d_name, 0);
    }
    closedir (folder);
}

void
jace_secret_retire (const char *dir, const char *job, const char *outcome)
{
    assert (dir && job && outcome);
    if (!s_is_job_name (job))
        return;
    s_prune_ended (dir);
    char *path = zsys_sprintf ("%s/%s.ended", dir, job);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        char stamp [32];
        time_t now = time (NULL);
        struct tm utc;
        strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ",
                  gmtime_r (&now, &utc));
        char *line = zsys_sprintf ("ended at %s: %s\n", stamp, outcome);
        //  A line that did not go whole is worth nothing: the record
        //  only improves a message
        if (write (fd, line, strlen (line)) != (ssize_t) strlen (line))
            unlink (path);
        free (line);
        close (fd);
    }
    free (path);
    path = zsys_sprintf ("%s/%s.secret", dir, job);
    unlink (path);
    free (path);
}

bool
jace_secret_ended (const char *dir, const char *job, char *text,
                   size_t text_size)
{
    assert (dir && job && text && text_size > 0);
    *text = 0;
    if (!s_is_job_name (job))
        return false;
    char *path = zsys_sprintf ("%s/%s.ended", dir, job);
    int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    free (path);
    FILE *file = fd >= 0 ? fdopen (fd, "r") : NULL;
    if (!file) {
        if (fd >= 0)
            close (fd);
        return false;
    }
    bool ended = fgets (text, (int) text_size, file) != NULL;
    fclose (file);
    text [strcspn (text, "\n")] = 0;
    return ended;
}
