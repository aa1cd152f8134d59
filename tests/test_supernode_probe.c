/*  =========================================================================
    test_supernode_probe - a super-node's link measurements: figures, their
    age, forgetting a pair no longer measured, peers' figures, and probes
    held for the emulated link, and for the grid's shared links

    A pair once measured used to be published forever, even after every
    daemon of its cluster had left: the spawner then mapped jobs on a link
    nobody had seen for hours.  Each pair now carries its age (age_ms) and
    is forgotten when not measured for a few probe periods; the spawner's
    live model treats a missing pair as unmeasured (test_spawner_plan).
    =========================================================================
*/
#include "tap.h"
#include "supernode_probe.h"
#include "jace_shaper.h"
#include "jace_links.h"
#include "platform.h"
#include "shared_links.h"

#include <unistd.h>

//  Answer the PING we were given, as target in cluster `remote` would.
static bool
s_answer (supernode_probe_t *probe, const char *target, const char *remote)
{
    jace_msg_t *ping = supernode_probe_ping (probe, target, remote, false);
    int64_t count = jace_msg_count (ping);
    jace_msg_destroy (&ping);
    return supernode_probe_pong (probe, target, count, remote, 0);
}

//  A param of what the probe publishes, or NULL; the listing is kept in
//  *listing_p for the caller to destroy.
static const char *
s_published (supernode_probe_t *probe, jace_msg_t **listing_p,
             const char *key)
{
    jace_msg_destroy (listing_p);
    *listing_p = jace_msg_new (JACE_MSG_STATUS_REPLY);
    supernode_probe_describe (probe, *listing_p, true);
    return jace_msg_param (*listing_p, key);
}

static void
s_test_age (void)
{
    supernode_probe_t *probe = supernode_probe_new (NULL, NULL, 0);
    supernode_probe_set_cluster (probe, "A");
    jace_msg_t *listing = NULL;
    ok (s_answer (probe, "d1", "B"), "a PONG answering our PING counts");
    const char *age = s_published (probe, &listing, "link/A/B/age_ms");
    ok (age && atoll (age) >= 0 && atoll (age) < 1000,
        "a pair just measured is published with a small age");
    ok (s_published (probe, &listing, "link/B/A/age_ms") != NULL,
        "its reverse carries the age too");

    zclock_sleep (60);
    age = s_published (probe, &listing, "link/A/B/age_ms");
    ok (age && atoll (age) >= 60, "the age grows while no probe answers");

    //  C is measured now, B 60 ms ago: forgetting what is older than
    //  30 ms drops B and keeps C.
    s_answer (probe, "d2", "C");
    supernode_probe_forget_links (probe, zclock_mono () - 30);
    ok (!s_published (probe, &listing, "link/A/B/latency_us")
        && !s_published (probe, &listing, "link/B/A/latency_us")
        && !s_published (probe, &listing, "link/A/B/age_ms"),
        "a pair not measured since the limit is no longer published");
    ok (s_published (probe, &listing, "link/A/C/latency_us") != NULL,
        "a pair measured since is kept");

    //  Measured again, the pair is back with its new samples only.
    s_answer (probe, "d1", "B");
    const char *samples = s_published (probe, &listing, "link/A/B/samples");
    ok (samples && streq (samples, "1"),
        "a forgotten pair measured again starts afresh");
    jace_msg_destroy (&listing);
    supernode_probe_destroy (&probe);
}

static void
s_test_peers (void)
{
    supernode_probe_t *probe = supernode_probe_new (NULL, NULL, 0);
    supernode_probe_set_cluster (probe, "A");
    jace_msg_t *state = jace_msg_new (JACE_MSG_PEER_STATE);
    jace_msg_set_param (state, "link/B/C/latency_us", "700");
    jace_msg_set_param (state, "link/B/C/age_ms", "300");
    jace_msg_set_param (state, "link/C/D/latency_us", "900");
    jace_msg_set_param (state, "link/C/D/age_ms", "-4");
    supernode_probe_learn (probe, "tcp://peer:1", state);
    jace_msg_destroy (&state);
    jace_msg_t *listing = NULL;
    const char *age = s_published (probe, &listing, "link/B/C/age_ms");
    ok (age && streq (age, "300"), "a peer's age for its pair is relayed");
    ok (!s_published (probe, &listing, "link/C/D/age_ms")
        && s_published (probe, &listing, "link/C/D/latency_us"),
        "a negative age from a peer is left out, its sound figures kept");
    jace_msg_destroy (&listing);
    supernode_probe_destroy (&probe);
}

//  With a platform, a PING to B waits for the emulated A-B link, by the
//  shaper's delay formula: two-clusters.platform joins them with 2000 us
//  and 1000 Mb/s.
static void
s_test_hold (void)
{
    const char *srcdir = getenv ("JACE_SRCDIR");
    char path [1024], reason [1200] = "";
    snprintf (path, sizeof path, "%s/examples/platforms/two-clusters.platform",
              srcdir ? srcdir : ".");
    supernode_probe_t *probe = supernode_probe_new (path, reason,
                                                    sizeof reason);
    if (!ok (probe != NULL, "a probe loads the example platform")) {
        diag ("%s", reason);
        ok (false, "a probe is held for the emulated link");
        return;
    }
    supernode_probe_set_cluster (probe, "A");
    zsock_t *sink = zsock_new_pull ("inproc://probe-hold");
    zsock_t *link = zsock_new_push (">inproc://probe-hold");
    jace_msg_t *ping = supernode_probe_ping (probe, "peer:x", "B", false);
    supernode_probe_send (probe, link, "B", &ping);
    //  64 header bytes, no padding; the wait is in microseconds, and a
    //  busy machine may have spent a millisecond of it.
    int64_t hold_usec = jace_shaper_delay_nsec (2000, 1000, 64) / 1000;
    int64_t wait = supernode_probe_flush (probe);
    ok (wait > 0 && wait <= hold_usec && wait >= hold_usec - 1000,
        "a probe is held for the emulated link, to the microsecond");
    supernode_probe_destroy (&probe);
    zsock_destroy (&link);
    zsock_destroy (&sink);
}

//  Write the links file of platform at path, as jace-grid does.
static void
s_create_links (platform_t *platform, const char *path)
{
    size_t count = shared_links_count (platform);
    jace_links_resource_t resources [16];
    assert (count <= 16);
    for (size_t index = 0; index < count; index++)
        shared_links_resource (platform, index, &resources [index].bandwidth_mbps,
                               &resources [index].transfers);
    char error [512];
    int rc = jace_links_create (path, resources, count, error, sizeof error);
    assert (rc == 0);
    (void) rc;
}

//  With the grid's shared links, a bulk probe from A to B waits while a
//  daemon's transfer holds B's uplink, as the daemon's next one would,
//  and alone flows at the pace of the slowest resource of its path:
//  shared-backbone.platform gives A's uplink 1000 Mb/s, the backbone
//  100, B's uplink 50.
static void
s_test_shared (void)
{
    const char *srcdir = getenv ("JACE_SRCDIR");
    char platform_path [1024], links_path [] = "/tmp/jace-probe-links-XXXXXX";
    char reason [1200] = "";
    snprintf (platform_path, sizeof platform_path,
              "%s/examples/platforms/shared-backbone.platform",
              srcdir ? srcdir : ".");
    int fd = mkstemp (links_path);
    assert (fd >= 0);
    close (fd);
    platform_t *platform = platform_load (platform_path, reason, sizeof reason);
    assert (platform);
    s_create_links (platform, links_path);

    supernode_probe_t *probe = supernode_probe_new (NULL, NULL, 0);
    ok (supernode_probe_share_links (probe, links_path, reason,
                                     sizeof reason) == -1
        && strstr (reason, "need a platform"),
        "shared links without a platform are refused");
    supernode_probe_destroy (&probe);

    //  A links file of another platform declares other resources.
    char other_path [1024], other_links [] = "/tmp/jace-probe-other-XXXXXX";
    snprintf (other_path, sizeof other_path,
              "%s/examples/platforms/two-clusters.platform",
              srcdir ? srcdir : ".");
    fd = mkstemp (other_links);
    assert (fd >= 0);
    close (fd);
    jace_links_resource_t one = { 10, 0 };
    char error [512];
    jace_links_create (other_links, &one, 1, error, sizeof error);
    probe = supernode_probe_new (platform_path, reason, sizeof reason);
    assert (probe);
    ok (supernode_probe_share_links (probe, other_links, reason,
                                     sizeof reason) == -1
        && strstr (reason, "does not declare"),
        "a links file that does not match the platform is refused");
    ok (supernode_probe_share_links (probe, links_path, reason,
                                     sizeof reason) == 0,
        "the grid's links file is taken");
    supernode_probe_set_cluster (probe, "A");
    zsock_t *sink = zsock_new_pull ("inproc://probe-shared");
    zsock_t *link = zsock_new_push (">inproc://probe-shared");

    //  Alone: its padding and 64 header bytes at 50 Mb/s (the first bulk
    //  probe to a cluster carries the least), then the latency.
    jace_msg_t *ping = NULL;
    for (int k = 0; k < SUPERNODE_PROBE_BULK_EVERY; k++) {
        jace_msg_destroy (&ping);
        ping = supernode_probe_ping (probe, "d:b", "B", true);
    }
    assert (strlen (jace_msg_reason (ping)) == SUPERNODE_PROBE_PADDING_MIN);
    int64_t alone_usec = jace_shaper_delay_nsec (
        platform_latency_us (platform, 0, 1), 50,
        SUPERNODE_PROBE_PADDING_MIN + 64) / 1000;
    //  Answered at once, so the next bulk probe may go soon
    int64_t first_count = jace_msg_count (ping);
    supernode_probe_send (probe, link, "B", &ping);
    supernode_probe_pong (probe, "d:b", first_count, "B", 0);
    int64_t wait = supernode_probe_flush (probe);
    if (!ok (wait >= alone_usec - 1000 && wait <= alone_usec,
             "a lone bulk probe flows at the slowest shared link of its "
             "path"))
        diag ("held %" PRId64 " us, %" PRId64 " expected", wait, alone_usec);

    //  A daemon of A sends 5 MB to B: B's uplink is busy for 0.8 s.
    jace_links_t *daemon = jace_links_open (links_path, error, sizeof error);
    size_t path [SHARED_LINKS_PATH_MAX];
    size_t hops = shared_links_path (platform, 0, 1, path);
    int64_t duration;
    int64_t start = jace_links_reserve (daemon, path, hops, 5000000, 0,
                                        jace_links_now (), &duration);
    int64_t busy_until = start + duration;
    int64_t busy_msec = (busy_until - jace_links_now ()) / 1000000;
    //  The next bulk one, once the first's share of the link allows it
    int64_t deadline = zclock_mono () + 5000;
    do {
        jace_msg_destroy (&ping);
        ping = supernode_probe_ping (probe, "d:b", "B", true);
        if (strlen (jace_msg_reason (ping)) > 0)
            break;
        zclock_sleep (1);
    } while (zclock_mono () < deadline);
    assert (strlen (jace_msg_reason (ping)) > 0);
    supernode_probe_send (probe, link, "B", &ping);
    //  The earlier probe may be due first: take the later wait.
    zclock_sleep ((int) (alone_usec / 1000) + 2);
    int64_t still_busy_msec = (busy_until - jace_links_now ()) / 1000000;
    wait = supernode_probe_flush (probe) / 1000;
    ok (busy_msec > 700 && wait >= still_busy_msec,
        "a bulk probe waits for the daemons' transfer on the shared links");
    diag ("uplink busy for %" PRId64 " ms (%" PRId64 " ms still), probe "
          "held %" PRId64 " ms", busy_msec, still_busy_msec, wait);

    jace_links_destroy (&daemon);
    supernode_probe_destroy (&probe);
    zsock_destroy (&link);
    zsock_destroy (&sink);
    platform_destroy (&platform);
    unlink (links_path);
    unlink (other_links);
}

//  A PING to target in cluster remote: true if it is bulk; answered at
//  once unless count_p takes its count.
static bool
s_ping_bulk (supernode_probe_t *probe, const char *target,
             const char *remote, int64_t *count_p)
{
    jace_msg_t *ping = supernode_probe_ping (probe, target, remote, true);
    bool bulk = strlen (jace_msg_reason (ping)) > 0;
    if (count_p)
        *count_p = jace_msg_count (ping);
    else
        supernode_probe_pong (probe, target, jace_msg_count (ping), remote,
                              0);
    jace_msg_destroy (&ping);
    return bulk;
}

//  Bulk probes take at most a hundredth of a link: after one whose
//  padding took 30 ms more than the small probes, the next waits 3 s,
//  where every fourth probe of a target was bulk before.
static void
s_test_bulk_share (void)
{
    char reason [256];
    supernode_probe_t *probe = supernode_probe_new (NULL, reason,
                                                    sizeof reason);
    supernode_probe_set_cluster (probe, "A");
    bool early_bulk = false;
    for (int k = 0; k < SUPERNODE_PROBE_BULK_EVERY - 1; k++)
        early_bulk |= s_ping_bulk (probe, "d:c", "C", NULL);
    int64_t count = 0;
    bool bulk = s_ping_bulk (probe, "d:c", "C", &count);
    ok (!early_bulk && bulk, "the fourth probe of a daemon is bulk");
    zclock_sleep (30);
    supernode_probe_pong (probe, "d:c", count, "C", 0);
    bool again = false;
    for (int k = 0; k < 2 * SUPERNODE_PROBE_BULK_EVERY; k++)
        again |= s_ping_bulk (probe, "d:c", "C", NULL);
    ok (!again, "after one whose padding took 30 ms, none in the next "
        "eight probes (3 s must pass)");
    supernode_probe_destroy (&probe);

    //  A cluster's daemons are probed in turn, one a period: the fourth
    //  probe of the cluster is bulk, whichever daemon it goes to.  Counted
    //  per daemon, a cluster of 20 had one every 80 periods.
    probe = supernode_probe_new (NULL, reason, sizeof reason);
    supernode_probe_set_cluster (probe, "A");
    const char *daemons [] = { "d:c1", "d:c2", "d:c3", "d:c4" };
    size_t first_bulk = 0;
    for (size_t k = 0; k < 4 && !first_bulk; k++)
        if (s_ping_bulk (probe, daemons [k], "C", NULL))
            first_bulk = k + 1;
    is_int ((long long) first_bulk, SUPERNODE_PROBE_BULK_EVERY, "probing "
            "four daemons of a cluster in turn, the fourth probe is bulk");
    supernode_probe_destroy (&probe);
}

//  A first bulk probe (1 KiB) to C answered late after the small ones'
//  best.  After small probes that all came back at once, 100 ms late: a
//  0.08 Mb/s link, measured.  After small probes 40 ms apart (a loaded
//  machine), 15 ms late: noise, no figure, and the next bulk probe
//  carries more.  Before, the noise was published as a 0.5 Mb/s link and
//  the padding stayed 1 KiB.  (The margins hold beside CPU hogs: the
//  "at once" answers vary by a few ms there, and a 15 ms bar for them
//  failed once.)
static void
s_noisy_link (bool noisy, bool *published, size_t *next_padding)
{
    supernode_probe_t *probe = supernode_probe_new (NULL, NULL, 0);
    supernode_probe_set_cluster (probe, "A");
    int64_t count = 0;
    for (int k = 0; k < SUPERNODE_PROBE_BULK_EVERY - 1; k++) {
        s_ping_bulk (probe, "d:c", "C", &count);
        if (noisy && k > 0)
            zclock_sleep (40);
        supernode_probe_pong (probe, "d:c", count, "C", 0);
    }
    bool bulk = s_ping_bulk (probe, "d:c", "C", &count);
    assert (bulk);
    zclock_sleep (noisy ? 15 : 100);
    supernode_probe_pong (probe, "d:c", count, "C", 0);
    jace_msg_t *listing = NULL;
    *published = s_published (probe, &listing, "link/A/C/bandwidth_mbps");
    jace_msg_destroy (&listing);
    *next_padding = 0;
    if (noisy) {
        //  The next bulk probe may go 100 x its extra time later: 1.5 s
        //  if the 15 ms sleep lasted 15 ms, more on a loaded machine
        zclock_sleep (3000);
        for (int k = 0; k < SUPERNODE_PROBE_BULK_EVERY && !*next_padding;
             k++) {
            jace_msg_t *ping = supernode_probe_ping (probe, "d:c", "C", true);
            *next_padding = strlen (jace_msg_reason (ping));
            jace_msg_destroy (&ping);
        }
    }
    supernode_probe_destroy (&probe);
}

static void
s_test_bulk_noise (void)
{
    bool published;
    size_t next_padding;
    s_noisy_link (false, &published, &next_padding);
    ok (published, "a bulk probe 100 ms late after steady small ones "
        "measures the link");
    s_noisy_link (true, &published, &next_padding);
    ok (!published && next_padding == 4 * SUPERNODE_PROBE_PADDING_MIN,
        "one 15 ms late among small ones 40 ms apart is noise: no figure, "
        "and the next carries 4 times the padding");
    diag ("next padding %zu", next_padding);
}

//  Probe cluster B over `transfers_line` (a KPBS backbone's "transfers =
//  2", "" for one shared lane, NULL for a backbone not shared), the
//  link answering each PING as soon as its hold is over (a burst's with
//  `forged` as their time of arrival, if not 0), until 20 s passed or:
//  with one_burst, a burst was answered; else a figure was published (a
//  burst a loaded machine made noisy gives none, and the prober bursts
//  again, as it does on a grid; one such burst failed a CI run).
//  Returns what is published as link/A/B/transfers, or 0; *bursts
//  counts the bursts.
static long
s_burst_transfers (const char *transfers_line, int64_t forged,
                   bool one_burst, int *bursts)
{
    //  10 Mb/s: 32 KiB take 26 ms, well above a loaded machine's noise
    char platform_path [] = "/tmp/jace-probe-kpbs-XXXXXX";
    char links_path [] = "/tmp/jace-probe-klinks-XXXXXX";
    int fd = mkstemp (platform_path);
    assert (fd >= 0);
    FILE *file = fdopen (fd, "w");
    assert (file);
    fprintf (file, "platform\n    name = \"kpbs\"\n    backbone\n"
             "        latency_us = 1000\n        bandwidth_mbps = 10\n"
             "%s%s%s"
             "    cluster\n        name = \"A\"\n        nodes = 2\n"
             "    cluster\n        name = \"B\"\n        nodes = 2\n",
             transfers_line ? "        shared = 1\n" : "",
             transfers_line && *transfers_line ? "        " : "",
             transfers_line && *transfers_line ? transfers_line : "");
    fclose (file);
    char reason [1200] = "";
    platform_t *platform = platform_load (platform_path, reason,
                                          sizeof reason);
    assert (platform);
    supernode_probe_t *probe = supernode_probe_new (platform_path, reason,
                                                    sizeof reason);
    assert (probe);
    fd = mkstemp (links_path);
    assert (fd >= 0);
    close (fd);
    if (transfers_line) {
        s_create_links (platform, links_path);
        int rc = supernode_probe_share_links (probe, links_path, reason,
                                              sizeof reason);
        assert (rc == 0);
        (void) rc;
    }
    supernode_probe_set_cluster (probe, "A");
    //  An endpoint of its own each time: a closed socket's endpoint is
    //  freed by the context's reaper thread, later under load, and
    //  binding it again at once failed in a loaded test run
    static int calls = 0;
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://probe-burst-%d", ++calls);
    zsock_t *sink = zsock_new_pull (endpoint);
    assert (sink);
    char connect [80];
    snprintf (connect, sizeof connect, ">%s", endpoint);
    zsock_t *link = zsock_new_push (connect);
    assert (link);
    jace_msg_t *listing = NULL;
    long transfers = 0;
    *bursts = 0;
    int64_t deadline = zclock_mono () + 20000;
    while ((one_burst ? !*bursts : !transfers)
       &&  zclock_mono () < deadline) {
        jace_msg_t *pings [SUPERNODE_PROBE_BURST];
        size_t count = supernode_probe_pings (probe, "peer:b", "B", true,
                                              pings);
        for (size_t i = 0; i < count; i++)
            supernode_probe_send (probe, link, "B", &pings [i]);
        *bursts += count > 1;
        //  Each answered as it arrives
        for (size_t answered = 0; answered < count; ) {
            int64_t wait = supernode_probe_flush (probe);
            zmq_pollitem_t item = { zsock_resolve (sink), 0, ZMQ_POLLIN, 0 };
            if (zmq_poll (&item, 1, wait < 0 ? 100 : wait / 1000 + 1) <= 0) {
                if (wait < 0)
                    break;      //  Nothing held, nothing came: lost
                continue;
            }
            char why [256], from [64];
            jace_msg_t *ping = jace_msg_recv (sink, why, sizeof why, from,
                                              sizeof from);
            assert (ping);
            supernode_probe_pong (probe, "peer:b", jace_msg_count (ping),
                                  "B", forged && count > 1 ? forged
                                                          : zclock_usecs ());
            jace_msg_destroy (&ping);
            answered++;
        }
        const char *value = s_published (probe, &listing,
                                         "link/A/B/transfers");
        transfers = value ? atol (value) : 0;
        zclock_sleep (5);
    }
    jace_msg_destroy (&listing);
    zsock_destroy (&link);
    zsock_destroy (&sink);
    supernode_probe_destroy (&probe);
    platform_destroy (&platform);
    unlink (platform_path);
    unlink (links_path);
    return transfers;
}

//  How many transfers a link carries at full speed, from a burst of bulk
//  probes: 2 on a backbone of two lanes, 1 on one lane, and the whole
//  burst where each message flows on its own.
static void
s_test_burst (void)
{
    int bursts;
    long two = s_burst_transfers ("transfers = 2\n", 0, false, &bursts);
    is_int (two, 2, "a burst over a KPBS backbone of 2 lanes counts 2 "
            "transfers at full speed");
    long one = s_burst_transfers ("", 0, false, &bursts);
    is_int (one, 1, "over one shared lane, 1");
    long free_flow = s_burst_transfers (NULL, 0, false, &bursts);
    is_int (free_flow, SUPERNODE_PROBE_BURST, "over links not shared, the "
            "whole burst (a lower bound)");
    //  A target that lies about when the burst came: far in its future,
    //  no figure; past the differences' range (it would overflow them),
    //  ignored, and the round trips count
    long late = s_burst_transfers ("transfers = 2\n", 1000000000000000LL,
                                   true, &bursts);
    ok (bursts == 1 && late == 0, "a burst said to arrive 30 years late "
        "gives no figure");
    long huge = s_burst_transfers ("transfers = 2\n", INT64_MAX, false,
                                   &bursts);
    is_int (huge, 2, "an arrival time out of range is ignored: the round "
            "trips count 2");
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (26);
    s_test_age ();
    s_test_peers ();
    s_test_hold ();
    s_test_shared ();
    s_test_bulk_share ();
    s_test_bulk_noise ();
    s_test_burst ();
    return tap_done ();
}
