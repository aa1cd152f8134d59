/*  =========================================================================
    spawner_watch - a task link's connection, watched

    A daemon process that dies (killed, crashed, out of memory, stopped)
    closes its sockets: our link to it drops, and its port refuses the
    link's reconnection; one dead before the link first connects refuses
    its first connection.  That says "gone" within one reconnect interval
    (100 ms), where the detector's silence takes its bound (seconds).  A
    slow or frozen daemon keeps its connection (the kernel holds it), and
    a node cut off keeps ours until TCP gives up: both stay the
    detector's to judge.
    =========================================================================
*/
#ifndef SPAWNER_WATCH_H_INCLUDED
#define SPAWNER_WATCH_H_INCLUDED

#include <czmq.h>

//  A link whose reconnection fails later than this after the drop (a
//  connect that timed out rather than was refused) is left to the
//  detector.
#define SPAWNER_WATCH_REFUSED_MSEC 1000

typedef struct _spawner_watch_t spawner_watch_t;

//  Watch `link` (a socket connected to one daemon; borrowed, must outlive
//  the watch).  NULL if the link cannot be monitored: the detector alone
//  judges it then.
spawner_watch_t *
    spawner_watch_new (zsock_t *link);

//  Stop watching; nullifies the reference.  Safe on NULL.
void
    spawner_watch_destroy (spawner_watch_t **self_p);

//  The socket the link's events arrive on, to poll.
zsock_t *
    spawner_watch_socket (spawner_watch_t *self);

//  Read one event (`now` in msec, monotonic).  True once the link dropped
//  and a reconnection then failed within SPAWNER_WATCH_REFUSED_MSEC: the
//  daemon's process is gone.
bool
    spawner_watch_recv (spawner_watch_t *self, int64_t now);

//  How long ago (msec) the link dropped, as of `now` (a link that never
//  connected: since the watch began); -1 if it is connected.
int64_t
    spawner_watch_dropped_for (spawner_watch_t *self, int64_t now);

#endif
