/*  =========================================================================
    bench_keys - CURVE for a benchmark: a throwaway keys directory with one
    certificate, and the job key every Jace message of the bench is sealed
    with

    Both ends of a benchmark run in one process, which can have only one
    authentication handler: they share one certificate, as two hosts of a
    grid each use their own.  The cost per message is the same.
    =========================================================================
*/
#ifndef BENCH_KEYS_H_INCLUDED
#define BENCH_KEYS_H_INCLUDED

#include "jace_msg.h"
#include "jace_security.h"

//  The options the benchmarks share: --json (for scripts) and --keys
//  (CURVE on every path).  Returns 0, or -1 after printing the usage.
int
    bench_options (int argc, char *argv [], bool *json, bool *keys);

//  Keys for the benchmark when with_keys, else plain links (a security
//  object that encrypts nothing).  Never NULL.
jace_security_t *
    bench_keys_new (bool with_keys);

//  Destroy the security object and remove the keys directory.
void
    bench_keys_destroy (jace_security_t **security_p);

//  The job key of the benchmark's tasks, Z85 (an ASSIGN's `key`).
const char *
    bench_job_key (void);

//  Prepare a socket that binds (server) or connects (client) with keys.
void
    bench_keys_server (jace_security_t *security, zsock_t *sock);
void
    bench_keys_client (jace_security_t *security, zsock_t *sock);

#endif
