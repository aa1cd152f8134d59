/*  =========================================================================
    fuzz_msg - the message decoder under arbitrary input

    LLVMFuzzerTestOneInput splits the input into frames (each preceded by a
    two-byte little-endian length) and decodes them as one message.  Any
    message that decodes must encode back to frames that decode to the same
    message: the codec never accepts what it cannot reproduce.

    "The same" is checked on the encodings, header decoded as msgpack: every
    object equal in type and value (floats bit for bit), arrays in order,
    and maps as sets of distinct keys, since the params map is a hash whose
    order of iteration depends on the order its keys arrived in; payload
    frames byte for byte.

    Built two ways: with clang's libFuzzer (`make fuzz`, long runs), and
    with fuzz_msg_smoke.c as a deterministic mutation driver that runs in
    `make check` with any compiler.
    =========================================================================
*/
#include "jace_msg.h"

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#define FUZZ_FRAMES_MAX 20

static zmsg_t *
s_frames_of (const uint8_t *data, size_t size)
{
    zmsg_t *zmsg = zmsg_new ();
    size_t offset = 0;
    while (offset < size && zmsg_size (zmsg) < FUZZ_FRAMES_MAX) {
        size_t length = data [offset];
        if (offset + 1 < size)
            length |= (size_t) data [offset + 1] << 8;
        offset += 2;
        if (offset > size)
            offset = size;
        if (length > size - offset)
            length = size - offset;
        zmsg_addmem (zmsg, data + offset, length);
        offset += length;
    }
    return zmsg;
}

static bool
s_same_object (const msgpack_object *left, const msgpack_object *right);

//  The entry of map whose key is key, if exactly one is; else NULL.
static const msgpack_object_kv *
s_only_match (const msgpack_object_map *map, const msgpack_object *key)
{
    const msgpack_object_kv *found = NULL;
    for (uint32_t i = 0; i < map->size; i++)
        if (s_same_object (&map->ptr [i].key, key)) {
            if (found)
                return NULL;
            found = &map->ptr [i];
        }
    return found;
}

//  Equal msgpack objects: same type (float32 is not float64, a positive
//  integer is not a negative one), scalars bit for bit, arrays element by
//  element in order, maps with distinct keys pairing one to one with equal
//  values, in any order.
static bool
s_same_object (const msgpack_object *left, const msgpack_object *right)
{
    if (left->type != right->type)
        return false;
    switch (left->type) {
        case MSGPACK_OBJECT_NIL:
            return true;
        case MSGPACK_OBJECT_BOOLEAN:
            return left->via.boolean == right->via.boolean;
        case MSGPACK_OBJECT_POSITIVE_INTEGER:
            return left->via.u64 == right->via.u64;
        case MSGPACK_OBJECT_NEGATIVE_INTEGER:
            return left->via.i64 == right->via.i64;
        case MSGPACK_OBJECT_FLOAT32:
        case MSGPACK_OBJECT_FLOAT64:
            return memcmp (&left->via.f64, &right->via.f64,
                           sizeof left->via.f64) == 0;
        case MSGPACK_OBJECT_STR:
            return left->via.str.size == right->via.str.size
                && memcmp (left->via.str.ptr, right->via.str.ptr,
                           left->via.str.size) == 0;
        case MSGPACK_OBJECT_BIN:
            return left->via.bin.size == right->via.bin.size
                && memcmp (left->via.bin.ptr, right->via.bin.ptr,
                           left->via.bin.size) == 0;
        case MSGPACK_OBJECT_EXT:
            return left->via.ext.type == right->via.ext.type
                && left->via.ext.size == right->via.ext.size
                && memcmp (left->via.ext.ptr, right->via.ext.ptr,
                           left->via.ext.size) == 0;
        case MSGPACK_OBJECT_ARRAY:
            if (left->via.array.size != right->via.array.size)
                return false;
            for (uint32_t i = 0; i < left->via.array.size; i++)
                if (!s_same_object (&left->via.array.ptr [i],
                                    &right->via.array.ptr [i]))
                    return false;
            return true;
        case MSGPACK_OBJECT_MAP:
            if (left->via.map.size != right->via.map.size)
                return false;
            //  Every left key once on each side, with the same value:
            //  with equal sizes, a one-to-one pairing.
            for (uint32_t i = 0; i < left->via.map.size; i++) {
                const msgpack_object_kv *kv = &left->via.map.ptr [i];
                const msgpack_object_kv *match =
                    s_only_match (&right->via.map, &kv->key);
                if (!match || !s_only_match (&left->via.map, &kv->key)
                ||  !s_same_object (&kv->val, &match->val))
                    return false;
            }
            return true;
    }
    return false;
}

//  True if a header frame is exactly one msgpack object, unpacked into
//  result (initialised by the caller, who destroys it).
static bool
s_unpack_header (zframe_t *frame, msgpack_unpacked *result)
{
    size_t offset = 0;
    return msgpack_unpack_next (result, (const char *) zframe_data (frame),
                                zframe_size (frame), &offset)
               == MSGPACK_UNPACK_SUCCESS
        && offset == zframe_size (frame);
}

static bool
s_same_header (zframe_t *left, zframe_t *right)
{
    if (zframe_eq (left, right))
        return true;
    msgpack_unpacked a, b;
    msgpack_unpacked_init (&a);
    msgpack_unpacked_init (&b);
    bool same = s_unpack_header (left, &a) && s_unpack_header (right, &b)
             && s_same_object (&a.data, &b.data);
    msgpack_unpacked_destroy (&a);
    msgpack_unpacked_destroy (&b);
    return same;
}

static bool
s_same_encoding (zmsg_t *left, zmsg_t *right)
{
    if (zmsg_size (left) != zmsg_size (right) || zmsg_size (left) == 0)
        return false;
    if (!s_same_header (zmsg_first (left), zmsg_first (right)))
        return false;
    for (zframe_t *a = zmsg_next (left), *b = zmsg_next (right); a && b;
         a = zmsg_next (left), b = zmsg_next (right))
        if (!zframe_eq (a, b))
            return false;
    return true;
}

//  Inputs that decoded, for the smoke driver's checks.
size_t fuzz_msg_accepted;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    zmsg_t *zmsg = s_frames_of (data, size);
    char reason [256];
    jace_msg_t *msg = jace_msg_decode (&zmsg, reason, sizeof reason);
    if (!msg)
        return 0;
    fuzz_msg_accepted++;
    zmsg_t *encoded = jace_msg_encode (msg);
    zmsg_t *copy = zmsg_dup (encoded);
    jace_msg_t *again = jace_msg_decode (&copy, reason, sizeof reason);
    if (!again)
        abort ();               //  It decoded once; its own encoding must
    zmsg_t *reencoded = jace_msg_encode (again);
    if (!s_same_encoding (encoded, reencoded))
        abort ();
    zmsg_destroy (&reencoded);
    zmsg_destroy (&encoded);
    jace_msg_destroy (&again);
    jace_msg_destroy (&msg);
    return 0;
}
