/*  =========================================================================
    jace_shaper - emulated network links between virtual clusters

    On a local virtual grid every daemon runs on the same machine, so the
    links between emulated clusters must be made slow on purpose.  The
    shaper holds the latency and bandwidth between each pair of clusters
    (from the platform file) and delays the data a task sends accordingly:
    a message of B bytes waits for its link to be free, occupies it for
    B / bandwidth, then arrives `latency` later.  Sends never block: the
    shaper keeps the message and the worker's loop flushes what is due.
    While a vector of values still waits for its link, a newer vector to
    the same task replaces it, as a real sender of asynchronous iterations
    would prefer, and so does a newer checkpoint copy of the same task;
    every other message (request lists, exchange pieces, FETCHes) waits
    its turn and arrives.

    On its own the shaper models each connection to a task (each socket:
    a task's fresh link for values is a connection of its own) as a link
    of its own, one message after another.  Given the grid's shared links
    (jace_links), a message also waits until every shared resource
    between the two clusters (uplinks, backbone) can take it, and flows at
    the slowest of them, so that all the daemons sending across a backbone
    divide it between them.  A big message reserves those resources a
    slice (about 20 ms) at a time, keeping about 200 ms reserved ahead, so
    that a small one of another flow waits for that, not for all of it.
    A replaced vector's reservation stays spent, as the bytes of a
    retransmitted packet would be.
    =========================================================================
*/
#ifndef JACE_SHAPER_H_INCLUDED
#define JACE_SHAPER_H_INCLUDED

#include "jace_msg.h"
#include "jace_links.h"

typedef struct _jace_shaper_t jace_shaper_t;

//  The delay of an emulated link for a message of `bytes` that finds it
//  free (nanoseconds): its latency plus bytes x 8 / bandwidth to carry it
//  (nothing when bandwidth_mbps <= 0: the link has no limit).  The one
//  formula of the emulation: the shaper's transfers, and the probes that
//  super-nodes and daemons hold on a virtual grid, all use it.
int64_t
    jace_shaper_delay_nsec (double latency_usec, double bandwidth_mbps,
                            size_t bytes);

//  Create a shaper for a task running in cluster `local`.
jace_shaper_t *
    jace_shaper_new (const char *local);

//  Destroy; pending messages are dropped. Safe on NULL.
void
    jace_shaper_destroy (jace_shaper_t **self_p);

//  Set the link from our cluster to cluster `remote` (ours too, for the
//  intra-cluster network).  Clusters without a link are not shaped.
void
    jace_shaper_set_link (jace_shaper_t *self, const char *remote,
                          double latency_usec, double bandwidth_mbps);

//  Also reserve, for every message to cluster `remote` (whose link is
//  set), the grid's shared resources of `path` in links (borrowed: must
//  outlive the shaper).  hops = 0 shares nothing, as before.
void
    jace_shaper_set_shared (jace_shaper_t *self, const char *remote,
                            jace_links_t *links, const size_t *path,
                            size_t hops);

//  Log each shared reservation (a debug line with the emulated schedule)
void
    jace_shaper_set_verbose (jace_shaper_t *self, bool verbose);

//  Queue msg for destination task `to` in cluster `remote`, to go out on
//  socket `link` when due; takes the message.  Sends at once when the
//  cluster has no link.  Returns 0, or -1 if a send failed.
int
    jace_shaper_send (jace_shaper_t *self, zsock_t *link, int64_t to,
                      const char *remote, jace_msg_t **msg_p);

//  Drop every message queued for task `to`: its link is about to close
//  (the task moved), and the queue holds that socket.
void
    jace_shaper_drop (jace_shaper_t *self, int64_t to);

//  Send every queued message that is due.  Returns the microseconds until
//  the next one is due, or -1 when none waits.
int64_t
    jace_shaper_flush (jace_shaper_t *self);

//  Wait on `poller` at most `usec` microseconds (-1: without limit), to
//  the microsecond, as emulated links need: zmq_poll counts whole
//  milliseconds, and waits rounded up to one made every link of under a
//  millisecond one of a millisecond (probes read a 100 us link as 1,026
//  us, a 500 Mb/s one as 260).  Whole milliseconds are polled; the
//  fraction left is slept (input that comes meanwhile waits at most
//  that), then the poller is looked at once.  Returns as zpoller_wait.
void *
    jace_shaper_wait (zpoller_t *poller, int64_t usec);

#endif
