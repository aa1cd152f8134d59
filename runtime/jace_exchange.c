/*  =========================================================================
    jace_exchange - one task's side of the job's total exchanges, routed
    as a plan says and recovered when a task dies

    The routes we take part in become two fixed tables: the transfers we
    receive (step, sender) and the transfers we send (step, receiver), the
    latter with one slot per piece they carry.  A round fills the slots
    (our own pieces from the log, others' as they arrive), sends each
    transfer once every transfer of an earlier step is in (or given up),
    and keeps the pieces for us, one per source.
    =========================================================================
*/
#include "jace_exchange.h"

#define FALLBACK_MSEC_DEFAULT 5000
#define LOG_LIMIT_DEFAULT ((size_t) 256 * 1024 * 1024)
//  Bytes of transfers of rounds we have not begun that we keep: at most
//  a round or two of pieces in a job that runs well; a replacement far
//  behind keeps what the others send it, and pulls the rest.
#define EARLY_LIMIT ((size_t) 256 * 1024 * 1024)
//  Pulls for rounds we have not begun that we remember, per task.
#define WANTS_PER_TASK 4

//  A route we take part in, and where its piece leaves us.
typedef struct {
    jace_route_t route;         //  The route
    int64_t slot;               //  Our slot carrying it on, or -1
} entry_t;

//  A transfer we receive in each round.
typedef struct {
    int64_t step;               //  Its step
    int64_t from;               //  Who sends it
} in_t;

//  A transfer we send in each round, with its slots.
typedef struct {
    int64_t step;               //  Its step
    int64_t to;                 //  Who receives it
    size_t first;               //  First of its slots
    size_t count;               //  Its slots
} out_t;

//  One piece a transfer of ours carries, as held this round.
typedef struct {
    int64_t source;             //  Whose piece
    int64_t destination;        //  For whom
    unsigned char *bytes;       //  Held bytes, or NULL
    size_t size;                //  Their size
    size_t out;                 //  The transfer carrying it
    bool present;               //  Held, or handled (sent or forwarded)
    bool owned;                 //  bytes are ours to free (else the log's)
} slot_t;

//  Our pieces of one round, kept for pulls and replacements.
typedef struct {
    int64_t round;              //  Exchange number
    unsigned char **buffers;    //  Per task, owned (NULL when empty)
    size_t *sizes;              //  Per task
    size_t count;               //  Tasks (entries of each array)
    bool *send;                 //  Unrouted pieces sent at once, or NULL
                                //  for all; owned
    size_t bytes;               //  Memory it holds
} log_entry_t;

//  The piece for us from one source, this round.
typedef struct {
    unsigned char *bytes;       //  Owned copy, NULL when empty
    size_t size;                //  Bytes
    bool present;               //  Arrived
    bool expected;              //  Counted in `missing` until it arrives
} arrival_t;

//  A transfer of a round we have not begun, kept for when we do.
typedef struct {
    int64_t round;              //  Its round
    zmsg_t *zmsg;               //  The message as it came, owned
    size_t bytes;               //  Its size, for the bound
} early_t;

//  A pull for a round we have not begun: answered when we begin it.
typedef struct {
    int64_t task;               //  Who asked
    int64_t round;              //  For which round
} want_t;

struct _jace_exchange_t {
    char job [JACE_ID_MAX];     //  Job id
    jace_key_t key;             //  Job key
    int64_t rank;               //  Our task
    int64_t tasks;              //  Tasks in the job
    int64_t epoch;              //  Our epoch
    jace_exchange_send_fn *send;    //  Transport
    jace_exchange_piece_fn *on_piece;   //  Pieces for us, or NULL
    void *arg;                  //  For both callbacks
    int64_t fallback_msec;      //  Longest wait on the schedule
    size_t log_limit;           //  Bytes of our log

    entry_t *entries;           //  Our routes, by (source, destination)
    size_t entry_count;         //  Their number
    in_t *ins;                  //  Transfers we receive, by (step, from)
    size_t in_count;            //  Their number
    out_t *outs;                //  Transfers we send, by (step, to)
    size_t out_count;           //  Their number
    slot_t *slots;              //  Slots of outs, in order
    size_t slot_count;          //  Their number

    int64_t round;              //  Round last begun, -1 before the first
    bool begun;                 //  A round was begun
    bool *in_done;              //  Per in: arrived or given up
    bool *out_sent;             //  Per out: sent
    arrival_t *arrivals;        //  Per task: the piece for us
    size_t missing;             //  Expected pieces not yet in
    int64_t deadline;           //  When the round stops waiting (msec)
    int64_t next_pull;          //  When we may pull again (msec)
    int64_t newest_heard;       //  Largest round any task spoke of
    bool recovering;            //  A replacement that has not caught up
                                //  with the others yet

    zlistx_t *log;              //  log_entry_t, oldest first
    size_t log_bytes;           //  Their bytes
    zlistx_t *early;            //  early_t, in arrival order
    size_t early_bytes;         //  Their bytes
    zlistx_t *wants;            //  want_t
    char failure [256];         //  Why the round cannot end, or ""
    uint64_t duplicates;        //  Copies discarded
    uint64_t pulls;             //  Pulls sent
    uint64_t forwarded;         //  Late pieces sent straight on
};


//  --------------------------------------------------------------------------
//  Containers' destructors

static void
s_log_entry_destroy (void **item_p)
{
    log_entry_t *entry = (log_entry_t *) *item_p;
    if (entry) {
        for (size_t i = 0; i < entry->count; i++)
            free (entry->buffers [i]);
        free (entry->sizes);
        free (entry->send);
        free (entry->buffers);
        free (entry);
        *item_p = NULL;
    }
}

static void
s_early_destroy (void **item_p)
{
    early_t *early = (early_t *) *item_p;
    if (early) {
        zmsg_destroy (&early->zmsg);
        free (early);
        *item_p = NULL;
    }
}

static void
s_free_item (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

jace_exchange_t *
jace_exchange_new (const char *job, const jace_key_t *key, int64_t rank,
                   int64_t tasks, jace_exchange_send_fn *send,
                   jace_exchange_piece_fn *on_piece, void *arg)
{
    assert (job && key && send);
    assert (tasks >= 1 && rank >= 0 && rank < tasks);
    jace_exchange_t *self = (jace_exchange_t *) zmalloc (sizeof *self);
    snprintf (self->job, sizeof self->job, "%s", job);
    self->key = *key;
    self->rank = rank;
    self->tasks = tasks;
    self->epoch = 1;
    self->send = send;
    self->on_piece = on_piece;
    self->arg = arg;
    self->fallback_msec = FALLBACK_MSEC_DEFAULT;
    self->log_limit = LOG_LIMIT_DEFAULT;
    self->round = -1;
    self->newest_heard = -1;
    self->arrivals = (arrival_t *) zmalloc ((size_t) tasks
                                            * sizeof (arrival_t));
    self->log = zlistx_new ();
    self->early = zlistx_new ();
    self->wants = zlistx_new ();
    zlistx_set_destructor (self->log, s_log_entry_destroy);
    zlistx_set_destructor (self->early, s_early_destroy);
    zlistx_set_destructor (self->wants, s_free_item);
    return self;
}

//  Free the pieces our transfers held.
static void
s_clear_slots (jace_exchange_t *self)
{
    for (size_t i = 0; i < self->slot_count; i++) {
        slot_t *slot = &self->slots [i];
        if (slot->owned)
            free (slot->bytes);
        slot->bytes = NULL;
        slot->size = 0;
        slot->present = false;
        slot->owned = false;
    }
}

//  Free the pieces for us.
static void
s_clear_arrivals (jace_exchange_t *self)
{
    for (int64_t source = 0; source < self->tasks; source++) {
        arrival_t *arrival = &self->arrivals [source];
        free (arrival->bytes);
        *arrival = (arrival_t) { NULL, 0, false, false };
    }
    self->missing = 0;
}

static void
s_free_routes (jace_exchange_t *self)
{
    s_clear_slots (self);
    free (self->entries);
    free (self->ins);
    free (self->outs);
    free (self->slots);
    free (self->in_done);
    free (self->out_sent);
    self->entries = NULL;
    self->ins = NULL;
    self->outs = NULL;
    self->slots = NULL;
    self->in_done = NULL;
    self->out_sent = NULL;
    self->entry_count = self->in_count = self->out_count = 0;
    self->slot_count = 0;
}

void
jace_exchange_destroy (jace_exchange_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_exchange_t *self = *self_p;
        s_free_routes (self);
        s_clear_arrivals (self);
        free (self->arrivals);
        zlistx_destroy (&self->log);
        zlistx_destroy (&self->early);
        zlistx_destroy (&self->wants);
        jace_key_wipe (&self->key);
        free (self);
        *self_p = NULL;
    }
}

void
jace_exchange_set_epoch (jace_exchange_t *self, int64_t epoch)
{
    assert (self);
    assert (epoch >= 0);
    self->epoch = epoch;
    //  A task placed again (epoch > 1) runs again rounds the others
    //  have finished: their transfers went to its predecessor.
    self->recovering = epoch > 1;
}

void
jace_exchange_set_fallback (jace_exchange_t *self, int64_t msec)
{
    assert (self);
    assert (msec > 0);
    self->fallback_msec = msec;
}

void
jace_exchange_set_log_limit (jace_exchange_t *self, size_t bytes)
{
    assert (self);
    self->log_limit = bytes;
}

//  --------------------------------------------------------------------------
//  Routes

static int
s_compare_routes (const void *first_p, const void *second_p)
{
    const jace_route_t *first = (const jace_route_t *) first_p;
    const jace_route_t *second = (const jace_route_t *) second_p;
    if (first->source != second->source)
        return first->source < second->source ? -1 : 1;
    return first->destination < second->destination ? -1
         : first->destination > second->destination;
}

static bool
s_route_touches (const jace_route_t *route, int64_t rank)
{
    if (route->source == rank || route->destination == rank)
        return true;
    for (size_t hop = 0; hop < route->hop_count; hop++)
        if (route->hops [hop].from == rank || route->hops [hop].to == rank)
            return true;
    return false;
}

//  A route is chained hops between distinct tasks of the job, in
//  increasing steps, from its source to its destination, through us.
static int
s_check_route (const jace_exchange_t *self, const jace_route_t *route,
               char *reason, size_t reason_size)
{
    int64_t tasks = self->tasks;
    bool valid = route->source >= 0 && route->source < tasks
              && route->destination >= 0 && route->destination < tasks
              && route->source != route->destination
              && route->hop_count >= 1
              && route->hop_count <= JACE_ROUTE_HOPS_MAX;
    int64_t at = route->source;
    int64_t step = -1;
    for (size_t hop = 0; valid && hop < route->hop_count; hop++) {
        const jace_hop_t *next = &route->hops [hop];
        valid = next->from == at && next->to >= 0 && next->to < tasks
             && next->to != route->source && next->step > step;
        //  A task is on a route once: it has one slot for its piece.
        for (size_t earlier = 0; valid && earlier < hop; earlier++)
            valid = route->hops [earlier].to != next->to;
        at = next->to;
        step = next->step;
    }
    if (valid && at == route->destination
    &&  s_route_touches (route, self->rank))
        return 0;
    snprintf (reason, reason_size, "route %" PRId64 " -> %" PRId64 " (%zu "
              "hops) is not distinct tasks chained in increasing steps "
              "through task %" PRId64, route->source, route->destination,
              route->hop_count, self->rank);
    return -1;
}

static int
s_compare_ins (const void *first_p, const void *second_p)
{
    const in_t *first = (const in_t *) first_p;
    const in_t *second = (const in_t *) second_p;
    if (first->step != second->step)
        return first->step < second->step ? -1 : 1;
    return first->from < second->from ? -1 : first->from > second->from;
}

//  One piece leaving us: the hop's step and receiver, and whose route.
typedef struct {
    int64_t step;               //  Step of the hop
    int64_t to;                 //  Receiver
    size_t entry;               //  Route it belongs to
} leaving_t;

static int
s_compare_leaving (const void *first_p, const void *second_p)
{
    const leaving_t *first = (const leaving_t *) first_p;
    const leaving_t *second = (const leaving_t *) second_p;
    if (first->step != second->step)
        return first->step < second->step ? -1 : 1;
    if (first->to != second->to)
        return first->to < second->to ? -1 : 1;
    return first->entry < second->entry ? -1 : first->entry > second->entry;
}

//  The transfers we receive: one per (step, sender) of the hops to us.
static void
s_build_ins (jace_exchange_t *self)
{
    self->ins = (in_t *) zmalloc ((self->entry_count + 1) * sizeof (in_t));
    size_t count = 0;
    for (size_t i = 0; i < self->entry_count; i++) {
        const jace_route_t *route = &self->entries [i].route;
        for (size_t hop = 0; hop < route->hop_count; hop++)
            if (route->hops [hop].to == self->rank)
                self->ins [count++] = (in_t) {
                    route->hops [hop].step, route->hops [hop].from
                };
    }
    qsort (self->ins, count, sizeof (in_t), s_compare_ins);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (unique == 0 || s_compare_ins (&self->ins [unique - 1],
                                          &self->ins [i]))
            self->ins [unique++] = self->ins [i];
    self->in_count = unique;
}

//  The transfers we send: one per (step, receiver) of the hops from us,
//  each with a slot per piece.
static void
s_build_outs (jace_exchange_t *self)
{
    leaving_t *leaving = (leaving_t *) zmalloc ((self->entry_count + 1)
                                                * sizeof (leaving_t));
    size_t count = 0;
    for (size_t i = 0; i < self->entry_count; i++) {
        entry_t *entry = &self->entries [i];
        entry->slot = -1;
        for (size_t hop = 0; hop < entry->route.hop_count; hop++)
            if (entry->route.hops [hop].from == self->rank)
                leaving [count++] = (leaving_t) {
                    entry->route.hops [hop].step, entry->route.hops [hop].to,
                    i
                };
    }
    qsort (leaving, count, sizeof (leaving_t), s_compare_leaving);
    self->slots = (slot_t *) zmalloc ((count + 1) * sizeof (slot_t));
    self->outs = (out_t *) zmalloc ((count + 1) * sizeof (out_t));
    self->slot_count = count;
    for (size_t i = 0; i < count; i++) {
        out_t *last = self->out_count ? &self->outs [self->out_count - 1]
                                      : NULL;
        if (!last || last->step != leaving [i].step
        ||  last->to != leaving [i].to) {
            last = &self->outs [self->out_count++];
            *last = (out_t) { leaving [i].step, leaving [i].to, i, 0 };
        }
        last->count++;
        entry_t *entry = &self->entries [leaving [i].entry];
        entry->slot = (int64_t) i;
        self->slots [i].out = self->out_count - 1;
        self->slots [i].source = entry->route.source;
        self->slots [i].destination = entry->route.destination;
    }
    free (leaving);
}

static entry_t *
s_entry (const jace_exchange_t *self, int64_t source, int64_t destination)
{
    if (self->entry_count == 0)
        return NULL;
    jace_route_t key = { .source = source, .destination = destination };
    return (entry_t *) bsearch (&key, self->entries, self->entry_count,
                                sizeof (entry_t), s_compare_routes);
}

//  True if the routes given are the ones we have.
static bool
s_same_routes (const jace_exchange_t *self, const jace_route_t *sorted,
               size_t count)
{
    if (count != self->entry_count)
        return false;
    for (size_t i = 0; i < count; i++) {
        const jace_route_t *ours = &self->entries [i].route;
        if (s_compare_routes (ours, &sorted [i])
        ||  ours->hop_count != sorted [i].hop_count
        ||  memcmp (ours->hops, sorted [i].hops,
                    ours->hop_count * sizeof (jace_hop_t)))
            return false;
    }
    return true;
}

//  Every route valid, each (source, destination) once (sorted by them).
static int
s_check_routes (const jace_exchange_t *self, const jace_route_t *sorted,
                size_t count, char *reason, size_t reason_size)
{
    for (size_t i = 0; i < count; i++) {
        if (s_check_route (self, &sorted [i], reason, reason_size))
            return -1;
        if (i > 0 && s_compare_routes (&sorted [i - 1], &sorted [i]) == 0) {
            snprintf (reason, reason_size, "route %" PRId64 " -> %" PRId64
                      " given twice", sorted [i].source,
                      sorted [i].destination);
            return -1;
        }
    }
    return 0;
}

static void s_degrade (jace_exchange_t *self, int64_t now);

int
jace_exchange_set_routes (jace_exchange_t *self, const jace_route_t *routes,
                          size_t count, int64_t now, char *reason,
                          size_t reason_size)
{
    assert (self);
    assert (routes || count == 0);
    jace_route_t *sorted = (jace_route_t *) zmalloc ((count + 1)
                                                     * sizeof (jace_route_t));
    if (count)
        memcpy (sorted, routes, count * sizeof (jace_route_t));
    qsort (sorted, count, sizeof (jace_route_t), s_compare_routes);
    if (s_check_routes (self, sorted, count, reason, reason_size)) {
        free (sorted);
        return -1;
    }
    if (s_same_routes (self, sorted, count)) {
        free (sorted);
        return 0;
    }
    //  The round under way was planned on the old routes: it ends by
    //  pulls, and the new ones serve from the next round.
    bool under_way = self->begun;
    if (under_way)
        s_degrade (self, now);
    s_free_routes (self);
    self->entries = (entry_t *) zmalloc ((count + 1) * sizeof (entry_t));
    for (size_t i = 0; i < count; i++)
        self->entries [i].route = sorted [i];
    self->entry_count = count;
    free (sorted);
    s_build_ins (self);
    s_build_outs (self);
    self->in_done = (bool *) zmalloc ((self->in_count + 1) * sizeof (bool));
    self->out_sent = (bool *) zmalloc ((self->out_count + 1) * sizeof (bool));
    for (size_t i = 0; under_way && i < self->in_count; i++)
        self->in_done [i] = true;
    for (size_t i = 0; under_way && i < self->out_count; i++)
        self->out_sent [i] = true;
    return 0;
}

bool
jace_exchange_has_routes (const jace_exchange_t *self)
{
    assert (self);
    return self->entry_count > 0;
}

//  --------------------------------------------------------------------------
//  Sending

static void
s_send_pieces (jace_exchange_t *self, int64_t to, int64_t round,
               int64_t step, const jace_piece_t *pieces, size_t count)
{
    jace_msg_t *msg = jace_transfer_encode (self->job, &self->key,
                                            self->rank, self->epoch,
                                            JACE_TRANSFER_PIECES, round,
                                            step, pieces, count);
    self->send (self->arg, to, &msg);
}

//  One piece straight to its destination, outside the schedule.
static void
s_send_direct (jace_exchange_t *self, int64_t round, const jace_piece_t *piece)
{
    s_send_pieces (self, piece->destination, round, JACE_TRANSFER_DIRECT,
                   piece, 1);
}

static void
s_send_signal (jace_exchange_t *self, int64_t to, jace_transfer_kind_t kind,
               int64_t round)
{
    jace_msg_t *msg = jace_transfer_encode (self->job, &self->key,
                                            self->rank, self->epoch, kind,
                                            round, JACE_TRANSFER_DIRECT,
                                            NULL, 0);
    self->send (self->arg, to, &msg);
}

//  --------------------------------------------------------------------------
//  The log of our own pieces

static log_entry_t *
s_log_find (const jace_exchange_t *self, int64_t round)
{
    for (log_entry_t *entry = (log_entry_t *) zlistx_first (self->log);
         entry; entry = (log_entry_t *) zlistx_next (self->log))
        if (entry->round == round)
            return entry;
    return NULL;
}

static jace_piece_t
s_log_piece (const jace_exchange_t *self, const log_entry_t *entry,
             int64_t destination)
{
    return (jace_piece_t) {
        self->rank, destination, entry->buffers [destination],
        entry->sizes [destination]
    };
}

static log_entry_t *
s_log_add (jace_exchange_t *self, int64_t round, const void *const *buffers,
           const size_t *sizes, const bool *send)
{
    size_t count = (size_t) self->tasks;
    log_entry_t *entry = (log_entry_t *) zmalloc (sizeof *entry);
    entry->round = round;
    entry->count = count;
    //  What the round costs to keep, empty pieces included: rounds of
    //  nothing must not pile up without bound either.
    entry->bytes = sizeof *entry + count * (sizeof (void *) + sizeof (size_t)
                                            + (send ? sizeof (bool) : 0));
    entry->buffers = (unsigned char **) zmalloc (count * sizeof (void *));
    entry->sizes = (size_t *) zmalloc (count * sizeof (size_t));
    for (size_t task = 0; task < count; task++) {
        assert (buffers [task] || sizes [task] == 0);
        entry->sizes [task] = sizes [task];
        if (sizes [task]) {
            entry->buffers [task] = (unsigned char *) malloc (sizes [task]);
            assert (entry->buffers [task]);
            memcpy (entry->buffers [task], buffers [task], sizes [task]);
        }
        entry->bytes += sizes [task];
    }
    if (send) {
        entry->send = (bool *) zmalloc (count * sizeof (bool));
        memcpy (entry->send, send, count * sizeof (bool));
    }
    zlistx_add_end (self->log, entry);
    self->log_bytes += entry->bytes;
    return entry;
}

//  Drop our pieces of `round`, if the log holds them.
static void
s_log_drop (jace_exchange_t *self, int64_t round)
{
    const log_entry_t *entry = s_log_find (self, round);
    if (entry) {                //  s_log_find left the cursor on it
        self->log_bytes -= entry->bytes;
        zlistx_delete (self->log, zlistx_cursor (self->log));
    }
}

//  Drop the oldest rounds past the bound, never round 0 (the request
//  lists every replacement needs) nor the round under way.
static void
s_log_trim (jace_exchange_t *self)
{
    log_entry_t *entry = (log_entry_t *) zlistx_first (self->log);
    while (entry && self->log_bytes > self->log_limit) {
        if (entry->round == 0 || entry->round == self->round) {
            entry = (log_entry_t *) zlistx_next (self->log);
            continue;
        }
        self->log_bytes -= entry->bytes;
        zlistx_delete (self->log, zlistx_cursor (self->log));
        entry = (log_entry_t *) zlistx_first (self->log);
    }
}

//  --------------------------------------------------------------------------
//  The round under way

static bool
s_done (const jace_exchange_t *self)
{
    if (!self->begun || self->missing > 0)
        return false;
    for (size_t i = 0; i < self->out_count; i++)
        if (!self->out_sent [i])
            return false;
    return true;
}

void
jace_exchange_missing (const jace_exchange_t *self, char *text, size_t size)
{
    assert (self && text && size > 0);
    *text = 0;
    if (!self->begun || s_done (self))
        return;
    size_t used = 0;
    const char *heading = "pieces from";
    for (int64_t source = 0; source < self->tasks && used < size; source++)
        if (self->arrivals [source].expected
        &&  !self->arrivals [source].present) {
            used += (size_t) snprintf (text + used, size - used, "%s %"
                                       PRId64, heading, source);
            heading = "";
        }
    heading = used ? ", transfers from" : "transfers from";
    for (size_t i = 0; i < self->in_count && used < size; i++)
        if (!self->in_done [i]) {
            used += (size_t) snprintf (text + used, size - used, "%s %"
                                       PRId64 " (step %" PRId64 ")", heading,
                                       self->ins [i].from, self->ins [i].step);
            heading = "";
        }
    size_t unsent = 0;
    for (size_t i = 0; i < self->out_count; i++)
        unsent += !self->out_sent [i];
    if (unsent && used < size)
        snprintf (text + used, size - used, "%s%zu transfers to send",
                  used ? ", " : "", unsent);
}

//  The first copy of a piece for us is kept; any other is a duplicate.
static void
s_deliver (jace_exchange_t *self, int64_t source, const void *bytes,
           size_t size)
{
    arrival_t *arrival = &self->arrivals [source];
    if (arrival->present) {
        self->duplicates++;
        return;
    }
    if (size) {
        arrival->bytes = (unsigned char *) malloc (size);
        assert (arrival->bytes);
        memcpy (arrival->bytes, bytes, size);
    }
    arrival->size = size;
    arrival->present = true;
    if (arrival->expected)
        self->missing--;
    if (self->on_piece)
        self->on_piece (self->arg, self->round, source, bytes, size);
}

//  Send one of our transfers with the pieces it holds (all of them,
//  unless the round gave up waiting); a piece that comes later goes
//  straight to its destination.  The pieces stay until the next round:
//  if the receiver's daemon dies, its replacement gets them again.
static void
s_send_out (jace_exchange_t *self, size_t index)
{
    const out_t *out = &self->outs [index];
    jace_piece_t *pieces = (jace_piece_t *) zmalloc ((out->count + 1)
                                                     * sizeof (jace_piece_t));
    size_t count = 0;
    for (size_t i = out->first; i < out->first + out->count; i++)
        if (self->slots [i].present)
            pieces [count++] = (jace_piece_t) {
                self->slots [i].source, self->slots [i].destination,
                self->slots [i].bytes, self->slots [i].size
            };
    s_send_pieces (self, out->to, self->round, out->step, pieces, count);
    free (pieces);
    self->out_sent [index] = true;
}

//  Send every transfer whose step may go: none of the transfers we
//  receive in an earlier step is still awaited.
static void
s_progress (jace_exchange_t *self)
{
    if (!self->begun)
        return;
    int64_t awaited = INT64_MAX;
    for (size_t i = 0; i < self->in_count; i++)
        if (!self->in_done [i] && self->ins [i].step < awaited)
            awaited = self->ins [i].step;
    for (size_t i = 0; i < self->out_count; i++)
        if (!self->out_sent [i] && self->outs [i].step <= awaited)
            s_send_out (self, i);
}

//  Ask every source whose piece we miss for it, directly.
static void
s_pull_missing (jace_exchange_t *self, int64_t now)
{
    for (int64_t source = 0; source < self->tasks; source++) {
        const arrival_t *arrival = &self->arrivals [source];
        if (arrival->expected && !arrival->present) {
            s_send_signal (self, source, JACE_TRANSFER_PULL, self->round);
            self->pulls++;
        }
    }
    self->next_pull = now + self->fallback_msec;
}

//  Stop waiting on the schedule: send what we hold, pull what we miss.
static void
s_degrade (jace_exchange_t *self, int64_t now)
{
    if (!self->begun)
        return;
    for (size_t i = 0; i < self->in_count; i++)
        self->in_done [i] = true;
    s_progress (self);
    if (self->missing > 0)
        s_pull_missing (self, now);
    self->next_pull = now + self->fallback_msec;
    self->deadline = now + self->fallback_msec;
}

//  Behind what the others speak of, the pieces and transfers of our
//  round will not come unless asked for: no task can be two rounds ahead
//  of one still in a round, so two rounds behind we are a replacement
//  running rounds again.  So is a replacement in a round the others have
//  begun: they sent its transfers to its predecessor, on routes that may
//  have changed since (it may run in another cluster), and a job's one
//  set-up round has no next round to leave it behind.  Then we do not
//  wait on the schedule: we send what we hold and pull what we miss.  (A
//  replacement in the set-up round waited exchange/fallback_seconds, 5 s,
//  for transfers its peers, done with the round, never sent.)
//  A replacement has caught up once it heard from the others and is in a
//  round none of them has begun, or done with one none of them is past.
static void
s_end_recovery (jace_exchange_t *self)
{
    if (self->recovering && self->begun && self->newest_heard >= 0
    &&  (self->round > self->newest_heard
         || (self->round == self->newest_heard && s_done (self))))
        self->recovering = false;
}

static void
s_catch_up (jace_exchange_t *self, int64_t now)
{
    s_end_recovery (self);
    if (!self->begun || now < self->next_pull || s_done (self))
        return;
    int64_t behind = self->newest_heard - self->round;
    if (behind >= 2 || (self->recovering && behind >= 0))
        s_degrade (self, now);
}

static void
s_expect_pieces (jace_exchange_t *self, const bool *expect)
{
    self->missing = 0;
    for (int64_t source = 0; source < self->tasks; source++) {
        arrival_t *arrival = &self->arrivals [source];
        arrival->expected = source != self->rank
                         && (s_entry (self, source, self->rank)
                             || !expect || expect [source]);
        if (arrival->expected)
            self->missing++;
    }
}

//  Our own pieces: routed ones wait in their slots, the others go now.
static void
s_load_own (jace_exchange_t *self, const log_entry_t *entry)
{
    for (int64_t to = 0; to < self->tasks; to++) {
        if (to == self->rank)
            continue;
        const entry_t *route = s_entry (self, self->rank, to);
        if (route) {
            assert (route->slot >= 0);
            slot_t *slot = &self->slots [route->slot];
            slot->bytes = entry->buffers [to];
            slot->size = entry->sizes [to];
            slot->present = true;
            slot->owned = false;
        }
        else
        if (!entry->send || entry->send [to]) {
            jace_piece_t piece = s_log_piece (self, entry, to);
            s_send_direct (self, self->round, &piece);
        }
    }
}

//  Pulls that came before we began this round are answered now, and so
//  are those of earlier rounds: from the log (a restored task's), or
//  "gone".
static void
s_answer_wants (jace_exchange_t *self)
{
    want_t *want = (want_t *) zlistx_first (self->wants);
    while (want) {
        if (want->round > self->round) {
            want = (want_t *) zlistx_next (self->wants);
            continue;
        }
        const log_entry_t *entry = s_log_find (self, want->round);
        if (entry) {
            jace_piece_t piece = s_log_piece (self, entry, want->task);
            s_send_direct (self, want->round, &piece);
        }
        else                    //  Said now, not at its next pull
            s_send_signal (self, want->task, JACE_TRANSFER_GONE,
                           want->round);
        zlistx_delete (self->wants, zlistx_cursor (self->wants));
        want = (want_t *) zlistx_first (self->wants);
    }
}

static int s_take (jace_exchange_t *self, const jace_msg_t *msg,
                   const jace_transfer_t *transfer, int64_t now,
                   char *reason, size_t reason_size);

//  Transfers that came before we began their round are taken now.
static void
s_replay_early (jace_exchange_t *self, int64_t now)
{
    early_t *early = (early_t *) zlistx_first (self->early);
    while (early) {
        if (early->round > self->round) {
            early = (early_t *) zlistx_next (self->early);
            continue;
        }
        zmsg_t *zmsg = early->zmsg;
        early->zmsg = NULL;
        self->early_bytes -= early->bytes;
        zlistx_delete (self->early, zlistx_cursor (self->early));
        char reason [256];
        jace_msg_t *msg = jace_msg_decode (&zmsg, reason, sizeof reason);
        jace_transfer_t *transfer = msg
            ? jace_transfer_decode (msg, &self->key, self->tasks, reason,
                                    sizeof reason)
            : NULL;
        if (transfer)
            s_take (self, msg, transfer, now, reason, sizeof reason);
        jace_transfer_destroy (&transfer);
        jace_msg_destroy (&msg);
        early = (early_t *) zlistx_first (self->early);
    }
}

void
jace_exchange_begin (jace_exchange_t *self, int64_t round,
                     const void *const *buffers, const size_t *sizes,
                     const bool *send, const bool *expect, int64_t now)
{
    assert (self);
    assert (buffers && sizes);
    assert (round >= 0 && (!self->begun || round > self->round));
    s_clear_slots (self);
    s_clear_arrivals (self);
    self->failure [0] = 0;
    self->round = round;
    self->begun = true;
    s_log_drop (self, round);   //  Relogged, and now run again
    log_entry_t *entry = s_log_add (self, round, buffers, sizes, send);
    for (size_t i = 0; i < self->in_count; i++)
        self->in_done [i] = false;
    for (size_t i = 0; i < self->out_count; i++)
        self->out_sent [i] = false;
    self->deadline = now + self->fallback_msec;
    self->next_pull = now;
    s_expect_pieces (self, expect);
    s_deliver (self, self->rank, buffers [self->rank], sizes [self->rank]);
    s_load_own (self, entry);
    s_answer_wants (self);
    s_log_trim (self);
    s_replay_early (self, now);
    s_progress (self);
    s_catch_up (self, now);
}

//  --------------------------------------------------------------------------
//  Receiving

//  A piece for someone else, in a transfer of the round under way: held
//  for our transfer that carries it on, or, if that one has gone (we gave
//  up waiting, or we are not on its route as we know it), sent straight
//  to its destination.  A piece handled once is a duplicate after.
static void
s_relay (jace_exchange_t *self, const jace_piece_t *piece, int64_t step)
{
    const entry_t *entry = s_entry (self, piece->source, piece->destination);
    slot_t *slot = entry && entry->slot >= 0 ? &self->slots [entry->slot]
                                             : NULL;
    if (slot && slot->present) {
        self->duplicates++;
        return;
    }
    if (!slot && step == JACE_TRANSFER_DIRECT)
        return;                 //  Direct pieces are for their destination
    if (slot) {
        //  Kept even when sent on late: a replacement of the task we
        //  send this transfer to gets it again (jace_exchange_moved).
        if (piece->size) {
            slot->bytes = (unsigned char *) malloc (piece->size);
            assert (slot->bytes);
            memcpy (slot->bytes, piece->bytes, piece->size);
        }
        slot->size = piece->size;
        slot->present = true;
        slot->owned = true;
        if (!self->out_sent [slot->out])
            return;
    }
    s_send_direct (self, self->round, piece);
    self->forwarded++;
}

static int64_t
s_find_in (const jace_exchange_t *self, int64_t step, int64_t from)
{
    if (self->in_count == 0)
        return -1;
    in_t key = { step, from };
    const in_t *found = (const in_t *) bsearch (&key, self->ins,
                                                self->in_count, sizeof (in_t),
                                                s_compare_ins);
    return found ? found - self->ins : -1;
}

static void
s_take_current (jace_exchange_t *self, const jace_transfer_t *transfer)
{
    for (size_t i = 0; i < transfer->count; i++) {
        const jace_piece_t *piece = &transfer->pieces [i];
        if (piece->destination == self->rank)
            s_deliver (self, piece->source, piece->bytes, piece->size);
        else
            s_relay (self, piece, transfer->step);
    }
    int64_t in = transfer->step >= 0
               ? s_find_in (self, transfer->step, transfer->sender) : -1;
    if (in >= 0)
        self->in_done [in] = true;
}

//  A transfer of a round we have left (a replacement running it again,
//  a relay that gave up): ours are duplicates, others' go straight on.
static void
s_take_past (jace_exchange_t *self, const jace_transfer_t *transfer)
{
    for (size_t i = 0; i < transfer->count; i++) {
        const jace_piece_t *piece = &transfer->pieces [i];
        if (piece->destination == self->rank)
            self->duplicates++;
        else
        if (transfer->step != JACE_TRANSFER_DIRECT) {
            s_send_direct (self, transfer->round, piece);
            self->forwarded++;
        }
    }
}

static int
s_keep_early (jace_exchange_t *self, const jace_msg_t *msg, int64_t round,
              char *reason, size_t reason_size)
{
    zmsg_t *zmsg = jace_msg_encode (msg);
    size_t bytes = zmsg_content_size (zmsg);
    if (self->early_bytes + bytes > EARLY_LIMIT) {
        zmsg_destroy (&zmsg);
        snprintf (reason, reason_size, "transfers of rounds we have not "
                  "begun hold %zu bytes already: round %" PRId64 " dropped",
                  self->early_bytes, round);
        return -1;
    }
    early_t *early = (early_t *) zmalloc (sizeof *early);
    *early = (early_t) { round, zmsg, bytes };
    zlistx_add_end (self->early, early);
    self->early_bytes += bytes;
    return 0;
}

static void
s_add_want (jace_exchange_t *self, int64_t task, int64_t round)
{
    for (want_t *want = (want_t *) zlistx_first (self->wants); want;
         want = (want_t *) zlistx_next (self->wants))
        if (want->task == task && want->round == round)
            return;
    if (zlistx_size (self->wants) >= (size_t) self->tasks * WANTS_PER_TASK) {
        zlistx_first (self->wants);
        zlistx_delete (self->wants, zlistx_cursor (self->wants));
    }
    want_t *want = (want_t *) zmalloc (sizeof *want);
    *want = (want_t) { task, round };
    zlistx_add_end (self->wants, want);
}

//  A pull: our piece of that round, from the log (a restored task's log
//  may hold a round past the one it is in), or "gone"; a round we have
//  not begun is answered when we do.
static void
s_on_pull (jace_exchange_t *self, int64_t from, int64_t round)
{
    const log_entry_t *entry = s_log_find (self, round);
    if (entry) {
        jace_piece_t piece = s_log_piece (self, entry, from);
        s_send_direct (self, round, &piece);
    }
    else
    if (!self->begun || round > self->round)
        s_add_want (self, from, round);
    else
        s_send_signal (self, from, JACE_TRANSFER_GONE, round);
}

static void
s_on_gone (jace_exchange_t *self, int64_t from, int64_t round)
{
    const arrival_t *arrival = &self->arrivals [from];
    if (self->begun && round == self->round && arrival->expected
    &&  !arrival->present)
        snprintf (self->failure, sizeof self->failure, "task %" PRId64
                  " no longer holds its piece of exchange %" PRId64 " for "
                  "task %" PRId64 " (dropped from its bounded log, or "
                  "lost with its daemon)", from, round,
                  self->rank);
}

static int
s_take (jace_exchange_t *self, const jace_msg_t *msg,
        const jace_transfer_t *transfer, int64_t now, char *reason,
        size_t reason_size)
{
    if (transfer->sender == self->rank
    ||  !streq (jace_msg_job (msg), self->job)) {
        snprintf (reason, reason_size, "transfer from task %" PRId64 " of "
                  "job '%s' is not for task %" PRId64 " of job '%s'",
                  transfer->sender, jace_msg_job (msg), self->rank,
                  self->job);
        return -1;
    }
    if (transfer->round > self->newest_heard)
        self->newest_heard = transfer->round;
    if (transfer->kind == JACE_TRANSFER_PULL)
        s_on_pull (self, transfer->sender, transfer->round);
    else
    if (transfer->kind == JACE_TRANSFER_GONE)
        s_on_gone (self, transfer->sender, transfer->round);
    else
    if (!self->begun || transfer->round > self->round)
        return s_keep_early (self, msg, transfer->round, reason, reason_size);
    else
    if (transfer->round < self->round)
        s_take_past (self, transfer);
    else
        s_take_current (self, transfer);
    s_progress (self);
    s_catch_up (self, now);
    return 0;
}

int
jace_exchange_receive (jace_exchange_t *self, const jace_msg_t *msg,
                       int64_t now, char *reason, size_t reason_size)
{
    assert (self && msg);
    jace_transfer_t *transfer = jace_transfer_decode (msg, &self->key,
                                                      self->tasks, reason,
                                                      reason_size);
    if (!transfer)
        return -1;
    int rc = s_take (self, msg, transfer, now, reason, reason_size);
    jace_transfer_destroy (&transfer);
    return rc;
}

//  --------------------------------------------------------------------------
//  Time and moves

int64_t
jace_exchange_tick (jace_exchange_t *self, int64_t now)
{
    assert (self);
    if (!self->begun || s_done (self))
        return -1;
    if (now >= self->deadline)
        s_degrade (self, now);
    s_progress (self);
    s_catch_up (self, now);
    return self->deadline > now ? self->deadline - now : 0;
}

//  Our pieces for a task that moved, of round 0 (as the round sent them:
//  to sources only, or to everyone when pieces are routed) and of our
//  last two rounds: what its new daemon, running them again, will need.
static void
s_resend_to (jace_exchange_t *self, int64_t rank)
{
    for (log_entry_t *entry = (log_entry_t *) zlistx_first (self->log);
         entry; entry = (log_entry_t *) zlistx_next (self->log)) {
        bool recent = entry->round > 0 && entry->round >= self->round - 1;
        bool setup = entry->round == 0
                  && (!entry->send || entry->send [rank]
                      || jace_exchange_has_routes (self));
        if (recent || setup) {
            jace_piece_t piece = s_log_piece (self, entry, rank);
            s_send_direct (self, entry->round, &piece);
        }
    }
}

void
jace_exchange_moved (jace_exchange_t *self, int64_t rank, int64_t now)
{
    assert (self);
    assert (rank >= 0 && rank < self->tasks && rank != self->rank);
    s_resend_to (self, rank);
    //  What we sent it this round went to the daemon that died.
    for (size_t i = 0; self->begun && i < self->out_count; i++)
        if (self->out_sent [i] && self->outs [i].to == rank)
            s_send_out (self, i);
    if (!self->begun || s_done (self))
        return;
    for (size_t i = 0; i < self->in_count; i++)
        if (self->ins [i].from == rank)
            self->in_done [i] = true;
    for (int64_t source = 0; source < self->tasks; source++) {
        const arrival_t *arrival = &self->arrivals [source];
        if (!arrival->expected || arrival->present)
            continue;
        const entry_t *entry = s_entry (self, source, self->rank);
        if (source == rank || (entry && s_route_touches (&entry->route,
                                                         rank))) {
            s_send_signal (self, source, JACE_TRANSFER_PULL, self->round);
            self->pulls++;
        }
    }
    s_progress (self);
}

//  --------------------------------------------------------------------------
//  The log across a restore

int
jace_exchange_logged (const jace_exchange_t *self, int64_t round,
                      const unsigned char *const **buffers,
                      const size_t **sizes)
{
    assert (self && buffers && sizes);
    const log_entry_t *entry = s_log_find (self, round);
    if (!entry)
        return -1;
    *buffers = (const unsigned char *const *) entry->buffers;
    *sizes = entry->sizes;
    return 0;
}

int
jace_exchange_relog (jace_exchange_t *self, int64_t round,
                     const void *const *buffers, const size_t *sizes)
{
    assert (self && buffers && sizes);
    if (round < 1 || s_log_find (self, round)
    ||  (self->begun && round <= self->round))
        return -1;
    s_log_add (self, round, buffers, sizes, NULL);
    s_log_trim (self);
    const log_entry_t *entry = s_log_find (self, round);
    if (!entry)
        return -1;              //  Larger than the log may hold
    //  Pulls that came before the restore are answered at once.
    want_t *want = (want_t *) zlistx_first (self->wants);
    while (want) {
        if (want->round == round) {
            jace_piece_t piece = s_log_piece (self, entry, want->task);
            s_send_direct (self, round, &piece);
            zlistx_delete (self->wants, zlistx_cursor (self->wants));
            want = (want_t *) zlistx_first (self->wants);
        }
        else
            want = (want_t *) zlistx_next (self->wants);
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  State

int64_t
jace_exchange_round (const jace_exchange_t *self)
{
    assert (self);
    return self->round;
}

bool
jace_exchange_done (const jace_exchange_t *self)
{
    assert (self);
    return s_done (self);
}

const void *
jace_exchange_received (const jace_exchange_t *self, int64_t source,
                        size_t *size, bool *present)
{
    assert (self);
    assert (source >= 0 && source < self->tasks);
    const arrival_t *arrival = &self->arrivals [source];
    if (size)
        *size = arrival->size;
    if (present)
        *present = arrival->present;
    return arrival->bytes;
}

const char *
jace_exchange_failure (const jace_exchange_t *self)
{
    assert (self);
    return self->failure [0] ? self->failure : NULL;
}

uint64_t
jace_exchange_duplicates (const jace_exchange_t *self)
{
    assert (self);
    return self->duplicates;
}

uint64_t
jace_exchange_pulls (const jace_exchange_t *self)
{
    assert (self);
    return self->pulls;
}

uint64_t
jace_exchange_forwarded (const jace_exchange_t *self)
{
    assert (self);
    return self->forwarded;
}
