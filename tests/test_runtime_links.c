/*  =========================================================================
    test_runtime_links - the grid's shared link reservations: a shared
    backbone divides its bandwidth between transfers, a lone transfer gets
    it whole, a KPBS backbone carries at most k transfers at once, an
    uplink limits its cluster's total, and processes racing on one file
    never overlap beyond those limits

    The arithmetic checks pass explicit start times far from now, so that
    they depend on the schedule only, never on how fast this machine is.
    =========================================================================
*/
#include "tap.h"
#include "jace_links.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

//  One millisecond: 1000 bytes at 8 Mb/s
#define MS 1000000
#define KB 1000

//  The resources of these tests
enum {
    BACKBONE,                   //  Pipe, 8 Mb/s
    KPBS,                       //  2 transfers at once, 8 Mb/s each
    UPLINK,                     //  Pipe, 8 Mb/s: a cluster's uplink
    LINK_X,                     //  Pipe, 80 Mb/s
    LINK_Y,                     //  Pipe, 80 Mb/s
    RACE_PIPE,                  //  Pipe, 16 Mb/s, for the process race
    RACE_KPBS,                  //  2 transfers at once, 8 Mb/s each
    RESOURCES
};

static const jace_links_resource_t s_resources [RESOURCES] = {
    { 8, 0 }, { 8, 2 }, { 8, 0 }, { 80, 0 }, { 80, 0 }, { 16, 0 }, { 8, 2 }
};

//  Processes and reservations each in the race
#define RACERS 6
#define RACE_ROUNDS 20000

static int64_t
s_reserve (jace_links_t *links, size_t first, size_t second, size_t hops,
           size_t bytes, double flow_mbps, int64_t earliest,
           int64_t *duration)
{
    size_t path [2] = { first, second };
    return jace_links_reserve (links, path, hops, bytes, flow_mbps,
                               earliest, duration);
}

static int
s_compare (const void *first, const void *second)
{
    int64_t a = *(const int64_t *) first, b = *(const int64_t *) second;
    return a < b ? -1 : a > b;
}

//  True if, of these transfers all lasting `duration`, at most k overlap
static bool
s_at_most (int64_t *starts, size_t count, size_t k, int64_t duration)
{
    qsort (starts, count, sizeof *starts, s_compare);
    for (size_t index = 0; index + k < count; index++)
        if (starts [index + k] < starts [index] + duration)
            return false;
    return true;
}

static void
s_arithmetic (jace_links_t *links)
{
    int64_t duration;
    int64_t base = 1000000000000;   //  Any time will do: all lanes free
    int64_t start = s_reserve (links, BACKBONE, 0, 1, KB, 0, base,
                               &duration);
    ok (start == base && duration == MS,
        "a lone transfer starts at once with the backbone's full bandwidth");

    base += 1000 * MS;
    int64_t first = s_reserve (links, BACKBONE, 0, 1, KB, 100, base,
                               &duration);
    int64_t second = s_reserve (links, BACKBONE, 0, 1, KB, 100, base,
                                &duration);
    ok (first == base && second == base + MS,
        "two transfers on one backbone take twice as long as one");

    //  A 80 Mb/s pipe holds ten 8 Mb/s transfers at once
    base += 1000 * MS;
    int64_t starts [12];
    for (size_t index = 0; index < 10; index++)
        starts [index] = s_reserve (links, LINK_X, 0, 1, KB, 8, base,
                                    &duration);
    ok (duration == MS && starts [9] == base + 9 * MS / 10,
        "a pipe shares its bandwidth: ten transfers at a tenth of it "
        "overlap, each charged a tenth");

    base += 1000 * MS;
    for (size_t index = 0; index < 3; index++)
        starts [index] = s_reserve (links, KPBS, 0, 1, KB, 0, base,
                                    &duration);
    ok (starts [0] == base && starts [1] == base && starts [2] == base + MS,
        "a KPBS backbone with k = 2 runs two transfers at once, the third "
        "waits");

    base += 1000 * MS;
    first = s_reserve (links, UPLINK, LINK_X, 2, KB, 0, base, &duration);
    int64_t lone = duration;
    second = s_reserve (links, LINK_Y, UPLINK, 2, KB, 0, base, &duration);
    ok (lone == MS && first == base && second == base + MS,
        "an uplink limits its cluster's total, even over separate links");

    base += 1000 * MS;
    s_reserve (links, BACKBONE, 0, 1, KB, 0, base, &duration);
    start = s_reserve (links, BACKBONE, 0, 1, KB, 0, base + 5 * MS,
                       &duration);
    ok (start == base + 5 * MS,
        "a transfer after the backbone is free again starts when asked");
}

//  One racer: reserve, write each start at slots [0, RACE_ROUNDS) for
//  the KPBS resource alone and [RACE_ROUNDS, 2 RACE_ROUNDS) for the path
//  through the pipe and the KPBS resource.
static void
s_race (const char *path, int64_t base, int64_t *slots,
        volatile int64_t *go)
{
    jace_links_t *links = jace_links_open (path, NULL, 0);
    if (!links)
        _exit (1);
    while (!*go)
        ;                       //  Every racer starts at the same time
    int64_t duration;
    for (size_t round = 0; round < RACE_ROUNDS; round++) {
        slots [round] = s_reserve (links, KPBS, 0, 1, KB, 0, base,
                                   &duration);
        slots [RACE_ROUNDS + round] = s_reserve (links, RACE_KPBS,
            RACE_PIPE, 2, KB, 0, base, &duration);
    }
    jace_links_destroy (&links);
    _exit (0);
}

static void
s_processes (const char *path)
{
    size_t count = RACERS * RACE_ROUNDS;
    //  The racers' starts, then the flag that starts them
    size_t size = (2 * count + 1) * sizeof (int64_t);
    int64_t *slots = (int64_t *) mmap (NULL, size, PROT_READ | PROT_WRITE,
                                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert (slots != MAP_FAILED);
    int64_t base = jace_links_now () + 1000 * MS;
    pid_t racers [RACERS];
    for (size_t racer = 0; racer < RACERS; racer++) {
        racers [racer] = fork ();
        if (racers [racer] == 0)
            s_race (path, base, slots + racer * 2 * RACE_ROUNDS,
                    slots + 2 * count);
    }
    slots [2 * count] = 1;
    bool exited = true;
    for (size_t racer = 0; racer < RACERS; racer++) {
        int status;
        exited = waitpid (racers [racer], &status, 0) == racers [racer]
              && WIFEXITED (status) && WEXITSTATUS (status) == 0 && exited;
    }
    ok (exited, "six processes reserve concurrently on one file");

    int64_t *alone = (int64_t *) malloc (count * sizeof (int64_t));
    int64_t *through = (int64_t *) malloc (count * sizeof (int64_t));
    for (size_t racer = 0; racer < RACERS; racer++)
        for (size_t round = 0; round < RACE_ROUNDS; round++) {
            int64_t *mine = slots + racer * 2 * RACE_ROUNDS;
            alone [racer * RACE_ROUNDS + round] = mine [round];
            through [racer * RACE_ROUNDS + round] = mine [RACE_ROUNDS
                                                          + round];
        }
    ok (s_at_most (alone, count, 2, MS),
        "never more than k = 2 transfers at once across processes");
    is_int (alone [count - 1] + MS - base, (int64_t) count / 2 * MS,
            "and k lanes carry them in exactly count / k transfer times");
    ok (s_at_most (through, count, 2, MS),
        "a two-resource path keeps the KPBS limit across processes");
    //  The 16 Mb/s pipe takes a transfer every half transfer time: no
    //  two starts closer than that, or the pipe carried too much.
    bool spaced = true;
    for (size_t index = 1; index < count; index++)
        spaced = spaced && through [index] - through [index - 1] >= MS / 2;
    ok (spaced, "and the pipe's aggregate never exceeds its bandwidth");
    int64_t least = (int64_t) (count - 1) * MS / 2 + MS;
    int64_t took = through [count - 1] + MS - base;
    ok (took >= least && took <= least + least / 4,
        "and the undone reservations of lost races waste little time");
    diag ("  the path's transfers took %.4f times the least possible",
          (double) took / (double) least);
    free (alone);
    free (through);
    munmap (slots, size);
}

static void
s_malformed (const char *folder)
{
    char path [512], reason [256] = "";
    snprintf (path, sizeof path, "%s/garbage", folder);
    FILE *file = fopen (path, "w");
    fputs ("JACELNK1 but not really a links file\n", file);
    fclose (file);
    ok (jace_links_open (path, reason, sizeof reason) == NULL
        && strstr (reason, path),
        "a file that is not a links file is refused, with its name");
    unlink (path);
    snprintf (path, sizeof path, "%s/missing", folder);
    ok (jace_links_open (path, reason, sizeof reason) == NULL,
        "a missing file is refused");
    jace_links_resource_t bad = { 0, 0 };
    ok (jace_links_create (path, &bad, 1, reason, sizeof reason) == -1,
        "a resource without bandwidth is refused");
}

int
main (void)
{
    tap_plan (17);
    char folder [] = "/tmp/test_runtime_links.XXXXXX";
    if (!mkdtemp (folder)) {
        diag ("cannot make a folder in /tmp");
        return 1;
    }
    char path [512];
    snprintf (path, sizeof path, "%s/links", folder);
    char reason [256] = "";
    int rc = jace_links_create (path, s_resources, RESOURCES, reason,
                                sizeof reason);
    jace_links_t *links = jace_links_open (path, reason, sizeof reason);
    ok (rc == 0 && links && jace_links_count (links) == RESOURCES
        && jace_links_resource (links, KPBS).transfers == 2,
        "a links file is created and mapped with its resources");
    if (!links) {
        diag ("  %s", reason);
        return tap_done ();
    }
    s_arithmetic (links);

    //  A new grid in the same folder starts with every link free, even
    //  while a process of the old one still maps the old file.
    jace_links_create (path, s_resources, RESOURCES, NULL, 0);
    jace_links_t *fresh = jace_links_open (path, NULL, 0);
    int64_t duration;
    int64_t start = fresh ? s_reserve (fresh, BACKBONE, 0, 1, KB, 0,
                                       1000000000000, &duration) : -1;
    ok (start == 1000000000000,
        "creating the file again frees every link");
    jace_links_destroy (&fresh);
    jace_links_destroy (&links);

    s_processes (path);
    s_malformed (folder);
    unlink (path);
    rmdir (folder);
    return tap_done ();
}
