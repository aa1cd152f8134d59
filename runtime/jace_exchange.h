/*  =========================================================================
    jace_exchange - one task's side of the job's total exchanges, routed
    as a plan says and recovered when a task dies

    A total exchange (round R) gives every task one piece M(S, D, R) from
    every task S.  Each piece follows a route of up to three hops, each in
    a step: LG (Jeannot & Steffenel, Euro-Par 2007) stages a piece on a
    node of its cluster in step 0, packs it with the others crossing the
    backbone between the same two nodes in a later step, and may relay it
    locally in a last step.  The daemon plans the routes (collectives/lg)
    and hands each task those it takes part in; a piece without a route
    goes straight to its destination at once.  A task sends its transfers
    of step k once every transfer it receives in an earlier step is in.

    Fault tolerance, without any wait that is not bounded:

    * Every task keeps the pieces it gave in each round (its log, bounded
      in bytes, oldest rounds dropped first; round 0 is kept for good), so
      a destination that misses one can ask its source directly (a pull)
      and a replacement that runs rounds again can be served.
    * A round waits for its scheduled transfers at most `fallback` msec;
      then it sends what it holds, forwards anything late straight to its
      destination, and pulls every piece still missing, again every
      `fallback` msec until it has them.
    * When a task moves to a new daemon (REMAP), the others stop waiting
      for its transfers, pull at once the pieces routed through it or from
      it, and send the new daemon their pieces for it of round 0 and of
      their last two rounds.  A task two rounds or more behind what it
      hears from the others (a replacement running rounds again) pulls at
      once.
    * Each piece is delivered once: a destination keeps the first copy of
      (round, source) and discards the others; pieces of a finished round
      are discarded, of a later round kept until we get there.

    The engine is transport-free: it sends through a callback and is told
    the time, so a test can run a whole job of engines in one process.
    =========================================================================
*/
#ifndef JACE_EXCHANGE_H_INCLUDED
#define JACE_EXCHANGE_H_INCLUDED

#include "jace_msg.h"
#include "jace_auth.h"
#include "jace_transfer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _jace_exchange_t jace_exchange_t;

//  One hop of a route: in `step`, the piece goes from `from` to `to`.
typedef struct {
    int64_t step;               //  Step, >= 0, larger than the last hop's
    int64_t from;               //  Task the piece leaves
    int64_t to;                 //  Task it reaches
} jace_hop_t;

//  Most hops a route has: stage, cross, relay.
#define JACE_ROUTE_HOPS_MAX 3

//  The route of the pieces from `source` to `destination` (every round).
typedef struct {
    int64_t source;             //  Task whose piece it is
    int64_t destination;        //  Task it is for
    size_t hop_count;           //  1 .. JACE_ROUTE_HOPS_MAX
    jace_hop_t hops [JACE_ROUTE_HOPS_MAX];  //  From source to destination
} jace_route_t;

//  Send msg to task `to` (never ourselves); takes *msg_p.  Returns 0, or
//  -1 if it was dropped (the fallback recovers the pieces).
typedef int (jace_exchange_send_fn) (void *arg, int64_t to,
                                     jace_msg_t **msg_p);

//  A piece for us arrived (its first copy): round, source and its bytes,
//  borrowed for the call.
typedef void (jace_exchange_piece_fn) (void *arg, int64_t round,
                                       int64_t source, const void *bytes,
                                       size_t size);

//  Create task `rank`'s side of the exchanges of job `job` (copied) of
//  `tasks` tasks, messages sealed with key (copied), sent through send,
//  pieces for us reported to on_piece (may be NULL).
jace_exchange_t *
    jace_exchange_new (const char *job, const jace_key_t *key, int64_t rank,
                       int64_t tasks, jace_exchange_send_fn *send,
                       jace_exchange_piece_fn *on_piece, void *arg);

//  Destroy; nullifies the reference.  Safe on NULL.
void
    jace_exchange_destroy (jace_exchange_t **self_p);

//  Our epoch (stamped on what we send); default 1.
void
    jace_exchange_set_epoch (jace_exchange_t *self, int64_t epoch);

//  Longest wait for a round's scheduled transfers before falling back to
//  direct pulls, msec (> 0; default 5000).
void
    jace_exchange_set_fallback (jace_exchange_t *self, int64_t msec);

//  Bytes of our own pieces kept for pulls (default 256 MiB).  Transfers
//  of rounds we have not begun are kept up to 256 MiB too.
void
    jace_exchange_set_log_limit (jace_exchange_t *self, size_t bytes);

//  Replace our routes: those of the routes whose piece we send, relay or
//  receive (every task of the job must be given routes from one plan).
//  Routes must have 1..3 chained hops in increasing steps, between
//  distinct tasks of the job, each (source, destination) once.  Returns
//  0, or -1 with the reason (nothing changed).  A round under way when
//  they change finishes by direct pulls.
int
    jace_exchange_set_routes (jace_exchange_t *self,
                              const jace_route_t *routes, size_t count,
                              int64_t now, char *reason, size_t reason_size);

//  True if we were given any route (some pieces are routed).
bool
    jace_exchange_has_routes (const jace_exchange_t *self);

//  Begin round `round` (larger than any begun before) with our pieces:
//  buffers[d] of sizes[d] bytes for every task d, ourselves included
//  (copied into the log).  A piece without a route is sent to d only if
//  send is NULL or send[d], and awaited from s only if expect is NULL or
//  expect[s]; routed pieces always travel (they may be empty), so that
//  relays know what to wait for.
void
    jace_exchange_begin (jace_exchange_t *self, int64_t round,
                         const void *const *buffers, const size_t *sizes,
                         const bool *send, const bool *expect, int64_t now);

//  Our pieces of `round` as the log holds them: per task, a pointer to
//  its bytes (NULL when empty) and its size, borrowed until the next
//  begin.  Returns 0, or -1 when the log holds no such round.  A
//  checkpoint saves the round its task completed last: a task that
//  finished a round may die before its pieces for it reach the others.
int
    jace_exchange_logged (const jace_exchange_t *self, int64_t round,
                          const unsigned char *const **buffers,
                          const size_t **sizes);

//  Put our pieces of a round our predecessor completed back in the log
//  (a task restored from a checkpoint), so that the tasks still waiting
//  for them get them when they ask.  Copied.  Returns 0, or -1 when the
//  round is not one we may log (begun already, or below 1).
int
    jace_exchange_relog (jace_exchange_t *self, int64_t round,
                         const void *const *buffers, const size_t *sizes);

//  Take a transfer (the caller has checked its seal and that its epoch
//  is not older than what we know of its sender).  Returns 0, or -1 with
//  the reason when it was dropped.
int
    jace_exchange_receive (jace_exchange_t *self, const jace_msg_t *msg,
                           int64_t now, char *reason, size_t reason_size);

//  The timed part: fall back when the round waited too long, pull when
//  behind.  Returns msec until it needs to run again, or -1 when no round
//  is under way.
int64_t
    jace_exchange_tick (jace_exchange_t *self, int64_t now);

//  Task `rank` moved to a new daemon (REMAP): stop waiting for it, pull
//  what went through it, give it our recent pieces for it.
void
    jace_exchange_moved (jace_exchange_t *self, int64_t rank, int64_t now);

//  The round last begun (-1 before the first), and whether it is done:
//  every piece for us is in and every transfer of ours has gone.
int64_t
    jace_exchange_round (const jace_exchange_t *self);
bool
    jace_exchange_done (const jace_exchange_t *self);

//  What the round under way still waits for, in words ("pieces from 3 9,
//  2 transfers to send"), for a log line; empty when done.
void
    jace_exchange_missing (const jace_exchange_t *self, char *text,
                           size_t size);

//  The piece of the round last begun from `source` (borrowed until the
//  next begin), or NULL with size 0 when none came or it was empty;
//  present says which.
const void *
    jace_exchange_received (const jace_exchange_t *self, int64_t source,
                            size_t *size, bool *present);

//  Why the round cannot complete (a piece no one holds any more), or NULL.
const char *
    jace_exchange_failure (const jace_exchange_t *self);

//  Counters: copies discarded as duplicates, pulls we sent, pieces we
//  forwarded straight to their destination because they came late.
uint64_t
    jace_exchange_duplicates (const jace_exchange_t *self);
uint64_t
    jace_exchange_pulls (const jace_exchange_t *self);
uint64_t
    jace_exchange_forwarded (const jace_exchange_t *self);

#ifdef __cplusplus
}
#endif

#endif
