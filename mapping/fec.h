/*  =========================================================================
    fec - FT-F-EC, the communication-driven baseline mapper

    Farhat Edges-Cuts (Couturier et al., PDSEC 2010), as reconstructed in
    ../shared/reference/algorithms.md section 2.5: each cluster gets a
    share of the tasks proportional to its power, grown as one part of
    the TIG with Farhat's greedy decomposer (fewest cut edges); inside a
    cluster the heaviest tasks go to the most powerful nodes.  The
    fault-tolerant version replaces a failed node inside its cluster when
    it can, else in the cluster that holds most of the task's neighbours.
    =========================================================================
*/
#ifndef JACE_FEC_H_INCLUDED
#define JACE_FEC_H_INCLUDED

#include <stddef.h>

//  Map; same contract as maheve_map
int
    fec_map (grid_t *grid, tig_t *tig, size_t *placement);

//  Replace; same contract as maheve_replace
int
    fec_replace (grid_t *grid, tig_t *tig, size_t *placement, size_t task);

#endif
