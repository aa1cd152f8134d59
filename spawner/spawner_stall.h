/*  =========================================================================
    spawner_stall - whether a link explains a job that stopped converging

    An asynchronous iteration goes on with the newest values it holds.
    Across a link too slow for its tasks, those values are many iterations
    old, and the verified residual stops falling as it would on a matrix
    the iteration does not suit; the advice must then name the link, not
    the matrix.  The test weighs, for each pair of clusters the job spans,
    the time a round of the values its tasks exchange across them takes on
    the link (the task graph's c_ij, 64 bits each, over the bandwidth, plus
    the latency) against the time those tasks compute an iteration.
    =========================================================================
*/
#ifndef SPAWNER_STALL_H_INCLUDED
#define SPAWNER_STALL_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#include "platform.h"
#include "tig.h"

//  Iterations old that the values crossing a link must be for the link
//  to be named.  Latency alone makes values a few iterations old on any
//  grid (5 ms against a 1 ms iteration), and asynchronous iterations
//  converge through that; a link that cannot carry the values makes them
//  hundreds or thousands old (test_stall_link's 0.02 Mb/s link: 2,497
//  and 3,941 in two runs).
#define SPAWNER_STALL_LINK_ITERATIONS 50

//  True when the values crossing some link between two clusters of the
//  job arrive SPAWNER_STALL_LINK_ITERATIONS iterations old or more; then
//  `why` says which link, its figures, and what to do.  cluster [i] is
//  task i's cluster on `platform` (SIZE_MAX when not known), usecs [i]
//  its computing time of one iteration in microseconds (0 when not
//  reported); both have tig_count (tig) entries.
bool
    spawner_stall_slow_link (platform_t *platform, tig_t *tig,
                             const size_t *cluster, const double *usecs,
                             char *why, size_t why_size);

#endif
