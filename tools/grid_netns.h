/*  =========================================================================
    grid_netns - a virtual grid's clusters in network namespaces, joined by
    one backbone that the kernel limits

    `jace-grid start --netns` runs each cluster's super-nodes and daemons
    in a network namespace of its own, so that traffic between clusters
    takes real kernel paths and `tc tbf` limits its bandwidth, while the
    daemons emulate only the latency (this kernel has no netem).

    Topology, for a run tagged TAG and clusters numbered C = 1, 2...:

        root namespace                backbone namespace jace-TAG
        jace-TAG 10.S.0.1 ---veth--- host 10.S.0.2
        (route 10.S.0.0/16                 |  routes, forwards
         via 10.S.0.2)              bridge "backbone", tbf = backbone
                                    addresses 10.S.C.254/24
                                     |c0 (tbf = A's uplink in)  |c1 ...
                                     |                          |
        cluster namespace jace-TAG-A: uplink 10.S.1.1/24 (tbf = A's uplink
        out), route 10.S.0.0/16 via 10.S.1.254; its processes bind 10.S.1.1

    Each cluster is a subnet of its own, so a packet from A to B is sent to
    the backbone namespace's router (the bridge's address in A's subnet),
    not switched port to port: it leaves the router through the bridge
    device, exactly once, whichever clusters it joins.  One tbf on that
    device is therefore one backbone that all clusters share, in both
    directions (as the emulated `shared = 1` pipe), where tbf on bridge
    ports could only limit the traffic towards each cluster.  A cluster's
    `uplink_mbps` is a tbf on its veth, each way.  Inside a cluster,
    processes reach each other on the namespace's own address, over its
    loopback, which no qdisc limits.  The root namespace reaches every
    cluster through the host veth, so `jace-spawner` works from a plain
    shell; what it sends into the clusters crosses the backbone, as a
    user's traffic crosses the wide area.

    S, the second byte, is the first of 10.213 to 10.222 that no address
    or route of the root namespace overlaps, chosen under a lock so that
    two runs never take the same one.

    Every object is recorded in DIR/netns before it is made, so that
    `jace-grid stop` removes all of it even after a failed start or a
    killed launcher:

        backbone NAMESPACE
        link NAME                       (the root side of the host veth)
        subnet 10.S.0.0/16 HOST-ADDRESS
        cluster NAME NAMESPACE ADDRESS

    and /run/jace-grid/TAG names the run folder, for `jace-grid sweep`
    once that folder is deleted with its records.
    =========================================================================
*/
#ifndef JACE_GRID_NETNS_H_INCLUDED
#define JACE_GRID_NETNS_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>

#include "grid_run.h"
#include "platform.h"

//  Most clusters a testbed holds: one /24 each in a /16, the first kept
//  for the host link
#define GRID_NETNS_CLUSTERS_MAX 250
//  Longest namespace name, with its NUL
#define GRID_NETNS_NAME_MAX 64
//  Longest IPv4 address text, with its NUL
#define GRID_NETNS_ADDRESS_MAX 16

//  Opaque testbed of one run
typedef struct _grid_netns_t grid_netns_t;

//  Plan the testbed of platform in run (both borrowed, and kept until
//  destroy).  Returns NULL with a reason in error when we are not root,
//  or when the platform asks for what the testbed cannot build: more than
//  GRID_NETNS_CLUSTERS_MAX clusters, a `link` of its own between two
//  clusters, or a KPBS backbone (`transfers`).  platform_path names the
//  file in reasons.
grid_netns_t *
    grid_netns_new (grid_run_t *run, platform_t *platform,
                    const char *platform_path, char *error,
                    size_t error_size);

//  Destroy the plan; nullifies the reference.  Safe on NULL.  Leaves the
//  namespaces alone: grid_netns_remove takes them down.
void
    grid_netns_destroy (grid_netns_t **self_p);

//  Make the namespaces, links, addresses, routes and qdiscs, recording
//  each in DIR/netns first; commands and their errors go to
//  DIR/logs/netns.log.  Returns 0, or -1 with a reason in error; what was
//  made stays recorded for grid_netns_remove.
int
    grid_netns_create (grid_netns_t *self, char *error, size_t error_size);

//  Namespace of a cluster, borrowed; valid once created
const char *
    grid_netns_namespace (grid_netns_t *self, size_t cluster);

//  Address a cluster's processes bind, borrowed; valid once created
const char *
    grid_netns_address (grid_netns_t *self, size_t cluster);

//  Write the platform the processes of the testbed get, to DIR/relative:
//  the same clusters, nodes, speeds, powers and latencies, but the links
//  between clusters cost nothing and nothing is shared, since the kernel
//  limits them now.  A cluster's own latency and bandwidth stay: its
//  traffic goes over loopback, which the kernel does not limit.  Returns
//  0, or -1 with a reason in error.
int
    grid_netns_write_platform (grid_netns_t *self, const char *relative,
                               char *error, size_t error_size);

//  True if the run folder records a testbed (DIR/netns)
bool
    grid_netns_is_recorded (grid_run_t *run);

//  Remove every object DIR/netns records, host links first, then cluster
//  namespaces, then the backbone's, and then the file.  Objects already
//  gone are skipped, so it is safe to call twice.  Returns 0, or -1 with
//  a reason in error (the file then stays).
int
    grid_netns_remove (grid_run_t *run, char *error, size_t error_size);

//  Remove the testbeds whose run folder no longer exists (deleted before
//  `jace-grid stop`), known by the owner record each start writes in
//  /run/jace-grid.  Returns a list of "jace-TAG FOLDER" strings, one per
//  testbed removed (caller destroys); error says why one could not be.
zlist_t *
    grid_netns_sweep (char *error, size_t error_size);

//  Cut cluster off the backbone of a recorded testbed (cut true), or
//  heal the cut: while cut, every packet the backbone would route to or
//  from the cluster's subnet is dropped without an answer (ip rule
//  blackhole in the backbone namespace).  Its processes live on and
//  reach each other; the rest of the grid and this machine hear nothing
//  from them, as from a site whose link went down.  `jace-grid stop`
//  removes the rules with the namespace.  Returns 0, or -1 with a reason
//  in error (no such cluster, already cut, not cut).
int
    grid_netns_cut (grid_run_t *run, const char *cluster, bool cut,
                    char *error, size_t error_size);

//  Find a cluster of a recorded testbed: its namespace and address, into
//  buffers of GRID_NETNS_NAME_MAX and GRID_NETNS_ADDRESS_MAX bytes.
//  Returns 0, or -1 with a reason in error.
int
    grid_netns_lookup (grid_run_t *run, const char *cluster,
                       char *namespace_name, char *address, char *error,
                       size_t error_size);

#endif
