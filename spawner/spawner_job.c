/*  =========================================================================
    spawner_job - a job as the user describes it: the ZPL job file
    =========================================================================
*/
#include "spawner_job.h"
#include "spawner_faults.h"
#include "spawner_plan.h"
#include "spawner_scatter.h"
#include "app_plugin.h"
#include "app_table.h"
#include "jace_msg.h"

#include <errno.h>
#include <math.h>

struct _spawner_job_t {
    zconfig_t *root;            //  The job file with overrides applied
    zhash_t *params;            //  Flattened "section/key" -> value
    const jace_app_t *app;      //  Application to run
    void *problem;              //  The application's problem, loaded
    int64_t tasks;              //  job/tasks
    double tolerance;           //  job/tolerance
    int64_t max_iterations;     //  job/max_iterations, 0 = none
    double max_seconds;         //  job/max_seconds
    double reserve_timeout;     //  job/reserve_timeout, seconds
    int64_t heartbeat_timeout;  //  job/heartbeat_timeout, msec
    int64_t spares;             //  job/spares
    double sample_seconds;      //  report/sample_seconds, 0 = none
    spawner_faults_t *faults;   //  Crashes the job schedules
    const spawner_replacement_t *replacement;   //  job/replacement
    const char *mapping;        //  job/mapping (static string)
    bool adaptive_detector;     //  job/detector = adaptive (or fixed)
    int64_t rows;               //  Rows of the problem
    int64_t unknowns_per_row;   //  Unknowns in each row
    spawner_scatter_config_t scatter;   //  The scatter section
};

//  --------------------------------------------------------------------------

//  File names in a job file are relative to the job file's folder, so a
//  job runs from anywhere; names given with --set stay relative to the
//  current folder, as the shell would take them.
static void
s_resolve_paths (zconfig_t *root, const char *job_path)
{
    static const char *keys [] = { "problem/matrix", "problem/rhs" };
    const char *slash = strrchr (job_path, '/');
    if (!slash)
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys [0]; i++) {
        char *value = zconfig_get (root, keys [i], NULL);
        if (!value || !*value || *value == '/')
            continue;
        char *resolved = zsys_sprintf ("%.*s/%s", (int) (slash - job_path),
                                       job_path, value);
        zconfig_put (root, keys [i], resolved);
        zstr_free (&resolved);
    }
}

static int
s_apply_overrides (zconfig_t *root, zlist_t *overrides, char *reason,
                   size_t reason_size)
{
    for (char *item = overrides ? (char *) zlist_first (overrides) : NULL;
         item; item = (char *) zlist_next (overrides)) {
        char *equals = strchr (item, '=');
        if (!equals || equals == item || !memchr (item, '/', equals - item)) {
            snprintf (reason, reason_size, "--set %s: expected "
                      "SECTION/KEY=VALUE, e.g. job/tasks=8", item);
            return -1;
        }
        char *path = strndup (item, equals - item);
        zconfig_put (root, path, equals + 1);
        free (path);
    }
    return 0;
}

//  Walk the tree, recording every item that has a value under its path.
static void
s_flatten (zconfig_t *config, const char *prefix, zhash_t *params)
{
    for (zconfig_t *child = zconfig_child (config); child;
         child = zconfig_next (child)) {
        char *path = *prefix
                   ? zsys_sprintf ("%s/%s", prefix, zconfig_name (child))
                   : strdup (zconfig_name (child));
        if (zconfig_value (child) && *zconfig_value (child))
            zhash_update (params, path, zconfig_value (child));
        s_flatten (child, path, params);
        free (path);
    }
}

//  A number from the job section, with the job file in the reason.
static int
s_number (spawner_job_t *self, const char *key, double min, double max,
          double fallback, double *value, const char *path, char *reason,
          size_t reason_size)
{
    char why [512];
    if (jace_param_number (self->params, key, fallback, min, max, value,
                           why, sizeof why) == 0)
        return 0;
    snprintf (reason, reason_size, "%s: %s", path, why);
    return -1;
}

static int
s_check_job_section (spawner_job_t *self, const char *path, char *reason,
                     size_t reason_size)
{
    const char *name = (const char *) zhash_lookup (self->params,
                                                    "job/application");
    if (!name) {
        snprintf (reason, reason_size, "%s: job/application is missing "
                  "(known: %s)", path, app_table_names ());
        return -1;
    }
    if (app_table_is_path (name)) {
        snprintf (reason, reason_size, "%s: job/application = '%s' looks "
                  "like a path: a job names an application and never loads "
                  "code; put the plugin in an apps directory (--apps DIR, "
                  "JACE_APPS or %s) and name it (known: %s)", path, name,
                  app_plugin_installed_dir (), app_table_names ());
        return -1;
    }
    self->app = app_table_find (name);
    if (!self->app) {
        snprintf (reason, reason_size, "%s: job/application = '%s' is "
                  "unknown (known: %s)", path, name, app_table_names ());
        return -1;
    }
    double tasks, max_iterations, heartbeat_timeout, orphan_timeout;
    if (s_number (self, "job/tasks", 1, JACE_NODES_MAX, 1, &tasks, path,
                  reason, reason_size)
    ||  s_number (self, "job/tolerance", 1e-300, 1, 1e-6, &self->tolerance,
                  path, reason, reason_size)
    ||  s_number (self, "job/max_iterations", 0, 1e15, 0, &max_iterations,
                  path, reason, reason_size)
    ||  s_number (self, "job/max_seconds", 0.1, 1e7, 600,
                  &self->max_seconds, path, reason, reason_size)
    ||  s_number (self, "job/reserve_timeout", 0, 1e6, 30,
                  &self->reserve_timeout, path, reason, reason_size)
    ||  s_number (self, "job/heartbeat_timeout", 100, 1e8, 3000,
                  &heartbeat_timeout, path, reason, reason_size)
    ||  s_number (self, "job/orphan_timeout", 2, 1e7, 600,
                  &orphan_timeout, path, reason, reason_size))
        return -1;
    if (tasks != floor (tasks) || max_iterations != floor (max_iterations)) {
        snprintf (reason, reason_size, "%s: job/tasks and "
                  "job/max_iterations must be integers", path);
        return -1;
    }
    self->tasks = (int64_t) tasks;
    self->max_iterations = (int64_t) max_iterations;
    self->heartbeat_timeout = (int64_t) heartbeat_timeout;
    return 0;
}

//  The keys of the fault-tolerance sections (checkpoint, faults, report).
static int
s_check_recovery_sections (spawner_job_t *self, const char *path,
                           char *reason, size_t reason_size)
{
    double copies, iterations, seconds, spares;
    if (s_number (self, "checkpoint/copies", 0, 16, 2, &copies, path,
                  reason, reason_size)
    ||  s_number (self, "checkpoint/every_iterations", 0, 1e15, 0,
                  &iterations, path, reason, reason_size)
    ||  s_number (self, "checkpoint/every_seconds", 0, 1e6, 2, &seconds,
                  path, reason, reason_size)
    ||  s_number (self, "job/spares", 0, JACE_NODES_MAX, 0, &spares, path,
                  reason, reason_size)
    ||  s_number (self, "report/sample_seconds", 0, 1e6, 0,
                  &self->sample_seconds, path, reason, reason_size))
        return -1;
    if (copies != floor (copies) || spares != floor (spares)
    ||  iterations != floor (iterations)) {
        snprintf (reason, reason_size, "%s: checkpoint/copies, "
                  "checkpoint/every_iterations and job/spares must be "
                  "integers", path);
        return -1;
    }
    self->spares = (int64_t) spares;
    const char *policy = (const char *) zhash_lookup (self->params,
                                                      "job/replacement");
    self->replacement = spawner_replacement_find (policy ? policy
                                                         : "same-cluster");
    if (!self->replacement) {
        snprintf (reason, reason_size, "%s: job/replacement = '%s' is "
                  "unknown (known: %s)", path, policy,
                  spawner_replacement_names ());
        return -1;
    }
    //  job/replacement is simple's option: alone, it means simple
    const char *mapping = (const char *) zhash_lookup (self->params,
                                                       "job/mapping");
    if (policy && mapping && !streq (mapping, "simple")) {
        snprintf (reason, reason_size, "%s: job/replacement applies to "
                  "job/mapping = simple only, not '%s' (the mapping has its "
                  "own replacement)", path, mapping);
        return -1;
    }
    if (mapping && !spawner_plan_exists (mapping)) {
        snprintf (reason, reason_size, "%s: job/mapping = '%s' is unknown "
                  "(known: %s)", path, mapping, spawner_plan_names ());
        return -1;
    }
    self->mapping = mapping ? spawner_plan_canonical (mapping)
                  : policy ? "simple" : "maheve";
    const char *detector = (const char *) zhash_lookup (self->params,
                                                        "job/detector");
    if (detector && !streq (detector, "adaptive") && !streq (detector,
                                                             "fixed")) {
        snprintf (reason, reason_size, "%s: job/detector = '%s' is unknown "
                  "(known: adaptive, fixed)", path, detector);
        return -1;
    }
    self->adaptive_detector = !detector || streq (detector, "adaptive");
    char why [512];
    if (spawner_scatter_config (self->params, &self->scatter, why,
                                sizeof why)) {
        snprintf (reason, reason_size, "%s: %s", path, why);
        return -1;
    }
    self->faults = spawner_faults_new (self->params, self->tasks, why,
                                       sizeof why);
    if (!self->faults) {
        snprintf (reason, reason_size, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

static int
s_check_problem (spawner_job_t *self, const char *path, char *reason,
                 size_t reason_size)
{
    char why [768] = "";
    self->problem = self->app->load (self->params, why, sizeof why);
    if (!self->problem) {
        snprintf (reason, reason_size, "%s: %s", path, why);
        return -1;
    }
    self->app->shape (self->problem, &self->rows, &self->unknowns_per_row);
    if (self->rows < self->tasks) {
        snprintf (reason, reason_size, "%s: the problem has %" PRId64
                  " rows, fewer than job/tasks = %" PRId64, path,
                  self->rows, self->tasks);
        return -1;
    }
    return 0;
}

spawner_job_t *
spawner_job_load (const char *path, zlist_t *overrides, char *reason,
                  size_t reason_size)
{
    assert (path);
    if (!zsys_file_exists (path)) {
        snprintf (reason, reason_size, "%s: no such job file", path);
        return NULL;
    }
    zconfig_t *root = zconfig_load (path);
    if (!root) {
        snprintf (reason, reason_size, "%s: not a valid ZPL file (check "
                  "indentation: 4 spaces per level, 'key = value')", path);
        return NULL;
    }
    spawner_job_t *self = (spawner_job_t *) zmalloc (sizeof *self);
    self->root = root;
    self->params = zhash_new ();
    zhash_autofree (self->params);
    s_resolve_paths (root, path);
    if (s_apply_overrides (root, overrides, reason, reason_size))
        goto out_fail;
    s_flatten (root, "", self->params);
    if (s_check_job_section (self, path, reason, reason_size)
    ||  s_check_recovery_sections (self, path, reason, reason_size)
    ||  s_check_problem (self, path, reason, reason_size))
        goto out_fail;
    return self;

out_fail:
    spawner_job_destroy (&self);
    return NULL;
}

spawner_job_t *
spawner_job_adopt (zhash_t *params, const char *what, char *reason,
                   size_t reason_size)
{
    assert (params && what);
    spawner_job_t *self = (spawner_job_t *) zmalloc (sizeof *self);
    self->params = zhash_dup (params);
    zhash_autofree (self->params);
    if (s_check_job_section (self, what, reason, reason_size)
    ||  s_check_recovery_sections (self, what, reason, reason_size)
    ||  s_check_problem (self, what, reason, reason_size))
        spawner_job_destroy (&self);
    return self;
}

void
spawner_job_destroy (spawner_job_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        spawner_job_t *self = *self_p;
        if (self->problem)
            self->app->unload (&self->problem);
        spawner_faults_destroy (&self->faults);
        zconfig_destroy (&self->root);
        zhash_destroy (&self->params);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------

const jace_app_t *spawner_job_app (spawner_job_t *self)
    { assert (self); return self->app; }
zhash_t *spawner_job_params (spawner_job_t *self)
    { assert (self); return self->params; }
void *spawner_job_problem (spawner_job_t *self)
    { assert (self); return self->problem; }
int64_t spawner_job_tasks (spawner_job_t *self)
    { assert (self); return self->tasks; }
double spawner_job_tolerance (spawner_job_t *self)
    { assert (self); return self->tolerance; }
int64_t spawner_job_max_iterations (spawner_job_t *self)
    { assert (self); return self->max_iterations; }
double spawner_job_max_seconds (spawner_job_t *self)
    { assert (self); return self->max_seconds; }
double spawner_job_reserve_timeout (spawner_job_t *self)
    { assert (self); return self->reserve_timeout; }
int64_t spawner_job_heartbeat_timeout (spawner_job_t *self)
    { assert (self); return self->heartbeat_timeout; }
int64_t spawner_job_spares (spawner_job_t *self)
    { assert (self); return self->spares; }
double spawner_job_sample_seconds (spawner_job_t *self)
    { assert (self); return self->sample_seconds; }
spawner_faults_t *spawner_job_faults (spawner_job_t *self)
    { assert (self); return self->faults; }
const spawner_replacement_t *spawner_job_replacement (spawner_job_t *self)
    { assert (self); return self->replacement; }
const char *spawner_job_mapping (spawner_job_t *self)
    { assert (self); return self->mapping; }
bool spawner_job_adaptive_detector (spawner_job_t *self)
    { assert (self); return self->adaptive_detector; }
int64_t spawner_job_rows (spawner_job_t *self)
    { assert (self); return self->rows; }
int64_t spawner_job_unknowns_per_row (spawner_job_t *self)
    { assert (self); return self->unknowns_per_row; }
const spawner_scatter_config_t *spawner_job_scatter (spawner_job_t *self)
    { assert (self); return &self->scatter; }

//  --------------------------------------------------------------------------

int
spawner_job_partition (spawner_job_t *self, const double *power,
                       size_t count, int64_t *first)
{
    assert (self);
    assert (power && first && count > 0);
    if (self->rows < (int64_t) count)
        return -1;
    spawner_scatter_proportional (power, count, self->rows, first);
    return 0;
}
