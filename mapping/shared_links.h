/*  =========================================================================
    shared_links - which of a platform's links are resources shared by
    every process of a virtual grid, and how they are numbered

    jace-grid lays these resources out in the grid's links file
    (jace_links) and every daemon looks up there the ones its messages
    cross; both number them with this module, from the same platform
    file, so they agree.  In order: each cluster with an `uplink_mbps`,
    its uplink out then in (full duplex, as a cluster's port to the wide
    area network); then, when the backbone is shared, the backbone, then
    every `link` (first cluster before second, in cluster order), each
    carrying both ways.  A transfer from cluster A to cluster B crosses
    A's uplink out, the backbone or their link, and B's uplink in: those
    of them that are shared.  Traffic inside a cluster crosses none.
    =========================================================================
*/
#ifndef JACE_SHARED_LINKS_H_INCLUDED
#define JACE_SHARED_LINKS_H_INCLUDED

#include "platform.h"

//  Most shared resources one transfer crosses
#define SHARED_LINKS_PATH_MAX 3

//  Number of shared resources of the platform (0 when nothing is shared)
size_t
    shared_links_count (platform_t *platform);

//  Bandwidth of resource `index` in Mb/s (its capacity, or with transfers
//  the speed of each transfer) and how many transfers it carries at once
//  (0: any number)
void
    shared_links_resource (platform_t *platform, size_t index,
                           double *bandwidth_mbps, size_t *transfers);

//  Write into path the resources a transfer from cluster `from` to
//  cluster `to` crosses (at most SHARED_LINKS_PATH_MAX); returns how many
size_t
    shared_links_path (platform_t *platform, size_t from, size_t to,
                       size_t *path);

#endif
