/*  =========================================================================
    spawner_events - the job's event log, one JSON object per line

    Every event a script may want (submit, lease, assign, start, progress,
    verification, convergence, crash, dead, replace, restart, restored,
    fenced, resume, result, failure) as a line
        {"event":"NAME","time":SECONDS_SINCE_SUBMIT,"job":"ID",...}
    written and flushed at once, so a reader tailing the file sees each
    event as it happens.  The last line of a successful job is the
    "result" event, with the verified relative residual under "residual".
    =========================================================================
*/
#ifndef SPAWNER_EVENTS_H_INCLUDED
#define SPAWNER_EVENTS_H_INCLUDED

#include <czmq.h>

typedef struct _spawner_events_t spawner_events_t;

//  Open the log at path (truncated), or a log that writes nothing when
//  path is NULL.  Returns NULL if the file cannot be created.  The first
//  line is a "submit" event with the wall-clock time ("wall", seconds
//  since the epoch).
spawner_events_t *
    spawner_events_new (const char *path, const char *job);

//  Open the log at path to add to it (a resumed job): times go on from the
//  "submit" event's wall-clock time when the log has one.  Returns NULL
//  if the file cannot be opened.
spawner_events_t *
    spawner_events_append (const char *path, const char *job);

//  Close the log; nullifies the reference. Safe on NULL.
void
    spawner_events_destroy (spawner_events_t **self_p);

//  Write one event; after the "result" event, nothing (the log's last
//  line is the verified answer).  `fields` is a printf format producing
//  the JSON members after the common ones, starting with a comma, e.g.
//      spawner_events_write (log, "assign", ",\"task\":%d", 3);
void
    spawner_events_write (spawner_events_t *self, const char *event,
                          const char *fields, ...) CHECK_PRINTF (3);

//  Escape text for a JSON string into dest (always NUL-terminated).
void
    spawner_events_escape (char *dest, size_t size, const char *text);

#endif
