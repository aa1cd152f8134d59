/*  =========================================================================
    test_spawner_events - the event log ends with the verified answer

    Users and tools (README, jace-spawner(1)) read the result off the log's
    last line; a report the spawner handles after it (a task's late
    PROGRESS, which once logged scatter_makespan after the result) must
    not follow it.
    =========================================================================
*/
#include "spawner_events.h"
#include "tap.h"

//  The log's lines, and its last line's event name into last
static int
s_read (const char *path, char *last, size_t size)
{
    FILE *file = fopen (path, "r");
    char line [1024];
    int lines = 0;
    *last = 0;
    while (file && fgets (line, sizeof line, file)) {
        lines++;
        const char *name = strstr (line, "\"event\":\"");
        if (name) {
            name += strlen ("\"event\":\"");
            snprintf (last, size, "%.*s", (int) strcspn (name, "\""), name);
        }
    }
    if (file)
        fclose (file);
    return lines;
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (3);
    char path [] = "/tmp/test_spawner_events.XXXXXX";
    int fd = mkstemp (path);
    ok (fd >= 0, "a temporary log file");
    close (fd);
    spawner_events_t *events = spawner_events_new (path, "job-events");
    spawner_events_write (events, "assign", ",\"task\":%d", 0);
    spawner_events_write (events, "result", ",\"seconds\":%.3f", 1.0);
    spawner_events_write (events, "scatter_makespan", ",\"measured_seconds\""
                          ":%.3f", 2.0);
    spawner_events_write (events, "progress", ",\"task\":%d", 1);
    spawner_events_destroy (&events);
    char last [64];
    int lines = s_read (path, last, sizeof last);
    ok (lines == 3, "submit, assign and result are logged, nothing else");
    diag ("%d lines, the last one %s", lines, last);
    ok (streq (last, "result"), "nothing follows the result");
    unlink (path);
    return tap_done ();
}
