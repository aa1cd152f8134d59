/*  =========================================================================
    daemon_relay - a cluster's task data, passed on inside the cluster

    Bounds: the spawner keeps at most a window of 4 chunks of each task's
    data unacknowledged, end to end, so a relay holds at most 4 chunks
    per task it relays to.  RELAY_QUEUE_MAX is above that: a link's queue
    fills only when its daemon stops reading (dead, frozen), and a chunk
    that finds it full is dropped; the spawner sends it again, directly,
    if it gives the relay up (spawner_stream_rewind).
    =========================================================================
*/
#include "daemon_relay.h"

#include <sodium.h>

#define RELAY_QUEUE_MAX 8

//  A task we relay to
typedef struct {
    jace_node_t node;           //  Its daemon, as the job's table names it
    zsock_t *link;              //  DEALER to it, or NULL before its first
                                //  chunk
} target_t;

//  A chunk waiting for its (emulated) arrival
typedef struct {
    int64_t due;                //  Pass it on then (usec)
    uint64_t sequence;          //  Taken in this order: same dues keep it
    target_t *target;           //  Borrowed
    jace_msg_t *chunk;          //  Owned
} held_chunk_t;

struct _daemon_relay_t {
    jace_security_t *security;  //  Borrowed
    zpoller_t *poller;          //  Borrowed
    char job [JACE_ID_MAX];     //  Job we relay for, or ""
    unsigned char key [JACE_KEY_BYTES];     //  Its key
    target_t *targets;          //  The tasks of our cluster but ours
    size_t target_count;
    zlistx_t *held;             //  held_chunk_t, owned, in due order
    uint64_t taken;             //  Chunks taken
    uint64_t chunks;            //  Chunks passed on
    uint64_t acks;              //  Acknowledgements passed back
};

static void
s_held_destroy (void **item_p)
{
    held_chunk_t *held = (held_chunk_t *) *item_p;
    if (held) {
        jace_msg_destroy (&held->chunk);
        free (held);
        *item_p = NULL;
    }
}

static int
s_held_compare (const void *first, const void *second)
{
    const held_chunk_t *a = (const held_chunk_t *) first;
    const held_chunk_t *b = (const held_chunk_t *) second;
    if (a->due != b->due)
        return a->due < b->due ? -1 : 1;
    return a->sequence < b->sequence ? -1 : a->sequence > b->sequence;
}

daemon_relay_t *
daemon_relay_new (jace_security_t *security, zpoller_t *poller)
{
    assert (poller);
    daemon_relay_t *self = (daemon_relay_t *) zmalloc (sizeof *self);
    self->security = security;
    self->poller = poller;
    self->held = zlistx_new ();
    zlistx_set_destructor (self->held, s_held_destroy);
    zlistx_set_comparator (self->held, s_held_compare);
    return self;
}

void
daemon_relay_destroy (daemon_relay_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        daemon_relay_t *self = *self_p;
        daemon_relay_stop (self);
        zlistx_destroy (&self->held);
        free (self);
        *self_p = NULL;
    }
}

void
daemon_relay_stop (daemon_relay_t *self)
{
    assert (self);
    if (self->taken)
        zsys_notice ("relay: job %s over: %" PRIu64 " chunks passed on, %"
                     PRIu64 " acknowledgements back", self->job,
                     self->chunks, self->acks);
    self->taken = self->chunks = self->acks = 0;
    zlistx_purge (self->held);
    for (size_t i = 0; i < self->target_count; i++)
        if (self->targets [i].link) {
            zpoller_remove (self->poller, self->targets [i].link);
            zsock_destroy (&self->targets [i].link);
        }
    free (self->targets);
    self->targets = NULL;
    self->target_count = 0;
    *self->job = 0;
    sodium_memzero (self->key, sizeof self->key);
}

void
daemon_relay_start (daemon_relay_t *self, const jace_msg_t *assign,
                    const char *cluster, const unsigned char *key)
{
    assert (self && assign && cluster && key);
    daemon_relay_stop (self);
    snprintf (self->job, sizeof self->job, "%s", jace_msg_job (assign));
    memcpy (self->key, key, sizeof self->key);
    size_t count = jace_msg_node_count (assign);
    self->targets = (target_t *) zmalloc ((count + 1) * sizeof (target_t));
    for (size_t i = 0; i < count; i++) {
        const jace_node_t *node = jace_msg_node (assign, i);
        if (node->task != (int64_t) i || node->task == jace_msg_task (assign)
        ||  !streq (node->cluster, cluster))
            continue;
        self->targets [self->target_count++].node = *node;
    }
}

static target_t *
s_target (daemon_relay_t *self, int64_t task)
{
    for (size_t i = 0; i < self->target_count; i++)
        if (self->targets [i].node.task == task)
            return &self->targets [i];
    return NULL;
}

static int
s_connect (daemon_relay_t *self, target_t *target)
{
    zsock_t *link = zsock_new (ZMQ_DEALER);
    assert (link);
    zsock_set_sndhwm (link, RELAY_QUEUE_MAX);
    zsock_set_linger (link, 0);
    jace_msg_prepare_socket (link, JACE_MSG_HEADER_MAX);
    if (jace_security_apply_client (self->security, link,
                                    target->node.pubkey)
    ||  zsock_connect (link, "%s", target->node.endpoint)) {
        zsock_destroy (&link);
        return -1;
    }
    zpoller_add (self->poller, link);
    target->link = link;
    zsys_notice ("relay: passing task %" PRId64 "'s data of job %s on to "
                 "daemon %s", target->node.task, self->job, target->node.id);
    return 0;
}

int
daemon_relay_chunk (daemon_relay_t *self, jace_msg_t **chunk_p, int64_t due,
                    char *reason, size_t reason_size)
{
    assert (self && chunk_p && *chunk_p && reason);
    jace_msg_t *chunk = *chunk_p;
    target_t *target = s_target (self, jace_msg_task (chunk));
    if (!*self->job || !streq (jace_msg_job (chunk), self->job) || !target) {
        snprintf (reason, reason_size, "CHUNK of job %s for task %" PRId64
                  ", which we do not relay to", jace_msg_job (chunk),
                  jace_msg_task (chunk));
        return -1;
    }
    if (jace_msg_epoch (chunk) != target->node.epoch) {
        snprintf (reason, reason_size, "CHUNK for task %" PRId64 " epoch %"
                  PRId64 ", whose daemon runs epoch %" PRId64,
                  target->node.task, jace_msg_epoch (chunk),
                  target->node.epoch);
        return -1;
    }
    if (!target->link && s_connect (self, target)) {
        snprintf (reason, reason_size, "cannot connect to daemon %s at '%s'",
                  target->node.id, target->node.endpoint);
        return -1;
    }
    held_chunk_t *held = (held_chunk_t *) zmalloc (sizeof *held);
    held->due = due;
    held->sequence = self->taken++;
    held->target = target;
    held->chunk = chunk;
    *chunk_p = NULL;
    //  Dues mostly grow: the sorted insert looks from the end
    zlistx_insert (self->held, held, false);
    return 0;
}

int64_t
daemon_relay_flush (daemon_relay_t *self)
{
    assert (self);
    int64_t now = zclock_usecs ();
    held_chunk_t *held;
    while ((held = (held_chunk_t *) zlistx_first (self->held))
       &&  held->due <= now) {
        jace_msg_set_routing_id (held->chunk, NULL);
        if (jace_msg_try_send (&held->chunk, held->target->link) == 0)
            self->chunks++;
        //  else its daemon does not read: dropped (s_held_destroy)
        zlistx_delete (self->held, zlistx_cursor (self->held));
    }
    return held ? held->due - now : -1;
}

bool
daemon_relay_owns (daemon_relay_t *self, void *socket)
{
    assert (self);
    for (size_t i = 0; i < self->target_count; i++)
        if (socket && self->targets [i].link == socket)
            return true;
    return false;
}

jace_msg_t *
daemon_relay_recv (daemon_relay_t *self, void *socket, char *reason,
                   size_t reason_size)
{
    assert (self && socket && reason);
    *reason = 0;
    target_t *target = NULL;
    for (size_t i = 0; i < self->target_count && !target; i++)
        if (self->targets [i].link == socket)
            target = &self->targets [i];
    assert (target);
    char sender [128];
    jace_msg_t *msg = jace_msg_recv (target->link, reason, reason_size,
                                     sender, sizeof sender);
    if (!msg)
        return NULL;
    if (jace_msg_type (msg) != JACE_MSG_CHUNK_ACK
    ||  !streq (jace_msg_job (msg), self->job)
    ||  jace_msg_task (msg) != target->node.task
    ||  jace_msg_epoch (msg) != target->node.epoch
    ||  !streq (jace_msg_sender (msg), target->node.id)
    ||  !jace_msg_sealed (msg, self->key)) {
        snprintf (reason, reason_size, "%s from %s (task %" PRId64 ", epoch %"
                  PRId64 ") is no acknowledgement of task %" PRId64 " we "
                  "relay to", jace_msg_type_name (jace_msg_type (msg)),
                  jace_msg_sender (msg), jace_msg_task (msg),
                  jace_msg_epoch (msg), target->node.task);
        jace_msg_destroy (&msg);
        return NULL;
    }
    self->acks++;
    return msg;
}

uint64_t
daemon_relay_chunks (daemon_relay_t *self)
{
    assert (self);
    return self->chunks;
}

uint64_t
daemon_relay_acks (daemon_relay_t *self)
{
    assert (self);
    return self->acks;
}
