/*  =========================================================================
    supernode_registry - the daemons a super-node knows, and their leases
    =========================================================================
*/
#include "supernode_registry.h"

#include <math.h>
#include <sodium.h>

//  One registered daemon.
typedef struct {
    jace_node_t node;               //  As last reported; state is derived
    jace_key_t lease_key;           //  Its lease key (HELLO's token)
    char user_id [JACE_ID_MAX];     //  Key it authenticated with, or ""
    int64_t reported_state;         //  State the daemon itself reported
    int64_t expires_at;             //  Forgotten after this (msec)
    int64_t appeared_at;            //  Registered (or came back) then
    int64_t heard_at;               //  Its last HELLO (msec)
    int64_t period;                 //  Time between its last two HELLOs
    char lease [JACE_ID_MAX];       //  Lease holding it, or ""
    int64_t lease_expires_at;       //  Lease lapses after this (msec)
    bool untold;                    //  Lease changed since the daemon
                                    //  was last told (in self->untold)
} entry_t;

struct _supernode_registry_t {
    char *endpoint;                 //  Our own endpoint, stamped on nodes
    zhashx_t *entries;              //  Daemon id -> entry_t, owned
    size_t max_daemons;             //  Most entries
    zlist_t *untold;                //  Ids whose lease changed, untold
};

//  --------------------------------------------------------------------------

//  --------------------------------------------------------------------------

static void
s_entry_destroy (void **item_p)
{
    entry_t *entry = (entry_t *) *item_p;
    if (entry) {
        jace_key_wipe (&entry->lease_key);
        free (entry);
    }
    *item_p = NULL;
}

supernode_registry_t *
supernode_registry_new (const char *endpoint, size_t max_daemons)
{
    assert (endpoint);
    supernode_registry_t *self = (supernode_registry_t *) zmalloc (sizeof *self);
    self->endpoint = strdup (endpoint);
    self->max_daemons = max_daemons ? max_daemons : SUPERNODE_MAX_DAEMONS;
    self->entries = zhashx_new ();
    zhashx_set_destructor (self->entries, s_entry_destroy);
    self->untold = zlist_new ();
    zlist_autofree (self->untold);
    return self;
}

void
supernode_registry_destroy (supernode_registry_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        supernode_registry_t *self = *self_p;
        zhashx_destroy (&self->entries);
        zlist_destroy (&self->untold);
        free (self->endpoint);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  The state others see: working if the daemon says so, else leased while
//  a lease holds it, else free.

static void
s_derive_state (entry_t *entry)
{
    if (entry->reported_state == JACE_NODE_WORKING)
        entry->node.state = JACE_NODE_WORKING;
    else
    if (*entry->lease)
        entry->node.state = JACE_NODE_LEASED;
    else
        entry->node.state = JACE_NODE_FREE;
}

//  Hold entry for `lease` ("" to free it) until expires_at.  A change is
//  one the daemon must hear of: it refuses the ASSIGN of a job other
//  than the one its lease is for, so that a spawner whose lease lapsed
//  cannot take a daemon since leased to another job.
static void
s_hold (supernode_registry_t *self, entry_t *entry, const char *lease,
        int64_t expires_at)
{
    if (!streq (entry->lease, lease) && !entry->untold) {
        entry->untold = true;
        zlist_append (self->untold, entry->node.id);    //  Copied
    }
    snprintf (entry->lease, sizeof entry->lease, "%s", lease);
    entry->lease_expires_at = expires_at;
    s_derive_state (entry);
}

//  True if the entry was registered with this lease key and user id.
static bool
s_entry_holder (entry_t *entry, const jace_key_t *lease_key,
                const char *user_id)
{
    return sodium_memcmp (entry->lease_key.bytes, lease_key->bytes,
                          JACE_KEY_BYTES) == 0
        && streq (entry->user_id, user_id);
}

//  A fresh entry for node, or NULL if the registry is full.
static entry_t *
s_entry_new (supernode_registry_t *self, const jace_node_t *node,
             const jace_key_t *lease_key, const char *user_id, int64_t now)
{
    if (zhashx_size (self->entries) >= self->max_daemons)
        return NULL;
    entry_t *entry = (entry_t *) zmalloc (sizeof *entry);
    entry->lease_key = *lease_key;
    snprintf (entry->user_id, sizeof entry->user_id, "%s", user_id);
    entry->appeared_at = now;
    zhashx_insert (self->entries, node->id, entry);
    return entry;
}

supernode_refresh_t
supernode_registry_refresh (supernode_registry_t *self,
                            const jace_node_t *node,
                            const jace_key_t *lease_key,
                            const char *user_id, int64_t now,
                            int64_t expires_at, int64_t newest_elsewhere)
{
    assert (self);
    assert (node && lease_key && user_id);
    entry_t *entry = (entry_t *) zhashx_lookup (self->entries, node->id);
    //  A record past its expiry is the id's previous life (a daemon that
    //  restarted with a new lease key): it goes, whoever asks.
    if (entry && entry->expires_at < now
    &&  !s_entry_holder (entry, lease_key, user_id)) {
        zhashx_delete (self->entries, node->id);
        entry = NULL;
    }
    if (entry && !s_entry_holder (entry, lease_key, user_id))
        return SUPERNODE_CLAIMED;
    bool is_new = entry == NULL;
    if (is_new && !(entry = s_entry_new (self, node, lease_key, user_id,
                                         now)))
        return SUPERNODE_FULL;
    if (!is_new)
        entry->period = now - entry->heard_at;
    //  A peer listed it after we did, yet it talks to us: it came back.
    if (entry->appeared_at < newest_elsewhere)
        entry->appeared_at = now;
    entry->heard_at = now;
    entry->node = *node;
    snprintf (entry->node.supernode, sizeof entry->node.supernode, "%s",
              self->endpoint);
    entry->reported_state = node->state;
    entry->expires_at = expires_at;
    s_derive_state (entry);
    return is_new ? SUPERNODE_JOINED : SUPERNODE_REFRESHED;
}

int64_t
supernode_registry_appeared_at (supernode_registry_t *self, const char *id)
{
    assert (self);
    assert (id);
    entry_t *entry = (entry_t *) zhashx_lookup (self->entries, id);
    return entry ? entry->appeared_at : -1;
}

int
supernode_registry_remove (supernode_registry_t *self, const char *id,
                           const jace_key_t *lease_key, const char *user_id)
{
    assert (self);
    assert (id && lease_key && user_id);
    entry_t *entry = (entry_t *) zhashx_lookup (self->entries, id);
    if (!entry)
        return 0;
    if (!s_entry_holder (entry, lease_key, user_id))
        return -1;
    zhashx_delete (self->entries, id);
    return 1;
}

//  --------------------------------------------------------------------------

//  Ids (borrowed) of the silent entries for which `moved` holds.
static zlist_t *
s_select_moved (supernode_registry_t *self, int64_t now,
                supernode_registry_filter_fn *moved, void *arg)
{
    zlist_t *selected = zlist_new ();
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries)) {
        //  A daemon that missed no HELLO still talks to us, whatever a
        //  peer says; the period floor absorbs a single late HELLO.
        int64_t period = entry->period > 100 ? entry->period : 100;
        if (now - entry->heard_at > 2 * period
        &&  moved (entry->node.id, entry->appeared_at, arg))
            zlist_append (selected, entry->node.id);
    }
    return selected;
}

//  Delete the entries named in ids; copy each to `removed` if not NULL.
static size_t
s_delete (supernode_registry_t *self, zlist_t *ids, zlist_t *removed)
{
    size_t count = 0;
    for (char *id = (char *) zlist_first (ids); id;
         id = (char *) zlist_next (ids)) {
        if (removed)
            zlist_append (removed, id);     //  Copied if autofree
        //  The id lives in the entry: copy it before deleting.
        char key [JACE_ID_MAX];
        snprintf (key, sizeof key, "%s", id);
        zhashx_delete (self->entries, key);
        count++;
    }
    return count;
}

size_t
supernode_registry_drop_moved (supernode_registry_t *self, int64_t now,
                               supernode_registry_filter_fn *moved,
                               void *arg, zlist_t *dropped)
{
    assert (self);
    assert (moved);
    zlist_t *ids = s_select_moved (self, now, moved, arg);
    size_t count = s_delete (self, ids, dropped);
    zlist_destroy (&ids);
    return count;
}

size_t
supernode_registry_expire (supernode_registry_t *self, int64_t now,
                           zlist_t *expired)
{
    assert (self);
    zlist_t *dead = zlist_new ();
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries)) {
        if (entry->expires_at < now)
            zlist_append (dead, entry->node.id);
        else
        if (*entry->lease && entry->lease_expires_at < now)
            s_hold (self, entry, "", 0);
    }
    size_t removed = s_delete (self, dead, expired);
    zlist_destroy (&dead);
    return removed;
}

//  --------------------------------------------------------------------------

size_t
supernode_registry_size (supernode_registry_t *self)
{
    assert (self);
    return zhashx_size (self->entries);
}

size_t
supernode_registry_max (supernode_registry_t *self)
{
    assert (self);
    return self->max_daemons;
}

size_t
supernode_registry_free_count (supernode_registry_t *self)
{
    assert (self);
    size_t count = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (entry->node.state == JACE_NODE_FREE)
            count++;
    return count;
}

//  --------------------------------------------------------------------------
//  A free daemon and whether it is in the preferred cluster.
typedef struct {
    entry_t *entry;             //  Borrowed
    bool near;                  //  In the preferred cluster
} candidate_t;

//  Order for leasing: the preferred cluster first (a replacement near the
//  task it replaces), then fastest first, then by id so that equal nodes
//  are handed out in a stable order.
static int
s_compare_for_lease (const void *a, const void *b)
{
    const candidate_t *left = (const candidate_t *) a;
    const candidate_t *right = (const candidate_t *) b;
    if (left->near != right->near)
        return left->near ? -1 : 1;
    const jace_node_t *l = &left->entry->node, *r = &right->entry->node;
    if (l->power != r->power)
        return l->power > r->power ? -1 : 1;
    return strcmp (l->id, r->id);
}

//  Add entry's node to msg, with the lease token that lets spawner_id
//  assign it a task of `lease`.
static void
s_grant_entry (entry_t *entry, const char *lease, const char *spawner_id,
               jace_msg_t *msg)
{
    jace_msg_add_node (msg, &entry->node);
    char key [JACE_ID_MAX + 8], token [JACE_KEY_TEXT + 1];
    snprintf (key, sizeof key, "token/%s", entry->node.id);
    jace_lease_token (&entry->lease_key, lease, spawner_id, entry->node.id,
                      token);
    jace_msg_set_param (msg, key, token);
}

//  True if entry's daemon may be leased for application app ("" for any).
static bool
s_runs (const entry_t *entry, const char *app)
{
    return !*app || jace_node_has_app (&entry->node, app);
}

size_t
supernode_registry_lease (supernode_registry_t *self, const char *lease,
                          const char *spawner_id, const char *app,
                          size_t count, int64_t expires_at,
                          const char *preferred,
                          supernode_registry_filter_fn *exclude, void *arg,
                          jace_msg_t *msg)
{
    assert (self);
    assert (lease && *lease);
    assert (spawner_id && app);
    size_t free_count = supernode_registry_free_count (self);
    if (free_count == 0 || count == 0)
        return 0;
    candidate_t *candidates = (candidate_t *) zmalloc (free_count
                                                       * sizeof (candidate_t));
    size_t found = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (entry->node.state == JACE_NODE_FREE && s_runs (entry, app)
        &&  !(exclude && exclude (entry->node.id, entry->appeared_at, arg)))
            candidates [found++] = (candidate_t) { entry, preferred
                && *preferred && streq (entry->node.cluster, preferred) };
    qsort (candidates, found, sizeof (candidate_t), s_compare_for_lease);
    size_t leased = found < count ? found : count;
    for (size_t i = 0; i < leased; i++) {
        entry_t *entry = candidates [i].entry;
        s_hold (self, entry, lease, expires_at);
        if (msg)
            s_grant_entry (entry, lease, spawner_id, msg);
    }
    free (candidates);
    return leased;
}

size_t
supernode_registry_lease_ids (supernode_registry_t *self, const char *lease,
                              const char *spawner_id, const char *app,
                              const char **ids,
                              size_t count, int64_t expires_at,
                              supernode_registry_filter_fn *exclude,
                              void *arg, jace_msg_t *msg)
{
    assert (self);
    assert (lease && *lease);
    assert (spawner_id);
    assert (ids || count == 0);
    size_t leased = 0;
    for (size_t i = 0; i < count; i++) {
        entry_t *entry = (entry_t *) zhashx_lookup (self->entries, ids [i]);
        //  A repeated id finds its daemon leased already: granted once.
        if (!entry || entry->node.state != JACE_NODE_FREE
        ||  !s_runs (entry, app)
        ||  (exclude && exclude (entry->node.id, entry->appeared_at, arg)))
            continue;
        s_hold (self, entry, lease, expires_at);
        if (msg)
            s_grant_entry (entry, lease, spawner_id, msg);
        leased++;
    }
    return leased;
}

const char *
supernode_registry_lease_of (supernode_registry_t *self, const char *id)
{
    assert (self && id);
    entry_t *entry = (entry_t *) zhashx_lookup (self->entries, id);
    return entry ? entry->lease : NULL;
}

zlist_t *
supernode_registry_untold (supernode_registry_t *self)
{
    assert (self);
    if (zlist_size (self->untold) == 0)
        return NULL;            //  Called after every message: no garbage
    zlist_t *ids = self->untold;
    for (char *id = (char *) zlist_first (ids); id;
         id = (char *) zlist_next (ids)) {
        entry_t *entry = (entry_t *) zhashx_lookup (self->entries, id);
        if (entry)
            entry->untold = false;
    }
    self->untold = zlist_new ();
    zlist_autofree (self->untold);
    return ids;
}

bool
supernode_registry_holds (supernode_registry_t *self, const char *lease)
{
    assert (self);
    assert (lease);
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (*lease && streq (entry->lease, lease))
            return true;
    return false;
}

size_t
supernode_registry_take_back (supernode_registry_t *self, const char *lease,
                              int64_t expires_at)
{
    assert (self);
    assert (lease);
    size_t taken = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (*lease && !*entry->lease
        &&  entry->reported_state == JACE_NODE_WORKING
        &&  streq (entry->node.job, lease)) {
            s_hold (self, entry, lease, expires_at);
            taken++;
        }
    return taken;
}

size_t
supernode_registry_renew (supernode_registry_t *self, const char *lease,
                          int64_t expires_at)
{
    assert (self);
    assert (lease);
    size_t renewed = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (*lease && streq (entry->lease, lease)) {
            entry->lease_expires_at = expires_at;
            renewed++;
        }
    return renewed;
}

size_t
supernode_registry_release (supernode_registry_t *self, const char *lease,
                            const char *id)
{
    assert (self);
    assert (lease);
    size_t released = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries)) {
        if (!*lease || !streq (entry->lease, lease))
            continue;
        if (id && !streq (entry->node.id, id))
            continue;
        s_hold (self, entry, "", 0);
        released++;
    }
    return released;
}

size_t
supernode_registry_release_idle (supernode_registry_t *self,
                                 const char *lease)
{
    assert (self && lease);
    size_t released = 0;
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (*lease && streq (entry->lease, lease)
        &&  entry->node.state == JACE_NODE_LEASED) {
            s_hold (self, entry, "", 0);
            released++;
        }
    return released;
}

//  --------------------------------------------------------------------------

void
supernode_registry_describe (supernode_registry_t *self,
                             supernode_registry_filter_fn *exclude,
                             void *arg, jace_msg_t *msg)
{
    assert (self);
    assert (msg);
    for (entry_t *entry = (entry_t *) zhashx_first (self->entries); entry;
         entry = (entry_t *) zhashx_next (self->entries))
        if (!(exclude && exclude (entry->node.id, entry->appeared_at, arg))) {
            //  A spare is listed with the job holding it, as a working
            //  daemon is with its job's (`nodes` shows whose it is)
            jace_node_t node = entry->node;
            if (node.state == JACE_NODE_LEASED)
                snprintf (node.job, sizeof node.job, "%s", entry->lease);
            jace_msg_add_node (msg, &node);
        }
}
