/*  =========================================================================
    jace_links - the grid's shared link reservations

    On a local virtual grid every emulated node is a process of its own, yet
    the links between clusters (each cluster's uplink, the backbone) are
    shared by all of them: two daemons sending across one backbone at once
    must each get half of it.  jace_links keeps one small file, mapped
    MAP_SHARED by every daemon of the grid, that says until when each
    shared resource is reserved.  Times are CLOCK_MONOTONIC nanoseconds,
    the one clock every process of the machine shares.

    Two kinds of resource (see docs/ARCHITECTURE.md, "Emulated links"):

    * a pipe (transfers = 0) carries any number of transfers at once, at
      most bandwidth_mbps in all: a virtual clock that each transfer of
      B bytes advances by B / bandwidth;
    * a KPBS resource (transfers = k) carries at most k transfers at once,
      each at bandwidth_mbps (Jeannot and Wagner's k simultaneous transfers
      through a backbone): k lanes, a transfer holds one for its duration.

    A transfer starts when every resource of its path can take it and then
    flows for bytes / (the slowest bandwidth of its path): a lone transfer
    gets the whole path.  Reservations are lock-free (one compare-and-swap
    per resource, undone if a later one of the path fails), so a process
    that dies half way leaves at most some reserved time unused; no process
    ever waits for another.
    =========================================================================
*/
#ifndef JACE_LINKS_H_INCLUDED
#define JACE_LINKS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//  Most resources a transfer's path may cross
#define JACE_LINKS_PATH_MAX 8
//  Most simultaneous transfers a KPBS resource may declare
#define JACE_LINKS_TRANSFERS_MAX 4096

//  One shared resource, as the grid's launcher declares it
typedef struct {
    double bandwidth_mbps;      //  A pipe's capacity, or with transfers > 0
                                //  the speed of each of its transfers
    size_t transfers;           //  0: any number at once; k: at most k
} jace_links_resource_t;

//  Opaque view of a mapped reservations file
typedef struct _jace_links_t jace_links_t;

//  Create the file at path for these resources, all free, replacing any
//  file there (atomically: processes still mapping the old one keep it).
//  Returns 0, or -1 with the reason in error.
int
    jace_links_create (const char *path,
                       const jace_links_resource_t *resources, size_t count,
                       char *error, size_t error_size);

//  Map a file jace_links_create made.  Returns NULL, with the reason in
//  error, if it cannot be read or is not such a file.
jace_links_t *
    jace_links_open (const char *path, char *error, size_t error_size);

//  Unmap; nullifies the reference.  Safe on NULL.
void
    jace_links_destroy (jace_links_t **self_p);

//  Number of resources in the file
size_t
    jace_links_count (jace_links_t *self);

//  Resource `index` as it was declared
jace_links_resource_t
    jace_links_resource (jace_links_t *self, size_t index);

//  Reserve the resources of `path` (indices, at most JACE_LINKS_PATH_MAX,
//  none twice) for a transfer of `bytes` that cannot start before
//  `earliest` nor go faster than flow_mbps (<= 0: no limit of its own).
//  Returns when the transfer starts (ns) and writes its duration (ns,
//  at least 1) into *duration.
int64_t
    jace_links_reserve (jace_links_t *self, const size_t *path, size_t hops,
                        size_t bytes, double flow_mbps, int64_t earliest,
                        int64_t *duration);

//  Now on the clock reservations use (CLOCK_MONOTONIC, nanoseconds)
int64_t
    jace_links_now (void);

#endif
