/*  =========================================================================
    daemon_worker - the thread that runs a daemon's task

    An actor that lives as long as its daemon.  It owns the daemon's data
    socket (a PULL bound when it starts, where neighbours' DATA arrives) so
    that the iteration loop reads neighbours' values without any hop
    through another thread.  The control actor (daemon_server) talks to it
    with Jace messages over the pipe: ASSIGN, START, REMAP, COLLECT, ADOPT
    and STOP in; ACCEPT, REFUSE, PROGRESS, RESULT, RESTORED and (answering
    ADOPT) ASSIGN out.  Between iterations it drains
    the pipe and the data socket without blocking, so a running task never
    waits for the network.

    With a platform file (a local virtual grid), the data a task sends goes
    through a jace_shaper with the file's latency and bandwidth from our
    cluster to each other; with the grid's links file too (jace-grid's
    --links), through the uplinks and backbone every daemon of the grid
    shares (jace_links, numbered by shared_links).

    Local convergence: the task's change stays under the job's tolerance
    for job/converge_iterations consecutive iterations (default 10).

    Checkpoints: every checkpoint/every_iterations iterations or
    checkpoint/every_seconds seconds, whichever comes first, the task's
    state goes to checkpoint/copies neighbours (jace_task_checkpoint_holders)
    over the data links, one of them in another cluster unless
    checkpoint/offsite = off; sends never block, a full link drops the
    copy.
    The worker also keeps the copies its neighbours send it (a
    daemon_checkpoints store) and answers FETCH with them.  A task placed
    with an epoch above 1 is a replacement: on START it asks every other
    task for its copies, waits for their answers (at most FETCH_WAIT_MSEC),
    and restarts from the newest valid one, or from its initial state.

    Total exchanges (docs/EXCHANGE.md): the worker plans the job's routes
    (daemon_exchange: LG between the clusters its task table names) at
    ASSIGN and after every move, and lends jace_task_alltoallv its loop
    while the application waits in it: data is delivered, a REMAP is
    applied at once, every other command waits until the iteration
    returns (a STOP or ASSIGN cuts the wait short).  The set-up exchange
    of request lists runs between START and the first iteration.

    Trust: DATA (vectors and exchange transfers) and FETCH are sealed
    with the job key (jace_msg_seal) by the sender and checked here;
    checkpoints carry their own seal (jace_checkpoint), transfers a MAC
    of their pieces (jace_transfer).  Keys on, only daemons may send on
    the data socket.  A DATA whose iteration is out of its sender's reach
    (jace_task_deliver) is refused, so no one can pin our neighbours'
    values.  Refusals are logged (rate-limited) and counted.
    =========================================================================
*/
#ifndef DAEMON_WORKER_H_INCLUDED
#define DAEMON_WORKER_H_INCLUDED

#include "jace_msg.h"
#include "jace_security.h"
#include "jace_task.h"
#include "platform.h"

//  What the worker is started with; read before zactor_new returns.
typedef struct {
    const char *bind;           //  Data endpoint to bind (port may be *)
    const char *cluster;        //  Our cluster
    platform_t *platform;       //  Borrowed: links to emulate, or NULL;
                                //  read only, must outlive the worker
    const char *links;          //  The grid's shared links file, or NULL
    jace_security_t *security;  //  Borrowed; must outlive the worker
    double speed;               //  Compute slow-down factor, (0, 1]
    bool verbose;               //  Log every message
    size_t checkpoint_memory;   //  Bytes of neighbours' copies to keep
    uint64_t task_memory;       //  Most bytes of task data we take: the
                                //  largest frame the data socket accepts
    const jace_app_t *app;      //  An application besides the table's
                                //  (tests), or NULL; must outlive us
} daemon_worker_config_t;

//  The actor; args is a daemon_worker_config_t.
void
    daemon_worker_actor (zsock_t *pipe, void *args);

//  Endpoint the data socket is bound to (caller frees), or NULL if the
//  worker could not start.
char *
    daemon_worker_endpoint (zactor_t *worker);

#endif
