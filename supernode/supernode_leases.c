/*  =========================================================================
    supernode_leases - the leases a super-node knows, as jobs
    =========================================================================
*/
#include "supernode_leases.h"

#include <errno.h>

//  One lease.
typedef struct {
    char owner [JACE_ENDPOINT_MAX]; //  Owner spawner's status endpoint
    char owner_key [JACE_ID_MAX];   //  Owner spawner's public key, or ""
    int64_t began_at;               //  When it began (msec, our clock)
    int64_t expires_at;             //  Forgotten after this (msec)
} lease_t;

struct _supernode_leases_t {
    zhashx_t *leases;               //  Job id -> lease_t, owned
};

//  Param key prefix and suffixes of a lease on the wire.
#define KEY_PREFIX "lease/"
#define KEY_OWNER "/owner"
#define KEY_OWNER_KEY "/owner_key"
#define KEY_AGE "/age_ms"

//  --------------------------------------------------------------------------

static void
s_lease_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

supernode_leases_t *
supernode_leases_new (void)
{
    supernode_leases_t *self = (supernode_leases_t *) zmalloc (sizeof *self);
    self->leases = zhashx_new ();
    zhashx_set_destructor (self->leases, s_lease_destroy);
    return self;
}

void
supernode_leases_destroy (supernode_leases_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        supernode_leases_t *self = *self_p;
        zhashx_destroy (&self->leases);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------

bool
supernode_leases_begin (supernode_leases_t *self, const char *job,
                        const char *owner, const char *owner_key,
                        int64_t began_at, int64_t expires_at)
{
    assert (self);
    assert (job && *job);
    assert (owner && owner_key);
    lease_t *lease = (lease_t *) zhashx_lookup (self->leases, job);
    bool is_new = lease == NULL;
    if (is_new) {
        lease = (lease_t *) zmalloc (sizeof *lease);
        lease->began_at = began_at;
        snprintf (lease->owner_key, sizeof lease->owner_key, "%s",
                  owner_key);
        zhashx_insert (self->leases, job, lease);
    }
    if (!*lease->owner)
        snprintf (lease->owner, sizeof lease->owner, "%s", owner);
    if (lease->expires_at < expires_at)
        lease->expires_at = expires_at;
    return is_new;
}

const char *
supernode_leases_owner_key (supernode_leases_t *self, const char *job)
{
    assert (self);
    assert (job);
    lease_t *lease = (lease_t *) zhashx_lookup (self->leases, job);
    return lease ? lease->owner_key : NULL;
}

bool
supernode_leases_move (supernode_leases_t *self, const char *job,
                       const char *owner)
{
    assert (self && job && owner);
    lease_t *lease = (lease_t *) zhashx_lookup (self->leases, job);
    if (!lease || !*owner || streq (lease->owner, owner))
        return false;
    snprintf (lease->owner, sizeof lease->owner, "%s", owner);
    return true;
}

bool
supernode_leases_renew (supernode_leases_t *self, const char *job,
                        int64_t expires_at)
{
    assert (self);
    assert (job);
    lease_t *lease = (lease_t *) zhashx_lookup (self->leases, job);
    if (!lease)
        return false;
    if (lease->expires_at < expires_at)
        lease->expires_at = expires_at;
    return true;
}

bool
supernode_leases_end (supernode_leases_t *self, const char *job)
{
    assert (self);
    assert (job);
    if (!zhashx_lookup (self->leases, job))
        return false;
    zhashx_delete (self->leases, job);
    return true;
}

size_t
supernode_leases_expire (supernode_leases_t *self, int64_t now,
                         zlist_t *expired)
{
    assert (self);
    zlist_t *dead = zlist_new ();
    zlist_autofree (dead);
    for (lease_t *lease = (lease_t *) zhashx_first (self->leases); lease;
         lease = (lease_t *) zhashx_next (self->leases))
        if (lease->expires_at < now)
            zlist_append (dead, (void *) zhashx_cursor (self->leases));
    size_t count = zlist_size (dead);
    for (char *job = (char *) zlist_first (dead); job;
         job = (char *) zlist_next (dead)) {
        zhashx_delete (self->leases, job);
        if (expired)
            zlist_append (expired, job);
    }
    zlist_destroy (&dead);
    return count;
}

size_t
supernode_leases_size (supernode_leases_t *self)
{
    assert (self);
    return zhashx_size (self->leases);
}

//  --------------------------------------------------------------------------

//  The job id in a key "lease/<job>/owner", copied into job; false if the
//  key is something else.
static bool
s_owner_key_job (const char *key, char *job, size_t job_size)
{
    size_t length = strlen (key);
    size_t prefix = strlen (KEY_PREFIX), suffix = strlen (KEY_OWNER);
    if (length <= prefix + suffix || strncmp (key, KEY_PREFIX, prefix)
    ||  strcmp (key + length - suffix, KEY_OWNER))
        return false;
    size_t job_length = length - prefix - suffix;
    if (job_length >= job_size)
        return false;
    memcpy (job, key + prefix, job_length);
    job [job_length] = 0;
    return true;
}

//  An age in msec from wire text, or 0 if it is not a sane number.
static int64_t
s_parse_age (const char *text)
{
    if (!text || !*text)
        return 0;
    errno = 0;
    char *end;
    long long age = strtoll (text, &end, 10);
    if (errno || *end || age < 0 || age > SUPERNODE_LEASE_AGE_MAX)
        return 0;
    return (int64_t) age;
}

size_t
supernode_leases_read (supernode_leases_t *self, jace_msg_t *msg,
                       int64_t now)
{
    assert (self);
    assert (msg);
    zhashx_purge (self->leases);
    zhash_t *params = jace_msg_params (msg);
    size_t count = 0;
    for (const char *owner = (const char *) zhash_first (params); owner;
         owner = (const char *) zhash_next (params)) {
        char job [JACE_ID_MAX];
        if (!s_owner_key_job (zhash_cursor (params), job, sizeof job)
        ||  !*job)
            continue;
        char key [JACE_ID_MAX + 16];
        snprintf (key, sizeof key, KEY_PREFIX "%s" KEY_AGE, job);
        //  zhash_lookup leaves the iteration cursor alone.
        int64_t age = s_parse_age ((const char *) zhash_lookup (params, key));
        snprintf (key, sizeof key, KEY_PREFIX "%s" KEY_OWNER_KEY, job);
        const char *owner_key = (const char *) zhash_lookup (params, key);
        supernode_leases_begin (self, job, owner,
                                owner_key ? owner_key : "", now - age,
                                INT64_MAX);
        count++;
    }
    return count;
}

//  Set param lease/<job><suffix> to value unless msg has a non-empty one.
static void
s_merge_param (jace_msg_t *msg, const char *job, const char *suffix,
               const char *value)
{
    char key [JACE_ID_MAX + 16];
    snprintf (key, sizeof key, KEY_PREFIX "%s%s", job, suffix);
    const char *known = jace_msg_param (msg, key);
    if (!known || !*known)
        jace_msg_set_param (msg, key, value);
}

size_t
supernode_leases_describe (supernode_leases_t *self, jace_msg_t *msg,
                           int64_t now, size_t max)
{
    assert (self);
    assert (msg);
    size_t left_out = 0;
    for (lease_t *lease = (lease_t *) zhashx_first (self->leases); lease;
         lease = (lease_t *) zhashx_next (self->leases)) {
        const char *job = (const char *) zhashx_cursor (self->leases);
        char age_key [JACE_ID_MAX + 16];
        snprintf (age_key, sizeof age_key, KEY_PREFIX "%s" KEY_AGE, job);
        int64_t age = now - lease->began_at;
        const char *known_age = jace_msg_param (msg, age_key);
        if (!known_age && zhash_size (jace_msg_params (msg))
                          / SUPERNODE_LEASE_PARAMS >= max) {
            left_out++;
            continue;
        }
        if (known_age && s_parse_age (known_age) > age)
            age = s_parse_age (known_age);
        char age_text [32];
        snprintf (age_text, sizeof age_text, "%" PRId64, age);
        jace_msg_set_param (msg, age_key, age_text);
        s_merge_param (msg, job, KEY_OWNER, lease->owner);
        s_merge_param (msg, job, KEY_OWNER_KEY, lease->owner_key);
    }
    return left_out;
}
