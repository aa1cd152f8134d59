/*  =========================================================================
    ggp - GGP and OGGP schedules for the KPBS problem

    KPBS (K-Preemptive Bipartite Scheduling, Cohen, Jeannot & Padoy 2003;
    Jeannot & Wagner 2004): senders of cluster 1 send w[i][j] seconds of
    data to receivers of cluster 2 in steps; a step is a matching of at
    most k edges (1-port, k transfers at a time over the backbone), costs
    beta plus its longest transfer, and a transfer may be split over
    several steps (preemption).

    GGP (Generic Graph Peeling) rounds the weights up to multiples of beta,
    pads the graph into a k-weight-regular bipartite graph with filler and
    dummy vertices, then peels perfect matchings off it; OGGP peels the
    perfect matching whose smallest weight is largest.  The construction
    follows ../shared/reference/algorithms.md section 1.3-1.4; the papers
    prove both within twice the optimum when weights are multiples of beta.
    =========================================================================
*/
#ifndef JACE_GGP_H_INCLUDED
#define JACE_GGP_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  One transfer of one step
typedef struct {
    size_t sender;              //  Row of the traffic matrix
    size_t receiver;            //  Column of the traffic matrix
    double amount;              //  Seconds of data sent in this step
} ggp_transfer_t;

//  A schedule: steps of transfers, with their lengths and total cost
typedef struct _ggp_schedule_t ggp_schedule_t;

//  GGP schedule of the n1 x n2 row-major matrix w (seconds, >= 0) with
//  k >= 1 transfers at a time and step cost beta >= 0.  When beta is 0
//  the weights are rounded to a quantum of max(W(G), P(G)/k) / 64.
ggp_schedule_t *
    ggp_schedule (const double *w, size_t n1, size_t n2, size_t k,
                  double beta);

//  OGGP schedule: same arguments, bottleneck matchings
ggp_schedule_t *
    oggp_schedule (const double *w, size_t n1, size_t n2, size_t k,
                   double beta);

//  Destroy a schedule; nullifies the reference.  Safe on NULL.
void
    ggp_schedule_destroy (ggp_schedule_t **self_p);

//  Number of steps
size_t
    ggp_schedule_step_count (ggp_schedule_t *self);

//  Length of a step (its longest transfer, without beta)
double
    ggp_schedule_step_length (ggp_schedule_t *self, size_t step);

//  Number of transfers in a step
size_t
    ggp_schedule_step_size (ggp_schedule_t *self, size_t step);

//  Transfer of a step (borrowed)
const ggp_transfer_t *
    ggp_schedule_transfer (ggp_schedule_t *self, size_t step,
                           size_t index);

//  Cost: sum of the step lengths plus beta per step
double
    ggp_schedule_cost (ggp_schedule_t *self);

//  R, the degree of the regular graph peeled (in units of beta)
size_t
    ggp_schedule_regular_degree (ggp_schedule_t *self);

//  Edges of the regular graph peeled
size_t
    ggp_schedule_padded_edges (ggp_schedule_t *self);

//  Lower bound of the report: max(P(G)/k, W(G)), beta not counted
double
    ggp_lower_bound (const double *w, size_t n1, size_t n2, size_t k);

//  Lower bound of any schedule's cost: max(W(G), P(G)/k) +
//  beta * max(Delta(G), ceil(m/k)) (algorithms.md section 1.2)
double
    ggp_cost_lower_bound (const double *w, size_t n1, size_t n2, size_t k,
                          double beta);

#endif
