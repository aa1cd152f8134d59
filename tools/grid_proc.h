/*  =========================================================================
    grid_proc - start, watch and stop the processes of a local virtual grid

    The launcher (jace-grid) uses these helpers to run super-nodes, daemons
    and the spawner's `nodes` query as real processes.  Processes start
    with posix_spawn, never with a bare fork: a parent that has ever used
    ZeroMQ is multithreaded, and only exec is safe in its child.  Each grid
    process leads its own process group, so a signal reaches whatever it
    started too, and a terminal's Ctrl-C reaches only the launcher.
    =========================================================================
*/
#ifndef JACE_GRID_PROC_H_INCLUDED
#define JACE_GRID_PROC_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <sys/types.h>

//  Start argv (argv[0] a path, or a bare name looked up in PATH) in its own
//  process group, with stdin from /dev/null and stdout and stderr appended
//  to log_path (or to /dev/null when log_path is NULL).  Returns the pid,
//  or -1 with a one-line reason in error.
pid_t
    grid_proc_spawn (char *const argv [], const char *log_path,
                     char *error, size_t error_size);

//  Run argv to completion with stdout captured into a fresh string
//  (*output_p, freed by the caller) and stderr appended to log_path.  Kills
//  it when it runs longer than timeout_msec.  Returns its exit status, or
//  -1 when it could not start, died on a signal or timed out.
int
    grid_proc_capture (char *const argv [], const char *log_path,
                       int timeout_msec, char **output_p);

//  True if pid names a running process (not a zombie) that looks like one
//  of ours: its command line mentions "jace-".  Guards against a recorded
//  pid that the system has since given to somebody else.
bool
    grid_proc_is_alive (pid_t pid);

//  The live daemons and super-nodes whose command line names a file under
//  dir (the real path, relative arguments read from each one's working
//  folder), at most capacity of them, into found.  Returns how many.  A
//  launcher killed between starting a process and recording its pid
//  leaves one that only this finds.  Empty without procfs.
size_t
    grid_proc_find_members (const char *dir, pid_t *found, size_t capacity);

//  A daemon or super-node whose run folder is gone
typedef struct {
    pid_t pid;
    char folder [PATH_MAX];     //  The folder its --platform file was in
} grid_proc_orphan_t;

//  The live daemons and super-nodes of this user whose --platform file's
//  folder no longer exists (jace-grid passes RUN/platform: a run folder
//  deleted before `jace-grid stop`), at most capacity of them, into
//  found.  Returns how many.  Empty without procfs.
size_t
    grid_proc_find_orphans (grid_proc_orphan_t *found, size_t capacity);

//  Send a signal to pid's process group, and to pid itself if it has left
//  it.  Returns 0, or -1 if the process is gone.
int
    grid_proc_signal (pid_t pid, int signum);

//  If pid is our child and has ended, reap it, store a short description
//  of how it ended in reason, and return true.
bool
    grid_proc_has_ended (pid_t pid, char *reason, size_t reason_size);

//  Reap every ended child of ours, so they do not linger as zombies.
void
    grid_proc_reap_children (void);

//  Mark every file descriptor above stderr close-on-exec, so that grid
//  processes do not hold open the pipes of whoever started the launcher
//  (a shell's $(...), make's jobserver) long after it exits.
void
    grid_proc_close_inherited_fds (void);

#endif
