/*  =========================================================================
    test_spawner_detector - when the spawner calls a silent daemon dead

    Pure logic on made-up clocks: no sleeping, no machine speed involved.
    =========================================================================
*/
#include "tap.h"
#include "spawner_detector.h"

int
main (void)
{
    tap_plan (17);
    spawner_detector_t *detector = spawner_detector_new (2, 3000, true);
    int64_t now = 1000;
    spawner_detector_reset (detector, 0, now);
    spawner_detector_reset (detector, 1, now);
    //  Slot 0 reports every 100 ms, like a daemon's PROGRESS.
    for (int i = 0; i < 50; i++) {
        now += 100;
        spawner_detector_tick (detector, now, 100);
        spawner_detector_heard (detector, 0, now);
    }
    ok (spawner_detector_bound (detector, 0) == 3000,
        "a regular daemon is held to the configured timeout");
    ok (!spawner_detector_suspects (detector, 0, now + 2900),
        "a daemon silent for 2.9 s is not suspected");
    ok (spawner_detector_suspects (detector, 1, now),
        "a daemon silent for 5 s is suspected");

    //  Slot 0 now reports irregularly (a loaded machine): gaps up to 2.5 s.
    for (int i = 0; i < 40; i++) {
        int64_t gap = i % 2 ? 2500 : 100;
        now += gap;
        spawner_detector_tick (detector, now, gap);
        spawner_detector_heard (detector, 0, now);
    }
    ok (spawner_detector_bound (detector, 0) > 3000,
        "irregular reports raise the bound above the floor");
    ok (!spawner_detector_suspects (detector, 0, now + 3500),
        "a jittery daemon silent 3.5 s is not suspected");

    //  The spawner itself sleeps 10 s (descheduled, SIGSTOP): nobody's
    //  silence grows by those 10 s.
    spawner_detector_reset (detector, 1, now);
    now += 10000;
    spawner_detector_tick (detector, now, 100);
    ok (spawner_detector_stalled (detector) >= 9800,
        "a pass 10 s late counts as the spawner's stall");
    ok (spawner_detector_silence (detector, 1, now) <= 200,
        "the stall is not the daemon's silence");
    ok (!spawner_detector_suspects (detector, 1, now),
        "no daemon is declared dead for the spawner's own stall");
    now += 4000;
    spawner_detector_tick (detector, now, 4000);
    ok (spawner_detector_suspects (detector, 1, now),
        "silence while the spawner is awake still counts");

    //  The spawner works 5 s in the middle of a pass (a verification of a
    //  large system), and judges before it polls again: the daemons'
    //  messages of those 5 s wait unread, so the work is a stall too.
    spawner_detector_reset (detector, 1, now);
    now += 5000;
    spawner_detector_tick (detector, now, 0);
    ok (!spawner_detector_suspects (detector, 1, now),
        "no daemon is suspected for the spawner's own work");
    spawner_detector_heard (detector, 1, now);
    now += 50;
    spawner_detector_tick (detector, now, 0);
    ok (spawner_detector_silence (detector, 1, now) == 50,
        "short work is not a stall: its silence counts");

    //  The spawner frozen for 20 s, then 300 ms of work on what waited:
    //  both stalls excused in full until its daemons could be heard...
    spawner_detector_reset (detector, 0, now);
    spawner_detector_reset (detector, 1, now);
    now += 20000;
    spawner_detector_tick (detector, now, 100);
    now += 300;
    spawner_detector_tick (detector, now, 0);
    ok (!spawner_detector_suspects (detector, 1, now),
        "a spawner frozen for 20 s declares nobody dead on waking");
    spawner_detector_heard (detector, 0, now + 50);
    //  ... but a daemon still unheard a floor later is not excused again
    for (int pass = 0; pass < 40; pass++) {
        now += 100;
        spawner_detector_tick (detector, now, 100);
        spawner_detector_heard (detector, 0, now);
    }
    ok (spawner_detector_suspects (detector, 1, now)
        && !spawner_detector_suspects (detector, 0, now),
        "4 s after that freeze, the daemon never heard is suspected");

    //  The spawner is late on every pass (a starved machine): each pass
    //  planned 10 ms takes 610.  Slot 0 speaks every pass; slot 1 died.
    spawner_detector_reset (detector, 0, now);
    spawner_detector_reset (detector, 1, now);
    int64_t died = now;
    int64_t declared = 0;
    bool live_suspected = false;
    for (int pass = 0; pass < 200 && !declared; pass++) {
        now += 610;
        spawner_detector_tick (detector, now, 10);
        spawner_detector_heard (detector, 0, now);
        live_suspected |= spawner_detector_suspects (detector, 0, now);
        if (spawner_detector_suspects (detector, 1, now))
            declared = now;
    }
    diag ("declared dead %.1f s after it died", (declared - died) / 1000.0);
    ok (declared > 0, "a daemon dead while the spawner is late on every "
        "pass is declared dead");
    ok (declared - died <= 6 * 3000 + 610,
        "within six bounds: the last floor's stalls and four bounds more "
        "are excused at most");
    ok (!live_suspected, "a daemon heard on every late pass is never "
        "suspected");
    spawner_detector_destroy (&detector);
    spawner_detector_destroy (&detector);

    //  The plain timeout, for comparison: a stall counts.
    detector = spawner_detector_new (1, 3000, false);
    spawner_detector_reset (detector, 0, 1000);
    spawner_detector_tick (detector, 1000, 100);
    spawner_detector_tick (detector, 11000, 100);
    ok (spawner_detector_suspects (detector, 0, 11000),
        "a fixed detector counts the spawner's own stall as silence");
    spawner_detector_destroy (&detector);
    return tap_done ();
}
