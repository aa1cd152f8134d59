/*  =========================================================================
    test_spawner_report - the post-job report, from event logs

    Small logs written here, each with figures worked out by hand: a crash
    recovered from a checkpoint, failures with no crash event, from the
    initial state, never restored and never detected, a recovery cut short
    by a second failure, and malformed logs that must fail with
    "FILE:LINE: reason".  The plot is checked twice: the script piped to a
    stand-in gnuplot (marks, data and quoting, with or without gnuplot
    installed), then real PNG and SVG files when gnuplot is installed.
    Everything lives in a temporary directory removed at the end.
    =========================================================================
*/
#include "spawner_report.h"
#include "tap.h"

#include <czmq.h>
#include <signal.h>

#define JOB "\"job\":\"job-0000abcd\""

//  The start of a line of the job's log, up to the event's own members
#define EVENT(name, time) "{\"event\":\"" name "\",\"time\":" time "," JOB

//  A crash on purpose, detected, replaced, restored from a checkpoint:
//  task 1 reached iteration 55 before detection and came back at 40.
static const char *recovered_log =
    EVENT ("submit", "0.000") ",\"wall\":1700000000.0}\n"
    EVENT ("lease", "0.002") ",\"daemons\":4,\"wanted\":3}\n"
    EVENT ("assign", "0.003") ",\"task\":0,\"daemon\":\"d1\","
        "\"cluster\":\"a\",\"power\":1.0,\"rows\":100,\"future\":{\"x\":[1]}}\n"
    EVENT ("start", "0.010") ",\"tasks\":3,"
        "\"status\":\"tcp://127.0.0.1:1\"}\n"
    EVENT ("progress", "1.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":10,\"change\":1e-1,\"state\":0}\n"
    EVENT ("progress", "1.001") ",\"task\":1,\"daemon\":\"d2\","
        "\"iteration\":12,\"change\":2e-1,\"state\":0}\n"
    EVENT ("progress", "1.001") ",\"task\":2,\"daemon\":\"d3\","
        "\"iteration\":11,\"change\":-1,\"state\":0}\n"
    EVENT ("verification", "1.500") ",\"snapshot\":1,"
        "\"residual\":1e-2,\"passed\":false}\n"
    "\n"
    EVENT ("progress", "2.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":50,\"change\":1e-4,\"state\":0}\n"
    EVENT ("progress", "2.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"iteration\":55,\"change\":1e-3,\"state\":0}\n"
    EVENT ("crash", "2.500") ",\"task\":1,\"daemon\":\"d2\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("telemetry", "2.600") ",\"anything\":true}\n"
    EVENT ("progress", "3.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":70,\"change\":1e-5,\"state\":0}\n"
    EVENT ("progress", "3.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"iteration\":55,\"change\":1e-3,\"state\":0}\n"
    EVENT ("dead", "3.600") ",\"task\":1,\"daemon\":\"d2\","
        "\"silent_ms\":1200}\n"
    EVENT ("replace", "3.700") ",\"task\":1,\"daemon\":\"d4\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.100}\n"
    EVENT ("restart", "3.750") ",\"task\":1,\"daemon\":\"d4\","
        "\"epoch\":2}\n"
    EVENT ("restored", "4.000") ",\"task\":1,\"daemon\":\"d4\","
        "\"epoch\":2,\"from\":\"checkpoint\",\"iteration\":40,\"holder\":2,"
        "\"fetch_ms\":150.0}\n"
    EVENT ("progress", "4.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":90,\"change\":1e-7,\"state\":1}\n"
    EVENT ("verification", "5.000") ",\"snapshot\":2,"
        "\"residual\":1e-9,\"passed\":true}\n"
    EVENT ("result", "5.100") ",\"seconds\":5.100,"
        "\"tasks\":3,\"iterations_min\":60,\"iterations_max\":120,"
        "\"unknowns\":300,\"replacements\":1,\"tolerance\":1.000e-08,"
        "\"residual\":1.000e-09}\n";

//  A failed job: task 0 dies silently (no crash event; last heard 1 s
//  before detection) and restarts from scratch; task 2's checkpoint is
//  newer than its last progress; task 1 is never restored; task 3's
//  crash is never detected.
static const char *failed_log =
    EVENT ("progress", "1.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":30,\"change\":1e-2,\"state\":0}\n"
    EVENT ("progress", "1.000") ",\"task\":2,\"daemon\":\"d3\","
        "\"iteration\":40,\"change\":1e-2,\"state\":0}\n"
    EVENT ("crash", "2.000") ",\"task\":2,\"daemon\":\"d3\","
        "\"how\":\"kill\"}\n"
    EVENT ("dead", "2.800") ",\"task\":2,\"daemon\":\"d3\","
        "\"silent_ms\":700}\n"
    EVENT ("replace", "2.900") ",\"task\":2,\"daemon\":\"d6\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.1}\n"
    EVENT ("dead", "3.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"silent_ms\":1000}\n"
    EVENT ("restored", "3.100") ",\"task\":2,\"daemon\":\"d6\","
        "\"epoch\":2,\"from\":\"checkpoint\",\"iteration\":45,\"holder\":0,"
        "\"fetch_ms\":50}\n"
    EVENT ("replace", "3.200") ",\"task\":0,\"daemon\":\"d5\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.2}\n"
    EVENT ("restored", "3.500") ",\"task\":0,\"daemon\":\"d5\","
        "\"epoch\":2,\"from\":\"initial\",\"iteration\":0,\"holder\":-1,"
        "\"fetch_ms\":0}\n"
    EVENT ("dead", "4.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"silent_ms\":900}\n"
    EVENT ("replace", "4.100") ",\"task\":1,\"daemon\":\"d7\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.1}\n"
    EVENT ("crash", "5.000") ",\"task\":3,\"daemon\":\"d4\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("failure", "6.000") ",\"reason\":\"daemon d9 "
        "refused task 1: busy\"}\n";

//  Task 1's replacement d4 crashes before the restore; d5 restores it.  A
//  kill of d2, already crashed, is the same failure.  A new spawner
//  resumes the job in between.
static const char *interrupted_log =
    EVENT ("crash", "2.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("crash", "2.200") ",\"task\":1,\"daemon\":\"d2\","
        "\"how\":\"kill\"}\n"
    EVENT ("dead", "3.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"silent_ms\":1000}\n"
    EVENT ("replace", "3.100") ",\"task\":1,\"daemon\":\"d4\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.1}\n"
    EVENT ("crash", "3.200") ",\"task\":1,\"daemon\":\"d4\","
        "\"how\":\"kill\"}\n"
    EVENT ("resume", "3.500") ",\"tasks\":2}\n"
    EVENT ("dead", "4.000") ",\"task\":1,\"daemon\":\"d4\","
        "\"silent_ms\":800}\n"
    EVENT ("replace", "4.100") ",\"task\":1,\"daemon\":\"d5\","
        "\"cluster\":\"a\",\"epoch\":3,\"seconds\":0.1}\n"
    EVENT ("restored", "4.500") ",\"task\":1,\"daemon\":\"d5\","
        "\"epoch\":3,\"from\":\"checkpoint\",\"iteration\":20,\"holder\":0,"
        "\"fetch_ms\":100}\n";

//  Three daemons crashed at once (a rack lost), detected together,
//  restored close together; then the job fails.
static const char *coincident_log =
    EVENT ("progress", "1.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"iteration\":30,\"change\":1e-2,\"state\":0}\n"
    EVENT ("crash", "2.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("crash", "2.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("crash", "2.010") ",\"task\":2,\"daemon\":\"d3\","
        "\"how\":\"scheduled\"}\n"
    EVENT ("dead", "3.000") ",\"task\":0,\"daemon\":\"d1\","
        "\"silent_ms\":1000}\n"
    EVENT ("dead", "3.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"silent_ms\":1000}\n"
    EVENT ("dead", "3.000") ",\"task\":2,\"daemon\":\"d3\","
        "\"silent_ms\":1000}\n"
    EVENT ("restored", "3.500") ",\"task\":0,\"daemon\":\"d4\","
        "\"epoch\":2,\"from\":\"initial\",\"iteration\":0,"
        "\"holder\":-1,\"fetch_ms\":0}\n"
    EVENT ("restored", "3.510") ",\"task\":1,\"daemon\":\"d5\","
        "\"epoch\":2,\"from\":\"initial\",\"iteration\":0,"
        "\"holder\":-1,\"fetch_ms\":0}\n"
    EVENT ("failure", "8.000") ",\"reason\":\"no daemon for task 2: "
        "the grid has none free\"}\n";

//  One malformed log and the reason expected after its path
typedef struct {
    const char *name;           //  What is wrong, as the check's name
    const char *content;        //  Log content
    const char *expected;       //  Expected reason after the path
} malformed_case_t;

static const malformed_case_t malformed_cases [] = {
    { "a truncated line",
      EVENT ("lease", "0.1") "}\n{\"event\":\"lease\",\n",
      ":2: not valid JSON (column 19)" },
    { "garbage after the object",
      EVENT ("lease", "0.1") "} x\n",
      ":1: not valid JSON (column 51)" },
    { "a JSON array", "\n[1,2,3]\n", ":2: not a JSON object" },
    { "a bare number", "42\n", ":1: not a JSON object" },
    { "a line without an event", "{\"time\":1.0," JOB "}\n",
      ":1: no \"event\"" },
    { "an event name that is a number", "{\"event\":7,\"time\":1.0}\n",
      ":1: \"event\" is not a string" },
    { "a line without a time", "{\"event\":\"lease\"," JOB "}\n",
      ":1: \"lease\" event without \"time\"" },
    { "a time that is a string",
      "{\"event\":\"lease\",\"time\":\"soon\"," JOB "}\n",
      ":1: \"lease\" event: \"time\" is not a finite number" },
    { "a dead event without a task",
      EVENT ("dead", "1.0") ",\"daemon\":\"d1\"}\n",
      ":1: \"dead\" event without \"task\"" },
    { "a negative task",
      EVENT ("crash", "1.0") ",\"task\":-1}\n",
      ":1: \"crash\" event: \"task\" is not a task number" },
    { "a fractional iteration",
      EVENT ("progress", "1.0") ",\"task\":0,"
      "\"iteration\":1.5}\n",
      ":1: \"progress\" event: \"iteration\" is not an integer" },
    { "a verification passed as a string",
      EVENT ("verification", "1.0") ",\"residual\":1e-3,"
      "\"passed\":\"yes\"}\n",
      ":1: \"verification\" event: \"passed\" is not true or false" },
    { "lines of two jobs",
      "{\"event\":\"lease\",\"time\":0.1,\"job\":\"job-a\"}\n"
      "{\"event\":\"lease\",\"time\":0.2,\"job\":\"job-b\"}\n",
      ":2: job job-b, but the lines before are job job-a" },
};

//  Two rebalances (the second cut short by the job's end) and a drain of
//  cluster b that ended: each a line of the rows' history.
static const char *moves_log =
    EVENT ("start", "0.010") ",\"tasks\":2,\"status\":\"tcp://127.0.0.1:1\"}\n"
    EVENT ("rebalance_plan", "1.500") ",\"trigger\":\"auto\","
        "\"old_rows\":[50,50],\"new_rows\":[80,20],"
        "\"usecs_per_iteration\":[10,40],\"drift\":1.5,\"threshold\":0.25,"
        "\"step\":1.00,\"why\":\"x\"}\n"
    EVENT ("rebalance_done", "2.750") ",\"seconds\":1.250,"
        "\"rows\":[80,20],\"iteration\":5}\n"
    EVENT ("drain", "3.000") ",\"cluster\":\"b\",\"tasks\":1}\n"
    EVENT ("drained", "4.000") ",\"cluster\":\"b\",\"tasks\":1,"
        "\"seconds\":1.000,\"steps\":1}\n"
    EVENT ("rebalance_backoff", "4.500") ",\"drift\":1.4,\"cut_drift\":1.5,"
        "\"next_auto_seconds\":9.0}\n"
    EVENT ("rebalance_plan", "5.000") ",\"trigger\":\"request\","
        "\"old_rows\":[80,20],\"new_rows\":[70,30],"
        "\"usecs_per_iteration\":[10,20],\"drift\":0.5,\"threshold\":0.25,"
        "\"step\":0.50,\"why\":\"x\"}\n"
    EVENT ("failure", "5.500") ",\"reason\":\"cancelled\"}\n";

//  ---------------------------------------------------------------------
//  Helpers

static void
s_write (const char *path, const char *content)
{
    FILE *file = fopen (path, "w");
    assert (file);
    fputs (content, file);
    fclose (file);
}

//  The whole file as a string (caller frees), or NULL
static char *
s_read (const char *path)
{
    FILE *file = fopen (path, "r");
    if (!file)
        return NULL;
    char *text = NULL;
    size_t size = 0;
    FILE *copy = open_memstream (&text, &size);
    int c;
    while ((c = fgetc (file)) != EOF)
        fputc (c, copy);
    fclose (copy);
    fclose (file);
    return text;
}

//  Bytes in the file, or -1 if it does not exist
static long
s_size (const char *path)
{
    struct stat info;
    return stat (path, &info) == 0 ? (long) info.st_size : -1;
}

//  Run the report on a log holding content; returns the text (caller
//  frees) and the return code, reason when it fails.
static char *
s_report (const char *dir, const char *content, const char *plot, int *rc,
          char *reason, size_t reason_size)
{
    char path [512];
    snprintf (path, sizeof path, "%s/job.events", dir);
    s_write (path, content);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    *reason = 0;
    *rc = spawner_report_write (path, out, plot, reason, reason_size);
    fclose (out);
    unlink (path);
    return text;
}

//  Check two strings are equal
static bool
is_string (const char *got, const char *want, const char *name)
{
    bool passed = ok (got && streq (got, want), name);
    if (!passed)
        diag ("  got '%s', want '%s'", got ? got : "(null)", want);
    return passed;
}

//  Check text holds needle
static bool
has (const char *text, const char *needle, const char *name)
{
    bool passed = ok (text && strstr (text, needle), name);
    if (!passed)
        diag ("  '%s' not in:\n%s", needle, text ? text : "(null)");
    return passed;
}

//  How many times needle is in text
static int
s_count (const char *text, const char *needle)
{
    int count = 0;
    for (const char *at = text; at && (at = strstr (at, needle)); at++)
        count++;
    return count;
}

//  Columns of the table, per failure row
enum {
    COLUMN_TASK, COLUMN_DAEMON, COLUMN_CRASHED, COLUMN_DETECTED,
    COLUMN_DELAY, COLUMN_REPLACED, COLUMN_RESTORED, COLUMN_ITERATIONS,
    COLUMN_LOST, COLUMN_STATE, COLUMN_COUNT
};

//  The cells of the failure row of daemon (the state: the rest of the
//  line); false if the text has no such row
static bool
s_row (const char *text, const char *daemon,
       char cells [COLUMN_COUNT][128])
{
    for (const char *line = text; line && *line;) {
        const char *next = strchr (line, '\n');
        size_t length = next ? (size_t) (next - line) : strlen (line);
        char copy [512];
        snprintf (copy, sizeof copy, "%.*s", (int) length, line);
        int column = 0, consumed = 0, offset = 0;
        while (column < COLUMN_STATE
           &&  sscanf (copy + offset, "%127s%n", cells [column],
                       &consumed) == 1) {
            offset += consumed;
            column++;
        }
        if (column == COLUMN_STATE && streq (cells [COLUMN_DAEMON], daemon)
        &&  isdigit ((unsigned char) cells [COLUMN_TASK][0])) {
            snprintf (cells [COLUMN_STATE], 128, "%s",
                      copy + offset + strspn (copy + offset, " "));
            return true;
        }
        line = next ? next + 1 : NULL;
    }
    return false;
}

//  A stand-in gnuplot: a shell script with this body
static void
s_fake_gnuplot (const char *bin, const char *body)
{
    char path [600];
    snprintf (path, sizeof path, "%s/gnuplot", bin);
    char script [1024];
    snprintf (script, sizeof script, "#!/bin/sh\n%s\n", body);
    s_write (path, script);
    chmod (path, 0755);
}

//  The report of `log` with the plot `name` in dir, drawn by a stand-in
//  gnuplot, first on the PATH, that keeps the script it is given.
//  Returns that script (caller frees); the report's code in *rc and its
//  text in *text_p (caller frees).  Leaves nothing behind in dir.
static char *
s_plot_script (const char *dir, const char *log, const char *name,
               int *rc, char **text_p)
{
    char bin [512], plot [512], script_path [512], body [2048], reason [512];
    snprintf (bin, sizeof bin, "%s/fake", dir);
    mkdir (bin, 0755);
    snprintf (plot, sizeof plot, "%s/%s", dir, name);
    snprintf (script_path, sizeof script_path, "%s/script.gp", dir);
    snprintf (body, sizeof body, "cat > '%s' && echo fake > \"%s\"",
              script_path, plot);
    s_fake_gnuplot (bin, body);
    char *saved_path = strdup (getenv ("PATH"));
    char fake_path [4096];
    snprintf (fake_path, sizeof fake_path, "%s:%s", bin, saved_path);
    setenv ("PATH", fake_path, 1);
    *text_p = s_report (dir, log, plot, rc, reason, sizeof reason);
    setenv ("PATH", saved_path, 1);
    free (saved_path);
    char *script = s_read (script_path);
    unlink (script_path);
    unlink (plot);
    char fake [600];
    snprintf (fake, sizeof fake, "%s/gnuplot", bin);
    unlink (fake);
    rmdir (bin);
    return script;
}

//  ---------------------------------------------------------------------
//  Tests

static void
test_recovered_crash (const char *dir)
{
    char reason [512];
    int rc;
    char *text = s_report (dir, recovered_log, NULL, &rc, reason,
                           sizeof reason);
    is_int (rc, 0, "a log with a recovered crash is read");
    has (text, "job         job-0000abcd\n", "the report names the job");
    has (text, "outcome     verified: residual 1.000e-09 (tolerance "
         "1.000e-08) at 5.100 s\n", "the outcome is the verified residual");
    has (text, "3 tasks, 300 unknowns, 60 to 120 iterations per task, "
         "1 replacement\n", "with the result's figures");
    has (text, "snapshots   2 verified, 1 passed\n",
         "snapshots verified and passed are counted");
    has (text, "failures    1 issued crash, 1 detection, 1 recovery\n",
         "crashes, detections and recoveries are counted");
    char cells [COLUMN_COUNT][128];
    ok (s_row (text, "d2", cells), "the failure of d2 has a row");
    is_string (cells [COLUMN_TASK], "1", "of task 1");
    is_string (cells [COLUMN_CRASHED], "2.500", "crashed at the crash event");
    is_string (cells [COLUMN_DETECTED], "3.600",
               "detected at the dead event");
    is_string (cells [COLUMN_DELAY], "+1.100",
               "the detection delay runs from the crash");
    is_string (cells [COLUMN_REPLACED], "3.700", "replaced at the replace "
               "event");
    is_string (cells [COLUMN_RESTORED], "4.000", "restored at the restored "
               "event");
    is_string (cells [COLUMN_ITERATIONS], "15", "iterations lost: last "
               "progress before detection (55) minus the checkpoint (40)");
    is_string (cells [COLUMN_LOST], "1.500", "time lost runs from the crash "
               "to the restore");
    is_string (cells [COLUMN_STATE], "from checkpoint 40 (copy on task 2)",
               "restored from the checkpoint held by task 2");
    has (text, "time lost   1.500 s over 1 recovered failure (mean 1.500 s)\n",
         "the time lost is totalled");
    has (text, "iterations  15 lost over 1 recovered failure\n",
         "and the iterations lost");
    has (text, "mean split  detection 1.100 s + replacement 0.100 s + fetch "
         "0.150 s + restart 0.150 s\n",
         "the time lost splits into its four phases");
    ok (!strstr (text, "plot"), "no plot line when no plot was asked for");
    free (text);
}

//  A daemon lost while the data went out, before the job started: its
//  replacement gets the task's data again and starts with the others.
//  The report said "never restored" of such a task.
static const char *data_phase_log =
    EVENT ("submit", "0.000") ",\"wall\":1700000000.0}\n"
    EVENT ("assign", "0.003") ",\"task\":0,\"daemon\":\"d1\","
        "\"cluster\":\"a\",\"power\":1.0,\"rows\":100}\n"
    EVENT ("assign", "0.003") ",\"task\":1,\"daemon\":\"d2\","
        "\"cluster\":\"a\",\"power\":1.0,\"rows\":100}\n"
    EVENT ("dead", "1.000") ",\"task\":1,\"daemon\":\"d2\","
        "\"silent_ms\":300}\n"
    EVENT ("replace", "1.010") ",\"task\":1,\"daemon\":\"d3\","
        "\"cluster\":\"a\",\"epoch\":2,\"seconds\":0.010}\n"
    EVENT ("start", "2.000") ",\"tasks\":2,"
        "\"status\":\"tcp://127.0.0.1:1\"}\n"
    EVENT ("verification", "3.000") ",\"snapshot\":1,"
        "\"residual\":1e-9,\"passed\":true}\n"
    EVENT ("result", "3.100") ",\"seconds\":3.100,"
        "\"tasks\":2,\"iterations_min\":60,\"iterations_max\":70,"
        "\"unknowns\":200,\"replacements\":1,\"tolerance\":1.000e-08,"
        "\"residual\":1.000e-09}\n";

static void
test_data_phase_loss (const char *dir)
{
    char reason [512];
    int rc;
    char *text = s_report (dir, data_phase_log, NULL, &rc, reason,
                           sizeof reason);
    has (text, "failures    0 issued crashes, 1 detection, 1 recovery\n",
         "a loss during the data phase is recovered once the job starts");
    char cells [COLUMN_COUNT][128];
    ok (s_row (text, "d2", cells)
        && streq (cells [COLUMN_STATE], "from its data, sent again before "
                  "the job started")
        && streq (cells [COLUMN_RESTORED], "2.000"),
        "its task started from its data, with the others");
    free (text);
}

static void
test_unfinished_recoveries (const char *dir)
{
    char reason [512];
    int rc;
    char *text = s_report (dir, failed_log, NULL, &rc, reason,
                           sizeof reason);
    is_int (rc, 0, "a failed job's log is read");
    has (text, "outcome     failed at 6.000 s: daemon d9 refused task 1: "
         "busy\n", "the outcome is the failure's reason");
    has (text, "failures    2 issued crashes, 3 detections, 2 recoveries\n",
         "a crash without detection and a detection without crash count");
    char cells [COLUMN_COUNT][128];
    ok (s_row (text, "d1", cells), "the silent failure of d1 has a row");
    is_string (cells [COLUMN_CRASHED], "-", "with no crash time");
    is_string (cells [COLUMN_DELAY], "+1.000", "its delay is the silence");
    is_string (cells [COLUMN_LOST], "1.500", "its time lost runs from the "
               "last time it was heard (3.0 - 1.0) to the restore");
    is_string (cells [COLUMN_ITERATIONS], "30", "restarting from the initial "
               "state loses every iteration");
    is_string (cells [COLUMN_STATE], "from the initial state",
               "and says it restarted from the initial state");
    ok (s_row (text, "d3", cells), "the crash of d3 has a row");
    is_string (cells [COLUMN_ITERATIONS], "-", "iterations lost are never "
               "negative: unknown where the copy is newer than the last "
               "progress seen");
    is_string (cells [COLUMN_LOST], "1.100", "its time lost is 3.1 - 2.0");
    ok (s_row (text, "d2", cells), "the unrecovered failure of d2 has a row");
    is_string (cells [COLUMN_REPLACED], "4.100", "it was replaced");
    is_string (cells [COLUMN_LOST], "-", "with no time lost");
    is_string (cells [COLUMN_STATE], "never restored (the job failed at "
               "6.000 s)", "and is listed as never restored");
    ok (s_row (text, "d4", cells), "the undetected crash of d4 has a row");
    is_string (cells [COLUMN_DETECTED], "-", "never detected");
    is_string (cells [COLUMN_STATE], "never detected (the job failed at "
               "6.000 s)", "and is listed as such");
    has (text, "time lost   2.600 s over 2 recovered failures (mean 1.300 s)\n",
         "only recovered failures count in the time lost");
    has (text, "mean split  detection 0.900 s + replacement 0.150 s + fetch "
         "0.025 s + restart 0.225 s\n", "and in its split, which adds up to "
         "the mean time lost");
    const char *d3 = strstr (text, "  d3  ");
    const char *d1 = strstr (text, "  d1  ");
    const char *d2 = strstr (text, "  d2  ");
    ok (d3 && d1 && d2 && d3 < d1 && d1 < d2,
        "failures are listed in the order they began");
    free (text);
}

static void
test_interrupted_recovery (const char *dir)
{
    char reason [512];
    int rc;
    char *text = s_report (dir, interrupted_log, NULL, &rc, reason,
                           sizeof reason);
    is_int (rc, 0, "a log with a recovery cut short is read");
    has (text, "failures    2 issued crashes, 2 detections, 1 recovery\n",
         "a second crash of a crashed daemon is the same failure");
    has (text, "outcome     unfinished: the log ends at 4.500 s with neither "
         "a result nor a failure\n", "a log with no last line is unfinished");
    has (text, "resumed     by a new spawner at 3.500 s\n",
         "the resumption is reported");
    char cells [COLUMN_COUNT][128];
    ok (s_row (text, "d2", cells), "the first failure has a row");
    is_string (cells [COLUMN_CRASHED], "2.000", "at the first crash event");
    is_string (cells [COLUMN_STATE], "never restored before task 1 failed "
               "again", "it is listed as cut short");
    ok (s_row (text, "d4", cells), "the failure of the replacement has a row");
    is_string (cells [COLUMN_LOST], "1.300", "and its own time lost");
    is_string (cells [COLUMN_STATE], "from checkpoint 20 (copy on task 0); "
               "task down since 2.000 s", "and says since when the task "
               "was down");
    has (text, "downtime    2.500 s, counting each task down from the first "
         "of failures in a row (a replacement that failed before it "
         "restored the task)\n", "the downtime counts from the first "
         "crash (2.0 s) to the restore (4.5 s)");
    free (text);
}

static void
test_malformed_logs (const char *dir)
{
    char path [512], expected [1024], reason [1024];
    snprintf (path, sizeof path, "%s/job.events", dir);
    size_t count = sizeof malformed_cases / sizeof *malformed_cases;
    for (size_t index = 0; index < count; index++) {
        int rc;
        char *text = s_report (dir, malformed_cases [index].content, NULL,
                               &rc, reason, sizeof reason);
        snprintf (expected, sizeof expected, "%s%s", path,
                  malformed_cases [index].expected);
        char name [256];
        snprintf (name, sizeof name, "%s fails as FILE:LINE",
                  malformed_cases [index].name);
        ok (rc == -1 && streq (reason, expected) && *text == 0, name);
        if (rc != -1 || !streq (reason, expected))
            diag ("  rc %d, reason '%s', want '%s'", rc, reason, expected);
        free (text);
    }
    snprintf (path, sizeof path, "%s/missing.events", dir);
    FILE *out = fopen ("/dev/null", "w");
    int rc = spawner_report_write (path, out, NULL, reason, sizeof reason);
    fclose (out);
    snprintf (expected, sizeof expected, "%s: No such file or directory",
              path);
    ok (rc == -1 && streq (reason, expected), "a missing log fails with "
        "the file's name and why");
}

static void
test_empty_log (const char *dir)
{
    char reason [512];
    int rc;
    char *text = s_report (dir, "", NULL, &rc, reason, sizeof reason);
    is_int (rc, 0, "an empty log is not an error");
    has (text, "outcome     unknown: the log is empty\n",
         "it is reported as empty");
    free (text);
}

//  The script as a stand-in gnuplot received it, with every mark
static void
test_plot_script (const char *dir)
{
    int rc;
    char *text;
    char *script = s_plot_script (dir, recovered_log, "it's.png", &rc,
                                  &text);
    is_int (rc, 0, "the plot is drawn by the gnuplot on the PATH");
    char line [1024];
    snprintf (line, sizeof line, "plot        %s/it's.png\n", dir);
    has (text, line, "the report names the plot as its last line");
    has (script, "set terminal pngcairo",
         "a .png plot uses pngcairo where gnuplot has it");
    has (script, "set terminal png size", "and png where it does not");
    snprintf (line, sizeof line, "set output '%s/it''s.png'\n", dir);
    has (script, line, "the plot's name is quoted for gnuplot");
    has (script, "set title 'job-0000abcd: ", "the title names the job");
    has (script, "set label 'lost 1.50 s' at first 3.25,",
         "the time lost is written across the shading");
    is_int (s_count (script, "set arrow"), 3,
            "one line per crash, detection and restoration");
    has (script, "set arrow from first 2.5, graph 0 to first 2.5, graph 1",
         "the crash is marked at its time");
    has (script, "set label 'dead 1' at first 3.6,",
         "the detection is labelled with its task");
    has (script, "set label 'restored 1' at first 4,",
         "so is the restoration");
    has (script, "set object rect from first 2.5, graph 0 to first 4, "
         "graph 1", "the time lost is shaded from the crash to the restore");
    has (script, "$residual << EOD\n1.5 0.01 0\n5 1e-09 1\nEOD\n",
         "the residual series holds the verified residuals");
    has (script, "$change << EOD\n1 0.2 0\n2 0.001 0\n3 0.001 0\n4 1e-07 0\n"
         "EOD\n", "the change series holds each round's largest finite "
         "change");
    has (script, "1e-08 with lines", "the tolerance is drawn");
    has (script, "title 'crash'", "the crash lines have a key entry");
    has (script, "title 'time lost'", "so does the shading");
    free (script);
    free (text);

    script = s_plot_script (dir, recovered_log, "plot.SVG", &rc, &text);
    ok (rc == 0 && script && strstr (script, "set terminal svg")
        && !strstr (script, "pngcairo"), "an .svg plot uses the svg terminal");
    free (script);
    free (text);
}

//  Events at the same time share a label; a failed job's end is marked
static void
test_plot_coincident (const char *dir)
{
    int rc;
    char *text;
    char *script = s_plot_script (dir, coincident_log, "coincident.png",
                                  &rc, &text);
    is_int (s_count (script, "set arrow"), 9,
            "a line per crash, detection and restoration, and the end");
    is_int (s_count (script, "set label 'crash"), 1,
            "crashes 10 ms apart share one label...");
    has (script, "set label 'crash 0 1 2' at first 2,",
         "...that names their tasks, at the first");
    is_int (s_count (script, "set label 'dead"), 1,
            "simultaneous detections share one label");
    has (script, "set label 'dead 0 1 2' at first 3,", "naming the tasks");
    has (script, "set label 'restored 0 1' at first 3.5,",
         "restorations close together too");
    ok (strstr (script, "graph 0.98 rotate by 90 right offset character "
                "-0.8") && strstr (script, "graph 0.98 rotate by 90 right "
                "offset character 1.6"), "crash and restoration labels "
        "sit on either side of their lines, never over each other");
    ok (strstr (script, "set label 'lost 1.50 s' at first 2.75, graph 0.50")
        && strstr (script, "set label 'lost 1.51 s' at first 2.755, "
                   "graph 0.30"), "labels of overlapping lost times are "
        "staggered");
    has (script, "set arrow from first 8, graph 0 to first 8, graph 1",
         "a failed job's end is marked at its time");
    has (script, "set label 'job failed: no daemon for task 2: the grid "
         "has none free' at first 8,", "with why it failed");
    has (script, "title 'job failed'", "and a key entry");
    free (script);
    free (text);
    //  A verified job has no such mark
    script = s_plot_script (dir, recovered_log, "coincident.png", &rc, &text);
    ok (script && !strstr (script, "job failed"), "a verified job's end is "
        "not marked as a failure");
    free (script);
    free (text);
}

//  Without gnuplot, or with a gnuplot that fails
static void
test_plot_failures (const char *dir)
{
    char bin [512], plot [512], reason [512];
    snprintf (bin, sizeof bin, "%s/bin", dir);
    mkdir (bin, 0755);
    snprintf (plot, sizeof plot, "%s/plot.png", dir);
    char *saved_path = strdup (getenv ("PATH"));
    char fake_path [4096];
    snprintf (fake_path, sizeof fake_path, "%s:%s", bin, saved_path);

    //  Only an empty directory to search
    setenv ("PATH", bin, 1);
    int rc;
    char *text = s_report (dir, recovered_log, plot, &rc, reason,
                           sizeof reason);
    is_int (rc, 0, "a missing gnuplot is not an error");
    has (text, "plot        skipped: no gnuplot in PATH",
         "the text says why the plot was skipped");
    ok (s_size (plot) == -1, "and no plot is written");
    free (text);

    //  A big log, so that gnuplot dies while we still write to it
    char *big = NULL;
    size_t size = 0;
    FILE *log = open_memstream (&big, &size);
    for (int round = 0; round < 5000; round++)
        fprintf (log, "{\"event\":\"progress\",\"time\":%d.5," JOB ","
                 "\"task\":0,\"iteration\":%d,\"change\":%g}\n", round,
                 round, 1.0 / (round + 1));
    fclose (log);
    s_fake_gnuplot (bin, "exit 3");
    setenv ("PATH", fake_path, 1);
    text = s_report (dir, big, plot, &rc, reason, sizeof reason);
    char expected [1024];
    snprintf (expected, sizeof expected, "%s: gnuplot exited with status 3",
              plot);
    ok (rc == -1 && streq (reason, expected),
        "a failing gnuplot is an error, with its exit status");
    if (rc != -1 || !streq (reason, expected))
        diag ("  rc %d, reason '%s'", rc, reason);
    has (text, "plot        failed: ", "the text says the plot failed");
    sigset_t pending;
    sigpending (&pending);
    ok (!sigismember (&pending, SIGPIPE),
        "a gnuplot that died early leaves no SIGPIPE behind");
    free (text);
    free (big);

    s_fake_gnuplot (bin, "cat > /dev/null");
    text = s_report (dir, recovered_log, plot, &rc, reason, sizeof reason);
    snprintf (expected, sizeof expected, "%s: gnuplot exited with status 0 "
              "but wrote no plot", plot);
    ok (rc == -1 && streq (reason, expected),
        "a gnuplot that writes nothing is an error");
    free (text);

    text = s_report (dir, "{\"event\":\"lease\",\"time\":0.1}\n", plot, &rc,
                     reason, sizeof reason);
    has (text, "plot        skipped: the log has no residual or change to "
         "draw", "a log with nothing to draw skips the plot");
    free (text);
    setenv ("PATH", saved_path, 1);
    free (saved_path);

    snprintf (plot, sizeof plot, "%s/plot.pdf", dir);
    text = s_report (dir, recovered_log, plot, &rc, reason, sizeof reason);
    snprintf (expected, sizeof expected, "%s: unknown plot format; name "
              "the file .png or .svg", plot);
    ok (rc == -1 && streq (reason, expected) && *text == 0,
        "another extension is an error before anything is written");
    free (text);
    char fake [600];
    snprintf (fake, sizeof fake, "%s/gnuplot", bin);
    unlink (fake);
    rmdir (bin);
}

//  Real plots, when gnuplot is installed
static void
test_real_plots (const char *dir, bool installed)
{
    static const char *names [] = { "it's a plot.png", "plot.svg" };
    static const char *magic [] = { "\x89PNG", "<svg" };
    for (int index = 0; index < 2; index++) {
        char plot [512], reason [512], name [256];
        snprintf (plot, sizeof plot, "%s/%s", dir, names [index]);
        snprintf (name, sizeof name, "gnuplot draws %s", names [index]);
        if (!installed) {
            snprintf (name + strlen (name), sizeof name - strlen (name),
                      " # SKIP gnuplot is not installed");
            ok (true, name);
            continue;
        }
        int rc;
        char *text = s_report (dir, recovered_log, plot, &rc, reason,
                               sizeof reason);
        char *content = s_read (plot);
        ok (rc == 0 && s_size (plot) > 0 && content
            && strstr (content, magic [index]), name);
        if (rc != 0)
            diag ("  %s", reason);
        free (content);
        free (text);
        unlink (plot);
    }
}

static bool
s_gnuplot_installed (void)
{
    return system ("command -v gnuplot > /dev/null 2>&1") == 0;
}

static void
test_moves (const char *dir)
{
    int rc;
    char reason [256];
    char *text = s_report (dir, moves_log, NULL, &rc, reason, sizeof reason);
    ok (rc == 0, "a log with rebalances and a drain is read");
    has (text, "rows        rebalance at 1.500 s (auto): 50:50 -> 80:20 "
         "rows, in 1.250 s\n", "a rebalance: when, why, the rows before "
         "and after, how long");
    has (text, "            drain of cluster b at 3.000 s: 1 tasks moved in "
         "1 steps, 1.000 s\n", "a drain: the cluster, its tasks, steps and "
         "time");
    has (text, "            rebalance kept at 4.500 s (auto): drift 1.400 "
         "after a cut on 1.500; next look in 9.0 s\n", "auto backing off: "
         "the drift before and after its cut, and its next look");
    has (text, "            rebalance at 5.000 s (request): 80:20 -> 70:30 "
         "rows, not finished\n", "a rebalance the job's end cut short says "
         "so");
    free (text);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (117);
    const char *base = getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp";
    char dir [256];
    snprintf (dir, sizeof dir, "%s/test_spawner_report.XXXXXX", base);
    if (!mkdtemp (dir)) {
        diag ("cannot create a temporary directory in %s", base);
        return 1;
    }
    test_recovered_crash (dir);
    test_data_phase_loss (dir);
    test_unfinished_recoveries (dir);
    test_interrupted_recovery (dir);
    test_malformed_logs (dir);
    test_empty_log (dir);
    test_moves (dir);
    test_plot_script (dir);
    test_plot_coincident (dir);
    test_plot_failures (dir);
    test_real_plots (dir, s_gnuplot_installed ());
    if (rmdir (dir) != 0)
        diag ("temporary directory %s not empty", dir);
    return tap_done ();
}
