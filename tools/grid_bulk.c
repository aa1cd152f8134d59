/*  =========================================================================
    grid_bulk - time one bulk TCP transfer between two network namespaces

    See grid_bulk.h.  setns (CLONE_NEWNET) moves only the calling thread,
    so the launcher enters each namespace just long enough to make a
    socket there and always comes back to its own.
    =========================================================================
*/
#define _GNU_SOURCE
#include "grid_bulk.h"

#include <czmq.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>

//  Where `ip netns` keeps named namespaces
#define GRID_BULK_NETNS_DIR "/run/netns"
//  Bytes handed to send () or taken from recv () at once
#define GRID_BULK_CHUNK (64 * 1024)

//  The state of one transfer
typedef struct {
    int home;                   //  Our own network namespace
    int listener;               //  Listening socket, receiver's side
    int sender;                 //  Connecting socket, sender's side
    int receiver;               //  Accepted socket, receiver's side
    struct sockaddr_in target;  //  Where the listener listens
    int64_t deadline;           //  zclock_mono () bound
    char *error;                //  Borrowed; where reasons go
    size_t error_size;          //  Its size
} bulk_t;


//  --------------------------------------------------------------------------
//  Record why the transfer failed.  Returns -1.

static int
s_fail (bulk_t *self, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (self->error, self->error_size, format, args);
    va_end (args);
    return -1;
}


//  --------------------------------------------------------------------------
//  Move this thread into a named namespace, or back home when name is
//  NULL

static int
s_enter (bulk_t *self, const char *name)
{
    if (!name)
        return setns (self->home, CLONE_NEWNET) == 0 ? 0
             : s_fail (self, "cannot return to our namespace: %s",
                       strerror (errno));
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", GRID_BULK_NETNS_DIR, name);
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return s_fail (self, "no network namespace %s (%s): %s", name, path,
                       strerror (errno));
    int rc = setns (fd, CLONE_NEWNET);
    int saved = errno;
    close (fd);
    return rc == 0 ? 0 : s_fail (self, "cannot enter namespace %s: %s",
                                 name, strerror (saved));
}


//  --------------------------------------------------------------------------
//  Listen on the receiver's address, on a port the kernel picks

static int
s_listen (bulk_t *self, const char *address)
{
    self->target.sin_family = AF_INET;
    if (inet_pton (AF_INET, address, &self->target.sin_addr) != 1)
        return s_fail (self, "'%s' is not an IPv4 address", address);
    self->listener = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t size = sizeof self->target;
    if (self->listener < 0
    ||  bind (self->listener, (struct sockaddr *) &self->target, size)
    ||  listen (self->listener, 1)
    ||  getsockname (self->listener, (struct sockaddr *) &self->target,
                     &size))
        return s_fail (self, "cannot listen on %s: %s", address,
                       strerror (errno));
    return 0;
}


//  --------------------------------------------------------------------------
//  Start connecting to the listener; the handshake ends in s_accept

static int
s_connect (bulk_t *self)
{
    self->sender = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC
                                  | SOCK_NONBLOCK, 0);
    if (self->sender < 0)
        return s_fail (self, "cannot make a socket: %s", strerror (errno));
    if (connect (self->sender, (struct sockaddr *) &self->target,
                 sizeof self->target) != 0 && errno != EINPROGRESS)
        return s_fail (self, "cannot connect: %s", strerror (errno));
    return 0;
}


//  --------------------------------------------------------------------------
//  Milliseconds left before the deadline, at least 0

static int
s_remaining (bulk_t *self)
{
    int64_t remaining = self->deadline - zclock_mono ();
    return remaining > 0 ? (int) remaining : 0;
}


//  --------------------------------------------------------------------------
//  Accept the sender's connection

static int
s_accept (bulk_t *self)
{
    struct pollfd item = { .fd = self->listener, .events = POLLIN };
    if (poll (&item, 1, s_remaining (self)) != 1)
        return s_fail (self, "no connection to %s within the timeout (is"
                       " the address routed?)",
                       inet_ntoa (self->target.sin_addr));
    self->receiver = accept4 (self->listener, NULL, NULL,
                              SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (self->receiver < 0)
        return s_fail (self, "cannot accept: %s", strerror (errno));
    return 0;
}


//  --------------------------------------------------------------------------
//  Send everything and read it back at the other end.  The sender closes
//  its side once all is sent, so the receiver's end of file means every
//  byte arrived.

static int
s_pump (bulk_t *self, size_t bytes)
{
    char *buffer = (char *) zmalloc (GRID_BULK_CHUNK);
    size_t sent = 0;
    size_t received = 0;
    bool shut = false;
    bool closed = false;
    int rc = 0;
    while (rc == 0 && !closed) {
        if (sent == bytes && !shut)
            shut = shutdown (self->sender, SHUT_WR) == 0;
        struct pollfd items [2] = {
            { .fd = self->receiver, .events = POLLIN },
            { .fd = self->sender, .events = sent < bytes ? POLLOUT : 0 }
        };
        if (poll (items, 2, s_remaining (self)) <= 0) {
            rc = s_fail (self, "timed out with %zu of %zu bytes received",
                         received, bytes);
            break;
        }
        if (items [1].revents & (POLLOUT | POLLERR)) {
            size_t size = bytes - sent < GRID_BULK_CHUNK ? bytes - sent
                                                         : GRID_BULK_CHUNK;
            ssize_t done = send (self->sender, buffer, size, MSG_NOSIGNAL);
            if (done < 0 && errno != EAGAIN && errno != EINTR)
                rc = s_fail (self, "cannot send: %s", strerror (errno));
            sent += done > 0 ? (size_t) done : 0;
        }
        if (rc == 0 && items [0].revents) {
            ssize_t got = recv (self->receiver, buffer, GRID_BULK_CHUNK, 0);
            if (got < 0 && errno != EAGAIN && errno != EINTR)
                rc = s_fail (self, "cannot receive: %s", strerror (errno));
            received += got > 0 ? (size_t) got : 0;
            closed = got == 0;
        }
    }
    free (buffer);
    if (rc == 0 && received != bytes)
        rc = s_fail (self, "received %zu bytes of %zu", received, bytes);
    return rc;
}


//  --------------------------------------------------------------------------
//  Close whatever is open

static void
s_close_all (bulk_t *self)
{
    int *fds [] = { &self->home, &self->listener, &self->sender,
                    &self->receiver };
    for (size_t index = 0; index < 4; index++)
        if (*fds [index] >= 0) {
            close (*fds [index]);
            *fds [index] = -1;
        }
}


//  --------------------------------------------------------------------------
//  Time one transfer

int
grid_bulk_transfer (const char *sender_namespace,
                    const char *receiver_namespace,
                    const char *receiver_address, size_t bytes,
                    int timeout_msec, double *seconds, char *error,
                    size_t error_size)
{
    assert (receiver_address && seconds && error);
    bulk_t self = { -1, -1, -1, -1, { 0 }, zclock_mono () + timeout_msec,
                    error, error_size };
    self.home = open ("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (self.home < 0) {
        snprintf (error, error_size, "cannot open /proc/self/ns/net: %s",
                  strerror (errno));
        return -1;
    }
    //  Every path out of a namespace returns home, even a failed one.
    int rc = receiver_namespace ? s_enter (&self, receiver_namespace) : 0;
    if (rc == 0)
        rc = s_listen (&self, receiver_address);
    if (rc == 0 && sender_namespace)
        rc = s_enter (&self, NULL) || s_enter (&self, sender_namespace);
    if (rc == 0)
        rc = s_connect (&self);
    if (s_enter (&self, NULL))
        rc = -1;
    if (rc == 0)
        rc = s_accept (&self);
    int64_t start = zclock_usecs ();
    if (rc == 0)
        rc = s_pump (&self, bytes);
    if (rc == 0)
        *seconds = (zclock_usecs () - start) / 1e6;
    s_close_all (&self);
    return rc;
}
