/*  =========================================================================
    test_spawner_watch - a link whose daemon's process is gone

    A DEALER link to a ROUTER standing for a daemon.  Checked: while the
    ROUTER lives, reading nothing (a slow or frozen daemon), the watch
    says nothing; once it is closed (the process died), the watch says
    "gone" within SPAWNER_WATCH_REFUSED_MSEC; a link whose connection was
    never made (nothing listening yet) is not taken for a dead daemon,
    whatever its refusals.
    =========================================================================
*/
#include "spawner_watch.h"
#include "tap.h"

//  Poll the watch for `msec`; true if it said "gone", with when in *after.
static bool
s_gone_within (spawner_watch_t *watch, int msec, int64_t *after)
{
    int64_t start = zclock_mono (), deadline = start + msec;
    zpoller_t *poller = zpoller_new (spawner_watch_socket (watch), NULL);
    bool gone = false;
    while (!gone && zclock_mono () < deadline) {
        if (!zpoller_wait (poller, (int) (deadline - zclock_mono ())))
            continue;
        gone = spawner_watch_recv (watch, zclock_mono ());
    }
    zpoller_destroy (&poller);
    if (after)
        *after = zclock_mono () - start;
    return gone;
}

int
main (void)
{
    zsys_set_logstream (stderr);
    tap_plan (4);
    zsock_t *daemon = zsock_new (ZMQ_ROUTER);
    int port = zsock_bind (daemon, "tcp://127.0.0.1:*");
    zsock_t *link = zsock_new (ZMQ_DEALER);
    spawner_watch_t *watch = spawner_watch_new (link);
    ok (watch != NULL, "a link can be watched");
    zsock_connect (link, "tcp://127.0.0.1:%d", port);
    zstr_send (link, "hello");
    zmsg_t *hello = zmsg_recv (daemon);
    zmsg_destroy (&hello);
    ok (!s_gone_within (watch, 500, NULL),
        "a live daemon that reads nothing is not gone");

    zsock_destroy (&daemon);
    int64_t after = 0;
    bool gone = s_gone_within (watch, 3000, &after);
    ok (gone && after <= SPAWNER_WATCH_REFUSED_MSEC,
        "a daemon whose port closed is gone within the bound");
    diag ("said gone %" PRId64 " ms after the close", after);
    spawner_watch_destroy (&watch);
    zsock_destroy (&link);

    //  Nothing listens any more: a daemon listed with its port bound,
    //  dead before we first reach it (a replacement killed with its
    //  cluster), refuses our first connection.  It used to be left to
    //  the detector's bound, 2 s and more.
    link = zsock_new (ZMQ_DEALER);
    watch = spawner_watch_new (link);
    zsock_connect (link, "tcp://127.0.0.1:%d", port);
    after = 0;
    gone = s_gone_within (watch, 3000, &after);
    ok (gone && after <= SPAWNER_WATCH_REFUSED_MSEC,
        "a daemon dead before the link first connected is gone within "
        "the bound");
    diag ("said gone %" PRId64 " ms after the connect", after);
    spawner_watch_destroy (&watch);
    zsock_destroy (&link);
    return tap_done ();
}
