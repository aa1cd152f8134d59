/*  =========================================================================
    grid_bulk - time one bulk TCP transfer between two network namespaces

    `jace-grid bulk` measures what a testbed's kernel paths carry: a
    listening socket is made in the receiver's namespace and a connecting
    one in the sender's (a socket stays in the namespace it was made in,
    so one thread can then drive both ends), and the bytes are timed as
    they arrive.  No helper process and no tool beyond the kernel.
    =========================================================================
*/
#ifndef JACE_GRID_BULK_H_INCLUDED
#define JACE_GRID_BULK_H_INCLUDED

#include <stddef.h>

//  Send bytes from a socket made in namespace sender_namespace to one
//  listening on receiver_address (IPv4, any free port) in namespace
//  receiver_namespace; a NULL namespace is the caller's own.  Namespaces
//  are `ip netns` names.  Sets *seconds to the time from the connection
//  being accepted to the last byte received.  Gives up after
//  timeout_msec.  Returns 0, or -1 with a reason in error.
int
    grid_bulk_transfer (const char *sender_namespace,
                        const char *receiver_namespace,
                        const char *receiver_address, size_t bytes,
                        int timeout_msec, double *seconds, char *error,
                        size_t error_size);

#endif
