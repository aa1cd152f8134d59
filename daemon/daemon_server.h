/*  =========================================================================
    daemon_server - a daemon: registers, heartbeats, runs one task

    An actor.  It binds a ROUTER (control endpoint) where spawners send
    ASSIGN (with the task's data in CHUNKs), START, COLLECT, REMAP, ADOPT,
    STOP and HEARTBEAT, and starts a daemon_worker that owns
    the data endpoint and runs the task.  It registers with the first
    super-node of its list by sending HELLO every heartbeat; when WELCOMEs
    stop for a failover period it moves on to the next super-node.  While
    it works for a spawner it sends it HEARTBEATs and forwards the worker's
    ACCEPT, REFUSE, PROGRESS and RESULT; a spawner silent for the job's
    job/orphan_timeout loses the daemon, which frees itself.

    Who may steer it (docs/SECURITY.md): an ASSIGN is taken only with the
    lease token its super-node issued for that job, spawner and daemon
    (under the lease key the daemon gave it in HELLO), and brings the job
    key; every other message of the job, both ways, is sealed with it.
    =========================================================================
*/
#ifndef DAEMON_SERVER_H_INCLUDED
#define DAEMON_SERVER_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>

#include "jace_task.h"
#include "jace_auth.h"

//  What a daemon is started with; read before zactor_new returns.
typedef struct {
    const char **supernodes;    //  Super-node endpoints, in failover order
    size_t supernode_count;     //  Entries in supernodes
    const char *cluster;        //  Cluster name (default "default")
    const char *bind;           //  Control endpoint (default loopback:*)
    const char *advertise;      //  Host others reach us at, for wildcards
    const char *id;             //  Daemon id (default generated)
    const char *keys_dir;       //  CURVE keys directory, or NULL
    const char *cert;           //  Our certificate name (default daemon)
    bool insecure;              //  Allow binding non-loopback without keys
    double speed;               //  Emulated speed factor, (0, 1]
    double power;               //  Computing power; <= 0: measure it
    const char *platform;       //  Platform file: emulate its links
    const char *links;          //  The grid's shared links file, or NULL
    int heartbeat_msec;         //  HELLO and HEARTBEAT period
    bool verbose;               //  Log every message
    size_t checkpoint_memory;   //  Bytes of neighbours' checkpoints to keep
    uint64_t task_memory;       //  Most bytes of task data to take; 0:
                                //  half the node's physical memory
    const jace_app_t *app;      //  An application besides the table's
                                //  (tests), or NULL; must outlive us
    const jace_key_t *lease_key;    //  Tests only: our lease key, so a
                                //  test can make lease tokens without a
                                //  super-node; NULL (always in jace-daemon)
                                //  makes a random one
} daemon_config_t;

//  The actor; args is a daemon_config_t.
void
    daemon_server_actor (zsock_t *pipe, void *args);

//  Control endpoint (caller frees), or NULL if the daemon failed to start.
char *
    daemon_server_endpoint (zactor_t *server);

#endif
