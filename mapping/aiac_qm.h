/*  =========================================================================
    aiac_qm - FT-AIAC-QM, the computation-driven baseline mapper

    Quick-quality Map adapted to AIAC (Couturier et al., PDSEC 2010), as
    reconstructed in ../shared/reference/algorithms.md section 2.4: keep
    the |T| most powerful nodes, place tasks in BFS order from the
    heaviest on the node that minimises their ET given the neighbours
    already placed, then move or swap the slowest task while ET(App)
    falls.  The fault-tolerant version replaces a failed node by the
    available node that minimises the task's ET.
    =========================================================================
*/
#ifndef JACE_AIAC_QM_H_INCLUDED
#define JACE_AIAC_QM_H_INCLUDED

#include <stddef.h>

//  Rounds of the improvement phase
#define AIAC_QM_ITERATIONS 10

//  Map; same contract as maheve_map
int
    aiac_qm_map (grid_t *grid, tig_t *tig, size_t *placement);

//  Replace; same contract as maheve_replace
int
    aiac_qm_replace (grid_t *grid, tig_t *tig, size_t *placement,
                     size_t task);

#endif
