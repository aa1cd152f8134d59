/*  =========================================================================
    grid_run - the run folder of a local virtual grid

    See grid_run.h for the files.  The pids file is read back by later
    commands and by scripts, so it is parsed as untrusted input: every line
    is checked and a bad one is reported with its line number.
    =========================================================================
*/
#include "grid_run.h"

#include <czmq.h>

//  A grid never has more processes than this; a bigger pids file is junk.
#define GRID_RUN_MAX_RECORDS 100000

struct _grid_run_t {
    char *dir;                      //  The run folder
    grid_proc_record_t *records;    //  Records in start order
    size_t size;                    //  Records in use
    size_t capacity;                //  Records allocated
};


//  --------------------------------------------------------------------------
//  Create a run folder handle

grid_run_t *
grid_run_new (const char *dir)
{
    assert (dir);
    grid_run_t *self = (grid_run_t *) zmalloc (sizeof (grid_run_t));
    self->dir = strdup (dir);
    self->records = NULL;
    self->size = 0;
    self->capacity = 0;
    return self;
}


//  --------------------------------------------------------------------------
//  Destroy the handle

void
grid_run_destroy (grid_run_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        grid_run_t *self = *self_p;
        free (self->records);
        free (self->dir);
        free (self);
        *self_p = NULL;
    }
}


//  --------------------------------------------------------------------------
//  The folder

const char *
grid_run_dir (grid_run_t *self)
{
    assert (self);
    return self->dir;
}


//  --------------------------------------------------------------------------
//  Make one directory unless it is there already

static int
s_make_dir (const char *path, char *error, size_t error_size)
{
    if (zsys_dir_create ("%s", path) == 0 || zsys_file_exists (path)) {
        struct stat info;
        if (stat (path, &info) == 0 && S_ISDIR (info.st_mode))
            return 0;
        snprintf (error, error_size, "%s exists and is not a directory",
                  path);
        return -1;
    }
    snprintf (error, error_size, "cannot create directory %s: %s",
              path, strerror (errno));
    return -1;
}


//  --------------------------------------------------------------------------
//  Create the folder and its subfolders

int
grid_run_create (grid_run_t *self, char *error, size_t error_size)
{
    assert (self);
    if (s_make_dir (self->dir, error, error_size))
        return -1;
    const char *subdirs [] = { "logs", "endpoints", "argv" };
    for (size_t index = 0; index < 3; index++) {
        char *path = grid_run_path (self, subdirs [index]);
        int rc = s_make_dir (path, error, error_size);
        free (path);
        if (rc)
            return -1;
    }
    return 0;
}


//  --------------------------------------------------------------------------
//  True if the folder holds a pids file

bool
grid_run_has_pids (grid_run_t *self)
{
    assert (self);
    char *path = grid_run_path (self, "pids");
    bool exists = access (path, F_OK) == 0;
    free (path);
    return exists;
}


//  --------------------------------------------------------------------------
//  True if text fits a record field: not empty, short enough, no blanks

static bool
s_is_field (const char *text, size_t max)
{
    if (!text || !*text || strlen (text) >= max)
        return false;
    for (const char *cursor = text; *cursor; cursor++)
        if (!isgraph ((unsigned char) *cursor))
            return false;
    return true;
}


//  --------------------------------------------------------------------------
//  Add a record

int
grid_run_add (grid_run_t *self, const char *role, const char *name,
              pid_t pid, const char *endpoint, const char *cluster)
{
    assert (self);
    if (!endpoint)
        endpoint = "-";
    if (!s_is_field (role, GRID_RUN_NAME_MAX)
    ||  !s_is_field (name, GRID_RUN_NAME_MAX)
    ||  !s_is_field (endpoint, GRID_RUN_ENDPOINT_MAX)
    ||  !s_is_field (cluster, GRID_RUN_NAME_MAX)
    ||  pid <= 0 || self->size >= GRID_RUN_MAX_RECORDS)
        return -1;
    if (self->size == self->capacity) {
        self->capacity = self->capacity ? self->capacity * 2 : 16;
        self->records = (grid_proc_record_t *) realloc (self->records,
                        self->capacity * sizeof (grid_proc_record_t));
        assert (self->records);
    }
    grid_proc_record_t *record = &self->records [self->size++];
    memset (record, 0, sizeof *record);
    strcpy (record->role, role);
    strcpy (record->name, name);
    record->pid = pid;
    strcpy (record->endpoint, endpoint);
    strcpy (record->cluster, cluster);
    return 0;
}


//  --------------------------------------------------------------------------
//  Parse one pids line into the records.  Returns 0, or -1 with a reason.

static int
s_parse_line (grid_run_t *self, char *line, char *reason, size_t reason_size)
{
    char *fields [6] = { NULL };
    size_t count = 0;
    char *saved = NULL;
    for (char *token = strtok_r (line, " \t\r\n", &saved);
         token; token = strtok_r (NULL, " \t\r\n", &saved)) {
        if (count == 5) {
            snprintf (reason, reason_size, "more than 5 fields");
            return -1;
        }
        fields [count++] = token;
    }
    if (count != 5) {
        snprintf (reason, reason_size,
                  "expected 'role name pid endpoint cluster'");
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long pid = strtol (fields [2], &end, 10);
    if (errno || *end || pid <= 0 || pid > INT_MAX) {
        snprintf (reason, reason_size, "bad pid '%s'", fields [2]);
        return -1;
    }
    if (grid_run_add (self, fields [0], fields [1], (pid_t) pid,
                      fields [3], fields [4])) {
        snprintf (reason, reason_size, "field too long or too many lines");
        return -1;
    }
    return 0;
}


//  --------------------------------------------------------------------------
//  Replace the records with those of the pids file

int
grid_run_load (grid_run_t *self, char *error, size_t error_size)
{
    assert (self);
    self->size = 0;
    char *path = grid_run_path (self, "pids");
    FILE *file = fopen (path, "r");
    if (!file) {
        snprintf (error, error_size, "cannot read %s: %s",
                  path, strerror (errno));
        free (path);
        return -1;
    }
    char line [1024];
    size_t number = 0;
    int rc = 0;
    while (rc == 0 && fgets (line, sizeof line, file)) {
        number++;
        char reason [128];
        if (line [0] == '#' || strspn (line, " \t\r\n") == strlen (line))
            continue;
        if (!strchr (line, '\n') && !feof (file)) {
            snprintf (error, error_size, "%s:%zu: line too long",
                      path, number);
            rc = -1;
        }
        else
        if (s_parse_line (self, line, reason, sizeof reason)) {
            snprintf (error, error_size, "%s:%zu: %s", path, number, reason);
            rc = -1;
        }
    }
    fclose (file);
    free (path);
    return rc;
}


//  --------------------------------------------------------------------------
//  Number of records

size_t
grid_run_size (grid_run_t *self)
{
    assert (self);
    return self->size;
}


//  --------------------------------------------------------------------------
//  Record by index

grid_proc_record_t *
grid_run_record (grid_run_t *self, size_t index)
{
    assert (self);
    assert (index < self->size);
    return &self->records [index];
}


//  --------------------------------------------------------------------------
//  Record by role and name

grid_proc_record_t *
grid_run_find (grid_run_t *self, const char *role, const char *name)
{
    assert (self);
    assert (name);
    for (size_t index = 0; index < self->size; index++) {
        grid_proc_record_t *record = &self->records [index];
        if ((!role || streq (record->role, role))
        &&  streq (record->name, name))
            return record;
    }
    return NULL;
}


//  --------------------------------------------------------------------------
//  Write the pids file

int
grid_run_save (grid_run_t *self)
{
    assert (self);
    //  Lines are at most about 500 bytes: fields are bounded.
    size_t size = self->size * 512 + 128;
    char *text = (char *) zmalloc (size);
    size_t used = snprintf (text, size,
                            "#  role name pid endpoint cluster\n");
    for (size_t index = 0; index < self->size; index++) {
        grid_proc_record_t *record = &self->records [index];
        used += snprintf (text + used, size - used, "%s %s %d %s %s\n",
                          record->role, record->name, (int) record->pid,
                          record->endpoint, record->cluster);
    }
    int rc = grid_run_write (self, "pids", text);
    free (text);
    return rc;
}


//  --------------------------------------------------------------------------
//  Remove the pids file

int
grid_run_remove_pids (grid_run_t *self)
{
    assert (self);
    char *path = grid_run_path (self, "pids");
    int rc = unlink (path) == 0 || errno == ENOENT ? 0 : -1;
    free (path);
    return rc;
}


//  --------------------------------------------------------------------------
//  Path of a file in the folder

char *
grid_run_path (grid_run_t *self, const char *relative)
{
    assert (self);
    assert (relative);
    size_t size = strlen (self->dir) + strlen (relative) + 2;
    char *path = (char *) zmalloc (size);
    snprintf (path, size, "%s/%s", self->dir, relative);
    return path;
}


//  --------------------------------------------------------------------------
//  Write a whole file through a temporary name

int
grid_run_write (grid_run_t *self, const char *relative, const char *text)
{
    assert (self);
    assert (text);
    char *path = grid_run_path (self, relative);
    size_t size = strlen (path) + 32;
    char *temporary = (char *) zmalloc (size);
    snprintf (temporary, size, "%s.tmp.%d", path, (int) getpid ());
    FILE *file = fopen (temporary, "w");
    int rc = -1;
    if (file) {
        bool written = fputs (text, file) >= 0;
        if (fclose (file) == 0 && written
        &&  rename (temporary, path) == 0)
            rc = 0;
        else
            unlink (temporary);
    }
    free (temporary);
    free (path);
    return rc;
}


//  --------------------------------------------------------------------------
//  Read a whole small file

char *
grid_run_read_file (const char *path, size_t max_size)
{
    assert (path);
    FILE *file = fopen (path, "r");
    if (!file)
        return NULL;
    char *text = (char *) zmalloc (max_size + 1);
    size_t size = fread (text, 1, max_size + 1, file);
    bool failed = ferror (file) || size > max_size;
    fclose (file);
    if (failed) {
        free (text);
        return NULL;
    }
    text [size] = 0;
    return text;
}
