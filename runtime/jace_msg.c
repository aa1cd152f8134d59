/*  =========================================================================
    jace_msg - the one codec for every message Jace processes exchange

    The schema table below is the protocol: for each type, the fields it
    carries in wire order.  docs/PROTOCOL.md describes the same in prose.
    =========================================================================
*/
#include "jace_msg.h"

#include <msgpack.h>
#include <math.h>
#include <sodium.h>
#include <stdatomic.h>

//  Every field any message can carry.  Strings first, then integers, then
//  the rest; the order only matters for the storage arrays below.
typedef enum {
    F_SENDER, F_ENDPOINT, F_CLUSTER, F_PUBKEY, F_JOB, F_APP, F_TOKEN, F_KEY,
    F_REASON,
    F_TASK, F_EPOCH, F_ITERATION, F_COUNT, F_STATE, F_INTERVAL, F_FIRST,
    F_FORWARDED, F_CODE, F_BLOCK, F_OFFSET, F_RECEIVED, F_EXCHANGES,
    F_VALUE, F_NODES, F_PARAMS,
    F_END                       //  Ends a schema
} field_t;

#define STRING_FIELDS   (F_REASON + 1)
#define LAST_INT_FIELD  F_EXCHANGES
#define INT_FIELDS      (LAST_INT_FIELD - F_TASK + 1)

//  Bound of each string field, in bytes including the terminating NUL.
static const size_t s_string_bound [STRING_FIELDS] = {
    JACE_ID_MAX, JACE_ENDPOINT_MAX, JACE_ID_MAX, JACE_ID_MAX, JACE_ID_MAX,
    JACE_ID_MAX, JACE_ID_MAX, JACE_ID_MAX, JACE_TEXT_MAX
};

//  Wire layout of each type: its name and its fields in order.
typedef struct {
    const char *name;           //  Type name for logs
    field_t fields [14];        //  Fields in wire order, F_END terminated
} schema_t;

static const schema_t s_schemas [JACE_MSG_TYPE_COUNT] = {
    [JACE_MSG_HELLO] = { "HELLO", { F_SENDER, F_TOKEN, F_NODES, F_END } },
    [JACE_MSG_WELCOME] = { "WELCOME",
        { F_SENDER, F_INTERVAL, F_PARAMS, F_END } },
    [JACE_MSG_HEARTBEAT] = { "HEARTBEAT",
        { F_SENDER, F_JOB, F_STATE, F_FORWARDED, F_ENDPOINT, F_TOKEN,
          F_NODES, F_END } },
    [JACE_MSG_BYE] = { "BYE", { F_SENDER, F_TOKEN, F_END } },
    [JACE_MSG_RESERVE] = { "RESERVE",
        { F_SENDER, F_JOB, F_ENDPOINT, F_COUNT, F_INTERVAL, F_FORWARDED,
          F_CLUSTER, F_PUBKEY, F_NODES, F_APP, F_END } },
    [JACE_MSG_GRANT] = { "GRANT",
        { F_SENDER, F_JOB, F_COUNT, F_NODES, F_PARAMS, F_END } },
    [JACE_MSG_RELEASE] = { "RELEASE",
        { F_SENDER, F_JOB, F_FORWARDED, F_NODES, F_END } },
    [JACE_MSG_STATUS] = { "STATUS", { F_SENDER, F_END } },
    [JACE_MSG_STATUS_REPLY] = { "STATUS_REPLY",
        { F_SENDER, F_NODES, F_PARAMS, F_END } },
    [JACE_MSG_PEER_STATE] = { "PEER_STATE",
        { F_SENDER, F_ENDPOINT, F_NODES, F_PARAMS, F_END } },
    [JACE_MSG_ASSIGN] = { "ASSIGN",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_COUNT, F_INTERVAL, F_APP,
          F_TOKEN, F_KEY, F_PARAMS, F_NODES, F_END } },
    [JACE_MSG_ACCEPT] = { "ACCEPT",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_TOKEN, F_END } },
    [JACE_MSG_REFUSE] = { "REFUSE",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_CODE, F_REASON, F_TOKEN,
          F_END } },
    [JACE_MSG_START] = { "START", { F_JOB, F_EPOCH, F_TOKEN, F_END } },
    [JACE_MSG_PROGRESS] = { "PROGRESS",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_VALUE, F_STATE,
          F_COUNT, F_INTERVAL, F_EXCHANGES, F_TOKEN, F_END } },
    [JACE_MSG_COLLECT] = { "COLLECT", { F_JOB, F_COUNT, F_TOKEN, F_END } },
    [JACE_MSG_RESULT] = { "RESULT",
        { F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_FIRST, F_COUNT, F_TOKEN,
          F_END } },
    [JACE_MSG_STOP] = { "STOP", { F_JOB, F_REASON, F_TOKEN, F_END } },
    [JACE_MSG_DATA] = { "DATA",
        { F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_FIRST, F_TOKEN, F_END } },
    [JACE_MSG_ERROR] = { "ERROR", { F_SENDER, F_REASON, F_END } },
    [JACE_MSG_REMAP] = { "REMAP",
        { F_JOB, F_TASK, F_EPOCH, F_NODES, F_TOKEN, F_END } },
    [JACE_MSG_CKPT] = { "CKPT",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_TOKEN, F_END } },
    [JACE_MSG_FETCH] = { "FETCH",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_NODES, F_TOKEN, F_END } },
    [JACE_MSG_RESTORED] = { "RESTORED",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_COUNT, F_VALUE,
          F_TOKEN, F_END } },
    [JACE_MSG_CRASH] = { "CRASH", { F_SENDER, F_JOB, F_TOKEN, F_END } },
    [JACE_MSG_ADOPT] = { "ADOPT", { F_SENDER, F_JOB, F_TOKEN, F_END } },
    [JACE_MSG_CANCEL] = { "CANCEL",
        { F_SENDER, F_JOB, F_REASON, F_TOKEN, F_END } },
    [JACE_MSG_CHUNK] = { "CHUNK",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_BLOCK, F_OFFSET, F_TOKEN,
          F_END } },
    [JACE_MSG_CHUNK_ACK] = { "CHUNK_ACK",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_RECEIVED, F_TOKEN, F_END } },
    [JACE_MSG_PING] = { "PING",
        { F_SENDER, F_CLUSTER, F_COUNT, F_REASON, F_END } },
    [JACE_MSG_PONG] = { "PONG",
        { F_SENDER, F_CLUSTER, F_COUNT, F_REASON, F_ITERATION, F_END } },
    [JACE_MSG_DRAIN] = { "DRAIN",
        { F_SENDER, F_JOB, F_CLUSTER, F_TOKEN, F_END } },
    [JACE_MSG_REBALANCE] = { "REBALANCE",
        { F_SENDER, F_JOB, F_TOKEN, F_END } },
    [JACE_MSG_SLICE_ASK] = { "SLICE_ASK",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_TOKEN, F_END } },
    [JACE_MSG_SLICE] = { "SLICE",
        { F_SENDER, F_JOB, F_TASK, F_EPOCH, F_ITERATION, F_TOKEN, F_END } },
};

//  Fields of a node record on the wire, in order.
#define NODE_FIELDS 14

//  One payload frame: descriptor and the frame itself (wire order).
typedef struct {
    jace_payload_kind_t kind;   //  Element kind
    size_t count;               //  Elements
    zframe_t *frame;            //  Raw bytes, little-endian
} payload_t;

//  The parts of one message after the routing id, as received or taken
//  from a zmsg: the header, then the payload frames.  Parts past
//  PARTS_MAX are counted, not kept: no valid message has them.
#define PARTS_MAX (JACE_MSG_PAYLOADS_MAX + 1)

//  First chunk of the zone a header is decoded into: enough for the
//  objects of a DATA header and small enough for malloc's fast path
//  (msgpack's default, 8 KiB, is not); node lists grow the zone.
#define HEADER_ZONE_CHUNK 512

typedef struct {
    zframe_t *frame [PARTS_MAX];    //  Kept parts, NULL once moved out
    size_t count;                   //  Parts kept
    size_t dropped;                 //  Parts past PARTS_MAX
} parts_t;

struct _jace_msg_t {
    jace_msg_type_t type;               //  Message type
    zframe_t *routing_id;               //  ROUTER peer, or NULL
    char *strings [STRING_FIELDS];      //  String fields, NULL if unset
    int64_t ints [INT_FIELDS];          //  Integer fields
    double value;                       //  The one floating-point field
    jace_node_t *nodes;                 //  Node list
    size_t node_count;                  //  Records in nodes
    size_t node_capacity;               //  Allocated records
    zhash_t *params;                    //  Params map, values owned
    payload_t payloads [JACE_MSG_PAYLOADS_MAX];  //  Payload frames
    size_t payload_count;               //  Payloads in use
    zframe_t *header;                   //  Header as received, for its
                                        //  metadata, or NULL
    bool metadata_read;                 //  user_id and peer_address set
    char user_id [JACE_ID_MAX];         //  Key CURVE authenticated, or ""
    char peer_address [JACE_ID_MAX];    //  Sender's IP address, or ""
};


//  --------------------------------------------------------------------------
//  Size in bytes of one element of a payload kind.

static size_t
s_element_size (jace_payload_kind_t kind)
{
    return kind == JACE_PAYLOAD_BYTES ? 1 : 8;
}

//  --------------------------------------------------------------------------
//  Copy count elements between host and wire order (the same on
//  little-endian hosts; byte-swapped on big-endian ones).  dest may be
//  src itself, to convert in place.

static void
s_copy_ordered (void *dest, const void *src, size_t count, size_t size)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    if (size == 8) {
        const uint64_t *in = src;
        uint64_t *out = dest;
        for (size_t i = 0; i < count; i++) {
            uint64_t word;
            memcpy (&word, in + i, 8);
            word = __builtin_bswap64 (word);
            memcpy (out + i, &word, 8);
        }
        return;
    }
#endif
    if (count > 0 && dest != src)
        memcpy (dest, src, count * size);
}

//  --------------------------------------------------------------------------

jace_msg_t *
jace_msg_new (jace_msg_type_t type)
{
    assert (type > 0 && type < JACE_MSG_TYPE_COUNT);
    jace_msg_t *self = (jace_msg_t *) zmalloc (sizeof (jace_msg_t));
    self->type = type;
    return self;
}

//  --------------------------------------------------------------------------

void
jace_msg_destroy (jace_msg_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_msg_t *self = *self_p;
        zframe_destroy (&self->routing_id);
        zframe_destroy (&self->header);
        for (size_t i = 0; i < STRING_FIELDS; i++)
            free (self->strings [i]);
        free (self->nodes);
        zhash_destroy (&self->params);
        for (size_t i = 0; i < self->payload_count; i++)
            zframe_destroy (&self->payloads [i].frame);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------
//  Encoding

static void
s_pack_string (msgpack_packer *pk, const char *value)
{
    size_t length = value ? strlen (value) : 0;
    msgpack_pack_str (pk, length);
    msgpack_pack_str_body (pk, value ? value : "", length);
}

static void
s_pack_node (msgpack_packer *pk, const jace_node_t *node)
{
    msgpack_pack_array (pk, NODE_FIELDS);
    s_pack_string (pk, node->id);
    s_pack_string (pk, node->endpoint);
    s_pack_string (pk, node->data);
    s_pack_string (pk, node->cluster);
    s_pack_string (pk, node->pubkey);
    s_pack_string (pk, node->supernode);
    msgpack_pack_double (pk, node->power);
    msgpack_pack_int64 (pk, node->cores);
    msgpack_pack_int64 (pk, node->memory);
    msgpack_pack_int64 (pk, node->state);
    msgpack_pack_int64 (pk, node->task);
    msgpack_pack_int64 (pk, node->epoch);
    s_pack_string (pk, node->job);
    s_pack_string (pk, node->apps);
}

static void
s_pack_params (msgpack_packer *pk, zhash_t *params)
{
    msgpack_pack_map (pk, params ? zhash_size (params) : 0);
    for (const char *value = params ? (const char *) zhash_first (params)
                                    : NULL; value;
         value = (const char *) zhash_next (params)) {
        s_pack_string (pk, zhash_cursor (params));
        s_pack_string (pk, value);
    }
}

static void
s_pack_field (msgpack_packer *pk, const jace_msg_t *self, field_t field)
{
    if (field < STRING_FIELDS)
        s_pack_string (pk, self->strings [field]);
    else
    if (field <= LAST_INT_FIELD)
        msgpack_pack_int64 (pk, self->ints [field - F_TASK]);
    else
    if (field == F_VALUE)
        msgpack_pack_double (pk, self->value);
    else
    if (field == F_NODES) {
        msgpack_pack_array (pk, self->node_count);
        for (size_t i = 0; i < self->node_count; i++)
            s_pack_node (pk, &self->nodes [i]);
    }
    else
        s_pack_params (pk, self->params);
}

static size_t
s_schema_length (jace_msg_type_t type)
{
    size_t length = 0;
    while (s_schemas [type].fields [length] != F_END)
        length++;
    return length;
}

//  Encode; with steal, the payload frames move into the result instead of
//  being copied (the message is about to be destroyed).
static zmsg_t *
s_encode (jace_msg_t *self, bool steal);

zmsg_t *
jace_msg_encode (const jace_msg_t *self)
{
    assert (self);
    return s_encode ((jace_msg_t *) self, false);
}

//  The header is packed on the stack and moves to the heap only when it
//  outgrows HEADER_LOCAL bytes (long node lists): msgpack's own buffer
//  starts with an 8 KiB allocation, which cost every small message a trip
//  through malloc's slow path.
#define HEADER_LOCAL 512

typedef struct {
    char local [HEADER_LOCAL];  //  Used until the header outgrows it
    char *data;                 //  local, or a heap copy
    size_t size;                //  Bytes written
    size_t alloc;               //  Bytes available at data
} header_buffer_t;

static int
s_header_write (void *raw, const char *bytes, size_t length)
{
    header_buffer_t *buffer = (header_buffer_t *) raw;
    if (buffer->alloc - buffer->size < length) {
        size_t alloc = buffer->alloc * 2;
        while (alloc - buffer->size < length)
            alloc *= 2;
        char *data = (char *) malloc (alloc);
        if (!data)
            return -1;
        memcpy (data, buffer->data, buffer->size);
        if (buffer->data != buffer->local)
            free (buffer->data);
        buffer->data = data;
        buffer->alloc = alloc;
    }
    memcpy (buffer->data + buffer->size, bytes, length);
    buffer->size += length;
    return 0;
}

//  Pack the header of self, with the payload descriptors of payloads,
//  into buffer; the caller frees buffer->data if it is not buffer->local.
static void
s_pack_header (const jace_msg_t *self, const payload_t *payloads,
               size_t payload_count, header_buffer_t *buffer)
{
    const schema_t *schema = &s_schemas [self->type];
    buffer->data = buffer->local;
    buffer->size = 0;
    buffer->alloc = HEADER_LOCAL;
    msgpack_packer pk;
    msgpack_packer_init (&pk, buffer, s_header_write);

    msgpack_pack_array (&pk, 3 + s_schema_length (self->type));
    msgpack_pack_int (&pk, JACE_MSG_VERSION);
    msgpack_pack_int (&pk, self->type);
    for (size_t i = 0; schema->fields [i] != F_END; i++)
        s_pack_field (&pk, self, schema->fields [i]);
    msgpack_pack_array (&pk, payload_count);
    for (size_t i = 0; i < payload_count; i++) {
        msgpack_pack_array (&pk, 2);
        msgpack_pack_int (&pk, payloads [i].kind);
        msgpack_pack_uint64 (&pk, payloads [i].count);
    }
}

static void
s_header_free (header_buffer_t *buffer)
{
    if (buffer->data != buffer->local)
        free (buffer->data);
}

static zmsg_t *
s_encode (jace_msg_t *self, bool steal)
{
    header_buffer_t buffer;
    s_pack_header (self, self->payloads, self->payload_count, &buffer);
    zmsg_t *zmsg = zmsg_new ();
    zmsg_addmem (zmsg, buffer.data, buffer.size);
    s_header_free (&buffer);
    for (size_t i = 0; i < self->payload_count; i++) {
        zframe_t *frame = steal ? self->payloads [i].frame
                                : zframe_dup (self->payloads [i].frame);
        if (steal)
            self->payloads [i].frame = NULL;
        zmsg_append (zmsg, &frame);
    }
    if (steal)
        self->payload_count = 0;
    return zmsg;
}

//  --------------------------------------------------------------------------
//  Decoding.  Every helper returns 0 or -1 with the reason written.

//  Write the reason a message is rejected; returns -1 for the caller to
//  pass up.
static int
s_reject (char *reason, size_t reason_size, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (reason, reason_size, format, args);
    va_end (args);
    return -1;
}

static int
s_read_string (const msgpack_object *obj, size_t bound, char *dest,
               const char *what, char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_STR)
        return s_reject (reason, reason_size, "field %s is not a string", what);
    size_t length = obj->via.str.size;
    if (length >= bound)
        return s_reject (reason, reason_size,
                         "field %s is %zu bytes, limit %zu", what, length,
                         bound - 1);
    //  An empty string may come with a NULL pointer: touch it only if not.
    if (length && memchr (obj->via.str.ptr, 0, length))
        return s_reject (reason, reason_size, "field %s holds a NUL byte",
                         what);
    if (length)
        memcpy (dest, obj->via.str.ptr, length);
    dest [length] = 0;
    return 0;
}

static int
s_read_int (const msgpack_object *obj, int64_t *dest, const char *what,
            char *reason, size_t reason_size)
{
    if (obj->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (obj->via.u64 > INT64_MAX)
            return s_reject (reason, reason_size,
                             "field %s is out of range", what);
        *dest = (int64_t) obj->via.u64;
        return 0;
    }
    if (obj->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *dest = obj->via.i64;
        return 0;
    }
    return s_reject (reason, reason_size, "field %s is not an integer", what);
}

static int
s_read_double (const msgpack_object *obj, double *dest, const char *what,
               char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_FLOAT64
    &&  obj->type != MSGPACK_OBJECT_FLOAT32)
        return s_reject (reason, reason_size, "field %s is not a float", what);
    *dest = obj->via.f64;
    return 0;
}

static int
s_read_node (const msgpack_object *obj, jace_node_t *node,
             char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_ARRAY
    ||  obj->via.array.size != NODE_FIELDS)
        return s_reject (reason, reason_size,
                         "node record is not an array of %d", NODE_FIELDS);
    const msgpack_object *f = obj->via.array.ptr;
    if (s_read_string (&f [0], JACE_ID_MAX, node->id, "node.id",
                       reason, reason_size)
    ||  s_read_string (&f [1], JACE_ENDPOINT_MAX, node->endpoint,
                       "node.endpoint", reason, reason_size)
    ||  s_read_string (&f [2], JACE_ENDPOINT_MAX, node->data, "node.data",
                       reason, reason_size)
    ||  s_read_string (&f [3], JACE_ID_MAX, node->cluster, "node.cluster",
                       reason, reason_size)
    ||  s_read_string (&f [4], JACE_ID_MAX, node->pubkey, "node.pubkey",
                       reason, reason_size)
    ||  s_read_string (&f [5], JACE_ENDPOINT_MAX, node->supernode,
                       "node.supernode", reason, reason_size)
    ||  s_read_double (&f [6], &node->power, "node.power",
                       reason, reason_size)
    ||  s_read_int (&f [7], &node->cores, "node.cores", reason, reason_size)
    ||  s_read_int (&f [8], &node->memory, "node.memory",
                    reason, reason_size)
    ||  s_read_int (&f [9], &node->state, "node.state", reason, reason_size)
    ||  s_read_int (&f [10], &node->task, "node.task", reason, reason_size)
    ||  s_read_int (&f [11], &node->epoch, "node.epoch", reason,
                    reason_size)
    ||  s_read_string (&f [12], JACE_ID_MAX, node->job, "node.job",
                       reason, reason_size)
    ||  s_read_string (&f [13], JACE_APPS_MAX, node->apps, "node.apps",
                       reason, reason_size))
        return -1;
    return 0;
}

static int
s_read_nodes (jace_msg_t *self, const msgpack_object *obj,
              char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_ARRAY)
        return s_reject (reason, reason_size, "field nodes is not an array");
    if (obj->via.array.size > JACE_NODES_MAX)
        return s_reject (reason, reason_size,
                         "%u node records, limit %d", obj->via.array.size,
                       JACE_NODES_MAX);
    for (uint32_t i = 0; i < obj->via.array.size; i++) {
        jace_node_t node;
        if (s_read_node (&obj->via.array.ptr [i], &node, reason, reason_size))
            return -1;
        jace_msg_add_node (self, &node);
    }
    return 0;
}

static int
s_read_params (jace_msg_t *self, const msgpack_object *obj,
               char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_MAP)
        return s_reject (reason, reason_size, "field params is not a map");
    if (obj->via.map.size > JACE_PARAMS_MAX)
        return s_reject (reason, reason_size,
                         "%u params, limit %d", obj->via.map.size,
                       JACE_PARAMS_MAX);
    char *key = (char *) zmalloc (JACE_ENDPOINT_MAX);
    char *value = (char *) zmalloc (JACE_TEXT_MAX);
    int rc = 0;
    for (uint32_t i = 0; i < obj->via.map.size && rc == 0; i++) {
        const msgpack_object_kv *kv = &obj->via.map.ptr [i];
        rc = s_read_string (&kv->key, JACE_ENDPOINT_MAX, key, "params key",
                            reason, reason_size);
        if (rc == 0)
            rc = s_read_string (&kv->val, JACE_TEXT_MAX, value,
                                "params value", reason, reason_size);
        if (rc == 0 && *key == 0)
            rc = s_reject (reason, reason_size, "empty params key");
        if (rc == 0)
            jace_msg_set_param (self, key, value);
    }
    free (key);
    free (value);
    return rc;
}

static const char *
s_field_name (field_t field)
{
    static const char *names [] = {
        "sender", "endpoint", "cluster", "pubkey", "job", "app", "token",
        "key", "reason",
        "task", "epoch", "iteration", "count", "state", "interval", "first",
        "forwarded", "code", "block", "offset", "received", "exchanges",
        "value", "nodes", "params"
    };
    return names [field];
}

static int
s_read_field (jace_msg_t *self, field_t field, const msgpack_object *obj,
              char *reason, size_t reason_size)
{
    if (field < STRING_FIELDS) {
        //  Room for the string as sent; s_read_string refuses it, without
        //  writing, when it is over the field's bound.
        size_t length = obj->type == MSGPACK_OBJECT_STR ? obj->via.str.size
                                                        : 0;
        char *text = (char *) malloc (length + 1);
        assert (text);
        if (s_read_string (obj, s_string_bound [field], text,
                           s_field_name (field), reason, reason_size)) {
            free (text);
            return -1;
        }
        free (self->strings [field]);
        self->strings [field] = text;
        return 0;
    }
    if (field <= LAST_INT_FIELD)
        return s_read_int (obj, &self->ints [field - F_TASK],
                           s_field_name (field), reason, reason_size);
    if (field == F_VALUE)
        return s_read_double (obj, &self->value, "value",
                              reason, reason_size);
    if (field == F_NODES)
        return s_read_nodes (self, obj, reason, reason_size);
    return s_read_params (self, obj, reason, reason_size);
}

//  Check the payload descriptor against the frames that follow the header
//  and take the frames.
static int
s_read_payloads (jace_msg_t *self, const msgpack_object *obj, parts_t *parts,
                 char *reason, size_t reason_size)
{
    if (obj->type != MSGPACK_OBJECT_ARRAY)
        return s_reject (reason, reason_size,
                         "payload descriptor is not an array");
    size_t count = obj->via.array.size;
    if (count > JACE_MSG_PAYLOADS_MAX)
        return s_reject (reason, reason_size, "%zu payloads, limit %d", count,
                       JACE_MSG_PAYLOADS_MAX);
    size_t frames = parts->count - 1 + parts->dropped;
    if (count != frames)
        return s_reject (reason, reason_size,
                         "header announces %zu payload frames, got %zu",
                         count, frames);
    for (size_t i = 0; i < count; i++) {
        const msgpack_object *pair = &obj->via.array.ptr [i];
        int64_t kind = 0, length = 0;
        if (pair->type != MSGPACK_OBJECT_ARRAY || pair->via.array.size != 2)
            return s_reject (reason, reason_size,
                             "payload %zu descriptor is not [kind, count]", i);
        if (s_read_int (&pair->via.array.ptr [0], &kind, "payload kind",
                        reason, reason_size)
        ||  s_read_int (&pair->via.array.ptr [1], &length, "payload count",
                        reason, reason_size))
            return -1;
        if (kind < JACE_PAYLOAD_F64 || kind > JACE_PAYLOAD_BYTES)
            return s_reject (reason, reason_size,
                             "payload %zu has unknown kind %" PRId64, i, kind);
        size_t element = s_element_size ((jace_payload_kind_t) kind);
        if (length < 0 || (uint64_t) length > JACE_MSG_FRAME_MAX / element)
            return s_reject (reason, reason_size,
                             "payload %zu count %" PRId64 " out of range",
                           i, length);
        zframe_t *frame = parts->frame [1 + i];
        if (zframe_size (frame) != (size_t) length * element)
            return s_reject (reason, reason_size,
                             "payload %zu is %zu bytes, header says %zu", i,
                             zframe_size (frame), (size_t) length * element);
        parts->frame [1 + i] = NULL;
        self->payloads [i] = (payload_t) {
            (jace_payload_kind_t) kind, (size_t) length, frame };
        self->payload_count = i + 1;
    }
    return 0;
}

//  Check version, type and field count of the header array.
static int
s_read_envelope (const msgpack_object *root, jace_msg_type_t *type,
                 char *reason, size_t reason_size)
{
    if (root->type != MSGPACK_OBJECT_ARRAY || root->via.array.size < 3)
        return s_reject (reason, reason_size,
                         "header is not an array of at least 3 items");
    int64_t version = 0, number = 0;
    if (s_read_int (&root->via.array.ptr [0], &version, "version",
                    reason, reason_size)
    ||  s_read_int (&root->via.array.ptr [1], &number, "type",
                    reason, reason_size))
        return -1;
    if (version != JACE_MSG_VERSION)
        return s_reject (reason, reason_size,
                         "version %" PRId64 ", expected %d", version,
                       JACE_MSG_VERSION);
    if (number <= 0 || number >= JACE_MSG_TYPE_COUNT)
        return s_reject (reason, reason_size,
                         "unknown message type %" PRId64, number);
    *type = (jace_msg_type_t) number;
    size_t expected = 3 + s_schema_length (*type);
    if (root->via.array.size != expected)
        return s_reject (reason, reason_size,
                         "%s has %u header items, expected %zu",
                       s_schemas [*type].name, root->via.array.size,
                       expected);
    return 0;
}

static jace_msg_t *
s_decode_header (const msgpack_object *root, parts_t *parts,
                 char *reason, size_t reason_size)
{
    jace_msg_type_t type = JACE_MSG_HELLO;
    if (s_read_envelope (root, &type, reason, reason_size))
        return NULL;
    jace_msg_t *self = jace_msg_new (type);
    const field_t *fields = s_schemas [type].fields;
    const msgpack_object *items = root->via.array.ptr;
    size_t index = 0;
    int rc = 0;
    for (; fields [index] != F_END && rc == 0; index++)
        rc = s_read_field (self, fields [index], &items [2 + index],
                           reason, reason_size);
    if (rc == 0)
        rc = s_read_payloads (self, &items [2 + index], parts,
                              reason, reason_size);
    if (rc)
        jace_msg_destroy (&self);
    return self;
}

//  msgpack-c allocates every array and map up front from the count in its
//  header, so nine hostile bytes could ask for 128 GiB.  Walk the header
//  first, allocating nothing, and reject any container that announces more
//  items than bytes remain (each item takes at least one byte).
static size_t
s_scalar_size (const uint8_t *p, size_t left)
{
    uint8_t tag = *p;
    if (tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2
    ||  tag == 0xc3)
        return 1;
    if (tag >= 0xa0 && tag <= 0xbf)
        return 1 + (size_t) (tag & 0x1f);
    static const uint8_t fixed [] = {   //  0xca .. 0xd8: total sizes
        5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 3, 4, 6, 10, 18 };
    if (tag >= 0xca && tag <= 0xd8)
        return fixed [tag - 0xca];
    //  Sized: bin8/16/32 (c4-c6), ext8/16/32 (c7-c9), str8/16/32 (d9-db).
    size_t width = 0, extra = 1;
    if (tag >= 0xc4 && tag <= 0xc6)
        width = (size_t) 1 << (tag - 0xc4);
    else
    if (tag >= 0xc7 && tag <= 0xc9) {
        width = (size_t) 1 << (tag - 0xc7);
        extra = 2;              //  the ext type byte
    }
    else
    if (tag >= 0xd9 && tag <= 0xdb)
        width = (size_t) 1 << (tag - 0xd9);
    if (width == 0 || left < 1 + width)
        return SIZE_MAX;        //  0xc1, containers, or cut short
    size_t length = 0;
    for (size_t i = 0; i < width; i++)
        length = (length << 8) | p [1 + i];
    return length > left ? SIZE_MAX : extra + width + length;
}

static bool
s_prescan (const uint8_t *data, size_t size)
{
    size_t offset = 0, pending = 1;
    while (pending > 0) {
        if (offset >= size)
            return false;
        pending--;
        uint8_t tag = data [offset];
        size_t left = size - offset, items = 0, header = 0;
        if ((tag & 0xf0) == 0x90 || (tag & 0xf0) == 0x80) {
            items = (size_t) (tag & 0x0f) * ((tag & 0xf0) == 0x80 ? 2 : 1);
            header = 1;
        }
        else
        if (tag >= 0xdc && tag <= 0xdf) {
            size_t width = tag == 0xdc || tag == 0xde ? 2 : 4;
            if (left < 1 + width)
                return false;
            for (size_t i = 0; i < width; i++)
                items = (items << 8) | data [offset + 1 + i];
            items *= tag >= 0xde ? 2 : 1;
            header = 1 + width;
        }
        if (header) {
            if (items > left - header)
                return false;
            pending += items;
            offset += header;
            continue;
        }
        size_t scalar = s_scalar_size (data + offset, left);
        if (scalar == SIZE_MAX || scalar > left)
            return false;
        offset += scalar;
    }
    return true;
}

static void
s_parts_add (parts_t *parts, zframe_t **frame_p)
{
    if (parts->count < PARTS_MAX) {
        parts->frame [parts->count++] = *frame_p;
        *frame_p = NULL;
    }
    else {
        zframe_destroy (frame_p);
        parts->dropped++;
    }
}

static void
s_parts_destroy (parts_t *parts)
{
    for (size_t i = 0; i < parts->count; i++)
        zframe_destroy (&parts->frame [i]);
    parts->count = 0;
}

//  Decode a message from its parts; destroys the parts it does not move
//  into the message.
//  Decode parts, destroying them; with header_p, a decoded message's
//  header frame is handed over instead.
static jace_msg_t *
s_decode_parts (parts_t *parts, char *reason, size_t reason_size,
                zframe_t **header_p)
{
    char scratch [8];
    if (!reason) {
        reason = scratch;
        reason_size = sizeof scratch;
    }
    *reason = 0;
    jace_msg_t *self = NULL;
    zframe_t *header = parts->count ? parts->frame [0] : NULL;
    if (!header)
        snprintf (reason, reason_size, "empty message");
    else
    if (zframe_size (header) > JACE_MSG_HEADER_MAX)
        snprintf (reason, reason_size, "header of %zu bytes, limit %d",
                  zframe_size (header), JACE_MSG_HEADER_MAX);
    else
    if (!s_prescan (zframe_data (header), zframe_size (header)))
        snprintf (reason, reason_size, "header is not msgpack, or announces "
                  "more items than it holds");
    else {
        msgpack_zone zone;
        msgpack_zone_init (&zone, HEADER_ZONE_CHUNK);
        msgpack_object root;
        size_t offset = 0;
        msgpack_unpack_return ret = msgpack_unpack (
            (const char *) zframe_data (header), zframe_size (header),
            &offset, &zone, &root);
        if (ret != MSGPACK_UNPACK_SUCCESS && ret != MSGPACK_UNPACK_EXTRA_BYTES)
            snprintf (reason, reason_size, "header is not msgpack");
        else
        if (offset != zframe_size (header))
            snprintf (reason, reason_size, "%zu trailing bytes after header",
                      zframe_size (header) - offset);
        else
            self = s_decode_header (&root, parts, reason, reason_size);
        msgpack_zone_destroy (&zone);
    }
    if (self && header_p) {
        *header_p = parts->frame [0];
        parts->frame [0] = NULL;
    }
    s_parts_destroy (parts);
    return self;
}

jace_msg_t *
jace_msg_decode (zmsg_t **zmsg_p, char *reason, size_t reason_size)
{
    assert (zmsg_p && *zmsg_p);
    parts_t parts = { .count = 0 };
    zframe_t *frame;
    while ((frame = zmsg_pop (*zmsg_p)))
        s_parts_add (&parts, &frame);
    zmsg_destroy (zmsg_p);
    return s_decode_parts (&parts, reason, reason_size, NULL);
}

//  --------------------------------------------------------------------------

//  Send the first part of a message without blocking.  ZeroMQ queues a
//  multipart message atomically: once its first part is taken the rest is
//  too, and if it is refused the message is dropped whole.  libzmq learns
//  that the peer drained the queue only when it processes its commands,
//  which a send does at most once a millisecond; asking for the socket's
//  events forces it, so a queue that looks full may take the part after
//  all.
static int
s_send_first (zsock_t *output, const void *data, size_t size, bool more)
{
    void *handle = zsock_resolve (output);
    int flags = ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0);
    int rc = zmq_send (handle, data, size, flags);
    if (rc == -1 && zmq_errno () == EAGAIN
    &&  (zsock_events (output) & ZMQ_POLLOUT))
        rc = zmq_send (handle, data, size, flags);
    return rc < 0 ? -1 : 0;
}

//  The header is sent from the stack and the payload frames are handed to
//  libzmq as they are, without building a zmsg: this is the path of every
//  neighbour vector.  Sets *taken once the socket took the first part:
//  from then on the message is the socket's, whole.
static int
s_send (jace_msg_t *self, zsock_t *output, bool *taken)
{
    void *handle = zsock_resolve (output);
    bool router = zsock_type (output) == ZMQ_ROUTER;
    bool more = self->payload_count > 0;
    int rc = -1;
    *taken = false;
    if (!router || self->routing_id) {
        header_buffer_t buffer;
        s_pack_header (self, self->payloads, self->payload_count, &buffer);
        if (router) {
            rc = s_send_first (output, zframe_data (self->routing_id),
                               zframe_size (self->routing_id), true);
            *taken = rc == 0;
            if (rc == 0)
                rc = zmq_send (handle, buffer.data, buffer.size,
                               ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) < 0
                   ? -1 : 0;
        }
        else {
            rc = s_send_first (output, buffer.data, buffer.size, more);
            *taken = rc == 0;
        }
        s_header_free (&buffer);
    }
    for (size_t i = 0; i < self->payload_count && rc == 0; i++) {
        int flags = ZFRAME_DONTWAIT
                  | (i + 1 < self->payload_count ? ZFRAME_MORE : 0);
        rc = zframe_send (&self->payloads [i].frame, handle, flags);
    }
    return rc;
}

//  Send; destroy the message unless `keep_refused` and the socket refused
//  it whole.
static int
s_send_owned (jace_msg_t **self_p, zsock_t *output, bool keep_refused)
{
    assert (self_p && *self_p);
    assert (output);
    bool taken;
    int rc = s_send (*self_p, output, &taken);
    if (taken || rc == 0 || !keep_refused)
        jace_msg_destroy (self_p);
    return rc;
}

int
jace_msg_send (jace_msg_t **self_p, zsock_t *output)
{
    return s_send_owned (self_p, output, false);
}

int
jace_msg_try_send (jace_msg_t **self_p, zsock_t *output)
{
    return s_send_owned (self_p, output, true);
}

//  --------------------------------------------------------------------------

int
jace_msg_send_payload (const jace_msg_t *self, jace_payload_kind_t kind,
                       const void *data, size_t count, zsock_t *output)
{
    assert (self && self->payload_count == 0);
    assert (data || count == 0);
    assert (output);
    payload_t payload = { kind, count, NULL };
    header_buffer_t buffer;
    s_pack_header (self, &payload, 1, &buffer);
    int rc = s_send_first (output, buffer.data, buffer.size, true);
    s_header_free (&buffer);
    if (rc)
        return -1;
    //  The values go on the wire as they are on a little-endian host;
    //  elsewhere through a frame in wire order.
    size_t bytes = count * s_element_size (kind);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    zframe_t *frame = zframe_new (NULL, bytes);
    s_copy_ordered (zframe_data (frame), data, count, s_element_size (kind));
    return zframe_send (&frame, zsock_resolve (output), ZFRAME_DONTWAIT);
#else
    return zmq_send (zsock_resolve (output), data, bytes, ZMQ_DONTWAIT) < 0
         ? -1 : 0;
#endif
}

//  --------------------------------------------------------------------------

static void
s_print_routing_id (zframe_t *routing_id, char *sender, size_t sender_size)
{
    char *hex = zframe_strhex (routing_id);
    snprintf (sender, sender_size, "%s", hex);
    free (hex);
}

//  The ZAP user id (the Z85 public key CURVE authenticated) and the peer's
//  IP address of a received frame; both "" on links without them.
static void
s_read_metadata (zframe_t *frame, char *user_id, char *peer_address)
{
    const char *value = zframe_meta (frame, "User-Id");
    if (value)
        snprintf (user_id, JACE_ID_MAX, "%s", value);
    value = zframe_meta (frame, "Peer-Address");
    if (value)
        snprintf (peer_address, JACE_ID_MAX, "%s", value);
}

//  Frames are received one by one into an array rather than a zmsg: this
//  is the path of every neighbour vector.
jace_msg_t *
jace_msg_recv (zsock_t *input, char *reason, size_t reason_size,
               char *sender, size_t sender_size)
{
    assert (input);
    if (sender && sender_size)
        *sender = 0;
    zframe_t *frame = zframe_recv_nowait (input);
    if (!frame) {
        if (reason)
            snprintf (reason, reason_size, "nothing to receive");
        return NULL;
    }
    //  ZeroMQ delivers a multipart message whole: the other parts are
    //  already there.
    zframe_t *routing_id = NULL;
    parts_t parts = { .count = 0 };
    bool more = zframe_more (frame);
    if (zsock_type (input) == ZMQ_ROUTER)
        routing_id = frame;
    else
        s_parts_add (&parts, &frame);
    while (more && (frame = zframe_recv_nowait (input))) {
        more = zframe_more (frame);
        s_parts_add (&parts, &frame);
    }
    if (routing_id && sender)
        s_print_routing_id (routing_id, sender, sender_size);
    //  The header frame stays with the message: who sent it, as the
    //  transport knows, is read from it only if asked (reading costs
    //  about 0.5 us a message, on every neighbour vector).
    zframe_t *header = NULL;
    jace_msg_t *self = s_decode_parts (&parts, reason, reason_size, &header);
    if (self)
        self->header = header;
    if (self && routing_id) {
        self->routing_id = routing_id;
        routing_id = NULL;
    }
    zframe_destroy (&routing_id);
    return self;
}

//  --------------------------------------------------------------------------

void
jace_msg_prepare_socket (zsock_t *sock, int64_t frame_max)
{
    assert (sock);
    if (frame_max <= 0 || frame_max > JACE_MSG_FRAME_MAX)
        frame_max = JACE_MSG_FRAME_MAX;
    zsock_set_maxmsgsize (sock, (int) frame_max);
    zsock_set_linger (sock, 0);
    if (zsock_type (sock) == ZMQ_ROUTER)
        zsock_set_router_mandatory (sock, 1);
}

int
jace_msg_bind (zsock_t *sock, const char *endpoint)
{
    assert (sock && endpoint);
    //  CZMQ reads a port of "*" as "try each port from 49152 up": one bind
    //  per port taken, each listing the host's interfaces.  With 128
    //  daemons on a host the next process took 6 ms to bind, and starting
    //  them all grew with the square of their number.  libzmq's own "*"
    //  asks the kernel for a free port, in one bind.
    size_t length = strlen (endpoint);
    if (length > 2 && streq (endpoint + length - 2, ":*"))
        return zmq_bind (zsock_resolve (sock), endpoint) == 0 ? 0 : -1;
    return zsock_bind (sock, "%s", endpoint) < 0 ? -1 : 0;
}

//  --------------------------------------------------------------------------

const char *
jace_msg_type_name (int type)
{
    if (type <= 0 || type >= JACE_MSG_TYPE_COUNT)
        return "?";
    return s_schemas [type].name;
}

jace_msg_type_t
jace_msg_type (const jace_msg_t *self)
{
    assert (self);
    return self->type;
}

zframe_t *
jace_msg_routing_id (const jace_msg_t *self)
{
    assert (self);
    return self->routing_id;
}

void
jace_msg_set_routing_id (jace_msg_t *self, zframe_t *routing_id)
{
    assert (self);
    zframe_destroy (&self->routing_id);
    if (routing_id)
        self->routing_id = zframe_dup (routing_id);
}

//  --------------------------------------------------------------------------
//  Field accessors

static const char *
s_string (const jace_msg_t *self, field_t field)
{
    assert (self);
    return self->strings [field] ? self->strings [field] : "";
}

static void
s_set_string (jace_msg_t *self, field_t field, const char *value)
{
    assert (self);
    free (self->strings [field]);
    self->strings [field] = NULL;
    if (value) {
        size_t length = strnlen (value, s_string_bound [field] - 1);
        char *copy = (char *) malloc (length + 1);
        assert (copy);
        memcpy (copy, value, length);
        copy [length] = 0;
        self->strings [field] = copy;
    }
}

const char *jace_msg_sender (const jace_msg_t *self)
    { return s_string (self, F_SENDER); }
const char *jace_msg_endpoint (const jace_msg_t *self)
    { return s_string (self, F_ENDPOINT); }
const char *jace_msg_cluster (const jace_msg_t *self)
    { return s_string (self, F_CLUSTER); }
const char *jace_msg_pubkey (const jace_msg_t *self)
    { return s_string (self, F_PUBKEY); }
const char *jace_msg_job (const jace_msg_t *self)
    { return s_string (self, F_JOB); }
const char *jace_msg_app (const jace_msg_t *self)
    { return s_string (self, F_APP); }
const char *jace_msg_reason (const jace_msg_t *self)
    { return s_string (self, F_REASON); }
const char *jace_msg_token (const jace_msg_t *self)
    { return s_string (self, F_TOKEN); }
const char *jace_msg_key (const jace_msg_t *self)
    { return s_string (self, F_KEY); }

void jace_msg_set_sender (jace_msg_t *self, const char *value)
    { s_set_string (self, F_SENDER, value); }
void jace_msg_set_endpoint (jace_msg_t *self, const char *value)
    { s_set_string (self, F_ENDPOINT, value); }
void jace_msg_set_cluster (jace_msg_t *self, const char *value)
    { s_set_string (self, F_CLUSTER, value); }
void jace_msg_set_pubkey (jace_msg_t *self, const char *value)
    { s_set_string (self, F_PUBKEY, value); }
void jace_msg_set_job (jace_msg_t *self, const char *value)
    { s_set_string (self, F_JOB, value); }
void jace_msg_set_app (jace_msg_t *self, const char *value)
    { s_set_string (self, F_APP, value); }
void jace_msg_set_reason (jace_msg_t *self, const char *value)
    { s_set_string (self, F_REASON, value); }
void jace_msg_set_token (jace_msg_t *self, const char *value)
    { s_set_string (self, F_TOKEN, value); }
void jace_msg_set_key (jace_msg_t *self, const char *value)
    { s_set_string (self, F_KEY, value); }

static int64_t
s_int (const jace_msg_t *self, field_t field)
{
    assert (self);
    return self->ints [field - F_TASK];
}

static void
s_set_int (jace_msg_t *self, field_t field, int64_t value)
{
    assert (self);
    self->ints [field - F_TASK] = value;
}

int64_t jace_msg_task (const jace_msg_t *self)
    { return s_int (self, F_TASK); }
int64_t jace_msg_epoch (const jace_msg_t *self)
    { return s_int (self, F_EPOCH); }
int64_t jace_msg_iteration (const jace_msg_t *self)
    { return s_int (self, F_ITERATION); }
int64_t jace_msg_count (const jace_msg_t *self)
    { return s_int (self, F_COUNT); }
int64_t jace_msg_state (const jace_msg_t *self)
    { return s_int (self, F_STATE); }
int64_t jace_msg_interval (const jace_msg_t *self)
    { return s_int (self, F_INTERVAL); }
int64_t jace_msg_first (const jace_msg_t *self)
    { return s_int (self, F_FIRST); }
int64_t jace_msg_forwarded (const jace_msg_t *self)
    { return s_int (self, F_FORWARDED); }
int64_t jace_msg_code (const jace_msg_t *self)
    { return s_int (self, F_CODE); }
int64_t jace_msg_block (const jace_msg_t *self)
    { return s_int (self, F_BLOCK); }
int64_t jace_msg_offset (const jace_msg_t *self)
    { return s_int (self, F_OFFSET); }
int64_t jace_msg_received (const jace_msg_t *self)
    { return s_int (self, F_RECEIVED); }
int64_t jace_msg_exchanges (const jace_msg_t *self)
    { return s_int (self, F_EXCHANGES); }

void jace_msg_set_task (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_TASK, value); }
void jace_msg_set_epoch (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_EPOCH, value); }
void jace_msg_set_iteration (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_ITERATION, value); }
void jace_msg_set_count (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_COUNT, value); }
void jace_msg_set_state (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_STATE, value); }
void jace_msg_set_interval (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_INTERVAL, value); }
void jace_msg_set_first (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_FIRST, value); }
void jace_msg_set_forwarded (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_FORWARDED, value); }
void jace_msg_set_code (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_CODE, value); }
void jace_msg_set_block (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_BLOCK, value); }
void jace_msg_set_offset (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_OFFSET, value); }
void jace_msg_set_received (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_RECEIVED, value); }
void jace_msg_set_exchanges (jace_msg_t *self, int64_t value)
    { s_set_int (self, F_EXCHANGES, value); }

double
jace_msg_value (const jace_msg_t *self)
{
    assert (self);
    return self->value;
}

void
jace_msg_set_value (jace_msg_t *self, double value)
{
    assert (self);
    self->value = value;
}

//  --------------------------------------------------------------------------

size_t
jace_msg_node_count (const jace_msg_t *self)
{
    assert (self);
    return self->node_count;
}

const jace_node_t *
jace_msg_node (const jace_msg_t *self, size_t index)
{
    assert (self);
    assert (index < self->node_count);
    return &self->nodes [index];
}

void
jace_msg_add_node (jace_msg_t *self, const jace_node_t *node)
{
    assert (self);
    assert (node);
    if (self->node_count == self->node_capacity) {
        self->node_capacity = self->node_capacity ? 2 * self->node_capacity
                                                  : 8;
        self->nodes = (jace_node_t *) realloc (
            self->nodes, self->node_capacity * sizeof (jace_node_t));
        assert (self->nodes);
    }
    self->nodes [self->node_count++] = *node;
}

//  --------------------------------------------------------------------------

const char *
jace_msg_param (const jace_msg_t *self, const char *key)
{
    assert (self);
    return self->params ? (const char *) zhash_lookup (self->params, key)
                        : NULL;
}

void
jace_msg_set_param (jace_msg_t *self, const char *key, const char *value)
{
    assert (self);
    assert (key && value);
    if (!self->params) {
        self->params = zhash_new ();
        zhash_autofree (self->params);
    }
    zhash_update (self->params, key, (void *) value);
}

zhash_t *
jace_msg_params (jace_msg_t *self)
{
    assert (self);
    if (!self->params) {
        self->params = zhash_new ();
        zhash_autofree (self->params);
    }
    return self->params;
}

//  --------------------------------------------------------------------------

size_t
jace_msg_payload_count (const jace_msg_t *self)
{
    assert (self);
    return self->payload_count;
}

jace_payload_kind_t
jace_msg_payload_kind (const jace_msg_t *self, size_t index)
{
    assert (self);
    assert (index < self->payload_count);
    return self->payloads [index].kind;
}

size_t
jace_msg_payload_length (const jace_msg_t *self, size_t index)
{
    assert (self);
    assert (index < self->payload_count);
    return self->payloads [index].count;
}

void
jace_msg_add_payload (jace_msg_t *self, jace_payload_kind_t kind,
                      const void *data, size_t count)
{
    assert (self);
    assert (self->payload_count < JACE_MSG_PAYLOADS_MAX);
    assert (data || count == 0);
    size_t element = s_element_size (kind);
    zframe_t *frame = zframe_new (NULL, count * element);
    s_copy_ordered (zframe_data (frame), data, count, element);
    self->payloads [self->payload_count++] = (payload_t) { kind, count, frame };
}

void *
jace_msg_add_payload_space (jace_msg_t *self, jace_payload_kind_t kind,
                            size_t count)
{
    assert (self);
    assert (self->payload_count < JACE_MSG_PAYLOADS_MAX);
    zframe_t *frame = zframe_new (NULL, count * s_element_size (kind));
    self->payloads [self->payload_count++] = (payload_t) { kind, count, frame };
    return zframe_data (frame);
}

void
jace_msg_payload_to_wire (jace_msg_t *self, size_t index)
{
    assert (self);
    assert (index < self->payload_count);
    payload_t *payload = &self->payloads [index];
    void *data = zframe_data (payload->frame);
    //  In place: the byte swap reads each element before it writes it
    s_copy_ordered (data, data, payload->count,
                    s_element_size (payload->kind));
}

void
jace_msg_payload_copy (const jace_msg_t *self, size_t index, void *dest)
{
    assert (self);
    assert (index < self->payload_count);
    const payload_t *payload = &self->payloads [index];
    s_copy_ordered (dest, zframe_data (payload->frame), payload->count,
                    s_element_size (payload->kind));
}

const void *
jace_msg_payload_data (const jace_msg_t *self, size_t index)
{
    assert (self);
    assert (index < self->payload_count);
    return zframe_data (self->payloads [index].frame);
}

void
jace_msg_payload_digest (const jace_msg_t *self,
                         char digest [JACE_DIGEST_TEXT + 1])
{
    assert (self && digest);
    jace_sodium_init ();
    crypto_generichash_state state;
    unsigned char hash [JACE_DIGEST_TEXT / 2];
    crypto_generichash_init (&state, NULL, 0, sizeof hash);
    for (size_t i = 0; i < self->payload_count; i++) {
        const payload_t *payload = &self->payloads [i];
        uint64_t shape [2] = { (uint64_t) payload->kind,
                               (uint64_t) payload->count };
        crypto_generichash_update (&state, (const unsigned char *) shape,
                                   sizeof shape);
        crypto_generichash_update (&state, zframe_data (payload->frame),
                                   zframe_size (payload->frame));
    }
    crypto_generichash_final (&state, hash, sizeof hash);
    sodium_bin2hex (digest, JACE_DIGEST_TEXT + 1, hash, sizeof hash);
}

//  --------------------------------------------------------------------------

//  True if every byte of text is printable and neither a quote nor a
//  backslash: ids and cluster names go into logs and JSON events as they
//  are, so they must not be able to break out of a string.
bool
jace_name_plain (const char *text)
{
    for (const unsigned char *c = (const unsigned char *) text; *c; c++)
        if (*c < 0x21 || *c > 0x7e || *c == '"' || *c == '\\')
            return false;
    return true;
}

//  True if text is plain names (jace_name_plain) each separated by one
//  space, or empty.
static bool
s_names_plain (const char *text)
{
    if (*text == ' ')
        return false;
    for (const char *c = text; *c; c++)
        if (*c == ' ' ? c [1] == ' ' || c [1] == 0
                      : (unsigned char) *c < 0x21 || (unsigned char) *c > 0x7e
                        || *c == '"' || *c == '\\')
            return false;
    return true;
}

bool
jace_node_valid (const jace_node_t *node, char *reason, size_t reason_size)
{
    assert (node);
    const char *why = !*node->id ? "no id"
        : !jace_name_plain (node->id) ? "id with a space, quote, backslash "
                                     "or unprintable byte"
        : !jace_name_plain (node->cluster) ? "cluster name with a space, "
                                          "quote, backslash or unprintable "
                                          "byte"
        : !*node->endpoint ? "no endpoint"
        : !isfinite (node->power) || node->power <= 0
          || node->power > JACE_POWER_MAX ? "power out of range"
        : node->cores < 1 || node->cores > JACE_CORES_MAX
          ? "cores out of range"
        : node->memory < 0 || node->memory > JACE_MEMORY_MAX
          ? "memory out of range"
        : node->state < JACE_NODE_FREE || node->state > JACE_NODE_WORKING
          ? "unknown state"
        : node->task < -1 || node->task > JACE_NODES_MAX
          ? "task out of range"
        : node->epoch < 0 ? "negative epoch"
        : !s_names_plain (node->apps) ? "application names not separated "
                                        "by single spaces, or unprintable"
        : NULL;
    if (why && reason)
        snprintf (reason, reason_size, "%s", why);
    return why == NULL;
}

#define NAMED_SUPERNODE_KEY "supernode/%zu"

void
jace_msg_name_supernode (jace_msg_t *msg, const char *endpoint)
{
    assert (msg && endpoint);
    for (size_t index = 0; index < JACE_SUPERNODES_NAMED_MAX; index++) {
        char key [32];
        snprintf (key, sizeof key, NAMED_SUPERNODE_KEY, index + 1);
        if (!jace_msg_param (msg, key)) {
            jace_msg_set_param (msg, key, endpoint);
            return;
        }
    }
}

const char *
jace_msg_named_supernode (const jace_msg_t *msg, size_t index)
{
    assert (msg);
    if (index >= JACE_SUPERNODES_NAMED_MAX)
        return NULL;
    char key [32];
    snprintf (key, sizeof key, NAMED_SUPERNODE_KEY, index + 1);
    const char *endpoint = jace_msg_param (msg, key);
    if (!endpoint)
        return NULL;
    size_t length = strlen (endpoint);
    bool transport = strncmp (endpoint, "tcp://", 6) == 0
                  || strncmp (endpoint, "ipc://", 6) == 0;
    if (!transport || length <= 6 || length >= JACE_ENDPOINT_MAX
    ||  !jace_name_plain (endpoint))
        return NULL;
    return endpoint;
}

bool
jace_node_has_app (const jace_node_t *node, const char *app)
{
    assert (node && app);
    size_t length = strlen (app);
    if (length == 0)
        return false;
    for (const char *name = node->apps; *name; ) {
        const char *end = strchr (name, ' ');
        size_t size = end ? (size_t) (end - name) : strlen (name);
        if (size == length && memcmp (name, app, length) == 0)
            return true;
        name += size + (end != NULL);
    }
    return false;
}

//  --------------------------------------------------------------------------
//  Metadata and seals

void
jace_sodium_init (void)
{
    //  sodium_init picks the fastest BLAKE2b for this CPU; it is
    //  idempotent but takes a lock, so call it once per process.
    static atomic_bool ready = false;
    if (!atomic_load (&ready)) {
        if (sodium_init () < 0) {
            zsys_error ("libsodium cannot start");
            abort ();
        }
        atomic_store (&ready, true);
    }
}

//  Read the sender's metadata from the header frame, once.  The message
//  is logically unchanged: this only caches what the frame says.
static void
s_metadata (const jace_msg_t *self)
{
    jace_msg_t *cache = (jace_msg_t *) self;
    if (cache->metadata_read)
        return;
    if (cache->header)
        s_read_metadata (cache->header, cache->user_id, cache->peer_address);
    cache->metadata_read = true;
}

const char *
jace_msg_user_id (const jace_msg_t *self)
{
    assert (self);
    s_metadata (self);
    return self->user_id;
}

const char *
jace_msg_peer_address (const jace_msg_t *self)
{
    assert (self);
    s_metadata (self);
    return self->peer_address;
}

void
jace_msg_set_user_id (jace_msg_t *self, const char *user_id)
{
    assert (self);
    s_metadata (self);
    snprintf (self->user_id, sizeof self->user_id, "%s", user_id);
}

//  What a seal covers, serialised into one buffer so that BLAKE2b runs
//  once over it: calls into the hash cost more than the bytes on a DATA
//  header.  The buffer lives on the stack until node lists outgrow it.
typedef struct {
    unsigned char local [256];
    unsigned char *data;
    size_t size;
    size_t alloc;
} sealed_bytes_t;

static void
s_sealed_add (sealed_bytes_t *bytes, const void *data, size_t size)
{
    if (bytes->alloc - bytes->size < size) {
        size_t alloc = bytes->alloc * 2 + size;
        unsigned char *grown = (unsigned char *) malloc (alloc);
        assert (grown);
        memcpy (grown, bytes->data, bytes->size);
        if (bytes->data != bytes->local)
            free (bytes->data);
        bytes->data = grown;
        bytes->alloc = alloc;
    }
    memcpy (bytes->data + bytes->size, data, size);
    bytes->size += size;
}

static void
s_sealed_int (sealed_bytes_t *bytes, int64_t value)
{
    unsigned char little [8];
    for (int i = 0; i < 8; i++)
        little [i] = (unsigned char) ((uint64_t) value >> (8 * i));
    s_sealed_add (bytes, little, sizeof little);
}

static void
s_sealed_string (sealed_bytes_t *bytes, const char *value)
{
    size_t length = value ? strlen (value) : 0;
    s_sealed_int (bytes, (int64_t) length);
    s_sealed_add (bytes, value ? value : "", length);
}

static void
s_sealed_double (sealed_bytes_t *bytes, double value)
{
    int64_t bits;
    memcpy (&bits, &value, sizeof bits);
    s_sealed_int (bytes, bits);
}

static void
s_sealed_node (sealed_bytes_t *bytes, const jace_node_t *node)
{
    s_sealed_string (bytes, node->id);
    s_sealed_string (bytes, node->endpoint);
    s_sealed_string (bytes, node->data);
    s_sealed_string (bytes, node->cluster);
    s_sealed_string (bytes, node->pubkey);
    s_sealed_string (bytes, node->supernode);
    s_sealed_double (bytes, node->power);
    s_sealed_int (bytes, node->cores);
    s_sealed_int (bytes, node->memory);
    s_sealed_int (bytes, node->state);
    s_sealed_int (bytes, node->task);
    s_sealed_int (bytes, node->epoch);
    s_sealed_string (bytes, node->job);
    s_sealed_string (bytes, node->apps);
}

static void
s_sealed_field (sealed_bytes_t *bytes, const jace_msg_t *self, field_t field)
{
    if (field < STRING_FIELDS)
        s_sealed_string (bytes, self->strings [field]);
    else
    if (field <= LAST_INT_FIELD)
        s_sealed_int (bytes, self->ints [field - F_TASK]);
    else
    if (field == F_VALUE)
        s_sealed_double (bytes, self->value);
    else {
        assert (field == F_NODES);
        s_sealed_int (bytes, (int64_t) self->node_count);
        for (size_t n = 0; n < self->node_count; n++)
            s_sealed_node (bytes, &self->nodes [n]);
    }
}

//  The seal key of a job key, per thread: a job's messages are all sealed
//  with one key, and deriving costs a BLAKE2b block, more than a seal.
static __thread unsigned char s_job_key [JACE_KEY_BYTES];
static __thread unsigned char s_seal_key [crypto_shorthash_siphashx24_KEYBYTES];
static __thread bool s_seal_key_ready;

//  SipHash takes a 128-bit key: a key of its own, derived from the job
//  key, so that no key serves two algorithms.
static const unsigned char *
s_seal_key_of (const unsigned char *key)
{
    if (!s_seal_key_ready || memcmp (s_job_key, key, JACE_KEY_BYTES)) {
        static const char domain [] = "jace seal key v1";
        crypto_generichash (s_seal_key, sizeof s_seal_key,
                            (const unsigned char *) domain,
                            sizeof domain - 1, key, JACE_KEY_BYTES);
        memcpy (s_job_key, key, JACE_KEY_BYTES);
        s_seal_key_ready = true;
    }
    return s_seal_key;
}

//  The seal of a message: SipHash-2-4 with a 128-bit tag (libsodium's
//  siphashx24) over its version, type and every field of its schema but
//  the token (where the seal goes) and params, each length-prefixed so
//  that no two messages serialise alike.  SipHash is a MAC made for
//  short inputs: a DATA header costs about a tenth of a keyed BLAKE2b,
//  and forging a tag without the key takes on the order of 2^128 tries.
static void
s_seal (const jace_msg_t *self, const unsigned char *key,
        unsigned char seal [JACE_SEAL_BYTES])
{
    jace_sodium_init ();
    sealed_bytes_t bytes = { .data = NULL, .size = 0,
                             .alloc = sizeof bytes.local };
    bytes.data = bytes.local;
    s_sealed_int (&bytes, JACE_MSG_VERSION);
    s_sealed_int (&bytes, self->type);
    const field_t *fields = s_schemas [self->type].fields;
    for (size_t i = 0; fields [i] != F_END; i++)
        if (fields [i] != F_TOKEN && fields [i] != F_PARAMS)
            s_sealed_field (&bytes, self, fields [i]);
    crypto_shorthash_siphashx24 (seal, bytes.data, bytes.size,
                                 s_seal_key_of (key));
    if (bytes.data != bytes.local)
        free (bytes.data);
}

void
jace_msg_seal (jace_msg_t *self, const unsigned char *key)
{
    assert (self && key);
    unsigned char seal [JACE_SEAL_BYTES];
    s_seal (self, key, seal);
    //  A message sealed again (the DATA template, every send) keeps its
    //  token's storage: no allocation on the hot path.
    char *token = self->strings [F_TOKEN];
    if (token && strlen (token) == JACE_SEAL_TEXT)
        zmq_z85_encode (token, seal, JACE_SEAL_BYTES);
    else {
        char text [JACE_SEAL_TEXT + 1];
        zmq_z85_encode (text, seal, JACE_SEAL_BYTES);
        s_set_string (self, F_TOKEN, text);
    }
}

bool
jace_msg_sealed (const jace_msg_t *self, const unsigned char *key)
{
    assert (self && key);
    const char *token = s_string (self, F_TOKEN);
    unsigned char presented [JACE_SEAL_BYTES];
    if (strlen (token) != JACE_SEAL_TEXT
    ||  !zmq_z85_decode (presented, token))
        return false;
    unsigned char seal [JACE_SEAL_BYTES];
    s_seal (self, key, seal);
    return sodium_memcmp (seal, presented, JACE_SEAL_BYTES) == 0;
}
