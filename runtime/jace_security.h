/*  =========================================================================
    jace_security - CURVE encryption and authentication of every link

    With a keys directory (made by jace-keygen), a process takes its own
    identity from DIR/<cert>.cert_secret, encrypts every socket with CURVE,
    and, through a zauth actor, accepts only clients whose public
    certificate is in DIR.  Clients reach a super-node with the public key
    of DIR/supernode.cert, and a daemon with the key it advertised in the
    registry.  Without keys, links are plain and a process may only bind
    loopback endpoints unless it was started with --insecure.
    =========================================================================
*/
#ifndef JACE_SECURITY_H_INCLUDED
#define JACE_SECURITY_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_security_t jace_security_t;

//  Certificate a super-node serves with, and clients use to reach it.
#define JACE_SUPERNODE_CERT "supernode"

//  Load the keys of DIR with this process's certificate `cert`, and start
//  authentication.  keys_dir NULL means plain links.  Returns NULL with a
//  reason on failure (missing directory or certificate).  Only one
//  security object with keys may exist per process (ZeroMQ has one
//  authentication handler per context).
jace_security_t *
    jace_security_new (const char *keys_dir, const char *cert,
                       char *reason, size_t reason_size);

//  Destroy; stops authentication. Safe on NULL.
void
    jace_security_destroy (jace_security_t **self_p);

//  True when links are encrypted.
bool
    jace_security_enabled (jace_security_t *self);

//  This process's public key (Z85), or "" without keys.
const char *
    jace_security_public_key (jace_security_t *self);

//  Public key of the grid's super-nodes, or "" without keys.
const char *
    jace_security_supernode_key (jace_security_t *self);

//  Prepare a socket that will bind: CURVE server with our certificate.
void
    jace_security_apply_server (jace_security_t *self, zsock_t *sock);

//  Prepare a socket that will connect to a server with public key
//  server_key (Z85).  Returns -1 if keys are on and server_key is empty
//  or not a valid key.
int
    jace_security_apply_client (jace_security_t *self, zsock_t *sock,
                                const char *server_key);

//  True if endpoint is local to this host (loopback tcp, ipc, inproc).
bool
    jace_endpoint_is_loopback (const char *endpoint);

//  Check that a process may bind endpoint: loopback, or keys on, or
//  `insecure` given.  Returns 0, or -1 with the reason written.
int
    jace_security_check_bind (jace_security_t *self, const char *endpoint,
                              bool insecure, char *reason,
                              size_t reason_size);

#ifdef __cplusplus
}
#endif

#endif
