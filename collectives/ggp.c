/*  =========================================================================
    ggp - GGP and OGGP schedules for the KPBS problem

    The padded graph H is kept as a dense N x N matrix of whole numbers
    (time unit beta), N = n1 + n2 - k.  Rows 0..n1-1 are the senders and
    rows n1.. the dummy senders; columns 0..n2-1 the receivers and columns
    n2.. the dummy receivers.  Every row and column of H sums to R.

    Matchings are kept from one peel to the next and repaired with
    augmenting paths (Kuhn) after the edges that fell to zero or under the
    bottleneck threshold leave them, so a peel costs about one search.
    For OGGP the best bottleneck never rises from one peel to the next
    (weights only fall), so the threshold only walks down.

    A schedule can take thousands of peels (up to R or |E(H)|), so each
    search must be cheap.  Rows of bits, one bit per column, say which
    edges are left and which are eligible (weight >= threshold), and
    which columns are free or already reached; a search step is then an
    AND of a few words and a find-first-set, on a dense or a sparse row
    alike.  After a peel only the few columns that its emptied edges
    freed are free, and the free-column look of each row finds them in
    one pass.  Bits are found in column order, the order of a scan of the
    dense row, so the matchings (hence the schedules) are those the dense
    scans gave.  The weights of matched edges are kept in one contiguous
    array, which is all a peel reads and lowers.
    =========================================================================
*/
#include "collectives.h"

//  Quantum used when beta is 0, as a fraction of the lower bound
#define GGP_ZERO_BETA_QUANTA 64

//  Columns per word of a row of bits
#define GGP_WORD_BITS 64

struct _ggp_schedule_t {
    size_t step_count;          //  Number of steps
    size_t step_capacity;       //  Allocated steps
    size_t *step_first;         //  First transfer of each step
    double *step_length;        //  Longest transfer of each step
    ggp_transfer_t *transfers;  //  Transfers of all steps, in order
    size_t transfer_count;      //  Number of transfers
    size_t transfer_capacity;   //  Allocated transfers
    double beta;                //  Step cost
    size_t regular_degree;      //  R of the padded graph
    size_t padded_edges;        //  Edges of the padded graph
};

//  Working state of one peeling run
typedef struct {
    size_t n1;                  //  Real senders
    size_t n2;                  //  Real receivers
    size_t size;                //  N, side of the padded graph
    size_t words;               //  Words of a row of bits, one per column
    long *weight;               //  N x N padded weights, time unit beta;
                                //  stale on matched edges (matched_weight)
    uint64_t *positive;         //  N rows of bits: the edges left
    uint64_t *eligible;         //  N rows of bits: the edges >= threshold
    uint64_t *free_columns;     //  Bits of the unmatched columns
    uint64_t *seen;             //  Bits of the columns the search reached
    double *real;               //  n1 x n2 data left to send, seconds
    double unit;                //  Seconds per weight unit (beta or q)
    long threshold;             //  Least weight a matched edge may have
    size_t *left_match;         //  Column matched to each row, or SIZE_MAX
    size_t *right_match;        //  Row matched to each column, or SIZE_MAX
    long *matched_weight;       //  Weight left on each row's matched edge
    size_t *loose_row;          //  Unmatched rows, ascending
    size_t loose_count;         //  Number of unmatched rows
    size_t *reached;            //  Rows the current search reached
    size_t reached_count;       //  Number of rows reached
} peeler_t;

static void
s_add_step (ggp_schedule_t *self)
{
    if (self->step_count == self->step_capacity) {
        self->step_capacity = self->step_capacity * 2 + 16;
        self->step_first = (size_t *) realloc (self->step_first,
            self->step_capacity * sizeof (size_t));
        self->step_length = (double *) realloc (self->step_length,
            self->step_capacity * sizeof (double));
        assert (self->step_first && self->step_length);
    }
    self->step_first [self->step_count] = self->transfer_count;
    self->step_length [self->step_count] = 0;
    self->step_count++;
}

static void
s_add_transfer (ggp_schedule_t *self, size_t sender, size_t receiver,
                double amount)
{
    if (self->transfer_count == self->transfer_capacity) {
        self->transfer_capacity = self->transfer_capacity * 2 + 64;
        self->transfers = (ggp_transfer_t *) realloc (self->transfers,
            self->transfer_capacity * sizeof (ggp_transfer_t));
        assert (self->transfers);
    }
    self->transfers [self->transfer_count++] = (ggp_transfer_t) {
        sender, receiver, amount
    };
    double *length = &self->step_length [self->step_count - 1];
    if (amount > *length)
        *length = amount;
}

//  North-west-corner rule: spread total over a block of rows x columns
//  with the given capacities, adding into weight at (row0 + r, col0 + c)
static void
s_north_west (peeler_t *peeler, long total, long *row_capacity,
              size_t rows, size_t row0, long *column_capacity,
              size_t columns, size_t column0)
{
    size_t row = 0, column = 0;
    while (total > 0) {
        assert (row < rows && column < columns);
        long amount = total;
        if (row_capacity [row] < amount)
            amount = row_capacity [row];
        if (column_capacity [column] < amount)
            amount = column_capacity [column];
        peeler->weight [(row0 + row) * peeler->size + column0 + column]
            += amount;
        total -= amount;
        row_capacity [row] -= amount;
        column_capacity [column] -= amount;
        if (row_capacity [row] == 0)
            row++;
        else
            column++;
    }
}

//  Steps 1-4 of GGP: normalise, fill, add dummies.  Returns R.
static long
s_pad (peeler_t *peeler, const double *w, size_t k)
{
    size_t n1 = peeler->n1, n2 = peeler->n2, size = peeler->size;
    long *row = (long *) calloc (size, sizeof (long));
    long *column = (long *) calloc (size, sizeof (long));
    assert (row && column);
    long total = 0;
    for (size_t i = 0; i < n1; i++)
        for (size_t j = 0; j < n2; j++) {
            double value = w [i * n2 + j];
            //  Rounding with a tolerance, so 0.3/0.1 stays 3
            long units = value > 0 ? (long) ceil (value / peeler->unit
                                                  - 1e-9) : 0;
            if (value > 0 && units < 1)
                units = 1;
            peeler->weight [i * size + j] = units;
            row [i] += units;
            column [j] += units;
            total += units;
        }
    long regular = (total + (long) k - 1) / (long) k;
    for (size_t i = 0; i < n1; i++)
        if (row [i] > regular)
            regular = row [i];
    for (size_t j = 0; j < n2; j++)
        if (column [j] > regular)
            regular = column [j];
    //  Filler inside the real block brings the total to k*R
    for (size_t i = 0; i < n1; i++)
        row [i] = regular - row [i];
    for (size_t j = 0; j < n2; j++)
        column [j] = regular - column [j];
    s_north_west (peeler, (long) k * regular - total, row, n1, 0,
                  column, n2, 0);
    //  Dummy receivers complete the senders, dummy senders the receivers
    long *dummy = (long *) malloc (size * sizeof (long));
    assert (dummy);
    for (size_t index = 0; index < size; index++)
        dummy [index] = regular;
    s_north_west (peeler, (long) (n1 - k) * regular, row, n1, 0,
                  dummy, n1 - k, n2);
    for (size_t index = 0; index < size; index++)
        dummy [index] = regular;
    s_north_west (peeler, (long) (n2 - k) * regular, dummy, n2 - k, n1,
                  column, n2, 0);
    free (dummy);
    free (row);
    free (column);
    return regular;
}

//  Bit sets over the columns (a row of H, the free columns, the columns
//  a search reached): column c is bit c % 64 of word c / 64

static void
s_set_bit (uint64_t *bits, size_t index)
{
    bits [index / GGP_WORD_BITS] |= (uint64_t) 1 << (index % GGP_WORD_BITS);
}

static void
s_clear_bit (uint64_t *bits, size_t index)
{
    bits [index / GGP_WORD_BITS] &=
        ~((uint64_t) 1 << (index % GGP_WORD_BITS));
}

//  Lowest index >= from set in bits and in mask (flip 0) or in bits and
//  not in mask (flip all ones), or SIZE_MAX
static size_t
s_first_bit (const uint64_t *bits, const uint64_t *mask, uint64_t flip,
             size_t words, size_t from)
{
    size_t first = from / GGP_WORD_BITS;
    for (size_t word = first; word < words; word++) {
        uint64_t found = bits [word] & (mask [word] ^ flip);
        if (word == first)
            found &= ~(uint64_t) 0 << (from % GGP_WORD_BITS);
        if (found)
            return word * GGP_WORD_BITS + (size_t) __builtin_ctzll (found);
    }
    return SIZE_MAX;
}

//  Row of bits of row in a set of N rows
static uint64_t *
s_row_bits (peeler_t *peeler, uint64_t *rows, size_t row)
{
    return &rows [row * peeler->words];
}

//  Marks the edges >= threshold that are not eligible yet: all of them at
//  the start, those the threshold just reached after it fell.  Only
//  unmatched edges are read (matched ones are eligible already), so
//  every cell read is up to date.
static void
s_widen_eligible (peeler_t *peeler)
{
    for (size_t row = 0; row < peeler->size; row++) {
        uint64_t *positive = s_row_bits (peeler, peeler->positive, row);
        uint64_t *eligible = s_row_bits (peeler, peeler->eligible, row);
        long *weights = &peeler->weight [row * peeler->size];
        for (size_t word = 0; word < peeler->words; word++) {
            uint64_t candidates = positive [word] & ~eligible [word];
            while (candidates) {
                size_t column = word * GGP_WORD_BITS
                              + (size_t) __builtin_ctzll (candidates);
                candidates &= candidates - 1;
                if (weights [column] >= peeler->threshold)
                    s_set_bit (eligible, column);
            }
        }
    }
}

//  Marks the edges of positive weight once the graph is padded.
//  Returns the number of edges of H.
static size_t
s_mark_edges (peeler_t *peeler)
{
    size_t edges = 0;
    for (size_t row = 0; row < peeler->size; row++)
        for (size_t column = 0; column < peeler->size; column++)
            if (peeler->weight [row * peeler->size + column] > 0) {
                s_set_bit (s_row_bits (peeler, peeler->positive, row),
                           column);
                edges++;
            }
    return edges;
}

//  Matches row to column.  A matched edge's weight lives in
//  matched_weight, so that a peel reads and lowers N contiguous weights
//  instead of N scattered cells; the cell is brought up to date when the
//  edge leaves the matching.  The searches never read a matched edge's
//  cell: a matched edge is always eligible, and a search reaches a
//  matched row through its own column.
static void
s_match (peeler_t *peeler, size_t row, size_t column)
{
    size_t size = peeler->size;
    size_t old = peeler->left_match [row];
    if (old != SIZE_MAX)
        peeler->weight [row * size + old] = peeler->matched_weight [row];
    peeler->left_match [row] = column;
    peeler->right_match [column] = row;
    peeler->matched_weight [row] = peeler->weight [row * size + column];
}

//  Takes row's edge, now under the threshold, out of the matching: the
//  edge is no longer eligible (nor an edge at all if it is empty), its
//  column is free, and the row waits for the next repair
static void
s_unmatch (peeler_t *peeler, size_t row)
{
    size_t column = peeler->left_match [row];
    long weight = peeler->matched_weight [row];
    peeler->weight [row * peeler->size + column] = weight;
    s_clear_bit (s_row_bits (peeler, peeler->eligible, row), column);
    if (weight == 0)
        s_clear_bit (s_row_bits (peeler, peeler->positive, row), column);
    peeler->left_match [row] = SIZE_MAX;
    peeler->right_match [column] = SIZE_MAX;
    s_set_bit (peeler->free_columns, column);
    peeler->loose_row [peeler->loose_count++] = row;
}

//  Kuhn's augmenting path from row `row` over eligible edges
static bool
s_augment (peeler_t *peeler, size_t row)
{
    peeler->reached [peeler->reached_count++] = row;
    const uint64_t *eligible = s_row_bits (peeler, peeler->eligible, row);
    //  Look for a free column first: it ends most searches at once
    size_t column = s_first_bit (eligible, peeler->free_columns, 0,
                                 peeler->words, 0);
    if (column != SIZE_MAX) {
        s_clear_bit (peeler->free_columns, column);
        s_match (peeler, row, column);
        return true;
    }
    //  Deeper searches mark columns seen, so look again from the next
    column = s_first_bit (eligible, peeler->seen, ~(uint64_t) 0,
                          peeler->words, 0);
    while (column != SIZE_MAX) {
        s_set_bit (peeler->seen, column);
        //  Not free, or the look above would have taken it
        if (s_augment (peeler, peeler->right_match [column])) {
            s_match (peeler, row, column);
            return true;
        }
        column = s_first_bit (eligible, peeler->seen, ~(uint64_t) 0,
                              peeler->words, column + 1);
    }
    return false;
}

//  A search from row: forgets what the last one reached
static bool
s_search (peeler_t *peeler, size_t row)
{
    memset (peeler->seen, 0, peeler->words * sizeof (uint64_t));
    peeler->reached_count = 0;
    return s_augment (peeler, row);
}

//  Threshold after a failed search: the heaviest edge under the
//  threshold from a row the search reached to a column it did not.  Any
//  higher threshold leaves the reachable set, hence the failure, as it
//  is; this one adds at least one edge to it.  There is one: the reached
//  rows outnumber the reached columns, so in a regular graph some of
//  their weight leaves those columns.
static long
s_next_threshold (peeler_t *peeler)
{
    long best = 0;
    for (size_t index = 0; index < peeler->reached_count; index++) {
        size_t row = peeler->reached [index];
        const uint64_t *positive = s_row_bits (peeler, peeler->positive, row);
        const uint64_t *eligible = s_row_bits (peeler, peeler->eligible, row);
        const long *weights = &peeler->weight [row * peeler->size];
        for (size_t word = 0; word < peeler->words; word++) {
            //  Edges under the threshold are unmatched: their cells are
            //  up to date
            uint64_t under = positive [word] & ~eligible [word]
                           & ~peeler->seen [word];
            while (under) {
                size_t column = word * GGP_WORD_BITS
                              + (size_t) __builtin_ctzll (under);
                under &= under - 1;
                if (weights [column] > best)
                    best = weights [column];
            }
        }
    }
    assert (best > 0 && best < peeler->threshold);
    return best;
}

//  Largest weight of the graph: OGGP's first threshold
static long
s_heaviest (peeler_t *peeler)
{
    long best = 0;
    for (size_t cell = 0; cell < peeler->size * peeler->size; cell++)
        if (peeler->weight [cell] > best)
            best = peeler->weight [cell];
    return best;
}

//  Complete the matching into a perfect one over eligible edges,
//  lowering the threshold when bottleneck is set and none exists.  The
//  loose rows are those the last peel unmatched (every row at first), in
//  ascending order; augmenting paths never unmatch a row.
static void
s_repair (peeler_t *peeler, bool bottleneck)
{
    for (size_t index = 0; index < peeler->loose_count; index++) {
        size_t row = peeler->loose_row [index];
        while (!s_search (peeler, row)) {
            //  A regular graph always has a perfect matching over all its
            //  edges, so only a bottleneck threshold can block us
            assert (bottleneck && peeler->threshold > 1);
            peeler->threshold = s_next_threshold (peeler);
            s_widen_eligible (peeler);
        }
    }
    peeler->loose_count = 0;
}

//  Sends a peel's worth of real data on the matched edges that join two
//  real nodes and have data left; they make the peel's step, if any
static void
s_send_peel (ggp_schedule_t *self, peeler_t *peeler, long peel)
{
    bool opened = false;
    for (size_t row = 0; row < peeler->n1; row++) {
        size_t column = peeler->left_match [row];
        if (column >= peeler->n2)
            continue;           //  A dummy receiver
        double *real = &peeler->real [row * peeler->n2 + column];
        if (*real <= 0)
            continue;           //  Filler, or the data is all sent
        double amount = fmin (peel * peeler->unit, *real);
        //  Absorb rounding dust so no sliver of data is left behind
        if (*real - amount < 1e-12 * (1 + *real))
            amount = *real;
        *real -= amount;
        if (!opened)
            s_add_step (self);
        opened = true;
        s_add_transfer (self, row, column, amount);
    }
}

//  Lowest weight of the perfect matching: what one peel takes off it
static long
s_lightest_matched (peeler_t *peeler)
{
    const long *weights = peeler->matched_weight;
    size_t size = peeler->size;
    long peel = LONG_MAX;
    for (size_t row = 0; row < size; row++)
        peel = weights [row] < peel ? weights [row] : peel;
    return peel;
}

//  Takes peel off every matched edge; the edges left under the
//  threshold leave the matching
static void
s_take_peel (peeler_t *peeler, long peel)
{
    //  Locals: for all the compiler knows, a store through a long
    //  pointer may change peeler->threshold, which it would then read
    //  again for every row
    long *weights = peeler->matched_weight;
    size_t size = peeler->size;
    long threshold = peeler->threshold;
    for (size_t row = 0; row < size; row++) {
        weights [row] -= peel;
        if (weights [row] < threshold)
            s_unmatch (peeler, row);
    }
}

//  Step 5: peel perfect matchings until the graph is empty
static void
s_peel (ggp_schedule_t *self, peeler_t *peeler, long regular,
        bool bottleneck)
{
    peeler->threshold = bottleneck ? s_heaviest (peeler) : 1;
    s_widen_eligible (peeler);
    for (long left = regular; left > 0; ) {
        s_repair (peeler, bottleneck);
        long peel = s_lightest_matched (peeler);
        s_send_peel (self, peeler, peel);
        s_take_peel (peeler, peel);
        left -= peel;
    }
}

//  Working state for an n1 x n2 matrix padded to side size, weights in
//  units of unit seconds, every row loose and every column free
static peeler_t *
s_peeler_new (const double *w, size_t n1, size_t n2, size_t size,
              double unit)
{
    peeler_t *peeler = (peeler_t *) calloc (1, sizeof (peeler_t));
    assert (peeler);
    size_t words = (size + GGP_WORD_BITS - 1) / GGP_WORD_BITS;
    *peeler = (peeler_t) {
        .n1 = n1, .n2 = n2, .size = size, .words = words, .unit = unit
    };
    peeler->weight = (long *) calloc (size * size, sizeof (long));
    peeler->positive = (uint64_t *) calloc (size * words, sizeof (uint64_t));
    peeler->eligible = (uint64_t *) calloc (size * words, sizeof (uint64_t));
    peeler->free_columns = (uint64_t *) calloc (words, sizeof (uint64_t));
    peeler->seen = (uint64_t *) calloc (words, sizeof (uint64_t));
    peeler->real = (double *) malloc (n1 * n2 * sizeof (double));
    peeler->left_match = (size_t *) malloc (size * sizeof (size_t));
    peeler->right_match = (size_t *) malloc (size * sizeof (size_t));
    peeler->matched_weight = (long *) malloc (size * sizeof (long));
    peeler->loose_row = (size_t *) malloc (size * sizeof (size_t));
    peeler->reached = (size_t *) malloc (size * sizeof (size_t));
    assert (peeler->weight && peeler->positive && peeler->eligible
            && peeler->free_columns && peeler->seen && peeler->real
            && peeler->left_match && peeler->right_match
            && peeler->matched_weight && peeler->loose_row
            && peeler->reached);
    for (size_t cell = 0; cell < n1 * n2; cell++) {
        assert (w [cell] >= 0);
        peeler->real [cell] = w [cell];
    }
    for (size_t index = 0; index < size; index++) {
        peeler->left_match [index] = peeler->right_match [index] = SIZE_MAX;
        peeler->loose_row [index] = index;
        s_set_bit (peeler->free_columns, index);
    }
    peeler->loose_count = size;
    return peeler;
}

static void
s_peeler_destroy (peeler_t **peeler_p)
{
    peeler_t *peeler = *peeler_p;
    free (peeler->weight);
    free (peeler->positive);
    free (peeler->eligible);
    free (peeler->free_columns);
    free (peeler->seen);
    free (peeler->real);
    free (peeler->left_match);
    free (peeler->right_match);
    free (peeler->matched_weight);
    free (peeler->loose_row);
    free (peeler->reached);
    free (peeler);
    *peeler_p = NULL;
}

static ggp_schedule_t *
s_schedule (const double *w, size_t n1, size_t n2, size_t k, double beta,
            bool bottleneck)
{
    assert (w);
    assert (k >= 1);
    assert (beta >= 0);
    ggp_schedule_t *self = (ggp_schedule_t *) calloc (1,
                                                      sizeof (ggp_schedule_t));
    assert (self);
    self->beta = beta;
    if (n1 == 0 || n2 == 0)
        return self;
    if (k > n1)
        k = n1;
    if (k > n2)
        k = n2;
    double unit = beta > 0 ? beta
                : ggp_lower_bound (w, n1, n2, k) / GGP_ZERO_BETA_QUANTA;
    if (unit <= 0)
        return self;            //  Nothing to send
    peeler_t *peeler = s_peeler_new (w, n1, n2, n1 + n2 - k, unit);
    long regular = s_pad (peeler, w, k);
    self->regular_degree = (size_t) regular;
    self->padded_edges = s_mark_edges (peeler);
    s_peel (self, peeler, regular, bottleneck);
    s_peeler_destroy (&peeler);
    return self;
}

//  --------------------------------------------------------------------------
//  GGP schedule

ggp_schedule_t *
ggp_schedule (const double *w, size_t n1, size_t n2, size_t k, double beta)
{
    return s_schedule (w, n1, n2, k, beta, false);
}

//  --------------------------------------------------------------------------
//  OGGP schedule

ggp_schedule_t *
oggp_schedule (const double *w, size_t n1, size_t n2, size_t k, double beta)
{
    return s_schedule (w, n1, n2, k, beta, true);
}

//  --------------------------------------------------------------------------
//  Destroy a schedule

void
ggp_schedule_destroy (ggp_schedule_t **self_p)
{
    assert (self_p);
    ggp_schedule_t *self = *self_p;
    if (!self)
        return;
    free (self->step_first);
    free (self->step_length);
    free (self->transfers);
    free (self);
    *self_p = NULL;
}

size_t
ggp_schedule_step_count (ggp_schedule_t *self)
{
    assert (self);
    return self->step_count;
}

double
ggp_schedule_step_length (ggp_schedule_t *self, size_t step)
{
    assert (self);
    assert (step < self->step_count);
    return self->step_length [step];
}

size_t
ggp_schedule_step_size (ggp_schedule_t *self, size_t step)
{
    assert (self);
    assert (step < self->step_count);
    size_t end = step + 1 < self->step_count ? self->step_first [step + 1]
                                             : self->transfer_count;
    return end - self->step_first [step];
}

const ggp_transfer_t *
ggp_schedule_transfer (ggp_schedule_t *self, size_t step, size_t index)
{
    assert (self);
    assert (index < ggp_schedule_step_size (self, step));
    return &self->transfers [self->step_first [step] + index];
}

double
ggp_schedule_cost (ggp_schedule_t *self)
{
    assert (self);
    double cost = self->beta * (double) self->step_count;
    for (size_t step = 0; step < self->step_count; step++)
        cost += self->step_length [step];
    return cost;
}

size_t
ggp_schedule_regular_degree (ggp_schedule_t *self)
{
    assert (self);
    return self->regular_degree;
}

size_t
ggp_schedule_padded_edges (ggp_schedule_t *self)
{
    assert (self);
    return self->padded_edges;
}

//  W(G), P(G), Delta(G) and m of a traffic matrix
static void
s_measure (const double *w, size_t n1, size_t n2, double *heaviest,
           double *total, size_t *degree, size_t *edges)
{
    *heaviest = 0;
    *total = 0;
    *degree = 0;
    *edges = 0;
    for (size_t i = 0; i < n1; i++) {
        double sum = 0;
        size_t count = 0;
        for (size_t j = 0; j < n2; j++) {
            sum += w [i * n2 + j];
            count += w [i * n2 + j] > 0;
        }
        *heaviest = fmax (*heaviest, sum);
        *degree = count > *degree ? count : *degree;
        *total += sum;
        *edges += count;
    }
    for (size_t j = 0; j < n2; j++) {
        double sum = 0;
        size_t count = 0;
        for (size_t i = 0; i < n1; i++) {
            sum += w [i * n2 + j];
            count += w [i * n2 + j] > 0;
        }
        *heaviest = fmax (*heaviest, sum);
        *degree = count > *degree ? count : *degree;
    }
}

double
ggp_lower_bound (const double *w, size_t n1, size_t n2, size_t k)
{
    assert (w);
    assert (k >= 1);
    double heaviest, total;
    size_t degree, edges;
    s_measure (w, n1, n2, &heaviest, &total, &degree, &edges);
    return fmax (heaviest, total / (double) k);
}

double
ggp_cost_lower_bound (const double *w, size_t n1, size_t n2, size_t k,
                      double beta)
{
    assert (w);
    assert (k >= 1);
    double heaviest, total;
    size_t degree, edges;
    s_measure (w, n1, n2, &heaviest, &total, &degree, &edges);
    size_t steps = (edges + k - 1) / k;
    if (degree > steps)
        steps = degree;
    return fmax (heaviest, total / (double) k) + beta * (double) steps;
}
