/*  =========================================================================
    app_exchange - total exchanges with checksummed pieces, counted so
    that the spawner's verification fails when one went wrong
    =========================================================================
*/
#include "app_exchange.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

//  Bounds of the parameters
#define ROUNDS_MAX 1000000
#define BYTES_MAX (64 * 1024 * 1024)
#define PAUSE_MAX 60000
//  Most 1% steps of the residual (1.01^60000 is about 1e259)
#define STEPS_MAX 60000

//  The fields of a row
enum {
    FIELD_MARK,                 //  Rank + 1: the row is this task's
    FIELD_ROUNDS,               //  Rounds completed
    FIELD_GOOD,                 //  Pieces received with the right bytes
    FIELD_BAD,                  //  Pieces with the wrong size or bytes
    FIELD_SETUP_BAD,            //  Request lists not as asked
    FIELD_DIGEST,               //  Sum of the tags of the good pieces
    FIELD_BYTES,                //  Bytes of the good pieces
    FIELD_BEGIN,                //  Start of the first timed round (s)
    FIELD_END                   //  End of the last round (s)
};

//  What both sides read from the parameters
typedef struct {
    int64_t tasks;              //  N
    int64_t rounds;             //  K
    int64_t bytes;              //  Piece size, or the largest
    bool random_sizes;          //  Sizes vary (0 included)
    uint64_t seed;              //  Of sizes and bytes
    int64_t warmup;             //  Rounds not timed
    int64_t pause_ms;           //  Sleep after each round
} settings_t;

//  A task's state: its row, and what it needs to build pieces
typedef struct {
    settings_t settings;        //  Parameters
    int64_t rank;               //  Our task
    double row [APP_EXCHANGE_FIELDS];  //  Our answer, checkpointed whole
    bool setup_checked;         //  Request lists checked on this daemon
    unsigned char **pieces;     //  One buffer per task, rebuilt per round
    size_t *sizes;              //  Their sizes
} exchange_t;


//  --------------------------------------------------------------------------
//  The pieces: sizes, bytes and tags are functions of (seed, round,
//  source, destination), so sender, receiver and spawner agree.

//  splitmix64 (Steele, Lea and Flood 2014): one step of the generator.
static uint64_t
s_mix (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t
s_piece_state (const settings_t *settings, int64_t round, int64_t source,
               int64_t destination)
{
    uint64_t state = settings->seed;
    state ^= s_mix (&state) + (uint64_t) round;
    state ^= s_mix (&state) + (uint64_t) source * 65537;
    state ^= s_mix (&state) + (uint64_t) destination;
    return state;
}

static size_t
s_piece_size (const settings_t *settings, int64_t round, int64_t source,
              int64_t destination)
{
    if (!settings->random_sizes)
        return (size_t) settings->bytes;
    uint64_t state = s_piece_state (settings, round, source, destination);
    uint64_t draw = s_mix (&state);
    if (draw % 5 == 0)
        return 0;
    return (size_t) ((draw >> 8) % (uint64_t) (settings->bytes + 1));
}

//  The tag a piece adds to its receiver's digest: 32 bits, so that K x N
//  of them add up exactly in a double.
static double
s_piece_tag (const settings_t *settings, int64_t round, int64_t source,
             int64_t destination)
{
    uint64_t state = s_piece_state (settings, round, source, destination);
    s_mix (&state);
    return (double) (s_mix (&state) >> 32);
}

static void
s_piece_fill (const settings_t *settings, int64_t round, int64_t source,
              int64_t destination, unsigned char *bytes, size_t size)
{
    uint64_t state = s_piece_state (settings, round, source, destination)
                   ^ 0x5bd1e995ULL;
    for (size_t i = 0; i < size; i += 8) {
        uint64_t word = s_mix (&state);
        for (size_t j = 0; j < 8 && i + j < size; j++)
            bytes [i + j] = (unsigned char) (word >> (8 * j));
    }
}

static bool
s_piece_right (const settings_t *settings, int64_t round, int64_t source,
               int64_t destination, const unsigned char *bytes, size_t size)
{
    if (size != s_piece_size (settings, round, source, destination))
        return false;
    uint64_t state = s_piece_state (settings, round, source, destination)
                   ^ 0x5bd1e995ULL;
    for (size_t i = 0; i < size; i += 8) {
        uint64_t word = s_mix (&state);
        for (size_t j = 0; j < 8 && i + j < size; j++)
            if (bytes [i + j] != (unsigned char) (word >> (8 * j)))
                return false;
    }
    return true;
}

//  How many unknowns task `asker` asks task `owner` for during set-up.
static int64_t
s_asked_count (int64_t asker, int64_t owner)
{
    return (asker + owner) % 3;
}

//  --------------------------------------------------------------------------
//  Parameters

static int
s_read_settings (zhash_t *params, settings_t *settings, char *reason,
                 size_t reason_size)
{
    double tasks, rounds, bytes, seed, warmup, pause;
    if (jace_param_integer (params, "job/tasks", 1, 1, 65536, &tasks, reason,
                            reason_size)
    ||  jace_param_integer (params, "exchange/rounds", 10, 1, ROUNDS_MAX,
                            &rounds, reason, reason_size)
    ||  jace_param_integer (params, "exchange/bytes", 1024, 0, BYTES_MAX,
                            &bytes, reason, reason_size)
    ||  jace_param_integer (params, "exchange/seed", 1, 0, 1e15, &seed,
                            reason, reason_size)
    ||  jace_param_integer (params, "exchange/warmup", 1, 0, ROUNDS_MAX,
                            &warmup, reason, reason_size)
    ||  jace_param_number (params, "exchange/pause_ms", 0, 0, PAUSE_MAX,
                           &pause, reason, reason_size))
        return -1;
    const char *hold = (const char *) zhash_lookup (params,
                                                    "exchange/hold_file");
    if (hold && *hold != '/') {
        snprintf (reason, reason_size, "exchange/hold_file = '%s' is not "
                  "an absolute path", hold);
        return -1;
    }
    const char *sizes = (const char *) zhash_lookup (params, "exchange/sizes");
    if (sizes && !streq (sizes, "fixed") && !streq (sizes, "random")) {
        snprintf (reason, reason_size, "exchange/sizes = '%s' is not fixed "
                  "or random", sizes);
        return -1;
    }
    if (warmup >= rounds) {
        snprintf (reason, reason_size, "exchange/warmup = %g leaves no "
                  "round of %g to time", warmup, rounds);
        return -1;
    }
    *settings = (settings_t) {
        (int64_t) tasks, (int64_t) rounds, (int64_t) bytes,
        !sizes || streq (sizes, "random"), (uint64_t) seed,
        (int64_t) warmup, (int64_t) pause
    };
    return 0;
}

//  --------------------------------------------------------------------------
//  Spawner side

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    settings_t *settings = (settings_t *) zmalloc (sizeof *settings);
    if (s_read_settings (params, settings, reason, reason_size)) {
        free (settings);
        return NULL;
    }
    return settings;
}

static void
s_unload (void **problem_p)
{
    free (*problem_p);
    *problem_p = NULL;
}

//  One row per task: the partition gives each task at least one row, so
//  with as many rows as tasks each gets exactly its own.
static void
s_shape (void *problem, int64_t *rows, int64_t *unknowns_per_row)
{
    *rows = ((settings_t *) problem)->tasks;
    *unknowns_per_row = APP_EXCHANGE_FIELDS;
}

//  What task d's row must say after K rounds.
static void
s_expected (const settings_t *settings, int64_t destination, double *good,
            double *digest, double *bytes)
{
    *good = *digest = *bytes = 0;
    for (int64_t round = 1; round <= settings->rounds; round++)
        for (int64_t source = 0; source < settings->tasks; source++) {
            *good += 1;
            *digest += s_piece_tag (settings, round, source, destination);
            *bytes += (double) s_piece_size (settings, round, source,
                                             destination);
        }
}

//  0: every piece of every round came once, right; NAN: something came
//  wrong or more often than sent (the job fails at once); else 1.01 to
//  the power of the rounds the slowest task has still to run (scaled to
//  at most STEPS_MAX steps).  A flat 1 until the last round made the
//  spawner's stall check, which asks for a fall of 1% over its window,
//  end long jobs that were progressing: every round now falls by 1%
//  (by 1% x STEPS_MAX / rounds beyond STEPS_MAX rounds).
static double
s_residual (void *problem, const double *x, int64_t count)
{
    const settings_t *settings = (const settings_t *) problem;
    if (count != settings->tasks * APP_EXCHANGE_FIELDS)
        return NAN;
    bool complete = true;
    double least = (double) settings->rounds;
    for (int64_t task = 0; task < settings->tasks; task++) {
        const double *row = x + task * APP_EXCHANGE_FIELDS;
        double good, digest, bytes;
        s_expected (settings, task, &good, &digest, &bytes);
        if (row [FIELD_MARK] != (double) (task + 1)
        ||  row [FIELD_BAD] != 0 || row [FIELD_SETUP_BAD] != 0
        ||  row [FIELD_ROUNDS] > (double) settings->rounds
        ||  row [FIELD_GOOD] > good || row [FIELD_BYTES] > bytes
        ||  row [FIELD_DIGEST] > digest)
            return NAN;
        if (row [FIELD_ROUNDS] != (double) settings->rounds
        ||  row [FIELD_GOOD] != good || row [FIELD_DIGEST] != digest
        ||  row [FIELD_BYTES] != bytes)
            complete = false;
        least = fmin (least, fmax (row [FIELD_ROUNDS], 0));
    }
    if (complete)
        return 0;
    double left = (double) settings->rounds - least;
    double scale = settings->rounds > STEPS_MAX
                 ? STEPS_MAX / (double) settings->rounds : 1;
    return pow (1.01, left * scale);
}

//  --------------------------------------------------------------------------
//  Daemon side

static double
s_seconds (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec + (double) now.tv_nsec / 1e9;
}

static void
s_destroy (void **state_p)
{
    exchange_t *self = (exchange_t *) *state_p;
    if (self) {
        for (int64_t task = 0; task < self->settings.tasks; task++)
            free (self->pieces [task]);
        free (self->pieces);
        free (self->sizes);
        free (self);
        *state_p = NULL;
    }
}

//  Ask every other task for the first (r + s) mod 3 unknowns of its row.
static void
s_request (exchange_t *self, jace_task_t *task)
{
    int64_t indices [2];
    for (int64_t owner = 0; owner < self->settings.tasks; owner++) {
        int64_t count = s_asked_count (self->rank, owner);
        if (owner == self->rank || count == 0)
            continue;
        int64_t first = jace_task_row_of (task, owner) * APP_EXCHANGE_FIELDS;
        for (int64_t i = 0; i < count; i++)
            indices [i] = first + i;
        jace_task_request (task, owner, indices, (size_t) count);
    }
}

static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    settings_t settings;
    if (s_read_settings (jace_task_params (task), &settings, reason,
                         reason_size))
        return NULL;
    //  It sends no vectors: a synchronous iteration would wait for ever
    //  for the values of the tasks it asked during set-up.
    const char *mode = jace_task_param (task, "job/mode");
    if (mode && streq (mode, "sync")) {
        snprintf (reason, reason_size, "the exchange application runs "
                  "with job/mode = async only");
        return NULL;
    }
    if (settings.tasks != jace_task_count (task)
    ||  jace_task_row_count (task) != 1) {
        snprintf (reason, reason_size, "exchange job of %" PRId64 " tasks "
                  "run as %" PRId64 " tasks, or a block of %" PRId64
                  " rows", settings.tasks, jace_task_count (task),
                  jace_task_row_count (task));
        return NULL;
    }
    exchange_t *self = (exchange_t *) zmalloc (sizeof *self);
    self->settings = settings;
    self->rank = jace_task_rank (task);
    self->row [FIELD_MARK] = (double) (self->rank + 1);
    self->pieces = (unsigned char **) zmalloc ((size_t) settings.tasks
                                               * sizeof (void *));
    self->sizes = (size_t *) zmalloc ((size_t) settings.tasks
                                      * sizeof (size_t));
    s_request (self, task);
    return self;
}

//  Every task asked us for exactly what s_request says (checked once
//  per daemon: a replacement gets the lists again).
static void
s_check_requests (exchange_t *self, jace_task_t *task)
{
    int64_t first = jace_task_first_row (task) * APP_EXCHANGE_FIELDS;
    for (int64_t asker = 0; asker < self->settings.tasks; asker++) {
        if (asker == self->rank)
            continue;
        size_t count = 0;
        const int64_t *indices = jace_task_requested (task, asker, &count);
        bool right = (int64_t) count == s_asked_count (asker, self->rank);
        for (size_t i = 0; right && i < count; i++)
            right = indices [i] == first + (int64_t) i;
        if (!right)
            self->row [FIELD_SETUP_BAD]++;
    }
    self->setup_checked = true;
}

static void
s_build_pieces (exchange_t *self, int64_t round)
{
    for (int64_t to = 0; to < self->settings.tasks; to++) {
        size_t size = s_piece_size (&self->settings, round, self->rank, to);
        free (self->pieces [to]);
        self->pieces [to] = size ? (unsigned char *) malloc (size) : NULL;
        s_piece_fill (&self->settings, round, self->rank, to,
                      self->pieces [to], size);
        self->sizes [to] = size;
    }
}

static void
s_count_pieces (exchange_t *self, int64_t round, const void **received,
                const size_t *sizes)
{
    for (int64_t source = 0; source < self->settings.tasks; source++) {
        if (!s_piece_right (&self->settings, round, source, self->rank,
                            (const unsigned char *) received [source],
                            sizes [source])) {
            self->row [FIELD_BAD]++;
            continue;
        }
        self->row [FIELD_GOOD]++;
        self->row [FIELD_DIGEST] += s_piece_tag (&self->settings, round,
                                                 source, self->rank);
        self->row [FIELD_BYTES] += (double) sizes [source];
    }
}

//  exchange/hold_file: the last round waits until this file exists, so
//  that a test can act on the job's progress (crash, drain, resume) and
//  know the job is still there, however fast the machine runs rounds.
//  The file is looked for on the daemon's machine.
static bool
s_held (jace_task_t *task)
{
    const char *hold = jace_task_param (task, "exchange/hold_file");
    return hold && access (hold, F_OK) != 0;
}

//  One round of the exchange; after the last, nothing but a short sleep
//  (the job ends when every task has said it is done).
static int
s_iterate (jace_task_t *task, void *state)
{
    exchange_t *self = (exchange_t *) state;
    if (!self->setup_checked)
        s_check_requests (self, task);
    int64_t done = (int64_t) self->row [FIELD_ROUNDS];
    if (done >= self->settings.rounds) {
        jace_task_set_change (task, 0);
        zclock_sleep (10);
        return 0;
    }
    if (done == self->settings.rounds - 1 && s_held (task)) {
        jace_task_set_change (task, 1);
        zclock_sleep (self->settings.pause_ms ? (int) self->settings.pause_ms
                                              : 10);
        return 0;
    }
    //  The runtime numbers calls as we count rounds, restored or not.
    if (jace_task_exchanges (task) != done)
        self->row [FIELD_BAD]++;
    int64_t round = done + 1;
    s_build_pieces (self, round);
    int64_t tasks = self->settings.tasks;
    const void **received = (const void **) zmalloc ((size_t) tasks
                                                     * sizeof (void *));
    size_t *sizes = (size_t *) zmalloc ((size_t) tasks * sizeof (size_t));
    double begin = s_seconds ();
    int rc = jace_task_alltoallv (task, (const void *const *) self->pieces,
                                  self->sizes, received, sizes);
    if (rc == 0) {
        if (round == self->settings.warmup + 1)
            self->row [FIELD_BEGIN] = begin;
        self->row [FIELD_END] = s_seconds ();
        s_count_pieces (self, round, received, sizes);
        self->row [FIELD_ROUNDS] = (double) round;
        jace_task_set_change (task, 1);
    }
    free (received);
    free (sizes);
    if (rc == 0 && self->settings.pause_ms)
        zclock_sleep ((int) self->settings.pause_ms);
    return rc;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    exchange_t *self = (exchange_t *) state;
    *first = self->rank * APP_EXCHANGE_FIELDS;
    *count = APP_EXCHANGE_FIELDS;
    return self->row;
}

//  A checkpoint is the row: rounds done and what they brought.
static const void *
s_checkpoint (void *state, size_t *size)
{
    exchange_t *self = (exchange_t *) state;
    *size = sizeof self->row;
    return self->row;
}

static int
s_restore (jace_task_t *task, void *state, const void *bytes, size_t size,
           char *reason, size_t reason_size)
{
    exchange_t *self = (exchange_t *) state;
    double row [APP_EXCHANGE_FIELDS];
    if (size != sizeof row) {
        snprintf (reason, reason_size, "checkpoint of %zu bytes, a row is "
                  "%zu", size, sizeof row);
        return -1;
    }
    memcpy (row, bytes, size);
    if (row [FIELD_MARK] != (double) (self->rank + 1)
    ||  !(row [FIELD_ROUNDS] >= 0)
    ||  row [FIELD_ROUNDS] > (double) self->settings.rounds) {
        snprintf (reason, reason_size, "checkpoint is not task %" PRId64
                  "'s row", self->rank);
        return -1;
    }
    memcpy (self->row, row, size);
    return 0;
}

//  Every key the application reads (s_read_settings; job/mode and
//  job/tasks belong to the runtime and the spawner)
static const char *const s_keys [] = {
    "exchange/rounds", "exchange/bytes", "exchange/seed", "exchange/warmup",
    "exchange/pause_ms", "exchange/sizes", "exchange/hold_file", NULL
};

const jace_app_t app_exchange = {
    .name = "exchange",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .checkpoint = s_checkpoint,
    .restore = s_restore,
    .keys = s_keys,
    .residual_meaning = "0 once every piece of every round came once and "
                        "intact, else 1.01 to the rounds left"
};
