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
//  The spawner's stalls excuse at most this many bounds of a daemon's
//  silence.  A spawner late on every pass (a starved machine) stalls as
//  fast as the clock runs: excusing it all, a dead daemon's silence grew
//  by the 100 ms margin a pass and it was never declared dead (0 of 5 in
//  110 s).  Capped, it is declared within (1 + cap) bounds, while a
//  spawner frozen for up to cap bounds at once still costs nobody.
#define STALL_EXCUSE_BOUNDS 4

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
        if (late > STALL_MARGIN_MSEC)
            self->stalled += late;
    }
    self->last_tick = now;
}

int64_t
spawner_detector_silence (spawner_detector_t *self, size_t slot, int64_t now)
{
    assert (self && slot < self->slot_count);
    const slot_t *entry = &self->slots [slot];
    int64_t excused = self->stalled - entry->stalled_at_heard;
    int64_t most = STALL_EXCUSE_BOUNDS * spawner_detector_bound (self, slot);
    int64_t silence = now - entry->last_heard
                    - (excused < most ? excused : most);
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
