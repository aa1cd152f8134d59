/*  =========================================================================
    jace_security - CURVE encryption and authentication of every link
    =========================================================================
*/
#include "jace_security.h"

#include <errno.h>

#include <stdatomic.h>

//  ZeroMQ asks its authentication handler at this inproc endpoint.
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
//  Binding the endpoint again after the previous handler's end: so many
//  tries, so far apart (half a second in all)
#define ZAP_BIND_TRIES 50
#define ZAP_BIND_WAIT_MSEC 10
//  Refusals logged one by one before only one in REFUSALS_SAMPLED is.
#define REFUSALS_LOGGED 10
#define REFUSALS_SAMPLED 1000

//  One trusted identity (a public certificate of DIR).
typedef struct {
    char name [JACE_ID_MAX];        //  Certificate name (file name)
    jace_role_t role;               //  What it may do
} identity_t;

struct _jace_security_t {
    zcert_t *cert;              //  Our certificate, or NULL (plain links)
    zhashx_t *trusted;          //  Z85 public key -> identity_t; fixed
                                //  once loaded, so both threads read it
    zactor_t *zap;              //  Our ZAP handler, or NULL
    atomic_uint_fast64_t refused;       //  Connections refused by ZAP
    atomic_uint_fast64_t unauthorised;  //  Messages refused by handlers
};


//  --------------------------------------------------------------------------
//  Roles

const char *
jace_role_name (jace_role_t role)
{
    return role == JACE_ROLE_SUPERNODE ? "super-node"
         : role == JACE_ROLE_DAEMON ? "daemon"
         : role == JACE_ROLE_SPAWNER ? "spawner" : "nobody";
}

static jace_role_t
s_role_of_word (const char *word)
{
    return !word ? JACE_ROLE_NONE
         : streq (word, "supernode") ? JACE_ROLE_SUPERNODE
         : streq (word, "daemon") ? JACE_ROLE_DAEMON
         : streq (word, "spawner") ? JACE_ROLE_SPAWNER : JACE_ROLE_NONE;
}

//  Load every public certificate of keys_dir into the trusted table.  A
//  certificate's role is its `role` metadata, or, for certificates made
//  before roles existed, its name when that is a role's.
static void
s_load_trusted (jace_security_t *self, const char *keys_dir)
{
    self->trusted = zhashx_new ();
    zhashx_set_destructor (self->trusted, (zhashx_destructor_fn *) zstr_free);
    zdir_t *dir = zdir_new (keys_dir, "-");
    //  zdir names files DIR/NAME, DIR without its trailing slashes.
    size_t dir_length = strlen (keys_dir);
    while (dir_length > 1 && keys_dir [dir_length - 1] == '/')
        dir_length--;
    zfile_t **files = dir ? zdir_flatten (dir) : NULL;
    for (size_t i = 0; files && files [i]; i++) {
        const char *path = zfile_filename (files [i], NULL);
        size_t length = strlen (path);
        //  Only DIR's own files: zdir also lists sub-folders, and a
        //  certificate put there (a backup, another grid's) is not trusted.
        const char *slash = strrchr (path, '/');
        if (length < 6 || !streq (path + length - 5, ".cert")
        ||  !slash || (size_t) (slash - path) != dir_length)
            continue;
        zcert_t *cert = zcert_load (path);
        if (!cert)
            continue;
        identity_t *identity = (identity_t *) zmalloc (sizeof *identity);
        const char *base = strrchr (path, '/') ? strrchr (path, '/') + 1
                                               : path;
        snprintf (identity->name, sizeof identity->name, "%.*s",
                  (int) (strlen (base) - 5), base);
        const char *role = zcert_meta (cert, "role");
        identity->role = s_role_of_word (role ? role : identity->name);
        zhashx_update (self->trusted, zcert_public_txt (cert), identity);
        zcert_destroy (&cert);
    }
    zdir_flatten_free (&files);
    zdir_destroy (&dir);
}

jace_role_t
jace_security_role (jace_security_t *self, const char *user_id)
{
    if (!jace_security_enabled (self) || !user_id || !*user_id)
        return JACE_ROLE_NONE;
    identity_t *identity = (identity_t *) zhashx_lookup (self->trusted,
                                                         user_id);
    return identity ? identity->role : JACE_ROLE_NONE;
}

static const char *
s_name_of (jace_security_t *self, const char *user_id)
{
    identity_t *identity = jace_security_enabled (self) && *user_id
        ? (identity_t *) zhashx_lookup (self->trusted, user_id) : NULL;
    return identity ? identity->name : "unknown";
}

//  True for the refusals worth a log line: the first few, then a sample.
static bool
s_worth_logging (uint64_t count)
{
    return count <= REFUSALS_LOGGED || count % REFUSALS_SAMPLED == 0;
}


//  --------------------------------------------------------------------------
//  ZAP handler: lets in only trusted keys, logs the others

typedef struct {
    jace_security_t *security;  //  Trusted table and counters (borrowed)
    zsock_t *handler;           //  REP on ZAP_ENDPOINT
    zpoller_t *poller;          //  Pipe, handler, watches
    zlist_t *watches;           //  PAIRs on our sockets' monitors, owned
} zap_t;

//  Answer one ZAP request (RFC 27): version, request id, domain, address,
//  routing id, mechanism, credentials.
static void
s_zap_answer (zap_t *self)
{
    zmsg_t *request = zmsg_recv (self->handler);
    if (!request)
        return;
    char *version = zmsg_popstr (request);
    char *sequence = zmsg_popstr (request);
    char *domain = zmsg_popstr (request);
    char *address = zmsg_popstr (request);
    zframe_t *routing = zmsg_pop (request);
    char *mechanism = zmsg_popstr (request);
    zframe_t *credentials = zmsg_pop (request);
    char key [JACE_KEY_TEXT + 1] = "";
    bool curve = mechanism && streq (mechanism, "CURVE") && credentials
              && zframe_size (credentials) == 32;
    if (curve)
        zmq_z85_encode (key, zframe_data (credentials), 32);
    bool trusted = curve
        && jace_security_role (self->security, key) != JACE_ROLE_NONE;
    if (!trusted) {
        uint64_t count = atomic_fetch_add (&self->security->refused, 1) + 1;
        if (s_worth_logging (count))
            zsys_warning ("authentication refused: %s from %s with key %s "
                          "(not in the keys directory; %" PRIu64 " refused "
                          "so far)", mechanism ? mechanism : "?",
                          address ? address : "?", *key ? key : "none",
                          count);
    }
    zmsg_t *reply = zmsg_new ();
    zmsg_addstr (reply, "1.0");
    zmsg_addstr (reply, sequence ? sequence : "");
    zmsg_addstr (reply, trusted ? "200" : "400");
    zmsg_addstr (reply, trusted ? "OK" : "unknown key");
    zmsg_addstr (reply, trusted ? key : "");
    zmsg_addmem (reply, NULL, 0);
    zmsg_send (&reply, self->handler);
    zstr_free (&version);
    zstr_free (&sequence);
    zstr_free (&domain);
    zstr_free (&address);
    zstr_free (&mechanism);
    zframe_destroy (&routing);
    zframe_destroy (&credentials);
    zmsg_destroy (&request);
}

//  A client that does not even speak CURVE (no keys at all) fails the
//  handshake before ZAP is asked: our sockets' monitors tell us.  Log it
//  as a refused authentication too.  libzmq's stable monitor names only
//  our endpoint, not the client's address (its version 2 is a draft API).
static void
s_watch_event (zap_t *self, zsock_t *watch)
{
    zmsg_t *event = zmsg_recv (watch);
    zframe_t *numbers = event ? zmsg_first (event) : NULL;
    char *address = event && zmsg_size (event) > 1
                  ? zframe_strdup (zmsg_next (event)) : NULL;
    if (numbers && zframe_size (numbers) >= 2) {
        uint64_t count = atomic_fetch_add (&self->security->refused, 1) + 1;
        if (s_worth_logging (count))
            zsys_warning ("authentication refused: a client of %s failed "
                          "the CURVE handshake (it has no keys; %" PRIu64
                          " refused so far)", address ? address : "?",
                          count);
    }
    zstr_free (&address);
    zmsg_destroy (&event);
}

//  Watch the monitor of one of our CURVE server sockets.
static void
s_watch (zap_t *self, const char *endpoint)
{
    zsock_t *watch = zsock_new (ZMQ_PAIR);
    if (zsock_connect (watch, "%s", endpoint) == 0) {
        zlist_append (self->watches, watch);
        zpoller_add (self->poller, watch);
    }
    else
        zsock_destroy (&watch);
}

static bool
s_zap_command (zap_t *self, zsock_t *pipe)
{
    char *command = NULL, *endpoint = NULL;
    if (zstr_recvx (pipe, &command, &endpoint, NULL) < 1)
        return true;
    bool terminated = streq (command, "$TERM");
    if (streq (command, "WATCH") && endpoint)
        s_watch (self, endpoint);
    zstr_free (&command);
    zstr_free (&endpoint);
    return terminated;
}

static void
s_zap_actor (zsock_t *pipe, void *args)
{
    zap_t self = { (jace_security_t *) args, zsock_new (ZMQ_REP), NULL,
                   zlist_new () };
    //  A handler destroyed just before frees the endpoint when ZeroMQ's
    //  reaper gets to its socket, a moment later on a loaded machine:
    //  give it that moment before saying the endpoint is taken.
    int rc = zsock_bind (self.handler, ZAP_ENDPOINT);
    for (int tries = 0; rc != 0 && zmq_errno () == EADDRINUSE
                        && tries < ZAP_BIND_TRIES; tries++) {
        zclock_sleep (ZAP_BIND_WAIT_MSEC);
        rc = zsock_bind (self.handler, ZAP_ENDPOINT);
    }
    const char *failure = rc == 0 ? "OK" : zmq_strerror (zmq_errno ());
    //  zactor_new waits for the signal but not its status: say whether we
    //  could bind with a word of our own.
    zsock_signal (pipe, 0);
    zstr_send (pipe, failure);
    self.poller = zpoller_new (pipe, self.handler, NULL);
    bool terminated = rc != 0;
    while (!terminated) {
        void *which = zpoller_wait (self.poller, -1);
        if (which == self.handler)
            s_zap_answer (&self);
        else
        if (which == pipe || !which)
            terminated = !which || s_zap_command (&self, pipe);
        else
            s_watch_event (&self, (zsock_t *) which);
    }
    zpoller_destroy (&self.poller);
    for (zsock_t *watch = (zsock_t *) zlist_first (self.watches); watch;
         watch = (zsock_t *) zlist_next (self.watches))
        zsock_destroy (&watch);
    zlist_destroy (&self.watches);
    zsock_destroy (&self.handler);
}


//  --------------------------------------------------------------------------
//  Set-up

//  Our secret certificate, refused if others may read it: anyone who can
//  is this host on the grid.
static zcert_t *
s_load_secret (const char *keys_dir, const char *name, char *reason,
               size_t reason_size)
{
    char *path = zsys_sprintf ("%s/%s.cert_secret", keys_dir, name);
    struct stat info;
    zcert_t *cert = NULL;
    if (stat (path, &info) != 0)
        snprintf (reason, reason_size,
                  "%s: no certificate (make one with jace-keygen %s %s)",
                  path, keys_dir, name);
    else
    if (info.st_mode & (S_IRWXG | S_IRWXO))
        snprintf (reason, reason_size, "%s is open to other users (mode "
                  "%03o): refused; chmod 600 %s", path,
                  (unsigned) (info.st_mode & 0777), path);
    else
    if (!(cert = zcert_load (path)))
        snprintf (reason, reason_size, "%s: not a certificate", path);
    zstr_free (&path);
    return cert;
}

jace_security_t *
jace_security_new (const char *keys_dir, const char *cert,
                   char *reason, size_t reason_size)
{
    jace_security_t *self = (jace_security_t *) zmalloc (sizeof *self);
    atomic_init (&self->refused, 0);
    atomic_init (&self->unauthorised, 0);
    if (!keys_dir)
        return self;
    assert (cert);
    if (!zsys_file_exists (keys_dir)) {
        snprintf (reason, reason_size, "%s: no such keys directory",
                  keys_dir);
        goto out_fail;
    }
    self->cert = s_load_secret (keys_dir, cert, reason, reason_size);
    if (!self->cert)
        goto out_fail;
    s_load_trusted (self, keys_dir);
    self->zap = zactor_new (s_zap_actor, self);
    char *started = zstr_recv (self->zap);
    if (!started || !streq (started, "OK")) {
        snprintf (reason, reason_size, "cannot start authentication: %s "
                  "(only one process-wide handler: is another keyed "
                  "security object alive here?)", started ? started : "?");
        zstr_free (&started);
        goto out_fail;
    }
    zstr_free (&started);
    return self;

out_fail:
    jace_security_destroy (&self);
    return NULL;
}

//  --------------------------------------------------------------------------

void
jace_security_destroy (jace_security_t **self_p)
{
    assert (self_p);
    if (*self_p) {
        jace_security_t *self = *self_p;
        zactor_destroy (&self->zap);
        zhashx_destroy (&self->trusted);
        zcert_destroy (&self->cert);
        free (self);
        *self_p = NULL;
    }
}

//  --------------------------------------------------------------------------

bool
jace_security_enabled (jace_security_t *self)
{
    return self && self->cert;
}

const char *
jace_security_public_key (jace_security_t *self)
{
    return jace_security_enabled (self) ? zcert_public_txt (self->cert) : "";
}

//  Host part of a tcp:// endpoint into host ("" for other transports).
static void
s_endpoint_host (const char *endpoint, char *host, size_t host_size)
{
    *host = 0;
    if (strncmp (endpoint, "tcp://", 6) != 0)
        return;
    const char *start = endpoint + 6;
    const char *colon = strrchr (start, ':');
    size_t length = colon ? (size_t) (colon - start) : strlen (start);
    snprintf (host, host_size, "%.*s", (int) length, start);
}

const char *
jace_security_supernode_key (jace_security_t *self, const char *endpoint,
                             char *reason, size_t reason_size)
{
    if (!jace_security_enabled (self))
        return "";
    assert (endpoint);
    char host [JACE_ENDPOINT_MAX];
    s_endpoint_host (endpoint, host, sizeof host);
    const char *only = NULL, *named = NULL;
    size_t count = 0;
    for (identity_t *identity = (identity_t *) zhashx_first (self->trusted);
         identity; identity = (identity_t *) zhashx_next (self->trusted)) {
        if (identity->role != JACE_ROLE_SUPERNODE)
            continue;
        count++;
        only = (const char *) zhashx_cursor (self->trusted);
        if (*host && streq (identity->name, host))
            named = only;
    }
    if (named || count == 1)
        return named ? named : only;
    if (reason)
        snprintf (reason, reason_size, "no super-node certificate for %s: "
                  "the keys directory holds %zu; name the super-node's "
                  "certificate after its host (jace-keygen DIR "
                  "supernode:HOST)", endpoint, count);
    return NULL;
}

//  --------------------------------------------------------------------------

bool
jace_security_authorise (jace_security_t *self, const jace_msg_t *msg,
                         unsigned roles, const char *who)
{
    assert (msg);
    if (!jace_security_enabled (self))
        return true;
    jace_role_t role = jace_security_role (self, jace_msg_user_id (msg));
    if (role & roles)
        return true;
    jace_security_unauthorised (self, msg, who, "a %s may not send it",
                                jace_role_name (role));
    return false;
}

void
jace_security_unauthorised (jace_security_t *self, const jace_msg_t *msg,
                            const char *who, const char *format, ...)
{
    assert (self && msg && who);
    uint64_t count = atomic_fetch_add (&self->unauthorised, 1) + 1;
    if (!s_worth_logging (count))
        return;
    va_list args;
    va_start (args, format);
    char why [256];
    vsnprintf (why, sizeof why, format, args);
    va_end (args);
    const char *user_id = jace_msg_user_id (msg);
    const char *address = jace_msg_peer_address (msg);
    zsys_warning ("%s: refused %s from %s (key %s, %s %s): %s (%" PRIu64
                  " unauthorised so far)", who,
                  jace_msg_type_name (jace_msg_type (msg)),
                  *address ? address : "a local peer",
                  *user_id ? user_id : "none",
                  jace_role_name (jace_security_role (self, user_id)),
                  s_name_of (self, user_id), why, count);
}

uint64_t
jace_security_unauthorised_count (jace_security_t *self)
{
    return self ? atomic_load (&self->unauthorised) : 0;
}

uint64_t
jace_security_refused_count (jace_security_t *self)
{
    return self ? atomic_load (&self->refused) : 0;
}

//  --------------------------------------------------------------------------

void
jace_security_apply_server (jace_security_t *self, zsock_t *sock)
{
    assert (sock);
    if (!jace_security_enabled (self))
        return;
    zcert_apply (self->cert, sock);
    zsock_set_curve_server (sock, 1);
    zsock_set_zap_domain (sock, "jace");
    //  Handshakes that fail before ZAP is asked reach our ZAP actor
    //  through the socket's monitor (the actor logs them).
    static atomic_uint watched = 0;
    char endpoint [64];
    snprintf (endpoint, sizeof endpoint, "inproc://jace-handshakes-%u",
              atomic_fetch_add (&watched, 1));
    if (zmq_socket_monitor (zsock_resolve (sock), endpoint,
                            ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                            | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) == 0)
        zstr_sendx (self->zap, "WATCH", endpoint, NULL);
}

int
jace_security_apply_client (jace_security_t *self, zsock_t *sock,
                            const char *server_key)
{
    assert (sock);
    if (!jace_security_enabled (self))
        return 0;
    //  Z85 keys are 40 characters; anything else would abort in libzmq.
    if (!server_key || strlen (server_key) != 40)
        return -1;
    zcert_apply (self->cert, sock);
    zsock_set_curve_serverkey (sock, server_key);
    return 0;
}

//  --------------------------------------------------------------------------

bool
jace_endpoint_is_loopback (const char *endpoint)
{
    assert (endpoint);
    if (strncmp (endpoint, "tcp://", 6) != 0
    &&  strncmp (endpoint, "ws://", 5) != 0)
        return true;            //  ipc://, inproc://: never leave the host
    const char *host = strstr (endpoint, "://") + 3;
    return strncmp (host, "127.", 4) == 0
        || strncmp (host, "localhost:", 10) == 0
        || strncmp (host, "[::1]:", 6) == 0
        || strncmp (host, "lo:", 3) == 0;
}

int
jace_security_check_bind (jace_security_t *self, const char *endpoint,
                          bool insecure, char *reason, size_t reason_size)
{
    if (jace_security_enabled (self) || insecure
    ||  jace_endpoint_is_loopback (endpoint))
        return 0;
    snprintf (reason, reason_size,
              "refusing to bind %s without --keys: links would be open to "
              "the network; give --keys DIR, or --insecure to accept this",
              endpoint);
    return -1;
}
