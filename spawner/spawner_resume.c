/*  =========================================================================
    spawner_resume - what a resumed job is, as its daemons describe it
    =========================================================================
*/
#include "spawner_resume.h"
#include "spawner_nodes.h"
#include "spawner_secret.h"
#include "jace_security.h"

#include <fcntl.h>

//  How long the daemons have to answer ADOPT, and how often it is sent
//  again to those that have not: a daemon busy or slow (a sanitizer build
//  beside other work) that missed the window had its live task replaced,
//  which a task of total exchanges cannot survive
#define ADOPT_WAIT_MSEC 8000
#define ADOPT_AGAIN_MSEC 1000

//  An answer to ADOPT is the daemon's ASSIGN: it holds the job key only if
//  it had it from the job's spawner.  One that does not is someone else's
//  word on our job, and would steer the resumed job: refused.  The daemon
//  seals it like every report of the job.
static bool
s_is_ours (jace_security_t *security, const jace_msg_t *answer,
           const jace_key_t *job_key)
{
    if (!spawner_secret_is_key (jace_msg_key (answer), job_key)) {
        jace_security_unauthorised (security, answer, "spawner resume",
                                    "its job key is not the job's");
        return false;
    }
    //  Sealed too, as everything a daemon of the job tells us.
    return spawner_secret_check (security, answer, job_key,
                                 "spawner resume");
}

//  True if two answers cut the rows alike: the same block starts, as many
//  as the first one's task count says.
static bool
s_same_cut (const jace_msg_t *one, const jace_msg_t *other)
{
    for (int64_t i = 0; i <= jace_msg_count (one); i++) {
        char key [64];
        snprintf (key, sizeof key, "block/first/%" PRId64, i);
        const char *mine = jace_msg_param (one, key);
        const char *theirs = jace_msg_param (other, key);
        if (!mine || !theirs || !streq (mine, theirs))
            return false;
    }
    return jace_msg_count (one) == jace_msg_count (other);
}

//  True if the task of the daemon that sent `answer` started: a
//  rebalance's new task has not until the spawner STARTs every task
//  together.  A daemon that does not say (an older version) is taken as
//  running.
static bool
s_started (const jace_msg_t *answer)
{
    const char *started = jace_msg_param (answer, "block/started");
    return !started || !streq (started, "0");
}

bool
spawner_resume_off_cut (const jace_msg_t *answer)
{
    assert (answer);
    const char *off_cut = jace_msg_param (answer, "block/off_cut");
    return off_cut && streq (off_cut, "1");
}

//  `answer` if it is on the cut the job resumes on, else the next one
//  that is, or NULL
static jace_msg_t *
s_skip_off_cut (zlist_t *answers, jace_msg_t *answer)
{
    while (answer && spawner_resume_off_cut (answer))
        answer = (jace_msg_t *) zlist_next (answers);
    return answer;
}

static jace_msg_t *
s_first_adopted (zlist_t *answers)
{
    return s_skip_off_cut (answers, (jace_msg_t *) zlist_first (answers));
}

static jace_msg_t *
s_next_adopted (zlist_t *answers)
{
    return s_skip_off_cut (answers, (jace_msg_t *) zlist_next (answers));
}

bool
spawner_resume_unstarted_cut (jace_msg_t *const *answers, size_t count,
                              bool *off_cut)
{
    assert (answers && off_cut);
    memset (off_cut, 0, count * sizeof (bool));
    const jace_msg_t *running = NULL;
    for (size_t i = 0; i < count && !running; i++)
        if (answers [i] && s_started (answers [i]))
            running = answers [i];
    if (!running)
        return false;
    size_t marked = 0;
    for (size_t i = 0; i < count; i++) {
        if (!answers [i] || s_same_cut (running, answers [i]))
            continue;
        if (s_started (answers [i])) {
            memset (off_cut, 0, count * sizeof (bool));
            return false;       //  Two cuts run: nothing to choose
        }
        off_cut [i] = true;
        marked++;
    }
    return marked > 0;
}

//  A daemon listed as working for the job that did not answer ADOPT holds
//  no task to adopt: most often its data was still streaming in when the
//  spawner died, and it would wait for the rest until its orphan timeout,
//  neither running a task nor free to replace one (the resumed job then
//  failed for want of daemons).  Tell it to stop: it is free again, and
//  its task is placed anew like any task whose daemon did not answer.
static void
s_release_silent (zsock_t **links, const bool *answered, size_t count,
                  const char *job_id, const jace_key_t *job_key)
{
    for (size_t i = 0; i < count; i++) {
        if (answered [i])
            continue;
        jace_msg_t *stop = jace_msg_new (JACE_MSG_STOP);
        jace_msg_set_sender (stop, "jace-spawner-resume");
        jace_msg_set_job (stop, job_id);
        jace_msg_set_reason (stop, "resumed: your task had not started, it "
                             "is placed again");
        //  The link closes right after: let the STOP out first
        zsock_set_linger (links [i], 1000);
        spawner_secret_send (&stop, job_key, links [i]);
    }
}

static void
s_send_adopt (zsock_t *link, const char *job_id, const jace_key_t *job_key)
{
    jace_msg_t *adopt = jace_msg_new (JACE_MSG_ADOPT);
    jace_msg_set_sender (adopt, "jace-spawner-resume");
    jace_msg_set_job (adopt, job_id);
    spawner_secret_send (&adopt, job_key, link);
}

//  The daemons whose rebalance's task never started, while the others
//  run the old cut (spawner_resume_unstarted_cut): their answers are
//  marked off the cut (spawner_resume_off_cut), and the server assigns
//  their tasks again on them, on the cut that runs.
static void
s_mark_off_cut (jace_msg_t **answer_of, size_t count, const char *job_id)
{
    bool *off_cut = (bool *) zmalloc ((count + 1) * sizeof (bool));
    if (spawner_resume_unstarted_cut (answer_of, count, off_cut))
        for (size_t i = 0; i < count; i++)
            if (off_cut [i]) {
                zsys_notice ("spawner: job %s: task %" PRId64 " (epoch %"
                             PRId64 ") holds a rebalance's new rows and never "
                             "started, while the others run the old cut: it "
                             "is assigned its old rows again", job_id,
                             jace_msg_task (answer_of [i]),
                             jace_msg_epoch (answer_of [i]));
                jace_msg_set_param (answer_of [i], "block/off_cut", "1");
            }
    free (off_cut);
}

//  Connect to every daemon working for the job and ask each what it runs;
//  their ids go into `working`.
//  Returns the ASSIGN answers (a list of jace_msg_t), possibly empty.
static zlist_t *
s_adopt_daemons (const char *job_id, const spawner_options_t *options,
                 jace_security_t *security, const jace_key_t *job_key,
                 zlist_t *working, char *reason, size_t reason_size)
{
    zlist_t *answers = zlist_new ();
    jace_msg_t *registry = spawner_nodes_query (options->supernode, security,
                                                ADOPT_WAIT_MSEC);
    if (!registry) {
        snprintf (reason, reason_size, "super-node %s does not answer",
                  options->supernode);
        return answers;
    }
    zpoller_t *poller = zpoller_new (NULL);
    size_t listed = jace_msg_node_count (registry);
    zsock_t **links = (zsock_t **) zmalloc ((listed + 1) * sizeof (void *));
    bool *answered = (bool *) zmalloc ((listed + 1) * sizeof (bool));
    jace_msg_t **answer_of = (jace_msg_t **) zmalloc ((listed + 1)
                                                      * sizeof (void *));
    size_t answers_in = 0;
    size_t wanted = 0;
    for (size_t i = 0; i < listed; i++) {
        const jace_node_t *node = jace_msg_node (registry, i);
        if (node->state != JACE_NODE_WORKING || !streq (node->job, job_id))
            continue;
        zlist_append (working, (void *) node->id);
        zsock_t *link = zsock_new (ZMQ_DEALER);
        jace_msg_prepare_socket (link, 0);
        if (jace_security_apply_client (security, link, node->pubkey)
        ||  zsock_connect (link, "%s", node->endpoint)) {
            zsock_destroy (&link);
            continue;
        }
        s_send_adopt (link, job_id, job_key);
        zpoller_add (poller, link);
        links [wanted++] = link;
    }
    int64_t deadline = zclock_mono () + ADOPT_WAIT_MSEC;
    int64_t again = zclock_mono () + ADOPT_AGAIN_MSEC;
    while (answers_in < wanted && zclock_mono () < deadline
           && !zsys_interrupted) {
        if (zclock_mono () >= again) {
            for (size_t i = 0; i < wanted; i++)
                if (!answered [i])
                    s_send_adopt (links [i], job_id, job_key);
            again += ADOPT_AGAIN_MSEC;
        }
        zsock_t *which = (zsock_t *) zpoller_wait (poller, 100);
        jace_msg_t *msg = which ? jace_msg_recv (which, NULL, 0, NULL, 0)
                                : NULL;
        size_t from = 0;
        while (from < wanted && links [from] != which)
            from++;
        if (msg && from < wanted && !answered [from]
        &&  jace_msg_type (msg) == JACE_MSG_ASSIGN
        &&  streq (jace_msg_job (msg), job_id)
        &&  s_is_ours (security, msg, job_key)) {
            answered [from] = true;
            answer_of [from] = msg;
            answers_in++;
        }
        else
            jace_msg_destroy (&msg);
    }
    s_release_silent (links, answered, wanted, job_id, job_key);
    s_mark_off_cut (answer_of, wanted, job_id);
    for (size_t i = 0; i < wanted; i++)
        if (answer_of [i])
            zlist_append (answers, answer_of [i]);
    if (wanted == 0)
        snprintf (reason, reason_size, "no daemon works for job %s (as %s "
                  "sees it)", job_id, options->supernode);
    else
    if (zlist_size (answers) == 0)
        //  Each was told to stop (s_release_silent): none held a task
        snprintf (reason, reason_size, "none of the %zu daemons working "
                  "for job %s answered ADOPT within %d s: none holds a "
                  "running task (their data was still coming when the "
                  "spawner died, or they are too busy to answer)", wanted,
                  job_id, ADOPT_WAIT_MSEC / 1000);
    zpoller_destroy (&poller);
    for (size_t i = 0; i < wanted; i++)
        zsock_destroy (&links [i]);
    free (links);
    free (answered);
    free (answer_of);
    jace_msg_destroy (&registry);
    return answers;
}

//  The rows of the answering daemon's task by its own cut, "FIRST-END"
static void
s_task_rows (const jace_msg_t *answer, char *text, size_t size)
{
    char key [64];
    int64_t task = jace_msg_task (answer);
    snprintf (key, sizeof key, "block/first/%" PRId64, task);
    const char *first = jace_msg_param (answer, key);
    snprintf (key, sizeof key, "block/first/%" PRId64, task + 1);
    const char *end = jace_msg_param (answer, key);
    snprintf (text, size, "%s-%s", first ? first : "?", end ? end : "?");
}

static spawner_job_t *
s_adopted_job (zlist_t *answers, const char *job_id, char *reason,
               size_t reason_size)
{
    jace_msg_t *first = s_first_adopted (answers);
    char what [128];
    snprintf (what, sizeof what, "job %s (as its daemons describe it)",
              job_id);
    return spawner_job_adopt (jace_msg_params (first), what, reason,
                              reason_size);
}

zlist_t *
spawner_resume_gather (const char *job_id, const spawner_options_t *options,
                       const jace_key_t *job_key, zlist_t **listed_p,
                       char *reason, size_t reason_size)
{
    assert (job_id && options && options->supernode && job_key && listed_p);
    *listed_p = zlist_new ();
    zlist_autofree (*listed_p);
    zlist_comparefn (*listed_p, (zlist_compare_fn *) strcmp);
    jace_security_t *security = jace_security_new (options->keys_dir,
        options->cert ? options->cert : "spawner", reason, reason_size);
    zlist_t *answers = security ? s_adopt_daemons (job_id, options, security,
                                                   job_key, *listed_p,
                                                   reason, reason_size)
                                : zlist_new ();
    jace_security_destroy (&security);
    return answers;
}

bool
spawner_resume_same_cut (zlist_t *answers, char *reason, size_t reason_size)
{
    assert (answers && reason);
    jace_msg_t *first = s_first_adopted (answers);
    for (jace_msg_t *answer = first; answer;
         answer = s_next_adopted (answers))
        if (!s_same_cut (first, answer)) {
            char one [64], other [64];
            s_task_rows (first, one, sizeof one);
            s_task_rows (answer, other, sizeof other);
            snprintf (reason, reason_size, "its daemons cut the rows two "
                      "ways, as a rebalance its spawner did not finish left "
                      "them: task %" PRId64 " (epoch %" PRId64 ") holds rows "
                      "%s, task %" PRId64 " (epoch %" PRId64 ") rows %s, "
                      "each by its own cut", jace_msg_task (first),
                      jace_msg_epoch (first), one, jace_msg_task (answer),
                      jace_msg_epoch (answer), other);
            return false;
        }
    return true;
}

spawner_job_t *
spawner_resume_job (zlist_t *answers, const char *job_id, char *reason,
                    size_t reason_size)
{
    if (!s_first_adopted (answers)
    ||  !spawner_resume_same_cut (answers, reason, reason_size))
        return NULL;
    return s_adopted_job (answers, job_id, reason, reason_size);
}

//  --------------------------------------------------------------------------
//  The drain note

int
spawner_resume_note_drain (const char *dir, const char *job,
                           const char *cluster, char *reason,
                           size_t reason_size)
{
    assert (dir && job);
    char *path = zsys_sprintf ("%s/%s.drain", dir, job);
    if (!cluster) {
        int rc = unlink (path) == 0 || errno == ENOENT ? 0 : -1;
        if (rc)
            snprintf (reason, reason_size, "cannot remove %s: %s", path,
                      strerror (errno));
        free (path);
        return rc;
    }
    //  Written whole, then renamed: a spawner killed meanwhile leaves the
    //  old note or the new one, never half of one.
    char *partial = zsys_sprintf ("%s.partial", path);
    unlink (partial);
    int fd = open (partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    char *text = zsys_sprintf ("%s\n", cluster);
    bool written = fd >= 0
                && write (fd, text, strlen (text)) == (ssize_t) strlen (text);
    int error = errno;
    if (fd >= 0)
        close (fd);
    int rc = written && rename (partial, path) == 0 ? 0 : -1;
    if (rc) {
        snprintf (reason, reason_size, "cannot write %s: %s", path,
                  strerror (written ? errno : error));
        unlink (partial);
    }
    free (text);
    free (partial);
    free (path);
    return rc;
}

int
spawner_resume_drain (const char *dir, const char *job, char *cluster,
                      char *reason, size_t reason_size)
{
    assert (dir && job && cluster);
    *cluster = 0;
    char *path = zsys_sprintf ("%s/%s.drain", dir, job);
    int fd = open (path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0) {
        int rc = errno == ENOENT ? 0 : -1;
        if (rc)
            snprintf (reason, reason_size, "cannot read %s: %s", path,
                      strerror (errno));
        free (path);
        return rc;
    }
    char text [JACE_ID_MAX + 2];
    ssize_t size = read (fd, text, sizeof text - 1);
    close (fd);
    text [size > 0 ? size : 0] = 0;
    char *end = strchr (text, '\n');
    bool whole = end && end [1] == 0;
    if (whole)
        *end = 0;
    int rc = whole && *text && strlen (text) < JACE_ID_MAX
             && jace_name_plain (text) ? 1 : -1;
    if (rc == 1)
        snprintf (cluster, JACE_ID_MAX, "%s", text);
    else
        snprintf (reason, reason_size, "%s names no cluster (one plain "
                  "name and a newline expected)", path);
    free (path);
    return rc;
}

void
spawner_resume_forget (zlist_t **answers_p)
{
    assert (answers_p);
    zlist_t *answers = *answers_p;
    while (answers && zlist_size (answers)) {
        jace_msg_t *answer = (jace_msg_t *) zlist_pop (answers);
        jace_msg_destroy (&answer);
    }
    zlist_destroy (answers_p);
}
