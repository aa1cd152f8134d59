/*  =========================================================================
    spawner_report - what happened to a job, read back from its event log

    Reads the JSON-lines log that spawner_events wrote and tells the story
    of the job: its outcome, then every failure in time order, from the
    crash (when it was issued on purpose) or the detection, through the
    replacement, to the task restored on a new daemon.  With gnuplot on the
    PATH it also draws the verified residual over time, with the crashes,
    detections and restorations marked and the time lost shaded.

    Definitions, so the figures can be checked against the log by hand:
    -   A failure starts at its "crash" event or, without one, at its
        "dead" event's time minus silent_ms: the last time the daemon was
        heard from, so the time lost is then an upper bound.
    -   Time lost is from that start to the "restored" event.  It splits
        exactly into detection (start to "dead"), replacement ("dead" to
        "replace"), fetch (the restored event's fetch_ms) and restart (the
        rest, up to "restored").
    -   Iterations lost are the task's last "progress" iteration before the
        "dead" event minus the iteration restored (0 for the initial
        state), never negative.
    A failure whose recovery never completed, and a crash never detected,
    are listed with no time lost.  Replace, restart and restored events of
    no known failure, and events of unknown names, are ignored; blank
    lines are skipped.
    =========================================================================
*/
#ifndef SPAWNER_REPORT_H_INCLUDED
#define SPAWNER_REPORT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

//  Read the event log at events_path; write the text report to out and,
//  when plot_path is not NULL, a plot of the residual over time with
//  every failure marked (PNG or SVG by plot_path's extension) through
//  gnuplot.  Returns 0; -1 with the reason ("FILE:LINE: ...") in reason
//  when the log cannot be read or is malformed.  A missing gnuplot is not
//  an error: the text says the plot was skipped and why.  A plot path
//  with another extension is an error before anything is written, and a
//  gnuplot that fails is one after the text (both "PLOT: ...").
int
    spawner_report_write (const char *events_path, FILE *out,
                          const char *plot_path, char *reason,
                          size_t reason_size);

//  True if plot_path names a format the report can draw (.png or .svg,
//  any case): checked before a job runs, so that a long job's verified
//  answer does not end in an error about its plot's name.
bool
    spawner_report_plot_format_known (const char *plot_path);

#endif
