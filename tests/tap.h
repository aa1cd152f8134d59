/*  =========================================================================
    tap.h - the Test Anything Protocol for Jace's test programs

    A header-only TAP producer: plan, checks named as sentences, and a final
    status.  stdout carries TAP only; diagnostics go to stderr as "# ..."
    lines so the automake TAP driver shows them.  Every test program
    includes it once.
    =========================================================================
*/
#ifndef JACE_TAP_H_INCLUDED
#define JACE_TAP_H_INCLUDED

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

//  Counters of the running test program (one per process).
typedef struct {
    int run;                    //  Checks reported so far
    int failed;                 //  Checks that failed
} tap_state_t;

static tap_state_t tap_state;

//  Announce the number of checks.
static inline void
tap_plan (int count)
{
    printf ("1..%d\n", count);
    fflush (stdout);
}

//  Print a diagnostic line (never part of the TAP stream proper).
static inline void
diag (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "# ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\n");
    va_end (args);
}

//  Report one check; returns the condition so callers can react.
static inline bool
ok (bool condition, const char *name)
{
    tap_state.run++;
    if (!condition)
        tap_state.failed++;
    printf ("%sok %d - %s\n", condition ? "" : "not ", tap_state.run, name);
    fflush (stdout);
    return condition;
}

//  Check two integers are equal.
static inline bool
is_int (long long got, long long want, const char *name)
{
    bool passed = ok (got == want, name);
    if (!passed)
        diag ("  got %lld, want %lld", got, want);
    return passed;
}

//  Check |got - want| <= tolerance.
static inline bool
is_double (double got, double want, double tolerance, const char *name)
{
    bool passed = ok (fabs (got - want) <= tolerance, name);
    if (!passed)
        diag ("  got %.17g, want %.17g (tolerance %g)", got, want, tolerance);
    return passed;
}

//  True if a line of the file at path (an events or log file) contains
//  needle; false too if the file cannot be read.
static inline bool
tap_file_has (const char *path, const char *needle)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return false;
    char line [4096];
    bool found = false;
    while (!found && fgets (line, sizeof line, file))
        found = strstr (line, needle) != NULL;
    fclose (file);
    return found;
}

//  Close the run: 0 if every check passed, 1 otherwise.
static inline int
tap_done (void)
{
    return tap_state.failed == 0 ? 0 : 1;
}

#endif
