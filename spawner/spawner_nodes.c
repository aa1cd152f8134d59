/*  =========================================================================
    spawner_nodes - `jace-spawner nodes`: the daemons a grid has
    =========================================================================
*/
//  program_invocation_short_name: the messages name the tool that asked
//  (jace-spawner, jace-map)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spawner_nodes.h"
#include "spawner_events.h"
#include "jace_msg.h"
#include "jace_security.h"

#include <errno.h>

static const char *
s_state_name (int64_t state)
{
    switch (state) {
        case JACE_NODE_FREE:    return "free";
        case JACE_NODE_LEASED:  return "leased";
        case JACE_NODE_WORKING: return "working";
        default:                return "unknown";
    }
}

//  By cluster, then by name with the numbers in names compared as
//  numbers (strverscmp): A-2 before A-10, as a user counts daemons.
static int
s_compare_nodes (const void *a, const void *b)
{
    const jace_node_t *left = (const jace_node_t *) a;
    const jace_node_t *right = (const jace_node_t *) b;
    int by_cluster = strverscmp (left->cluster, right->cluster);
    return by_cluster ? by_cluster : strverscmp (left->id, right->id);
}

//  The record's applications as a JSON array of strings (names are plain:
//  no quote or backslash to escape).
static void
s_apps_json (const jace_node_t *node, char *json, size_t size)
{
    size_t used = (size_t) snprintf (json, size, "[");
    const char *name = node->apps;
    while (*name && used < size) {
        size_t length = strcspn (name, " ");
        used += (size_t) snprintf (json + used, size - used, "%s\"%.*s\"",
                                   used > 1 ? "," : "", (int) length, name);
        name += length + (name [length] == ' ');
    }
    if (used < size)
        snprintf (json + used, size - used, "]");
}

static void
s_print_json (const jace_node_t *nodes, size_t count)
{
    printf ("[");
    for (size_t i = 0; i < count; i++) {
        const jace_node_t *node = &nodes [i];
        char id [256], endpoint [1024], data [1024], cluster [256],
             supernode [1024], job [256], held_for [256],
             apps [2 * JACE_APPS_MAX];
        spawner_events_escape (id, sizeof id, node->id);
        spawner_events_escape (endpoint, sizeof endpoint, node->endpoint);
        spawner_events_escape (data, sizeof data, node->data);
        spawner_events_escape (cluster, sizeof cluster, node->cluster);
        spawner_events_escape (supernode, sizeof supernode, node->supernode);
        //  `job` only for a working daemon, as scripts select a job's
        //  daemons by it; a spare's job is `held_for`
        bool working = node->state == JACE_NODE_WORKING;
        spawner_events_escape (job, sizeof job, working ? node->job : "");
        spawner_events_escape (held_for, sizeof held_for,
                               node->state == JACE_NODE_LEASED
                               ? node->job : "");
        s_apps_json (node, apps, sizeof apps);
        printf ("%s\n  {\"id\":\"%s\",\"endpoint\":\"%s\",\"data\":\"%s\","
                "\"cluster\":\"%s\",\"power\":%.4f,\"cores\":%" PRId64
                ",\"memory\":%" PRId64 ",\"state\":\"%s\",\"task\":%" PRId64
                ",\"epoch\":%" PRId64 ",\"job\":\"%s\",\"held_for\":\"%s\","
                "\"supernode\":\"%s\",\"apps\":%s}",
                i ? "," : "", id, endpoint, data, cluster, node->power,
                node->cores, node->memory, s_state_name (node->state),
                node->task, node->epoch, job, held_for, supernode, apps);
    }
    printf ("%s]\n", count ? "\n" : "");
}

static void
s_print_table (const jace_node_t *nodes, size_t count)
{
    printf ("%-16s %-10s %-8s %-14s %9s %5s %8s  %s\n", "ID", "CLUSTER",
            "STATE", "JOB", "POWER", "CORES", "MEM(MiB)", "ENDPOINT");
    for (size_t i = 0; i < count; i++) {
        const jace_node_t *node = &nodes [i];
        printf ("%-16s %-10s %-8s %-14s %9.2f %5" PRId64 " %8" PRId64
                "  %s\n", node->id, node->cluster,
                s_state_name (node->state), *node->job ? node->job : "-",
                node->power, node->cores, node->memory, node->endpoint);
    }
    printf ("%zu daemons\n", count);
}

jace_msg_t *
spawner_nodes_ask (const char *endpoint, const char *server_key,
                   jace_security_t *security, jace_msg_t **request_p,
                   jace_msg_type_t wanted, int timeout_msec)
{
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, JACE_MSG_HEADER_MAX);
    jace_msg_t *reply = NULL;
    if (jace_security_apply_client (security, dealer, server_key)
    ||  zsock_connect (dealer, "%s", endpoint)) {
        jace_msg_destroy (request_p);
        zsock_destroy (&dealer);
        return NULL;
    }
    jace_msg_send (request_p, dealer);
    zpoller_t *poller = zpoller_new (dealer, NULL);
    int64_t deadline = zclock_mono () + timeout_msec;
    while (!reply && zclock_mono () < deadline && !zsys_interrupted) {
        if (zpoller_wait (poller, 100) != dealer)
            continue;
        reply = jace_msg_recv (dealer, NULL, 0, NULL, 0);
        if (reply && jace_msg_type (reply) != wanted
        &&  jace_msg_type (reply) != JACE_MSG_ERROR)
            jace_msg_destroy (&reply);
    }
    zpoller_destroy (&poller);
    zsock_destroy (&dealer);
    return reply;
}

jace_msg_t *
spawner_nodes_query (const char *supernode, jace_security_t *security,
                     int timeout_msec)
{
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "jace-spawner-nodes");
    char reason [256] = "";
    const char *key = jace_security_supernode_key (security, supernode,
                                                   reason, sizeof reason);
    if (!key) {
        fprintf (stderr, "%s: %s\n", program_invocation_short_name,
                 reason);
        jace_msg_destroy (&status);
        return NULL;
    }
    int64_t asked = zclock_mono ();
    jace_msg_t *reply = spawner_nodes_ask (supernode, key, security,
        &status, JACE_MSG_STATUS_REPLY, timeout_msec);
    //  Refused at once: ZeroMQ could not connect to it at all
    if (!reply && !zsys_interrupted && zclock_mono () - asked < timeout_msec)
        fprintf (stderr, "%s: cannot connect to super-node '%s': "
                 "not an endpoint (tcp://HOST:PORT), or its CURVE key is "
                 "unusable\n", program_invocation_short_name, supernode);
    else
    if (!reply)
        //  A super-node with keys answers nothing to a client without:
        //  the silence looks like a dead one, so say it may be that
        fprintf (stderr, "%s: no answer from super-node %s within %d ms%s\n",
                 program_invocation_short_name, supernode, timeout_msec,
                 jace_security_enabled (security) ? ""
                 : " (a grid started with --keys answers only clients "
                   "given --keys DIR)");
    else
    if (jace_msg_type (reply) == JACE_MSG_ERROR) {
        fprintf (stderr, "%s: super-node %s refused: %s\n",
                 program_invocation_short_name, supernode,
                 jace_msg_reason (reply));
        jace_msg_destroy (&reply);
    }
    return reply;
}

jace_security_t *
spawner_nodes_security (const char *keys_dir, const char *cert)
{
    char reason [512] = "";
    jace_security_t *security = jace_security_new (keys_dir,
        cert ? cert : "spawner", reason, sizeof reason);
    if (!security)
        fprintf (stderr, "%s: %s\n", program_invocation_short_name, reason);
    return security;
}

jace_msg_t *
spawner_nodes_for_app (jace_msg_t **listing_p, const char *app,
                       size_t *lacking)
{
    assert (listing_p && *listing_p && app);
    jace_msg_t *listing = *listing_p;
    *listing_p = NULL;
    if (lacking)
        *lacking = 0;
    if (!*app)
        return listing;
    jace_msg_t *seen = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (seen, jace_msg_sender (listing));
    zhash_t *params = jace_msg_params (listing);
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params))
        jace_msg_set_param (seen, zhash_cursor (params), value);
    for (size_t i = 0; i < jace_msg_node_count (listing); i++) {
        jace_node_t node = *jace_msg_node (listing, i);
        if (node.state == JACE_NODE_FREE && !jace_node_has_app (&node, app)) {
            node.state = JACE_NODE_LEASED;
            *node.job = 0;
            if (lacking)
                (*lacking)++;
        }
        jace_msg_add_node (seen, &node);
    }
    jace_msg_destroy (&listing);
    return seen;
}

//  The links between clusters the super-nodes measured (params
//  link/A/B/latency_us, bandwidth_mbps, transfers, samples, age_ms), one
//  line each, clusters in the order nodes lists them.
static void
s_print_links (jace_msg_t *reply)
{
    zhash_t *params = jace_msg_params (reply);
    zlist_t *keys = params ? zhash_keys (params) : NULL;
    if (!keys)
        return;
    zlist_autofree (keys);
    zlist_sort (keys, (zlist_compare_fn *) strverscmp);
    bool header = false;
    for (char *key = (char *) zlist_first (keys); key;
         key = (char *) zlist_next (keys)) {
        size_t length = strlen (key);
        const char *suffix = "/latency_us";
        if (strncmp (key, "link/", 5) != 0 || length <= 5 + strlen (suffix)
        ||  !streq (key + length - strlen (suffix), suffix))
            continue;
        char pair [160];
        snprintf (pair, sizeof pair, "%.*s", (int) (length - 5
                  - strlen (suffix)), key + 5);
        char other [200];
        snprintf (other, sizeof other, "link/%s/bandwidth_mbps", pair);
        const char *bandwidth = (const char *) zhash_lookup (params, other);
        snprintf (other, sizeof other, "link/%s/samples", pair);
        const char *samples = (const char *) zhash_lookup (params, other);
        snprintf (other, sizeof other, "link/%s/age_ms", pair);
        const char *age = (const char *) zhash_lookup (params, other);
        snprintf (other, sizeof other, "link/%s/transfers", pair);
        const char *transfers = (const char *) zhash_lookup (params, other);
        if (!header)
            printf ("\nlinks measured (one way):\n");
        header = true;
        char *slash = strchr (pair, '/');
        if (slash)
            *slash = 0;
        //  A burst whose every probe went at full speed bounds k below
        bool bound = transfers && atoi (transfers) >= JACE_PROBE_BURST;
        char lanes [64] = "";
        if (transfers)
            snprintf (lanes, sizeof lanes, ", %s%s at full speed at once",
                      bound ? "at least " : "", transfers);
        printf ("  %s -> %s: %s us, %s Mb/s%s, %s probes, last %s ms ago\n",
                pair, slash ? slash + 1 : "?",
                (const char *) zhash_lookup (params, key),
                bandwidth ? bandwidth : "?", lanes, samples ? samples : "?",
                age ? age : "?");
    }
    zlist_destroy (&keys);
}

int
spawner_nodes_list (const char *supernode, const char *keys_dir,
                    const char *cert, bool json, int timeout_msec)
{
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    if (!security)
        return 1;
    jace_msg_t *reply = spawner_nodes_query (supernode, security,
                                            timeout_msec);
    jace_security_destroy (&security);
    if (!reply)
        return 1;
    size_t count = jace_msg_node_count (reply);
    jace_node_t *nodes = (jace_node_t *) zmalloc ((count + 1)
                                                  * sizeof (jace_node_t));
    for (size_t i = 0; i < count; i++)
        nodes [i] = *jace_msg_node (reply, i);
    qsort (nodes, count, sizeof (jace_node_t), s_compare_nodes);
    if (json)
        s_print_json (nodes, count);
    else {
        s_print_table (nodes, count);
        s_print_links (reply);
    }
    free (nodes);
    jace_msg_destroy (&reply);
    return 0;
}
