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
    =========================================================================
*/
#include "collectives.h"

//  Quantum used when beta is 0, as a fraction of the lower bound
#define GGP_ZERO_BETA_QUANTA 64

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
    long *weight;               //  N x N padded weights, time unit beta
    double *real;               //  n1 x n2 data left to send, seconds
    double unit;                //  Seconds per weight unit (beta or q)
    long threshold;             //  Least weight a matched edge may have
    size_t *left_match;         //  Column matched to each row, or SIZE_MAX
    size_t *right_match;        //  Row matched to each column, or SIZE_MAX
    size_t *seen;               //  Visit stamp of each column
    size_t *seen_row;           //  Visit stamp of each row
    size_t stamp;               //  Current visit stamp
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

//  Kuhn's augmenting path from row `row` over edges >= threshold
static bool
s_augment (peeler_t *peeler, size_t row)
{
    size_t size = peeler->size;
    long *weights = &peeler->weight [row * size];
    peeler->seen_row [row] = peeler->stamp;
    //  Look for a free column first: it ends most searches at once
    for (size_t column = 0; column < size; column++)
        if (weights [column] >= peeler->threshold
        &&  peeler->right_match [column] == SIZE_MAX) {
            peeler->left_match [row] = column;
            peeler->right_match [column] = row;
            return true;
        }
    for (size_t column = 0; column < size; column++) {
        if (weights [column] < peeler->threshold
        ||  peeler->seen [column] == peeler->stamp)
            continue;
        peeler->seen [column] = peeler->stamp;
        size_t other = peeler->right_match [column];
        if (other == SIZE_MAX || s_augment (peeler, other)) {
            peeler->left_match [row] = column;
            peeler->right_match [column] = row;
            return true;
        }
    }
    return false;
}

//  Threshold after a failed search: the heaviest edge under the
//  threshold from a row the search reached to a column it did not.  Any
//  higher threshold leaves the reachable set, hence the failure, as it
//  is; this one adds at least one edge to it.
static long
s_next_threshold (peeler_t *peeler)
{
    long best = 0;
    size_t size = peeler->size;
    for (size_t row = 0; row < size; row++) {
        if (peeler->seen_row [row] != peeler->stamp)
            continue;
        long *weights = &peeler->weight [row * size];
        for (size_t column = 0; column < size; column++)
            if (peeler->seen [column] != peeler->stamp
            &&  weights [column] < peeler->threshold
            &&  weights [column] > best)
                best = weights [column];
    }
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

//  Complete the matching into a perfect one over edges >= threshold,
//  lowering the threshold when bottleneck is set and none exists
static void
s_repair (peeler_t *peeler, bool bottleneck)
{
    for (size_t row = 0; row < peeler->size; row++) {
        size_t column = peeler->left_match [row];
        if (column != SIZE_MAX
        &&  peeler->weight [row * peeler->size + column] < peeler->threshold) {
            peeler->left_match [row] = SIZE_MAX;
            peeler->right_match [column] = SIZE_MAX;
        }
    }
    for (size_t row = 0; row < peeler->size; row++) {
        if (peeler->left_match [row] != SIZE_MAX)
            continue;
        while (true) {
            peeler->stamp++;
            if (s_augment (peeler, row))
                break;
            //  A regular graph always has a perfect matching over all its
            //  edges, so only a bottleneck threshold can block us
            assert (bottleneck && peeler->threshold > 1);
            peeler->threshold = s_next_threshold (peeler);
        }
    }
}

//  Step 5: peel perfect matchings until the graph is empty
static void
s_peel (ggp_schedule_t *self, peeler_t *peeler, long regular,
        bool bottleneck)
{
    size_t size = peeler->size;
    long left = regular;
    peeler->threshold = bottleneck ? s_heaviest (peeler) : 1;
    while (left > 0) {
        s_repair (peeler, bottleneck);
        long peel = LONG_MAX;
        for (size_t row = 0; row < size; row++) {
            long value = peeler->weight [row * size + peeler->left_match [row]];
            if (value < peel)
                peel = value;
        }
        bool opened = false;
        for (size_t row = 0; row < size; row++) {
            size_t column = peeler->left_match [row];
            peeler->weight [row * size + column] -= peel;
            if (row >= peeler->n1 || column >= peeler->n2)
                continue;
            double *real = &peeler->real [row * peeler->n2 + column];
            if (*real <= 0)
                continue;
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
        left -= peel;
    }
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
    peeler_t peeler = { .n1 = n1, .n2 = n2, .size = n1 + n2 - k };
    peeler.unit = beta > 0 ? beta
                : ggp_lower_bound (w, n1, n2, k) / GGP_ZERO_BETA_QUANTA;
    if (peeler.unit <= 0)
        return self;            //  Nothing to send
    size_t size = peeler.size;
    peeler.weight = (long *) calloc (size * size, sizeof (long));
    peeler.real = (double *) malloc (n1 * n2 * sizeof (double));
    peeler.left_match = (size_t *) malloc (size * sizeof (size_t));
    peeler.right_match = (size_t *) malloc (size * sizeof (size_t));
    peeler.seen = (size_t *) calloc (size, sizeof (size_t));
    peeler.seen_row = (size_t *) calloc (size, sizeof (size_t));
    assert (peeler.weight && peeler.real && peeler.left_match
            && peeler.right_match && peeler.seen && peeler.seen_row);
    for (size_t cell = 0; cell < n1 * n2; cell++) {
        assert (w [cell] >= 0);
        peeler.real [cell] = w [cell];
    }
    for (size_t index = 0; index < size; index++)
        peeler.left_match [index] = peeler.right_match [index] = SIZE_MAX;
    long regular = s_pad (&peeler, w, k);
    self->regular_degree = (size_t) regular;
    for (size_t cell = 0; cell < size * size; cell++)
        self->padded_edges += peeler.weight [cell] > 0;
    s_peel (self, &peeler, regular, bottleneck);
    free (peeler.weight);
    free (peeler.real);
    free (peeler.left_match);
    free (peeler.right_match);
    free (peeler.seen);
    free (peeler.seen_row);
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
