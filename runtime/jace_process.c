/*  =========================================================================
    jace_process - what every Jace binary's main does the same way
    =========================================================================
*/
#include "jace_process.h"

#include <errno.h>
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>

//  The signals that end a process on a bug, named for the last words.
static const struct {
    int number;
    const char *name;
} s_fatal_signals [] = {
    { SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
    { SIGILL, "SIGILL" }, { SIGABRT, "SIGABRT" }
};
#define FATAL_SIGNALS (sizeof s_fatal_signals / sizeof s_fatal_signals [0])

//  Written once at start: the handler may not call CZMQ or printf.
static char s_last_words [FATAL_SIGNALS][128];

//  A daemon that dies of a bug on a user's node must say so in its log,
//  with the stack, not vanish (a daemon once died after an ASSIGN and
//  left nothing to go on).  Only async-signal-safe calls; the default
//  action then runs, so the exit status and any core are as before.
static void
s_on_fatal_signal (int number)
{
    for (size_t i = 0; i < FATAL_SIGNALS; i++)
        if (s_fatal_signals [i].number == number) {
            const char *words = s_last_words [i];
            ssize_t rc = write (STDERR_FILENO, words, strlen (words));
            (void) rc;
        }
    void *frames [64];
    backtrace_symbols_fd (frames, backtrace (frames, 64), STDERR_FILENO);
    signal (number, SIG_DFL);
    raise (number);
}

//  Sanitizer builds keep their own handlers: their reports say more.
static void
s_report_fatal_signals (const char *ident)
{
#if !defined (__SANITIZE_ADDRESS__)
    //  backtrace() loads libgcc on its first call: do it now, not in a
    //  signal handler.
    void *frame;
    backtrace (&frame, 1);
    for (size_t i = 0; i < FATAL_SIGNALS; i++) {
        snprintf (s_last_words [i], sizeof s_last_words [i],
                  "F: (%s) killed by %s, pid %d; its stack:\n", ident,
                  s_fatal_signals [i].name, (int) getpid ());
        struct sigaction action = { .sa_handler = s_on_fatal_signal };
        sigemptyset (&action.sa_mask);
        sigaction (s_fatal_signals [i].number, &action, NULL);
    }
#else
    (void) ident;
#endif
}

void
jace_process_init (const char *ident)
{
    zsys_init ();
    zsys_set_logident (ident);
    zsys_set_logstream (stderr);
    //  A lost peer must not kill us with SIGPIPE.
    signal (SIGPIPE, SIG_IGN);
    s_report_fatal_signals (ident);
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

int
jace_process_parse_endpoint (const char *program, const char *option,
                             const char *text)
{
    bool valid = false;
    if (strncmp (text, "ipc://", 6) == 0)
        valid = text [6] != 0;
    else
    if (strncmp (text, "tcp://", 6) == 0) {
        const char *colon = strrchr (text + 6, ':');
        char *end = NULL;
        errno = 0;
        long port = colon && colon > text + 6 ? strtol (colon + 1, &end, 10)
                                              : 0;
        valid = !errno && end && end != colon + 1 && *end == 0
             && port >= 1 && port <= 65535;
    }
    if (!valid)
        fprintf (stderr, "%s: %s: '%s' is not an endpoint (tcp://HOST:PORT)"
                 "\n", program, option, text);
    return valid ? 0 : -1;
}
