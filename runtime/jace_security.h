/*  =========================================================================
    jace_security - CURVE on every link, identities and their roles

    With a keys directory (made by jace-keygen), a process takes its own
    identity from DIR/<cert>.cert_secret (refused if others may read it),
    encrypts every socket with CURVE, and answers ZeroMQ's authentication
    requests (ZAP) itself: a client is let in only if its public key is in
    one of DIR's .cert files.  Each certificate names a role (super-node,
    daemon or spawner, its `role` metadata), and every message a CURVE
    socket receives carries the key it was authenticated with
    (jace_msg_user_id), so handlers check what that identity may do
    (jace_security_authorise).  Refused connections and unauthorised
    messages are logged with the peer's address and key, a few at first
    then one in a thousand, and counted.

    Clients reach a super-node with the key of its certificate (the only
    super-node certificate in DIR, or the one named after the endpoint's
    host), and a daemon with the key it registered.  Without keys, links
    are plain, nothing is known of who sends what, and a process may only
    bind loopback endpoints unless it was started with --insecure.
    =========================================================================
*/
#ifndef JACE_SECURITY_H_INCLUDED
#define JACE_SECURITY_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>
#include "jace_msg.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_security_t jace_security_t;

//  Default certificate of each role.
#define JACE_SUPERNODE_CERT "supernode"
#define JACE_DAEMON_CERT "daemon"
#define JACE_SPAWNER_CERT "spawner"

//  What an identity may be; roles combine as a mask in authorise.
typedef enum {
    JACE_ROLE_NONE = 0,         //  Unknown key, or keys off
    JACE_ROLE_SUPERNODE = 1,
    JACE_ROLE_DAEMON = 2,
    JACE_ROLE_SPAWNER = 4       //  A user's tools: submit, jobs, cancel...
} jace_role_t;
#define JACE_ROLE_ANY (JACE_ROLE_SUPERNODE | JACE_ROLE_DAEMON \
                       | JACE_ROLE_SPAWNER)

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

//  Public key (Z85) of the super-node at endpoint: "" without keys, or
//  NULL with the reason when DIR holds no super-node certificate for it
//  (none, or several and none named after the endpoint's host).
const char *
    jace_security_supernode_key (jace_security_t *self,
                                 const char *endpoint, char *reason,
                                 size_t reason_size);

//  Role of the identity with Z85 public key user_id: JACE_ROLE_NONE if
//  keys are off or no trusted certificate has that key.
jace_role_t
    jace_security_role (jace_security_t *self, const char *user_id);

//  Name of a role ("super-node", "daemon", "spawner", "nobody").
const char *
    jace_role_name (jace_role_t role);

//  True if links are plain (nothing to check), or if msg came from an
//  identity whose role is in the mask roles.  Otherwise logs and counts
//  the refusal as jace_security_unauthorised does, and returns false.
//  `who` names the receiver in the log ("supernode", "daemon d3").
bool
    jace_security_authorise (jace_security_t *self, const jace_msg_t *msg,
                             unsigned roles, const char *who);

//  Log (rate-limited) and count a message refused as unauthorised:
//  "WHO: refused TYPE from ADDRESS (key KEY, ROLE): WHY".
void
    jace_security_unauthorised (jace_security_t *self, const jace_msg_t *msg,
                                const char *who, const char *format, ...)
    CHECK_PRINTF (4);

//  Messages refused as unauthorised so far.
uint64_t
    jace_security_unauthorised_count (jace_security_t *self);

//  Connections refused at authentication (unknown key) so far.
uint64_t
    jace_security_refused_count (jace_security_t *self);

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
