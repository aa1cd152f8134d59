/*  =========================================================================
    spawner_kill - `jace-spawner kill`: crash daemons of a running job
    =========================================================================
*/
#include "spawner_kill.h"
#include "spawner_faults.h"
#include "spawner_jobs.h"
#include "spawner_nodes.h"
#include "spawner_secret.h"
#include "spawner_watch.h"
#include "grid_run.h"
#include "grid_proc.h"
#include "jace_msg.h"
#include "jace_security.h"

#include <errno.h>
#include <signal.h>

#define QUERY_MSEC 5000
//  How long a CRASH may take to leave before we give up on it.
#define CRASH_LINGER_MSEC 1000
//  After a super-node's CRASH: the time it takes to act on it, then the
//  longest a live one takes to answer a listing on a loaded machine
#define CRASH_SETTLE_MSEC 300
#define ALIVE_QUERY_MSEC 2000
//  Longest wait for a daemon's link to drop after its CRASH: one that
//  obeys exits as it reads it
#define CRASH_CONFIRM_MSEC 3000

typedef struct {
    const spawner_kill_options_t *options;
    jace_security_t *security;
    grid_run_t *run;            //  Pid records, or NULL
    jace_key_t job_key;         //  Seals a daemon's CRASH (from the secret)
    uint64_t random;            //  splitmix64 state
} killer_t;

//  SIGKILL the process recorded under `name` (daemons) or `endpoint`
//  (super-nodes).  Returns 0, 1 if there is no such record, 2 if the
//  process is gone already, -1 if the kill failed.
static int
s_kill_recorded (killer_t *self, const char *role, const char *name,
                 const char *endpoint)
{
    if (!self->run)
        return 1;
    for (size_t i = 0; i < grid_run_size (self->run); i++) {
        grid_proc_record_t *record = grid_run_record (self->run, i);
        if (!streq (record->role, role)
        ||  !(name ? streq (record->name, name)
                   : streq (record->endpoint, endpoint)))
            continue;
        if (grid_proc_signal (record->pid, SIGKILL) == 0)
            return 0;
        return errno == ESRCH ? 2 : -1;
    }
    return 1;
}

//  True once the process behind `watch`'s link is gone: its link dropped
//  and its port refused us (spawner_watch), within CRASH_CONFIRM_MSEC
static bool
s_link_gone (spawner_watch_t *watch)
{
    int64_t deadline = zclock_mono () + CRASH_CONFIRM_MSEC;
    zpoller_t *poller = zpoller_new (spawner_watch_socket (watch), NULL);
    bool gone = false;
    while (!gone && zclock_mono () < deadline && !zsys_interrupted)
        if (zpoller_wait (poller, (int) (deadline - zclock_mono ())))
            gone = spawner_watch_recv (watch, zclock_mono ());
    zpoller_destroy (&poller);
    return gone;
}

//  Send CRASH to a control endpoint; the peer exits as it reads it.  For
//  a daemon (`job` not ""), returns 3 if its process is still there after
//  CRASH_CONFIRM_MSEC: it refused the CRASH (a secret that is not the
//  job's, its log says), where the command said "crashed" and exited 0.
static int
s_send_crash (killer_t *self, const char *endpoint, const char *pubkey,
              const char *job)
{
    zsock_t *dealer = zsock_new (ZMQ_DEALER);
    jace_msg_prepare_socket (dealer, JACE_MSG_HEADER_MAX);
    spawner_watch_t *watch = *job ? spawner_watch_new (dealer) : NULL;
    int rc = -1;
    if (jace_security_apply_client (self->security, dealer, pubkey) == 0
    &&  zsock_connect (dealer, "%s", endpoint) == 0) {
        jace_msg_t *crash = jace_msg_new (JACE_MSG_CRASH);
        jace_msg_set_sender (crash, "jace-spawner-kill");
        jace_msg_set_job (crash, job);
        //  A daemon obeys a CRASH of its job only sealed with the job
        //  key; a super-node's (job "") needs no seal, only --allow-crash.
        if (*job)
            jace_msg_seal (crash, self->job_key.bytes);
        zsock_set_linger (dealer, CRASH_LINGER_MSEC);
        //  A fresh connection may not be up yet: wait until it can send.
        int64_t deadline = zclock_mono () + CRASH_LINGER_MSEC;
        while (!(zsock_events (dealer) & ZMQ_POLLOUT)
               && zclock_mono () < deadline)
            zclock_sleep (5);
        rc = jace_msg_send (&crash, dealer);
        if (rc == 0 && watch && !s_link_gone (watch))
            rc = 3;
    }
    spawner_watch_destroy (&watch);
    zsock_destroy (&dealer);
    return rc;
}

static int
s_crash_daemon (killer_t *self, const jace_node_t *node)
{
    int rc = s_kill_recorded (self, "daemon", node->id, NULL);
    const char *how = "SIGKILL";
    if (rc == 1) {
        rc = s_send_crash (self, node->endpoint, node->pubkey, node->job);
        how = "CRASH message";
    }
    if (rc == 2) {
        //  Crashed by an earlier round: the super-node has not seen it yet
        fprintf (stderr, "jace-spawner: daemon %s (task %" PRId64 ") is "
                 "down already\n", node->id, node->task);
        return -1;
    }
    if (rc == 3) {
        fprintf (stderr, "jace-spawner: daemon %s (task %" PRId64 ") "
                 "still runs %d s after the CRASH: it refused it (is the "
                 "secret here the one job %s was submitted with? the "
                 "daemon's log says why)\n", node->id, node->task,
                 CRASH_CONFIRM_MSEC / 1000, node->job);
        return -1;
    }
    if (rc) {
        fprintf (stderr, "jace-spawner: cannot crash daemon %s (task %"
                 PRId64 ")\n", node->id, node->task);
        return -1;
    }
    printf ("crashed daemon %s (task %" PRId64 " of %s, %s)\n", node->id,
            node->task, node->job, how);
    fflush (stdout);
    return 0;
}

//  The daemons working for the job now.
static size_t
s_job_daemons (killer_t *self, jace_node_t **nodes_p)
{
    jace_msg_t *reply = spawner_nodes_query (self->options->supernode,
                                             self->security, QUERY_MSEC);
    *nodes_p = NULL;
    if (!reply)
        return 0;
    size_t count = 0;
    jace_node_t *nodes = (jace_node_t *) zmalloc (
        (jace_msg_node_count (reply) + 1) * sizeof (jace_node_t));
    for (size_t i = 0; i < jace_msg_node_count (reply); i++) {
        const jace_node_t *node = jace_msg_node (reply, i);
        if (node->state == JACE_NODE_WORKING
        &&  streq (node->job, self->options->job))
            nodes [count++] = *node;
    }
    jace_msg_destroy (&reply);
    *nodes_p = nodes;
    return count;
}

//  One round: crash the chosen daemons.  Returns the number crashed, or
//  -1 when the job has no daemon (any more) or the task is not found.
//  `first`: an empty job is an error then, and the normal end later.
static int
s_round (killer_t *self, bool first)
{
    const spawner_kill_options_t *options = self->options;
    jace_node_t *nodes = NULL;
    size_t count = s_job_daemons (self, &nodes);
    int crashed = 0;
    if (count == 0) {
        if (first)
            fprintf (stderr, "jace-spawner: no daemon works for job %s (as "
                     "%s sees it)\n", options->job, options->supernode);
        else
            printf ("job %s has no daemon working any more: done\n",
                    options->job);
        crashed = -1;
    }
    else
    if (options->task >= 0) {
        crashed = -1;
        bool found = false;
        for (size_t i = 0; i < count; i++)
            if (nodes [i].task == options->task) {
                found = true;
                crashed = s_crash_daemon (self, &nodes [i]) ? -1 : 1;
            }
        if (!found)
            fprintf (stderr, "jace-spawner: no daemon runs task %" PRId64
                     " of job %s (as %s lists them now: %zu at work; a task "
                     "being placed, or still taking its data, is not listed "
                     "until it runs: try again then)\n", options->task,
                     options->job, options->supernode, count);
    }
    else {
        //  A random order of all of them: one that cannot be crashed
        //  gives its turn to the next.
        int64_t *order = (int64_t *) zmalloc (count * sizeof (int64_t));
        for (size_t i = 0; i < count; i++)
            order [i] = (int64_t) i;
        spawner_faults_shuffle (&self->random, order, count, count);
        for (size_t i = 0; i < count && crashed < options->random; i++)
            crashed += s_crash_daemon (self, &nodes [order [i]]) == 0;
        free (order);
        if (crashed < options->random)
            printf ("crashed %d of the %" PRId64 " daemons asked: job %s has %zu "
                    "at work\n", crashed, options->random, options->job,
                    count);
    }
    free (nodes);
    return crashed;
}

//  True if the super-node still answers a listing, once a crash it obeys
//  would have taken effect
static bool
s_supernode_answers (killer_t *self, const char *endpoint)
{
    zclock_sleep (CRASH_SETTLE_MSEC);
    const char *key = jace_security_supernode_key (self->security, endpoint,
                                                   NULL, 0);
    jace_msg_t *status = jace_msg_new (JACE_MSG_STATUS);
    jace_msg_set_sender (status, "jace-spawner-kill");
    //  Asked quietly: silence is what a crash should bring
    jace_msg_t *reply = spawner_nodes_ask (endpoint, key, self->security,
                                           &status, JACE_MSG_STATUS_REPLY,
                                           ALIVE_QUERY_MSEC);
    bool answers = reply != NULL;
    jace_msg_destroy (&reply);
    return answers;
}

static int
s_crash_supernode (killer_t *self)
{
    const char *endpoint = self->options->supernode;
    int rc = s_kill_recorded (self, "supernode", NULL, endpoint);
    const char *how = "SIGKILL";
    if (rc == 1) {
        rc = s_send_crash (self, endpoint,
                           jace_security_supernode_key (self->security,
                                                        endpoint, NULL, 0),
                           "");
        how = "CRASH message";
        //  A super-node started without --allow-crash logs the CRASH and
        //  goes on: one that still answers refused it
        if (rc == 0 && s_supernode_answers (self, endpoint)) {
            fprintf (stderr, "jace-spawner: super-node %s refused the CRASH "
                     "and still runs: it obeys only when started with "
                     "--allow-crash\n", endpoint);
            return 1;
        }
    }
    if (rc) {
        fprintf (stderr, "jace-spawner: cannot crash super-node %s\n",
                 endpoint);
        return 1;
    }
    printf ("crashed super-node %s (%s)\n", endpoint, how);
    return 0;
}

static int
s_killer_init (killer_t *self, const spawner_kill_options_t *options)
{
    char reason [2048] = "";
    self->options = options;
    self->random = options->seed ? options->seed
                 : (uint64_t) zclock_time () ^ (uint64_t) getpid ();
    //  Only the job's own user may crash its daemons: read the job's
    //  secret before touching anything.  SIGKILL by pid record needs it
    //  too, so a second user cannot use a shared run folder's records.
    if (!options->crash_supernode
    &&  spawner_jobs_open_secret (options->job, options->supernode,
                                  options->keys_dir, options->cert,
                                  options->secrets_dir, &self->job_key))
        return -1;
    self->security = jace_security_new (options->keys_dir,
        options->cert ? options->cert : "spawner", reason, sizeof reason);
    if (!self->security) {
        fprintf (stderr, "jace-spawner: %s\n", reason);
        return -1;
    }
    if (options->run_dir) {
        self->run = grid_run_new (options->run_dir);
        if (grid_run_load (self->run, reason, sizeof reason)) {
            fprintf (stderr, "jace-spawner: %s\n", reason);
            return -1;
        }
    }
    return 0;
}

int
spawner_kill (const spawner_kill_options_t *options)
{
    assert (options && options->supernode);
    killer_t self = { 0 };
    int rc = 1;
    if (s_killer_init (&self, options) == 0) {
        if (options->crash_supernode)
            rc = s_crash_supernode (&self);
        else {
            int64_t rounds = 0;
            int crashed = s_round (&self, true);
            rc = crashed < 0 ? 1 : 0;
            //  Repeat until the job is gone (its daemons went back to
            //  free) or the rounds are done.
            while (crashed >= 0 && options->every > 0 && !zsys_interrupted
                   && (options->rounds == 0 || ++rounds < options->rounds)) {
                zclock_sleep ((int) (options->every * 1000));
                crashed = s_round (&self, false);
            }
        }
    }
    grid_run_destroy (&self.run);
    jace_security_destroy (&self.security);
    jace_key_wipe (&self.job_key);
    return rc;
}
