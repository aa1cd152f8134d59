/*  =========================================================================
    spawner_job - a job as the user describes it: the ZPL job file
    =========================================================================
*/
//  program_invocation_short_name: the tool reading the job names itself
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spawner_job.h"
#include "spawner_handoff.h"
#include "spawner_drain.h"
#include "spawner_faults.h"
#include "spawner_plan.h"
#include "spawner_scatter.h"
#include "app_plugin.h"
#include "app_table.h"
#include "jace_msg.h"
#include "jace_task_runtime.h"
#include "zpl.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

struct _spawner_job_t {
    zhash_t *params;            //  Flattened "section/key" -> value
    zhash_t *origins;           //  "section/key" -> "FILE:LINE" or
                                //  "--set ARG", where the user set it
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
    int64_t stall_snapshots;    //  job/stall_snapshots, 0 = never
    spawner_faults_t *faults;   //  Crashes the job schedules
    const spawner_replacement_t *replacement;   //  job/replacement
    const char *mapping;        //  job/mapping (static string)
    bool adaptive_detector;     //  job/detector = adaptive (or fixed)
    bool watch_links;           //  job/watch_links = on (or off)
    int64_t rows;               //  Rows of the problem
    int64_t unknowns_per_row;   //  Unknowns in each row
    spawner_scatter_config_t scatter;   //  The scatter section
    const char *drain_schedule; //  drain/schedule (borrowed from params)
    int64_t checkpoint_copies;  //  checkpoint/copies
    int64_t checkpoint_iterations;  //  checkpoint/every_iterations, or 0
    double checkpoint_seconds;  //  checkpoint/every_seconds, or 0
    bool rebalance_auto;        //  job/rebalance = auto
    double rebalance_threshold; //  job/rebalance_threshold
    bool rebalance_direct;      //  job/rebalance_handoff = direct
    const char *rebalance_schedule; //  job/rebalance_schedule (borrowed)
};

//  The keys this module reads.  With the runtime's (jace_task_runtime_keys),
//  the faults and scatter sections' and the application's, they are every
//  key a job may set: anything else is a typo, refused with the nearest.
static const char *const s_keys [] = {
    "job/application", "job/tasks", "job/tolerance", "job/max_iterations",
    "job/max_seconds", "job/reserve_timeout", "job/heartbeat_timeout",
    "job/orphan_timeout", "job/setup_timeout", "job/spares",
    "job/replacement", "job/mapping", "job/detector", "job/watch_links", "checkpoint/copies",
    "checkpoint/every_iterations", "checkpoint/every_seconds",
    "report/sample_seconds", "job/stall_snapshots", "drain/schedule",
    "job/rebalance", "job/rebalance_threshold", "job/rebalance_handoff",
    "job/rebalance_schedule", NULL
};

//  Most keys a job may know: ours, the runtime's, faults, scatter, app
#define KEYS_MAX 256

//  The keys a job of application app may set (app may be NULL), and the
//  sections they live in, as NULL-terminated arrays of borrowed strings.
//  Sections keep their "/" so that prefixes compare whole.
typedef struct {
    const char *keys [KEYS_MAX + 1];
    char sections [32][32];
    const char *section_names [33];
    size_t key_count;
    size_t section_count;
    bool open;                  //  The app declares no keys: its sections
                                //  are not checked
} known_t;

static void
s_known_add (known_t *known, const char *const *keys)
{
    for (size_t index = 0; keys && keys [index]; index++) {
        const char *key = keys [index];
        assert (known->key_count < KEYS_MAX);
        known->keys [known->key_count++] = key;
        const char *slash = strchr (key, '/');
        assert (slash && slash - key < 32);
        size_t section = 0;
        while (section < known->section_count
           &&  (strlen (known->sections [section]) != (size_t) (slash - key)
            ||  strncmp (known->sections [section], key, slash - key)))
            section++;
        if (section == known->section_count && section < 32) {
            snprintf (known->sections [section], 32, "%.*s",
                      (int) (slash - key), key);
            known->section_names [section] = known->sections [section];
            known->section_count++;
        }
    }
}

static void
s_known_fill (known_t *known, const jace_app_t *app)
{
    memset (known, 0, sizeof *known);
    s_known_add (known, s_keys);
    s_known_add (known, jace_task_runtime_keys);
    s_known_add (known, spawner_faults_keys);
    s_known_add (known, spawner_scatter_keys);
    if (app)
        s_known_add (known, app->keys);
    known->open = app && !app->keys;
}

static bool
s_listed (const char *const *names, const char *name)
{
    for (size_t index = 0; names [index]; index++)
        if (streq (names [index], name))
            return true;
    return false;
}

//  Check one name the user wrote at `origin`: a key (section/key) or,
//  with is_section, a section.  Returns 0, or -1 with the reason.
static int
s_known_check (known_t *known, const char *name, bool is_section,
               const char *origin, char *reason, size_t reason_size)
{
    const char *const *names = is_section ? known->section_names
                                          : known->keys;
    if (s_listed (names, name))
        return 0;
    const char *slash = strchr (name, '/');
    if (known->open && !is_section && slash && !strchr (slash + 1, '/')) {
        //  A section of an application that declares no keys
        char section [32];
        snprintf (section, sizeof section, "%.*s", (int) (slash - name),
                  name);
        if (!s_listed (known->section_names, section))
            return 0;
    }
    if (known->open && is_section)
        return 0;
    const char *nearest = zpl_nearest (name, names);
    snprintf (reason, reason_size, "%s: unknown %s '%s'%s%s%s", origin,
              is_section ? "section" : "key", name,
              nearest ? " (did you mean " : "", nearest ? nearest : "",
              nearest ? "?)" : "");
    return -1;
}

//  --------------------------------------------------------------------------

//  Read the job file into params, remembering where each key was written.
//  File names in a job file are relative to the job file's folder, so a
//  job runs from anywhere; names given with --set stay relative to the
//  current folder, as the shell would take them.
static int
s_flatten (spawner_job_t *self, zpl_t *tree, const char *path, char *reason,
           size_t reason_size)
{
    const char *slash = strrchr (path, '/');
    for (zpl_t *section = zpl_child (tree); section;
         section = zpl_next (section))
        for (zpl_t *item = zpl_child (section); item;
             item = zpl_next (item)) {
            const char *value = zpl_value (item);
            if (!value || !*value)
                continue;
            char *key = zsys_sprintf ("%s/%s", zpl_name (section),
                                      zpl_name (item));
            char *origin = zsys_sprintf ("%s:%zu", path, zpl_line (item));
            const char *first = (const char *) zhash_lookup (self->origins,
                                                             key);
            if (first) {
                //  The last one would win without a word: a typo's trap
                snprintf (reason, reason_size, "%s: '%s' is given twice "
                          "(first at %s)", origin, key, first);
                zstr_free (&key);
                zstr_free (&origin);
                return -1;
            }
            bool is_file = streq (key, "problem/matrix")
                        || streq (key, "problem/rhs");
            if (is_file && slash && *value != '/') {
                char *resolved = zsys_sprintf ("%.*s/%s",
                    (int) (slash - path), path, value);
                zhash_update (self->params, key, resolved);
                zstr_free (&resolved);
            }
            else
                zhash_update (self->params, key, (void *) value);
            zhash_update (self->origins, key, origin);
            zstr_free (&key);
            zstr_free (&origin);
        }
    return 0;
}

//  Check every name the job file uses against the known keys: sections
//  at the top, keys under them, nothing deeper.
static int
s_check_tree (known_t *known, zpl_t *tree, const char *path, char *reason,
              size_t reason_size)
{
    char origin [1024];
    for (zpl_t *section = zpl_child (tree); section;
         section = zpl_next (section)) {
        snprintf (origin, sizeof origin, "%s:%zu", path,
                  zpl_line (section));
        if (zpl_value (section)) {
            if (zpl_child (section))
                snprintf (reason, reason_size, "%s: section '%s' has a "
                          "value; sections hold keys only", origin,
                          zpl_name (section));
            else
                snprintf (reason, reason_size, "%s: '%s = %s' is outside "
                          "any section (write it under job, problem, ...)",
                          origin, zpl_name (section), zpl_value (section));
            return -1;
        }
        if (s_known_check (known, zpl_name (section), true, origin, reason,
                           reason_size))
            return -1;
        for (zpl_t *item = zpl_child (section); item;
             item = zpl_next (item)) {
            char key [256];
            snprintf (key, sizeof key, "%s/%s", zpl_name (section),
                      zpl_name (item));
            snprintf (origin, sizeof origin, "%s:%zu", path,
                      zpl_line (item));
            if (zpl_child (item)) {
                snprintf (reason, reason_size, "%s: '%s' has items under "
                          "it; job files have sections and keys only",
                          origin, key);
                return -1;
            }
            if (s_known_check (known, key, false, origin, reason,
                               reason_size))
                return -1;
        }
    }
    return 0;
}

//  Apply --set overrides; an empty value removes the key.
static int
s_apply_overrides (spawner_job_t *self, zlist_t *overrides, char *reason,
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
        char *key = strndup (item, equals - item);
        char *origin = zsys_sprintf ("--set %s", item);
        if (equals [1]) {
            zhash_update (self->params, key, equals + 1);
            zhash_update (self->origins, key, origin);
        }
        else {
            zhash_delete (self->params, key);
            zhash_delete (self->origins, key);
        }
        free (key);
        zstr_free (&origin);
    }
    return 0;
}

//  Every --set names a known key (the file's were checked on the tree)
static int
s_check_overrides (known_t *known, zlist_t *overrides, char *reason,
                   size_t reason_size)
{
    for (char *item = overrides ? (char *) zlist_first (overrides) : NULL;
         item; item = (char *) zlist_next (overrides)) {
        char key [256];
        snprintf (key, sizeof key, "%.*s", (int) (strchr (item, '=') - item),
                  item);
        char origin [512];
        snprintf (origin, sizeof origin, "--set %s", item);
        if (s_known_check (known, key, false, origin, reason, reason_size))
            return -1;
    }
    return 0;
}

//  Where key was set, for reasons: "FILE:LINE", "--set ARG", or the job
static const char *
s_origin (spawner_job_t *self, const char *key, const char *path)
{
    const char *origin = self->origins
        ? (const char *) zhash_lookup (self->origins, key) : NULL;
    return origin ? origin : path;
}

//  Where the key a reason begins with ("faults/every = ...") was set, or
//  the job file when it names none.
static const char *
s_origin_of (spawner_job_t *self, const char *why, const char *path)
{
    char key [128];
    size_t length = strspn (why, "abcdefghijklmnopqrstuvwxyz0123456789_/");
    if (length == 0 || length >= sizeof key || !memchr (why, '/', length))
        return path;
    memcpy (key, why, length);
    key [length] = 0;
    return s_origin (self, key, path);
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
    snprintf (reason, reason_size, "%s: %s", s_origin (self, key, path), why);
    return -1;
}

//  A switch, on or off (fallback when unset), with the job file in the
//  reason.
static int
s_on_off (spawner_job_t *self, const char *key, bool fallback, bool *value,
          const char *path, char *reason, size_t reason_size)
{
    const char *text = (const char *) zhash_lookup (self->params, key);
    if (text && !streq (text, "on") && !streq (text, "off")) {
        snprintf (reason, reason_size, "%s: %s = '%s' is neither on nor "
                  "off", s_origin (self, key, path), key, text);
        return -1;
    }
    *value = text ? streq (text, "on") : fallback;
    return 0;
}

//  Find the application before the keys are checked: which keys are
//  known depends on it.
static int
s_find_app (spawner_job_t *self, const char *path, char *reason,
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
                  "unknown (known: %s)", s_origin (self, "job/application",
                                                    path),
                  name, app_table_names ());
        return -1;
    }
    return 0;
}

static int
s_check_job_section (spawner_job_t *self, const char *path, char *reason,
                     size_t reason_size)
{
    if (!self->app && s_find_app (self, path, reason, reason_size))
        return -1;
    double tasks, max_iterations, heartbeat_timeout, orphan_timeout,
           setup_timeout;
    if (s_number (self, "job/tasks", 1, JACE_NODES_MAX, 1, &tasks, path,
                  reason, reason_size)
    ||  s_number (self, "job/tolerance", 1e-300, 1, 1e-6, &self->tolerance,
                  path, reason, reason_size)
    ||  s_number (self, "job/max_iterations", 0, 1e15, 0, &max_iterations,
                  path, reason, reason_size)
    ||  s_number (self, "job/max_seconds", 0.1, 1e7, 600,
                  &self->max_seconds, path, reason, reason_size)
    ||  s_number (self, "job/reserve_timeout", 1, 1e6, 30,
                  &self->reserve_timeout, path, reason, reason_size)
    ||  s_number (self, "job/heartbeat_timeout", 100, 1e8, 3000,
                  &heartbeat_timeout, path, reason, reason_size)
    ||  s_number (self, "job/orphan_timeout", 2, 1e7, 600,
                  &orphan_timeout, path, reason, reason_size)
    ||  s_number (self, "job/setup_timeout", 1, 1e7, 60, &setup_timeout,
                  path, reason, reason_size))
        return -1;
    const char *fraction = tasks != floor (tasks) ? "job/tasks"
                         : max_iterations != floor (max_iterations)
                         ? "job/max_iterations" : NULL;
    if (fraction) {
        snprintf (reason, reason_size, "%s: %s = '%s' is not a whole number",
                  s_origin (self, fraction, path), fraction,
                  (const char *) zhash_lookup (self->params, fraction));
        return -1;
    }
    char why [512];
    if (jace_task_runtime_check (self->params, why, sizeof why)) {
        snprintf (reason, reason_size, "%s: %s", s_origin_of (self, why,
                                                              path), why);
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
    double copies, iterations, seconds, spares, stall;
    if (s_number (self, "checkpoint/copies", 0, 16, 2, &copies, path,
                  reason, reason_size)
    ||  s_number (self, "checkpoint/every_iterations", 0, 1e15, 0,
                  &iterations, path, reason, reason_size)
    ||  s_number (self, "checkpoint/every_seconds", 0, 1e6, 2, &seconds,
                  path, reason, reason_size)
    ||  s_number (self, "job/spares", 0, JACE_NODES_MAX, 0, &spares, path,
                  reason, reason_size)
    ||  s_number (self, "report/sample_seconds", 0, 1e6, 0,
                  &self->sample_seconds, path, reason, reason_size)
    ||  s_number (self, "job/stall_snapshots", 0, 1e6, 20, &stall, path,
                  reason, reason_size))
        return -1;
    bool offsite;               //  The daemons read it; checked here
    if (s_on_off (self, "checkpoint/offsite", true, &offsite, path, reason,
                  reason_size))
        return -1;
    self->stall_snapshots = (int64_t) stall;
    if (copies != floor (copies) || spares != floor (spares)
    ||  iterations != floor (iterations)) {
        snprintf (reason, reason_size, "%s: checkpoint/copies, "
                  "checkpoint/every_iterations and job/spares must be "
                  "integers", path);
        return -1;
    }
    //  A task's copies go to other tasks' daemons: more cannot be kept.
    //  Said, not refused: a job file written for many tasks still runs
    //  with --set job/tasks=2 (the default is lowered quietly).
    if (zhash_lookup (self->params, "checkpoint/copies")
    &&  copies > (double) (self->tasks - 1) && copies > 0)
        zsys_warning ("%s: checkpoint/copies = %.0f, but a task's copies "
                      "are kept by the other tasks: %" PRId64 " at most",
                      s_origin (self, "checkpoint/copies", path), copies,
                      self->tasks - 1);
    self->spares = (int64_t) spares;
    self->checkpoint_copies = (int64_t) copies;
    self->checkpoint_iterations = (int64_t) iterations;
    self->checkpoint_seconds = seconds;
    const char *policy = (const char *) zhash_lookup (self->params,
                                                      "job/replacement");
    self->replacement = spawner_replacement_find (policy ? policy
                                                         : "same-cluster");
    if (!self->replacement) {
        snprintf (reason, reason_size, "%s: job/replacement = '%s' is "
                  "unknown (known: %s)", s_origin (self, "job/replacement", path), policy,
                  spawner_replacement_names ());
        return -1;
    }
    //  job/replacement is simple's option: alone, it means simple
    const char *mapping = (const char *) zhash_lookup (self->params,
                                                       "job/mapping");
    if (policy && mapping && !streq (mapping, "simple")) {
        snprintf (reason, reason_size, "%s: job/replacement applies to "
                  "job/mapping = simple only, not '%s' (the mapping has its "
                  "own replacement)", s_origin (self, "job/replacement", path),
                  mapping);
        return -1;
    }
    if (mapping && !spawner_plan_exists (mapping)) {
        snprintf (reason, reason_size, "%s: job/mapping = '%s' is unknown "
                  "(known: %s)", s_origin (self, "job/mapping", path), mapping,
                  spawner_plan_names ());
        return -1;
    }
    self->mapping = mapping ? spawner_plan_canonical (mapping)
                  : policy ? "simple" : "maheve";
    const char *detector = (const char *) zhash_lookup (self->params,
                                                        "job/detector");
    if (detector && !streq (detector, "adaptive") && !streq (detector,
                                                             "fixed")) {
        snprintf (reason, reason_size, "%s: job/detector = '%s' is unknown "
                  "(known: adaptive, fixed)", s_origin (self, "job/detector", path),
                  detector);
        return -1;
    }
    self->adaptive_detector = !detector || streq (detector, "adaptive");
    if (s_on_off (self, "job/watch_links", true, &self->watch_links, path,
                  reason, reason_size))
        return -1;
    self->drain_schedule = (const char *) zhash_lookup (self->params,
                                                        "drain/schedule");
    if (!self->drain_schedule)
        self->drain_schedule = "auto";
    if (!spawner_drain_schedule_known (self->drain_schedule)) {
        snprintf (reason, reason_size, "%s: drain/schedule = '%s' is "
                  "unknown (known: auto, oggp, ggp, all, one)",
                  s_origin (self, "drain/schedule", path),
                  self->drain_schedule);
        return -1;
    }
    const char *rebalance = (const char *) zhash_lookup (self->params,
                                                         "job/rebalance");
    if (rebalance && !streq (rebalance, "off") && !streq (rebalance,
                                                          "auto")) {
        snprintf (reason, reason_size, "%s: job/rebalance = '%s' is unknown "
                  "(known: off, auto)", s_origin (self, "job/rebalance", path),
                  rebalance);
        return -1;
    }
    self->rebalance_auto = rebalance && streq (rebalance, "auto");
    //  A rebalanced task goes on from its block of the iterate, through
    //  the application's restore: without it, every task would start over
    if (self->rebalance_auto
    &&  !(self->app->checkpoint && self->app->restore)) {
        snprintf (reason, reason_size, "%s: job/rebalance = auto needs an "
                  "application that checkpoints and restores its state; "
                  "'%s' does not", s_origin (self, "job/rebalance", path),
                  self->app->name);
        return -1;
    }
    const char *handoff = (const char *) zhash_lookup (self->params,
        "job/rebalance_handoff");
    if (handoff && !streq (handoff, "direct") && !streq (handoff, "spawner")) {
        snprintf (reason, reason_size, "%s: job/rebalance_handoff = '%s' is "
                  "unknown (known: direct, spawner)",
                  s_origin (self, "job/rebalance_handoff", path), handoff);
        return -1;
    }
    self->rebalance_direct = !handoff || streq (handoff, "direct");
    self->rebalance_schedule = (const char *) zhash_lookup (self->params,
        "job/rebalance_schedule");
    if (!self->rebalance_schedule)
        self->rebalance_schedule = "auto";
    if (!spawner_handoff_schedule_known (self->rebalance_schedule)) {
        snprintf (reason, reason_size, "%s: job/rebalance_schedule = '%s' is "
                  "unknown (known: auto, oggp, ggp, all)",
                  s_origin (self, "job/rebalance_schedule", path),
                  self->rebalance_schedule);
        return -1;
    }
    char why [512];
    if (jace_param_number (self->params, "job/rebalance_threshold", 0.25,
                           0.01, 100, &self->rebalance_threshold, why,
                           sizeof why)) {
        snprintf (reason, reason_size, "%s: %s", s_origin_of (self, why, path),
                  why);
        return -1;
    }
    if (spawner_scatter_config (self->params, &self->scatter, why,
                                sizeof why)) {
        snprintf (reason, reason_size, "%s: %s", s_origin_of (self, why, path),
                  why);
        return -1;
    }
    self->faults = spawner_faults_new (self->params, self->tasks, why,
                                       sizeof why);
    if (!self->faults) {
        snprintf (reason, reason_size, "%s: %s", s_origin_of (self, why, path),
                  why);
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
        snprintf (reason, reason_size, "%s: %s", s_origin_of (self, why, path),
                  why);
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

//  The files a job reads (its matrix and right-hand side), each stamped
//  with its size and modification time under "stamp/KEY": a resumed job
//  reads them again, and one rewritten since (values doubled) was
//  resumed on its old daemons, then failed 90 s later "does not
//  converge", the advice pointing at the solver.
static const char *const s_file_keys [] = {
    "problem/matrix", "problem/rhs", NULL
};

//  The stamp of `file` into `stamp`; its size in bytes, or -1 (stamp
//  untouched) if it cannot be seen
static int64_t
s_file_stamp (const char *file, char *stamp, size_t size)
{
    struct stat status;
    if (stat (file, &status) != 0)
        return -1;
    snprintf (stamp, size, "%lld %lld.%09ld", (long long) status.st_size,
              (long long) status.st_mtim.tv_sec, status.st_mtim.tv_nsec);
    return (int64_t) status.st_size;
}

//  A file this large takes a while to read (55 s for 576 MB under load),
//  and nothing was said meanwhile
#define LARGE_FILE_BYTES (64LL * 1000 * 1000)

static void
s_stamp_files (spawner_job_t *self)
{
    for (size_t i = 0; s_file_keys [i]; i++) {
        const char *file = (const char *) zhash_lookup (self->params,
                                                        s_file_keys [i]);
        char stamp [96], key [64];
        snprintf (key, sizeof key, "stamp/%s", s_file_keys [i]);
        int64_t bytes = file ? s_file_stamp (file, stamp, sizeof stamp) : -1;
        if (bytes < 0)
            continue;           //  Reading it says what is wrong
        zhash_update (self->params, key, stamp);
        if (bytes >= LARGE_FILE_BYTES)
            fprintf (stderr, "%s: reading %s (%.0f MB)\n",
                     program_invocation_short_name, file, bytes / 1e6);
    }
}

//  True if every stamped file is as it was stamped; else says which not.
//  One that cannot be seen (gone, or named relative to another folder)
//  passes here: reading it says what is wrong, better than "changed".
static bool
s_files_unchanged (spawner_job_t *self, const char *what, char *reason,
                   size_t reason_size)
{
    for (size_t i = 0; s_file_keys [i]; i++) {
        char key [64], stamp [96];
        snprintf (key, sizeof key, "stamp/%s", s_file_keys [i]);
        const char *then = (const char *) zhash_lookup (self->params, key);
        const char *file = (const char *) zhash_lookup (self->params,
                                                        s_file_keys [i]);
        if (!then || !file || s_file_stamp (file, stamp, sizeof stamp) < 0)
            continue;
        if (!streq (stamp, then)) {
            snprintf (reason, reason_size, "%s: %s = %s changed since the "
                      "job was submitted (size and modification time "
                      "'%s', now '%s'): its tasks hold the data it had, "
                      "and it can only go on with the same; put the "
                      "file back, or cancel the job", what,
                      s_file_keys [i], file, then, stamp);
            return false;
        }
    }
    return true;
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
    zpl_t *tree = zpl_load (path, reason, reason_size);
    if (!tree)
        return NULL;
    spawner_job_t *self = (spawner_job_t *) zmalloc (sizeof *self);
    self->params = zhash_new ();
    zhash_autofree (self->params);
    self->origins = zhash_new ();
    zhash_autofree (self->origins);
    known_t known;
    if (s_flatten (self, tree, path, reason, reason_size)
    ||  s_apply_overrides (self, overrides, reason, reason_size)
    ||  s_find_app (self, path, reason, reason_size))
        goto out_fail;
    s_known_fill (&known, self->app);
    s_stamp_files (self);       //  Before they are read
    if (s_check_tree (&known, tree, path, reason, reason_size)
    ||  s_check_overrides (&known, overrides, reason, reason_size)
    ||  s_check_job_section (self, path, reason, reason_size)
    ||  s_check_recovery_sections (self, path, reason, reason_size)
    ||  s_check_problem (self, path, reason, reason_size))
        goto out_fail;
    zpl_destroy (&tree);
    return self;

out_fail:
    zpl_destroy (&tree);
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
    if (!s_files_unchanged (self, what, reason, reason_size)
    ||  s_check_job_section (self, what, reason, reason_size)
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
        zhash_destroy (&self->origins);
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
int64_t spawner_job_stall_snapshots (spawner_job_t *self)
    { assert (self); return self->stall_snapshots; }
spawner_faults_t *spawner_job_faults (spawner_job_t *self)
    { assert (self); return self->faults; }
const spawner_replacement_t *spawner_job_replacement (spawner_job_t *self)
    { assert (self); return self->replacement; }
const char *spawner_job_mapping (spawner_job_t *self)
    { assert (self); return self->mapping; }
bool spawner_job_adaptive_detector (spawner_job_t *self)
    { assert (self); return self->adaptive_detector; }
bool spawner_job_watch_links (spawner_job_t *self)
    { assert (self); return self->watch_links; }
int64_t spawner_job_rows (spawner_job_t *self)
    { assert (self); return self->rows; }
int64_t spawner_job_unknowns_per_row (spawner_job_t *self)
    { assert (self); return self->unknowns_per_row; }
const spawner_scatter_config_t *spawner_job_scatter (spawner_job_t *self)
    { assert (self); return &self->scatter; }
const char *spawner_job_drain_schedule (spawner_job_t *self)
    { assert (self); return self->drain_schedule; }
bool spawner_job_rebalance_auto (spawner_job_t *self)
    { assert (self); return self->rebalance_auto; }
double spawner_job_rebalance_threshold (spawner_job_t *self)
    { assert (self); return self->rebalance_threshold; }
bool spawner_job_rebalance_direct (spawner_job_t *self)
    { assert (self); return self->rebalance_direct; }
const char *spawner_job_rebalance_schedule (spawner_job_t *self)
    { assert (self); return self->rebalance_schedule; }
int64_t spawner_job_checkpoint_copies (spawner_job_t *self)
    { assert (self); return self->checkpoint_copies; }
int64_t spawner_job_checkpoint_iterations (spawner_job_t *self)
    { assert (self); return self->checkpoint_iterations; }
double spawner_job_checkpoint_seconds (spawner_job_t *self)
    { assert (self); return self->checkpoint_seconds; }

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
