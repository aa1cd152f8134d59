/*  =========================================================================
    app_plugin - load application plugins into the application table
    =========================================================================
*/
#include "app_plugin.h"
#include "app_table.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>

#ifndef JACE_APPSDIR
#   error "JACE_APPSDIR, the installed plugin directory, must be defined"
#endif

//  The callbacks no application can do without (jace_task.h marks the
//  others "may be NULL").
static const char *
s_missing_callback (const jace_app_t *app)
{
    return !app->load ? "load" : !app->shape ? "shape"
         : !app->residual ? "residual" : !app->unload ? "unload"
         : !app->setup ? "setup" : !app->iterate ? "iterate"
         : !app->solution ? "solution" : !app->destroy ? "destroy" : NULL;
}

//  The application of an opened plugin, checked; NULL with the reason.
static const jace_app_t *
s_application (void *handle, const char *path, char *reason,
               size_t reason_size)
{
    dlerror ();
    const jace_app_t *(*entry) (void) = NULL;
    //  POSIX's way to turn a dlsym result into a function pointer.
    *(void **) &entry = dlsym (handle, JACE_APP_SYMBOL);
    if (!entry) {
        snprintf (reason, reason_size, "%s: not an application plugin: it "
                  "exports no %s () function", path, JACE_APP_SYMBOL);
        return NULL;
    }
    const jace_app_t *app = entry ();
    const char *missing = app ? s_missing_callback (app) : NULL;
    if (!app)
        snprintf (reason, reason_size, "%s: %s () returned NULL", path,
                  JACE_APP_SYMBOL);
    else
    if (app->abi != JACE_APP_ABI)
        snprintf (reason, reason_size, "%s: built for application ABI %d, "
                  "this Jace loads ABI %d: rebuild it against this Jace's "
                  "jace.h (.abi = JACE_APP_ABI)", path, app->abi,
                  JACE_APP_ABI);
    else
    if (!app->name || !*app->name || strlen (app->name) >= JACE_ID_MAX
    ||  !jace_name_plain (app->name) || app_table_is_path (app->name))
        snprintf (reason, reason_size, "%s: the application's name must be "
                  "1 to %d printable characters, no space, quote, slash or "
                  "backslash", path, JACE_ID_MAX - 1);
    else
    if (missing)
        snprintf (reason, reason_size, "%s: application '%s' has no %s "
                  "callback", path, app->name, missing);
    else
        return app;
    return NULL;
}

int
app_plugin_load (const char *path, char *reason, size_t reason_size)
{
    assert (path);
    //  RTLD_NOW: a missing symbol is an error here, not a crash mid-job.
    //  RTLD_LOCAL: plugins do not see each other's symbols.
    void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf (reason, reason_size, "%s", dlerror ());
        return -1;
    }
    const jace_app_t *app = s_application (handle, path, reason,
                                           reason_size);
    if (!app) {
        dlclose (handle);
        return -1;
    }
    char why [512];
    if (app_table_add (app, path, why, sizeof why)) {
        zsys_warning ("%s", why);
        dlclose (handle);
        return 0;
    }
    //  The handle stays open for the process's life: the table borrows
    //  the application from it.
    return 0;
}

static bool
s_is_plugin_name (const char *name)
{
    size_t length = strlen (name);
    return *name != '.' && length > 3 && streq (name + length - 3, ".so");
}

static int
s_by_name (const void *a, const void *b)
{
    return strcmp (*(char * const *) a, *(char * const *) b);
}

int
app_plugin_load_dir (const char *dir, bool required, char *reason,
                     size_t reason_size)
{
    assert (dir);
    DIR *handle = opendir (dir);
    if (!handle) {
        if (!required && errno == ENOENT)
            return 0;
        snprintf (reason, reason_size, "apps directory %s: %s", dir,
                  strerror (errno));
        return -1;
    }
    //  Name order, so that which of two same-named plugins wins does not
    //  depend on the file system.
    char *names [APP_TABLE_MAX * 4];
    size_t count = 0;
    size_t skipped = 0;
    for (struct dirent *entry = readdir (handle); entry;
         entry = readdir (handle))
        if (s_is_plugin_name (entry->d_name)) {
            if (count < sizeof names / sizeof names [0])
                names [count++] = strdup (entry->d_name);
            else
                skipped++;
        }
    closedir (handle);
    if (skipped)
        zsys_warning ("apps directory %s: %zu plugins beyond the first %zu "
                      "are not even looked at", dir, skipped, count);
    qsort (names, count, sizeof names [0], s_by_name);
    size_t before = app_table_size ();
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        char path [PATH_MAX];
        snprintf (path, sizeof path, "%s/%s", dir, names [i]);
        if (rc == 0)
            rc = app_plugin_load (path, reason, reason_size);
        free (names [i]);
    }
    return rc ? -1 : (int) (app_table_size () - before);
}

//  Each directory of the colon-separated path (empty parts skipped).
static int
s_load_path (const char *path, char *reason, size_t reason_size)
{
    char *copy = strdup (path);
    int added = 0;
    char *rest = copy;
    for (char *dir = strsep (&rest, ":"); dir && added >= 0;
         dir = strsep (&rest, ":")) {
        if (!*dir)
            continue;
        int more = app_plugin_load_dir (dir, false, reason, reason_size);
        added = more < 0 ? -1 : added + more;
    }
    free (copy);
    return added;
}

int
app_plugin_load_all (const char **dirs, size_t count, char *reason,
                     size_t reason_size)
{
    int added = 0;
    for (size_t i = 0; i < count; i++) {
        int more = app_plugin_load_dir (dirs [i], true, reason, reason_size);
        if (more < 0)
            return -1;
        added += more;
    }
    const char *path = getenv ("JACE_APPS");
    int more = path ? s_load_path (path, reason, reason_size) : 0;
    if (more < 0)
        return -1;
    added += more;
    more = app_plugin_load_dir (JACE_APPSDIR, false, reason, reason_size);
    return more < 0 ? -1 : added + more;
}

const char *
app_plugin_installed_dir (void)
{
    return JACE_APPSDIR;
}

void
app_plugin_print (FILE *out)
{
    for (size_t i = 0; i < app_table_size (); i++) {
        const char *source;
        const jace_app_t *app = app_table_at (i, &source);
        fprintf (out, "%-16s %s\n", app->name, source);
    }
}
