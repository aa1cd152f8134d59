/*  =========================================================================
    test_supernode_probe - a super-node's link measurements: figures, their
    age, forgetting a pair no longer measured, peers' figures, and probes
    held for the emulated link

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

#include <unistd.h>

//  Answer the PING we were given, as target in cluster `remote` would.
static bool
s_answer (supernode_probe_t *probe, const char *target, const char *remote)
{
    jace_msg_t *ping = supernode_probe_ping (probe, target, remote, false);
    int64_t count = jace_msg_count (ping);
    jace_msg_destroy (&ping);
    return supernode_probe_pong (probe, target, count, remote);
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
    //  64 header bytes, no padding; flush rounds the wait up to whole
    //  milliseconds, and a busy machine may have spent one of them.
    int64_t hold_usec = jace_shaper_delay_nsec (2000, 1000, 64) / 1000;
    int64_t wait = supernode_probe_flush (probe);
    ok (wait > 0 && wait <= (hold_usec + 999) / 1000
        && wait >= hold_usec / 1000 - 1,
        "a probe is held for the emulated link");
    supernode_probe_destroy (&probe);
    zsock_destroy (&link);
    zsock_destroy (&sink);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (11);
    s_test_age ();
    s_test_peers ();
    s_test_hold ();
    return tap_done ();
}
