/*  =========================================================================
    jace_links - the grid's shared link reservations

    The file: a header, one record per resource (written once by
    jace_links_create, read-only afterwards), then one 64-bit word per
    lane: the time (CLOCK_MONOTONIC ns) until which the lane is reserved.
    A pipe has one lane, its virtual clock; a KPBS resource one per
    simultaneous transfer.  Only the lane words change once the grid runs,
    and only through C11 atomics: they are naturally aligned 64-bit words
    in a MAP_SHARED mapping, which x86-64 and AArch64 update lock-free
    across processes.
    =========================================================================
*/
#include "jace_links.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

//  A word shared with other processes must be updated without a lock, or
//  a process dying with the lock held would freeze the grid's links.
_Static_assert (ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2,
                "shared link reservations need lock-free 64-bit atomics");

#define LINKS_MAGIC "JACELNK1"
//  Most resources in a file: far above what a platform of 256 clusters
//  and 1024 links declares, low enough that sizes cannot overflow
#define LINKS_RESOURCES_MAX (1u << 20)

//  What the file starts with
typedef struct {
    char magic [8];             //  LINKS_MAGIC, not NUL-terminated
    uint64_t resource_count;    //  Records after the header
    uint64_t lane_count;        //  Lane words after the records
    uint64_t unused;            //  Keeps the records 32-byte aligned
} file_header_t;

//  One resource as declared; never changes once created
typedef struct {
    double bandwidth_mbps;      //  Capacity, or each transfer's speed
    uint64_t transfers;         //  0 for a pipe, else simultaneous limit
    uint64_t first_lane;        //  Index of its first lane word
    uint64_t lanes;             //  1 for a pipe, else transfers
} file_resource_t;

struct _jace_links_t {
    void *map;                  //  The whole file, MAP_SHARED
    size_t size;                //  Its size
    size_t count;               //  Resources
    const file_resource_t *resources;   //  In the mapping
    _Atomic int64_t *lanes;     //  In the mapping: reserved-until times
};

//  One resource of a path as a reservation attempt sees it
typedef struct {
    _Atomic int64_t *lane;      //  Lane chosen (the one free earliest)
    int64_t seen;               //  Its value when read
    int64_t hold;               //  How long the transfer holds it (ns)
} claim_t;


//  --------------------------------------------------------------------------
//  Nanoseconds to carry bytes at mbps; at least 1, so that a reservation
//  always moves a lane forward (jace_links_reserve relies on it)

static int64_t
s_transfer_ns (size_t bytes, double mbps)
{
    double ns = ceil ((double) bytes * 8000.0 / mbps);
    if (!(ns >= 1))
        return 1;
    return ns < (double) (INT64_MAX / 4) ? (int64_t) ns : INT64_MAX / 4;
}

static size_t
s_file_size (size_t count, size_t lanes)
{
    return sizeof (file_header_t) + count * sizeof (file_resource_t)
         + lanes * sizeof (int64_t);
}

static int
s_fail (char *error, size_t error_size, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
s_fail (char *error, size_t error_size, const char *format, ...)
{
    if (error && error_size) {
        va_list args;
        va_start (args, format);
        vsnprintf (error, error_size, format, args);
        va_end (args);
    }
    return -1;
}


//  --------------------------------------------------------------------------
//  The file's bytes for these resources, all lanes free

static void *
s_layout (const jace_links_resource_t *resources, size_t count,
          size_t *size)
{
    size_t lanes = 0;
    for (size_t index = 0; index < count; index++)
        lanes += resources [index].transfers ? resources [index].transfers
                                             : 1;
    *size = s_file_size (count, lanes);
    char *bytes = (char *) calloc (1, *size);
    assert (bytes);
    file_header_t *header = (file_header_t *) bytes;
    memcpy (header->magic, LINKS_MAGIC, sizeof header->magic);
    header->resource_count = count;
    header->lane_count = lanes;
    file_resource_t *records = (file_resource_t *) (header + 1);
    uint64_t next_lane = 0;
    for (size_t index = 0; index < count; index++) {
        records [index].bandwidth_mbps = resources [index].bandwidth_mbps;
        records [index].transfers = resources [index].transfers;
        records [index].first_lane = next_lane;
        records [index].lanes = resources [index].transfers
                              ? resources [index].transfers : 1;
        next_lane += records [index].lanes;
    }
    return bytes;
}


//  --------------------------------------------------------------------------
//  Create the file

int
jace_links_create (const char *path, const jace_links_resource_t *resources,
                   size_t count, char *error, size_t error_size)
{
    assert (path);
    assert (resources || count == 0);
    if (count > LINKS_RESOURCES_MAX)
        return s_fail (error, error_size, "%s: %zu shared resources, at "
                       "most %u", path, count, LINKS_RESOURCES_MAX);
    for (size_t index = 0; index < count; index++)
        if (!isfinite (resources [index].bandwidth_mbps)
        ||  resources [index].bandwidth_mbps <= 0
        ||  resources [index].transfers > JACE_LINKS_TRANSFERS_MAX)
            return s_fail (error, error_size, "%s: resource %zu: bandwidth "
                           "%g Mb/s, %zu transfers", path, index,
                           resources [index].bandwidth_mbps,
                           resources [index].transfers);
    size_t size;
    void *bytes = s_layout (resources, count, &size);
    //  Written aside, then renamed over the old file: a daemon of an
    //  earlier grid that still maps the old one never sees a half-made
    //  file, and never disturbs the new grid's reservations.
    size_t length = strlen (path) + 32;
    char *fresh = (char *) malloc (length);
    assert (fresh);
    snprintf (fresh, length, "%s.%ld.new", path, (long) getpid ());
    int fd = open (fresh, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool written = fd >= 0 && write (fd, bytes, size) == (ssize_t) size;
    if (fd >= 0 && close (fd))
        written = false;
    int rc = 0;
    if (!written || rename (fresh, path))
        rc = s_fail (error, error_size, "cannot write %s: %s", path,
                     strerror (errno));
    if (rc)
        unlink (fresh);
    free (fresh);
    free (bytes);
    return rc;
}


//  --------------------------------------------------------------------------
//  Check that a mapping is a file jace_links_create made, and point self's
//  tables into it

static int
s_check_layout (jace_links_t *self, const char *path, char *error,
                size_t error_size)
{
    const file_header_t *header = (const file_header_t *) self->map;
    if (self->size < sizeof *header
    ||  memcmp (header->magic, LINKS_MAGIC, sizeof header->magic) != 0)
        return s_fail (error, error_size, "%s is not a shared links file",
                       path);
    if (header->resource_count > LINKS_RESOURCES_MAX
    ||  header->lane_count > LINKS_RESOURCES_MAX
                             * (uint64_t) JACE_LINKS_TRANSFERS_MAX
    ||  s_file_size (header->resource_count, header->lane_count)
        != self->size)
        return s_fail (error, error_size, "%s: size %zu does not match its"
                       " header", path, self->size);
    self->count = header->resource_count;
    self->resources = (const file_resource_t *) (header + 1);
    self->lanes = (_Atomic int64_t *) (self->resources + self->count);
    uint64_t next_lane = 0;
    for (size_t index = 0; index < self->count; index++) {
        const file_resource_t *record = &self->resources [index];
        if (!isfinite (record->bandwidth_mbps) || record->bandwidth_mbps <= 0
        ||  record->transfers > JACE_LINKS_TRANSFERS_MAX
        ||  record->lanes != (record->transfers ? record->transfers : 1)
        ||  record->first_lane != next_lane)
            return s_fail (error, error_size, "%s: resource %zu is "
                           "malformed", path, index);
        next_lane += record->lanes;
    }
    if (next_lane != header->lane_count)
        return s_fail (error, error_size, "%s: lanes do not add up", path);
    return 0;
}


//  --------------------------------------------------------------------------
//  Map a file

jace_links_t *
jace_links_open (const char *path, char *error, size_t error_size)
{
    assert (path);
    int fd = open (path, O_RDWR);
    struct stat status;
    if (fd < 0 || fstat (fd, &status)) {
        s_fail (error, error_size, "%s: %s", path, strerror (errno));
        if (fd >= 0)
            close (fd);
        return NULL;
    }
    jace_links_t *self = (jace_links_t *) calloc (1, sizeof *self);
    assert (self);
    self->size = (size_t) status.st_size;
    self->map = self->size
              ? mmap (NULL, self->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                      fd, 0)
              : MAP_FAILED;
    int saved = errno;
    close (fd);
    if (self->map == MAP_FAILED) {
        s_fail (error, error_size, "%s: %s", path, self->size
                ? strerror (saved) : "empty file");
        free (self);
        return NULL;
    }
    if (s_check_layout (self, path, error, error_size))
        jace_links_destroy (&self);
    return self;
}


//  --------------------------------------------------------------------------
//  Unmap

void
jace_links_destroy (jace_links_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_links_t *self = *self_p;
        munmap (self->map, self->size);
        free (self);
        *self_p = NULL;
    }
}


size_t
jace_links_count (jace_links_t *self)
{
    assert (self);
    return self->count;
}


jace_links_resource_t
jace_links_resource (jace_links_t *self, size_t index)
{
    assert (self);
    assert (index < self->count);
    jace_links_resource_t resource = {
        self->resources [index].bandwidth_mbps,
        (size_t) self->resources [index].transfers
    };
    return resource;
}


//  --------------------------------------------------------------------------
//  Read resource `index`'s lane free earliest, and how long a transfer of
//  this size and duration holds it: a pipe only for its share of the
//  capacity, a KPBS lane for the whole transfer.

static claim_t
s_claim (jace_links_t *self, size_t index, size_t bytes, int64_t transfer)
{
    const file_resource_t *record = &self->resources [index];
    claim_t claim = { &self->lanes [record->first_lane], 0, transfer };
    claim.seen = atomic_load (claim.lane);
    for (uint64_t lane = 1; lane < record->lanes; lane++) {
        _Atomic int64_t *word = &self->lanes [record->first_lane + lane];
        int64_t until = atomic_load (word);
        if (until < claim.seen) {
            claim.lane = word;
            claim.seen = until;
        }
    }
    if (record->transfers == 0)
        claim.hold = s_transfer_ns (bytes, record->bandwidth_mbps);
    return claim;
}

//  Hold the claimed lane from start, if no one took it since we read it
static bool
s_commit (claim_t *claim, int64_t start)
{
    int64_t expected = claim->seen;
    return atomic_compare_exchange_strong (claim->lane, &expected,
                                           start + claim->hold);
}

//  Give a committed lane back, unless someone reserved after us: then the
//  time stays spent (idle), which only ever wastes capacity.  Holds are
//  never 0 and a reservation starts at or after the lane's value, so a
//  lane that still reads start + hold still has ours on top.
static void
s_release (claim_t *claim, int64_t start)
{
    int64_t expected = start + claim->hold;
    atomic_compare_exchange_strong (claim->lane, &expected, claim->seen);
}

//  Sort the path: every process commits resources in the same order, so
//  two reservations racing for the same resources collide on the first
//  one they share, and one of them wins instead of both undoing.
static void
s_sorted_path (jace_links_t *self, const size_t *path, size_t hops,
               size_t *sorted)
{
    for (size_t hop = 0; hop < hops; hop++) {
        assert (path [hop] < self->count);
        size_t place = hop;
        while (place > 0 && sorted [place - 1] > path [hop]) {
            sorted [place] = sorted [place - 1];
            place--;
        }
        sorted [place] = path [hop];
    }
    for (size_t hop = 1; hop < hops; hop++)
        assert (sorted [hop] != sorted [hop - 1]);
}


//  --------------------------------------------------------------------------
//  Reserve a path

int64_t
jace_links_reserve (jace_links_t *self, const size_t *path, size_t hops,
                    size_t bytes, double flow_mbps, int64_t earliest,
                    int64_t *duration)
{
    assert (self);
    assert (path || hops == 0);
    assert (hops <= JACE_LINKS_PATH_MAX);
    assert (duration);
    size_t sorted [JACE_LINKS_PATH_MAX];
    s_sorted_path (self, path, hops, sorted);
    double slowest = flow_mbps > 0 ? flow_mbps : INFINITY;
    for (size_t hop = 0; hop < hops; hop++)
        slowest = fmin (slowest, self->resources [sorted [hop]].bandwidth_mbps);
    int64_t transfer = isinf (slowest) ? 1 : s_transfer_ns (bytes, slowest);

    //  Optimistic: read every lane, start when the last is free, then
    //  take them all; if another process took one meanwhile, give back
    //  what we took and try again from fresh values.  Each failure means
    //  someone else's reservation went through, so the grid progresses.
    claim_t claims [JACE_LINKS_PATH_MAX];
    while (true) {
        int64_t start = earliest;
        for (size_t hop = 0; hop < hops; hop++) {
            claims [hop] = s_claim (self, sorted [hop], bytes, transfer);
            if (claims [hop].seen > start)
                start = claims [hop].seen;
        }
        size_t taken = 0;
        while (taken < hops && s_commit (&claims [taken], start))
            taken++;
        if (taken == hops) {
            *duration = transfer;
            return start;
        }
        while (taken-- > 0)
            s_release (&claims [taken], start);
    }
}


int64_t
jace_links_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (int64_t) now.tv_sec * 1000000000 + now.tv_nsec;
}
