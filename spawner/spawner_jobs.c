/*  =========================================================================
    spawner_jobs - `jace-spawner jobs` and `jace-spawner cancel`

    With keys, an owner spawner's status endpoint is reached with the key
    the super-node lists for its lease (`lease/JOB/owner_key`, the key its
    RESERVE was authenticated with): each user has a certificate of their
    own.  A super-node that lists none (an older one) leaves us our own
    key, which is right when the owner shares our certificate.

    cancel proves the job is ours by sealing CANCEL (or, with no owner,
    the daemons' STOPs) with the key of the job's secret, read from the
    secrets folder first: without it, nothing is sent.
    =========================================================================
*/
#include "spawner_jobs.h"
#include "spawner_nodes.h"
#include "spawner_secret.h"
#include "spawner_events.h"

#include <math.h>

//  Longest wait for an owner spawner's answer: a live one answers at once.
#define OWNER_WAIT_MSEC 1000
//  ... unless it is busy on a loaded machine (a tester saw 2-14 s): one
//  that still holds its lease (the super-nodes forget a lease a few
//  seconds after its last renewal) is alive, and is waited for up to
//  OWNER_BUSY_MSEC before anything is done behind its back.
#define OWNER_BUSY_MSEC 20000
#define OWNER_RETRY_MSEC 2000
//  A super-node that was cut off from its peers (or restarted) lists the
//  daemons it has of a job before it hears again which spawner holds
//  the job's lease: seen right after a cut cluster was healed, a cancel
//  through it took the job for orphaned and stopped those daemons only,
//  while the job went on elsewhere.  Its peers report every second once
//  their links are back, which took 5 s after a cut of 15 s (TCP's
//  back-off).  A spawner that runs on this machine (it holds the job's
//  secret) is waited for up to OWNER_BUSY_MSEC; one elsewhere cannot be
//  told from a dead one, and is waited for OWNER_LEARN_MSEC.
#define OWNER_LEARN_MSEC 3000
//  Longest wait for a cancelled job's daemons to be free.
#define FREE_WAIT_MSEC 15000

//  One job as the listing shows it.
typedef struct {
    char id [JACE_ID_MAX];      //  Job id
    size_t daemons;             //  Daemons working for it
    size_t spares;              //  Daemons leased to it, idle
    char owner [JACE_ENDPOINT_MAX];     //  Owner's status endpoint, or ""
    char owner_key [JACE_ID_MAX];       //  Its CURVE key, or "" (unknown)
    int64_t unauthorised;       //  Messages the owner refused, or -1
    int64_t lease_age;          //  Lease age (msec), or -1
    char state [32];            //  Owner's word, or "orphaned"
    int64_t tasks;              //  Tasks, as the owner says, or -1
} job_row_t;

static const char *
s_lease_param (jace_msg_t *registry, const char *job, const char *what)
{
    char key [JACE_ID_MAX + 32];
    snprintf (key, sizeof key, "lease/%s/%s", job, what);
    return jace_msg_param (registry, key);
}

//  The row of job `job`, added with its lease's params if it is new.
static job_row_t *
s_job_row (job_row_t *rows, size_t *count, jace_msg_t *registry,
           const char *job)
{
    for (size_t row = 0; row < *count; row++)
        if (streq (rows [row].id, job))
            return &rows [row];
    job_row_t *added = &rows [(*count)++];
    snprintf (added->id, sizeof added->id, "%s", job);
    const char *owner = s_lease_param (registry, job, "owner");
    const char *owner_key = s_lease_param (registry, job, "owner_key");
    const char *age = s_lease_param (registry, job, "age_ms");
    snprintf (added->owner, sizeof added->owner, "%s", owner ? owner : "");
    snprintf (added->owner_key, sizeof added->owner_key, "%s",
              owner_key ? owner_key : "");
    added->unauthorised = -1;
    added->lease_age = age ? atoll (age) : -1;
    added->tasks = -1;
    return added;
}

static int
s_compare_strings (void *left, void *right)
{
    return strcmp ((const char *) left, (const char *) right);
}

//  Group the registry's working daemons by job, then add the jobs whose
//  spawner holds a lease and no daemon works for yet (one that waits for
//  daemons), by id.  Returns the rows (caller frees) and their count.
static job_row_t *
s_group_jobs (jace_msg_t *registry, size_t *count)
{
    size_t nodes = jace_msg_node_count (registry);
    zlist_t *keys = zhash_keys (jace_msg_params (registry));
    zlist_sort (keys, s_compare_strings);
    job_row_t *rows = (job_row_t *) zmalloc ((nodes + zlist_size (keys) + 1)
                                             * sizeof (job_row_t));
    *count = 0;
    for (size_t i = 0; i < nodes; i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        if (node->state == JACE_NODE_WORKING && *node->job)
            s_job_row (rows, count, registry, node->job)->daemons++;
    }
    const char prefix [] = "lease/", suffix [] = "/owner";
    for (char *key = (char *) zlist_first (keys); key;
         key = (char *) zlist_next (keys)) {
        size_t length = strlen (key);
        if (length <= strlen (prefix) + strlen (suffix)
        ||  strncmp (key, prefix, strlen (prefix))
        ||  strcmp (key + length - strlen (suffix), suffix))
            continue;
        char job [JACE_ID_MAX];
        size_t job_length = length - strlen (prefix) - strlen (suffix);
        if (job_length >= sizeof job)
            continue;
        memcpy (job, key + strlen (prefix), job_length);
        job [job_length] = 0;
        const char *owner = jace_msg_param (registry, key);
        if (owner && *owner)
            s_job_row (rows, count, registry, job);
    }
    zlist_destroy (&keys);
    //  Spares count for the jobs listed; they make none of their own
    for (size_t i = 0; i < nodes; i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        for (size_t row = 0; node->state == JACE_NODE_LEASED && row < *count;
             row++)
            if (streq (rows [row].id, node->job))
                rows [row].spares++;
    }
    return rows;
}

//  The key to reach an owner spawner's status endpoint with: the one the
//  super-node lists, else our own.
static const char *
s_owner_key (const char *listed, jace_security_t *security)
{
    return listed && *listed ? listed : jace_security_public_key (security);
}

//  Ask the owner of `row` where its job stands.
static void
s_ask_owner (job_row_t *row, jace_security_t *security)
{
    //  Daemons at work and no spawner that answers for them (none holds
    //  the lease any more, or the one that did is gone): orphans.
    snprintf (row->state, sizeof row->state, "orphaned");
    if (!*row->owner)
        return;
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "jace-spawner-jobs");
    jace_msg_t *reply = spawner_nodes_ask (row->owner,
        s_owner_key (row->owner_key, security), security, &status,
        JACE_MSG_STATUS_REPLY, OWNER_WAIT_MSEC);
    if (!reply)
        return;
    const char *job = jace_msg_param (reply, "job");
    const char *state = jace_msg_param (reply, "state");
    const char *tasks = jace_msg_param (reply, "tasks");
    const char *age = jace_msg_param (reply, "age_ms");
    const char *refused = jace_msg_param (reply, "audit/unauthorised");
    if (jace_msg_type (reply) == JACE_MSG_STATUS_REPLY
    &&  job && streq (job, row->id) && state) {
        snprintf (row->state, sizeof row->state, "%s", state);
        row->tasks = tasks ? atoll (tasks) : -1;
        row->unauthorised = refused ? atoll (refused) : -1;
        if (age)
            row->lease_age = atoll (age);
    }
    jace_msg_destroy (&reply);
}

static void
s_print_jobs (const job_row_t *rows, size_t count, bool json)
{
    if (json) {
        printf ("[");
        for (size_t i = 0; i < count; i++)
            printf ("%s{\"job\":\"%s\",\"state\":\"%s\",\"daemons\":%zu,"
                    "\"spares\":%zu,\"tasks\":%" PRId64 ",\"age_seconds\":%.1f,"
                    "\"owner\":\"%s\",\"unauthorised\":%" PRId64 "}",
                    i ? "," : "", rows [i].id, rows [i].state,
                    rows [i].daemons, rows [i].spares, rows [i].tasks,
                    rows [i].lease_age / 1000.0, rows [i].owner,
                    rows [i].unauthorised);
        printf ("]\n");
        return;
    }
    printf ("%-16s %-10s %7s %6s %6s %9s  %s\n", "JOB", "STATE", "DAEMONS",
            "SPARES", "TASKS", "AGE", "OWNER");
    for (size_t i = 0; i < count; i++) {
        char tasks [24] = "-", age [24] = "-";
        if (rows [i].tasks >= 0)
            snprintf (tasks, sizeof tasks, "%" PRId64, rows [i].tasks);
        if (rows [i].lease_age >= 0)
            snprintf (age, sizeof age, "%.0f s", rows [i].lease_age / 1000.0);
        printf ("%-16s %-10s %7zu %6zu %6s %9s  %s\n", rows [i].id,
                rows [i].state, rows [i].daemons, rows [i].spares, tasks, age,
                *rows [i].owner ? rows [i].owner : "-");
    }
    if (count == 0)
        printf ("(no job running)\n");
}

//  A job whose spawner wrote, as it finished, that it ended: its daemons
//  may be listed at work for a moment after (their super-node hears of
//  their release with their next heartbeat), and `jobs` run right after
//  `submit` called the job orphaned.
static void
s_mark_ended (job_row_t *row, const char *secrets_dir)
{
    if (!streq (row->state, "orphaned"))
        return;
    char *dir = spawner_secret_dir (secrets_dir);
    char ended [256];
    if (jace_secret_ended (dir, row->id, ended, sizeof ended))
        snprintf (row->state, sizeof row->state, "ended");
    free (dir);
}

int
spawner_jobs_list (const char *supernode, const char *keys_dir,
                   const char *cert, const char *secrets_dir, bool json,
                   int timeout_msec)
{
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    if (!security)
        return 1;
    jace_msg_t *registry = spawner_nodes_query (supernode, security,
                                                timeout_msec);
    int rc = 1;
    if (registry) {
        size_t count, shown = 0;
        job_row_t *rows = s_group_jobs (registry, &count);
        for (size_t i = 0; i < count; i++) {
            s_ask_owner (&rows [i], security);
            s_mark_ended (&rows [i], secrets_dir);
            //  A lease no daemon works for and no spawner answers for is
            //  one that is ending (a peer's listing lags): nothing to show
            if (rows [i].daemons > 0 || (!streq (rows [i].state, "orphaned")
                                         && !streq (rows [i].state, "ended")))
                rows [shown++] = rows [i];
        }
        s_print_jobs (rows, shown, json);
        free (rows);
        jace_msg_destroy (&registry);
        rc = 0;
    }
    jace_security_destroy (&security);
    return rc;
}

//  --------------------------------------------------------------------------

//  Daemons working for job_id as the super-node sees them, or -1.
static int64_t
s_count_working (jace_msg_t *registry, const char *job_id)
{
    int64_t working = 0;
    for (size_t i = 0; i < jace_msg_node_count (registry); i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        working += node->state == JACE_NODE_WORKING
                && streq (node->job, job_id);
    }
    return working;
}

static int64_t
s_working_for (const char *supernode, jace_security_t *security,
               const char *job_id, jace_msg_t **registry_p)
{
    jace_msg_t *registry = spawner_nodes_query (supernode, security, 5000);
    if (!registry)
        return -1;
    int64_t working = s_count_working (registry, job_id);
    if (registry_p)
        *registry_p = registry;
    else
        jace_msg_destroy (&registry);
    return working;
}

//  The owner is gone: tell each daemon of the job to stop.
static size_t
s_stop_daemons (jace_msg_t *registry, const char *job_id,
                jace_security_t *security, const jace_key_t *job_key)
{
    size_t told = 0;
    for (size_t i = 0; i < jace_msg_node_count (registry); i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        if (node->state != JACE_NODE_WORKING || !streq (node->job, job_id))
            continue;
        zsock_t *link = zsock_new (ZMQ_DEALER);
        jace_msg_prepare_socket (link, JACE_MSG_HEADER_MAX);
        zsock_set_linger (link, 1000);
        if (jace_security_apply_client (security, link, node->pubkey) == 0
        &&  zsock_connect (link, "%s", node->endpoint) == 0) {
            jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
            jace_msg_set_sender (stop, "jace-spawner-cancel");
            jace_msg_set_job (stop, job_id);
            jace_msg_set_reason (stop, "cancelled: the job's spawner is "
                                 "gone");
            told += spawner_secret_send (&stop, job_key, link) == 0;
        }
        zsock_destroy (&link);
    }
    return told;
}

//  True if job_id's owner still holds its lease: it renewed it lately.
static bool
s_owner_alive (jace_msg_t *registry, const char *job_id)
{
    const char *owner = s_lease_param (registry, job_id, "owner");
    return owner && *owner;
}

//  Daemons work for job_id and no spawner holds its lease: ask again for
//  up to `msec`, in case the super-node has yet to hear of the owner
//  from its peers.  Updates *registry_p and returns the daemons working,
//  or -1 if the super-node fell silent.
static int64_t
s_learn_owner (const char *supernode, jace_security_t *security,
               const char *job_id, jace_msg_t **registry_p, int64_t working,
               int msec)
{
    int64_t deadline = zclock_mono () + msec;
    while (working > 0 && !s_owner_alive (*registry_p, job_id)
    &&     zclock_mono () < deadline && !zsys_interrupted) {
        zclock_sleep (500);
        jace_msg_destroy (registry_p);
        working = s_working_for (supernode, security, job_id, registry_p);
    }
    return working;
}

//  Ask the owner spawner to cancel, with a CANCEL sealed with the job
//  key.  Returns 1 when it obeyed, 0 when none answered, -1 when it
//  refused (the reason on stderr).
static int
s_ask_cancel (jace_msg_t *registry, const char *job_id,
              jace_security_t *security, const jace_key_t *job_key,
              int wait_msec)
{
    const char *owner = s_lease_param (registry, job_id, "owner");
    if (!owner || !*owner)
        return 0;
    jace_msg_t *cancel = jace_msg_new (JACE_MSG_CANCEL);
    jace_msg_set_sender (cancel, "jace-spawner-cancel");
    jace_msg_set_job (cancel, job_id);
    jace_msg_set_reason (cancel, "jace-spawner cancel");
    jace_msg_seal (cancel, job_key->bytes);
    jace_msg_t *reply = spawner_nodes_ask (owner,
        s_owner_key (s_lease_param (registry, job_id, "owner_key"),
                     security),
        security, &cancel, JACE_MSG_STATUS_REPLY, wait_msec);
    int rc = reply ? 1 : 0;
    if (reply && jace_msg_type (reply) == JACE_MSG_ERROR) {
        fprintf (stderr, "jace-spawner: the spawner of job %s at %s "
                 "refused: %s\n", job_id, owner, jace_msg_reason (reply));
        rc = -1;
    }
    else
    if (reply)
        printf ("job %s: cancelled by its spawner at %s\n", job_id, owner);
    jace_msg_destroy (&reply);
    return rc;
}

//  Wait until no daemon works for the job (or the wait is over).
//  Daemons the spawner had lost (cut off, frozen) learn that the job is
//  over from their super-node, as after any job's end (supernode_ended).
//  Returns those still working, or -1 if the super-node fell silent.
static int64_t
s_wait_free (const char *supernode, jace_security_t *security,
             const char *job_id, int64_t working, int timeout_msec)
{
    int64_t deadline = zclock_mono () + (timeout_msec > FREE_WAIT_MSEC
                                         ? timeout_msec : FREE_WAIT_MSEC);
    while (working > 0 && zclock_mono () < deadline && !zsys_interrupted) {
        zclock_sleep (200);
        working = s_working_for (supernode, security, job_id, NULL);
    }
    return working;
}

//  Without a secret, the job's end record says it ended (its spawner
//  writes one before it removes the secret); else the grid is asked
//  whether the job runs at all: a user asking to drain a job that had
//  ended heard only that its secret was missing, and that only its
//  submitter may control it.
int
spawner_jobs_open_secret (const char *job_id, const char *supernode,
                          const char *keys_dir, const char *cert,
                          const char *secrets_dir, jace_key_t *job_key)
{
    char reason [2048] = "";
    int rc = spawner_secret_open (secrets_dir, job_id, job_key, reason,
                                  sizeof reason);
    if (rc == 0)
        return 0;
    if (rc == -2) {
        fprintf (stderr, "jace-spawner: %s\n", reason);
        return -1;
    }
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    jace_msg_t *registry = NULL;
    int64_t working = security ? s_working_for (supernode, security, job_id,
                                                &registry) : -1;
    if (working == 0 && !s_lease_param (registry, job_id, "owner"))
        fprintf (stderr, "jace-spawner: no job %s runs on the grid of %s: "
                 "it has ended, or it never ran there\n", job_id, supernode);
    else
    if (working < 0)
        //  The super-node's silence was just said: whether the job runs
        //  is unknown, only that it cannot be controlled from here
        fprintf (stderr, "jace-spawner: cannot tell whether job %s runs; "
                 "either way, %s\n", job_id, reason);
    else
        fprintf (stderr, "jace-spawner: %s\n", reason);
    jace_msg_destroy (&registry);
    jace_security_destroy (&security);
    return -1;
}

int
spawner_jobs_cancel (const char *job_id, const char *supernode,
                     const char *keys_dir, const char *cert,
                     const char *secrets_dir, int timeout_msec)
{
    //  Without the job's secret nothing is sent: no spawner nor daemon
    //  would obey, and the user should hear why from us.
    jace_key_t job_key;
    if (spawner_jobs_open_secret (job_id, supernode, keys_dir, cert,
                                  secrets_dir, &job_key))
        return 1;
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    jace_msg_t *registry = NULL;
    int64_t before = security ? s_working_for (supernode, security, job_id,
                                               &registry) : -1;
    bool spawner_here = spawner_secret_in_use (secrets_dir, job_id);
    if (before > 0)
        before = s_learn_owner (supernode, security, job_id, &registry,
                                before, spawner_here ? OWNER_BUSY_MSEC
                                                     : OWNER_LEARN_MSEC);
    if (before > 0 && spawner_here && !s_owner_alive (registry, job_id)) {
        //  Its daemons are not orphans: leave them to it
        fprintf (stderr, "jace-spawner: the spawner of job %s runs on this "
                 "machine, but super-node %s does not name it after %d s: "
                 "try again, or through another super-node\n", job_id,
                 supernode, OWNER_BUSY_MSEC / 1000);
        before = -1;
    }
    int asked = before < 0 ? -1
              : s_ask_cancel (registry, job_id, security, &job_key,
                              OWNER_WAIT_MSEC);
    if (asked == 0 && s_owner_alive (registry, job_id)) {
        fprintf (stderr, "jace-spawner: the spawner of job %s holds its "
                 "lease but did not answer in %d ms: waiting for it\n",
                 job_id, OWNER_WAIT_MSEC);
        //  Asked again, the lease looked at between two asks: one that
        //  lapses means the spawner died (its daemons are then stopped
        //  below, as for any orphan).
        int64_t deadline = zclock_mono () + OWNER_BUSY_MSEC;
        while (asked == 0 && zclock_mono () < deadline && !zsys_interrupted
        &&     s_owner_alive (registry, job_id)) {
            asked = s_ask_cancel (registry, job_id, security, &job_key,
                                  OWNER_RETRY_MSEC);
            if (asked == 0) {
                jace_msg_destroy (&registry);
                before = s_working_for (supernode, security, job_id,
                                        &registry);
                if (before < 0)
                    asked = -1;
            }
        }
        if (asked == 0 && s_owner_alive (registry, job_id)) {
            //  Stopping its daemons behind its back made a busy spawner
            //  take them all for crashed and replace them.
            fprintf (stderr, "jace-spawner: the spawner of job %s did not "
                     "answer in %d s either; its daemons are left to it "
                     "(try again, or stop that spawner first)\n", job_id,
                     OWNER_BUSY_MSEC / 1000);
            asked = -1;
        }
    }
    if (asked == 0 && before > 0)
        printf ("job %s: no spawner answers for it; told its %zu daemons "
                "to stop\n", job_id,
                s_stop_daemons (registry, job_id, security, &job_key));
    jace_msg_destroy (&registry);
    int64_t working = asked < 0 ? before
                    : s_wait_free (supernode, security, job_id, before,
                                   timeout_msec);
    jace_key_wipe (&job_key);
    jace_security_destroy (&security);
    if (asked < 0)
        return 1;               //  Said why already
    if (before == 0 && asked == 0 && !spawner_here) {
        //  Neither a daemon nor a spawner knows the job, and no spawner
        //  here holds its secret: it died before any daemon worked for
        //  it (killed while it waited for daemons), and nobody else will
        //  record its end (status said to cancel it).  Nothing was
        //  running to cancel: still an error.
        char *dir = spawner_secret_dir (secrets_dir);
        jace_secret_retire (dir, job_id, "failed: cancelled by "
                            "jace-spawner cancel (its spawner was gone "
                            "before any daemon worked for it)");
        free (dir);
        fprintf (stderr, "jace-spawner: no job %s runs on the grid of %s: "
                 "no daemon works for it, and its spawner is gone; its end "
                 "is recorded\n", job_id, supernode);
        return 1;
    }
    if (before == 0 && asked == 0) {
        //  Neither a daemon nor a spawner knows the job.  Its secret is
        //  here, so it was submitted from here; a spawner waiting for
        //  daemons holds a lease of none (spawner_lease_announce) from
        //  its first look at the grid on, so it has ended, or has not
        //  looked yet.
        fprintf (stderr, "jace-spawner: no job %s on the grid of %s: no "
                 "daemon works for it and no spawner holds a lease for "
                 "it (it has ended, or its spawner has not reached the "
                 "grid yet)\n", job_id, supernode);
        return 1;
    }
    if (working != 0) {
        fprintf (stderr, "jace-spawner: %" PRId64 " daemons still work for "
                 "job %s\n", working, job_id);
        return 1;
    }
    printf ("job %s: %" PRId64 " daemons freed\n", job_id, before);
    //  A job whose spawner was gone has nobody else to record its end:
    //  the secret stayed, and later commands said "no daemon works for
    //  it" and suggested resume.  (A spawner that answered records it.)
    if (asked == 0) {
        char *dir = spawner_secret_dir (secrets_dir);
        jace_secret_retire (dir, job_id, "failed: cancelled by "
                            "jace-spawner cancel (its spawner was gone; "
                            "its daemons were told to stop)");
        free (dir);
    }
    return 0;
}

//  --------------------------------------------------------------------------
//  drain and rebalance: requests to the job's owner spawner

//  Send `request` (DRAIN, REBALANCE; consumed), sealed with the key of
//  job_id's secret, to the spawner that owns the job.  Returns its
//  STATUS_REPLY, or NULL with the reason on stderr.
static jace_msg_t *
s_request_owner (const char *job_id, jace_msg_t **request_p,
                 const char *supernode, const char *keys_dir,
                 const char *cert, const char *secrets_dir, int timeout_msec)
{
    jace_key_t job_key;
    if (spawner_jobs_open_secret (job_id, supernode, keys_dir, cert,
                                  secrets_dir, &job_key)) {
        jace_msg_destroy (request_p);
        return NULL;
    }
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    jace_msg_t *registry = NULL;
    if (security)
        s_working_for (supernode, security, job_id, &registry);
    const char *owner = registry ? s_lease_param (registry, job_id, "owner")
                                 : NULL;
    jace_msg_t *reply = NULL;
    if (!registry)
        fprintf (stderr, "jace-spawner: super-node %s does not answer\n",
                 supernode);
    else
    if (!owner || !*owner)
        fprintf (stderr, "jace-spawner: no spawner answers for job %s on "
                 "the grid of %s (jobs lists the running ones)\n", job_id,
                 supernode);
    else {
        jace_msg_set_job (*request_p, job_id);
        jace_msg_seal (*request_p, job_key.bytes);
        reply = spawner_nodes_ask (owner,
            s_owner_key (s_lease_param (registry, job_id, "owner_key"),
                         security),
            security, request_p, JACE_MSG_STATUS_REPLY,
            timeout_msec > OWNER_WAIT_MSEC ? timeout_msec : OWNER_WAIT_MSEC);
        if (!reply)
            fprintf (stderr, "jace-spawner: the spawner of job %s at %s "
                     "does not answer\n", job_id, owner);
        else
        if (jace_msg_type (reply) == JACE_MSG_ERROR) {
            fprintf (stderr, "jace-spawner: the spawner of job %s at %s "
                     "refused: %s\n", job_id, owner,
                     jace_msg_reason (reply));
            jace_msg_destroy (&reply);
        }
    }
    jace_msg_destroy (request_p);
    jace_msg_destroy (&registry);
    jace_key_wipe (&job_key);
    jace_security_destroy (&security);
    return reply;
}

int
spawner_jobs_drain (const char *job_id, const char *cluster,
                    const char *supernode, const char *keys_dir,
                    const char *cert, const char *secrets_dir,
                    int timeout_msec)
{
    jace_msg_t *drain = jace_msg_new (JACE_MSG_DRAIN);
    jace_msg_set_sender (drain, "jace-spawner-drain");
    jace_msg_set_cluster (drain, cluster ? cluster : "");
    jace_msg_t *reply = s_request_owner (job_id, &drain, supernode, keys_dir,
                                     cert, secrets_dir, timeout_msec);
    if (!reply)
        return 1;
    const char *repeat = jace_msg_param (reply, "drain/repeat");
    if (cluster && repeat && streq (repeat, "1")) {
        const char *moved = jace_msg_param (reply, "drain/moved");
        const char *left = jace_msg_param (reply, "drain/left");
        printf ("job %s: cluster %s was already being drained: %lld tasks "
                "moved, %lld left on it\n", job_id, cluster,
                moved ? atoll (moved) : 0, left ? atoll (left) : 0);
    }
    else
    if (cluster)
        printf ("job %s: cluster %s is being drained by its spawner\n",
                job_id, cluster);
    else {
        const char *stopped = jace_msg_param (reply, "drain/stopped");
        const char *moved = jace_msg_param (reply, "drain/moved");
        const char *left = jace_msg_param (reply, "drain/left");
        char name [256];
        spawner_events_escape (name, sizeof name, stopped ? stopped : "?");
        printf ("job %s: the drain of cluster %s stopped: %lld tasks moved, "
                "%lld left on it\n", job_id, name,
                moved ? atoll (moved) : 0, left ? atoll (left) : 0);
    }
    jace_msg_destroy (&reply);
    return 0;
}

int
spawner_jobs_rebalance (const char *job_id, const char *supernode,
                        const char *keys_dir, const char *cert,
                        const char *secrets_dir, int timeout_msec)
{
    jace_msg_t *rebalance = jace_msg_new (JACE_MSG_REBALANCE);
    jace_msg_set_sender (rebalance, "jace-spawner-rebalance");
    jace_msg_t *reply = s_request_owner (job_id, &rebalance, supernode,
                                     keys_dir, cert, secrets_dir,
                                     timeout_msec);
    if (!reply)
        return 1;
    const char *decided = jace_msg_param (reply, "rebalance");
    printf ("job %s: %s\n", job_id, decided ? decided : "request taken");
    jace_msg_destroy (&reply);
    return 0;
}

//  --------------------------------------------------------------------------
//  `jace-spawner status JOBID`

//  A drain under way, as a STATUS_REPLY says it: a line after the table,
//  or the JSON's "drain" member (null when none)
static void
s_print_drain (jace_msg_t *reply, bool json)
{
    const char *cluster = jace_msg_param (reply, "drain/cluster");
    const char *moved = jace_msg_param (reply, "drain/moved");
    const char *left = jace_msg_param (reply, "drain/left");
    const char *waiting = jace_msg_param (reply, "drain/waiting");
    char name [256], why [1024];
    spawner_events_escape (name, sizeof name, cluster ? cluster : "");
    spawner_events_escape (why, sizeof why, waiting ? waiting : "");
    long long moved_count = moved ? atoll (moved) : 0;
    long long left_count = left ? atoll (left) : 0;
    if (json && !cluster)
        printf (",\"drain\":null");
    else
    if (json)
        printf (",\"drain\":{\"cluster\":\"%s\",\"moved\":%lld,"
                "\"left\":%lld,\"waiting\":\"%s\"}", name, moved_count,
                left_count, why);
    else
    if (cluster)
        printf ("draining %s: %lld tasks moved, %lld left on it%s%s\n", name,
                moved_count, left_count, waiting ? "; waiting: " : "", why);
}

//  Print the task table a spawner's STATUS_REPLY carries
static void
s_print_status (jace_msg_t *reply, bool json)
{
    const char *state = jace_msg_param (reply, "state");
    const char *age = jace_msg_param (reply, "age_ms");
    const char *snapshots = jace_msg_param (reply, "snapshots");
    const char *residual = jace_msg_param (reply, "residual");
    size_t count = jace_msg_node_count (reply);
    char job [256];
    spawner_events_escape (job, sizeof job, jace_msg_param (reply, "job"));
    //  (the caller checked that "job" is there)
    //  Numbers are printed from what they parse to: a reply is a peer's
    //  text, and must not write into our JSON
    char state_text [256], residual_text [32] = "null";
    spawner_events_escape (state_text, sizeof state_text, state ? state : "");
    if (residual && isfinite (atof (residual)))
        snprintf (residual_text, sizeof residual_text, "%.6e",
                  atof (residual));
    if (json)
        printf ("{\"job\":\"%s\",\"state\":\"%s\",\"tasks\":%zu,"
                "\"age_seconds\":%.1f,\"snapshots\":%lld,\"residual\":%s,"
                "\"table\":[", job, state_text, count,
                age ? atoll (age) / 1000.0 : 0.0,
                snapshots ? atoll (snapshots) : 0LL, residual_text);
    else {
        //  As the live table says it (spawner_console)
        char last [64] = "no residual verified yet";
        if (residual && isfinite (atof (residual))
        &&  snapshots && atoll (snapshots) > 0)
            snprintf (last, sizeof last, "last residual %s", residual_text);
        printf ("%s  %s  %.1f s  snapshots %lld  %s\n"
                "%5s  %-16s %-10s %10s %12s %12s  %s\n", job,
                state_text, age ? atoll (age) / 1000.0 : 0.0,
                snapshots ? atoll (snapshots) : 0LL, last,
                "TASK", "DAEMON", "CLUSTER", "ROWS", "ITERATION", "CHANGE",
                "STATE");
    }
    for (size_t i = 0; i < count; i++) {
        const jace_node_t *node = jace_msg_node (reply, i);
        char key [64], word [32] = "-";
        long long iteration = -1, rows = -1;
        double change = NAN;
        snprintf (key, sizeof key, "task/%" PRId64, node->task);
        const char *row = jace_msg_param (reply, key);
        if (!row || sscanf (row, "%lld %lf %lld %31[^\n]", &iteration,
                            &change, &rows, word) != 4) {
            iteration = rows = -1;
            change = NAN;
            snprintf (word, sizeof word, "-");
        }
        char id [256], cluster [256], endpoint [1024];
        spawner_events_escape (id, sizeof id, node->id);
        spawner_events_escape (cluster, sizeof cluster, node->cluster);
        spawner_events_escape (endpoint, sizeof endpoint, node->endpoint);
        char state_word [2 * sizeof word];
        spawner_events_escape (state_word, sizeof state_word, word);
        if (json) {
            char changed [32] = "null";
            if (isfinite (change))
                snprintf (changed, sizeof changed, "%.6e", change);
            printf ("%s{\"task\":%" PRId64 ",\"daemon\":\"%s\","
                    "\"cluster\":\"%s\",\"endpoint\":\"%s\","
                    "\"rows\":%lld,\"iteration\":%lld,\"change\":%s,"
                    "\"state\":\"%s\"}", i ? "," : "", node->task, id,
                    cluster, endpoint, rows, iteration, changed, state_word);
        }
        else
            printf ("%5" PRId64 "  %-16s %-10s %10lld %12lld %12.3e  %s\n",
                    node->task, *id ? id : "-", *cluster ? cluster : "-",
                    rows, iteration, change, state_word);
    }
    if (json)
        printf ("]");
    s_print_drain (reply, json);
    //  Why a job that cannot be placed yet waits
    const char *unplaced = jace_msg_param (reply, "unplaced");
    char why [1024];
    spawner_events_escape (why, sizeof why, unplaced ? unplaced : "");
    if (json)
        printf (unplaced ? ",\"unplaced\":\"%s\"" : ",\"unplaced\":null",
                why);
    else
    if (unplaced)
        printf ("waiting for daemons: %s\n", why);
    if (json)
        printf ("}\n");
}

//  True if this machine's record says job_id ended (its spawner wrote it
//  as it finished, spawner_secret): said as status's answer.
static bool
s_print_ended (const char *job_id, const char *secrets_dir, bool json)
{
    char *dir = spawner_secret_dir (secrets_dir);
    char ended [256];
    bool known = jace_secret_ended (dir, job_id, ended, sizeof ended);
    free (dir);
    if (known && json) {
        char escaped [2 * sizeof ended];
        spawner_events_escape (escaped, sizeof escaped, ended);
        printf ("{\"job\":\"%s\",\"state\":\"ended\",\"ended\":\"%s\"}\n",
                job_id, escaped);
    }
    else
    if (known)
        printf ("job %s %s\n", job_id, ended);
    return known;
}

int
spawner_jobs_status (const char *job_id, const char *supernode,
                     const char *keys_dir, const char *cert,
                     const char *secrets_dir, bool json, int timeout_msec)
{
    assert (job_id && supernode);
    //  A job that ended is said so at once: its lease may still name a
    //  spawner that no longer answers, and we said to resume it
    if (s_print_ended (job_id, secrets_dir, json))
        return 0;
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    if (!security)
        return 1;
    jace_msg_t *registry = spawner_nodes_query (supernode, security,
                                                timeout_msec);
    if (!registry) {
        jace_security_destroy (&security);
        return 1;
    }
    int rc = 1;
    const char *owner = s_lease_param (registry, job_id, "owner");
    const char *owner_key = s_lease_param (registry, job_id, "owner_key");
    if (!owner || !*owner)
        fprintf (stderr, "jace-spawner: no running job %s on %s (see "
                 "jace-spawner jobs)\n", job_id, supernode);
    else {
        jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
        jace_msg_set_sender (status, "jace-spawner-status");
        jace_msg_t *reply = spawner_nodes_ask (owner,
            s_owner_key (owner_key, security), security, &status,
            JACE_MSG_STATUS_REPLY, timeout_msec);
        const char *job = reply ? jace_msg_param (reply, "job") : NULL;
        if (!reply && s_print_ended (job_id, secrets_dir, json))
            rc = 0;             //  It ended while we asked
        else
        if (!reply && s_count_working (registry, job_id) == 0)
            //  A resume would find no daemon to take the job back from
            fprintf (stderr, "jace-spawner: the spawner of %s (%s) does not "
                     "answer, and no daemon works for the job: if that "
                     "spawner is gone, there is nothing to resume; submit "
                     "the job again (jace-spawner cancel %s records its "
                     "end)\n", job_id, owner, job_id);
        else
        if (!reply)
            fprintf (stderr, "jace-spawner: the spawner of %s (%s) does not "
                     "answer: it may be gone (jace-spawner resume %s)\n",
                     job_id, owner, job_id);
        else
        if (jace_msg_type (reply) == JACE_MSG_ERROR)
            fprintf (stderr, "jace-spawner: the spawner of %s refused: %s\n",
                     job_id, jace_msg_reason (reply));
        else
        if (!job || !streq (job, job_id))
            fprintf (stderr, "jace-spawner: %s answers for another job, not "
                     "%s\n", owner, job_id);
        else {
            s_print_status (reply, json);
            rc = 0;
        }
        jace_msg_destroy (&reply);
    }
    jace_msg_destroy (&registry);
    jace_security_destroy (&security);
    return rc;
}

bool
spawner_jobs_owner_answers (const char *job_id, const char *supernode,
                            const char *keys_dir, const char *cert,
                            char *owner, size_t owner_size)
{
    assert (job_id && supernode && owner);
    *owner = 0;
    jace_security_t *security = spawner_nodes_security (keys_dir, cert);
    if (!security)
        return false;
    jace_msg_t *registry = spawner_nodes_query (supernode, security, 5000);
    //  The job's row as `jobs` would show it: the owner's own word, or
    //  "orphaned" when it does not answer
    job_row_t row = { .unauthorised = -1, .lease_age = -1, .tasks = -1 };
    snprintf (row.id, sizeof row.id, "%s", job_id);
    const char *listed = registry ? s_lease_param (registry, job_id, "owner")
                                  : NULL;
    const char *key = registry ? s_lease_param (registry, job_id,
                                                "owner_key")
                               : NULL;
    snprintf (row.owner, sizeof row.owner, "%s", listed ? listed : "");
    snprintf (row.owner_key, sizeof row.owner_key, "%s", key ? key : "");
    s_ask_owner (&row, security);
    bool answers = !streq (row.state, "orphaned");
    if (answers)
        snprintf (owner, owner_size, "%s", row.owner);
    jace_msg_destroy (&registry);
    jace_security_destroy (&security);
    return answers;
}
