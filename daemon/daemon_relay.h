/*  =========================================================================
    daemon_relay - a cluster's task data, passed on inside the cluster

    When a job's data crosses a backbone to reach a cluster, the spawner
    sends that cluster's share once, to one of its daemons (the relay),
    which passes each task's CHUNKs on to the task's daemon over the
    cluster's own network, and their CHUNK_ACKs back to the spawner
    (spawner_scatter, `scatter/relay`).  The chunks stay sealed by the
    spawner and the ASSIGN's digest covers their bytes, so a relay can
    delay or lose data but never change it unseen.

    A relay passes on only chunks of its job (the server checked the
    seal), for another task whose daemon is in the relay's own cluster,
    with the epoch the job's table names: it is no forwarder for anyone
    else.  One DEALER per such daemon, opened at its first chunk, closed
    when the job ends; each queues at most RELAY_QUEUE_MAX chunks, beyond
    which a daemon that does not read gets nothing more (its spawner's
    window stops first: see daemon_relay.c).
    =========================================================================
*/
#ifndef DAEMON_RELAY_H_INCLUDED
#define DAEMON_RELAY_H_INCLUDED

#include "jace_msg.h"
#include "jace_security.h"

typedef struct _daemon_relay_t daemon_relay_t;

//  A relay whose links use `security` and are polled by `poller` (both
//  borrowed).
daemon_relay_t *
    daemon_relay_new (jace_security_t *security, zpoller_t *poller);

//  Destroy, closing every link; nullifies the reference.  Safe on NULL.
void
    daemon_relay_destroy (daemon_relay_t **self_p);

//  Relay for the job of `assign` (its table of daemons, our task) inside
//  `cluster`, with the job key `key` (JACE_KEY_BYTES) that seals the
//  acknowledgements passed back.  Forgets any earlier job.
void
    daemon_relay_start (daemon_relay_t *self, const jace_msg_t *assign,
                        const char *cluster, const unsigned char *key);

//  Forget the job: close every link, drop what is held.
void
    daemon_relay_stop (daemon_relay_t *self);

//  Take a CHUNK of the job for another task, to pass on at `due` (usec,
//  zclock_usecs; 0 for now).  Returns 0, or -1 with the reason, leaving
//  the chunk to the caller, when it is not ours to relay.
int
    daemon_relay_chunk (daemon_relay_t *self, jace_msg_t **chunk_p,
                        int64_t due, char *reason, size_t reason_size);

//  Pass on the held chunks that are due.  Returns usec until the next,
//  or -1 when none is held.
int64_t
    daemon_relay_flush (daemon_relay_t *self);

//  True if `socket` (from the poller) is one of the relay's links.
bool
    daemon_relay_owns (daemon_relay_t *self, void *socket);

//  Read one message off our link `socket`: a CHUNK_ACK of the daemon it
//  reaches, sealed with the job key, for the task and epoch we relay to,
//  is returned for the spawner; anything else is dropped with the reason
//  and NULL returned.
jace_msg_t *
    daemon_relay_recv (daemon_relay_t *self, void *socket, char *reason,
                       size_t reason_size);

//  Chunks passed on, and acknowledgements passed back, since the start.
uint64_t
    daemon_relay_chunks (daemon_relay_t *self);
uint64_t
    daemon_relay_acks (daemon_relay_t *self);

#endif
