/*  =========================================================================
    test_spawner_resume - a resumed job's daemons must agree on its cut

    The answers to ADOPT are the daemons' ASSIGNs.  A spawner killed while
    it re-assigned a rebalance's tasks can leave some daemons on the new
    cut and some on the old: resuming then would gather an iterate from
    blocks that overlap and leave rows out.  spawner_resume_same_cut
    tells, and spawner_resume_job refuses such answers with the reason.
    Unless only one cut runs: spawner_resume_unstarted_cut releases the
    daemons whose rebalance's task never started, and the job is the
    cut that runs.
    =========================================================================
*/
#include "spawner_resume.h"
#include "tap.h"

//  An ADOPT answer: task `task` of `count`, at `epoch`, with block starts
//  `first` (count + 1 of them, or fewer to leave keys out)
static jace_msg_t *
s_answer (int64_t task, int64_t count, int64_t epoch, const int64_t *first,
          int64_t starts)
{
    jace_msg_t *answer = jace_msg_new (JACE_MSG_ASSIGN);
    jace_msg_set_job (answer, "job-resume");
    jace_msg_set_task (answer, task);
    jace_msg_set_count (answer, count);
    jace_msg_set_epoch (answer, epoch);
    for (int64_t i = 0; i < starts; i++) {
        char key [64], value [32];
        snprintf (key, sizeof key, "block/first/%" PRId64, i);
        snprintf (value, sizeof value, "%" PRId64, first [i]);
        jace_msg_set_param (answer, key, value);
    }
    return answer;
}

static zlist_t *
s_answers (jace_msg_t *one, jace_msg_t *two)
{
    zlist_t *answers = zlist_new ();
    zlist_append (answers, one);
    zlist_append (answers, two);
    return answers;
}

//  Write `text` as job-note's drain note in dir
static void
s_write_note (const char *dir, const char *text)
{
    char *path = zsys_sprintf ("%s/job-note.drain", dir);
    FILE *file = fopen (path, "w");
    assert (file);
    fputs (text, file);
    fclose (file);
    free (path);
}

static void
s_check_drain_note (void)
{
    char dir [] = "/tmp/test_spawner_resume.XXXXXX";
    assert (mkdtemp (dir));
    char cluster [JACE_ID_MAX] = "x", reason [512] = "";
    ok (spawner_resume_drain (dir, "job-note", cluster, reason,
                              sizeof reason) == 0 && *cluster == 0,
        "no note: no drain to carry on");
    ok (spawner_resume_note_drain (dir, "job-note", "site-B", reason,
                                   sizeof reason) == 0
        && spawner_resume_drain (dir, "job-note", cluster, reason,
                                 sizeof reason) == 1
        && streq (cluster, "site-B"),
        "a noted drain reads back as its cluster");
    char *partial = zsys_sprintf ("%s/job-note.drain.partial", dir);
    ok (!zsys_file_exists (partial), "and leaves no partial file");
    ok (spawner_resume_note_drain (dir, "job-note", NULL, reason,
                                   sizeof reason) == 0
        && spawner_resume_drain (dir, "job-note", cluster, reason,
                                 sizeof reason) == 0,
        "a removed note is no drain");
    ok (spawner_resume_note_drain (dir, "job-note", NULL, reason,
                                   sizeof reason) == 0,
        "removing it again is no error");
    const char *bad [] = { "", "site-B", "two words\n",
                           "quote\"d\n", "one\ntwo\n" };
    bool refused = true;
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        s_write_note (dir, bad [i]);
        *reason = 0;
        refused = refused
                && spawner_resume_drain (dir, "job-note", cluster, reason,
                                         sizeof reason) == -1
                && *cluster == 0 && strstr (reason, "names no cluster");
    }
    ok (refused, "a note that is not one plain name and a newline is an "
        "error");
    diag ("%s", reason);
    char long_name [JACE_ID_MAX + 8];
    memset (long_name, 'c', sizeof long_name - 2);
    strcpy (long_name + sizeof long_name - 2, "\n");
    s_write_note (dir, long_name);
    ok (spawner_resume_drain (dir, "job-note", cluster, reason,
                              sizeof reason) == -1,
        "so is a name longer than a cluster's");
    ok (spawner_resume_note_drain ("/nonexistent/dir", "job-note", "B",
                                   reason, sizeof reason) == -1
        && strstr (reason, "cannot write /nonexistent/dir/job-note.drain"),
        "a note that cannot be written says where");
    char *path = zsys_sprintf ("%s/job-note.drain", dir);
    unlink (path);
    rmdir (dir);
    free (path);
    free (partial);
}

//  An answer whose task started or not (block/started)
static jace_msg_t *
s_answer_started (int64_t task, int64_t epoch, const int64_t *first,
                  bool started)
{
    jace_msg_t *answer = s_answer (task, 3, epoch, first, 4);
    jace_msg_set_param (answer, "block/started", started ? "1" : "0");
    return answer;
}

//  A rebalance its spawner did not finish: the tasks that took the new
//  cut wait for a START, the others still run the old one.
static void
s_check_unstarted_cut (const int64_t *old_two, const int64_t *new_two)
{
    const int64_t old_cut [4] = { 0, 3000, 6000, 10000 };
    const int64_t new_cut [4] = { 0, 4000, 7000, 10000 };
    jace_msg_t *answers [3] = {
        s_answer_started (0, 2, new_cut, false),
        s_answer_started (1, 1, old_cut, true),
        s_answer_started (2, 2, new_cut, false)
    };
    bool off_cut [3] = { false, false, false };
    ok (spawner_resume_unstarted_cut (answers, 3, off_cut)
        && off_cut [0] && !off_cut [1] && off_cut [2],
        "on two cuts, the tasks of the one that never started are "
        "marked off the cut, those still running kept");

    //  A task of the old cut still setting up (a replacement) is kept
    jace_msg_set_param (answers [1], "block/started", "0");
    jace_msg_t *running = s_answer_started (1, 1, old_cut, true);
    jace_msg_t *four [4] = { answers [0], answers [1], answers [2],
                             running };
    bool four_off [4];
    ok (spawner_resume_unstarted_cut (four, 4, four_off)
        && four_off [0] && !four_off [1] && four_off [2]
        && !four_off [3],
        "a task of the running cut still setting up is kept with it");
    jace_msg_destroy (&running);

    //  Nothing runs (every task waits for its START): nothing to choose
    ok (!spawner_resume_unstarted_cut (answers, 3, off_cut)
        && !off_cut [0] && !off_cut [1] && !off_cut [2],
        "when no cut runs, none is chosen");
    //  Both cuts run: nothing to choose either
    jace_msg_set_param (answers [0], "block/started", "1");
    jace_msg_set_param (answers [1], "block/started", "1");
    ok (!spawner_resume_unstarted_cut (answers, 3, off_cut)
        && !off_cut [0] && !off_cut [2],
        "when both cuts run, none is chosen");
    //  One cut: nothing to release
    jace_msg_t *same [2] = { s_answer_started (0, 1, old_cut, true),
                             s_answer_started (1, 1, old_cut, false) };
    ok (!spawner_resume_unstarted_cut (same, 2, off_cut)
        && !off_cut [0] && !off_cut [1], "on one cut, none is marked");
    for (int i = 0; i < 2; i++)
        jace_msg_destroy (&same [i]);
    for (int i = 0; i < 3; i++)
        jace_msg_destroy (&answers [i]);

    //  Answers off the cut are left out: a daemon of the new cut marked,
    //  one of the old kept, and the answers agree
    zlist_t *list = s_answers (s_answer (0, 2, 2, new_two, 3),
                               s_answer (1, 2, 1, old_two, 3));
    jace_msg_set_param ((jace_msg_t *) zlist_first (list), "block/off_cut",
                        "1");
    char reason [512] = "";
    ok (spawner_resume_same_cut (list, reason, sizeof reason)
        && spawner_resume_off_cut ((jace_msg_t *) zlist_first (list))
        && !spawner_resume_off_cut ((jace_msg_t *) zlist_next (list)),
        "an answer off the cut is not compared");
    spawner_resume_forget (&list);
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (21);
    const int64_t old_cut [3] = { 0, 5005, 10000 };
    const int64_t new_cut [3] = { 0, 9071, 10000 };
    const int64_t four [5] = { 0, 2500, 5000, 7500, 10000 };
    char reason [512] = "";

    zlist_t *answers = s_answers (s_answer (0, 2, 1, old_cut, 3),
                                  s_answer (1, 2, 1, old_cut, 3));
    ok (spawner_resume_same_cut (answers, reason, sizeof reason),
        "two daemons on one cut agree");
    spawner_resume_forget (&answers);

    //  Task 0 took the rebalance's ASSIGN (epoch 2), task 1's died with
    //  the spawner
    answers = s_answers (s_answer (0, 2, 2, new_cut, 3),
                         s_answer (1, 2, 1, old_cut, 3));
    ok (!spawner_resume_same_cut (answers, reason, sizeof reason),
        "a daemon on the new cut and one on the old do not");
    ok (strstr (reason, "cut the rows two ways")
        && strstr (reason, "task 0 (epoch 2) holds rows 0-9071")
        && strstr (reason, "task 1 (epoch 1) rows 5005-10000"),
        "the reason names a task on each cut");
    diag ("%s", reason);
    *reason = 0;
    ok (spawner_resume_job (answers, "job-resume", reason, sizeof reason)
        == NULL && strstr (reason, "cut the rows two ways"),
        "and the job is not resumed from them");
    spawner_resume_forget (&answers);

    answers = s_answers (s_answer (0, 2, 1, old_cut, 3),
                         s_answer (1, 2, 1, old_cut, 2));
    ok (!spawner_resume_same_cut (answers, reason, sizeof reason),
        "an answer without its last block start does not agree");
    spawner_resume_forget (&answers);

    answers = s_answers (s_answer (0, 2, 1, old_cut, 3),
                         s_answer (1, 4, 1, four, 5));
    ok (!spawner_resume_same_cut (answers, reason, sizeof reason),
        "nor one that counts other tasks");
    spawner_resume_forget (&answers);

    answers = zlist_new ();
    *reason = 0;
    ok (spawner_resume_job (answers, "job-resume", reason, sizeof reason)
        == NULL, "no answer, no job");
    spawner_resume_forget (&answers);

    s_check_unstarted_cut (old_cut, new_cut);

    s_check_drain_note ();
    return tap_done ();
}
