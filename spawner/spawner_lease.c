/*  =========================================================================
    spawner_lease - the spawner's side of the super-nodes: leases

    Timing: a RESERVE or a STATUS the super-node does not answer within
    GRANT_WAIT_MSEC goes to the next super-node; one answered short is
    asked again after GRANT_RETRY_MSEC (daemons may be on their way back
    from the last job).  The lease is renewed every LEASE_RENEW_MSEC and
    lasts LEASE_MSEC without renewal, so daemons of a spawner that died
    return to the pool within seconds.
    =========================================================================
*/
#include "spawner_lease.h"
#include "spawner_nodes.h"

#define LEASE_RENEW_MSEC 500
#define LEASE_MSEC 5000
#define GRANT_WAIT_MSEC 2000
#define GRANT_RETRY_MSEC 200
//  A super-node that has not said a word this long after we first asked
//  (per super-node given: each gets its GRANT_WAIT_MSEC turn) is not
//  there, or not reachable with our keys: say so, rather than wait for
//  job/reserve_timeout and blame the daemons.
#define SILENT_MSEC 4000
//  Super-nodes known at most: those given, then those a listing names
//  (the peers of the one we talk to), so that a spawner given one
//  super-node fails over when it dies.
#define SUPERNODES_KNOWN_MAX 64
//  A super-node that answers our lease's HEARTBEATs and then falls
//  silent this long has died or is cut off: the lease moves to the next
//  one.  Renewed into the void, it lapsed everywhere while the job ran,
//  which then showed as orphaned, and its spares went to another job.
#define LEASE_SILENT_MSEC 4000
//  A super-node failed over from is passed over for this long while
//  another has not failed: going round the ring through two dead ones,
//  4 s each, outlived the lease (5 s), and it lapsed mid-job.
#define FAILED_SKIP_MSEC 30000

//  What the lease knows of a daemon id.
#define KNOWN_SPARE "spare"
#define KNOWN_TAKEN "taken"
#define KNOWN_EXCLUDED "excluded"

struct _spawner_lease_t {
    char job [JACE_ID_MAX];     //  Job id, also the lease id
    char **endpoints;           //  Super-nodes: given, then learned
    int64_t *failed_at;         //  Per endpoint: when we last failed
                                //  over from it (msec), or 0
    size_t endpoint_count;      //  Entries in endpoints
    size_t current;             //  Index of the one we talk to
    jace_security_t *security;  //  Borrowed
    char *owner;                //  Our status endpoint
    zsock_t *dealer;            //  To the current super-node
    jace_node_t *held;          //  Daemons we hold, spares and taken
    bool *taken;                //  Per held daemon: a task runs on it
    size_t held_count;          //  Entries used in held
    size_t held_alloc;          //  Entries allocated
    zhash_t *known;             //  Daemon id -> KNOWN_* (static strings)
    zhash_t *tokens;            //  Daemon id -> its lease token (GRANT)
    zhashx_t *wanted;           //  Daemon id -> jace_node_t wanted by id
    zlist_t *refused;           //  Ids wanted and not granted, not yet told
    size_t ids_asked;           //  Ids in the RESERVE awaiting its GRANT
    jace_msg_t *listing;        //  Newest STATUS_REPLY, not yet taken
    int64_t listing_asked;      //  When the unanswered STATUS left, or 0
    size_t shortfall;           //  Daemons wanted beyond the spares
    char cluster [JACE_ID_MAX]; //  Cluster to prefer, or ""
    char app [JACE_ID_MAX];     //  The job's application, or "" for any
    size_t lacking_app;         //  Free daemons without it, last listed
    bool grant_heard;           //  The last RESERVE was answered
    int64_t next_request;       //  When to send the next RESERVE, or 0
    int64_t next_renewal;       //  When to renew the lease
    char *failed_over_from;     //  Super-node given up, not yet reported
    bool answered;              //  Some super-node has answered us
    bool announced;             //  The job is known to the grid while it
                                //  holds nothing (spawner_lease_announce)
    int64_t next_announce;      //  When to send its RESERVE of none again
    bool beats_answered;        //  The current super-node answers our
                                //  HEARTBEATs (older ones never did)
    bool beats_known;           //  Some super-node of the grid did
    int64_t unanswered_since;   //  When the first renewal since it last
                                //  said anything left (msec), or 0
    bool none_answer_said;      //  Logged that no super-node answers,
                                //  since one last did
};


//  --------------------------------------------------------------------------

static void
s_node_destroy (void **item_p)
{
    free (*item_p);
    *item_p = NULL;
}

static void *
s_node_dup (const void *item)
{
    jace_node_t *copy = (jace_node_t *) malloc (sizeof *copy);
    assert (copy);
    *copy = *(const jace_node_t *) item;
    return copy;
}

static int
s_connect (spawner_lease_t *self)
{
    zsock_destroy (&self->dealer);
    self->dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (self->dealer, JACE_MSG_HEADER_MAX);
    const char *endpoint = self->endpoints [self->current];
    char reason [256] = "";
    const char *key = jace_security_supernode_key (self->security, endpoint,
                                                   reason, sizeof reason);
    if (!key)
        zsys_error ("spawner: %s", reason);
    if (jace_security_apply_client (self->security, self->dealer, key)
    ||  zsock_connect (self->dealer, "%s", endpoint))
        return -1;
    self->next_renewal = 0;
    self->beats_answered = false;
    self->unanswered_since = 0;
    return 0;
}

spawner_lease_t *
spawner_lease_new (const char *job, const char **endpoints,
                   size_t endpoint_count, jace_security_t *security,
                   const char *owner, char *reason, size_t reason_size)
{
    assert (job && endpoints && endpoint_count > 0);
    spawner_lease_t *self = (spawner_lease_t *) zmalloc (sizeof *self);
    snprintf (self->job, sizeof self->job, "%s", job);
    self->endpoints = (char **) zmalloc (SUPERNODES_KNOWN_MAX
                                         * sizeof (char *));
    self->failed_at = (int64_t *) zmalloc (SUPERNODES_KNOWN_MAX
                                           * sizeof (int64_t));
    for (size_t i = 0; i < endpoint_count && i < SUPERNODES_KNOWN_MAX; i++)
        self->endpoints [self->endpoint_count++] = strdup (endpoints [i]);
    self->security = security;
    self->owner = strdup (owner ? owner : "");
    self->known = zhash_new ();
    self->tokens = zhash_new ();
    zhash_autofree (self->tokens);
    self->wanted = zhashx_new ();
    zhashx_set_destructor (self->wanted, s_node_destroy);
    zhashx_set_duplicator (self->wanted, s_node_dup);
    self->refused = zlist_new ();
    zlist_autofree (self->refused);
    if (s_connect (self)) {
        snprintf (reason, reason_size, "cannot connect to super-node '%s'",
                  endpoints [0]);
        spawner_lease_destroy (&self);
    }
    return self;
}

void
spawner_lease_destroy (spawner_lease_t **self_p)
{
    assert (self_p);
    spawner_lease_t *self = *self_p;
    if (!self)
        return;
    //  Whoever ends the job says so first (spawner_lease_release_all).
    spawner_lease_release_all (self, NULL);
    zsock_destroy (&self->dealer);
    zhash_destroy (&self->known);
    zhash_destroy (&self->tokens);
    zhashx_destroy (&self->wanted);
    zlist_destroy (&self->refused);
    jace_msg_destroy (&self->listing);
    free (self->held);
    free (self->taken);
    free (self->owner);
    free (self->failed_over_from);
    for (size_t i = 0; i < self->endpoint_count; i++)
        free (self->endpoints [i]);
    free (self->endpoints);
    free (self->failed_at);
    free (self);
    *self_p = NULL;
}

void
spawner_lease_set_app (spawner_lease_t *self, const char *app)
{
    assert (self && app);
    snprintf (self->app, sizeof self->app, "%s", app);
}

zsock_t *
spawner_lease_socket (spawner_lease_t *self)
{
    assert (self);
    return self->dealer;
}

const char *
spawner_lease_endpoint (spawner_lease_t *self)
{
    assert (self);
    return self->endpoints [self->current];
}

//  --------------------------------------------------------------------------
//  Sending

static jace_msg_t *
s_lease_msg (spawner_lease_t *self, jace_msg_type_t type)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, self->job);
    jace_msg_set_job (msg, self->job);
    return msg;
}

//  Name daemon `id` in msg (RESERVE, HEARTBEAT, RELEASE): super-nodes
//  read only the ids of these lists, so the rest of the record stays
//  empty.  Whole records made a 60-spare renewal 10.5 KB (2.2 KB by
//  id), twice a second, forwarded to every peer.
static void
s_add_id (jace_msg_t *msg, const char *id)
{
    jace_node_t named = { .task = -1 };
    snprintf (named.id, sizeof named.id, "%s", id);
    jace_msg_add_node (msg, &named);
}

static void
s_release_one (spawner_lease_t *self, const char *id)
{
    jace_msg_t *release = s_lease_msg (self, JACE_MSG_RELEASE);
    s_add_id (release, id);
    jace_msg_send (&release, self->dealer);
}

//  A RESERVE for the daemons wanted by id when there are any (the plan
//  chose them), else for `shortfall` daemons the super-node chooses.
static void
s_send_reserve (spawner_lease_t *self, int64_t now)
{
    jace_msg_t *reserve = s_lease_msg (self, JACE_MSG_RESERVE);
    jace_msg_set_endpoint (reserve, self->owner);
    jace_msg_set_interval (reserve, LEASE_MSEC);
    jace_msg_set_app (reserve, self->app);
    self->ids_asked = zhashx_size (self->wanted);
    if (self->ids_asked > 0) {
        for (jace_node_t *node = (jace_node_t *) zhashx_first (self->wanted);
             node; node = (jace_node_t *) zhashx_next (self->wanted))
            s_add_id (reserve, node->id);
        jace_msg_set_count (reserve, (int64_t) self->ids_asked);
    }
    else {
        jace_msg_set_count (reserve, (int64_t) self->shortfall);
        jace_msg_set_cluster (reserve, self->cluster);
    }
    jace_msg_send (&reserve, self->dealer);
    self->grant_heard = false;
    self->next_request = now + GRANT_WAIT_MSEC;
}

//  The super-node did not answer our RESERVE: go on with the next one
//  given.  The daemons fail over too, so the grid is reachable there.
static void
s_fail_over (spawner_lease_t *self)
{
    if (self->endpoint_count < 2)
        return;
    //  The next one not failed over from lately; when every other one
    //  failed lately, this one again (a stalled super-node, the others
    //  dead: going round through the dead ones let the lease lapse)
    int64_t now = zclock_mono ();
    size_t next = self->current;
    for (size_t step = 1; step < self->endpoint_count; step++) {
        size_t index = (self->current + step) % self->endpoint_count;
        if (!self->failed_at [index]
        ||  now - self->failed_at [index] > FAILED_SKIP_MSEC) {
            next = index;
            break;
        }
    }
    if (next == self->current) {
        //  Not a failover: no event, the same link (libzmq reconnects
        //  it), and its silence counted anew; said once, as the lease
        //  lapses meanwhile
        if (!self->none_answer_said)
            zsys_warning ("spawner: no super-node answers (the %zu known "
                          "all failed in the last %d s); staying with %s "
                          "until one does: the lease lapses meanwhile, and "
                          "the job's spares may go to other jobs",
                          self->endpoint_count, FAILED_SKIP_MSEC / 1000,
                          self->endpoints [self->current]);
        self->none_answer_said = true;
        self->unanswered_since = 0;
        self->next_request = 0;
        return;
    }
    free (self->failed_over_from);
    self->failed_over_from = strdup (self->endpoints [self->current]);
    self->failed_at [self->current] = now;
    self->current = next;
    zsys_warning ("spawner: super-node %s does not answer, failing over to "
                  "%s", self->failed_over_from,
                  self->endpoints [self->current]);
    s_connect (self);
    //  A RESERVE the old one left unanswered goes to the new one at once:
    //  waited for, its silence failed us over a second time
    self->next_request = 0;
}

int64_t
spawner_lease_tick (spawner_lease_t *self, int64_t now)
{
    assert (self);
    bool asking = self->shortfall > 0 || zhashx_size (self->wanted) > 0;
    if (asking) {
        if (self->next_request && now >= self->next_request
        &&  !self->grant_heard)
            s_fail_over (self);
        if (now >= self->next_request)
            s_send_reserve (self, now);
    }
    //  A RESERVE of no daemon begins the lease the grid lists the job by,
    //  and begins it again if it lapsed: a HEARTBEAT does not bring back
    //  a lease of none (a loaded machine let one lapse, and `jobs` lost
    //  the waiting job for good)
    if (self->announced && self->held_count == 0 && !asking
    &&  now >= self->next_announce) {
        s_send_reserve (self, now);
        self->next_announce = now + LEASE_MSEC;
    }
    bool renewing = self->held_count > 0 || asking || self->announced;
    //  Silence counts from our first renewal it left unanswered, not from
    //  its last word: a spawner that was itself stalled sent nothing
    //  meanwhile, and took a live super-node for dead on waking
    if (renewing && (self->beats_answered || self->beats_known)
    &&  self->unanswered_since
    &&  now - self->unanswered_since > LEASE_SILENT_MSEC
    &&  !(zsock_events (self->dealer) & ZMQ_POLLIN))
        s_fail_over (self);
    if (now >= self->next_renewal && renewing) {
        jace_msg_t *beat = s_lease_msg (self, JACE_MSG_HEARTBEAT);
        //  Where the job's spawner answers now: a resumed spawner renews
        //  the lease of the one that died, and `status` must find it
        jace_msg_set_endpoint (beat, self->owner);
        //  The spares we hold: a super-node that lost the lease (it
        //  lapsed while we stalled, or we failed over to it) holds those
        //  still free again, as it does the daemons working for the job
        for (size_t i = 0; i < self->held_count; i++)
            if (!self->taken [i])
                s_add_id (beat, self->held [i].id);
        jace_msg_send (&beat, self->dealer);
        if (!self->unanswered_since)
            self->unanswered_since = now;
        self->next_renewal = now + LEASE_RENEW_MSEC;
    }
    //  Holding nothing and asking for nothing (a job that cannot be
    //  placed yet), there is no timer: the past renewal time made every
    //  poll return at once, 94% of a core while waiting.
    int64_t next = renewing ? self->next_renewal - now : LEASE_RENEW_MSEC;
    if (asking && self->next_request - now < next)
        next = self->next_request - now;
    return next > 0 ? next : 0;
}

//  --------------------------------------------------------------------------
//  Receiving

static void
s_hold (spawner_lease_t *self, const jace_node_t *node)
{
    if (self->held_count == self->held_alloc) {
        self->held_alloc = self->held_alloc ? self->held_alloc * 2 : 16;
        self->held = (jace_node_t *) realloc (self->held, self->held_alloc
                                              * sizeof (jace_node_t));
        self->taken = (bool *) realloc (self->taken, self->held_alloc
                                        * sizeof (bool));
        assert (self->held && self->taken);
    }
    self->held [self->held_count] = *node;
    self->taken [self->held_count] = false;
    self->held_count++;
    zhash_update (self->known, node->id, (void *) KNOWN_SPARE);
}

//  The lease token the super-node issued for daemon `id` (GRANT param
//  token/<id>): the daemon takes our ASSIGN only with it.  Kept per daemon,
//  so a replacement or a readmitted daemon is assigned with its own.
static void
s_keep_token (spawner_lease_t *self, jace_msg_t *grant, const char *id)
{
    char key [JACE_ID_MAX + 8];
    snprintf (key, sizeof key, "token/%s", id);
    const char *token = jace_msg_param (grant, key);
    if (token)
        zhash_update (self->tokens, id, (void *) token);
    else
        zhash_delete (self->tokens, id);
}

//  Keep what we asked for; give back what we did not (a late grant, a
//  daemon we already hold, used or excluded).  Returns daemons kept.
static int
s_on_grant (spawner_lease_t *self, jace_msg_t *grant)
{
    int kept = 0;
    for (size_t i = 0; i < jace_msg_node_count (grant); i++) {
        const jace_node_t *node = jace_msg_node (grant, i);
        const char *known = (const char *) zhash_lookup (self->known,
                                                         node->id);
        if (known)
            //  Held or taken: the same daemon granted twice (a grant
            //  from a peer too); releasing it would free a daemon of
            //  ours.  Excluded: we fenced it; we keep holding it so that
            //  no grant offers it again, and it does not count.
            continue;
        char reason [64];
        if (*node->id && !jace_node_valid (node, reason, sizeof reason)) {
            //  Not ours to use, nor to give back: a super-node never
            //  grants such a record.
            zsys_warning ("spawner: granted daemon '%s' ignored: %s",
                          node->id, reason);
            continue;
        }
        if (*self->app && !jace_node_has_app (node, self->app)) {
            //  A super-node of ours filters by application too: this
            //  one did not, and the daemon would refuse the task.
            zsys_warning ("spawner: granted daemon '%s' has no application "
                          "'%s', given back", node->id, self->app);
            s_release_one (self, node->id);
            continue;
        }
        bool by_id = *node->id && zhashx_lookup (self->wanted, node->id);
        if (!by_id && (self->shortfall == 0 || !*node->id)) {
            s_release_one (self, node->id);
            continue;
        }
        s_hold (self, node);
        s_keep_token (self, grant, node->id);
        if (by_id)
            zhashx_delete (self->wanted, node->id);
        else
            self->shortfall--;
        kept++;
    }
    //  The answer to a RESERVE by id: what it lacks was taken meanwhile
    //  (or is gone); the plan is remade rather than asked again.
    if (self->ids_asked > 0 && jace_msg_count (grant)
                               == (int64_t) self->ids_asked) {
        for (jace_node_t *node = (jace_node_t *) zhashx_first (self->wanted);
             node; node = (jace_node_t *) zhashx_next (self->wanted))
            zlist_append (self->refused, node->id);
        zhashx_purge (self->wanted);
        self->ids_asked = 0;
    }
    if (self->shortfall > 0
    &&  self->next_request > zclock_mono () + GRANT_RETRY_MSEC)
        self->next_request = zclock_mono () + GRANT_RETRY_MSEC;
    return kept;
}

//  The super-nodes a listing names (the peers of ours) that we did not
//  know: they go after those given, in the failover order.
static void
s_learn_supernodes (spawner_lease_t *self, const jace_msg_t *listing)
{
    for (size_t i = 0; i < JACE_SUPERNODES_NAMED_MAX; i++) {
        const char *endpoint = jace_msg_named_supernode (listing, i);
        if (!endpoint || self->endpoint_count == SUPERNODES_KNOWN_MAX)
            continue;
        bool known = false;
        for (size_t j = 0; j < self->endpoint_count; j++)
            known |= streq (self->endpoints [j], endpoint);
        if (known)
            continue;
        self->endpoints [self->endpoint_count++] = strdup (endpoint);
        zsys_info ("spawner: learned of super-node %s from %s", endpoint,
                   spawner_lease_endpoint (self));
    }
}

int
spawner_lease_recv (spawner_lease_t *self)
{
    assert (self);
    char reason [256];
    jace_msg_t *msg = jace_msg_recv (self->dealer, reason, sizeof reason,
                                     NULL, 0);
    if (!msg) {
        zsys_warning ("spawner: malformed message from super-node %s: %s",
                      spawner_lease_endpoint (self), reason);
        return -1;
    }
    self->answered = true;
    self->unanswered_since = 0;
    self->none_answer_said = false;
    self->failed_at [self->current] = 0;
    int kept = 0;
    if (jace_msg_type (msg) == JACE_MSG_HEARTBEAT)
        self->beats_answered = self->beats_known = true;
    if (jace_msg_type (msg) == JACE_MSG_GRANT
    &&  streq (jace_msg_job (msg), self->job)) {
        self->grant_heard = true;
        kept = s_on_grant (self, msg);
    }
    else
    if (jace_msg_type (msg) == JACE_MSG_STATUS_REPLY) {
        s_learn_supernodes (self, msg);
        self->listing_asked = 0;
        jace_msg_destroy (&self->listing);
        self->listing = spawner_nodes_for_app (&msg, self->app,
                                               &self->lacking_app);
    }
    jace_msg_destroy (&msg);
    return kept;
}

//  --------------------------------------------------------------------------
//  The job's use of the lease

void
spawner_lease_announce (spawner_lease_t *self)
{
    assert (self);
    if (self->announced)
        return;
    self->announced = true;
    self->next_announce = 0;    //  At the next tick
}

void
spawner_lease_want (spawner_lease_t *self, size_t extra, const char *cluster)
{
    assert (self);
    if (extra == 0)
        return;
    if (self->shortfall == 0)
        self->next_request = 0;         //  Ask at the next tick
    self->shortfall += extra;
    snprintf (self->cluster, sizeof self->cluster, "%s",
              cluster ? cluster : "");
}

size_t
spawner_lease_wanted (spawner_lease_t *self)
{
    assert (self);
    return self->shortfall;
}

//  Index in held of spare number `index`, or held_count.
static size_t
s_spare_slot (spawner_lease_t *self, size_t index)
{
    for (size_t i = 0; i < self->held_count; i++)
        if (!self->taken [i] && index-- == 0)
            return i;
    return self->held_count;
}

size_t
spawner_lease_spare_count (spawner_lease_t *self)
{
    assert (self);
    size_t count = 0;
    for (size_t i = 0; i < self->held_count; i++)
        count += !self->taken [i];
    return count;
}

const jace_node_t *
spawner_lease_spare (spawner_lease_t *self, size_t index)
{
    assert (self);
    size_t slot = s_spare_slot (self, index);
    assert (slot < self->held_count);
    return &self->held [slot];
}

void
spawner_lease_take (spawner_lease_t *self, size_t index, jace_node_t *node)
{
    assert (self && node);
    size_t slot = s_spare_slot (self, index);
    assert (slot < self->held_count);
    self->taken [slot] = true;
    *node = self->held [slot];
    zhash_update (self->known, node->id, (void *) KNOWN_TAKEN);
}

void
spawner_lease_adopt (spawner_lease_t *self, const jace_node_t *node)
{
    assert (self && node);
    s_hold (self, node);
    self->taken [self->held_count - 1] = true;
    zhash_update (self->known, node->id, (void *) KNOWN_TAKEN);
}

//  A fenced daemon stays held, as taken, until the job ends: released,
//  it would be free again at once (it obeys our STOP) and the next grant
//  could hand it back to us; held, it can never run two of our tasks.
void
spawner_lease_exclude (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    zhash_update (self->known, id, (void *) KNOWN_EXCLUDED);
    for (size_t i = 0; i < self->held_count; i++)
        if (streq (self->held [i].id, id))
            self->taken [i] = true;
}

bool
spawner_lease_readmit (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    const char *known = (const char *) zhash_lookup (self->known, id);
    if (!known || !streq (known, KNOWN_EXCLUDED))
        return false;
    for (size_t i = 0; i < self->held_count; i++)
        if (streq (self->held [i].id, id)) {
            self->taken [i] = false;
            zhash_update (self->known, id, (void *) KNOWN_SPARE);
            return true;
        }
    return false;
}

void
spawner_lease_forget (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    for (size_t i = 0; i < self->held_count; i++)
        if (streq (self->held [i].id, id))
            return;
    zhash_delete (self->known, id);
}

void
spawner_lease_drop (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    for (size_t i = 0; i < self->held_count; i++)
        if (streq (self->held [i].id, id)) {
            size_t after = self->held_count - i - 1;
            memmove (&self->held [i], &self->held [i + 1],
                     after * sizeof (jace_node_t));
            memmove (&self->taken [i], &self->taken [i + 1],
                     after * sizeof (bool));
            self->held_count--;
            break;
        }
    zhash_delete (self->known, id);
    zhash_delete (self->tokens, id);
    //  Given back, in case the grid still holds it for us after all (the
    //  daemon read our ASSIGN before its super-node's word that it is
    //  ours): renewed, it stayed leased to us, idle, for good, and a job
    //  waiting for a daemon failed beside it.  A super-node releases only
    //  a daemon our lease holds.
    if (self->dealer)
        s_release_one (self, id);
}

void
spawner_lease_release_all (spawner_lease_t *self,
                           const jace_key_t *job_over)
{
    assert (self);
    if (!self->dealer)
        return;
    //  Our sockets drop unsent messages on close; these must leave.
    zsock_set_linger (self->dealer, 1000);
    //  Daemons of the job that we lost (cut off, not dead) learn that it
    //  is over from their super-nodes (supernode_ended).
    if (job_over) {
        char proof [JACE_KEY_TEXT + 1];
        jace_job_over_proof (job_over, self->job, proof);
        jace_msg_t *over = s_lease_msg (self, JACE_MSG_HEARTBEAT);
        jace_msg_set_state (over, JACE_LEASE_OVER);
        jace_msg_set_token (over, proof);
        jace_msg_send (&over, self->dealer);
    }
    //  An announced lease of no daemon ends with an empty RELEASE: the
    //  super-node ends a lease whose last daemon it released
    if (self->held_count == 0 && !self->announced)
        return;
    jace_msg_t *release = s_lease_msg (self, JACE_MSG_RELEASE);
    for (size_t i = 0; i < self->held_count; i++)
        s_add_id (release, self->held [i].id);
    jace_msg_send (&release, self->dealer);
    self->held_count = 0;
    self->shortfall = 0;
}

const char *
spawner_lease_token (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    const char *token = (const char *) zhash_lookup (self->tokens, id);
    return token ? token : "";
}

size_t
spawner_lease_held (spawner_lease_t *self)
{
    assert (self);
    return self->held_count;
}

char *
spawner_lease_failover_event (spawner_lease_t *self)
{
    assert (self);
    char *from = self->failed_over_from;
    self->failed_over_from = NULL;
    return from;
}

//  --------------------------------------------------------------------------
//  Daemons by id, and the grid's listing

void
spawner_lease_want_ids (spawner_lease_t *self, const jace_node_t *nodes,
                        size_t count)
{
    assert (self);
    bool added = false;
    for (size_t i = 0; i < count; i++)
        if (*nodes [i].id && !zhash_lookup (self->known, nodes [i].id)) {
            zhashx_update (self->wanted, nodes [i].id, (void *) &nodes [i]);
            added = true;
        }
    //  With our last RESERVE answered, ask at the next tick: a replacement
    //  waits on this.  One still unanswered is given GRANT_RETRY_MSEC
    //  before the next asks for everything wanted again.
    if (added && self->grant_heard)
        self->next_request = 0;
    else
    if (added && self->next_request > zclock_mono () + GRANT_RETRY_MSEC)
        self->next_request = zclock_mono () + GRANT_RETRY_MSEC;
}

size_t
spawner_lease_ids_wanted (spawner_lease_t *self)
{
    assert (self);
    return zhashx_size (self->wanted);
}

void
spawner_lease_forget_ids (spawner_lease_t *self)
{
    assert (self);
    zhashx_purge (self->wanted);
    self->ids_asked = 0;        //  A late answer refuses nothing newer
}

void
spawner_lease_forget_id (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    zhashx_delete (self->wanted, id);
    self->ids_asked = 0;        //  The next RESERVE asks for the rest
}

zlist_t *
spawner_lease_refused (spawner_lease_t *self)
{
    assert (self);
    zlist_t *refused = self->refused;
    self->refused = zlist_new ();
    zlist_autofree (self->refused);
    return refused;
}

int
spawner_lease_find_spare (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    size_t index = 0;
    for (size_t i = 0; i < self->held_count; i++) {
        if (self->taken [i])
            continue;
        if (streq (self->held [i].id, id))
            return (int) index;
        index++;
    }
    return -1;
}

void
spawner_lease_release_spare (spawner_lease_t *self, size_t index)
{
    assert (self);
    size_t slot = s_spare_slot (self, index);
    assert (slot < self->held_count);
    s_release_one (self, self->held [slot].id);
    zhash_delete (self->known, self->held [slot].id);
    zhash_delete (self->tokens, self->held [slot].id);
    self->held_count--;
    memmove (&self->held [slot], &self->held [slot + 1],
             (self->held_count - slot) * sizeof (jace_node_t));
    memmove (&self->taken [slot], &self->taken [slot + 1],
             (self->held_count - slot) * sizeof (bool));
}

void
spawner_lease_ask_listing (spawner_lease_t *self)
{
    assert (self);
    //  A replacement waits for a listing before it reserves anything, so
    //  a dead super-node is noticed here, not by an unanswered RESERVE.
    int64_t now = zclock_mono ();
    if (self->listing_asked == 0)
        self->listing_asked = now;
    else
    if (now - self->listing_asked >= GRANT_WAIT_MSEC) {
        s_fail_over (self);
        self->listing_asked = now;
    }
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, self->job);
    jace_msg_send (&status, self->dealer);
}

jace_msg_t *
spawner_lease_listing (spawner_lease_t *self)
{
    assert (self);
    jace_msg_t *listing = self->listing;
    self->listing = NULL;
    return listing;
}

size_t
spawner_lease_lacking_app (spawner_lease_t *self)
{
    assert (self);
    return self->lacking_app;
}

bool
spawner_lease_is_held (spawner_lease_t *self, const char *id)
{
    assert (self && id);
    return zhash_lookup (self->known, id) != NULL;
}

bool
spawner_lease_unanswered (spawner_lease_t *self, int64_t since, int64_t now,
                          char *reason, size_t reason_size)
{
    assert (self);
    int64_t limit = SILENT_MSEC
                  + (int64_t) (self->endpoint_count - 1) * GRANT_WAIT_MSEC;
    if (self->answered || now - since < limit)
        return false;
    char names [1024] = "";
    for (size_t i = 0; i < self->endpoint_count; i++)
        snprintf (names + strlen (names), sizeof names - strlen (names),
                  "%s%s", i ? ", " : "", self->endpoints [i]);
    //  A super-node of another protocol version ignores us, saying so
    //  only in its log
    snprintf (reason, reason_size, "%s %s does not answer (nothing heard "
              "in %.0f s): is it running, at that endpoint, speaking "
              "protocol %d as we do%s?",
              self->endpoint_count > 1 ? "no super-node of" : "super-node",
              names, limit / 1000.0, JACE_MSG_VERSION,
              jace_security_enabled (self->security)
              ? ", and does it accept our certificate" : "");
    return true;
}
