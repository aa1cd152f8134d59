/*  =========================================================================
    spawner_detector - when is a silent daemon dead?

    Gap statistics: mean and deviation are exponentially smoothed with
    gains 1/8 and 1/4 (RFC 6298), so one long gap moves the bound at once
    while a steady rhythm lets it settle back.  DEVIATIONS = 8 keeps the
    chance that a live daemon with normal jitter crosses the adaptive part
    of the bound negligible; the floor (job/heartbeat_timeout) is what a
    quiet, regular daemon is held to.
    =========================================================================
*/
#include "spawner_detector.h"

#include <assert.h>
#include <stdlib.h>

#define DEVIATIONS 8
//  A loop pass this much later than planned counts as a stall.
#define STALL_MARGIN_MSEC 100
//  How much of the spawner's stalls a daemon's silence is excused.
//  Stalls of the last floor_msec are excused in full: a spawner frozen
//  for any time (SIGSTOP, a paused VM) reads what the daemons sent
//  meanwhile only once its I/O thread has caught up, and judging before
//  declared every daemon dead at once.  Older stalls excuse at most
//  STALL_EXCUSE_BOUNDS bounds: a spawner late on every pass (a starved
//  machine) stalls as fast as the clock runs, and excusing it all, a dead
//  daemon's silence grew by the 100 ms margin a pass and it was never
//  declared dead (0 of 5 in 110 s).  A live daemon has been heard within
//  a bound of the stall's end.
#define STALL_EXCUSE_BOUNDS 4
//  Stalls remembered for the window: more than floor_msec / margin
//  cannot fit in it; past this many, the oldest count as older stalls.
#define RECENT_STALLS 64

typedef struct {
    int64_t at;                 //  Tick that ended the stall
    int64_t length;             //  Milliseconds late
} stall_t;

typedef struct {
    int64_t last_heard;         //  When the daemon last spoke (msec)
    int64_t stalled_at_heard;   //  Detector's stalled total then
    double mean_gap;            //  Smoothed gap between messages, msec
    double deviation;           //  Smoothed mean deviation of the gaps
    bool measured;              //  At least one gap seen
} slot_t;

struct _spawner_detector_t {
    slot_t *slots;              //  One per task
    size_t slot_count;          //  Entries in slots
    int64_t floor_msec;         //  Never suspect before this silence
    int64_t last_tick;          //  End of the previous loop pass, or 0
    int64_t stalled;            //  Milliseconds the spawner slept through
    stall_t recent [RECENT_STALLS];     //  The last stalls, a ring
    size_t recent_next;         //  Where the next stall goes in it
    bool adaptive;              //  Else the plain timeout
};


//  --------------------------------------------------------------------------

spawner_detector_t *
spawner_detector_new (size_t slots, int64_t floor_msec, bool adaptive)
{
    assert (floor_msec > 0);
    spawner_detector_t *self = (spawner_detector_t *) calloc (1, sizeof *self);
    assert (self);
    self->slots = (slot_t *) calloc (slots + 1, sizeof (slot_t));
    assert (self->slots);
    self->slot_count = slots;
    self->floor_msec = floor_msec;
    self->adaptive = adaptive;
    return self;
}

void
spawner_detector_destroy (spawner_detector_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        free ((*self_p)->slots);
        free (*self_p);
        *self_p = NULL;
    }
}

void
spawner_detector_reset (spawner_detector_t *self, size_t slot, int64_t now)
{
    assert (self && slot < self->slot_count);
    self->slots [slot] = (slot_t) { .last_heard = now,
                                    .stalled_at_heard = self->stalled };
}

void
spawner_detector_heard (spawner_detector_t *self, size_t slot, int64_t now)
{
    assert (self && slot < self->slot_count);
    slot_t *entry = &self->slots [slot];
    double gap = (double) spawner_detector_silence (self, slot, now);
    if (!entry->measured) {
        entry->mean_gap = gap;
        entry->deviation = gap / 2;
        entry->measured = true;
    }
    else {
        double error = gap - entry->mean_gap;
        entry->mean_gap += error / 8;
        entry->deviation += ((error < 0 ? -error : error)
                             - entry->deviation) / 4;
    }
    entry->last_heard = now;
    entry->stalled_at_heard = self->stalled;
}

void
spawner_detector_tick (spawner_detector_t *self, int64_t now,
                       int64_t planned_msec)
{
    assert (self);
    if (self->last_tick && self->adaptive) {
        int64_t late = now - self->last_tick - planned_msec;
        if (late > STALL_MARGIN_MSEC) {
            self->stalled += late;
            self->recent [self->recent_next] = (stall_t) { now, late };
            self->recent_next = (self->recent_next + 1) % RECENT_STALLS;
        }
    }
    self->last_tick = now;
}

int64_t
spawner_detector_silence (spawner_detector_t *self, size_t slot, int64_t now)
{
    assert (self && slot < self->slot_count);
    const slot_t *entry = &self->slots [slot];
    int64_t excused = self->stalled - entry->stalled_at_heard;
    //  The stalls since it was last heard that ended within the window
    int64_t since = now - self->floor_msec > entry->last_heard
                  ? now - self->floor_msec : entry->last_heard;
    int64_t recent = 0;
    for (size_t i = 0; i < RECENT_STALLS; i++)
        if (self->recent [i].length > 0 && self->recent [i].at > since)
            recent += self->recent [i].length;
    if (recent > excused)
        recent = excused;
    int64_t older = excused - recent;
    int64_t most = STALL_EXCUSE_BOUNDS * spawner_detector_bound (self, slot);
    int64_t silence = now - entry->last_heard - recent
                    - (older < most ? older : most);
    return silence > 0 ? silence : 0;
}

int64_t
spawner_detector_bound (spawner_detector_t *self, size_t slot)
{
    assert (self && slot < self->slot_count);
    const slot_t *entry = &self->slots [slot];
    double adaptive = entry->measured && self->adaptive
                    ? entry->mean_gap + DEVIATIONS * entry->deviation : 0;
    return adaptive > (double) self->floor_msec ? (int64_t) adaptive
                                                : self->floor_msec;
}

bool
spawner_detector_suspects (spawner_detector_t *self, size_t slot,
                           int64_t now)
{
    return spawner_detector_silence (self, slot, now)
         > spawner_detector_bound (self, slot);
}

int64_t
spawner_detector_stalled (spawner_detector_t *self)
{
    assert (self);
    return self->stalled;
}
