/*  =========================================================================
    grid_proc - start, watch and stop the processes of a local virtual grid

    See grid_proc.h.  Everything here is plain POSIX plus procfs where it
    exists; without procfs a live pid is taken at its word.
    =========================================================================
*/
#include "grid_proc.h"

#include <czmq.h>
#include <dirent.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>

extern char **environ;

//  Pipe reads grow the capture buffer by this much at a time.
#define GRID_PROC_CHUNK 4096

//  --------------------------------------------------------------------------
//  Spawn attributes shared by every grid process: its own process group, no
//  blocked signals, and default dispositions for the signals we stop it
//  with.  A shell that runs us in the background ignores SIGINT and SIGQUIT,
//  and that would otherwise be inherited across exec.

static void
s_spawn_attributes (posix_spawnattr_t *attributes)
{
    posix_spawnattr_init (attributes);
    sigset_t none;
    sigemptyset (&none);
    posix_spawnattr_setsigmask (attributes, &none);
    sigset_t defaults;
    sigemptyset (&defaults);
    sigaddset (&defaults, SIGINT);
    sigaddset (&defaults, SIGTERM);
    sigaddset (&defaults, SIGHUP);
    sigaddset (&defaults, SIGQUIT);
    sigaddset (&defaults, SIGPIPE);
    sigaddset (&defaults, SIGCHLD);
    posix_spawnattr_setsigdefault (attributes, &defaults);
    posix_spawnattr_setpgroup (attributes, 0);
    posix_spawnattr_setflags (attributes, POSIX_SPAWN_SETPGROUP
                                        | POSIX_SPAWN_SETSIGMASK
                                        | POSIX_SPAWN_SETSIGDEF);
}


//  --------------------------------------------------------------------------
//  posix_spawn for a path, posix_spawnp for a bare name.  Returns 0 or an
//  errno value, as they do.

static int
s_spawn (pid_t *pid, char *const argv [],
         posix_spawn_file_actions_t *actions)
{
    posix_spawnattr_t attributes;
    s_spawn_attributes (&attributes);
    int rc = strchr (argv [0], '/')
           ? posix_spawn (pid, argv [0], actions, &attributes, argv, environ)
           : posix_spawnp (pid, argv [0], actions, &attributes, argv, environ);
    posix_spawnattr_destroy (&attributes);
    return rc;
}


//  --------------------------------------------------------------------------
//  Start a grid process with its output in a log file

pid_t
grid_proc_spawn (char *const argv [], const char *log_path,
                 char *error, size_t error_size)
{
    assert (argv && argv [0]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init (&actions);
    posix_spawn_file_actions_addopen (&actions, STDIN_FILENO, "/dev/null",
                                      O_RDONLY, 0);
    posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO,
                                      log_path ? log_path : "/dev/null",
                                      O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2 (&actions, STDOUT_FILENO,
                                      STDERR_FILENO);
    pid_t pid = -1;
    int rc = s_spawn (&pid, argv, &actions);
    posix_spawn_file_actions_destroy (&actions);
    if (rc != 0) {
        snprintf (error, error_size, "cannot start %s: %s",
                  argv [0], strerror (rc));
        return -1;
    }
    return pid;
}


//  --------------------------------------------------------------------------
//  Read everything from fd into a fresh string until end of file or the
//  deadline.  Returns the string, or NULL on timeout or read error.

static char *
s_read_all (int fd, int64_t deadline)
{
    size_t size = GRID_PROC_CHUNK;
    size_t used = 0;
    char *buffer = (char *) zmalloc (size);
    while (true) {
        int64_t remaining = deadline - zclock_mono ();
        struct pollfd item = { .fd = fd, .events = POLLIN };
        if (remaining <= 0 || poll (&item, 1, (int) remaining) == 0)
            break;                  //  Timed out
        if (used + GRID_PROC_CHUNK + 1 > size) {
            size *= 2;
            buffer = (char *) realloc (buffer, size);
            assert (buffer);
        }
        ssize_t got = read (fd, buffer + used, GRID_PROC_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        if (got == 0) {
            buffer [used] = 0;
            return buffer;
        }
        used += (size_t) got;
    }
    free (buffer);
    return NULL;
}


//  --------------------------------------------------------------------------
//  Wait for a child until the deadline, then kill its group.  Returns the
//  exit status, or -1 when it was killed or died on a signal.

static int
s_wait_child (pid_t pid, int64_t deadline)
{
    int status = 0;
    while (waitpid (pid, &status, WNOHANG) == 0) {
        if (zclock_mono () >= deadline) {
            kill (-pid, SIGKILL);
            waitpid (pid, &status, 0);
            return -1;
        }
        zclock_sleep (10);
    }
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}


//  --------------------------------------------------------------------------
//  Run a command and capture its output

int
grid_proc_capture (char *const argv [], const char *log_path,
                   int timeout_msec, char **output_p)
{
    assert (argv && argv [0]);
    assert (output_p);
    *output_p = NULL;
    int fds [2];
    if (pipe (fds) != 0)
        return -1;
    fcntl (fds [0], F_SETFD, FD_CLOEXEC);
    fcntl (fds [1], F_SETFD, FD_CLOEXEC);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init (&actions);
    posix_spawn_file_actions_addopen (&actions, STDIN_FILENO, "/dev/null",
                                      O_RDONLY, 0);
    posix_spawn_file_actions_adddup2 (&actions, fds [1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen (&actions, STDERR_FILENO,
                                      log_path ? log_path : "/dev/null",
                                      O_WRONLY | O_CREAT | O_APPEND, 0644);
    pid_t pid = -1;
    int rc = s_spawn (&pid, argv, &actions);
    posix_spawn_file_actions_destroy (&actions);
    close (fds [1]);
    if (rc != 0) {
        close (fds [0]);
        return -1;
    }
    int64_t deadline = zclock_mono () + timeout_msec;
    char *output = s_read_all (fds [0], deadline);
    close (fds [0]);
    if (!output) {
        s_wait_child (pid, 0);      //  Kills it: it overran its time
        return -1;
    }
    int status = s_wait_child (pid, deadline);
    if (status < 0) {
        free (output);
        return -1;
    }
    *output_p = output;
    return status;
}


//  --------------------------------------------------------------------------
//  State letter of a process from /proc/PID/stat ("pid (comm) S ..."), or
//  0 when it cannot be read.  comm may hold spaces and parentheses, so the
//  state follows the last ')'.

static char
s_proc_state (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return 0;
    char line [512];
    char *got = fgets (line, sizeof line, file);
    fclose (file);
    char *close_paren = got ? strrchr (line, ')') : NULL;
    return close_paren && close_paren [1] == ' ' ? close_paren [2] : 0;
}


//  --------------------------------------------------------------------------
//  True if the command line of pid mentions "jace-"

static bool
s_proc_is_ours (pid_t pid)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
    FILE *file = fopen (path, "r");
    if (!file)
        return false;
    char line [4096];
    size_t size = fread (line, 1, sizeof line - 1, file);
    fclose (file);
    for (size_t index = 0; index < size; index++)
        if (line [index] == 0)
            line [index] = ' ';
    line [size] = 0;
    return strstr (line, "jace-") != NULL;
}


//  --------------------------------------------------------------------------
//  Find the grid processes that name a file in a run folder

//  Whole file into buffer (at most size - 1 bytes); returns the length
//  read, 0 when it cannot be read.
static size_t
s_read_file (const char *path, char *buffer, size_t size)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return 0;
    size_t length = fread (buffer, 1, size - 1, file);
    fclose (file);
    buffer [length] = 0;
    return length;
}

//  path made absolute against cwd (when relative) and cleared of "//",
//  "/./" and "/../" by its text alone, into out: the path of something
//  that may no longer exist, which realpath cannot resolve.  False if it
//  does not fit.
static bool
s_lexical_path (const char *path, const char *cwd, char *out, size_t size)
{
    char joined [2 * PATH_MAX + 2];
    int length = *path == '/'
               ? snprintf (joined, sizeof joined, "%s", path)
               : snprintf (joined, sizeof joined, "%s/%s", cwd, path);
    if (length < 0 || (size_t) length >= sizeof joined || size < 2)
        return false;
    size_t used = 0;
    out [used] = 0;
    char *cursor = joined, *part;
    while ((part = strsep (&cursor, "/"))) {
        if (*part == 0 || streq (part, "."))
            continue;
        if (streq (part, "..")) {
            char *slash = strrchr (out, '/');
            used = slash ? (size_t) (slash - out) : 0;
            out [used] = 0;
            continue;
        }
        if (used + strlen (part) + 2 > size)
            return false;
        out [used++] = '/';
        strcpy (out + used, part);
        used += strlen (part);
    }
    if (used == 0)
        strcpy (out, "/");
    return true;
}

//  pid's working folder into cwd (size PATH_MAX), or false.  A folder
//  since deleted reads "PATH (deleted)": PATH is where it was.
static bool
s_proc_cwd (pid_t pid, char *cwd)
{
    char link [64];
    snprintf (link, sizeof link, "/proc/%d/cwd", (int) pid);
    ssize_t length = readlink (link, cwd, PATH_MAX - 1);
    if (length <= 0)
        return false;
    cwd [length] = 0;
    const char *deleted = " (deleted)";
    size_t tail = strlen (deleted);
    if ((size_t) length > tail && streq (cwd + length - tail, deleted))
        cwd [length - tail] = 0;
    return true;
}

//  True if argument names something under folder (a real path ending in
//  '/'), read from pid's working folder when it is relative.  A file not
//  made yet is placed by the real path of its folder; one whose folder is
//  gone (a run folder deleted under its grid) by its text.
static bool
s_names_file_under (pid_t pid, const char *argument, const char *folder)
{
    char cwd [PATH_MAX] = "/";
    if (*argument != '/' && !s_proc_cwd (pid, cwd))
        return false;
    char path [2 * PATH_MAX + 2];
    snprintf (path, sizeof path, "%s%s%s", *argument == '/' ? "" : cwd,
              *argument == '/' ? "" : "/", argument);
    char real [PATH_MAX];
    if (!realpath (path, real)) {
        char *slash = strrchr (path, '/');
        if (!slash || slash == path)
            return false;
        *slash = 0;
        if (!realpath (path, real)) {
            *slash = '/';
            if (!s_lexical_path (path, "/", real, sizeof real))
                return false;
        }
        else {
            if (strlen (real) + strlen (slash + 1) + 2 > sizeof real)
                return false;
            strcat (real, "/");
            strcat (real, slash + 1);
        }
    }
    size_t prefix = strlen (folder);
    return strncmp (real, folder, prefix) == 0 && real [prefix] != 0;
}

//  The command line of pid (arguments separated by NULs) into line, and
//  its length, if pid runs a daemon or super-node binary; 0 otherwise, or
//  when it does not fit.
static size_t
s_grid_cmdline (pid_t pid, char *line, size_t line_size)
{
    char path [64];
    snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
    size_t size = s_read_file (path, line, line_size);
    if (size == 0 || size >= line_size - 1)
        return 0;
    const char *name = strrchr (line, '/') ? strrchr (line, '/') + 1 : line;
    if (!strstr (name, "jace-daemon") && !strstr (name, "jace-supernode"))
        return 0;
    return size;
}

//  The next process of an opendir ("/proc") walk that is alive (not a
//  zombie) and not us, or 0 when the walk is over.
static pid_t
s_next_live_pid (DIR *proc)
{
    struct dirent *entry;
    while ((entry = readdir (proc))) {
        char *end;
        long pid = strtol (entry->d_name, &end, 10);
        if (*end || pid <= 0 || pid == (long) getpid ())
            continue;
        char state = s_proc_state ((pid_t) pid);
        if (state != 0 && state != 'Z' && state != 'X' && state != 'x')
            return (pid_t) pid;
    }
    return 0;
}

//  True if pid runs a daemon or super-node binary with an argument under
//  folder.
static bool
s_is_grid_member (pid_t pid, const char *folder)
{
    char line [8192];
    size_t size = s_grid_cmdline (pid, line, sizeof line);
    if (size == 0)
        return false;
    for (size_t at = strlen (line) + 1; at < size; at += strlen (line + at) + 1)
        if (s_names_file_under (pid, line + at, folder))
            return true;
    return false;
}

size_t
grid_proc_find_members (const char *dir, pid_t *found, size_t capacity)
{
    assert (dir);
    char real [PATH_MAX], cwd [PATH_MAX];
    DIR *proc = opendir ("/proc");
    //  A run folder deleted under its grid is found by its path's text
    //  (not an empty one: that would name every grid under our folder)
    bool named = realpath (dir, real)
              || (*dir && errno == ENOENT && getcwd (cwd, sizeof cwd)
                  && s_lexical_path (dir, cwd, real, sizeof real));
    if (!named || strlen (real) + 2 > sizeof real || !proc) {
        if (proc)
            closedir (proc);
        return 0;
    }
    if (!streq (real, "/"))
        strcat (real, "/");
    size_t count = 0;
    pid_t pid;
    while (count < capacity && (pid = s_next_live_pid (proc)))
        if (s_is_grid_member (pid, real))
            found [count++] = pid;
    closedir (proc);
    return count;
}


//  --------------------------------------------------------------------------
//  Find the grid processes whose run folder is gone

//  True if pid runs a daemon or super-node binary whose --platform file's
//  folder no longer exists; that folder goes into folder (PATH_MAX).
static bool
s_is_orphan (pid_t pid, char *folder)
{
    char line [8192];
    size_t size = s_grid_cmdline (pid, line, sizeof line);
    if (size == 0)
        return false;
    const char *platform = NULL;
    for (size_t at = strlen (line) + 1; at < size; at += strlen (line + at) + 1)
        if (streq (line + at, "--platform")
        &&  at + strlen (line + at) + 1 < size)
            platform = line + at + strlen (line + at) + 1;
    char cwd [PATH_MAX] = "/";
    if (!platform || (*platform != '/' && !s_proc_cwd (pid, cwd))
    ||  !s_lexical_path (platform, cwd, folder, PATH_MAX))
        return false;
    char *slash = strrchr (folder, '/');
    if (slash == folder)
        return false;           //  A file at the root: no run folder
    *slash = 0;
    struct stat info;
    return stat (folder, &info) != 0 && errno == ENOENT;
}

size_t
grid_proc_find_orphans (grid_proc_orphan_t *found, size_t capacity)
{
    DIR *proc = opendir ("/proc");
    if (!proc)
        return 0;
    size_t count = 0;
    pid_t pid;
    while (count < capacity && (pid = s_next_live_pid (proc))) {
        //  Only our own user's: root may signal anyone's, and another
        //  user's grid is not ours to sweep
        char path [64];
        struct stat info;
        snprintf (path, sizeof path, "/proc/%d", (int) pid);
        if (stat (path, &info) == 0 && info.st_uid == geteuid ()
        &&  s_is_orphan (pid, found [count].folder))
            found [count++].pid = pid;
    }
    closedir (proc);
    return count;
}


//  --------------------------------------------------------------------------
//  Is a recorded grid process still running?

bool
grid_proc_is_alive (pid_t pid)
{
    if (pid <= 0)
        return false;
    if (kill (pid, 0) != 0 && errno != EPERM)
        return false;
    //  Without procfs we cannot look closer.
    if (access ("/proc/self/stat", R_OK) != 0)
        return true;
    char state = s_proc_state (pid);
    if (state == 0 || state == 'Z' || state == 'X' || state == 'x')
        return false;
    return s_proc_is_ours (pid);
}


//  --------------------------------------------------------------------------
//  Signal a grid process and the processes it started

int
grid_proc_signal (pid_t pid, int signum)
{
    if (pid <= 0)
        return -1;
    if (kill (-pid, signum) == 0)
        return 0;
    return kill (pid, signum) == 0 ? 0 : -1;
}


//  --------------------------------------------------------------------------
//  Reap one child of ours if it has ended

bool
grid_proc_has_ended (pid_t pid, char *reason, size_t reason_size)
{
    int status = 0;
    if (waitpid (pid, &status, WNOHANG) != pid)
        return false;
    if (WIFEXITED (status))
        snprintf (reason, reason_size, "exited with status %d",
                  WEXITSTATUS (status));
    else
    if (WIFSIGNALED (status))
        snprintf (reason, reason_size, "was killed by signal %d (%s)",
                  WTERMSIG (status), strsignal (WTERMSIG (status)));
    else
        snprintf (reason, reason_size, "ended");
    return true;
}


//  --------------------------------------------------------------------------
//  Reap every ended child

void
grid_proc_reap_children (void)
{
    while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
}


//  --------------------------------------------------------------------------
//  Close-on-exec for everything above stderr

void
grid_proc_close_inherited_fds (void)
{
    DIR *fd_dir = opendir ("/proc/self/fd");
    if (!fd_dir) {
        //  No procfs: the usual descriptor range is enough.
        for (int fd = STDERR_FILENO + 1; fd < 1024; fd++)
            fcntl (fd, F_SETFD, FD_CLOEXEC);
        return;
    }
    struct dirent *entry;
    while ((entry = readdir (fd_dir)) != NULL) {
        int fd = atoi (entry->d_name);
        if (fd > STDERR_FILENO && fd != dirfd (fd_dir))
            fcntl (fd, F_SETFD, FD_CLOEXEC);
    }
    closedir (fd_dir);
}
