/*  =========================================================================
    fuzz_msg - the message decoder under arbitrary input

    LLVMFuzzerTestOneInput splits the input into frames (each preceded by a
    two-byte little-endian length) and decodes them as one message.  Any
    message that decodes must encode back to frames that decode to the same
    encoding: the codec never accepts what it cannot reproduce.

    Built two ways: with clang's libFuzzer (`make fuzz`, long runs), and
    with fuzz_msg_smoke.c as a deterministic mutation driver that runs in
    `make check` with any compiler.
    =========================================================================
*/
#include "jace_msg.h"

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
s_same_encoding (zmsg_t *left, zmsg_t *right)
{
    if (zmsg_size (left) != zmsg_size (right))
        return false;
    for (zframe_t *a = zmsg_first (left), *b = zmsg_first (right); a && b;
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
