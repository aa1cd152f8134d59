/*  =========================================================================
    jace_hash - what the keyed BLAKE2b tags of the runtime share

    Checkpoint copies (jace_checkpoint) and bulk transfers (jace_transfer)
    are tagged with BLAKE2b keyed by the job key.  The integers they bind
    into a tag go in as 8 bytes, least significant first, so a tag made on
    one machine checks on any other whatever its byte order.
    Internal to libjace; not installed.
    =========================================================================
*/
#ifndef JACE_HASH_H_INCLUDED
#define JACE_HASH_H_INCLUDED

#include <sodium.h>
#include <stdint.h>

static inline void
jace_hash_update_int64 (crypto_generichash_state *state, int64_t value)
{
    uint8_t bytes [8];
    for (int i = 0; i < 8; i++)
        bytes [i] = (uint8_t) ((uint64_t) value >> (8 * i));
    crypto_generichash_update (state, bytes, sizeof bytes);
}

#endif
