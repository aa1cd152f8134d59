/*  =========================================================================
    spawner_watch - a task link's connection, watched

    libzmq's socket monitor reports the link's connection events on an
    inproc PAIR we poll with the spawner's other sockets (no thread, as a
    zmonitor actor per task would take).  After a drop libzmq schedules
    the reconnection and says so (CONNECT_RETRIED) before trying: only a
    second CONNECT_RETRIED follows an attempt that failed.
    =========================================================================
*/
#include "spawner_watch.h"

#include <stdatomic.h>

#define WATCHED_EVENTS (ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED \
                        | ZMQ_EVENT_CONNECT_RETRIED)

struct _spawner_watch_t {
    zsock_t *link;              //  Borrowed
    zsock_t *events;            //  The link's monitor, PAIR
    int64_t dropped_at;         //  When the link dropped, or 0; a link
                                //  not yet connected counts as dropped
                                //  when the watch began
    int retries;                //  CONNECT_RETRIED since the drop
};

//  Watches of every spawner in this process name their inproc endpoints
//  apart: a link's address may come back before libzmq freed the last
//  monitor bound under it.
static atomic_uint s_watches;

spawner_watch_t *
spawner_watch_new (zsock_t *link)
{
    assert (link);
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://jace-watch-%u",
              atomic_fetch_add (&s_watches, 1));
    if (zmq_socket_monitor (zsock_resolve (link), endpoint, WATCHED_EVENTS))
        return NULL;
    zsock_t *events = zsock_new (ZMQ_PAIR);
    if (!events || zsock_connect (events, "%s", endpoint)) {
        zmq_socket_monitor (zsock_resolve (link), NULL, 0);
        zsock_destroy (&events);
        return NULL;
    }
    spawner_watch_t *self = (spawner_watch_t *) zmalloc (sizeof *self);
    self->link = link;
    self->events = events;
    //  A daemon dead before we first reach it (a replacement killed with
    //  its cluster) refuses the first connection: without this, only the
    //  detector's bound (2 s and more) said it was gone
    self->dropped_at = zclock_mono ();
    return self;
}

void
spawner_watch_destroy (spawner_watch_t **self_p)
{
    assert (self_p);
    spawner_watch_t *self = *self_p;
    if (!self)
        return;
    //  The link lives on (fenced): it must stop reporting to a socket
    //  that is gone.
    zmq_socket_monitor (zsock_resolve (self->link), NULL, 0);
    zsock_destroy (&self->events);
    free (self);
    *self_p = NULL;
}

zsock_t *
spawner_watch_socket (spawner_watch_t *self)
{
    assert (self);
    return self->events;
}

bool
spawner_watch_recv (spawner_watch_t *self, int64_t now)
{
    assert (self);
    zmsg_t *msg = zmsg_recv (self->events);
    if (!msg)
        return false;
    zframe_t *frame = zmsg_first (msg);
    uint16_t event = 0;
    if (frame && zframe_size (frame) == 6)
        memcpy (&event, zframe_data (frame), sizeof event);
    zmsg_destroy (&msg);
    if (event == ZMQ_EVENT_DISCONNECTED) {
        self->dropped_at = now;
        self->retries = 0;
    }
    else
    if (event == ZMQ_EVENT_CONNECTED)
        self->dropped_at = 0;
    else
    if (event == ZMQ_EVENT_CONNECT_RETRIED && self->dropped_at
    &&  ++self->retries >= 2)
        return now - self->dropped_at <= SPAWNER_WATCH_REFUSED_MSEC;
    return false;
}

int64_t
spawner_watch_dropped_for (spawner_watch_t *self, int64_t now)
{
    assert (self);
    return self->dropped_at ? now - self->dropped_at : -1;
}
