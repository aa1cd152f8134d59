/*  =========================================================================
    spawner_detector - when is a silent daemon dead?

    One slot per task.  Every message from a task's daemon refreshes its
    slot and feeds the statistics of the gaps between its messages (a
    smoothed mean and mean deviation, as TCP estimates round-trip times,
    Jacobson 1988).  A daemon is suspected when its silence passes the
    larger of the job's heartbeat_timeout and mean + DEVIATIONS x deviation
    of its own gaps: on a loaded machine whose daemons report irregularly
    the bound grows with what is measured, never below what the user set.

    Silence counts only the time the spawner itself was awake to hear.
    The server ticks the detector every pass of its loop with how long it
    meant to wait; a pass that came back much later than that means the
    spawner was descheduled or stopped, and that stretch is subtracted
    from every silence it overlaps.  A spawner that was itself frozen for
    ten seconds therefore does not declare every daemon dead on waking.
    Stalls of the last floor_msec count in full; older ones at most four
    bounds, so that a spawner late on every pass (a starved machine) still
    declares a dead daemon, within six bounds.
    =========================================================================
*/
#ifndef SPAWNER_DETECTOR_H_INCLUDED
#define SPAWNER_DETECTOR_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _spawner_detector_t spawner_detector_t;

//  A detector for `slots` daemons that suspects none before `floor_msec`
//  of silence.  Not adaptive: the bound is floor_msec and every
//  millisecond of silence counts, stalls of the spawner's included (the
//  plain timeout, for comparison).
spawner_detector_t *
    spawner_detector_new (size_t slots, int64_t floor_msec, bool adaptive);

//  Destroy the detector; nullifies the reference. Safe on NULL.
void
    spawner_detector_destroy (spawner_detector_t **self_p);

//  Slot `slot` has a new daemon (a placement, a replacement): its history
//  starts over, heard at `now`.
void
    spawner_detector_reset (spawner_detector_t *self, size_t slot,
                            int64_t now);

//  The daemon of `slot` spoke at `now`.
void
    spawner_detector_heard (spawner_detector_t *self, size_t slot,
                            int64_t now);

//  One pass of the spawner's loop ended at `now`; it had asked to wait at
//  most `planned_msec`.  Time beyond that (less a small margin) was spent
//  asleep and is not counted as anyone's silence.  Tick with planned_msec
//  0 before judging silences in the middle of a pass: the work done since
//  the last tick (less the margin) was time nobody could be heard.
void
    spawner_detector_tick (spawner_detector_t *self, int64_t now,
                           int64_t planned_msec);

//  Milliseconds of silence of `slot` that the spawner was awake for.
int64_t
    spawner_detector_silence (spawner_detector_t *self, size_t slot,
                              int64_t now);

//  Current suspicion bound of `slot`, milliseconds.
int64_t
    spawner_detector_bound (spawner_detector_t *self, size_t slot);

//  True if `slot`'s silence has passed its bound.
bool
    spawner_detector_suspects (spawner_detector_t *self, size_t slot,
                               int64_t now);

//  Total milliseconds the spawner was found asleep so far.
int64_t
    spawner_detector_stalled (spawner_detector_t *self);

#endif
