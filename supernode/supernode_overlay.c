/*  =========================================================================
    supernode_overlay - what the peer super-nodes report: daemons, leases
    =========================================================================
*/
#include "supernode_overlay.h"

//  One daemon as one peer lists it.
typedef struct {
    jace_node_t node;           //  The peer's record
    int64_t appeared_at;        //  When this peer began to list it (msec)
    uint64_t generation;        //  Last PEER_STATE that listed it
} record_t;

//  What one peer reported.
typedef struct {
    char *endpoint;             //  The peer's endpoint (its name)
    zhashx_t *records;          //  Daemon id -> record_t, owned
    supernode_leases_t *leases; //  Its leases
    uint64_t generation;        //  PEER_STATEs taken so far
} peer_view_t;

struct _supernode_overlay_t {
    //  An array, not a CZMQ container: lookups across peers happen while
    //  another loop walks them, and containers have one cursor each.
    peer_view_t **views;        //  Owned, `count` in use
    size_t count;               //  Views in use
    size_t capacity;            //  Slots in views
};

//  --------------------------------------------------------------------------

static void
s_record_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_view_destroy (peer_view_t **view_p)
{
    peer_view_t *view = *view_p;
    if (view) {
        zhashx_destroy (&view->records);
        supernode_leases_destroy (&view->leases);
        free (view->endpoint);
        free (view);
        *view_p = NULL;
    }
}

supernode_overlay_t *
supernode_overlay_new (void)
{
    return (supernode_overlay_t *) zmalloc (sizeof (supernode_overlay_t));
}

void
supernode_overlay_destroy (supernode_overlay_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        supernode_overlay_t *self = *self_p;
        for (size_t i = 0; i < self->count; i++)
            s_view_destroy (&self->views [i]);
        free (self->views);
        free (self);
        *self_p = NULL;
    }
}

static peer_view_t *
s_view_find (supernode_overlay_t *self, const char *peer, size_t *index)
{
    for (size_t i = 0; i < self->count; i++)
        if (streq (self->views [i]->endpoint, peer)) {
            if (index)
                *index = i;
            return self->views [i];
        }
    return NULL;
}

static peer_view_t *
s_view_add (supernode_overlay_t *self, const char *peer)
{
    if (self->count == self->capacity) {
        self->capacity = self->capacity ? 2 * self->capacity : 8;
        self->views = (peer_view_t **) realloc (self->views,
            self->capacity * sizeof (peer_view_t *));
        assert (self->views);
    }
    peer_view_t *view = (peer_view_t *) zmalloc (sizeof *view);
    view->endpoint = strdup (peer);
    view->records = zhashx_new ();
    zhashx_set_destructor (view->records, s_record_destroy);
    view->leases = supernode_leases_new ();
    self->views [self->count++] = view;
    return view;
}

//  --------------------------------------------------------------------------

//  Drop the records the last PEER_STATE no longer lists.
static void
s_view_prune (peer_view_t *view)
{
    zlist_t *gone = zlist_new ();
    zlist_autofree (gone);
    for (record_t *record = (record_t *) zhashx_first (view->records);
         record; record = (record_t *) zhashx_next (view->records))
        if (record->generation != view->generation)
            zlist_append (gone, record->node.id);
    for (char *id = (char *) zlist_first (gone); id;
         id = (char *) zlist_next (gone))
        zhashx_delete (view->records, id);
    zlist_destroy (&gone);
}

//  Take one record of a peer's PEER_STATE into view.
static void
s_view_take (peer_view_t *view, const jace_node_t *node, int64_t now)
{
    record_t *record = (record_t *) zhashx_lookup (view->records, node->id);
    if (!record) {
        record = (record_t *) zmalloc (sizeof *record);
        record->appeared_at = now;
        zhashx_insert (view->records, node->id, record);
    }
    record->node = *node;
    record->generation = view->generation;
}

size_t
supernode_overlay_update (supernode_overlay_t *self, const char *peer,
                          jace_msg_t *state, int64_t now, size_t max_nodes)
{
    assert (self);
    assert (peer);
    assert (state);
    peer_view_t *view = s_view_find (self, peer, NULL);
    if (!view)
        view = s_view_add (self, peer);
    view->generation++;
    size_t taken = 0, left_out = 0;
    for (size_t i = 0; i < jace_msg_node_count (state); i++) {
        const jace_node_t *node = jace_msg_node (state, i);
        if (taken < max_nodes && jace_node_valid (node, NULL, 0)) {
            s_view_take (view, node, now);
            taken++;
        }
        else
            left_out++;
    }
    s_view_prune (view);
    supernode_leases_read (view->leases, state, now);
    return left_out;
}

size_t
supernode_overlay_forget (supernode_overlay_t *self, const char *peer)
{
    assert (self);
    assert (peer);
    size_t index;
    peer_view_t *view = s_view_find (self, peer, &index);
    if (!view)
        return 0;
    size_t forgotten = zhashx_size (view->records);
    s_view_destroy (&self->views [index]);
    self->views [index] = self->views [--self->count];
    return forgotten;
}

//  The records of a view as an array of borrowed items (caller frees the
//  array), count in *count: loops over them look records up, and
//  zhashx_lookup moves the hash's one cursor.
static record_t **
s_view_records (peer_view_t *view, size_t *count)
{
    *count = zhashx_size (view->records);
    record_t **records = (record_t **) zmalloc ((*count + 1)
                                                * sizeof (record_t *));
    size_t index = 0;
    for (record_t *record = (record_t *) zhashx_first (view->records);
         record; record = (record_t *) zhashx_next (view->records))
        records [index++] = record;
    return records;
}

//  --------------------------------------------------------------------------

//  The freshest peer record of daemon id: the one that appeared last, and
//  between equals the first in peer order, so every caller agrees.  With
//  view, also the view that holds it.
static record_t *
s_freshest_in (supernode_overlay_t *self, const char *id,
               peer_view_t **view)
{
    record_t *best = NULL;
    for (size_t i = 0; i < self->count; i++) {
        record_t *record = (record_t *) zhashx_lookup (
            self->views [i]->records, id);
        if (record && (!best || record->appeared_at > best->appeared_at)) {
            best = record;
            if (view)
                *view = self->views [i];
        }
    }
    return best;
}

static record_t *
s_freshest (supernode_overlay_t *self, const char *id)
{
    return s_freshest_in (self, id, NULL);
}

int64_t
supernode_overlay_newest (supernode_overlay_t *self, const char *id)
{
    assert (self);
    assert (id);
    record_t *record = s_freshest (self, id);
    return record ? record->appeared_at : -1;
}

const char *
supernode_overlay_holder (supernode_overlay_t *self, const char *id)
{
    assert (self);
    assert (id);
    //  One pass over the views: a RESERVE by id asks this of every id.
    peer_view_t *view = NULL;
    return s_freshest_in (self, id, &view) ? view->endpoint : NULL;
}

bool
supernode_overlay_is_busy (supernode_overlay_t *self, const char *id)
{
    assert (self);
    assert (id);
    for (size_t i = 0; i < self->count; i++) {
        record_t *record = (record_t *) zhashx_lookup (
            self->views [i]->records, id);
        if (record && record->node.state != JACE_NODE_FREE)
            return true;
    }
    return false;
}

const char *
supernode_overlay_held_for (supernode_overlay_t *self, const char *id)
{
    assert (self);
    assert (id);
    for (size_t i = 0; i < self->count; i++) {
        record_t *record = (record_t *) zhashx_lookup (
            self->views [i]->records, id);
        if (record && record->node.state == JACE_NODE_LEASED
        &&  *record->node.job)
            return record->node.job;
    }
    return NULL;
}

bool
supernode_overlay_works_for (supernode_overlay_t *self, const char *job)
{
    assert (self);
    assert (job);
    for (size_t i = 0; i < self->count; i++)
        for (record_t *record = (record_t *) zhashx_first (
                 self->views [i]->records);
             record; record = (record_t *) zhashx_next (
                 self->views [i]->records))
            if (record->node.state == JACE_NODE_WORKING
            &&  streq (record->node.job, job))
                return true;
    return false;
}

size_t
supernode_overlay_free_count (supernode_overlay_t *self, const char *peer,
                              const char *app)
{
    assert (self);
    assert (peer && app);
    peer_view_t *view = s_view_find (self, peer, NULL);
    if (!view)
        return 0;
    size_t count = 0, size;
    record_t **records = s_view_records (view, &size);
    for (size_t i = 0; i < size; i++)
        if (records [i]->node.state == JACE_NODE_FREE
        &&  (!*app || jace_node_has_app (&records [i]->node, app))
        &&  s_freshest (self, records [i]->node.id) == records [i])
            count++;
    free (records);
    return count;
}

void
supernode_overlay_describe (supernode_overlay_t *self,
                            supernode_registry_t *registry, jace_msg_t *msg)
{
    assert (self);
    assert (msg);
    for (size_t i = 0; i < self->count; i++) {
        size_t size;
        record_t **records = s_view_records (self->views [i], &size);
        for (size_t j = 0; j < size; j++) {
            record_t *record = records [j];
            if (s_freshest (self, record->node.id) != record)
                continue;
            //  Our own record wins ties: its daemon talks to us.
            if (registry && supernode_registry_appeared_at (registry,
                    record->node.id) >= record->appeared_at)
                continue;
            jace_msg_add_node (msg, &record->node);
        }
        free (records);
    }
}

const char *
supernode_overlay_lease_owner_key (supernode_overlay_t *self,
                                   const char *job)
{
    assert (self);
    assert (job);
    for (size_t i = 0; i < self->count; i++) {
        const char *key = supernode_leases_owner_key (
            self->views [i]->leases, job);
        if (key)
            return key;
    }
    return NULL;
}

size_t
supernode_overlay_describe_leases (supernode_overlay_t *self,
                                   jace_msg_t *msg, int64_t now, size_t max)
{
    assert (self);
    assert (msg);
    size_t left_out = 0;
    for (size_t i = 0; i < self->count; i++)
        left_out += supernode_leases_describe (self->views [i]->leases, msg,
                                               now, max);
    return left_out;
}
