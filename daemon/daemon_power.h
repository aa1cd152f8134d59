/*  =========================================================================
    daemon_power - what a node can compute, measured at start

    A short OpenBLAS dgemm run on one thread: the daemon's computing power
    in GFLOP/s, scaled by the node's emulated speed factor so that the
    spawner's mapping sees an emulated slow node as slow.
    =========================================================================
*/
#ifndef DAEMON_POWER_H_INCLUDED
#define DAEMON_POWER_H_INCLUDED

#include <stdint.h>

//  Measure for about `budget_msec`; returns GFLOP/s (> 0).
double
    daemon_power_measure (int budget_msec);

//  Cores and memory (MiB) of this node.
int64_t
    daemon_power_cores (void);
int64_t
    daemon_power_memory_mib (void);

#endif
