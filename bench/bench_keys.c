/*  =========================================================================
    bench_keys - CURVE for a benchmark
    =========================================================================
*/
#include "bench_keys.h"
#include "jace_auth.h"

static char s_dir [64];

int
bench_options (int argc, char *argv [], bool *json, bool *keys)
{
    *json = *keys = false;
    for (int arg = 1; arg < argc; arg++) {
        if (streq (argv [arg], "--json"))
            *json = true;
        else
        if (streq (argv [arg], "--keys"))
            *keys = true;
        else {
            fprintf (stderr, "usage: %s [--json] [--keys]\n", argv [0]);
            return -1;
        }
    }
    return 0;
}

jace_security_t *
bench_keys_new (bool with_keys)
{
    char reason [256] = "";
    if (!with_keys)
        return jace_security_new (NULL, NULL, reason, sizeof reason);
    snprintf (s_dir, sizeof s_dir, "/tmp/jace-bench-keys-XXXXXX");
    if (!mkdtemp (s_dir)) {
        fprintf (stderr, "bench: cannot make a keys directory\n");
        exit (1);
    }
    zcert_t *cert = zcert_new ();
    zcert_set_meta (cert, "role", "daemon");
    char *path = zsys_sprintf ("%s/bench.cert", s_dir);
    zcert_save (cert, path);
    char *secret = zsys_sprintf ("%s_secret", path);
    chmod (secret, 0600);
    zstr_free (&secret);
    zstr_free (&path);
    zcert_destroy (&cert);
    jace_security_t *security = jace_security_new (s_dir, "bench", reason,
                                                   sizeof reason);
    if (!security) {
        fprintf (stderr, "bench: %s\n", reason);
        exit (1);
    }
    return security;
}

void
bench_keys_destroy (jace_security_t **security_p)
{
    bool had_keys = jace_security_enabled (*security_p);
    jace_security_destroy (security_p);
    if (!had_keys)
        return;
    const char *names [] = { "bench.cert", "bench.cert_secret" };
    for (size_t i = 0; i < 2; i++) {
        char *path = zsys_sprintf ("%s/%s", s_dir, names [i]);
        unlink (path);
        zstr_free (&path);
    }
    rmdir (s_dir);
}

const char *
bench_job_key (void)
{
    static char text [JACE_KEY_TEXT + 1];
    if (!*text) {
        jace_key_t key;
        jace_key_random (&key);
        jace_key_encode (&key, text);
    }
    return text;
}

void
bench_keys_server (jace_security_t *security, zsock_t *sock)
{
    jace_security_apply_server (security, sock);
}

void
bench_keys_client (jace_security_t *security, zsock_t *sock)
{
    jace_security_apply_client (security, sock,
                                jace_security_public_key (security));
}
