/*  =========================================================================
    jace_process - what every Jace binary's main does the same way

    Logging set-up, waiting for SIGINT/SIGTERM while the server actor runs,
    writing small files atomically (endpoint files read by launchers), and
    parsing numbers from the command line with a clear complaint.
    =========================================================================
*/
#ifndef JACE_PROCESS_H_INCLUDED
#define JACE_PROCESS_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Name log lines after the process and send them to stderr.
void
    jace_process_init (const char *ident);

//  Block until SIGINT or SIGTERM, or until the actor sends anything on its
//  pipe (it does so only when it cannot go on).  Returns 0 on a signal,
//  -1 if the actor gave up.
int
    jace_process_wait (zactor_t *actor);

//  Write text to path through a temporary file and a rename, so readers
//  never see half of it.  Returns 0 or -1 (reason logged).
int
    jace_process_write_file (const char *path, const char *text);

//  Parse a whole string as a number within [min, max]; on failure print
//  "PROGRAM: OPTION: reason" to stderr and return -1.
int
    jace_process_parse_int (const char *program, const char *option,
                            const char *text, long min, long max,
                            long *value);
int
    jace_process_parse_double (const char *program, const char *option,
                               const char *text, double min, double max,
                               double *value);

//  Check that text reads as an endpoint to connect to: tcp://HOST:PORT
//  (port 1..65535) or ipc://PATH.  On failure print "PROGRAM: OPTION:
//  'TEXT' is not an endpoint (tcp://HOST:PORT)" and return -1, so that a
//  mistyped one is bad usage, not a peer that never answers.
int
    jace_process_parse_endpoint (const char *program, const char *option,
                                 const char *text);

#ifdef __cplusplus
}
#endif

#endif
