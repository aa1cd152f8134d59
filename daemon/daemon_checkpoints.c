/*  =========================================================================
    daemon_checkpoints - the copies of neighbours' state a daemon keeps
    =========================================================================
*/
#include "daemon_checkpoints.h"
#include "jace_checkpoint.h"

struct _daemon_checkpoints_t {
    zhashx_t *copies;           //  "job/task" -> jace_msg_t (CKPT), owned
    size_t memory_max;          //  Limit on the bytes of state held
    size_t bytes;               //  Bytes of state held
};

static void
s_destroy_copy (void **item)
{
    jace_msg_destroy ((jace_msg_t **) item);
}

static size_t
s_size (const jace_msg_t *copy)
{
    //  Every payload: besides the state, the neighbours' values and the
    //  pieces of the task's last exchange (up to one round of its log)
    size_t size = 0;
    for (size_t i = 0; i < jace_msg_payload_count (copy); i++)
        size += jace_msg_payload_length (copy, i)
              * (jace_msg_payload_kind (copy, i) == JACE_PAYLOAD_BYTES
                 ? 1 : 8);
    return size;
}

static void
s_key (char *key, size_t key_size, const char *job, int64_t task)
{
    snprintf (key, key_size, "%s/%" PRId64, job, task);
}

daemon_checkpoints_t *
daemon_checkpoints_new (size_t memory_max)
{
    daemon_checkpoints_t *self = (daemon_checkpoints_t *) zmalloc (sizeof *self);
    self->copies = zhashx_new ();
    zhashx_set_destructor (self->copies, s_destroy_copy);
    self->memory_max = memory_max;
    return self;
}

void
daemon_checkpoints_destroy (daemon_checkpoints_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        daemon_checkpoints_t *self = *self_p;
        zhashx_destroy (&self->copies);
        free (self);
        *self_p = NULL;
    }
}

int
daemon_checkpoints_store (daemon_checkpoints_t *self, jace_msg_t **msg_p,
                          const jace_key_t *job_key, char *reason,
                          size_t reason_size)
{
    assert (self && msg_p && *msg_p && job_key);
    jace_msg_t *copy = *msg_p;
    *msg_p = NULL;
    if (jace_checkpoint_check (copy, job_key, reason, reason_size)) {
        jace_msg_destroy (&copy);
        return -1;
    }
    char key [JACE_ID_MAX + 32];
    s_key (key, sizeof key, jace_msg_job (copy), jace_msg_task (copy));
    jace_msg_t *held = (jace_msg_t *) zhashx_lookup (self->copies, key);
    if (!jace_checkpoint_newer (copy, held)) {
        jace_msg_destroy (&copy);
        return 0;
    }
    size_t after = self->bytes - (held ? s_size (held) : 0) + s_size (copy);
    if (after > self->memory_max) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64
                  " (%zu bytes) refused: the store would hold %zu bytes, "
                  "limit %zu", jace_msg_task (copy), s_size (copy), after,
                  self->memory_max);
        jace_msg_destroy (&copy);
        return -1;
    }
    self->bytes = after;
    zhashx_update (self->copies, key, copy);
    return 1;
}

const jace_msg_t *
daemon_checkpoints_find (daemon_checkpoints_t *self, const char *job,
                         int64_t task)
{
    assert (self && job);
    char key [JACE_ID_MAX + 32];
    s_key (key, sizeof key, job, task);
    return (const jace_msg_t *) zhashx_lookup (self->copies, key);
}

size_t
daemon_checkpoints_drop_job (daemon_checkpoints_t *self, const char *job)
{
    assert (self && job);
    zlist_t *doomed = zlist_new ();
    for (jace_msg_t *copy = (jace_msg_t *) zhashx_first (self->copies); copy;
         copy = (jace_msg_t *) zhashx_next (self->copies))
        if (streq (jace_msg_job (copy), job))
            zlist_append (doomed, (void *) zhashx_cursor (self->copies));
    size_t dropped = 0;
    for (const char *key = (const char *) zlist_first (doomed); key;
         key = (const char *) zlist_next (doomed)) {
        self->bytes -= s_size ((jace_msg_t *) zhashx_lookup (self->copies,
                                                             key));
        zhashx_delete (self->copies, key);
        dropped++;
    }
    zlist_destroy (&doomed);
    return dropped;
}

size_t
daemon_checkpoints_bytes (daemon_checkpoints_t *self)
{
    assert (self);
    return self->bytes;
}
