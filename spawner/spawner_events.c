/*  =========================================================================
    spawner_events - the job's event log, one JSON object per line
    =========================================================================
*/
#include "spawner_events.h"

struct _spawner_events_t {
    FILE *file;                 //  Log file, or NULL to write nothing
    char *job;                  //  Job id on every line
    int64_t start;              //  Submission time (msec, monotonic)
    bool ended;                 //  The "result" line is written: nothing
                                //  follows it
};

static spawner_events_t *
s_events_new (FILE *file, const char *job, int64_t start)
{
    spawner_events_t *self = (spawner_events_t *) zmalloc (sizeof *self);
    self->file = file;
    self->job = strdup (job);
    self->start = start;
    return self;
}

spawner_events_t *
spawner_events_new (const char *path, const char *job)
{
    assert (job);
    FILE *file = NULL;
    if (path && !(file = fopen (path, "w")))
        return NULL;
    spawner_events_t *self = s_events_new (file, job, zclock_mono ());
    spawner_events_write (self, "submit", ",\"wall\":%.3f",
                          zclock_time () / 1000.0);
    return self;
}

//  Wall-clock time of the log's "submit" event, or -1.
static double
s_submitted (FILE *file)
{
    char line [1024];
    rewind (file);
    if (!fgets (line, sizeof line, file))
        return -1;
    const char *wall = strstr (line, "\"wall\":");
    return strstr (line, "\"event\":\"submit\"") && wall
         ? strtod (wall + 7, NULL) : -1;
}

spawner_events_t *
spawner_events_append (const char *path, const char *job)
{
    assert (path && job);
    FILE *file = fopen (path, "a+");
    if (!file)
        return NULL;
    double submitted = s_submitted (file);
    int64_t start = zclock_mono ();
    if (submitted > 0)
        start -= zclock_time () - (int64_t) (submitted * 1000);
    return s_events_new (file, job, start);
}

void
spawner_events_destroy (spawner_events_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        spawner_events_t *self = *self_p;
        if (self->file)
            fclose (self->file);
        free (self->job);
        free (self);
        *self_p = NULL;
    }
}

void
spawner_events_write (spawner_events_t *self, const char *event,
                      const char *fields, ...)
{
    assert (self);
    //  Users and tools read the verified answer off the last line: a late
    //  report (a PROGRESS handled after the result, say) is not logged.
    if (!self->file || self->ended)
        return;
    self->ended = streq (event, "result");
    fprintf (self->file, "{\"event\":\"%s\",\"time\":%.3f,\"job\":\"%s\"",
             event, (zclock_mono () - self->start) / 1000.0, self->job);
    va_list args;
    va_start (args, fields);
    vfprintf (self->file, fields, args);
    va_end (args);
    fputs ("}\n", self->file);
    fflush (self->file);
}

void
spawner_events_escape (char *dest, size_t size, const char *text)
{
    assert (dest && size > 0 && text);
    size_t out = 0;
    for (const char *in = text; *in && out + 7 < size; in++) {
        unsigned char c = (unsigned char) *in;
        if (c == '"' || c == '\\') {
            dest [out++] = '\\';
            dest [out++] = (char) c;
        }
        else
        if (c < 0x20)
            out += (size_t) snprintf (dest + out, size - out, "\\u%04x", c);
        else
            dest [out++] = (char) c;
    }
    dest [out] = 0;
}
