/*  =========================================================================
    grid_launch - start and stop a whole local virtual grid

    Starting a grid, in order: every cluster's super-nodes on
    tcp://127.0.0.1:*, one after the other, each later one peered with the
    earlier ones (peering is symmetric, so one side naming the other is
    enough); then every daemon, with its cluster, speed and power from the
    platform file and its super-nodes in failover order (its own cluster's
    first); then a wait until the super-nodes list every daemon.  Any
    failure stops whatever was started.  With netns, each cluster runs in a
    network namespace of its own first built by grid_netns, and its
    processes bind the cluster's address instead of 127.0.0.1.
    =========================================================================
*/
#ifndef JACE_GRID_LAUNCH_H_INCLUDED
#define JACE_GRID_LAUNCH_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#include "grid_run.h"

//  Most extra arguments passed through to one kind of process
#define GRID_LAUNCH_EXTRA_MAX 64

//  What `jace-grid start` was asked to do
typedef struct {
    const char *platform_path;      //  Platform file (ZPL)
    const char *run_dir;            //  Run folder
    const char *bin_dir;            //  Binaries' folder, NULL to find them
    const char *keys_dir;           //  CURVE certificates, or NULL
    int timeout_msec;               //  Bound on the whole start
    bool verbose;                   //  Report each step on stderr
    bool netns;                     //  Clusters in network namespaces
    const char *supernode_extra [GRID_LAUNCH_EXTRA_MAX];
                                    //  Extra arguments for super-nodes
    size_t supernode_extra_count;   //  Entries in supernode_extra
    const char *daemon_extra [GRID_LAUNCH_EXTRA_MAX];
                                    //  Extra arguments for daemons
    size_t daemon_extra_count;      //  Entries in daemon_extra
} grid_launch_options_t;

//  Start the grid described by options.  On success prints the first
//  super-node's endpoint on stdout and returns 0; otherwise prints a reason
//  on stderr, stops every process it started, removes the namespaces it
//  made and returns -1.
int
    grid_launch_start (const grid_launch_options_t *options);

//  Stop the recorded processes that are alive: SIGTERM, then SIGKILL for
//  those still there after grace_msec.  Reaps our own children.  Returns
//  the number of processes still alive at the end (0 on success).
size_t
    grid_launch_stop (grid_run_t *run, int grace_msec);

#endif
