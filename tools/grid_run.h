/*  =========================================================================
    grid_run - the run folder of a local virtual grid

    jace-grid keeps everything about a running grid in one folder, so that
    later commands (stop, status, kill, revive) and scripts can find it:

        DIR/pids        one line per process: role name pid endpoint cluster
                        (endpoint "-" when the process has none to publish)
        DIR/supernodes  the super-node endpoints, one per line
        DIR/platform    a copy of the platform file the grid was started from
        DIR/endpoints/  the files where super-nodes write their endpoint
        DIR/logs/       NAME.log, stdout and stderr of each process
        DIR/argv/       NAME, each daemon's command line, one argument per
                        line (what `jace-grid revive` restarts it with)
        DIR/links       the shared links' reservations (not with --netns)
        DIR/netns       with --netns, what was made (see grid_netns.h)
        DIR/platform-latency-only
                        with --netns, the platform the processes get

    Files are written whole to a temporary name and renamed, so a reader
    never sees half of one.
    =========================================================================
*/
#ifndef JACE_GRID_RUN_H_INCLUDED
#define JACE_GRID_RUN_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

//  Longest role, name or cluster, in bytes including the final NUL
#define GRID_RUN_NAME_MAX 64
//  Longest endpoint, in bytes including the final NUL
#define GRID_RUN_ENDPOINT_MAX 256

//  One recorded process of the grid
typedef struct {
    char role [GRID_RUN_NAME_MAX];          //  "supernode" or "daemon"
    char name [GRID_RUN_NAME_MAX];          //  Unique in the grid: A-sn0, A-1
    pid_t pid;                              //  Leader of its process group
    char endpoint [GRID_RUN_ENDPOINT_MAX];  //  Bound endpoint, or "-"
    char cluster [GRID_RUN_NAME_MAX];       //  Cluster it belongs to
} grid_proc_record_t;

//  Opaque run folder with its process records
typedef struct _grid_run_t grid_run_t;

//  Create a run folder handle for dir (copied), with no records.  Touches
//  no file.
grid_run_t *
    grid_run_new (const char *dir);

//  Destroy the handle; nullifies the reference.  Safe on NULL.
void
    grid_run_destroy (grid_run_t **self_p);

//  The folder
const char *
    grid_run_dir (grid_run_t *self);

//  Create the folder and its logs/, endpoints/ and argv/ subfolders.
//  Returns 0, or -1 with a reason in error.
int
    grid_run_create (grid_run_t *self, char *error, size_t error_size);

//  True if the folder holds a pids file
bool
    grid_run_has_pids (grid_run_t *self);

//  Replace the records with those of the pids file.  Returns 0, or -1 with
//  "PATH:LINE: reason" in error.
int
    grid_run_load (grid_run_t *self, char *error, size_t error_size);

//  Add a record; endpoint NULL is recorded as "-".  Returns 0, or -1 when a
//  field is too long or holds white space.
int
    grid_run_add (grid_run_t *self, const char *role, const char *name,
                  pid_t pid, const char *endpoint, const char *cluster);

//  Number of records
size_t
    grid_run_size (grid_run_t *self);

//  Record by index, borrowed
grid_proc_record_t *
    grid_run_record (grid_run_t *self, size_t index);

//  Record with this role (any role when NULL) and name, borrowed, or NULL
grid_proc_record_t *
    grid_run_find (grid_run_t *self, const char *role, const char *name);

//  Write the records to the pids file.  Returns 0 or -1.
int
    grid_run_save (grid_run_t *self);

//  Remove the pids file.  Returns 0, or -1 when it was there and stays.
int
    grid_run_remove_pids (grid_run_t *self);

//  Path of a file in the folder, freshly allocated: DIR/relative
char *
    grid_run_path (grid_run_t *self, const char *relative);

//  Write text to DIR/relative through a temporary name.  Returns 0 or -1.
int
    grid_run_write (grid_run_t *self, const char *relative,
                    const char *text);

//  Read a whole file, at most max_size bytes, into a fresh string, or NULL
//  when it is missing, unreadable or larger.  Caller frees.
char *
    grid_run_read_file (const char *path, size_t max_size);

#endif
