/*  =========================================================================
    supernode_ended - jobs the grid knows are over
    =========================================================================
*/
#include "supernode_ended.h"

#include <errno.h>

//  One job known to be over.
typedef struct {
    int64_t at;                         //  When it ended (msec, our clock)
    char proof [JACE_KEY_TEXT + 1];     //  Its proof, as first heard
} record_t;

struct _supernode_ended_t {
    zhashx_t *jobs;             //  Job id -> record_t, owned
};

//  Param key prefix of a record on the wire.
#define KEY_PREFIX "ended/"

static void
s_record_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

supernode_ended_t *
supernode_ended_new (void)
{
    supernode_ended_t *self = (supernode_ended_t *) zmalloc (sizeof *self);
    self->jobs = zhashx_new ();
    zhashx_set_destructor (self->jobs, s_record_destroy);
    return self;
}

void
supernode_ended_destroy (supernode_ended_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        supernode_ended_t *self = *self_p;
        zhashx_destroy (&self->jobs);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------

//  Forget the record that ended first, to make room.
static void
s_drop_oldest (supernode_ended_t *self)
{
    const char *oldest = NULL;
    int64_t oldest_at = INT64_MAX;
    for (record_t *record = (record_t *) zhashx_first (self->jobs); record;
         record = (record_t *) zhashx_next (self->jobs))
        if (record->at < oldest_at) {
            oldest_at = record->at;
            oldest = (const char *) zhashx_cursor (self->jobs);
        }
    if (oldest) {
        char *job = strdup (oldest);
        zhashx_delete (self->jobs, job);
        free (job);
    }
}

bool
supernode_ended_add (supernode_ended_t *self, const char *job,
                     int64_t ended_at, const char *proof)
{
    assert (self);
    assert (job && proof);
    if (!*job || !jace_name_plain (job) || strlen (job) >= JACE_ID_MAX
    ||  strlen (proof) != JACE_KEY_TEXT || !jace_name_plain (proof))
        return false;
    record_t *record = (record_t *) zhashx_lookup (self->jobs, job);
    if (record) {
        if (ended_at < record->at)
            record->at = ended_at;
        return false;
    }
    if (zhashx_size (self->jobs) >= SUPERNODE_ENDED_MAX)
        s_drop_oldest (self);
    record = (record_t *) zmalloc (sizeof *record);
    record->at = ended_at;
    snprintf (record->proof, sizeof record->proof, "%s", proof);
    zhashx_insert (self->jobs, job, record);
    return true;
}

const char *
supernode_ended_proof (supernode_ended_t *self, const char *job)
{
    assert (self);
    record_t *record = job && *job
                     ? (record_t *) zhashx_lookup (self->jobs, job) : NULL;
    return record ? record->proof : NULL;
}

void
supernode_ended_expire (supernode_ended_t *self, int64_t now)
{
    assert (self);
    zlist_t *old = zlist_new ();
    zlist_autofree (old);
    for (record_t *record = (record_t *) zhashx_first (self->jobs); record;
         record = (record_t *) zhashx_next (self->jobs))
        if (now - record->at > SUPERNODE_ENDED_KEEP_MSEC)
            zlist_append (old, (void *) zhashx_cursor (self->jobs));
    for (char *job = (char *) zlist_first (old); job;
         job = (char *) zlist_next (old))
        zhashx_delete (self->jobs, job);
    zlist_destroy (&old);
}

//  --------------------------------------------------------------------------

//  A record's value from the wire, "AGE PROOF", into age (msec) and
//  proof; false if it is not one we keep.
static bool
s_parse_record (const char *text, int64_t *age, char *proof)
{
    errno = 0;
    char *end;
    long long value = strtoll (text, &end, 10);
    if (errno || end == text || *end != ' ' || value < 0
    ||  value > SUPERNODE_ENDED_KEEP_MSEC
    ||  strlen (end + 1) != JACE_KEY_TEXT)
        return false;
    *age = (int64_t) value;
    memcpy (proof, end + 1, JACE_KEY_TEXT + 1);
    return true;
}

size_t
supernode_ended_read (supernode_ended_t *self, jace_msg_t *msg, int64_t now)
{
    assert (self);
    assert (msg);
    zhash_t *params = jace_msg_params (msg);
    size_t prefix = strlen (KEY_PREFIX);
    size_t added = 0;
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params)) {
        const char *key = zhash_cursor (params);
        int64_t age;
        char proof [JACE_KEY_TEXT + 1];
        if (strncmp (key, KEY_PREFIX, prefix) == 0
        &&  s_parse_record (value, &age, proof)
        &&  supernode_ended_add (self, key + prefix, now - age, proof))
            added++;
    }
    return added;
}

void
supernode_ended_describe (supernode_ended_t *self, jace_msg_t *msg,
                          int64_t now)
{
    assert (self);
    assert (msg);
    for (record_t *record = (record_t *) zhashx_first (self->jobs); record;
         record = (record_t *) zhashx_next (self->jobs)) {
        char key [JACE_ID_MAX + 16], value [JACE_KEY_TEXT + 32];
        snprintf (key, sizeof key, KEY_PREFIX "%s",
                  (const char *) zhashx_cursor (self->jobs));
        snprintf (value, sizeof value, "%" PRId64 " %s", now - record->at,
                  record->proof);
        jace_msg_set_param (msg, key, value);
    }
}

size_t
supernode_ended_size (supernode_ended_t *self)
{
    assert (self);
    return zhashx_size (self->jobs);
}
