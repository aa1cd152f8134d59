/*  =========================================================================
    tig - the task interaction graph of an AIAC application
    =========================================================================
*/
#include "mapping.h"

typedef struct {
    size_t *neighbours;         //  Dependencies of the task
    double *amounts;            //  c_ij of each dependency
    size_t degree;              //  Number of dependencies
    size_t capacity;            //  Allocated dependencies
    double cost;                //  e_i
} task_t;

struct _tig_t {
    size_t count;               //  Number of tasks
    task_t *tasks;              //  Tasks by index
};

tig_t *
tig_new (size_t count)
{
    tig_t *self = (tig_t *) calloc (1, sizeof (tig_t));
    assert (self);
    self->count = count;
    self->tasks = (task_t *) calloc (count ? count : 1, sizeof (task_t));
    assert (self->tasks);
    for (size_t task = 0; task < count; task++)
        self->tasks [task].cost = 1;
    return self;
}

void
tig_destroy (tig_t **self_p)
{
    assert (self_p);
    tig_t *self = *self_p;
    if (!self)
        return;
    for (size_t task = 0; task < self->count; task++) {
        free (self->tasks [task].neighbours);
        free (self->tasks [task].amounts);
    }
    free (self->tasks);
    free (self);
    *self_p = NULL;
}

void
tig_set_cost (tig_t *self, size_t task, double cost)
{
    assert (self);
    assert (task < self->count);
    assert (cost >= 0);
    self->tasks [task].cost = cost;
}

//  Add amount to the edge task -> other, one direction
static void
s_add_arc (task_t *task, size_t other, double amount)
{
    for (size_t index = 0; index < task->degree; index++)
        if (task->neighbours [index] == other) {
            task->amounts [index] += amount;
            return;
        }
    if (task->degree == task->capacity) {
        task->capacity = task->capacity * 2 + 4;
        task->neighbours = (size_t *) realloc (task->neighbours,
            task->capacity * sizeof (size_t));
        task->amounts = (double *) realloc (task->amounts,
            task->capacity * sizeof (double));
        assert (task->neighbours && task->amounts);
    }
    task->neighbours [task->degree] = other;
    task->amounts [task->degree] = amount;
    task->degree++;
}

void
tig_add_edge (tig_t *self, size_t first, size_t second, double amount)
{
    assert (self);
    assert (first < self->count && second < self->count);
    assert (first != second);
    s_add_arc (&self->tasks [first], second, amount);
    s_add_arc (&self->tasks [second], first, amount);
}

size_t
tig_count (tig_t *self)
{
    assert (self);
    return self->count;
}

double
tig_cost (tig_t *self, size_t task)
{
    assert (self);
    assert (task < self->count);
    return self->tasks [task].cost;
}

size_t
tig_degree (tig_t *self, size_t task)
{
    assert (self);
    assert (task < self->count);
    return self->tasks [task].degree;
}

size_t
tig_neighbour (tig_t *self, size_t task, size_t index)
{
    assert (self);
    assert (task < self->count);
    assert (index < self->tasks [task].degree);
    return self->tasks [task].neighbours [index];
}

double
tig_edge_amount (tig_t *self, size_t task, size_t index)
{
    assert (self);
    assert (task < self->count);
    assert (index < self->tasks [task].degree);
    return self->tasks [task].amounts [index];
}

//  Block of a row when rows are cut in tasks contiguous blocks, the first
//  rows % tasks blocks one row longer
static size_t
s_block_of (size_t row, size_t rows, size_t tasks)
{
    size_t size = rows / tasks, longer = rows % tasks;
    size_t split = longer * (size + 1);
    return row < split ? row / (size + 1) : longer + (row - split) / size;
}

static int
s_compare_pairs (const void *first_p, const void *second_p)
{
    const size_t *first = (const size_t *) first_p;
    const size_t *second = (const size_t *) second_p;
    for (int part = 0; part < 2; part++)
        if (first [part] != second [part])
            return first [part] < second [part] ? -1 : 1;
    return 0;
}

tig_t *
tig_new_from_pattern (size_t rows, size_t nonzeros, const size_t *row_index,
                      const size_t *column_index, size_t tasks)
{
    assert (nonzeros == 0 || (row_index && column_index));
    if (tasks == 0 || tasks > rows)
        return NULL;
    for (size_t entry = 0; entry < nonzeros; entry++)
        if (row_index [entry] >= rows || column_index [entry] >= rows)
            return NULL;
    tig_t *self = tig_new (tasks);
    for (size_t task = 0; task < tasks; task++)
        self->tasks [task].cost = 0;
    //  (block of the row, column) pairs, deduplicated: a column needed
    //  by several rows of a block is sent once
    size_t *pairs = (size_t *) malloc ((2 * nonzeros + 2) * sizeof (size_t));
    assert (pairs);
    for (size_t entry = 0; entry < nonzeros; entry++) {
        size_t block = s_block_of (row_index [entry], rows, tasks);
        self->tasks [block].cost += 1;
        pairs [2 * entry] = block;
        pairs [2 * entry + 1] = column_index [entry];
    }
    qsort (pairs, nonzeros, 2 * sizeof (size_t), s_compare_pairs);
    for (size_t entry = 0; entry < nonzeros; entry++) {
        if (entry && !s_compare_pairs (&pairs [2 * entry],
                                       &pairs [2 * entry - 2]))
            continue;
        size_t block = pairs [2 * entry];
        size_t owner = s_block_of (pairs [2 * entry + 1], rows, tasks);
        if (owner != block)
            s_add_arc (&self->tasks [block], owner, 1);
    }
    //  Make the graph symmetric: c_ij is what i and j exchange
    for (size_t task = 0; task < tasks; task++)
        for (size_t index = 0; index < self->tasks [task].degree; index++) {
            size_t other = self->tasks [task].neighbours [index];
            bool known = false;
            for (size_t back = 0; back < self->tasks [other].degree; back++)
                known = known || self->tasks [other].neighbours [back] == task;
            if (!known)
                s_add_arc (&self->tasks [other], task, 0);
        }
    free (pairs);
    return self;
}

//  First row of a block (blocks as in s_block_of)
static size_t
s_block_start (size_t block, size_t rows, size_t tasks)
{
    size_t size = rows / tasks, longer = rows % tasks;
    return block < longer ? block * (size + 1)
                          : longer * (size + 1) + (block - longer) * size;
}

//  The same graph tig_new_from_pattern would build from the full band,
//  computed from the block bounds so that large bands cost no memory
tig_t *
tig_new_banded (size_t rows, size_t half_band, size_t tasks)
{
    if (tasks == 0 || tasks > rows)
        return NULL;
    tig_t *self = tig_new (tasks);
    for (size_t task = 0; task < tasks; task++) {
        size_t first = s_block_start (task, rows, tasks);
        size_t end = s_block_start (task + 1, rows, tasks);
        double nonzeros = 0;
        for (size_t row = first; row < end; row++) {
            size_t low = row > half_band ? row - half_band : 0;
            size_t high = row + half_band < rows ? row + half_band
                                                 : rows - 1;
            nonzeros += (double) (high - low + 1);
        }
        self->tasks [task].cost = nonzeros;
        //  Columns the block's rows reach, and the blocks that own them
        size_t reach_low = first > half_band ? first - half_band : 0;
        size_t reach_high = end - 1 + half_band < rows ? end - 1 + half_band
                                                       : rows - 1;
        for (size_t other = s_block_of (reach_low, rows, tasks);
             other <= s_block_of (reach_high, rows, tasks); other++) {
            if (other == task)
                continue;
            size_t other_first = s_block_start (other, rows, tasks);
            size_t other_end = s_block_start (other + 1, rows, tasks);
            size_t low = other_first > reach_low ? other_first : reach_low;
            size_t high = other_end - 1 < reach_high ? other_end - 1
                                                     : reach_high;
            s_add_arc (&self->tasks [task], other, (double) (high - low + 1));
        }
    }
    return self;
}

//  Read the next line that is not a comment; returns false at the end
static bool
s_next_line (FILE *file, char *line, size_t size, size_t *number)
{
    while (fgets (line, (int) size, file)) {
        (*number)++;
        if (line [0] != '%')
            return true;
    }
    return false;
}

tig_t *
tig_load_matrix_market (const char *path, size_t tasks, char *error,
                        size_t error_size)
{
    assert (path);
    FILE *file = fopen (path, "r");
    if (!file) {
        snprintf (error, error_size, "%s: %s", path, strerror (errno));
        return NULL;
    }
    char line [1024];
    size_t number = 0, rows = 0, columns = 0, nonzeros = 0;
    if (!fgets (line, sizeof line, file)
    ||  strncmp (line, "%%MatrixMarket matrix coordinate", 32) != 0) {
        snprintf (error, error_size, "%s:1: not a Matrix Market coordinate "
                  "file", path);
        fclose (file);
        return NULL;
    }
    bool symmetric = strstr (line, "symmetric") != NULL;
    number = 1;
    if (!s_next_line (file, line, sizeof line, &number)
    ||  sscanf (line, "%zu %zu %zu", &rows, &columns, &nonzeros) != 3
    ||  rows != columns || rows == 0) {
        snprintf (error, error_size, "%s:%zu: expected 'ROWS COLUMNS "
                  "NONZEROS' of a square matrix", path, number);
        fclose (file);
        return NULL;
    }
    size_t capacity = 2 * nonzeros + 1;
    size_t *row_index = (size_t *) malloc (capacity * sizeof (size_t));
    size_t *column_index = (size_t *) malloc (capacity * sizeof (size_t));
    assert (row_index && column_index);
    size_t entries = 0;
    tig_t *self = NULL;
    for (size_t entry = 0; entry < nonzeros; entry++) {
        size_t row, column;
        if (!s_next_line (file, line, sizeof line, &number)
        ||  sscanf (line, "%zu %zu", &row, &column) != 2
        ||  row < 1 || row > rows || column < 1 || column > rows) {
            snprintf (error, error_size, "%s:%zu: bad or missing entry",
                      path, number);
            goto out_free_indices;
        }
        row_index [entries] = row - 1;
        column_index [entries++] = column - 1;
        if (symmetric && row != column) {
            row_index [entries] = column - 1;
            column_index [entries++] = row - 1;
        }
    }
    self = tig_new_from_pattern (rows, entries, row_index, column_index,
                                 tasks);
    if (!self)
        snprintf (error, error_size, "%s: cannot cut %zu rows in %zu tasks",
                  path, rows, tasks);
out_free_indices:
    free (row_index);
    free (column_index);
    fclose (file);
    return self;
}
