/*  =========================================================================
    spawner_task - one task of a job as the spawner sees it

    A plain record, one per task, kept by spawner_server in an array
    indexed by rank; the console and the server's modules read it.  A
    task goes through these phases for each daemon it is placed on:

        WAITING    no daemon yet: first placement, or its daemon was
                   suspected, refused or vanished (a replacement)
        SENDING    ASSIGN sent; its data (if any) streaming in CHUNKs
        ASSIGNED   everything sent, waiting for ACCEPT
        ACCEPTED   set up on its daemon, waiting for START
        RUNNING    started (restoring until a replacement says RESTORED)
    =========================================================================
*/
#ifndef SPAWNER_TASK_H_INCLUDED
#define SPAWNER_TASK_H_INCLUDED

#include "jace_msg.h"
#include "spawner_stream.h"
#include "spawner_watch.h"

typedef enum {
    SPAWNER_TASK_WAITING,
    SPAWNER_TASK_SENDING,
    SPAWNER_TASK_ASSIGNED,
    SPAWNER_TASK_ACCEPTED,
    SPAWNER_TASK_RUNNING
} spawner_task_phase_t;

typedef struct {
    spawner_task_phase_t phase; //  Where the placement stands
    jace_node_t daemon;         //  Daemon running it (task, epoch set)
    zsock_t *link;              //  DEALER to its control endpoint, or NULL
    spawner_watch_t *watch;     //  The link's connection, or NULL
    int64_t epoch;              //  Epoch of this placement
    int64_t iteration;          //  Last reported iteration
    double change;              //  Last reported local change
    int64_t state;              //  Last reported jace_task_state_t, or -1
    int64_t held_bytes;         //  Neighbours' checkpoints its daemon keeps
    int64_t exchanges;          //  jace_task_alltoallv calls it completed
    bool restoring;             //  A replacement not yet restarted
    bool crash_sent;            //  Its daemon was told to CRASH
    bool mass_silent;           //  Fell silent with most others: judged
                                //  on a longer bound until heard again
    int64_t *sources;           //  Tasks it asks values from (ACCEPT)
    size_t source_count;        //  Entries in sources
    bool sources_known;         //  An ACCEPT or ADOPT said them
    spawner_stream_t *stream;   //  Its data, while streaming; or NULL
    int64_t relay;              //  Rank whose daemon passes its data on
                                //  (itself for a relay), or -1: straight
    bool data_open;             //  Its daemon took the ASSIGN's data
                                //  declaration (a first CHUNK_ACK)
    int64_t assigned_at;        //  When the ASSIGN left (msec)
    int64_t heard_at;           //  When its daemon last spoke (msec)
    int64_t refusals;           //  Daemons that refused it in a row
    char wanted [JACE_ID_MAX];  //  Replacement reserved by id, or ""
    int64_t wanted_at;          //  When it was asked for (msec)
    int64_t ungranted_at;       //  When a daemon asked for was not
                                //  granted in time (msec), or 0
    char why [192];             //  Why the mapping chose it
    char lost [160];            //  How its last daemon was lost
    int64_t tried_listing;      //  Listing its last choice was made on
    int64_t generation_epoch;   //  Its epoch when the rows were last cut:
                                //  older copies are of another partition
    double usecs_per_iteration; //  Computing one iteration (PROGRESS),
                                //  smoothed; 0 until reported
    int64_t rate_reports;       //  Reports of it since this placement
    bool handoff;               //  Assigned to gather a rebalance's
                                //  iterate from the old owners itself
    int64_t restore_reads;      //  Unknowns of the others' its data sent
                                //  with a rebalance's iterate; -1: every
                                //  unknown went
    bool drain_iterate;         //  Moved by a drain with no copy of its
                                //  state anywhere: its ASSIGN carries the
                                //  iterate the drain gathered
} spawner_task_t;

#endif
