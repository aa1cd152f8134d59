/*  =========================================================================
    jace_process - what every Jace binary's main does the same way
    =========================================================================
*/
#include "jace_process.h"

#include <errno.h>
#include <math.h>

void
jace_process_init (const char *ident)
{
    zsys_init ();
    zsys_set_logident (ident);
    zsys_set_logstream (stderr);
    //  A lost peer must not kill us with SIGPIPE.
    signal (SIGPIPE, SIG_IGN);
}

int
jace_process_wait (zactor_t *actor)
{
    assert (actor);
    zpoller_t *poller = zpoller_new (actor, NULL);
    int rc = 0;
    while (!zsys_interrupted) {
        void *which = zpoller_wait (poller, 500);
        if (which == actor) {
            char *word = zstr_recv (actor);
            zstr_free (&word);
            rc = -1;
            break;
        }
    }
    zpoller_destroy (&poller);
    return rc;
}

int
jace_process_write_file (const char *path, const char *text)
{
    assert (path && text);
    char *temporary = zsys_sprintf ("%s.tmp.%d", path, (int) getpid ());
    FILE *file = fopen (temporary, "w");
    int rc = -1;
    if (!file)
        zsys_error ("cannot write %s: %s", temporary, strerror (errno));
    else {
        bool written = fputs (text, file) >= 0;
        if (fclose (file) == 0 && written && rename (temporary, path) == 0)
            rc = 0;
        else
            zsys_error ("cannot write %s: %s", path, strerror (errno));
    }
    if (rc)
        remove (temporary);
    zstr_free (&temporary);
    return rc;
}

int
jace_process_parse_int (const char *program, const char *option,
                        const char *text, long min, long max, long *value)
{
    char *end = NULL;
    errno = 0;
    long number = strtol (text, &end, 10);
    if (errno || end == text || *end || number < min || number > max) {
        fprintf (stderr, "%s: %s: '%s' is not an integer in [%ld, %ld]\n",
                 program, option, text, min, max);
        return -1;
    }
    *value = number;
    return 0;
}

int
jace_process_parse_double (const char *program, const char *option,
                           const char *text, double min, double max,
                           double *value)
{
    char *end = NULL;
    errno = 0;
    double number = strtod (text, &end);
    if (errno || end == text || *end || !isfinite (number)
    ||  number < min || number > max) {
        fprintf (stderr, "%s: %s: '%s' is not a number in [%g, %g]\n",
                 program, option, text, min, max);
        return -1;
    }
    *value = number;
    return 0;
}
