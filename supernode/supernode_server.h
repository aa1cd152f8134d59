/*  =========================================================================
    supernode_server - the super-node: registry of daemons, leases, peering

    An actor.  It binds one ROUTER where daemons register (HELLO, repeated
    as their heartbeat), spawners lease daemons (RESERVE, HEARTBEAT to keep
    the lease, RELEASE) and anyone asks for the registry (STATUS).  It keeps
    a DEALER to every peer super-node, tells each what it holds
    (PEER_STATE, every heartbeat) and completes a reservation it cannot fill
    alone from its peers.  A status reply lists its own daemons and its
    peers', each daemon once, and every lease (job) with its owner and
    age.  Peering is symmetric: a PEER_STATE from an unknown super-node
    makes it a peer, up to max_peers.

    Every message is checked against who sent it (docs/SECURITY.md): only
    a daemon registers itself, with its own key and its lease key; only a
    spawner reserves, and only the owner of a lease extends or ends it;
    only a super-node peers or passes a lease message on.  Grants carry,
    per daemon, the lease token the daemon will ask of the spawner.

    It measures the links between clusters (supernode_probe): a PING to
    every peer and registered daemon every probe period, a PONG to every
    PING of a peer or registered daemon, and publishes the figures as
    link/<A>/<B>/... params of STATUS_REPLY and PEER_STATE.

    Usage:
        supernode_config_t config = { .bind = "tcp://127.0.0.1:*", ... };
        zactor_t *server = zactor_new (supernode_server_actor, &config);
        char *endpoint = supernode_server_endpoint (server);  //  or NULL
        ...
        zactor_destroy (&server);
    =========================================================================
*/
#ifndef SUPERNODE_SERVER_H_INCLUDED
#define SUPERNODE_SERVER_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>

//  Most peers by default: a full mesh of this many super-nodes costs each
//  one PEER_STATE per peer and heartbeat.
#define SUPERNODE_MAX_PEERS 32
//  Longest lease by default (msec); longer or non-positive ones are capped.
#define SUPERNODE_MAX_LEASE_MSEC 60000

//  What a super-node is started with; read before zactor_new returns.
typedef struct {
    const char *bind;           //  Endpoint to bind (ROUTER)
    const char **peers;         //  Peer super-node endpoints
    size_t peer_count;          //  Entries in peers
    const char *keys_dir;       //  CURVE keys directory, or NULL
    const char *cert;           //  Our certificate name in keys_dir
    bool insecure;              //  Allow binding non-loopback without keys
    int heartbeat_msec;         //  Daemons' HELLO period we ask for
    int timeout_msec;           //  Silence after which a daemon is dropped
    bool verbose;               //  Log every message
    bool allow_crash;           //  Obey CRASH (crash tests on remote grids)
    size_t max_peers;           //  Most peers, or 0 for SUPERNODE_MAX_PEERS
    int64_t max_lease_msec;     //  Longest lease, 0: SUPERNODE_MAX_LEASE_MSEC
    size_t max_daemons;         //  Most daemons registered here, and taken
                                //  from one PEER_STATE; 0 for
                                //  SUPERNODE_MAX_DAEMONS
    const char *cluster;        //  Our cluster, or NULL: the one most of
                                //  our daemons name
    int probe_msec;             //  PING peers and daemons this often; 0:
                                //  never (jace-supernode's default: 1000)
    const char *platform;       //  Platform file whose links our probes
                                //  are held for, or NULL
    const char *links;          //  The grid's shared links file (with a
                                //  platform), or NULL
} supernode_config_t;

//  The actor; args is a supernode_config_t.
void
    supernode_server_actor (zsock_t *pipe, void *args);

//  Endpoint the server is bound to (caller frees), or NULL if it failed
//  to start, with the reason logged.
char *
    supernode_server_endpoint (zactor_t *server);

#endif
