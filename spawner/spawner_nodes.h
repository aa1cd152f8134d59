/*  =========================================================================
    spawner_nodes - `jace-spawner nodes`: the daemons a grid has

    Asks a super-node for its registry (which includes its peers' daemons)
    and prints one line per daemon, or with --json an array of objects with
    id, endpoint, data, cluster, power, cores, memory, state, task,
    epoch, job and supernode.
    =========================================================================
*/
#ifndef SPAWNER_NODES_H_INCLUDED
#define SPAWNER_NODES_H_INCLUDED

#include <stdbool.h>
#include "jace_msg.h"
#include "jace_security.h"

//  The registry of a super-node and its peers: a STATUS_REPLY, or NULL
//  (with the reason on stderr) if it does not answer within timeout_msec.
jace_msg_t *
    spawner_nodes_query (const char *supernode, jace_security_t *security,
                         int timeout_msec);

//  Send *request_p (consumed) to the ROUTER at endpoint, reached with
//  server_key (CURVE, or "" for plain links), and return the first answer
//  of type `wanted` or ERROR (a refusal, for the caller to tell), or NULL
//  after timeout_msec.
jace_msg_t *
    spawner_nodes_ask (const char *endpoint, const char *server_key,
                       jace_security_t *security, jace_msg_t **request_p,
                       jace_msg_type_t wanted, int timeout_msec);

//  The keys a command-line client uses (cert default "spawner"), or NULL
//  with the reason on stderr.
jace_security_t *
    spawner_nodes_security (const char *keys_dir, const char *cert);

//  The listing as a job of application `app` sees it: a free daemon
//  without `app` is shown leased to no job (job ""), so that no plan
//  chooses it (it still counts in its cluster's links); `app` "" keeps
//  the listing as it is.  Consumes *listing_p; stores how many free
//  daemons lack `app` in *lacking (may be NULL).
jace_msg_t *
    spawner_nodes_for_app (jace_msg_t **listing_p, const char *app,
                           size_t *lacking);

//  Query and print.  Returns 0, or 1 with the reason on stderr.
int
    spawner_nodes_list (const char *supernode, const char *keys_dir,
                        const char *cert, bool json, int timeout_msec);

#endif
