/*  =========================================================================
    daemon_exchange - the routes of a job's total exchanges, from where
    its tasks run

    The runtime executes total exchanges (the set-up trade of request
    lists, jace_task_alltoallv) along routes it is given; this module
    plans them with the planning library, from the cluster each task's
    daemon names in the ASSIGN's table.  Clusters are numbered in the
    order their first task appears, and nodes of the plan are the tasks
    cluster by cluster, each cluster's in rank order, so every daemon
    of the job plans the same routes from the same table.

    Algorithms (job parameter exchange/algorithm):

    * lg (default): LG between clusters (Jeannot & Steffenel, Euro-Par
      2007; lg_plan: any number of clusters, unequal sizes); within a
      cluster, pieces go straight to their destination at once.
    * direct: the direct plan (lg_plan_direct), step s sending from task
      i to task i + s, steps in order: the pairwise exchange an MPI
      library uses for large messages.
    * flat: every piece straight to its destination at once (no route).

    A piece whose plan is one hop in step 0 goes without a route: the
    runtime sends such pieces at once by default.  Jobs of more than
    DAEMON_EXCHANGE_TASKS_MAX tasks are not planned (a plan holds N^2
    routes): their pieces go straight, as with flat.
    =========================================================================
*/
#ifndef DAEMON_EXCHANGE_H_INCLUDED
#define DAEMON_EXCHANGE_H_INCLUDED

#include "jace_exchange.h"

//  Largest job whose exchanges are planned.
#define DAEMON_EXCHANGE_TASKS_MAX 512

//  True if `algorithm` is one this module plans (NULL: the default).
bool
    daemon_exchange_known (const char *algorithm);

//  The routes task `rank` takes part in (sends, relays or receives), for
//  a job of `tasks` tasks whose task r runs in cluster clusters[r],
//  planned with `algorithm` (NULL: lg; must be known).  Writes how many
//  to *count; the caller frees the array (NULL when there are none).
jace_route_t *
    daemon_exchange_routes (const char *const *clusters, int64_t tasks,
                            int64_t rank, const char *algorithm,
                            size_t *count);

#endif
