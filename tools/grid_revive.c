/*  =========================================================================
    grid_revive - crashed daemons of a local grid come back
    =========================================================================
*/
#include "grid_revive.h"
#include "grid_proc.h"

#include <czmq.h>

//  Largest saved command line we read back
#define GRID_REVIVE_ARGV_MAX (64 * 1024)


//  --------------------------------------------------------------------------
//  DIR/argv/NAME, freshly allocated

static char *
s_argv_path (grid_run_t *run, const char *name)
{
    char *relative = zsys_sprintf ("argv/%s", name);
    char *path = grid_run_path (run, relative);
    free (relative);
    return path;
}

int
grid_revive_save_argv (grid_run_t *run, const char *name,
                       char *const argv [])
{
    assert (run && name && argv);
    size_t size = 1;
    for (size_t index = 0; argv [index]; index++) {
        if (strchr (argv [index], '\n'))
            return -1;
        size += strlen (argv [index]) + 1;
    }
    char *text = (char *) zmalloc (size);
    for (size_t index = 0; argv [index]; index++) {
        strcat (text, argv [index]);
        strcat (text, "\n");
    }
    char *relative = zsys_sprintf ("argv/%s", name);
    int rc = grid_run_write (run, relative, text);
    free (relative);
    free (text);
    return rc;
}


//  --------------------------------------------------------------------------
//  The next id of a daemon: NAME+1 for NAME, NAME+(k+1) for NAME+k, skipping
//  any recorded already.  Returns 0, or -1 when it would be too long.

static int
s_next_name (grid_run_t *run, const char *name, char *next, size_t size)
{
    char base [GRID_RUN_NAME_MAX];
    snprintf (base, sizeof base, "%s", name);
    long generation = 0;
    char *plus = strrchr (base, '+');
    if (plus && plus [1] && strspn (plus + 1, "0123456789")
                            == strlen (plus + 1)) {
        generation = strtol (plus + 1, NULL, 10);
        *plus = 0;
    }
    do {
        generation++;
        if (snprintf (next, size, "%s+%ld", base, generation) >= (int) size
        ||  strlen (next) >= GRID_RUN_NAME_MAX)
            return -1;
    } while (grid_run_find (run, NULL, next));
    return 0;
}


//  --------------------------------------------------------------------------
//  Read DIR/argv/NAME into a NULL terminated vector of pointers into text,
//  which the caller frees with the vector.  Returns NULL when missing.

static char **
s_load_argv (grid_run_t *run, const char *name, char **text_p)
{
    char *path = s_argv_path (run, name);
    char *text = grid_run_read_file (path, GRID_REVIVE_ARGV_MAX);
    free (path);
    if (!text)
        return NULL;
    size_t lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    char **argv = (char **) zmalloc ((lines + 1) * sizeof (char *));
    size_t count = 0;
    for (char *line = text, *end; (end = strchr (line, '\n'));
         line = end + 1) {
        *end = 0;
        argv [count++] = line;
    }
    if (count == 0) {
        free (argv);
        free (text);
        return NULL;
    }
    *text_p = text;
    return argv;
}


//  --------------------------------------------------------------------------
//  Start one dead daemon again under its next id.  Returns 0 or -1.

static int
s_revive (grid_run_t *run, grid_proc_record_t *record)
{
    char *text = NULL;
    char **argv = s_load_argv (run, record->name, &text);
    if (!argv) {
        fprintf (stderr, "jace-grid: no command line saved for daemon %s in"
                 " %s/argv\n", record->name, grid_run_dir (run));
        return -1;
    }
    char next [GRID_RUN_NAME_MAX];
    bool has_id = false;
    if (s_next_name (run, record->name, next, sizeof next) == 0)
        for (size_t index = 0; argv [index] && argv [index + 1]; index++)
            if (streq (argv [index], "--id")) {
                argv [index + 1] = next;
                has_id = true;
            }
    int rc = -1;
    if (!has_id)
        fprintf (stderr, "jace-grid: daemon %s has no --id to renew\n",
                 record->name);
    else {
        char *relative = zsys_sprintf ("logs/%s.log", next);
        char *log_path = grid_run_path (run, relative);
        char reason [512];
        pid_t pid = grid_proc_spawn (argv, log_path, reason, sizeof reason);
        if (pid < 0)
            fprintf (stderr, "jace-grid: cannot restart daemon %s: %s\n",
                     record->name, reason);
        else
        if (grid_revive_save_argv (run, next, argv)) {
            grid_proc_signal (pid, SIGKILL);
            fprintf (stderr, "jace-grid: cannot save the command line of %s"
                     "\n", next);
        }
        else {
            printf ("%s %s\n", record->name, next);
            snprintf (record->name, sizeof record->name, "%s", next);
            record->pid = pid;
            rc = 0;
        }
        free (log_path);
        free (relative);
    }
    free (argv);
    free (text);
    return rc;
}

int
grid_revive_dead (grid_run_t *run)
{
    assert (run);
    int revived = 0;
    int rc = 0;
    for (size_t index = 0; rc == 0 && index < grid_run_size (run); index++) {
        grid_proc_record_t *record = grid_run_record (run, index);
        if (!streq (record->role, "daemon") || grid_proc_is_alive (record->pid))
            continue;
        if (s_revive (run, record))
            rc = -1;
        else
            revived++;
    }
    //  Saved even after a failure: the pids file must name every daemon
    //  started, so that stop finds it.
    if (revived > 0 && grid_run_save (run)) {
        fprintf (stderr, "jace-grid: cannot write %s/pids\n",
                 grid_run_dir (run));
        rc = -1;
    }
    return rc ? -1 : revived;
}
