/*  =========================================================================
    supernode_ended - jobs the grid knows are over
    =========================================================================
*/
#include "supernode_ended.h"

#include <errno.h>

struct _supernode_ended_t {
    zhashx_t *jobs;             //  Job id -> int64_t when it ended, owned
};

//  Param key prefix of a record on the wire.
#define KEY_PREFIX "ended/"

static void
s_time_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

supernode_ended_t *
supernode_ended_new (void)
{
    supernode_ended_t *self = (supernode_ended_t *) zmalloc (sizeof *self);
    self->jobs = zhashx_new ();
    zhashx_set_destructor (self->jobs, s_time_destroy);
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
    for (int64_t *at = (int64_t *) zhashx_first (self->jobs); at;
         at = (int64_t *) zhashx_next (self->jobs))
        if (*at < oldest_at) {
            oldest_at = *at;
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
                     int64_t ended_at)
{
    assert (self);
    assert (job);
    if (!*job || !jace_name_plain (job) || strlen (job) >= JACE_ID_MAX)
        return false;
    int64_t *at = (int64_t *) zhashx_lookup (self->jobs, job);
    if (at) {
        if (ended_at < *at)
            *at = ended_at;
        return false;
    }
    if (zhashx_size (self->jobs) >= SUPERNODE_ENDED_MAX)
        s_drop_oldest (self);
    at = (int64_t *) zmalloc (sizeof *at);
    *at = ended_at;
    zhashx_insert (self->jobs, job, at);
    return true;
}

bool
supernode_ended_has (supernode_ended_t *self, const char *job)
{
    assert (self);
    return job && *job && zhashx_lookup (self->jobs, job) != NULL;
}

void
supernode_ended_expire (supernode_ended_t *self, int64_t now)
{
    assert (self);
    zlist_t *old = zlist_new ();
    zlist_autofree (old);
    for (int64_t *at = (int64_t *) zhashx_first (self->jobs); at;
         at = (int64_t *) zhashx_next (self->jobs))
        if (now - *at > SUPERNODE_ENDED_KEEP_MSEC)
            zlist_append (old, (void *) zhashx_cursor (self->jobs));
    for (char *job = (char *) zlist_first (old); job;
         job = (char *) zlist_next (old))
        zhashx_delete (self->jobs, job);
    zlist_destroy (&old);
}

//  --------------------------------------------------------------------------

//  An age in msec from wire text, or -1 if it is not one we keep.
static int64_t
s_parse_age (const char *text)
{
    if (!text || !*text)
        return -1;
    errno = 0;
    char *end;
    long long age = strtoll (text, &end, 10);
    if (errno || *end || age < 0 || age > SUPERNODE_ENDED_KEEP_MSEC)
        return -1;
    return (int64_t) age;
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
        int64_t age = s_parse_age (value);
        if (strncmp (key, KEY_PREFIX, prefix) == 0 && age >= 0
        &&  supernode_ended_add (self, key + prefix, now - age))
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
    for (int64_t *at = (int64_t *) zhashx_first (self->jobs); at;
         at = (int64_t *) zhashx_next (self->jobs)) {
        char key [JACE_ID_MAX + 16], age [32];
        snprintf (key, sizeof key, KEY_PREFIX "%s",
                  (const char *) zhashx_cursor (self->jobs));
        snprintf (age, sizeof age, "%" PRId64, now - *at);
        jace_msg_set_param (msg, key, age);
    }
}

size_t
supernode_ended_size (supernode_ended_t *self)
{
    assert (self);
    return zhashx_size (self->jobs);
}
