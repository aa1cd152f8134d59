/*  =========================================================================
    fuzz_msg_smoke - a bounded, deterministic run of the decoder fuzz target

    Seeds: a valid message of every type, with fields, nodes, params and
    payloads, in the fuzz target's frame format, twice: once small, once
    with protocol 3's token and key set (a seal, a job key) and a params
    map of SEED_PARAMS entries, enough for keys to share hash buckets so
    that the map comes back in another order.  Each seed is mutated (bit
    flips, byte overwrites, truncations, insertions, frame-length changes)
    by a fixed-seed generator, and every mutant goes through
    LLVMFuzzerTestOneInput.  A crash or abort fails the test; under
    --enable-sanitizers so does any memory error.  The seeds follow the
    type table: protocol 4's PING and PONG, and RESERVE with its node
    list (every seed carries a record), are seeded like the rest.

    fuzz_msg_smoke --seeds DIR writes the seeds into DIR, one file each, as
    a starting corpus for libFuzzer (`make fuzz`), and runs nothing.
    =========================================================================
*/
#include "jace_msg.h"
#include "../tests/tap.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
extern size_t fuzz_msg_accepted;

#define MUTANTS_PER_SEED 2000
#define INPUT_MAX 4096
//  Params in the large seeds: 64 keys in zhash's 255 buckets share some.
#define SEED_PARAMS 64
//  Seeds: a small and a large one per type.
#define SEEDS ((JACE_MSG_TYPE_COUNT - 1) * 2)

//  xorshift64*: fixed seed, same mutants on every run.
static uint64_t
s_random (uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 2685821657736338717ULL;
}

//  Serialise a message in the fuzz target's format; large: with token,
//  key (protocol 3) and many params.
static size_t
s_seed (jace_msg_type_t type, bool large, uint8_t *out, size_t capacity)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, "seed");
    jace_msg_set_job (msg, "job-1");
    jace_msg_set_task (msg, 3);
    jace_msg_set_value (msg, 0.5);
    jace_msg_set_param (msg, "problem/n", "8");
    if (large) {
        unsigned char key [JACE_KEY_BYTES];
        for (int i = 0; i < JACE_KEY_BYTES; i++)
            key [i] = (unsigned char) (i * 7 + 1);
        char text [JACE_KEY_TEXT + 1];
        zmq_z85_encode (text, key, JACE_KEY_BYTES);
        jace_msg_set_key (msg, text);
        jace_msg_set_epoch (msg, 2);
        jace_msg_set_iteration (msg, 40);
        jace_msg_set_reason (msg, "seed");
        for (int i = 0; i < SEED_PARAMS; i++) {
            char name [32], value [32];
            snprintf (name, sizeof name, "token/d%d", i);
            snprintf (value, sizeof value, "v%d", i * 31);
            jace_msg_set_param (msg, name, value);
        }
        jace_msg_seal (msg, key);       //  A token as senders set it
    }
    jace_node_t node = { .id = "d1", .endpoint = "tcp://127.0.0.1:1",
                         .cluster = "A", .power = 1 };
    jace_msg_add_node (msg, &node);
    double values [3] = { 1, 2, 3 };
    jace_msg_add_payload (msg, JACE_PAYLOAD_F64, values, 3);
    zmsg_t *zmsg = jace_msg_encode (msg);
    size_t size = 0;
    for (zframe_t *frame = zmsg_first (zmsg); frame;
         frame = zmsg_next (zmsg)) {
        size_t length = zframe_size (frame);
        if (size + 2 + length > capacity)
            break;
        out [size++] = (uint8_t) (length & 0xff);
        out [size++] = (uint8_t) (length >> 8);
        memcpy (out + size, zframe_data (frame), length);
        size += length;
    }
    zmsg_destroy (&zmsg);
    jace_msg_destroy (&msg);
    return size;
}

static size_t
s_mutate (uint8_t *data, size_t size, uint64_t *state)
{
    uint64_t choice = s_random (state) % 5;
    size_t at = size ? s_random (state) % size : 0;
    if (choice == 0 && size)
        data [at] ^= (uint8_t) (1u << (s_random (state) % 8));
    else
    if (choice == 1 && size)
        data [at] = (uint8_t) s_random (state);
    else
    if (choice == 2)
        size = at;
    else
    if (choice == 3 && size < INPUT_MAX) {
        memmove (data + at + 1, data + at, size - at);
        data [at] = (uint8_t) s_random (state);
        size++;
    }
    else
    if (size >= 2)
        data [0] = (uint8_t) s_random (state);   //  first frame's length
    return size;
}

//  Write every seed into dir as a libFuzzer corpus.
static int
s_write_seeds (const char *dir)
{
    uint8_t seed [INPUT_MAX];
    if (zsys_dir_create ("%s", dir)) {
        fprintf (stderr, "fuzz_msg_smoke: cannot create %s\n", dir);
        return 1;
    }
    for (int index = 0; index < SEEDS; index++) {
        int type = 1 + index / 2;
        bool large = index % 2;
        size_t size = s_seed ((jace_msg_type_t) type, large, seed,
                              sizeof seed);
        char *path = zsys_sprintf ("%s/seed-%s%s", dir,
                                   jace_msg_type_name (type),
                                   large ? "-p3" : "");
        FILE *file = fopen (path, "wb");
        bool written = file && fwrite (seed, 1, size, file) == size;
        if (file && fclose (file))
            written = false;
        if (!written)
            fprintf (stderr, "fuzz_msg_smoke: cannot write %s\n", path);
        free (path);
        if (!written)
            return 1;
    }
    printf ("%d seeds in %s\n", SEEDS, dir);
    return 0;
}

int
main (int argc, char **argv)
{
    zsys_set_logstream (stderr);
    if (argc == 3 && streq (argv [1], "--seeds"))
        return s_write_seeds (argv [2]);
    tap_plan (4);
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    uint8_t seed [INPUT_MAX], input [INPUT_MAX];
    size_t runs = 0;
    size_t seeds_accepted = 0;
    for (int index = 0; index < SEEDS; index++) {
        int type = 1 + index / 2;
        size_t seed_size = s_seed ((jace_msg_type_t) type, index % 2, seed,
                                   sizeof seed);
        size_t before = fuzz_msg_accepted;
        LLVMFuzzerTestOneInput (seed, seed_size);
        seeds_accepted += fuzz_msg_accepted - before;
        runs++;
        for (int i = 0; i < MUTANTS_PER_SEED; i++) {
            memcpy (input, seed, seed_size);
            size_t size = seed_size;
            int rounds = 1 + (int) (s_random (&state) % 4);
            for (int r = 0; r < rounds; r++)
                size = s_mutate (input, size, &state);
            LLVMFuzzerTestOneInput (input, size);
            runs++;
        }
    }
    is_int ((long long) seeds_accepted, SEEDS,
            "a valid message of every type is accepted, small and large");
    ok (runs == (size_t) SEEDS * (MUTANTS_PER_SEED + 1),
        "every seed and mutant went through the decoder");
    ok (fuzz_msg_accepted > seeds_accepted && fuzz_msg_accepted < runs / 2,
        "mutants reach both the accepting and the rejecting paths");
    diag ("%zu inputs, %zu accepted", runs, fuzz_msg_accepted);
    //  Random bytes, no seed at all: none can be a valid message.
    size_t accepted_before = fuzz_msg_accepted;
    for (int i = 0; i < 20000; i++) {
        size_t size = s_random (&state) % 512;
        for (size_t j = 0; j < size; j++)
            input [j] = (uint8_t) s_random (&state);
        LLVMFuzzerTestOneInput (input, size);
    }
    is_int ((long long) (fuzz_msg_accepted - accepted_before), 0,
            "20000 random inputs are all rejected, without a crash");
    return tap_done ();
}
