/*  =========================================================================
    jace_shaper - emulated network links between virtual clusters

    Times are CLOCK_MONOTONIC nanoseconds (jace_links_now), the clock the
    grid's shared reservations use.  A message's path is its connection
    (the socket it goes out on: one transfer at a time, in this process)
    and, when the grid shares them, the resources of jace_links between
    the clusters: it starts when all of them are free and flows at the
    slowest of them.

    A message that crosses shared resources reserves them a slice at a
    time, keeping about SHAPER_AHEAD_NSEC reserved ahead of now, so that
    flows through one pipe take turns as TCP flows share a bottleneck.
    Reserved whole, a 6.6 MB checkpoint copy held a 0.1 Mb/s uplink for
    minutes, and every other daemon's vectors, of this job and of others,
    queued behind it (89.6 s for a job that takes 0.66 s alone).
    =========================================================================
*/
#include "jace_shaper.h"
#include "jace_checkpoint.h"

#include <limits.h>
#include <time.h>

//  How often a message due on a full link is tried again, and for how
//  long at most: a live neighbour drains its link within a heartbeat;
//  one that never does is dead, and the message goes as before (dropped
//  by a full queue).
#define SHAPER_BLOCKED_RETRY_USEC 1000
#define SHAPER_BLOCKED_NSEC_MAX (10 * 1000000000LL)
//  A slice of a message crossing shared resources: about this long on its
//  path, never smaller than SHAPER_SLICE_BYTES_MIN (a wake-up per slice).
#define SHAPER_SLICE_NSEC (20 * 1000000LL)
#define SHAPER_SLICE_BYTES_MIN 4096
//  How far ahead of now a message keeps its slices reserved.  A sender
//  busy computing flushes late; with this much reserved, the pipe does
//  not idle meanwhile.  Another flow's message waits about this long
//  behind a big one, instead of for all of it.
#define SHAPER_AHEAD_NSEC (200 * 1000000LL)
#define SHAPER_NEVER INT64_MAX

//  One emulated link, from us to a cluster.
typedef struct {
    double latency_usec;        //  One-way delay
    double bandwidth_mbps;      //  Speed of one flow, 0: not limited
    jace_links_t *shared;       //  Borrowed: the grid's links, or NULL
    size_t path [JACE_LINKS_PATH_MAX];  //  Shared resources crossed
    size_t hops;                //  Entries in path
    size_t slice_bytes;         //  Reserved at a time (SIZE_MAX: whole)
} link_t;

//  A message on its way to one destination task.
typedef struct {
    int64_t to;                 //  Destination task
    zsock_t *socket;            //  Borrowed: its connection to the task
    jace_msg_t *msg;            //  The message
    char *remote;               //  Its cluster
    link_t link;                //  Its path (a copy: links may be set anew)
    size_t bytes;               //  Its size on the wire
    size_t unreserved;          //  Bytes not yet reserved on the path
    size_t slices;              //  Slices reserved so far
    int64_t queued;             //  When it was sent to us (ns)
    int64_t start;              //  When its transfer starts (ns), or
                                //  SHAPER_NEVER before its first slice
    int64_t end;                //  When its last reserved slice ends
    int64_t carried;            //  Sum of its slices' durations (ns):
                                //  its transfer, without the gaps
                                //  other flows took between them
    int64_t due;                //  When it arrives (ns, monotonic), or
                                //  SHAPER_NEVER while bytes are unreserved
    bool blocked;               //  Due, but its link was full
} pending_t;

struct _jace_shaper_t {
    char *local;                //  Our cluster
    zhashx_t *links;            //  Remote cluster -> link_t, owned
    zhashx_t *busy_until;       //  "task/socket" -> connection free time
    zlistx_t *pending;          //  pending_t, oldest first, owned
    bool verbose;               //  Log each shared reservation
};


static void
s_free_item (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_pending_destroy (void **item_p)
{
    pending_t *pending = (pending_t *) *item_p;
    if (pending) {
        jace_msg_destroy (&pending->msg);
        free (pending->remote);
        free (pending);
        *item_p = NULL;
    }
}

jace_shaper_t *
jace_shaper_new (const char *local)
{
    assert (local);
    jace_shaper_t *self = (jace_shaper_t *) zmalloc (sizeof *self);
    self->local = strdup (local);
    self->links = zhashx_new ();
    zhashx_set_destructor (self->links, s_free_item);
    self->busy_until = zhashx_new ();
    zhashx_set_destructor (self->busy_until, s_free_item);
    self->pending = zlistx_new ();
    zlistx_set_destructor (self->pending, s_pending_destroy);
    return self;
}

void
jace_shaper_destroy (jace_shaper_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_shaper_t *self = *self_p;
        zlistx_destroy (&self->pending);
        zhashx_destroy (&self->busy_until);
        zhashx_destroy (&self->links);
        free (self->local);
        free (self);
        *self_p = NULL;
    }
}

void
jace_shaper_set_link (jace_shaper_t *self, const char *remote,
                      double latency_usec, double bandwidth_mbps)
{
    assert (self && remote);
    link_t *link = (link_t *) zmalloc (sizeof *link);
    link->latency_usec = latency_usec > 0 ? latency_usec : 0;
    link->bandwidth_mbps = bandwidth_mbps > 0 ? bandwidth_mbps : 0;
    link->slice_bytes = SIZE_MAX;
    zhashx_update (self->links, remote, link);
}

void
jace_shaper_set_shared (jace_shaper_t *self, const char *remote,
                        jace_links_t *links, const size_t *path, size_t hops)
{
    assert (self && remote && links);
    assert (path || hops == 0);
    assert (hops <= JACE_LINKS_PATH_MAX);
    link_t *link = (link_t *) zhashx_lookup (self->links, remote);
    assert (link);
    link->shared = hops ? links : NULL;
    memcpy (link->path, path, hops * sizeof (size_t));
    link->hops = hops;
    //  A slice lasts SHAPER_SLICE_NSEC at the slowest bandwidth of the
    //  path; a path without any limit is reserved whole.
    double slowest = link->bandwidth_mbps;
    for (size_t hop = 0; hop < hops; hop++) {
        double mbps = jace_links_resource (links, path [hop]).bandwidth_mbps;
        if (mbps > 0 && (slowest <= 0 || mbps < slowest))
            slowest = mbps;
    }
    double bytes = slowest * SHAPER_SLICE_NSEC / 8000;
    link->slice_bytes = !link->shared || slowest <= 0 ? SIZE_MAX
                      : bytes < SHAPER_SLICE_BYTES_MIN
                      ? SHAPER_SLICE_BYTES_MIN : (size_t) bytes;
}

void
jace_shaper_set_verbose (jace_shaper_t *self, bool verbose)
{
    assert (self);
    self->verbose = verbose;
}

//  --------------------------------------------------------------------------

int64_t
jace_shaper_delay_nsec (double latency_usec, double bandwidth_mbps,
                        size_t bytes)
{
    double delay = latency_usec > 0 ? latency_usec * 1000 : 0;
    if (bandwidth_mbps > 0)
        delay += (double) bytes * 8000 / bandwidth_mbps;
    return (int64_t) delay;
}

static size_t
s_message_bytes (jace_msg_t *msg)
{
    size_t bytes = 64;          //  Header, roughly
    for (size_t i = 0; i < jace_msg_payload_count (msg); i++)
        bytes += jace_msg_payload_length (msg, i)
               * (jace_msg_payload_kind (msg, i) == JACE_PAYLOAD_BYTES
                  ? 1 : 8);
    return bytes;
}

//  True for a vector of values (DATA of an iteration, with values).
static bool
s_is_values (jace_msg_t *msg)
{
    return jace_msg_type (msg) == JACE_MSG_DATA
        && jace_msg_iteration (msg) >= 0
        && jace_msg_payload_count (msg) == 1
        && jace_msg_payload_kind (msg, 0) == JACE_PAYLOAD_F64;
}

//  True if `newer`, queued after `older` to the same task, makes it
//  useless: a vector of values after another, or a checkpoint copy of a
//  task after an older copy of the same task (its holder keeps the
//  newest only).  Request lists, exchange pieces and FETCHes must all
//  arrive.  Checkpoints used to: on a link slower than the copies, they
//  queued for a minute and more, and the links, shared by every daemon
//  of the grid, stayed reserved long after the job.
static bool
s_supersedes (jace_msg_t *newer, jace_msg_t *older)
{
    if (s_is_values (newer))
        return s_is_values (older);
    return jace_checkpoint_is_copy (newer) && jace_checkpoint_is_copy (older)
        && jace_msg_task (newer) == jace_msg_task (older)
        && streq (jace_msg_job (newer), jace_msg_job (older))
        && jace_checkpoint_newer (newer, older);
}

//  A message still waiting for its link to `to` (not yet on the wire)
//  that msg supersedes.
static pending_t *
s_superseded_waiting (jace_shaper_t *self, int64_t to, jace_msg_t *msg,
                      int64_t now)
{
    if (!s_is_values (msg) && !jace_checkpoint_is_copy (msg))
        return NULL;            //  Must arrive: no need to look
    for (pending_t *pending = (pending_t *) zlistx_first (self->pending);
         pending; pending = (pending_t *) zlistx_next (self->pending))
        if (pending->to == to && (pending->start > now || pending->blocked)
        &&  s_supersedes (msg, pending->msg))
            return pending;
    return NULL;
}

//  The time until which our connection to `to` on `socket` is reserved
//  (a slot we own).  A task's fresh link is a connection of its own: its
//  vectors do not queue behind the checkpoints on the ordinary one.
static int64_t *
s_busy_until (jace_shaper_t *self, int64_t to, zsock_t *socket)
{
    char key [64];
    snprintf (key, sizeof key, "%" PRId64 "/%p", to, (void *) socket);
    int64_t *busy = (int64_t *) zhashx_lookup (self->busy_until, key);
    if (!busy) {
        busy = (int64_t *) zmalloc (sizeof *busy);
        zhashx_insert (self->busy_until, key, busy);
    }
    return busy;
}

//  Reserve the next slice of pending's path: its connection, then the
//  grid's shared resources if any.  The last slice makes it due.
static void
s_reserve_slice (jace_shaper_t *self, pending_t *pending, int64_t now)
{
    link_t *link = &pending->link;
    size_t bytes = pending->unreserved < link->slice_bytes
                 ? pending->unreserved : link->slice_bytes;
    int64_t *busy = s_busy_until (self, pending->to, pending->socket);
    //  A first slice starts no sooner than now; the next ones follow the
    //  last, even in the past: a kernel sends while its process computes,
    //  and a sender that flushed late must not slow its own link (a lone
    //  1 MB over 1 s took 2.5 s, flushed every 500 ms).
    int64_t earliest = pending->slices > 0 || *busy > now ? *busy : now;
    int64_t start = earliest, duration;
    if (link->shared)
        start = jace_links_reserve (link->shared, link->path, link->hops,
                                    bytes, link->bandwidth_mbps, earliest,
                                    &duration);
    else                        //  The transfer alone: no latency yet
        duration = jace_shaper_delay_nsec (0, link->bandwidth_mbps, bytes);
    *busy = start + duration;
    if (pending->slices++ == 0)
        pending->start = start;
    pending->end = start + duration;
    pending->carried += duration;
    pending->unreserved -= bytes;
    if (pending->unreserved > 0)
        return;
    //  It arrives the link's latency after its transfer ends.
    pending->due = pending->end
                 + jace_shaper_delay_nsec (link->latency_usec, 0, 0);
    //  The emulated schedule, on the clock every process shares: the
    //  grid tests check from it that the shared links are shared.
    if (self->verbose)
        zsys_debug ("shaper: %s to task %" PRId64 " in %s: %zu bytes, "
                    "queued %" PRId64 " start %" PRId64 " transfer %"
                    PRId64 " due %" PRId64 " ns, %zu slice%s over %"
                    PRId64 " ns", self->local, pending->to, pending->remote,
                    pending->bytes, pending->queued, pending->start,
                    pending->carried, pending->due, pending->slices,
                    pending->slices > 1 ? "s" : "",
                    pending->end - pending->start);
}

//  True if a message before pending on its connection still has bytes to
//  reserve: pending's transfer follows all of it.
static bool
s_behind_another (jace_shaper_t *self, pending_t *pending)
{
    for (pending_t *before = (pending_t *) zlistx_first (self->pending);
         before && before != pending;
         before = (pending_t *) zlistx_next (self->pending))
        if (before->to == pending->to && before->socket == pending->socket
        &&  before->unreserved > 0)
            return true;
    return false;
}

//  Reserve pending's slices until SHAPER_AHEAD_NSEC of them are reserved
//  ahead of now (or all are).  Leaves the list's cursor on pending.
static void
s_reserve_ahead (jace_shaper_t *self, pending_t *pending, int64_t now)
{
    if (pending->unreserved == 0)
        return;
    if (pending->slices == 0) {
        bool behind = s_behind_another (self, pending);
        zlistx_find (self->pending, pending);
        if (behind)
            return;
    }
    if (pending->slices == 0)
        s_reserve_slice (self, pending, now);
    while (pending->unreserved > 0 && pending->end - now < SHAPER_AHEAD_NSEC)
        s_reserve_slice (self, pending, now);
}

int
jace_shaper_send (jace_shaper_t *self, zsock_t *socket, int64_t to,
                  const char *remote, jace_msg_t **msg_p)
{
    assert (self && socket && msg_p && *msg_p);
    link_t *link = (link_t *) zhashx_lookup (self->links, remote);
    if (!link)
        return jace_msg_send (msg_p, socket);
    int64_t now = jace_links_now ();
    pending_t *waiting = s_superseded_waiting (self, to, *msg_p, now);
    if (waiting) {
        //  Newest wins: the older message never got onto the wire.  It
        //  keeps the older one's slot (a copy of the same state is about
        //  the same size).
        jace_msg_destroy (&waiting->msg);
        waiting->msg = *msg_p;
        *msg_p = NULL;
        return 0;
    }
    pending_t *pending = (pending_t *) zmalloc (sizeof *pending);
    pending->to = to;
    pending->socket = socket;
    pending->msg = *msg_p;
    *msg_p = NULL;
    pending->remote = strdup (remote);
    pending->link = *link;
    pending->bytes = s_message_bytes (pending->msg);
    pending->unreserved = pending->bytes;
    pending->queued = now;
    pending->start = SHAPER_NEVER;
    pending->due = SHAPER_NEVER;
    zlistx_add_end (self->pending, pending);
    s_reserve_ahead (self, pending, now);
    return 0;
}

int64_t
jace_shaper_flush (jace_shaper_t *self)
{
    assert (self);
    int64_t now = jace_links_now ();
    int64_t next = -1;
    pending_t *pending = (pending_t *) zlistx_first (self->pending);
    while (pending) {
        s_reserve_ahead (self, pending, now);
        //  A full link keeps what is due for it (the newest values
        //  replacing older ones): a synchronous neighbour may wait for
        //  just that message, and no newer one would come.
        pending->blocked = false;
        if (pending->due <= now) {
            if (now - pending->due < SHAPER_BLOCKED_NSEC_MAX)
                jace_msg_try_send (&pending->msg, pending->socket);
            else
                jace_msg_send (&pending->msg, pending->socket);
            pending->blocked = pending->msg != NULL;
        }
        if (pending->due <= now && !pending->blocked) {
            zlistx_delete (self->pending, zlistx_cursor (self->pending));
            pending = (pending_t *) zlistx_first (self->pending);
            continue;
        }
        //  Wake when it is due, or when its slices reserved ahead run
        //  short; one behind another on its connection waits for that
        //  one's wake.
        int64_t wake = pending->due != SHAPER_NEVER ? pending->due
                     : pending->slices > 0
                     ? pending->end - SHAPER_AHEAD_NSEC / 2 : SHAPER_NEVER;
        int64_t wait = pending->blocked ? SHAPER_BLOCKED_RETRY_USEC
                     : wake == SHAPER_NEVER ? -1
                     : wake > now ? (wake - now + 999) / 1000 : 0;
        if (wait >= 0)
            next = next < 0 || wait < next ? wait : next;
        pending = (pending_t *) zlistx_next (self->pending);
    }
    return next;
}

void *
jace_shaper_wait (zpoller_t *poller, int64_t usec)
{
    assert (poller);
    if (usec < 0)
        return zpoller_wait (poller, -1);
    int64_t until = zclock_usecs () + usec;
    if (usec >= 1000) {
        int64_t msec = usec / 1000;
        void *which = zpoller_wait (poller, msec < INT_MAX ? (int) msec
                                                          : INT_MAX);
        if (which || zpoller_terminated (poller))
            return which;
    }
    int64_t left = until - zclock_usecs ();
    if (left > 0) {
        struct timespec pause = { (time_t) (left / 1000000),
                                  (long) (left % 1000000) * 1000 };
        nanosleep (&pause, NULL);
    }
    return zpoller_wait (poller, 0);
}

void
jace_shaper_drop (jace_shaper_t *self, int64_t to)
{
    assert (self);
    void *handle = zlistx_first (self->pending)
                 ? zlistx_cursor (self->pending) : NULL;
    while (handle) {
        void *next = zlistx_next (self->pending)
                   ? zlistx_cursor (self->pending) : NULL;
        if (((pending_t *) zlistx_handle_item (handle))->to == to)
            zlistx_delete (self->pending, handle);
        handle = next;
    }
    char prefix [32];
    int length = snprintf (prefix, sizeof prefix, "%" PRId64 "/", to);
    zlistx_t *keys = zhashx_keys (self->busy_until);
    for (const char *key = (const char *) zlistx_first (keys); key;
         key = (const char *) zlistx_next (keys))
        if (strncmp (key, prefix, (size_t) length) == 0)
            zhashx_delete (self->busy_until, key);
    zlistx_destroy (&keys);
}
