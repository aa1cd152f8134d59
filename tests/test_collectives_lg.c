/*  =========================================================================
    test_collectives_lg - plans of the LG total exchange and of the direct
    all-to-all

    The paper's example (n1 = 3, n2 = 7, Figure 3) exactly, then a replay
    of every plan up to 16 x 16 nodes and with three clusters: each message
    must reach its destination exactly once, from the node that holds it,
    with at most one backbone exchange per node and step.
    =========================================================================
*/
#include "collectives.h"
#include "tap.h"

//  Replays a plan; returns true if every non-empty message is delivered
//  exactly once and every hop leaves the node that holds the message.
//  Counts violations of the 1-port rule on backbone transfers.
static bool
s_replay (lg_plan_t *plan, const double *sizes, size_t *port_violations)
{
    size_t nodes = lg_plan_node_count (plan);
    size_t *holder = malloc (nodes * nodes * sizeof (size_t));
    size_t *arrivals = calloc (nodes * nodes, sizeof (size_t));
    size_t *moved_to = malloc (nodes * nodes * sizeof (size_t));
    size_t *sends = calloc (nodes, sizeof (size_t));
    size_t *receives = calloc (nodes, sizeof (size_t));
    for (size_t message = 0; message < nodes * nodes; message++)
        holder [message] = message / nodes;
    bool valid = true;
    *port_violations = 0;
    size_t transfers = lg_plan_transfer_count (plan);
    size_t index = 0;
    for (size_t step = 0; step < lg_plan_step_count (plan); step++) {
        memset (sends, 0, nodes * sizeof (size_t));
        memset (receives, 0, nodes * sizeof (size_t));
        size_t first = index;
        for (; index < transfers && lg_plan_transfer (plan, index)->step
                                    == step; index++) {
            const lg_transfer_t *transfer = lg_plan_transfer (plan, index);
            if (transfer->inter && (sends [transfer->from]++
                                    || receives [transfer->to]++))
                (*port_violations)++;
            for (size_t item = 0; item < transfer->count; item++) {
                size_t message = lg_plan_transfer_message (plan, index, item);
                if (holder [message] != transfer->from)
                    valid = false;
                moved_to [message] = transfer->to;
            }
        }
        //  Moves take effect at the end of the step
        for (size_t done = first; done < index; done++) {
            const lg_transfer_t *transfer = lg_plan_transfer (plan, done);
            for (size_t item = 0; item < transfer->count; item++) {
                size_t message = lg_plan_transfer_message (plan, done, item);
                holder [message] = moved_to [message];
                if (moved_to [message] == message % nodes)
                    arrivals [message]++;
            }
        }
    }
    if (index != transfers)
        valid = false;          //  A transfer outside the announced steps
    for (size_t message = 0; message < nodes * nodes; message++) {
        bool sent = !sizes || sizes [message] > 0;
        bool local = message / nodes == message % nodes;
        if (sent && (holder [message] != message % nodes
                     || arrivals [message] != (local ? 0u : 1u)))
            valid = false;
        if (!sent && arrivals [message])
            valid = false;
    }
    free (holder);
    free (arrivals);
    free (moved_to);
    free (sends);
    free (receives);
    return valid;
}

//  Figure 3: n1 = 3, n2 = 7
static void
s_test_paper_example (void)
{
    size_t sizes [] = { 3, 7 };
    lg_plan_t *plan = lg_plan (sizes, 2, NULL);
    lg_hop_t hops [LG_MAX_HOPS];
    size_t length = lg_plan_route (plan, 7, 2, hops, LG_MAX_HOPS);
    is_int (length, 2, "M(7,2) takes two hops");
    ok (hops [0].step == 0 && hops [0].from == 7 && hops [0].to == 8,
        "M(7,2) is staged on node 8 in the local phase");
    ok (hops [1].step == 2 && hops [1].from == 8 && hops [1].to == 2,
        "M(7,2) is delivered to node 2 at step 2");
    //  Backbone pairs of each step, as listed with Figure 3
    size_t want [3][3][2] = {
        { { 0, 3 }, { 1, 4 }, { 2, 5 } },
        { { 0, 6 }, { 1, 7 }, { 2, 8 } },
        { { 0, 9 } }
    };
    size_t want_count [3] = { 3, 3, 1 };
    for (size_t step = 1; step <= 3; step++) {
        bool same = true;
        size_t pairs = 0;
        for (size_t index = 0; index < lg_plan_transfer_count (plan); index++) {
            const lg_transfer_t *transfer = lg_plan_transfer (plan, index);
            if (transfer->step != step || !transfer->inter)
                continue;
            size_t low = transfer->from < transfer->to ? transfer->from
                                                       : transfer->to;
            size_t high = transfer->from ^ transfer->to ^ low;
            bool listed = false;
            for (size_t pair = 0; pair < want_count [step - 1]; pair++)
                if (want [step - 1][pair][0] == low
                &&  want [step - 1][pair][1] == high)
                    listed = true;
            same = same && listed;
            pairs++;
        }
        char name [80];
        snprintf (name, sizeof name, "step %zu exchanges the pairs of "
                  "Figure 3", step);
        ok (same && pairs == 2 * want_count [step - 1], name);
    }
    //  Node 8 sends M(6,2), M(7,2), M(8,2) to node 2 as one buffer
    bool packed = false;
    for (size_t index = 0; index < lg_plan_transfer_count (plan); index++) {
        const lg_transfer_t *transfer = lg_plan_transfer (plan, index);
        if (transfer->step == 2 && transfer->from == 8 && transfer->to == 2)
            packed = transfer->count == 3
                && lg_plan_transfer_message (plan, index, 0) == 6 * 10 + 2
                && lg_plan_transfer_message (plan, index, 1) == 7 * 10 + 2
                && lg_plan_transfer_message (plan, index, 2) == 8 * 10 + 2;
    }
    ok (packed, "node 8 sends M(6,2), M(7,2) and M(8,2) to node 2 together");
    is_int (lg_plan_backbone_messages (plan), 14,
            "2 x max(n1, n2) = 14 backbone messages");
    length = lg_plan_route (plan, 9, 2, hops, LG_MAX_HOPS);
    ok (length == 2 && hops [0].to == 0 && hops [0].step == 3
        && hops [1].step == 4 && hops [1].to == 2,
        "M(9,2) crosses with the last pair (9, 0) and is relayed to 2");
    size_t violations;
    ok (s_replay (plan, NULL, &violations) && violations == 0,
        "the example plan delivers every message once");
    lg_plan_destroy (&plan);
    ok (plan == NULL, "destroy nullifies the plan");

    lg_plan_t *direct = lg_plan_direct (sizes, 2, NULL);
    is_int (lg_plan_backbone_messages (direct), 2 * 3 * 7,
            "the direct plan sends 2 x n1 x n2 backbone messages");
    ok (s_replay (direct, NULL, &violations),
        "the direct plan delivers every message once");
    ok (lg_plan_time (direct, 0, 1, 1, 1) > 0, "a plan has a time");
    lg_plan_destroy (&direct);
}

static void
s_test_all_sizes (void)
{
    bool lg_valid = true, direct_valid = true, ports = true, count = true;
    bool steps = true;
    for (size_t first = 1; first <= 16; first++)
        for (size_t second = 1; second <= 16; second++) {
            size_t sizes [] = { first, second };
            size_t violations;
            lg_plan_t *plan = lg_plan (sizes, 2, NULL);
            lg_valid = lg_valid && s_replay (plan, NULL, &violations);
            ports = ports && violations == 0;
            size_t big = first > second ? first : second;
            size_t small = first + second - big;
            count = count && lg_plan_backbone_messages (plan) == 2 * big;
            //  Local phase, ceil(n2/n1) steps, maybe a relay step
            size_t inter = (big + small - 1) / small;
            steps = steps && (lg_plan_step_count (plan) == inter + 1
                              || lg_plan_step_count (plan) == inter + 2);
            lg_plan_destroy (&plan);
            plan = lg_plan_direct (sizes, 2, NULL);
            direct_valid = direct_valid && s_replay (plan, NULL, &violations);
            lg_plan_destroy (&plan);
        }
    ok (lg_valid, "LG delivers every message exactly once, n1, n2 <= 16");
    ok (ports, "LG's backbone steps are 1-port, n1, n2 <= 16");
    ok (count, "LG sends 2 max(n1, n2) backbone messages, n1, n2 <= 16");
    ok (steps, "LG takes ceil(n2/n1) backbone steps, n1, n2 <= 16");
    ok (direct_valid, "direct delivers every message exactly once, "
        "n1, n2 <= 16");
}

static void
s_test_three_clusters (void)
{
    size_t shapes [][3] = {
        { 3, 7, 5 }, { 4, 4, 4 }, { 1, 16, 2 }, { 16, 5, 9 }
    };
    bool valid = true, ports = true, direct_valid = true;
    for (size_t shape = 0; shape < 4; shape++) {
        size_t violations;
        lg_plan_t *plan = lg_plan (shapes [shape], 3, NULL);
        valid = valid && s_replay (plan, NULL, &violations);
        ports = ports && violations == 0;
        lg_plan_destroy (&plan);
        plan = lg_plan_direct (shapes [shape], 3, NULL);
        direct_valid = direct_valid && s_replay (plan, NULL, &violations);
        lg_plan_destroy (&plan);
    }
    ok (valid, "LG delivers every message once on three clusters");
    ok (ports, "LG's backbone steps are 1-port on three clusters");
    ok (direct_valid, "direct delivers every message once on three "
        "clusters");
    size_t four [] = { 2, 3, 5, 4 };
    lg_plan_t *plan = lg_plan (four, 4, NULL);
    size_t violations;
    ok (s_replay (plan, NULL, &violations) && violations == 0,
        "LG delivers every message once on four clusters");
    lg_plan_destroy (&plan);
}

//  alltoallv: random sizes, some messages empty
static void
s_test_unequal_sizes (void)
{
    size_t clusters [] = { 3, 7 };
    size_t nodes = 10;
    double sizes [100];
    srand (7);
    size_t empty = 0;
    for (size_t cell = 0; cell < nodes * nodes; cell++) {
        sizes [cell] = rand () % 4 == 0 ? 0 : 1 + rand () % 1000;
        empty += sizes [cell] == 0;
    }
    lg_plan_t *plan = lg_plan (clusters, 2, sizes);
    size_t violations;
    ok (s_replay (plan, sizes, &violations) && violations == 0,
        "alltoallv: LG delivers every non-empty message once");
    double bytes = 0, want = 0;
    for (size_t index = 0; index < lg_plan_transfer_count (plan); index++) {
        const lg_transfer_t *transfer = lg_plan_transfer (plan, index);
        if (transfer->inter)
            bytes += transfer->bytes;
    }
    for (size_t source = 0; source < nodes; source++)
        for (size_t destination = 0; destination < nodes; destination++)
            if ((source < 3) != (destination < 3))
                want += sizes [source * nodes + destination];
    is_double (bytes, want, 0, "alltoallv: the backbone carries exactly "
               "the inter-cluster bytes");
    lg_hop_t hops [LG_MAX_HOPS];
    size_t zero = 0;
    while (sizes [zero] > 0 || zero / nodes == zero % nodes)
        zero++;
    is_int (lg_plan_route (plan, zero / nodes, zero % nodes, hops,
                           LG_MAX_HOPS), 0, "alltoallv: empty messages are "
            "not sent");
    lg_plan_destroy (&plan);
    diag ("%zu empty messages of %zu", empty, nodes * nodes);
}

int
main (void)
{
    tap_plan (26);
    s_test_paper_example ();
    s_test_all_sizes ();
    s_test_three_clusters ();
    s_test_unequal_sizes ();
    return tap_done ();
}
