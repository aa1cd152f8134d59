/*  =========================================================================
    test_runtime_process - a Jace process that dies of a bug says so

    A child process set up as every Jace binary is (jace_process_init)
    dies of a signal: its stderr, which is the daemon's log, must name the
    signal and its pid and give the stack, and it must still die of that
    signal (exit statuses and cores are what they were).  Sanitizer builds
    keep the sanitizers' own reports, and skip these checks.
    =========================================================================
*/
#include "jace_process.h"
#include "tap.h"

#include <assert.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum { DIE_BY_RAISE, DIE_BY_NULL_WRITE, DIE_BY_ASSERT } death_t;

typedef struct {
    int signal;                 //  What ended it, or 0 if it exited
    pid_t pid;
    char err [8192];            //  Its whole stderr
} ended_t;

static void
s_die (death_t how)
{
    jace_process_init ("probe");
    if (how == DIE_BY_RAISE)
        raise (SIGSEGV);
    else
    if (how == DIE_BY_NULL_WRITE) {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1;
    }
    else {
        volatile int zero = 0;
        assert (zero == 1);
    }
    _exit (0);
}

//  Run s_die (how) in a child, collecting its stderr and its end.
static ended_t
s_run (death_t how)
{
    ended_t ended = { 0 };
    int fds [2];
    if (pipe (fds))
        return ended;
    ended.pid = fork ();
    if (ended.pid == 0) {
        close (fds [0]);
        dup2 (fds [1], STDERR_FILENO);
        s_die (how);
    }
    close (fds [1]);
    size_t size = 0;
    ssize_t got;
    while (size < sizeof ended.err - 1
       && (got = read (fds [0], ended.err + size,
                       sizeof ended.err - 1 - size)) > 0)
        size += (size_t) got;
    close (fds [0]);
    int status = 0;
    waitpid (ended.pid, &status, 0);
    ended.signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
    return ended;
}

//  True if err names the signal and pid, then gives at least one frame.
static bool
s_said (const ended_t *ended, const char *name)
{
    char words [128];
    snprintf (words, sizeof words, "F: (probe) killed by %s, pid %d; its "
              "stack:\n", name, (int) ended->pid);
    const char *at = strstr (ended->err, words);
    if (!at)
        diag ("its stderr: %s", ended->err);
    return at && strlen (at + strlen (words)) > 0;
}

//  Endpoints on the command line: a mistyped one is bad usage at once.
static void
s_test_endpoints (void)
{
    ok (jace_process_parse_endpoint ("probe", "--peer",
                                     "tcp://127.0.0.1:7400") == 0,
        "tcp://HOST:PORT is an endpoint");
    ok (jace_process_parse_endpoint ("probe", "--peer", "tcp://[::1]:7400")
        == 0 && jace_process_parse_endpoint ("probe", "--peer",
                                             "ipc:///tmp/sn") == 0,
        "an IPv6 host and ipc://PATH are endpoints");
    ok (jace_process_parse_endpoint ("probe", "--peer", "garbage") == -1,
        "a word is not");
    ok (jace_process_parse_endpoint ("probe", "--peer", "tcp://host") == -1
        && jace_process_parse_endpoint ("probe", "--peer", "tcp://:7400")
           == -1,
        "nor is a host without its port, or a port without its host");
    ok (jace_process_parse_endpoint ("probe", "--peer", "tcp://h:0") == -1
        && jace_process_parse_endpoint ("probe", "--peer", "tcp://h:65536")
           == -1
        && jace_process_parse_endpoint ("probe", "--peer", "tcp://h:*")
           == -1,
        "nor port 0, 65536 or * (binding's wildcard, not a peer's)");
    ok (jace_process_parse_endpoint ("probe", "--peer", "udp://h:1") == -1,
        "nor another transport");
}

int
main (void)
{
    tap_plan (6 + 6);
    s_test_endpoints ();
#if defined (__SANITIZE_ADDRESS__)
    for (int check = 0; check < 6; check++)
        ok (true, "# SKIP sanitizer builds keep the sanitizers' reports");
    return tap_done ();
#else
    ended_t ended = s_run (DIE_BY_RAISE);
    is_int (ended.signal, SIGSEGV, "a process sent SIGSEGV still dies of it");
    ok (s_said (&ended, "SIGSEGV"),
        "and its log names the signal and its pid, then its stack");

    ended = s_run (DIE_BY_NULL_WRITE);
    is_int (ended.signal, SIGSEGV, "a write through NULL dies of SIGSEGV");
    ok (s_said (&ended, "SIGSEGV"), "and says so, with the stack");

    ended = s_run (DIE_BY_ASSERT);
    is_int (ended.signal, SIGABRT, "a failed assertion dies of SIGABRT");
    ok (s_said (&ended, "SIGABRT")
        && strstr (ended.err, "Assertion") != NULL,
        "and the log has the assertion, then the signal and the stack");
    return tap_done ();
#endif
}
