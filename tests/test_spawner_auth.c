/*  =========================================================================
    test_spawner_auth - the spawner's side of job secrets, lease tokens and
    seals, against a scripted super-node and scripted daemons

    Everything around the spawner actor is a raw socket this test drives,
    so what the spawner sends and accepts is checked exactly, whatever
    the real daemons and super-nodes do:

    - the super-node grants fd0 and fd1 with a lease token each, and fd2
      later; every ASSIGN carries its own daemon's token and the job key
      (the key of the secret file the spawner saved, mode 0600);
    - fd0 first answers with an unsealed ACCEPT and one sealed with a
      wrong key: both are dropped and counted, the job does not start
      until its sealed ACCEPT;
    - fd1 refuses (sealed, busy): it is fenced with a sealed STOP, and its
      replacement fd2 is assigned with fd2's own token;
    - START, REMAP and HEARTBEAT reach the daemons sealed with the job key;
    - on the status endpoint, STATUS is answered to anyone with the audit
      counts; an unsealed CANCEL and one sealed with a wrong key are
      refused (ERROR) and counted and the job goes on; so is an unsealed
      REBALANCE, and a sealed one while the tasks have reported no rate
      says why; a CANCEL sealed with the key from the secret file ends
      it, the daemons hear a sealed STOP, and the secret file is gone.
    =========================================================================
*/
#include "tap.h"
#include "spawner_server.h"
#include "jace_auth.h"

#include <sys/stat.h>
#include <sys/time.h>

#define DAEMONS 3
#define WAIT_MSEC 20000
//  fd0 holds back its sealed ACCEPT this long after its forged ones.
#define ACCEPT_DELAY_MSEC 500

typedef struct {
    char id [JACE_ID_MAX];
    zsock_t *router;            //  Its control endpoint
    char *endpoint;
    zframe_t *peer;             //  The spawner's link, once it spoke
    jace_key_t lease_key;       //  Makes its lease token
    char token [JACE_KEY_TEXT + 1];     //  Token the grant gives it
    bool assigned;              //  Had an ASSIGN
    bool token_right;           //  ... with its own token
    char job_key [JACE_KEY_TEXT + 1];   //  The key the ASSIGN carried
    int64_t task, epoch;        //  Of the ASSIGN
    int64_t accept_at;          //  When to send the sealed ACCEPT, or 0
    int64_t accepted_at;        //  When it was sent, or 0
    int64_t started_at;         //  When START came, or 0
    bool start_sealed, start_early;
    int heartbeats, heartbeats_sealed, remaps, remaps_sealed;
    int stops, stops_sealed;
} fake_daemon_t;

typedef struct {
    zsock_t *supernode;         //  The scripted super-node (ROUTER)
    char *sn_endpoint;
    char owner [JACE_ENDPOINT_MAX];     //  Spawner's status endpoint
    char job [JACE_ID_MAX];
    int grants;                 //  GRANTs sent
    fake_daemon_t daemons [DAEMONS];
} grid_t;

//  --------------------------------------------------------------------------
//  Scripted super-node: the first RESERVE gets fd0 and fd1, the next fd2

static void
s_grant (grid_t *grid, jace_msg_t *reserve)
{
    if (grid->grants >= 2)
        return;
    snprintf (grid->job, sizeof grid->job, "%s", jace_msg_job (reserve));
    snprintf (grid->owner, sizeof grid->owner, "%s",
              jace_msg_endpoint (reserve));
    jace_msg_t *grant = jace_msg_new (JACE_MSG_GRANT);
    jace_msg_set_sender (grant, "fake-sn");
    jace_msg_set_job (grant, grid->job);
    int first = grid->grants == 0 ? 0 : 2, last = grid->grants == 0 ? 2 : 3;
    for (int i = first; i < last; i++) {
        fake_daemon_t *daemon = &grid->daemons [i];
        jace_node_t node = { .power = 1, .cores = 1, .memory = 1024,
                             .state = JACE_NODE_LEASED, .task = -1,
                             .apps = "multisplit" };
        snprintf (node.id, sizeof node.id, "%s", daemon->id);
        snprintf (node.endpoint, sizeof node.endpoint, "%s",
                  daemon->endpoint);
        snprintf (node.data, sizeof node.data, "tcp://127.0.0.1:9");
        snprintf (node.cluster, sizeof node.cluster, "A");
        jace_msg_add_node (grant, &node);
        //  Keys off: the spawner's id in the token is "".
        jace_lease_token (&daemon->lease_key, grid->job, "", daemon->id,
                          daemon->token);
        char key [JACE_ID_MAX + 8];
        snprintf (key, sizeof key, "token/%s", daemon->id);
        jace_msg_set_param (grant, key, daemon->token);
    }
    jace_msg_set_count (grant, last - first);
    jace_msg_set_routing_id (grant, jace_msg_routing_id (reserve));
    jace_msg_send (&grant, grid->supernode);
    grid->grants++;
}

//  The grid's listing: the three daemons, free.  The job maps with
//  simple, so its plan is fd0 and fd1, and fd2 comes by a later RESERVE.
static void
s_listing (grid_t *grid, jace_msg_t *status)
{
    jace_msg_t *reply = jace_msg_new (JACE_MSG_STATUS_REPLY);
    jace_msg_set_sender (reply, "fake-sn");
    for (int i = 0; i < DAEMONS; i++) {
        jace_node_t node = { .power = 1, .cores = 1, .memory = 1024,
                             .state = JACE_NODE_FREE, .task = -1,
                             .apps = "multisplit" };
        snprintf (node.id, sizeof node.id, "%s", grid->daemons [i].id);
        snprintf (node.endpoint, sizeof node.endpoint, "%s",
                  grid->daemons [i].endpoint);
        snprintf (node.data, sizeof node.data, "tcp://127.0.0.1:9");
        snprintf (node.cluster, sizeof node.cluster, "A");
        jace_msg_add_node (reply, &node);
    }
    jace_msg_set_routing_id (reply, jace_msg_routing_id (status));
    jace_msg_send (&reply, grid->supernode);
}

static void
s_supernode_recv (grid_t *grid)
{
    jace_msg_t *msg = jace_msg_recv (grid->supernode, NULL, 0, NULL, 0);
    if (msg && jace_msg_type (msg) == JACE_MSG_RESERVE)
        s_grant (grid, msg);
    else
    if (msg && jace_msg_type (msg) == JACE_MSG_STATUS)
        s_listing (grid, msg);
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  Scripted daemons

static void
s_daemon_send (fake_daemon_t *daemon, jace_msg_t *msg, const char *key_text)
{
    if (key_text) {
        jace_key_t key;
        assert (jace_key_decode (&key, key_text) == 0);
        jace_msg_seal (msg, key.bytes);
    }
    jace_msg_set_routing_id (msg, daemon->peer);
    jace_msg_send (&msg, daemon->router);
}

static jace_msg_t *
s_report (fake_daemon_t *daemon, jace_msg_type_t type, const char *job)
{
    jace_msg_t *msg = jace_msg_new (type);
    jace_msg_set_sender (msg, daemon->id);
    jace_msg_set_job (msg, job);
    jace_msg_set_task (msg, daemon->task);
    jace_msg_set_epoch (msg, daemon->epoch);
    return msg;
}

//  fd0 forges before it accepts; fd1 refuses; fd2 accepts at once.
static void
s_on_assign (fake_daemon_t *daemon, int index, jace_msg_t *assign)
{
    daemon->assigned = true;
    daemon->token_right = streq (jace_msg_token (assign), daemon->token);
    snprintf (daemon->job_key, sizeof daemon->job_key, "%s",
              jace_msg_key (assign));
    daemon->task = jace_msg_task (assign);
    daemon->epoch = jace_msg_epoch (assign);
    const char *job = jace_msg_job (assign);
    if (index == 0) {
        s_daemon_send (daemon, s_report (daemon, JACE_MSG_ACCEPT, job),
                       NULL);
        jace_key_t wrong;
        char wrong_text [JACE_KEY_TEXT + 1];
        jace_key_random (&wrong);
        jace_key_encode (&wrong, wrong_text);
        s_daemon_send (daemon, s_report (daemon, JACE_MSG_ACCEPT, job),
                       wrong_text);
        daemon->accept_at = zclock_mono () + ACCEPT_DELAY_MSEC;
    }
    else
    if (index == 1) {
        jace_msg_t *refuse = s_report (daemon, JACE_MSG_REFUSE, job);
        jace_msg_set_code (refuse, JACE_REFUSE_BUSY);
        jace_msg_set_reason (refuse, "busy (scripted)");
        s_daemon_send (daemon, refuse, daemon->job_key);
    }
    else {
        s_daemon_send (daemon, s_report (daemon, JACE_MSG_ACCEPT, job),
                       daemon->job_key);
        daemon->accepted_at = zclock_mono ();
    }
}

static bool
s_sealed (const jace_msg_t *msg, const char *key_text)
{
    jace_key_t key;
    return jace_key_decode (&key, key_text) == 0
        && jace_msg_sealed (msg, key.bytes);
}

static void
s_daemon_recv (fake_daemon_t *daemon, int index)
{
    jace_msg_t *msg = jace_msg_recv (daemon->router, NULL, 0, NULL, 0);
    if (!msg)
        return;
    if (!daemon->peer)
        daemon->peer = zframe_dup (jace_msg_routing_id (msg));
    bool sealed = s_sealed (msg, daemon->job_key);
    switch (jace_msg_type (msg)) {
        case JACE_MSG_ASSIGN: s_on_assign (daemon, index, msg); break;
        case JACE_MSG_START:
            daemon->started_at = zclock_mono ();
            daemon->start_sealed = sealed;
            daemon->start_early = !daemon->accepted_at;
            break;
        case JACE_MSG_HEARTBEAT:
            daemon->heartbeats++;
            daemon->heartbeats_sealed += sealed;
            break;
        case JACE_MSG_REMAP:
            daemon->remaps++;
            daemon->remaps_sealed += sealed;
            break;
        case JACE_MSG_STOP:
            daemon->stops++;
            daemon->stops_sealed += sealed;
            break;
        default:
            break;
    }
    jace_msg_destroy (&msg);
}

//  --------------------------------------------------------------------------
//  The grid's sockets, pumped until a condition holds

static void
s_grid_new (grid_t *grid)
{
    memset (grid, 0, sizeof *grid);
    grid->supernode = zsock_new (ZMQ_ROUTER);
    jace_msg_prepare_socket (grid->supernode, JACE_MSG_HEADER_MAX);
    assert (zsock_bind (grid->supernode, "tcp://127.0.0.1:*") > 0);
    grid->sn_endpoint = zsock_last_endpoint (grid->supernode);
    for (int i = 0; i < DAEMONS; i++) {
        fake_daemon_t *daemon = &grid->daemons [i];
        snprintf (daemon->id, sizeof daemon->id, "fd%d", i);
        daemon->router = zsock_new (ZMQ_ROUTER);
        jace_msg_prepare_socket (daemon->router, 0);
        assert (zsock_bind (daemon->router, "tcp://127.0.0.1:*") > 0);
        daemon->endpoint = zsock_last_endpoint (daemon->router);
        jace_key_random (&daemon->lease_key);
    }
}

static void
s_grid_destroy (grid_t *grid)
{
    for (int i = 0; i < DAEMONS; i++) {
        zsock_destroy (&grid->daemons [i].router);
        zstr_free (&grid->daemons [i].endpoint);
        zframe_destroy (&grid->daemons [i].peer);
    }
    zsock_destroy (&grid->supernode);
    zstr_free (&grid->sn_endpoint);
}

//  One pass over the grid's sockets (at most `wait` msec), and fd0's
//  delayed ACCEPT when due.
static void
s_pump (grid_t *grid, int wait)
{
    zmq_pollitem_t items [1 + DAEMONS];
    items [0] = (zmq_pollitem_t) { .socket = zsock_resolve (grid->supernode),
                                   .events = ZMQ_POLLIN };
    for (int i = 0; i < DAEMONS; i++)
        items [1 + i] = (zmq_pollitem_t) {
            .socket = zsock_resolve (grid->daemons [i].router),
            .events = ZMQ_POLLIN };
    zmq_poll (items, 1 + DAEMONS, wait);
    if (items [0].revents & ZMQ_POLLIN)
        s_supernode_recv (grid);
    for (int i = 0; i < DAEMONS; i++)
        if (items [1 + i].revents & ZMQ_POLLIN)
            s_daemon_recv (&grid->daemons [i], i);
    fake_daemon_t *first = &grid->daemons [0];
    if (first->accept_at && zclock_mono () >= first->accept_at) {
        first->accept_at = 0;
        s_daemon_send (first, s_report (first, JACE_MSG_ACCEPT, grid->job),
                       first->job_key);
        first->accepted_at = zclock_mono ();
    }
}

typedef bool (condition_fn) (grid_t *grid);

static bool
s_pump_until (grid_t *grid, condition_fn *condition, int64_t msec)
{
    int64_t deadline = zclock_mono () + msec;
    while (!condition (grid) && zclock_mono () < deadline)
        s_pump (grid, 20);
    return condition (grid);
}

static bool
s_started (grid_t *grid)
{
    return grid->daemons [0].started_at && grid->daemons [2].started_at;
}

static bool
s_heartbeats_heard (grid_t *grid)
{
    return grid->daemons [0].heartbeats >= 2
        && grid->daemons [2].heartbeats >= 2;
}

static bool
s_stopped (grid_t *grid)
{
    return grid->daemons [0].stops && grid->daemons [2].stops;
}

//  --------------------------------------------------------------------------
//  A raw client of the status endpoint

//  Send request (consumed) and return the answer, pumping the grid while
//  waiting so the job goes on.
static jace_msg_t *
s_ask (grid_t *grid, jace_msg_t *request)
{
    zsock_t *client = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (client, JACE_MSG_HEADER_MAX);
    assert (zsock_connect (client, "%s", grid->owner) == 0);
    jace_msg_send (&request, client);
    jace_msg_t *reply = NULL;
    int64_t deadline = zclock_mono () + 5000;
    while (!reply && zclock_mono () < deadline) {
        s_pump (grid, 10);
        if (zsock_events (client) & ZMQ_POLLIN)
            reply = jace_msg_recv (client, NULL, 0, NULL, 0);
    }
    zsock_destroy (&client);
    return reply;
}

static jace_msg_t *
s_cancel (const char *job, const jace_key_t *key)
{
    jace_msg_t *cancel = jace_msg_new (JACE_MSG_CANCEL);
    jace_msg_set_sender (cancel, "test");
    jace_msg_set_job (cancel, job);
    jace_msg_set_reason (cancel, "test");
    if (key)
        jace_msg_seal (cancel, key->bytes);
    return cancel;
}

//  The STATUS param `name` as a number, or -1.
static int64_t
s_status_number (grid_t *grid, const char *name, char *state,
                 size_t state_size)
{
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "anyone");
    jace_msg_t *reply = s_ask (grid, status);
    int64_t value = -1;
    if (reply && jace_msg_type (reply) == JACE_MSG_STATUS_REPLY) {
        const char *text = jace_msg_param (reply, name);
        value = text ? atoll (text) : -1;
        const char *now = jace_msg_param (reply, "state");
        snprintf (state, state_size, "%s", now ? now : "");
    }
    jace_msg_destroy (&reply);
    return value;
}

static bool
s_is_error (jace_msg_t **reply_p)
{
    bool error = *reply_p && jace_msg_type (*reply_p) == JACE_MSG_ERROR;
    jace_msg_destroy (reply_p);
    return error;
}

//  --------------------------------------------------------------------------

static void
s_write_job (const char *path)
{
    FILE *file = fopen (path, "w");
    assert (file);
    fprintf (file,
             "job\n"
             "    application = \"multisplit\"\n"
             "    tasks = 2\n"
             "    mapping = \"simple\"\n"
             "    max_seconds = 60\n"
             "    heartbeat_timeout = 60000\n"
             "    detector = \"fixed\"\n"
             "problem\n"
             "    kind = \"poisson3d\"\n"
             "    n = 8\n");
    fclose (file);
}

static void
s_check_assigns (grid_t *grid, const char *secrets)
{
    fake_daemon_t *d = grid->daemons;
    ok (d [0].assigned && d [1].assigned && d [2].assigned,
        "every granted daemon, and the replacement, gets an ASSIGN");
    ok (d [0].token_right && d [1].token_right && d [2].token_right,
        "each ASSIGN carries that daemon's own lease token");
    char path [512];
    snprintf (path, sizeof path, "%s/%s.secret", secrets, grid->job);
    struct stat info;
    ok (stat (path, &info) == 0 && (info.st_mode & 0777) == 0600,
        "the job's secret is saved as SECRETS/JOB.secret, mode 0600");
    jace_key_t secret, key;
    char reason [512], text [JACE_KEY_TEXT + 1] = "";
    if (jace_secret_load (secrets, grid->job, &secret, reason,
                          sizeof reason) == 0) {
        jace_job_key (&secret, &key);
        jace_key_encode (&key, text);
    }
    ok (*text && streq (d [0].job_key, text) && streq (d [2].job_key, text),
        "ASSIGN carries the job key derived from that secret");
}

static void
s_check_start (grid_t *grid)
{
    fake_daemon_t *d = grid->daemons;
    ok (s_started (grid) && !d [0].start_early
        && d [0].started_at >= d [0].accepted_at,
        "forged ACCEPTs (unsealed, wrong key) do not start the job: the "
        "sealed one does");
    ok (d [0].start_sealed && d [2].start_sealed, "START is sealed");
    ok (d [1].stops >= 1 && d [1].stops == d [1].stops_sealed,
        "the daemon that refused is fenced with a sealed STOP");
    ok (d [0].remaps >= 1 && d [0].remaps == d [0].remaps_sealed,
        "REMAP (the replacement's place) is sealed");
    ok (s_pump_until (grid, s_heartbeats_heard, 5000)
        && d [0].heartbeats == d [0].heartbeats_sealed
        && d [2].heartbeats == d [2].heartbeats_sealed,
        "the spawner's HEARTBEATs are sealed");
}

//  REBALANCE: sealed like CANCEL; sealed, still refused while the tasks
//  have not measured their rates (these daemons report none).
static void
s_check_rebalance (grid_t *grid, const jace_key_t *key)
{
    jace_msg_t *rebalance = jace_msg_new (JACE_MSG_REBALANCE);
    jace_msg_set_sender (rebalance, "test");
    jace_msg_set_job (rebalance, grid->job);
    jace_msg_t *reply = s_ask (grid, rebalance);
    ok (s_is_error (&reply), "an unsealed REBALANCE is refused with an ERROR");
    rebalance = jace_msg_new (JACE_MSG_REBALANCE);
    jace_msg_set_sender (rebalance, "test");
    jace_msg_set_job (rebalance, grid->job);
    if (key)
        jace_msg_seal (rebalance, key->bytes);
    reply = s_ask (grid, rebalance);
    ok (reply && jace_msg_type (reply) == JACE_MSG_ERROR
        && strstr (jace_msg_reason (reply), "measured its rate"),
        "a sealed REBALANCE before the tasks measured their rates is "
        "refused, saying so");
    jace_msg_destroy (&reply);
}

static void
s_check_cancels (grid_t *grid, zactor_t *spawner, const char *secrets)
{
    char state [64] = "";
    int64_t before = s_status_number (grid, "audit/unauthorised", state,
                                      sizeof state);
    ok (before >= 2, "STATUS answers anyone, and counts the forged reports");
    ok (s_status_number (grid, "audit/refused_connections", state,
                         sizeof state) == 0,
        "it reports refused connections too");
    jace_msg_t *reply = s_ask (grid, s_cancel (grid->job, NULL));
    ok (s_is_error (&reply), "an unsealed CANCEL is refused with an ERROR");
    jace_key_t wrong;
    jace_key_random (&wrong);
    reply = s_ask (grid, s_cancel (grid->job, &wrong));
    ok (s_is_error (&reply), "a CANCEL sealed with another key is refused");
    int64_t after = s_status_number (grid, "audit/unauthorised", state,
                                     sizeof state);
    ok (after == before + 2 && streq (state, "running"),
        "both are counted, and the job still runs");

    jace_key_t secret, key;
    char reason [512];
    bool loaded = jace_secret_load (secrets, grid->job, &secret, reason,
                                    sizeof reason) == 0;
    if (loaded)
        jace_job_key (&secret, &key);
    s_check_rebalance (grid, loaded ? &key : NULL);
    reply = loaded ? s_ask (grid, s_cancel (grid->job, &key)) : NULL;
    ok (reply && jace_msg_type (reply) == JACE_MSG_STATUS_REPLY,
        "a CANCEL sealed with the key of the job's secret is obeyed");
    jace_msg_destroy (&reply);
    int rc = -1;
    zpoller_t *poller = zpoller_new (spawner, NULL);
    int64_t deadline = zclock_mono () + WAIT_MSEC;
    while (rc < 0 && zclock_mono () < deadline) {
        s_pump (grid, 10);
        if (zpoller_wait (poller, 0) == spawner) {
            char *event = zstr_recv (spawner);
            char *code = zstr_recv (spawner);
            rc = code ? atoi (code) : -1;
            zstr_free (&event);
            zstr_free (&code);
        }
    }
    zpoller_destroy (&poller);
    ok (rc == 1, "the cancelled job ends, not verified");
    s_pump_until (grid, s_stopped, 3000);
    fake_daemon_t *d = grid->daemons;
    ok (s_stopped (grid) && d [0].stops == d [0].stops_sealed
        && d [2].stops == d [2].stops_sealed,
        "its daemons are told to stop, sealed");
    char path [512];
    snprintf (path, sizeof path, "%s/%s.secret", secrets, grid->job);
    ok (access (path, F_OK) != 0, "the job's secret file is removed");
    char ended [256];
    if (!ok (jace_secret_ended (secrets, grid->job, ended, sizeof ended)
             && strncmp (ended, "ended at ", 9) == 0
             && strstr (ended, "Z: failed: cancelled by "),
             "its end record says when, and that it was cancelled"))
        diag ("the record: '%s'", ended);
}

//  End records are kept JACE_ENDED_KEEP_DAYS, then removed as another
//  job ends.
static void
s_check_end_records (const char *secrets)
{
    const char *names [] = { "job-old", "job-recent" };
    int days [] = { JACE_ENDED_KEEP_DAYS + 1, JACE_ENDED_KEEP_DAYS - 1 };
    char path [512];
    for (int i = 0; i < 2; i++) {
        snprintf (path, sizeof path, "%s/%s.ended", secrets, names [i]);
        FILE *file = fopen (path, "w");
        assert (file);
        fputs ("ended at 2026-01-01T00:00:00Z: verified\n", file);
        fclose (file);
        time_t then = time (NULL) - (time_t) days [i] * 86400;
        struct timeval times [2] = { { then, 0 }, { then, 0 } };
        assert (utimes (path, times) == 0);
    }
    jace_secret_retire (secrets, "job-new", "verified");
    char text [256];
    ok (!jace_secret_ended (secrets, "job-old", text, sizeof text)
        && jace_secret_ended (secrets, "job-recent", text, sizeof text)
        && jace_secret_ended (secrets, "job-new", text, sizeof text)
        && strstr (text, "Z: verified"),
        "end records past JACE_ENDED_KEEP_DAYS are removed as another "
        "job ends");
}

//  What the spawner did, for the log of a run that failed.
static void
s_diag_file (const char *path)
{
    FILE *file = fopen (path, "r");
    char line [1024];
    while (file && fgets (line, sizeof line, file)) {
        line [strcspn (line, "\n")] = 0;
        diag ("%s", line);
    }
    if (file)
        fclose (file);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    zsys_set_logident ("test_spawner_auth");
    tap_plan (24);
    char folder [] = "/tmp/jace-auth.XXXXXX";
    assert (mkdtemp (folder));
    char job_path [256], events [256], secrets [256];
    snprintf (job_path, sizeof job_path, "%s/job.zpl", folder);
    snprintf (events, sizeof events, "%s/events.jsonl", folder);
    snprintf (secrets, sizeof secrets, "%s/secrets", folder);
    s_write_job (job_path);

    grid_t grid;
    s_grid_new (&grid);
    char reason [512] = "";
    spawner_job_t *job = spawner_job_load (job_path, NULL, reason,
                                           sizeof reason);
    assert (job);
    spawner_options_t options = { .job_file = job_path,
                                  .supernode = grid.sn_endpoint,
                                  .events_path = events,
                                  .secrets_dir = secrets, .quiet = true };
    spawner_server_config_t config = { .job = job, .options = &options };
    zactor_t *spawner = zactor_new (spawner_server_actor, &config);

    bool started = s_pump_until (&grid, s_started, WAIT_MSEC);
    ok (started, "the job starts on fd0 and fd2");
    if (!started) {
        s_diag_file (events);
        for (int i = 0; i < DAEMONS; i++)
            diag ("fd%d: assigned %d, epoch %lld, accepted at %lld, "
                  "started at %lld, grants %d", i,
                  grid.daemons [i].assigned,
                  (long long) grid.daemons [i].epoch,
                  (long long) grid.daemons [i].accepted_at,
                  (long long) grid.daemons [i].started_at, grid.grants);
    }
    s_check_assigns (&grid, secrets);
    s_check_start (&grid);
    char needle [512];
    snprintf (needle, sizeof needle, "\"secret\":\"%s/%s.secret\"", secrets,
              grid.job);
    ok (tap_file_has (events, needle),
        "the start event says where the secret is");
    s_check_cancels (&grid, spawner, secrets);
    s_check_end_records (secrets);

    zactor_destroy (&spawner);
    spawner_job_destroy (&job);
    s_grid_destroy (&grid);
    zdir_t *records = zdir_new (secrets, NULL);     //  The end records
    if (records)
        zdir_remove (records, true);
    zdir_destroy (&records);
    unlink (job_path);
    unlink (events);
    rmdir (folder);
    return tap_done ();
}
