/*  =========================================================================
    spawner_scatter - how a job's data is handed out at its start

    When the spawner holds the data (a matrix read from a file, which the
    application attaches to each ASSIGN), handing it out is a scatter
    from one root, and Genaud, Giersch & Vivien's load-balanced scatter
    (paper 004, collectives/scatter.h) chooses both how many rows each
    daemon gets and the order the root sends them in:

        T_i = sum_{j before i} Tcomm(j, n_j) + Tcomm(i, n_i) + Tcomp(i, n_i)

    with Tcomm the time for the root's single port to send n rows to
    daemon i (the link from the root's cluster to i's, as the super-nodes
    measured it; its round trip, since the port waits for the daemon's
    last acknowledgement) and Tcomp the time i takes to compute `iterations`
    iterations of them (the application's cost per row over the daemon's
    measured power).  The distribution minimises max_i T_i (the linear
    program of section 4, rounded); the order is by decreasing bandwidth
    from the root (section 4.3).  The spawner then streams one daemon's
    data at a time, in that order: the single port the model assumes.

    Relays (`scatter/relay = auto`, the default): the data of a cluster
    other than the root's, with two tasks or more there, crosses the
    backbone once, to the first of them in the send order (its relay),
    which passes each task's chunks on inside the cluster
    (daemon_relay).  The root then pays that link's round trip once per
    cluster, not once per daemon, and the model counts it so
    (comm_fixed 0 for the cluster's other tasks); a cluster's tasks are
    kept together in the send order.

    Each task gets at least one row: the scatter distributes the rest.
    =========================================================================
*/
#ifndef SPAWNER_SCATTER_H_INCLUDED
#define SPAWNER_SCATTER_H_INCLUDED

#include "jace_msg.h"
#include "jace_task.h"
#include "platform.h"

//  How many rows each daemon gets
typedef enum {
    SPAWNER_SCATTER_BALANCED,       //  The load-balanced scatter (default)
    SPAWNER_SCATTER_POWER,          //  In proportion to power
    SPAWNER_SCATTER_UNIFORM         //  The same to each (MPI_Scatter)
} spawner_scatter_distribution_t;

//  The order the root sends the daemons their data in
typedef enum {
    SPAWNER_SCATTER_DECREASING,     //  Decreasing bandwidth (default)
    SPAWNER_SCATTER_INCREASING,     //  Increasing bandwidth
    SPAWNER_SCATTER_RANK            //  Task order
} spawner_scatter_order_t;

//  The job's scatter section
typedef struct {
    spawner_scatter_distribution_t distribution;    //  scatter/distribution
    spawner_scatter_order_t order;                  //  scatter/order
    char root [JACE_ID_MAX];    //  scatter/root: the data's cluster, or ""
    double iterations;          //  scatter/iterations the model counts,
                                //  or -1: auto (spawner_scatter.c)
    bool relay;                 //  scatter/relay: auto (true) or off
} spawner_scatter_config_t;

//  The keys of the scatter section, NULL-terminated (spawner_job checks
//  a job file against them; the daemon reads scatter/root too).
extern const char *const spawner_scatter_keys [];

//  Read the scatter section of a job's flattened parameters.  Returns 0,
//  or -1 with the reason (naming the key and what it accepts).
int
    spawner_scatter_config (zhash_t *params,
                            spawner_scatter_config_t *config,
                            char *reason, size_t reason_size);

typedef struct _spawner_scatter_t spawner_scatter_t;

//  What a daemon's share costs
typedef struct {
    int64_t rows;               //  Rows of the job (>= count)
    double bytes_per_row;       //  Task data per row, on average
    double flops_per_row;       //  Work per row and iteration
} spawner_scatter_load_t;

//  Plan the scatter of `load` over the count daemons `nodes` (task
//  rank i runs on nodes [i]), with the links of `platform` (the live
//  model's; may be NULL: every daemon at the same distance).  Writes the
//  blocks into first_row (count + 1 starts).  Returns NULL with the
//  reason if the linear program fails.
spawner_scatter_t *
    spawner_scatter_new (const spawner_scatter_config_t *config,
                         const spawner_scatter_load_t *load,
                         const jace_node_t *nodes, size_t count,
                         platform_t *platform, int64_t *first_row,
                         char *reason, size_t reason_size);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    spawner_scatter_destroy (spawner_scatter_t **self_p);

//  The rank whose data goes position-th (0 first)
size_t
    spawner_scatter_rank_at (spawner_scatter_t *self, size_t position);

//  The rank whose daemon relays task `rank`'s data (itself for a relay),
//  or -1 when its data goes straight to it.
int64_t
    spawner_scatter_relay_of (spawner_scatter_t *self, size_t rank);

//  True if scatter/root names a cluster of the platform the plan had: a
//  root named and not known there gets every link at one default cost
//  and no relays.
bool
    spawner_scatter_root_known (spawner_scatter_t *self);

//  Predicted makespan (max T_i), and when the last daemon's data is in,
//  in seconds from the first send
double
    spawner_scatter_predicted (spawner_scatter_t *self);
double
    spawner_scatter_predicted_transfer (spawner_scatter_t *self);

//  The plan as JSON members for the event log (",\"distribution\":..."):
//  a new string the caller frees.
char *
    spawner_scatter_plan_json (spawner_scatter_t *self);

//  Measurement.  The first send left at `now` (msec).
void
    spawner_scatter_started (spawner_scatter_t *self, int64_t now);

//  Every byte of task `rank`'s data is in (acknowledged) at `now`.
//  Returns true when it was the last daemon's.
bool
    spawner_scatter_data_in (spawner_scatter_t *self, size_t rank,
                             int64_t now);

//  Task `rank` reports `iteration` at `now`.  Returns true when every
//  task has now done the iterations the model counts (once).
bool
    spawner_scatter_progress (spawner_scatter_t *self, size_t rank,
                              int64_t iteration, int64_t now);

//  Measured seconds from the first send until every task's data was in,
//  and until every task had done the counted iterations; -1 until then.
double
    spawner_scatter_measured_transfer (spawner_scatter_t *self);
double
    spawner_scatter_measured (spawner_scatter_t *self);

//  Split rows into count blocks in proportion to weight (each block one
//  row first, the rest by largest remainder); writes count + 1 starts.
void
    spawner_scatter_proportional (const double *weight, size_t count,
                                  int64_t rows, int64_t *first);

//  Names, for messages
const char *
    spawner_scatter_distribution_name (spawner_scatter_distribution_t value);
const char *
    spawner_scatter_order_name (spawner_scatter_order_t value);

#endif
