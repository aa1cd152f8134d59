/*  =========================================================================
    jace_security - CURVE encryption and authentication of every link
    =========================================================================
*/
#include "jace_security.h"

struct _jace_security_t {
    zcert_t *cert;              //  Our certificate, or NULL (plain links)
    zcert_t *supernode_cert;    //  Public certificate of the super-nodes
    zactor_t *auth;             //  zauth actor checking client keys
};

//  --------------------------------------------------------------------------

static zcert_t *
s_load_cert (const char *keys_dir, const char *name, const char *suffix,
             char *reason, size_t reason_size)
{
    char *path = zsys_sprintf ("%s/%s%s", keys_dir, name, suffix);
    zcert_t *cert = zsys_file_exists (path) ? zcert_load (path) : NULL;
    if (!cert)
        snprintf (reason, reason_size,
                  "%s: no certificate (make one with jace-keygen %s %s)",
                  path, keys_dir, name);
    zstr_free (&path);
    return cert;
}

jace_security_t *
jace_security_new (const char *keys_dir, const char *cert,
                   char *reason, size_t reason_size)
{
    jace_security_t *self = (jace_security_t *) zmalloc (sizeof *self);
    if (!keys_dir)
        return self;
    assert (cert);
    if (!zsys_file_exists (keys_dir)) {
        snprintf (reason, reason_size, "%s: no such keys directory",
                  keys_dir);
        goto out_fail;
    }
    self->cert = s_load_cert (keys_dir, cert, ".cert_secret",
                              reason, reason_size);
    if (!self->cert)
        goto out_fail;
    self->supernode_cert = s_load_cert (keys_dir, JACE_SUPERNODE_CERT,
                                        ".cert", reason, reason_size);
    if (!self->supernode_cert)
        goto out_fail;
    self->auth = zactor_new (zauth, NULL);
    zstr_sendx (self->auth, "CURVE", keys_dir, NULL);
    zsock_wait (self->auth);
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
        zactor_destroy (&self->auth);
        zcert_destroy (&self->cert);
        zcert_destroy (&self->supernode_cert);
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

const char *
jace_security_supernode_key (jace_security_t *self)
{
    return jace_security_enabled (self)
           ? zcert_public_txt (self->supernode_cert) : "";
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
