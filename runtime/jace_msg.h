/*  =========================================================================
    jace_msg - the one codec for every message Jace processes exchange

    A message is one msgpack header frame

        [version, type, field_1, ..., field_k, [[kind, count], ...]]

    followed by one raw little-endian payload frame per [kind, count] pair.
    Which fields a type carries, and in which order, is fixed by a schema
    table in jace_msg.c; the decoder checks the version, the type, the field
    count and each field's msgpack type, string lengths, and that every
    payload frame has exactly the size its descriptor announces.  Anything
    else is rejected with a one-line reason: input never aborts a process.

    Only this class touches msgpack.  Vectors are never encoded element by
    element: they travel as raw payload frames.
    =========================================================================
*/
#ifndef JACE_MSG_H_INCLUDED
#define JACE_MSG_H_INCLUDED

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//  Wire version; a message of another version is rejected.
#define JACE_MSG_VERSION        10
//  RESTORED's count (the holder's task) when the task went on from the
//  iterate its ASSIGN carried (a rebalance); -1 is its initial state.
#define JACE_RESTORED_FROM_ASSIGN (-2)
//  Largest header frame we accept (registry listings live here).
#define JACE_MSG_HEADER_MAX     (4 * 1024 * 1024)
//  Default largest frame of any kind, also set as ZMQ_MAXMSGSIZE.
#define JACE_MSG_FRAME_MAX      (1024LL * 1024 * 1024)
//  Most payload frames in one message.
#define JACE_MSG_PAYLOADS_MAX   16
//  Bounds of the string fields.
#define JACE_ID_MAX             64      //  ids, cluster names, keys
#define JACE_ENDPOINT_MAX       256     //  ZeroMQ endpoints
#define JACE_TEXT_MAX           65536   //  reasons, application names
#define JACE_PARAMS_MAX         1024    //  entries in a params map
#define JACE_NODES_MAX          65536   //  records in a node list
#define JACE_APPS_MAX           512     //  a daemon's application names
//  Bulk PINGs a super-node sends together to count the transfers a link
//  carries at full speed (listing param link/A/B/transfers; a count of
//  this many means at least that many)
#define JACE_PROBE_BURST        6

//  Message types.  Numbers are part of the wire format: append only.
typedef enum {
    JACE_MSG_HELLO = 1,         //  daemon -> super-node: register or refresh
    JACE_MSG_WELCOME,           //  super-node -> daemon: registered
    JACE_MSG_HEARTBEAT,         //  any -> any: still alive
    JACE_MSG_BYE,               //  daemon -> super-node: leaving
    JACE_MSG_RESERVE,           //  spawner (or peer) -> super-node: lease N
    JACE_MSG_GRANT,             //  super-node -> spawner: the leased daemons
    JACE_MSG_RELEASE,           //  spawner -> super-node: give daemons back
    JACE_MSG_STATUS,            //  client -> super-node: list the registry
    JACE_MSG_STATUS_REPLY,      //  super-node -> client: the registry
    JACE_MSG_PEER_STATE,        //  super-node -> super-node: my daemons
    JACE_MSG_ASSIGN,            //  spawner -> daemon: run this task
    JACE_MSG_ACCEPT,            //  daemon -> spawner: task taken
    JACE_MSG_REFUSE,            //  daemon -> spawner: task refused
    JACE_MSG_START,             //  spawner -> daemon: all tasks placed, go
    JACE_MSG_PROGRESS,          //  daemon -> spawner: iteration, change
    JACE_MSG_COLLECT,           //  spawner -> daemon: send your block
    JACE_MSG_RESULT,            //  daemon -> spawner: the block
    JACE_MSG_STOP,              //  spawner -> daemon: job over
    JACE_MSG_DATA,              //  daemon -> daemon: neighbour values
    JACE_MSG_ERROR,             //  any -> any: request failed, with reason
    JACE_MSG_REMAP,             //  spawner -> daemon: a task moved
    JACE_MSG_CKPT,              //  daemon -> daemon: a task's checkpoint
    JACE_MSG_FETCH,             //  daemon -> daemon: send me my copies
    JACE_MSG_RESTORED,          //  daemon -> spawner: how a task restarted
    JACE_MSG_CRASH,             //  tool -> daemon/super-node: die now
    JACE_MSG_ADOPT,             //  spawner -> daemon: I run your job now
    JACE_MSG_CANCEL,            //  client -> spawner: end this job now
    JACE_MSG_CHUNK,             //  spawner -> daemon: a piece of task data
    JACE_MSG_CHUNK_ACK,         //  daemon -> spawner: task data received
    JACE_MSG_PING,              //  super-node -> peer or daemon: probe
    JACE_MSG_PONG,              //  answer to a PING, echoing its count;
                                //  iteration: when the PING came, by the
                                //  answerer's clock (usec)
    JACE_MSG_DRAIN,             //  client -> spawner: move tasks off a
                                //  cluster
    JACE_MSG_REBALANCE,         //  client -> spawner: share the rows out
                                //  again as the tasks' rates say
    JACE_MSG_SLICE_ASK,         //  daemon -> daemon: your rows of the
                                //  rebalance's snapshot I need
    JACE_MSG_SLICE,             //  daemon -> daemon: those values
    JACE_MSG_TYPE_COUNT         //  One past the last type
} jace_msg_type_t;

//  Kinds of raw payload frames (little-endian on the wire).
typedef enum {
    JACE_PAYLOAD_F64 = 1,       //  IEEE-754 doubles
    JACE_PAYLOAD_I64 = 2,       //  signed 64-bit integers
    JACE_PAYLOAD_BYTES = 3      //  opaque bytes
} jace_payload_kind_t;

//  States of a daemon as the registry sees it.
typedef enum {
    JACE_NODE_FREE = 0,         //  registered, available
    JACE_NODE_LEASED = 1,       //  reserved by a spawner, no task yet
    JACE_NODE_WORKING = 2       //  running a task
} jace_node_state_t;

//  States of a lease HEARTBEAT (spawner -> super-node).
typedef enum {
    JACE_LEASE_RENEW = 0,       //  The job goes on: keep the lease
    JACE_LEASE_OVER = 1         //  The job is over: its RELEASE follows,
                                //  and daemons still on it may stop
} jace_lease_state_t;

//  States of a task in PROGRESS messages.
typedef enum {
    JACE_TASK_RUNNING = 0,      //  Iterating, not locally converged
    JACE_TASK_CONVERGED = 1,    //  Iterating, locally converged
    JACE_TASK_EXHAUSTED = 2     //  Stopped at the iteration cap
} jace_task_state_t;

//  Why a daemon refused a task (REFUSE.code).
typedef enum {
    JACE_REFUSE_FAILED = 0,     //  The task cannot run (application error):
                                //  another daemon would fail the same way
    JACE_REFUSE_BUSY = 1,       //  This daemon cannot take it (busy with
                                //  another task, out of memory, data lost):
                                //  another daemon may
    JACE_REFUSE_DIVERGED = 2,   //  The iteration diverged on this system
    JACE_REFUSE_LEASED = 3      //  Leased to another job: the sender's
                                //  lease on this daemon lapsed
} jace_refuse_code_t;

//  Bytes of every key and seal Jace makes (job secrets, job keys, lease
//  keys and tokens, message seals), and their length as Z85 text.
#define JACE_KEY_BYTES          32
#define JACE_KEY_TEXT           40
//  Bytes of a message seal (SipHash-2-4, 128-bit tag) and its Z85 length.
#define JACE_SEAL_BYTES         16
#define JACE_SEAL_TEXT          20

//  Largest raw payload of one CHUNK: task data travels in pieces this
//  size at most, well under the control sockets' frame limit.
#define JACE_CHUNK_BYTES        (1024 * 1024)

//  One daemon as registries, grants and neighbour tables describe it.
//  A plain value: copy it freely.
typedef struct {
    char id [JACE_ID_MAX];              //  Daemon's unique id
    char endpoint [JACE_ENDPOINT_MAX];  //  Its control endpoint
    char data [JACE_ENDPOINT_MAX];      //  Its data (neighbour) endpoint
    char cluster [JACE_ID_MAX];         //  Cluster it belongs to
    char pubkey [JACE_ID_MAX];          //  CURVE public key, Z85, or ""
    char supernode [JACE_ENDPOINT_MAX]; //  Super-node it registered with
    double power;                       //  Measured computing power
    int64_t cores;                      //  Cores on the node
    int64_t memory;                     //  Memory, MiB
    int64_t state;                      //  jace_node_state_t
    int64_t task;                       //  Task it runs, or -1
    int64_t epoch;                      //  Epoch of that task
    char job [JACE_ID_MAX];             //  Job of that task, or ""
    char apps [JACE_APPS_MAX];          //  Applications it can run, names
                                        //  separated by one space
} jace_node_t;

//  Bounds of a node record from the wire (jace_node_valid).
#define JACE_POWER_MAX          1e6
#define JACE_CORES_MAX          1000000
#define JACE_MEMORY_MAX         (1LL << 40)     //  MiB

//  True if every byte of text is printable ASCII, not a space, quote or
//  backslash: what daemon ids and cluster names may hold (they go into
//  logs and JSON events as they are).
bool
    jace_name_plain (const char *text);

//  True if a node record from the wire is within bounds: non-empty plain
//  id (jace_name_plain), plain cluster name, non-empty endpoint, power finite in (0, JACE_POWER_MAX], cores in 1..
//  JACE_CORES_MAX, memory in 0..JACE_MEMORY_MAX MiB, a known state, task
//  in -1..JACE_NODES_MAX, epoch >= 0, apps plain names each separated by
//  one space.  Otherwise false, with what is wrong in reason (may be
//  NULL).  Super-nodes check HELLO's and PEER_STATE's records with it,
//  spawners GRANT's.
bool
    jace_node_valid (const jace_node_t *node, char *reason,
                     size_t reason_size);

//  True if the daemon `node` advertises application `app` in its apps.
bool
    jace_node_has_app (const jace_node_t *node, const char *app);

//  Opaque message.
typedef struct _jace_msg_t jace_msg_t;

//  Create an empty message of the given type.
jace_msg_t *
    jace_msg_new (jace_msg_type_t type);

//  Destroy message; nullifies the reference. Safe on NULL.
void
    jace_msg_destroy (jace_msg_t **self_p);

//  Encode into a fresh multipart message (header + payload frames).
//  Does not include the routing id.
zmsg_t *
    jace_msg_encode (const jace_msg_t *self);

//  Decode a multipart message; consumes *zmsg_p.  Returns NULL on
//  malformed input with a one-line reason in `reason` (may be NULL).
jace_msg_t *
    jace_msg_decode (zmsg_t **zmsg_p, char *reason, size_t reason_size);

//  Send on a socket; consumes *self_p, success or not.  On a ROUTER
//  socket the routing id set on the message goes first.  Never blocks:
//  returns 0, or -1 if the message could not be queued (peer's queue
//  full, peer unknown, socket closing).
int
    jace_msg_send (jace_msg_t **self_p, zsock_t *output);

//  Send as jace_msg_send does, but a message the socket refused whole
//  (its queue full) stays the caller's to send again: returns -1 with
//  *self_p untouched.  Consumes *self_p otherwise.
int
    jace_msg_try_send (jace_msg_t **self_p, zsock_t *output);

//  Send the fields of a message that has no payload of its own, with one
//  payload of count elements read from data, on a PUSH or DEALER socket.
//  The message is kept, for the caller to reuse as a template: the path
//  of every neighbour vector, with no allocation for the message and no
//  copy of the values but ZeroMQ's own.  Never blocks; returns 0 or -1 as
//  jace_msg_send.
int
    jace_msg_send_payload (const jace_msg_t *self, jace_payload_kind_t kind,
                           const void *data, size_t count, zsock_t *output);

//  Receive one message from a socket that has input waiting.  Returns NULL
//  on malformed input, with the reason in `reason` and, on a ROUTER
//  socket, the sender's routing id printed into `sender`.
jace_msg_t *
    jace_msg_recv (zsock_t *input, char *reason, size_t reason_size,
                   char *sender, size_t sender_size);

//  Set the socket options every Jace socket carries: largest frame,
//  no lingering on close, and, for ROUTERs, an error on unroutable sends.
void
    jace_msg_prepare_socket (zsock_t *sock, int64_t frame_max);

//  Bind a socket to an endpoint; a port of "*" is a free one the kernel
//  picks (read it back with zsock_last_endpoint).  Returns 0, or -1 with
//  zmq_errno () set.
int
    jace_msg_bind (zsock_t *sock, const char *endpoint);

//  Name of a type ("HELLO"), or "?" for an unknown number.
const char *
    jace_msg_type_name (int type);

//  Type of the message.
jace_msg_type_t
    jace_msg_type (const jace_msg_t *self);

//  Routing id (ROUTER sockets): borrowed frame, or NULL.
zframe_t *
    jace_msg_routing_id (const jace_msg_t *self);

//  Set routing id; the frame is copied.
void
    jace_msg_set_routing_id (jace_msg_t *self, zframe_t *routing_id);

//  String fields: getters return "" when unset; setters copy, truncating
//  at the field's bound.
const char *jace_msg_sender (const jace_msg_t *self);
const char *jace_msg_endpoint (const jace_msg_t *self);
const char *jace_msg_cluster (const jace_msg_t *self);
const char *jace_msg_pubkey (const jace_msg_t *self);
const char *jace_msg_job (const jace_msg_t *self);
const char *jace_msg_app (const jace_msg_t *self);
const char *jace_msg_reason (const jace_msg_t *self);
const char *jace_msg_token (const jace_msg_t *self);
const char *jace_msg_key (const jace_msg_t *self);
void jace_msg_set_sender (jace_msg_t *self, const char *value);
void jace_msg_set_endpoint (jace_msg_t *self, const char *value);
void jace_msg_set_cluster (jace_msg_t *self, const char *value);
void jace_msg_set_pubkey (jace_msg_t *self, const char *value);
void jace_msg_set_job (jace_msg_t *self, const char *value);
void jace_msg_set_app (jace_msg_t *self, const char *value);
void jace_msg_set_reason (jace_msg_t *self, const char *value);
void jace_msg_set_token (jace_msg_t *self, const char *value);
void jace_msg_set_key (jace_msg_t *self, const char *value);

//  Integer fields (0 when unset).
int64_t jace_msg_task (const jace_msg_t *self);
int64_t jace_msg_epoch (const jace_msg_t *self);
int64_t jace_msg_iteration (const jace_msg_t *self);
int64_t jace_msg_count (const jace_msg_t *self);
int64_t jace_msg_state (const jace_msg_t *self);
int64_t jace_msg_interval (const jace_msg_t *self);
int64_t jace_msg_first (const jace_msg_t *self);
int64_t jace_msg_forwarded (const jace_msg_t *self);
int64_t jace_msg_code (const jace_msg_t *self);
int64_t jace_msg_block (const jace_msg_t *self);
int64_t jace_msg_offset (const jace_msg_t *self);
int64_t jace_msg_received (const jace_msg_t *self);
int64_t jace_msg_exchanges (const jace_msg_t *self);
void jace_msg_set_task (jace_msg_t *self, int64_t value);
void jace_msg_set_epoch (jace_msg_t *self, int64_t value);
void jace_msg_set_iteration (jace_msg_t *self, int64_t value);
void jace_msg_set_count (jace_msg_t *self, int64_t value);
void jace_msg_set_state (jace_msg_t *self, int64_t value);
void jace_msg_set_interval (jace_msg_t *self, int64_t value);
void jace_msg_set_first (jace_msg_t *self, int64_t value);
void jace_msg_set_forwarded (jace_msg_t *self, int64_t value);
void jace_msg_set_code (jace_msg_t *self, int64_t value);
void jace_msg_set_block (jace_msg_t *self, int64_t value);
void jace_msg_set_offset (jace_msg_t *self, int64_t value);
void jace_msg_set_received (jace_msg_t *self, int64_t value);
void jace_msg_set_exchanges (jace_msg_t *self, int64_t value);

//  Floating-point fields (0 when unset).
double jace_msg_value (const jace_msg_t *self);
void jace_msg_set_value (jace_msg_t *self, double value);

//  The node list (registries, grants, neighbour tables).
size_t
    jace_msg_node_count (const jace_msg_t *self);
//  Borrowed; valid until the message changes or is destroyed.
const jace_node_t *
    jace_msg_node (const jace_msg_t *self, size_t index);
//  Append a copy of node.
void
    jace_msg_add_node (jace_msg_t *self, const jace_node_t *node);

//  The params map (string keys and values; job parameters).
//  Value of key, or NULL.  Borrowed.
const char *
    jace_msg_param (const jace_msg_t *self, const char *key);
//  Set key to a copy of value.
void
    jace_msg_set_param (jace_msg_t *self, const char *key, const char *value);

//  Super-nodes a super-node names to its clients, in WELCOME and
//  STATUS_REPLY params "supernode/1" to "supernode/N": the peers it hears
//  from.  A daemon or spawner given one super-node learns them, and fails
//  over to them when that one dies.
#define JACE_SUPERNODES_NAMED_MAX 8

//  Name endpoint as the next super-node in msg (up to
//  JACE_SUPERNODES_NAMED_MAX; more are left out).
void
    jace_msg_name_supernode (jace_msg_t *msg, const char *endpoint);

//  The index-th super-node msg names (from 0), or NULL past the last one
//  or if it is no tcp:// or ipc:// endpoint of plain bytes (the process
//  would connect to it: a forged one is not taken).
const char *
    jace_msg_named_supernode (const jace_msg_t *msg, size_t index);
//  All params (an empty map is created if there are none); borrowed.
zhash_t *
    jace_msg_params (jace_msg_t *self);

//  Payload frames.
size_t
    jace_msg_payload_count (const jace_msg_t *self);
jace_payload_kind_t
    jace_msg_payload_kind (const jace_msg_t *self, size_t index);
//  Number of elements (bytes for JACE_PAYLOAD_BYTES).
size_t
    jace_msg_payload_length (const jace_msg_t *self, size_t index);
//  Append a payload of `count` elements copied from data, in host order.
void
    jace_msg_add_payload (jace_msg_t *self, jace_payload_kind_t kind,
                          const void *data, size_t count);
//  Append a payload of `count` elements left for the caller to fill, and
//  return its storage: wire order (little-endian), borrowed until the
//  message is destroyed.  For data that arrives in pieces (CHUNK).
void *
    jace_msg_add_payload_space (jace_msg_t *self, jace_payload_kind_t kind,
                                size_t count);
//  Turn payload `index`, filled in host order through
//  jace_msg_add_payload_space, into wire order in place (nothing to do on
//  a little-endian host): a payload built there needs no copy of its own.
void
    jace_msg_payload_to_wire (jace_msg_t *self, size_t index);
//  Copy payload `index` into dest (host order); dest holds its length.
void
    jace_msg_payload_copy (const jace_msg_t *self, size_t index, void *dest);
//  Raw borrowed bytes of a payload (wire order), for zero-copy readers.
const void *
    jace_msg_payload_data (const jace_msg_t *self, size_t index);

//  Hex characters of a payload digest, without the NUL
#define JACE_DIGEST_TEXT 64
//  BLAKE2b-256 of every payload's wire bytes, in order (each payload's
//  kind and length included, so blocks cannot shift), as lowercase hex:
//  what a task's data must hash to once it has all arrived.
void
    jace_msg_payload_digest (const jace_msg_t *self,
                             char digest [JACE_DIGEST_TEXT + 1]);

//  Who sent a received message, as the transport authenticated it: the
//  Z85 public key ZAP accepted (ZeroMQ's User-Id), or "" on plain links;
//  and the peer's IP address, or "" (inproc, ipc).  Never from the wire.
const char *
    jace_msg_user_id (const jace_msg_t *self);
const char *
    jace_msg_peer_address (const jace_msg_t *self);
//  For tests and in-process relays: set the user id a message came with.
void
    jace_msg_set_user_id (jace_msg_t *self, const char *user_id);

//  Start libsodium once per process (every function here that hashes
//  calls it; call it before using libsodium yourself).
void
    jace_sodium_init (void);

//  Seal a message with a job key (JACE_KEY_BYTES): its token becomes a
//  MAC (SipHash-2-4, 128-bit tag, under a key derived from the job key)
//  of its type and every field but the token and params
//  (payloads are not covered: the link carries them intact, CURVE when
//  keys are on).  Set the fields first; seal again after changing one.
void
    jace_msg_seal (jace_msg_t *self, const unsigned char *key);

//  True if the message's token is its seal under key (constant time).
bool
    jace_msg_sealed (const jace_msg_t *self, const unsigned char *key);

#ifdef __cplusplus
}
#endif

#endif
