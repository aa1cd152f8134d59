/*  =========================================================================
    lg - plans of the LG total exchange and of the direct all-to-all

    Every message gets a route of at most three hops (stage in the local
    phase, cross the backbone, relay locally); the hops are then sorted
    and hops with the same step, sender and receiver are packed into one
    transfer.
    =========================================================================
*/
#include "collectives.h"

//  One hop of one message, before packing
typedef struct {
    size_t step;                //  Step of the hop
    size_t from;                //  Sending node
    size_t to;                  //  Receiving node
    size_t message;             //  Message id source*N + destination
} hop_record_t;

struct _lg_plan_t {
    size_t node_count;          //  N, nodes over all clusters
    size_t cluster_count;       //  Number of clusters
    size_t *cluster_nodes;      //  Nodes of each cluster
    size_t *cluster_first;      //  Global index of each cluster's node 0
    size_t *node_cluster;       //  Cluster of each node
    double *sizes;              //  N*N message sizes
    size_t step_count;          //  Steps, local and relay included
    lg_hop_t *routes;           //  N*N*LG_MAX_HOPS hops, per message
    size_t *route_length;       //  Hops of each message
    lg_transfer_t *transfers;   //  Transfers sorted by step, from, to
    size_t transfer_count;      //  Number of transfers
    size_t *carried;            //  Message ids, grouped per transfer
};

//  Steps of the inter-cluster phase of one cluster pair
static size_t
s_pair_steps (size_t first_nodes, size_t second_nodes)
{
    size_t small = first_nodes < second_nodes ? first_nodes : second_nodes;
    size_t big = first_nodes < second_nodes ? second_nodes : first_nodes;
    return (big + small - 1) / small;
}

static lg_plan_t *
s_plan_new (const size_t *cluster_nodes, size_t cluster_count,
            const double *sizes)
{
    assert (cluster_nodes);
    assert (cluster_count >= 1);
    lg_plan_t *self = (lg_plan_t *) calloc (1, sizeof (lg_plan_t));
    assert (self);
    self->cluster_count = cluster_count;
    self->cluster_nodes = (size_t *) malloc (cluster_count * sizeof (size_t));
    self->cluster_first = (size_t *) malloc (cluster_count * sizeof (size_t));
    assert (self->cluster_nodes && self->cluster_first);
    for (size_t cluster = 0; cluster < cluster_count; cluster++) {
        assert (cluster_nodes [cluster] >= 1);
        self->cluster_nodes [cluster] = cluster_nodes [cluster];
        self->cluster_first [cluster] = self->node_count;
        self->node_count += cluster_nodes [cluster];
    }
    size_t nodes = self->node_count;
    self->node_cluster = (size_t *) malloc (nodes * sizeof (size_t));
    self->sizes = (double *) malloc (nodes * nodes * sizeof (double));
    self->routes = (lg_hop_t *) calloc (nodes * nodes * LG_MAX_HOPS,
                                        sizeof (lg_hop_t));
    self->route_length = (size_t *) calloc (nodes * nodes, sizeof (size_t));
    assert (self->node_cluster && self->sizes && self->routes
            && self->route_length);
    for (size_t cluster = 0; cluster < cluster_count; cluster++)
        for (size_t node = 0; node < cluster_nodes [cluster]; node++)
            self->node_cluster [self->cluster_first [cluster] + node] = cluster;
    for (size_t cell = 0; cell < nodes * nodes; cell++) {
        assert (!sizes || sizes [cell] >= 0);
        self->sizes [cell] = sizes ? sizes [cell] : 1.0;
    }
    return self;
}

static void
s_add_hop (lg_plan_t *self, size_t message, size_t step, size_t from,
           size_t to)
{
    if (from == to)
        return;                 //  Staging on the node that already has it
    size_t length = self->route_length [message];
    assert (length < LG_MAX_HOPS);
    lg_hop_t *hop = &self->routes [message * LG_MAX_HOPS + length];
    hop->step = step;
    hop->from = from;
    hop->to = to;
    self->route_length [message] = length + 1;
}

//  Route one inter-cluster message of LG between clusters small and big
//  (small has no more nodes than big, ties by index).  base is the last
//  step before the pair's inter-cluster steps.  Returns true if the
//  message needs the relay step.
static bool
s_route_inter (lg_plan_t *self, size_t source, size_t destination,
               size_t small, size_t big, size_t base, size_t relay_step)
{
    size_t message = source * self->node_count + destination;
    size_t small_nodes = self->cluster_nodes [small];
    size_t big_nodes = self->cluster_nodes [big];
    size_t small_first = self->cluster_first [small];
    size_t big_first = self->cluster_first [big];
    if (self->node_cluster [source] == small) {
        //  Staged on node (j mod n1) of the small cluster; crosses in the
        //  step where that node meets j's group
        size_t local = destination - big_first;
        size_t stage = small_first + local % small_nodes;
        s_add_hop (self, message, 0, source, stage);
        s_add_hop (self, message, base + local / small_nodes + 1, stage,
                   destination);
        return false;
    }
    //  From the big cluster: staged on node floor(i/n1)*n1 + j of the big
    //  cluster.  The last group may have fewer than n1 nodes: then the
    //  message for a node it has no partner for goes to the partner
    //  (j mod group size) and is relayed in the final local step.
    size_t local = source - big_first;
    size_t target = destination - small_first;
    size_t group = local / small_nodes;
    size_t group_first = group * small_nodes;
    size_t group_size = big_nodes - group_first < small_nodes
                      ? big_nodes - group_first : small_nodes;
    size_t partner = target < group_size ? target : target % group_size;
    size_t stage = big_first + group_first + partner;
    s_add_hop (self, message, 0, source, stage);
    s_add_hop (self, message, base + group + 1, stage, small_first + partner);
    if (partner != target)
        s_add_hop (self, message, relay_step, small_first + partner,
                   destination);
    return partner != target;
}

//  Pairs of round `round` of the circle-method tournament over `slots`
//  (even) players: player slots-1 stays, the others rotate.  Returns the
//  partner of `player`.
static size_t
s_tournament_partner (size_t slots, size_t round, size_t player)
{
    size_t fixed = slots - 1;
    if (player == fixed)
        return round;
    if (player == round)
        return fixed;
    size_t rotating = slots - 1;
    //  Players a, b (not fixed) meet when a + b == 2*round mod (slots-1)
    return (2 * round + rotating - player % rotating) % rotating;
}

//  Route every message of LG, the pairs in tournament rounds
static void
s_route_lg (lg_plan_t *self)
{
    size_t clusters = self->cluster_count;
    size_t slots = clusters + clusters % 2;
    size_t rounds = clusters > 1 ? slots - 1 : 0;
    //  base of each pair, then the relay step after the last round
    size_t *pair_base = (size_t *) calloc (clusters * clusters,
                                           sizeof (size_t));
    assert (pair_base);
    size_t base = 0;
    for (size_t round = 0; round < rounds; round++) {
        size_t longest = 0;
        for (size_t first = 0; first < clusters; first++) {
            size_t second = s_tournament_partner (slots, round, first);
            if (second >= clusters || second == first)
                continue;
            pair_base [first * clusters + second] = base;
            size_t steps = s_pair_steps (self->cluster_nodes [first],
                                         self->cluster_nodes [second]);
            if (steps > longest)
                longest = steps;
        }
        base += longest;
    }
    size_t relay_step = base + 1;
    size_t nodes = self->node_count;
    bool relayed = false;
    for (size_t source = 0; source < nodes; source++)
        for (size_t destination = 0; destination < nodes; destination++) {
            size_t message = source * nodes + destination;
            if (self->sizes [message] <= 0)
                continue;
            size_t from = self->node_cluster [source];
            size_t to = self->node_cluster [destination];
            if (from == to) {
                s_add_hop (self, message, 0, source, destination);
                continue;
            }
            bool from_small = self->cluster_nodes [from]
                                  < self->cluster_nodes [to]
                           || (self->cluster_nodes [from]
                                  == self->cluster_nodes [to] && from < to);
            size_t small = from_small ? from : to;
            size_t big = from_small ? to : from;
            if (s_route_inter (self, source, destination, small, big,
                               pair_base [from * clusters + to], relay_step))
                relayed = true;
        }
    self->step_count = relayed ? relay_step + 1 : base + 1;
    free (pair_base);
}

//  Route every message of the direct algorithm
static void
s_route_direct (lg_plan_t *self)
{
    size_t nodes = self->node_count;
    for (size_t source = 0; source < nodes; source++)
        for (size_t shift = 1; shift < nodes; shift++) {
            size_t destination = (source + shift) % nodes;
            size_t message = source * nodes + destination;
            if (self->sizes [message] > 0)
                s_add_hop (self, message, shift, source, destination);
        }
    self->step_count = nodes;
}

static int
s_compare_hops (const void *first_p, const void *second_p)
{
    const hop_record_t *first = (const hop_record_t *) first_p;
    const hop_record_t *second = (const hop_record_t *) second_p;
    if (first->step != second->step)
        return first->step < second->step ? -1 : 1;
    if (first->from != second->from)
        return first->from < second->from ? -1 : 1;
    if (first->to != second->to)
        return first->to < second->to ? -1 : 1;
    return first->message < second->message ? -1
         : first->message > second->message;
}

//  Pack the hops of all routes into transfers
static void
s_pack (lg_plan_t *self)
{
    size_t messages = self->node_count * self->node_count;
    size_t hop_count = 0;
    for (size_t message = 0; message < messages; message++)
        hop_count += self->route_length [message];
    hop_record_t *hops = (hop_record_t *) malloc ((hop_count + 1)
                                                  * sizeof (hop_record_t));
    self->carried = (size_t *) malloc ((hop_count + 1) * sizeof (size_t));
    self->transfers = (lg_transfer_t *) calloc (hop_count + 1,
                                                sizeof (lg_transfer_t));
    assert (hops && self->carried && self->transfers);
    size_t index = 0;
    for (size_t message = 0; message < messages; message++)
        for (size_t hop = 0; hop < self->route_length [message]; hop++) {
            lg_hop_t *route = &self->routes [message * LG_MAX_HOPS + hop];
            hops [index++] = (hop_record_t) {
                route->step, route->from, route->to, message
            };
        }
    qsort (hops, hop_count, sizeof (hop_record_t), s_compare_hops);
    for (index = 0; index < hop_count; index++) {
        hop_record_t *hop = &hops [index];
        lg_transfer_t *last = self->transfer_count
                            ? &self->transfers [self->transfer_count - 1]
                            : NULL;
        if (!last || last->step != hop->step || last->from != hop->from
        ||  last->to != hop->to) {
            last = &self->transfers [self->transfer_count++];
            last->step = hop->step;
            last->from = hop->from;
            last->to = hop->to;
            last->inter = self->node_cluster [hop->from]
                       != self->node_cluster [hop->to];
            last->first = index;
        }
        last->count++;
        last->bytes += self->sizes [hop->message];
        self->carried [index] = hop->message;
    }
    free (hops);
}

//  --------------------------------------------------------------------------
//  Plan LG

lg_plan_t *
lg_plan (const size_t *cluster_nodes, size_t cluster_count,
         const double *sizes)
{
    lg_plan_t *self = s_plan_new (cluster_nodes, cluster_count, sizes);
    s_route_lg (self);
    s_pack (self);
    return self;
}

//  --------------------------------------------------------------------------
//  Plan the direct algorithm

lg_plan_t *
lg_plan_direct (const size_t *cluster_nodes, size_t cluster_count,
                const double *sizes)
{
    lg_plan_t *self = s_plan_new (cluster_nodes, cluster_count, sizes);
    s_route_direct (self);
    s_pack (self);
    return self;
}

//  --------------------------------------------------------------------------
//  Destroy a plan

void
lg_plan_destroy (lg_plan_t **self_p)
{
    assert (self_p);
    lg_plan_t *self = *self_p;
    if (!self)
        return;
    free (self->cluster_nodes);
    free (self->cluster_first);
    free (self->node_cluster);
    free (self->sizes);
    free (self->routes);
    free (self->route_length);
    free (self->transfers);
    free (self->carried);
    free (self);
    *self_p = NULL;
}

size_t
lg_plan_node_count (lg_plan_t *self)
{
    assert (self);
    return self->node_count;
}

size_t
lg_plan_node_cluster (lg_plan_t *self, size_t node)
{
    assert (self);
    assert (node < self->node_count);
    return self->node_cluster [node];
}

size_t
lg_plan_step_count (lg_plan_t *self)
{
    assert (self);
    return self->step_count;
}

size_t
lg_plan_transfer_count (lg_plan_t *self)
{
    assert (self);
    return self->transfer_count;
}

const lg_transfer_t *
lg_plan_transfer (lg_plan_t *self, size_t index)
{
    assert (self);
    assert (index < self->transfer_count);
    return &self->transfers [index];
}

size_t
lg_plan_transfer_message (lg_plan_t *self, size_t transfer, size_t index)
{
    assert (self);
    assert (transfer < self->transfer_count);
    assert (index < self->transfers [transfer].count);
    return self->carried [self->transfers [transfer].first + index];
}

size_t
lg_plan_backbone_messages (lg_plan_t *self)
{
    assert (self);
    size_t count = 0;
    for (size_t index = 0; index < self->transfer_count; index++)
        if (self->transfers [index].inter)
            count++;
    return count;
}

size_t
lg_plan_route (lg_plan_t *self, size_t source, size_t destination,
               lg_hop_t *hops, size_t max)
{
    assert (self);
    assert (source < self->node_count);
    assert (destination < self->node_count);
    size_t message = source * self->node_count + destination;
    size_t length = self->route_length [message];
    for (size_t hop = 0; hop < length && hop < max; hop++)
        hops [hop] = self->routes [message * LG_MAX_HOPS + hop];
    return length;
}

double
lg_plan_time (lg_plan_t *self, double intra_latency, double intra_bandwidth,
              double inter_latency, double inter_bandwidth)
{
    assert (self);
    assert (intra_bandwidth > 0 && inter_bandwidth > 0);
    double *longest = (double *) calloc (self->step_count + 1,
                                         sizeof (double));
    assert (longest);
    for (size_t index = 0; index < self->transfer_count; index++) {
        lg_transfer_t *transfer = &self->transfers [index];
        double time = transfer->inter
                    ? inter_latency + transfer->bytes / inter_bandwidth
                    : intra_latency + transfer->bytes / intra_bandwidth;
        if (time > longest [transfer->step])
            longest [transfer->step] = time;
    }
    double total = 0;
    for (size_t step = 0; step <= self->step_count; step++)
        total += longest [step];
    free (longest);
    return total;
}
