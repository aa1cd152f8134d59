/*  =========================================================================
    supernode_probe - measured links between clusters (PING / PONG)

    Why minimums: a round trip is the link's time plus queueing and
    scheduling noise, which only ever adds; the smallest of the last few
    samples is the best estimate of the link itself, and a window (rather
    than the all-time minimum) lets the figure follow a link that slows.
    =========================================================================
*/
#include "supernode_probe.h"
#include "jace_shaper.h"
#include "platform.h"
#include "shared_links.h"
#include "jace_links.h"

#include <math.h>

//  Round trips kept per link and kind (small, bulk).
#define LINK_SAMPLES 8
//  Most cluster pairs measured here: a grid has far fewer clusters, and a
//  daemon that changes its cluster at each registration cannot grow the
//  table past this.
#define LINKS_MAX 1024
//  Probes of one target awaiting their PONG; an older one is given up
//  (room for a burst beside the small probes).
#define OUTSTANDING 16
//  Most probes held for emulated links at once; beyond, probes are lost,
//  as on a congested link, rather than memory grown.
#define DELAYED_MAX 4096
//  A link's bulk probes take at most 1/BULK_SHARE_INVERSE of its time:
//  the next waits that many times the last one's extra transfer time.
//  32 KiB take 2.6 s on a 0.1 Mb/s backbone; sent every fourth probe of
//  each daemon behind it, they held the shared backbone most of the time
//  and the daemons' vectors waited (test_platform_backbone).  So the first
//  bulk probe to a cluster carries the least padding, and each next one
//  BULK_GROWTH times more until its extra time reaches BULK_TARGET_USEC
//  or its padding the most.  Only those measure the bandwidth: a small
//  padding's extra time on a fast link is mostly scheduling noise (under
//  two CPU hogs, 1 KiB probes put a 100 Mb/s link at 1.4-3.7 Mb/s).
#define BULK_SHARE_INVERSE 100
#define BULK_TARGET_USEC 10000
#define BULK_GROWTH 4
//  Extra time below which a bulk round trip is not used at all.
#define BULK_MEASURABLE_USEC 200
//  A bulk probe short of the largest padding measures the link only if
//  its extra time is this many times the small probes' noise (their
//  median round trip less their smallest).  Under CPU load a 1 KiB probe
//  waited 10 ms for a core, not for the link: table1-hd072's 100-200
//  Mb/s links read 0.4 Mb/s, and the padding never grew past 1 KiB to
//  correct it, so every mapping of a fresh grid saw links 250-500 times
//  too slow.
#define BULK_NOISE_TIMES 4
//  A bulk probe whose PONG never came holds the next this long (msec).
#define BULK_LOST_MSEC 10000
//  How many transfers a link carries at full speed at once (KPBS k, for
//  GGP's schedules) shows only when several cross it together: once the
//  link's figures are settled, every BURST_PERIOD_MSEC (the first
//  BURST_FIRST as soon as the link's share allows) a probe sends
//  SUPERNODE_PROBE_BURST bulk probes at once, none of our other bulk
//  probes within BURST_CLEAR_MSEC of it.  With k lanes the j-th of them
//  arrives after about ceil(j/k) single transfers; on a link that shares
//  its bandwidth, all after about j.  So the probes whose one-way extra
//  time is within BURST_WITHIN single transfers count the transfers that
//  went at full speed; the median of the last bursts is the estimate (a
//  lower bound when every probe of a burst was on time).  A single
//  transfer must last BURST_SINGLE_USEC and beyond the small probes'
//  noise for a burst to resolve anything.
#define BURST_PERIOD_MSEC 15000
#define BURST_FIRST 3
#define BURST_CLEAR_MSEC 500
#define BURST_WITHIN 1.5
#define BURST_SINGLE_USEC 1000
//  Header bytes of a probe besides its padding, roughly (as jace_shaper).
#define HEADER_BYTES 64
//  Bounds of a peer's published figures we take.
#define LATENCY_MAX_US 1e8
#define BANDWIDTH_MAX_MBPS 1e7
#define AGE_MAX_MSEC 1e10

//  One probe awaiting its PONG.
typedef struct {
    int64_t count;              //  Its sequence number, 0: slot unused
    int64_t sent_at;            //  Handed to the delay queue (usec)
    size_t padding;             //  Bytes of padding, 0: a small probe
    int64_t burst;              //  The burst it belongs to, or 0
    char remote [JACE_ID_MAX];  //  Cluster we believed the target in
    char local [JACE_ID_MAX];   //  Ours when it went
} probe_t;

//  Bulk probes to one remote cluster.
typedef struct {
    int64_t after;              //  None before this (msec, monotonic)
    size_t padding;             //  Bytes the next one carries
    uint64_t pings;             //  Probes that might have been bulk
    int64_t next_burst;         //  None before this (msec, monotonic)
    int64_t burst;              //  Burst awaiting its PONGs, or 0
    size_t burst_got;           //  ... PONGs in so far
    int64_t burst_extra [SUPERNODE_PROBE_BURST];    //  Their extra usec
} bulk_t;

//  A peer or daemon we probe.
typedef struct {
    probe_t probes [OUTSTANDING];   //  Ring of probes awaiting PONGs
    size_t next;                //  Next slot of the ring
    uint64_t sent;              //  Probes sent so far
    int64_t probed_at;          //  Last probe (msec)
} target_t;

//  Round trips seen on one link (our cluster to a remote one).
typedef struct {
    int64_t small [LINK_SAMPLES];   //  usec; 0: empty slot
    int64_t bulk [LINK_SAMPLES];
    int64_t bulk_bytes [LINK_SAMPLES];  //  Padding of each bulk one
    size_t next_small, next_bulk;   //  Next slot of each ring
    int64_t oneway [LINK_SAMPLES];  //  Small probes' arrival by the
                                //  target's clock less their departure by
                                //  ours (usec: latency plus the clocks'
                                //  offset), when the PONG said
    bool has_oneway [LINK_SAMPLES];
    size_t transfers [LINK_SAMPLES];    //  Bursts' transfers at full
                                //  speed; 0: empty slot
    size_t next_transfers;
    uint64_t samples;           //  Round trips in all
    int64_t measured_at;        //  Last round trip (msec, monotonic)
} link_t;

//  A probe held for its emulated link.
typedef struct {
    int64_t due;                //  Send then (usec, monotonic)
    zsock_t *sock;              //  Borrowed
    jace_msg_t *msg;            //  Owned, routing id set if needed
} delayed_t;

struct _supernode_probe_t {
    platform_t *platform;       //  Links to emulate, or NULL
    jace_links_t *shared;       //  The grid's shared links, or NULL
    char cluster [JACE_ID_MAX]; //  Ours, or ""
    zhashx_t *targets;          //  Target key -> target_t, owned
    zhashx_t *links;            //  "LOCAL/REMOTE" -> link_t, owned
    zhashx_t *learnt;           //  Peer -> zhashx of link params, owned
    zhashx_t *bulk;             //  Remote cluster -> bulk_t, owned
    zlistx_t *delayed;          //  delayed_t, owned
    int64_t sequence;           //  Last probe number used
    int64_t bursting_until;     //  No bulk probe before (msec): a burst is
                                //  out (bursts and bulk probes to two
                                //  clusters in one round queued behind
                                //  each other, and counted 1 transfer)
    int64_t bulk_sent_at;       //  Our last bulk probe (msec)
};

static void
s_free_item (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void
s_hash_destroy (void **item_p)
{
    zhashx_destroy ((zhashx_t **) item_p);
}

static void
s_delayed_destroy (void **item_p)
{
    delayed_t *delayed = (delayed_t *) *item_p;
    if (delayed) {
        jace_msg_destroy (&delayed->msg);
        free (delayed);
        *item_p = NULL;
    }
}

supernode_probe_t *
supernode_probe_new (const char *platform, char *reason, size_t reason_size)
{
    platform_t *loaded = NULL;
    if (platform) {
        loaded = platform_load (platform, reason, reason_size);
        if (!loaded)
            return NULL;
    }
    supernode_probe_t *self = (supernode_probe_t *) zmalloc (sizeof *self);
    self->platform = loaded;
    self->targets = zhashx_new ();
    zhashx_set_destructor (self->targets, s_free_item);
    self->links = zhashx_new ();
    zhashx_set_destructor (self->links, s_free_item);
    self->learnt = zhashx_new ();
    zhashx_set_destructor (self->learnt, s_hash_destroy);
    self->bulk = zhashx_new ();
    zhashx_set_destructor (self->bulk, s_free_item);
    self->delayed = zlistx_new ();
    zlistx_set_destructor (self->delayed, s_delayed_destroy);
    return self;
}

void
supernode_probe_destroy (supernode_probe_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        supernode_probe_t *self = *self_p;
        zlistx_destroy (&self->delayed);
        zhashx_destroy (&self->learnt);
        zhashx_destroy (&self->bulk);
        zhashx_destroy (&self->links);
        zhashx_destroy (&self->targets);
        jace_links_destroy (&self->shared);
        platform_destroy (&self->platform);
        free (self);
        *self_p = NULL;
    }
}

//  True if the links file declares the platform's shared resources, in
//  its order (jace-grid made it from the same platform file).
static bool
s_links_match (platform_t *platform, jace_links_t *links)
{
    size_t count = shared_links_count (platform);
    if (jace_links_count (links) != count)
        return false;
    for (size_t index = 0; index < count; index++) {
        double mbps;
        size_t transfers;
        shared_links_resource (platform, index, &mbps, &transfers);
        jace_links_resource_t declared = jace_links_resource (links, index);
        if (declared.bandwidth_mbps != mbps || declared.transfers != transfers)
            return false;
    }
    return true;
}

int
supernode_probe_share_links (supernode_probe_t *self, const char *path,
                             char *reason, size_t reason_size)
{
    assert (self && path);
    if (!self->platform) {
        snprintf (reason, reason_size, "shared links %s need a platform",
                  path);
        return -1;
    }
    jace_links_t *links = jace_links_open (path, reason, reason_size);
    if (!links)
        return -1;
    if (!s_links_match (self->platform, links)) {
        snprintf (reason, reason_size, "%s does not declare the platform's "
                  "shared links", path);
        jace_links_destroy (&links);
        return -1;
    }
    jace_links_destroy (&self->shared);
    self->shared = links;
    return 0;
}

void
supernode_probe_set_cluster (supernode_probe_t *self, const char *cluster)
{
    assert (self && cluster);
    snprintf (self->cluster, sizeof self->cluster, "%s", cluster);
}

const char *
supernode_probe_cluster (supernode_probe_t *self)
{
    assert (self);
    return self->cluster;
}

//  --------------------------------------------------------------------------
//  Emulated links

//  How long a message of `bytes` waits on the emulated link to remote
//  (usec): 0 without a platform or when a cluster is not in it.  With the
//  grid's shared links, the transfer also waits for, and flows at the
//  pace of, the uplinks and backbone it crosses (jace_shaper's rule).
static int64_t
s_hold_usec (supernode_probe_t *self, const char *remote, size_t bytes)
{
    if (!self->platform)
        return 0;
    int from = platform_cluster_index (self->platform, self->cluster);
    int to = platform_cluster_index (self->platform, remote);
    if (from < 0 || to < 0)
        return 0;
    double latency = platform_latency_us (self->platform, (size_t) from,
                                          (size_t) to);
    double mbps = platform_bandwidth_mbps (self->platform, (size_t) from,
                                           (size_t) to);
    size_t path [SHARED_LINKS_PATH_MAX];
    size_t hops = self->shared
                ? shared_links_path (self->platform, (size_t) from,
                                     (size_t) to, path)
                : 0;
    if (hops == 0)
        return jace_shaper_delay_nsec (latency, mbps, bytes) / 1000;
    int64_t now = jace_links_now (), duration;
    int64_t start = jace_links_reserve (self->shared, path, hops, bytes, mbps,
                                        now, &duration);
    return (start - now + duration
            + jace_shaper_delay_nsec (latency, 0, 0)) / 1000;
}

void
supernode_probe_send (supernode_probe_t *self, zsock_t *sock,
                      const char *remote, jace_msg_t **msg_p)
{
    assert (self && sock && msg_p && *msg_p);
    size_t bytes = HEADER_BYTES + strlen (jace_msg_reason (*msg_p));
    int64_t hold = s_hold_usec (self, remote, bytes);
    if (hold <= 0) {
        jace_msg_send (msg_p, sock);
        return;
    }
    if (zlistx_size (self->delayed) >= DELAYED_MAX) {
        jace_msg_destroy (msg_p);
        return;
    }
    delayed_t *delayed = (delayed_t *) zmalloc (sizeof *delayed);
    delayed->due = zclock_usecs () + hold;
    delayed->sock = sock;
    delayed->msg = *msg_p;
    *msg_p = NULL;
    zlistx_add_end (self->delayed, delayed);
}

int64_t
supernode_probe_flush (supernode_probe_t *self)
{
    assert (self);
    int64_t now = zclock_usecs (), next = -1;
    delayed_t *delayed = (delayed_t *) zlistx_first (self->delayed);
    while (delayed) {
        if (delayed->due <= now) {
            jace_msg_send (&delayed->msg, delayed->sock);
            zlistx_delete (self->delayed, zlistx_cursor (self->delayed));
            delayed = (delayed_t *) zlistx_first (self->delayed);
            continue;
        }
        if (next < 0 || delayed->due - now < next)
            next = delayed->due - now;
        delayed = (delayed_t *) zlistx_next (self->delayed);
    }
    return next;
}

void
supernode_probe_forget_socket (supernode_probe_t *self, zsock_t *sock)
{
    assert (self);
    delayed_t *delayed = (delayed_t *) zlistx_first (self->delayed);
    while (delayed) {
        if (delayed->sock == sock) {
            zlistx_delete (self->delayed, zlistx_cursor (self->delayed));
            delayed = (delayed_t *) zlistx_first (self->delayed);
        }
        else
            delayed = (delayed_t *) zlistx_next (self->delayed);
    }
}

//  --------------------------------------------------------------------------
//  Probes and their answers

//  The smallest of a ring of round trips (usec), 0 when it is empty.
static int64_t
s_min (const int64_t *samples)
{
    int64_t best = 0;
    for (size_t i = 0; i < LINK_SAMPLES; i++)
        if (samples [i] > 0 && (best == 0 || samples [i] < best))
            best = samples [i];
    return best;
}

//  The bulk probe state of cluster remote, made on first use; NULL past
//  LINKS_MAX clusters.
static bulk_t *
s_bulk (supernode_probe_t *self, const char *remote)
{
    bulk_t *bulk = (bulk_t *) zhashx_lookup (self->bulk, remote);
    if (!bulk && zhashx_size (self->bulk) < LINKS_MAX) {
        bulk = (bulk_t *) zmalloc (sizeof *bulk);
        bulk->padding = SUPERNODE_PROBE_PADDING_MIN;
        zhashx_insert (self->bulk, remote, bulk);
    }
    return bulk;
}

//  A bulk probe of `padding` bytes to remote took `extra` usec more than
//  the small ones, whose round trips vary by `noise` usec: when the next
//  may go, and what it carries.  True if this one measures the link (see
//  BULK_TARGET_USEC and BULK_NOISE_TIMES); if not, the next carries more.
static bool
s_bulk_measured (supernode_probe_t *self, const char *remote,
                 size_t padding, int64_t extra, int64_t noise)
{
    bool clear = extra >= BULK_TARGET_USEC
              && extra >= BULK_NOISE_TIMES * noise;
    bulk_t *bulk = s_bulk (self, remote);
    if (bulk) {
        bulk->after = zclock_mono () + BULK_SHARE_INVERSE * extra / 1000;
        if (!clear && padding < SUPERNODE_PROBE_PADDING)
            bulk->padding = padding * BULK_GROWTH < SUPERNODE_PROBE_PADDING
                          ? padding * BULK_GROWTH : SUPERNODE_PROBE_PADDING;
    }
    return clear || padding >= SUPERNODE_PROBE_PADDING;
}

//  Remember a probe to `entry` in cluster remote and make its PING.
static jace_msg_t *
s_ping (supernode_probe_t *self, target_t *entry, const char *remote,
        size_t padding, int64_t burst)
{
    probe_t *probe = &entry->probes [entry->next];
    entry->next = (entry->next + 1) % OUTSTANDING;
    entry->sent++;
    entry->probed_at = zclock_mono ();
    probe->count = ++self->sequence;
    probe->sent_at = zclock_usecs ();
    probe->padding = padding;
    probe->burst = burst;
    snprintf (probe->remote, sizeof probe->remote, "%s", remote);
    snprintf (probe->local, sizeof probe->local, "%s", self->cluster);

    jace_msg_t *ping = jace_msg_new (JACE_MSG_PING);
    jace_msg_set_cluster (ping, self->cluster);
    jace_msg_set_count (ping, probe->count);
    if (padding) {
        char *text = (char *) malloc (padding + 1);
        memset (text, '.', padding);
        text [padding] = 0;
        jace_msg_set_reason (ping, text);
        free (text);
    }
    return ping;
}

static link_t *s_link_find (supernode_probe_t *self, const char *remote,
                            bool make);
static double s_link_mbps (const link_t *link);
static bool s_link_settled (const link_t *link);
static size_t s_link_bursts (const link_t *link);

//  True if a burst to cluster remote may go now (BURST_PERIOD_MSEC's
//  comment): the link's figures settled, its share of bulk probes
//  allowing, and none of our bulk probes or bursts under way.
static bool
s_burst_due (supernode_probe_t *self, const char *remote, bulk_t *bulk,
             int64_t now)
{
    link_t *link = s_link_find (self, remote, false);
    return link && s_link_mbps (link) > 0 && s_link_settled (link)
        && now >= bulk->next_burst && now >= bulk->after
        && now >= self->bursting_until
        && now - self->bulk_sent_at >= BURST_CLEAR_MSEC;
}

static size_t
s_pings (supernode_probe_t *self, const char *target, const char *remote,
         bool may_bulk, bool may_burst, jace_msg_t **pings)
{
    assert (self && target && remote && pings);
    target_t *entry = (target_t *) zhashx_lookup (self->targets, target);
    if (!entry) {
        entry = (target_t *) zmalloc (sizeof *entry);
        zhashx_insert (self->targets, target, entry);
    }
    int64_t now = zclock_mono ();
    //  Counted per cluster, not per target: the daemons of a cluster are
    //  probed in turn, one a period, so a cluster of 20 had a bulk probe
    //  every 80 periods, and a tester's clusters without a super-node of
    //  their own (measured through their daemons only) still had no
    //  bandwidth after 140 probes.
    bulk_t *bulk = may_bulk ? s_bulk (self, remote) : NULL;
    bool turn = bulk && bulk->pings++ % SUPERNODE_PROBE_BULK_EVERY
                        == SUPERNODE_PROBE_BULK_EVERY - 1;
    size_t padding = 0, count = 1;
    int64_t burst = 0;
    if (bulk && may_burst && s_burst_due (self, remote, bulk, now)) {
        padding = bulk->padding;
        burst = bulk->burst = self->sequence + 1;
        bulk->burst_got = 0;
        //  The first few as soon as the link's share allows: the
        //  median needs three
        link_t *link = s_link_find (self, remote, false);
        bulk->next_burst = link && s_link_bursts (link) + 1 < BURST_FIRST
                         ? now : now + BURST_PERIOD_MSEC;
        bulk->after = now + BULK_LOST_MSEC;
        self->bursting_until = now + BULK_LOST_MSEC;
        count = SUPERNODE_PROBE_BURST;
    }
    else
    if (turn && now >= bulk->after && now >= self->bursting_until) {
        padding = bulk->padding;
        bulk->after = now + BULK_LOST_MSEC;     //  One at a time
        self->bulk_sent_at = now;
    }
    for (size_t i = 0; i < count; i++)
        pings [i] = s_ping (self, entry, remote, padding, burst);
    return count;
}

jace_msg_t *
supernode_probe_ping (supernode_probe_t *self, const char *target,
                      const char *remote, bool may_bulk)
{
    jace_msg_t *ping = NULL;
    size_t count = s_pings (self, target, remote, may_bulk, false, &ping);
    assert (count == 1);
    return ping;
}

size_t
supernode_probe_pings (supernode_probe_t *self, const char *target,
                       const char *remote, bool may_bulk, jace_msg_t **pings)
{
    return s_pings (self, target, remote, may_bulk, true, pings);
}

//  Our link to cluster remote; made if `make` and LINKS_MAX allows, else
//  NULL when there is none.
static link_t *
s_link_find (supernode_probe_t *self, const char *remote, bool make)
{
    char key [2 * JACE_ID_MAX + 2];
    snprintf (key, sizeof key, "%s/%s", self->cluster, remote);
    link_t *link = (link_t *) zhashx_lookup (self->links, key);
    if (!link && make && zhashx_size (self->links) < LINKS_MAX) {
        link = (link_t *) zmalloc (sizeof *link);
        zhashx_insert (self->links, key, link);
    }
    return link;
}

//  The link's bandwidth (Mb/s) from its bulk samples, 0 before any: each
//  sample's padding over its extra time; noise only adds time, so the
//  largest is the best estimate (as the smallest round trip is for the
//  latency).
static double
s_link_mbps (const link_t *link)
{
    int64_t small = s_min (link->small);
    double mbps = 0;
    for (size_t i = 0; i < LINK_SAMPLES; i++)
        if (small > 0 && link->bulk [i] - small >= BULK_MEASURABLE_USEC)
            mbps = fmax (mbps, (double) link->bulk_bytes [i] * 8.0
                               / (double) (link->bulk [i] - small));
    return mbps;
}

static int
s_compare_size (const void *a, const void *b)
{
    size_t x = *(const size_t *) a, y = *(const size_t *) b;
    return (x > y) - (x < y);
}

//  How many bursts the link's figure holds
static size_t
s_link_bursts (const link_t *link)
{
    size_t found = 0;
    for (size_t i = 0; i < LINK_SAMPLES; i++)
        found += link->transfers [i] > 0;
    return found;
}

//  The median (the lower one) of the transfers at full speed the link's
//  last bursts counted, 0 before any: a burst that met other traffic
//  counts fewer, one whose baseline was off more
static size_t
s_link_transfers (const link_t *link)
{
    size_t counts [LINK_SAMPLES], found = 0;
    for (size_t i = 0; i < LINK_SAMPLES; i++)
        if (link->transfers [i] > 0)
            counts [found++] = link->transfers [i];
    if (found == 0)
        return 0;
    qsort (counts, found, sizeof counts [0], s_compare_size);
    return counts [(found - 1) / 2];
}

//  The least one-way time of the link's small probes (by two clocks:
//  only differences with it mean anything); false before any
static bool
s_link_oneway (const link_t *link, int64_t *least)
{
    bool found = false;
    for (size_t i = 0; i < LINK_SAMPLES; i++)
        if (link->small [i] > 0 && link->has_oneway [i]
        &&  (!found || link->oneway [i] < *least)) {
            *least = link->oneway [i];
            found = true;
        }
    return found;
}

//  True once every slot of the link's small probes holds a one-way time,
//  and two bulk probes measured its bandwidth: a grid's first probes wait
//  for processes still starting, and bursts measured against them read a
//  2-lane backbone as 6 lanes
static bool
s_link_settled (const link_t *link)
{
    size_t bulks = 0;
    for (size_t i = 0; i < LINK_SAMPLES; i++) {
        if (link->small [i] == 0 || !link->has_oneway [i])
            return false;
        bulks += link->bulk [i] > 0;
    }
    return bulks >= 2;          //  And a bandwidth seen twice
}

//  A round trip, and for a small probe whose PONG said when it came
//  (has_oneway), its one-way time by the two clocks
static void
s_link_add (supernode_probe_t *self, const char *remote, size_t padding,
            int64_t rtt, bool has_oneway, int64_t oneway)
{
    link_t *link = s_link_find (self, remote, true);
    if (!link)
        return;
    if (rtt < 1)
        rtt = 1;                //  0 marks an empty slot
    if (padding) {
        link->bulk [link->next_bulk] = rtt;
        link->bulk_bytes [link->next_bulk] = (int64_t) padding;
        link->next_bulk = (link->next_bulk + 1) % LINK_SAMPLES;
    }
    else {
        link->small [link->next_small] = rtt;
        link->has_oneway [link->next_small] = has_oneway;
        link->oneway [link->next_small] = oneway;
        link->next_small = (link->next_small + 1) % LINK_SAMPLES;
    }
    link->samples++;
    link->measured_at = zclock_mono ();
}

//  What the padding of a bulk probe of round trip rtt to cluster remote
//  added: rtt less the link's smallest small round trip (usec).
static int64_t
s_bulk_extra_usec (supernode_probe_t *self, const char *remote, int64_t rtt)
{
    link_t *link = s_link_find (self, remote, false);
    int64_t small = link ? s_min (link->small) : 0;
    return rtt > small ? rtt - small : 0;
}

static int
s_compare_usec (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

//  How much the small round trips to cluster remote vary: their median
//  less their smallest (usec), 0 before there are any.
static int64_t
s_noise_usec (supernode_probe_t *self, const char *remote)
{
    link_t *link = s_link_find (self, remote, false);
    int64_t sorted [LINK_SAMPLES];
    size_t count = 0;
    for (size_t i = 0; link && i < LINK_SAMPLES; i++)
        if (link->small [i] > 0)
            sorted [count++] = link->small [i];
    if (count == 0)
        return 0;
    qsort (sorted, count, sizeof sorted [0], s_compare_usec);
    return sorted [count / 2] - sorted [0];
}

//  Every PONG of burst `burst` to cluster remote is in: how many of its
//  probes went at full speed (BURST_PERIOD_MSEC's comment).
static void
s_burst_done (supernode_probe_t *self, const char *remote, bulk_t *bulk,
              size_t padding)
{
    int64_t slowest = 0;
    for (size_t i = 0; i < SUPERNODE_PROBE_BURST; i++)
        slowest = bulk->burst_extra [i] > slowest ? bulk->burst_extra [i]
                                                  : slowest;
    bulk->after = zclock_mono () + BULK_SHARE_INVERSE * slowest / 1000;
    self->bursting_until = 0;
    link_t *link = s_link_find (self, remote, false);
    double mbps = link ? s_link_mbps (link) : 0;
    if (mbps <= 0)
        return;
    double single = (double) padding * 8.0 / mbps;     //  usec
    if (single < BURST_SINGLE_USEC
    ||  single < BULK_NOISE_TIMES * (double) s_noise_usec (self, remote))
        return;                 //  Too short to tell lanes apart
    //  No transfer beats its size over the bandwidth: one that seems to
    //  measures the baseline (small probes that waited), not the link
    int64_t fastest = bulk->burst_extra [0];
    for (size_t i = 1; i < SUPERNODE_PROBE_BURST; i++)
        fastest = bulk->burst_extra [i] < fastest ? bulk->burst_extra [i]
                                                  : fastest;
    if ((double) fastest < single / 2)
        return;
    size_t full = 0;
    for (size_t i = 0; i < SUPERNODE_PROBE_BURST; i++)
        full += (double) bulk->burst_extra [i] <= BURST_WITHIN * single;
    if (full == 0)
        return;                 //  Even the first waited: something else
                                //  held the link (or it shares its
                                //  bandwidth, and no transfer goes at
                                //  full speed beside another)
    link->transfers [link->next_transfers] = full;
    link->next_transfers = (link->next_transfers + 1) % LINK_SAMPLES;
}

//  A PONG of a burst's probe: its extra time is kept until all are in.
//  One way when the PONG says when the PING came: the answers come back
//  over the same link, and on an emulated KPBS backbone the burst's own
//  reservations held every answer until the last probe was through (all
//  six read as late as the last).
static void
s_burst_pong (supernode_probe_t *self, const char *remote,
              const probe_t *probe, int64_t rtt, int64_t came)
{
    bulk_t *bulk = s_bulk (self, probe->remote);
    if (!bulk || bulk->burst != probe->burst
    ||  bulk->burst_got >= SUPERNODE_PROBE_BURST)
        return;                 //  An older burst's
    link_t *link = s_link_find (self, remote, false);
    int64_t least = 0;
    int64_t extra = came && link && s_link_oneway (link, &least)
                  ? came - probe->sent_at - least
                  : s_bulk_extra_usec (self, remote, rtt);
    bulk->burst_extra [bulk->burst_got++] = extra > 0 ? extra : 0;
    if (bulk->burst_got == SUPERNODE_PROBE_BURST)
        s_burst_done (self, remote, bulk, probe->padding);
}

bool
supernode_probe_pong (supernode_probe_t *self, const char *target,
                      int64_t count, const char *remote, int64_t came)
{
    assert (self && target && remote);
    //  A forged time must not overflow the differences taken with it
    if (came < 0 || came > INT64_MAX / 4)
        came = 0;
    target_t *entry = (target_t *) zhashx_lookup (self->targets, target);
    if (!entry || count <= 0)
        return false;
    for (size_t i = 0; i < OUTSTANDING; i++) {
        probe_t *probe = &entry->probes [i];
        if (probe->count != count)
            continue;
        //  The answerer says where it is (if it is a plain name); else
        //  what we believed.
        const char *cluster = *remote && jace_name_plain (remote)
                            ? remote : probe->remote;
        int64_t rtt = zclock_usecs () - probe->sent_at;
        //  Only a probe that crossed the link it measures: one sent before
        //  we knew either end's cluster was not held for the emulated
        //  link (nor was the answer, the PING naming no cluster), and a
        //  fresh grid listed its links at about half their latency.
        bool crossed = *probe->remote && streq (probe->remote, cluster)
                    && streq (probe->local, self->cluster);
        if (probe->burst) {
            //  Its time includes the wait behind the others of its burst
            if (*self->cluster && crossed)
                s_burst_pong (self, cluster, probe, rtt, came);
            probe->count = 0;
            return true;
        }
        bool measures = !probe->padding
            || s_bulk_measured (self, probe->remote, probe->padding,
                                s_bulk_extra_usec (self, cluster, rtt),
                                s_noise_usec (self, cluster));
        if (*self->cluster && crossed && measures)
            s_link_add (self, cluster, probe->padding, rtt, came != 0,
                        came - probe->sent_at);
        probe->count = 0;       //  A duplicate PONG counts as forged
        return true;
    }
    return false;
}

void
supernode_probe_prune (supernode_probe_t *self, int64_t before)
{
    assert (self);
    zlist_t *old = zlist_new ();
    for (target_t *entry = (target_t *) zhashx_first (self->targets);
         entry; entry = (target_t *) zhashx_next (self->targets))
        if (entry->probed_at < before)
            zlist_append (old, (void *) zhashx_cursor (self->targets));
    //  Keys are the hash's own: delete after the walk, one at a time.
    char *key;
    while ((key = (char *) zlist_pop (old))) {
        char copy [JACE_ENDPOINT_MAX + 16];
        snprintf (copy, sizeof copy, "%s", key);
        zhashx_delete (self->targets, copy);
    }
    zlist_destroy (&old);
}

void
supernode_probe_forget_links (supernode_probe_t *self, int64_t before)
{
    assert (self);
    zlist_t *old = zlist_new ();
    zlist_autofree (old);
    for (link_t *link = (link_t *) zhashx_first (self->links); link;
         link = (link_t *) zhashx_next (self->links))
        if (link->measured_at < before)
            zlist_append (old, (void *) zhashx_cursor (self->links));
    for (char *key = (char *) zlist_first (old); key;
         key = (char *) zlist_next (old))
        zhashx_delete (self->links, key);
    zlist_destroy (&old);
}

//  --------------------------------------------------------------------------
//  Peers' figures

//  True if key is link/<pair>/<field> with a known field and value is a
//  sound number for it.
static bool
s_link_param_sound (const char *key, const char *value)
{
    if (strncmp (key, "link/", 5) != 0 || !jace_name_plain (key))
        return false;
    //  link/A/B/field: names with a slash would be ambiguous
    size_t slashes = 0;
    for (const char *c = key; *c; c++)
        slashes += *c == '/';
    if (slashes != 3)
        return false;
    const char *field = strrchr (key, '/');
    if (field == key + 4)
        return false;
    char *end;
    double number = strtod (value, &end);
    if (end == value || *end || !isfinite (number) || number < 0)
        return false;
    if (streq (field, "/latency_us"))
        return number <= LATENCY_MAX_US;
    if (streq (field, "/bandwidth_mbps"))
        return number > 0 && number <= BANDWIDTH_MAX_MBPS;
    if (streq (field, "/samples"))
        return number <= 1e15;
    if (streq (field, "/age_ms"))
        return number <= AGE_MAX_MSEC;
    if (streq (field, "/transfers"))
        return number >= 1 && number <= SUPERNODE_PROBE_BURST
            && number == floor (number);
    return false;
}

void
supernode_probe_learn (supernode_probe_t *self, const char *peer,
                       jace_msg_t *state)
{
    assert (self && peer && state);
    zhashx_t *links = zhashx_new ();
    zhashx_set_destructor (links, (zhashx_destructor_fn *) zstr_free);
    zhashx_set_duplicator (links, (zhashx_duplicator_fn *) strdup);
    zhash_t *params = jace_msg_params (state);
    size_t taken = 0;
    for (const char *value = (const char *) zhash_first (params);
         value && taken < SUPERNODE_LINK_PARAMS_MAX;
         value = (const char *) zhash_next (params)) {
        const char *key = zhash_cursor (params);
        if (s_link_param_sound (key, value)) {
            zhashx_update (links, key, (void *) value);
            taken++;
        }
    }
    zhashx_update (self->learnt, peer, links);
}

void
supernode_probe_forget_peer (supernode_probe_t *self, const char *peer)
{
    assert (self && peer);
    zhashx_delete (self->learnt, peer);
}

//  --------------------------------------------------------------------------
//  Listings

//  Write one direction of a measured link unless msg has it already;
//  returns the params written.
static size_t
s_write_link (jace_msg_t *msg, const char *from, const char *to,
              const link_t *link, int64_t now)
{
    char key [4 * JACE_ID_MAX + 32], value [32];
    snprintf (key, sizeof key, "link/%.63s/%.63s/samples", from, to);
    if (jace_msg_param (msg, key))
        return 0;
    int64_t small = s_min (link->small);
    snprintf (value, sizeof value, "%" PRIu64, link->samples);
    jace_msg_set_param (msg, key, value);
    snprintf (key, sizeof key, "link/%.63s/%.63s/latency_us", from, to);
    snprintf (value, sizeof value, "%" PRId64, small / 2);
    jace_msg_set_param (msg, key, value);
    snprintf (key, sizeof key, "link/%.63s/%.63s/age_ms", from, to);
    snprintf (value, sizeof value, "%" PRId64, now - link->measured_at);
    jace_msg_set_param (msg, key, value);
    double mbps = s_link_mbps (link);
    if (mbps <= 0)
        return 3;
    snprintf (key, sizeof key, "link/%.63s/%.63s/bandwidth_mbps", from, to);
    //  Significant digits, not decimals: "%.1f" published a 0.02 Mb/s
    //  link as 0.0, which readers take for unmeasured (and then plan on
    //  the defaults, a hundred times too fast)
    snprintf (value, sizeof value, "%.4g", mbps);
    jace_msg_set_param (msg, key, value);
    size_t transfers = s_link_transfers (link);
    if (transfers == 0)
        return 4;
    snprintf (key, sizeof key, "link/%.63s/%.63s/transfers", from, to);
    snprintf (value, sizeof value, "%zu", transfers);
    jace_msg_set_param (msg, key, value);
    return 5;
}

//  Our links: measured directions first, then their reverses.
static size_t
s_describe_own (supernode_probe_t *self, jace_msg_t *msg, zhashx_t *pairs)
{
    size_t written = 0;
    int64_t now = zclock_mono ();
    for (int reverse = 0; reverse < 2; reverse++)
        for (link_t *link = (link_t *) zhashx_first (self->links); link;
             link = (link_t *) zhashx_next (self->links)) {
            if (s_min (link->small) == 0
            ||  written + 5 > SUPERNODE_LINK_PARAMS_MAX)
                continue;
            char pair [4 * JACE_ID_MAX + 2];
            snprintf (pair, sizeof pair, "%s",
                      (const char *) zhashx_cursor (self->links));
            char *slash = strchr (pair, '/');
            assert (slash);
            *slash = 0;
            const char *from = reverse ? slash + 1 : pair;
            const char *to = reverse ? pair : slash + 1;
            size_t added = s_write_link (msg, from, to, link, now);
            written += added;
            if (added) {
                char name [4 * JACE_ID_MAX + 2];
                snprintf (name, sizeof name, "%.63s/%.63s", from, to);
                zhashx_update (pairs, name, (void *) "");
            }
        }
    return written;
}

void
supernode_probe_describe (supernode_probe_t *self, jace_msg_t *msg,
                          bool with_peers)
{
    assert (self && msg);
    zhashx_t *own = zhashx_new ();
    size_t written = s_describe_own (self, msg, own);
    for (zhashx_t *links = (zhashx_t *) zhashx_first (self->learnt);
         with_peers && links; links = (zhashx_t *) zhashx_next (self->learnt))
        for (const char *value = (const char *) zhashx_first (links);
             value && written < SUPERNODE_LINK_PARAMS_MAX;
             value = (const char *) zhashx_next (links)) {
            const char *key = (const char *) zhashx_cursor (links);
            //  The pair: between "link/" and the last '/'.
            char pair [JACE_ID_MAX * 2 + 8];
            const char *last = strrchr (key, '/');
            snprintf (pair, sizeof pair, "%.*s", (int) (last - key - 5),
                      key + 5);
            if (zhashx_lookup (own, pair) || jace_msg_param (msg, key))
                continue;
            jace_msg_set_param (msg, key, value);
            written++;
        }
    zhashx_destroy (&own);
}
