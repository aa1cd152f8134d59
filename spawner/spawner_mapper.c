/*  =========================================================================
    spawner_mapper - a job's placement on the live grid, kept up to date

    The live model is rebuilt from the newest listing for every decision
    (a plan, a replacement): it costs one pass over the daemons, far below
    the time a GRANT takes, and a model kept across listings would have to
    be patched with every state change the listing already says.
    =========================================================================
*/
#include "spawner_mapper.h"

struct _spawner_mapper_t {
    spawner_job_t *job;         //  Borrowed
    size_t tasks;               //  Tasks in the job
    size_t spares_wanted;       //  job/spares
    tig_t *tig;                 //  The job's task graph
    jace_msg_t *listing;        //  Newest STATUS_REPLY
    int64_t listing_time;       //  When it was read (msec)
    spawner_live_t *live;       //  The model of the current plan
    spawner_plan_t plan;        //  The current plan
    bool planned;               //  plan is valid
    jace_node_t *chosen;        //  Per task: the daemon the plan chose
    double graph_msec;          //  Time the task graph took to build
    zlist_t *excluded;          //  Clusters drained: no task goes there
    spawner_live_t *listed;     //  The newest listing's model, or NULL
    int64_t listed_time;        //  The listing_time it was built from
};

spawner_mapper_t *
spawner_mapper_new (spawner_job_t *job, size_t tasks, char *reason,
                    size_t reason_size)
{
    assert (job && tasks > 0);
    int64_t started = zclock_usecs ();
    tig_t *tig = spawner_plan_graph (job, tasks, reason, reason_size);
    if (!tig)
        return NULL;
    spawner_mapper_t *self = (spawner_mapper_t *) zmalloc (sizeof *self);
    self->job = job;
    self->tasks = tasks;
    self->spares_wanted = (size_t) spawner_job_spares (job);
    self->tig = tig;
    self->graph_msec = (zclock_usecs () - started) / 1000.0;
    self->chosen = (jace_node_t *) zmalloc (tasks * sizeof (jace_node_t));
    self->excluded = zlist_new ();
    zlist_autofree (self->excluded);
    return self;
}

void
spawner_mapper_destroy (spawner_mapper_t **self_p)
{
    assert (self_p);
    spawner_mapper_t *self = *self_p;
    if (!self)
        return;
    tig_destroy (&self->tig);
    jace_msg_destroy (&self->listing);
    spawner_live_destroy (&self->live);
    spawner_live_destroy (&self->listed);
    spawner_plan_clear (&self->plan);
    free (self->chosen);
    zlist_destroy (&self->excluded);
    free (self);
    *self_p = NULL;
}

const char *
spawner_mapper_mapping (spawner_mapper_t *self)
{
    assert (self);
    return spawner_job_mapping (self->job);
}

void
spawner_mapper_set_listing (spawner_mapper_t *self, jace_msg_t **listing_p,
                            int64_t now)
{
    assert (self && listing_p && *listing_p);
    jace_msg_destroy (&self->listing);
    self->listing = *listing_p;
    *listing_p = NULL;
    self->listing_time = now;
}

double
spawner_mapper_work (spawner_mapper_t *self)
{
    assert (self);
    double work = 0;
    for (size_t task = 0; task < tig_count (self->tig); task++)
        work += tig_cost (self->tig, task);
    return work;
}

double
spawner_mapper_graph_msec (spawner_mapper_t *self)
{
    assert (self);
    return self->graph_msec;
}

size_t
spawner_mapper_busy_elsewhere (spawner_mapper_t *self, const char *job_id)
{
    assert (self && job_id);
    size_t busy = 0;
    for (size_t i = 0; self->listing && i < jace_msg_node_count (self->listing);
         i++) {
        const jace_node_t *node = jace_msg_node (self->listing, i);
        //  Job "": free, but without the job's application
        //  (spawner_nodes_for_app); no job's end frees it for us
        busy += node->state != JACE_NODE_FREE && *node->job
             && !streq (node->job, job_id);
    }
    return busy;
}

int64_t
spawner_mapper_listing_time (spawner_mapper_t *self)
{
    assert (self);
    return self->listing_time;
}

//  The lease's spares, as records for the model.
static jace_node_t *
s_spares (spawner_lease_t *lease, size_t *count)
{
    *count = spawner_lease_spare_count (lease);
    jace_node_t *spares = (jace_node_t *) zmalloc ((*count + 1)
                                                   * sizeof (jace_node_t));
    for (size_t i = 0; i < *count; i++)
        spares [i] = *spawner_lease_spare (lease, i);
    return spares;
}

//  Mark the nodes of the daemons named in ids (may be NULL) `state`.
static void
s_mark_ids (spawner_live_t *live, zlist_t *ids, grid_state_t state)
{
    if (!ids)
        return;
    for (char *id = (char *) zlist_first (ids); id;
         id = (char *) zlist_next (ids)) {
        int64_t node = spawner_live_find (live, id);
        if (node >= 0)
            grid_set_state (spawner_live_grid (live), (size_t) node, state);
    }
}

//  True if the plan names daemon id (a task's or a spare).
static bool
s_plan_names (spawner_mapper_t *self, const char *id)
{
    int64_t node = spawner_live_find (self->live, id);
    if (node < 0)
        return false;
    for (size_t i = 0; i < self->plan.tasks; i++)
        if (self->plan.placement [i] == (size_t) node)
            return true;
    for (size_t i = 0; i < self->plan.spare_count; i++)
        if (self->plan.spares [i] == (size_t) node)
            return true;
    return false;
}

//  Hold exactly what the plan names: give back the other spares, ask for
//  the rest by id.
static void
s_lease_plan (spawner_mapper_t *self, spawner_lease_t *lease)
{
    for (size_t i = spawner_lease_spare_count (lease); i-- > 0;)
        if (!s_plan_names (self, spawner_lease_spare (lease, i)->id))
            spawner_lease_release_spare (lease, i);
    size_t count = self->plan.tasks + self->plan.spare_count;
    jace_node_t *wanted = (jace_node_t *) zmalloc (count
                                                   * sizeof (jace_node_t));
    for (size_t i = 0; i < self->plan.tasks; i++)
        wanted [i] = self->chosen [i];
    for (size_t i = 0; i < self->plan.spare_count; i++)
        wanted [self->plan.tasks + i] = *spawner_live_node (self->live,
                                                  self->plan.spares [i]);
    spawner_lease_forget_ids (lease);
    spawner_lease_want_ids (lease, wanted, count);
    free (wanted);
}

int
spawner_mapper_plan (spawner_mapper_t *self, spawner_lease_t *lease,
                     zlist_t *refused, char *reason, size_t reason_size)
{
    assert (self && lease);
    if (!self->listing) {
        snprintf (reason, reason_size, "no listing of the grid yet");
        return -1;
    }
    size_t spare_count;
    jace_node_t *spares = s_spares (lease, &spare_count);
    spawner_live_t *live = spawner_live_new (self->listing, spares,
                                             spare_count, reason,
                                             reason_size);
    if (live) {
        //  Ours to use again: the daemons we hold and no task took.
        for (size_t i = 0; i < spare_count; i++) {
            int64_t node = spawner_live_find (live, spares [i].id);
            if (node >= 0)
                grid_set_state (spawner_live_grid (live), (size_t) node,
                                GRID_FREE);
        }
        s_mark_ids (live, refused, GRID_USED);
    }
    free (spares);
    spawner_plan_t plan = { .tasks = 0 };
    if (!live
    ||  spawner_plan_map (spawner_job_mapping (self->job), live, self->tig,
                          self->spares_wanted, &plan, reason, reason_size)) {
        spawner_live_destroy (&live);
        return -1;
    }
    spawner_live_destroy (&self->live);
    spawner_plan_clear (&self->plan);
    self->live = live;
    self->plan = plan;
    self->planned = true;
    for (size_t i = 0; i < self->tasks; i++)
        self->chosen [i] = *spawner_live_node (live, plan.placement [i]);
    s_lease_plan (self, lease);
    return 0;
}

const spawner_plan_t *
spawner_mapper_current (spawner_mapper_t *self)
{
    assert (self);
    return self->planned ? &self->plan : NULL;
}

spawner_live_t *
spawner_mapper_live (spawner_mapper_t *self)
{
    assert (self);
    return self->planned ? self->live : NULL;
}

tig_t *
spawner_mapper_graph (spawner_mapper_t *self)
{
    assert (self);
    return self->tig;
}

platform_t *
spawner_mapper_platform (spawner_mapper_t *self)
{
    assert (self);
    if (self->listing && (!self->listed
                          || self->listed_time != self->listing_time)) {
        char reason [256];
        spawner_live_destroy (&self->listed);
        self->listed = spawner_live_new (self->listing, NULL, 0, reason,
                                         sizeof reason);
        self->listed_time = self->listing_time;
    }
    spawner_live_t *live = self->listed ? self->listed
                         : self->planned ? self->live : NULL;
    return live ? spawner_live_platform (live) : NULL;
}

const jace_node_t *
spawner_mapper_task_node (spawner_mapper_t *self, size_t rank)
{
    assert (self && self->planned && rank < self->tasks);
    return &self->chosen [rank];
}

void
spawner_mapper_exclude_cluster (spawner_mapper_t *self, const char *cluster)
{
    assert (self && cluster);
    if (!spawner_mapper_excluded (self, cluster))
        zlist_append (self->excluded, (void *) cluster);
}

void
spawner_mapper_readmit_cluster (spawner_mapper_t *self, const char *cluster)
{
    assert (self && cluster);
    for (char *name = (char *) zlist_first (self->excluded); name;
         name = (char *) zlist_next (self->excluded))
        if (streq (name, cluster)) {
            zlist_remove (self->excluded, name);
            return;
        }
}

void
spawner_mapper_readmit_all (spawner_mapper_t *self)
{
    assert (self);
    zlist_purge (self->excluded);
}

void
spawner_mapper_excluded_names (spawner_mapper_t *self, char *names,
                               size_t size)
{
    assert (self && names && size);
    *names = 0;
    for (const char *name = (const char *) zlist_first (self->excluded);
         name; name = (const char *) zlist_next (self->excluded))
        snprintf (names + strlen (names), size - strlen (names), "%s%s",
                  *names ? ", " : "", name);
}

bool
spawner_mapper_excluded (spawner_mapper_t *self, const char *cluster)
{
    assert (self && cluster);
    for (const char *name = (const char *) zlist_first (self->excluded);
         name; name = (const char *) zlist_next (self->excluded))
        if (streq (name, cluster))
            return true;
    return false;
}

//  True if ids (may be NULL) holds id.
static bool
s_names (zlist_t *ids, const char *id)
{
    for (char *item = ids ? (char *) zlist_first (ids) : NULL; item;
         item = (char *) zlist_next (ids))
        if (streq (item, id))
            return true;
    return false;
}

//  True if the listing names daemon id.
static bool
s_listed (jace_msg_t *listing, const char *id)
{
    for (size_t i = 0; i < jace_msg_node_count (listing); i++)
        if (streq (jace_msg_node (listing, i)->id, id))
            return true;
    return false;
}

int
spawner_mapper_replace (spawner_mapper_t *self, spawner_lease_t *lease,
                        const spawner_task_t *tasks, size_t task_count,
                        size_t rank, zlist_t *dead, zlist_t *refused,
                        bool fresh, jace_node_t *chosen, char *why,
                        size_t why_size)
{
    assert (self && lease && tasks && rank < task_count);
    if (!self->listing) {
        snprintf (why, why_size, "no listing of the grid yet");
        return -1;
    }
    //  Every task's daemon and every spare is in the model, listed or not.
    size_t spare_count;
    jace_node_t *spares = s_spares (lease, &spare_count);
    jace_node_t *extra = (jace_node_t *) zmalloc ((task_count + spare_count)
                                                  * sizeof (jace_node_t));
    size_t extra_count = 0;
    for (size_t i = 0; i < task_count; i++)
        if (*tasks [i].daemon.id)
            extra [extra_count++] = tasks [i].daemon;
    memcpy (extra + extra_count, spares, spare_count * sizeof (jace_node_t));
    extra_count += spare_count;
    spawner_live_t *live = spawner_live_new (self->listing, extra,
                                             extra_count, why, why_size);
    free (extra);
    int rc = -1;
    size_t *placement = (size_t *) zmalloc (task_count * sizeof (size_t));
    if (!live)
        goto out;
    grid_t *grid = spawner_live_grid (live);
    //  A spare a fresh listing no longer names has left the grid: its
    //  daemon died after the grant (the super-nodes forget a daemon
    //  silent past their timeout).  Handed out, it cost the task another
    //  heartbeat timeout and a second replacement.
    for (size_t i = 0; i < spare_count; i++) {
        int64_t node = spawner_live_find (live, spares [i].id);
        if (node >= 0)
            grid_set_state (grid, (size_t) node,
                            fresh && !s_listed (self->listing, spares [i].id)
                            ? GRID_DEAD : GRID_RESERVED);
    }
    s_mark_ids (live, refused, GRID_USED);
    //  A waiting task whose own daemon is alive and free again goes back
    //  to it: a daemon a resume did not adopt (its data was still coming)
    //  was stopped, not lost.  The mapping would take it for dead, and
    //  the task left its cluster while its daemon sat free there.
    int64_t own = spawner_live_find (live, tasks [rank].daemon.id);
    if (fresh && own >= 0 && tasks [rank].phase == SPAWNER_TASK_WAITING
    &&  grid_node_state (grid, (size_t) own) == GRID_FREE
    &&  !s_names (dead, tasks [rank].daemon.id)
    &&  !spawner_mapper_excluded (self, tasks [rank].daemon.cluster)) {
        *chosen = *spawner_live_node (live, (size_t) own);
        snprintf (why, why_size, "its own daemon, alive and free again");
        rc = 0;
        goto out;
    }
    for (size_t i = 0; i < task_count; i++) {
        int64_t node = *tasks [i].daemon.id
                     ? spawner_live_find (live, tasks [i].daemon.id) : -1;
        if (node < 0) {
            snprintf (why, why_size, "task %zu has no daemon in the model",
                      i);
            goto out;
        }
        placement [i] = (size_t) node;
        //  The old daemon of another task waiting for one runs nothing of
        //  ours: dead, `dead` marks it below; stopped and free (a daemon
        //  a resume did not adopt, a fenced one that said it dropped its
        //  task), it is as free as the listing says.  Used, each such
        //  daemon was kept from every other task, and the first of them
        //  placed left its cluster with the others free there.
        if (i == rank || tasks [i].phase != SPAWNER_TASK_WAITING)
            grid_set_state (grid, (size_t) node, GRID_USED);
    }
    s_mark_ids (live, dead, GRID_DEAD);
    grid_set_state (grid, placement [rank], GRID_DEAD);
    //  No super-node answers: a free daemon of the last listing would be
    //  asked of one, and the task would wait for a grant that never
    //  comes while a spare we hold is alive.
    size_t unreachable = 0;
    for (size_t node = 0; !fresh && node < spawner_live_count (live); node++)
        if (grid_node_state (grid, node) == GRID_FREE) {
            grid_set_state (grid, node, GRID_DEAD);
            unreachable++;
        }
    size_t kept_off = 0;        //  Free or spare daemons of drained clusters
    for (size_t node = 0; node < spawner_live_count (live); node++) {
        const char *cluster = spawner_live_node (live, node)->cluster;
        if (spawner_mapper_excluded (self, cluster)) {
            grid_state_t state = grid_node_state (grid, node);
            kept_off += state == GRID_FREE || state == GRID_RESERVED;
            grid_set_state (grid, node, GRID_DEAD);
        }
    }
    bool drained = spawner_mapper_excluded (self, tasks [rank].daemon.cluster);
    if (spawner_plan_replace (spawner_job_mapping (self->job), live,
                              self->tig, placement, rank, drained, why,
                              why_size)) {
        char names [256];
        spawner_mapper_excluded_names (self, names, sizeof names);
        if (kept_off)
            snprintf (why + strlen (why), why_size - strlen (why), " (%zu "
                      "free daemons of drained %s kept off)", kept_off,
                      names);
        if (unreachable)
            snprintf (why + strlen (why), why_size - strlen (why), " (no "
                      "super-node answers: %zu free daemons of the last "
                      "listing out of reach, no spare held)", unreachable);
        goto out;
    }
    *chosen = *spawner_live_node (live, placement [rank]);
    if (unreachable)
        snprintf (why + strlen (why), why_size - strlen (why), " (a spare "
                  "the job holds: no super-node answers)");
    rc = 0;
out:
    free (placement);
    free (spares);
    spawner_live_destroy (&live);
    return rc;
}
