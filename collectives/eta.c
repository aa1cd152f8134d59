/*  =========================================================================
    eta - the brute-force estimator eta_o (RR-5361, Figure 5) and the
    decision whether scheduling pays
    =========================================================================
*/
#include "collectives.h"

//  One edge still carrying data
typedef struct {
    size_t sender;              //  Row
    size_t receiver;            //  Column
    double left;                //  Seconds of data left at full speed
    double share;               //  Bandwidth fraction of this round
} flow_t;

//  Node of the bipartite graph, for the ordering by degree
typedef struct {
    size_t index;               //  Row, or n1 + column
    size_t degree;              //  Edges still open
} vertex_t;

static int
s_by_degree (const void *first_p, const void *second_p)
{
    const vertex_t *first = (const vertex_t *) first_p;
    const vertex_t *second = (const vertex_t *) second_p;
    if (first->degree != second->degree)
        return first->degree > second->degree ? -1 : 1;
    return first->index < second->index ? -1 : first->index > second->index;
}

//  Step 2.c: share each node's bandwidth among its edges without a share.
//  Edges are bucketed by node first, so a round costs O(E + V log V).
static void
s_share (flow_t *flows, size_t count, size_t n1, size_t n2)
{
    size_t nodes = n1 + n2;
    vertex_t *order = (vertex_t *) calloc (nodes, sizeof (vertex_t));
    size_t *first = (size_t *) calloc (nodes + 1, sizeof (size_t));
    size_t *edges = (size_t *) malloc ((2 * count + 1) * sizeof (size_t));
    assert (order && first && edges);
    for (size_t node = 0; node < nodes; node++)
        order [node].index = node;
    for (size_t flow = 0; flow < count; flow++) {
        flows [flow].share = 0;
        order [flows [flow].sender].degree++;
        order [n1 + flows [flow].receiver].degree++;
    }
    for (size_t node = 0; node < nodes; node++)
        first [node + 1] = first [node] + order [node].degree;
    size_t *fill = (size_t *) malloc ((nodes + 1) * sizeof (size_t));
    assert (fill);
    memcpy (fill, first, nodes * sizeof (size_t));
    for (size_t flow = 0; flow < count; flow++) {
        edges [fill [flows [flow].sender]++] = flow;
        edges [fill [n1 + flows [flow].receiver]++] = flow;
    }
    free (fill);
    qsort (order, nodes, sizeof (vertex_t), s_by_degree);
    for (size_t rank = 0; rank < nodes && order [rank].degree; rank++) {
        size_t node = order [rank].index;
        double free_share = 1;
        size_t unshared = 0;
        for (size_t edge = first [node]; edge < first [node + 1]; edge++) {
            free_share -= flows [edges [edge]].share;
            unshared += flows [edges [edge]].share == 0;
        }
        //  The report argues free_share >= 0 because nodes come by
        //  decreasing degree, but a node whose edges were all shared by
        //  nodes with many shared edges can be over-committed; its other
        //  edges then wait (share 0) for a later node or round instead of
        //  getting a negative share.
        if (free_share <= 0 || unshared == 0)
            continue;
        double portion = free_share / (double) unshared;
        for (size_t edge = first [node]; edge < first [node + 1]; edge++)
            if (flows [edges [edge]].share == 0)
                flows [edges [edge]].share = portion;
    }
    free (order);
    free (first);
    free (edges);
}

//  --------------------------------------------------------------------------
//  eta_o

double
eta_brute_force (const double *w, size_t n1, size_t n2, size_t k)
{
    assert (w);
    assert (k >= 1);
    flow_t *flows = (flow_t *) malloc ((n1 * n2 + 1) * sizeof (flow_t));
    assert (flows);
    size_t count = 0;
    for (size_t i = 0; i < n1; i++)
        for (size_t j = 0; j < n2; j++)
            if (w [i * n2 + j] > 0)
                flows [count++] = (flow_t) { i, j, w [i * n2 + j], 0 };
    double eta = 0;
    while (count > 0) {
        s_share (flows, count, n1, n2);
        double first = INFINITY, shares = 0;
        for (size_t flow = 0; flow < count; flow++) {
            if (flows [flow].share > 0)
                first = fmin (first, flows [flow].left / flows [flow].share);
            shares += flows [flow].share;
        }
        assert (isfinite (first));  //  The first node shares its bandwidth
        eta += first * fmax (shares / (double) k, 1.0);
        size_t kept = 0;
        for (size_t flow = 0; flow < count; flow++) {
            flows [flow].left -= first * flows [flow].share;
            //  Flows that end together with the first one, up to rounding
            if (flows [flow].left > 1e-12 * (1 + first))
                flows [kept++] = flows [flow];
        }
        count = kept;
    }
    free (flows);
    return eta;
}

//  --------------------------------------------------------------------------
//  Whether scheduling with OGGP beats the brute-force approach

bool
eta_scheduling_pays (const double *w, size_t n1, size_t n2, size_t k,
                     double beta, double *scheduled, double *brute)
{
    ggp_schedule_t *schedule = oggp_schedule (w, n1, n2, k, beta);
    double cost = ggp_schedule_cost (schedule);
    ggp_schedule_destroy (&schedule);
    //  Sending everything at once still opens the connections once
    double eta = eta_brute_force (w, n1, n2, k) + beta;
    if (scheduled)
        *scheduled = cost;
    if (brute)
        *brute = eta;
    return cost < eta;
}
