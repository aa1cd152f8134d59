/*  =========================================================================
    jace-keygen - make the CURVE certificates of a secured Jace grid

    jace-keygen DIR ROLE[:NAME]... creates DIR (mode 0700) and one
    certificate per host and role (default: supernode daemon spawner) with
    CZMQ's zcert: the public DIR/NAME.cert, whose metadata carries `role`
    (supernode, daemon or spawner) and `name`, and the secret
    DIR/NAME.cert_secret (mode 0600).

    The convention the processes follow (docs/SECURITY.md): a process given
    --keys DIR takes DIR/<cert>.cert_secret as its own identity (--cert
    NAME, by default its role), refused if others may read it, and trusts
    every .cert file in DIR with the role it names.  Every .cert goes to
    every host; each .cert_secret only to its own host, so that no host
    holds another's secret.
    =========================================================================
*/
#include <czmq.h>
#include <getopt.h>

//  Exit codes: 0 success, 1 failure, 2 bad command line
#define EXIT_USAGE 2
//  Longest certificate name
#define KEYGEN_NAME_MAX 64

//  The roles a certificate may name (jace_security's role metadata).
static const char *s_roles [] = { "supernode", "daemon", "spawner" };
#define ROLES (sizeof s_roles / sizeof s_roles [0])

//  One certificate to make.
typedef struct {
    const char *role;           //  One of s_roles
    char name [KEYGEN_NAME_MAX];
} request_t;

static const char *s_usage =
"Usage: jace-keygen [--force] DIR [ROLE[:NAME]]...\n"
"Create DIR (mode 0700) and one CURVE certificate per host and role:\n"
"DIR/NAME.cert (public, with metadata role and name) and\n"
"DIR/NAME.cert_secret (secret, mode 0600).  ROLE is supernode, daemon or\n"
"spawner (a user's tools); NAME defaults to ROLE.  Default: supernode\n"
"daemon spawner.  Example, one certificate per host and user:\n"
"    jace-keygen keys supernode:head1 daemon:node1 daemon:node2 spawner:alice\n"
"\n"
"A process started with --keys DIR --cert NAME uses DIR/NAME.cert_secret\n"
"as its identity (refused if group or others may read it; --cert defaults\n"
"to its role) and accepts only peers whose public certificate is in DIR,\n"
"with the role that certificate names.  Copy every .cert to every host,\n"
"and each .cert_secret only to its own host, by a secure channel.\n"
"\n"
"Options:\n"
"  -f, --force   replace certificates that exist already\n"
"  -h, --help    show this help\n"
"  -V, --version print the version and exit\n";


//  --------------------------------------------------------------------------
//  Complain about the command line

static int
s_usage_error (const char *format, ...)
{
    va_list args;
    va_start (args, format);
    fprintf (stderr, "jace-keygen: ");
    vfprintf (stderr, format, args);
    fprintf (stderr, "\nTry 'jace-keygen --help' for more information.\n");
    va_end (args);
    return EXIT_USAGE;
}


//  --------------------------------------------------------------------------
//  True if name can be a certificate file name: letters, digits, '.', '_'
//  and '-', not starting with '.' or '-'

static bool
s_is_cert_name (const char *name)
{
    if (!*name || strlen (name) >= KEYGEN_NAME_MAX
    ||  name [0] == '.' || name [0] == '-')
        return false;
    for (const char *cursor = name; *cursor; cursor++)
        if (!isalnum ((unsigned char) *cursor) && !strchr ("._-", *cursor))
            return false;
    return true;
}


//  --------------------------------------------------------------------------
//  Parse ROLE[:NAME] (a bare ROLE names itself) into request.  Returns 0, or
//  a usage error.

static int
s_parse_request (const char *word, request_t *request)
{
    const char *colon = strchr (word, ':');
    size_t role_length = colon ? (size_t) (colon - word) : strlen (word);
    request->role = NULL;
    for (size_t index = 0; index < ROLES; index++)
        if (strlen (s_roles [index]) == role_length
        &&  strncmp (s_roles [index], word, role_length) == 0)
            request->role = s_roles [index];
    if (!request->role)
        return s_usage_error ("unknown role '%.*s' in '%s': give ROLE or "
                              "ROLE:NAME, ROLE being supernode, daemon or "
                              "spawner", (int) role_length, word, word);
    const char *name = colon ? colon + 1 : word;
    if (!s_is_cert_name (name))
        return s_usage_error ("bad certificate name '%s' in '%s' (use "
                              "letters, digits, '.', '_' or '-', at most %d)",
                              name, word, KEYGEN_NAME_MAX - 1);
    snprintf (request->name, sizeof request->name, "%s", name);
    return 0;
}


//  --------------------------------------------------------------------------
//  Create dir with mode 0700 unless it exists; warn when an existing one is
//  open to others, since it holds secrets.  Returns 0 or -1.

static int
s_make_key_dir (const char *dir)
{
    if (mkdir (dir, 0700) == 0)
        return 0;
    if (errno != EEXIST) {
        fprintf (stderr, "jace-keygen: cannot create %s: %s\n", dir,
                 strerror (errno));
        return -1;
    }
    struct stat info;
    if (stat (dir, &info) != 0 || !S_ISDIR (info.st_mode)) {
        fprintf (stderr, "jace-keygen: %s exists and is not a directory\n",
                 dir);
        return -1;
    }
    if (info.st_mode & (S_IRWXG | S_IRWXO))
        fprintf (stderr, "jace-keygen: warning: %s is open to other users"
                 " (mode %03o); consider chmod 700 %s\n", dir,
                 (unsigned) (info.st_mode & 0777), dir);
    return 0;
}


//  --------------------------------------------------------------------------
//  Fail if a certificate file of name exists already (unless force)

static int
s_check_free (const char *dir, const char *name, bool force)
{
    int rc = 0;
    const char *suffixes [] = { ".cert", ".cert_secret" };
    for (size_t index = 0; index < 2 && !force; index++) {
        char *path = zsys_sprintf ("%s/%s%s", dir, name, suffixes [index]);
        if (access (path, F_OK) == 0) {
            fprintf (stderr, "jace-keygen: %s exists; use --force to replace"
                     " it\n", path);
            rc = -1;
        }
        free (path);
    }
    return rc;
}


//  --------------------------------------------------------------------------
//  Make and save one certificate.  Returns 0 or -1.

static int
s_make_cert (const char *dir, const request_t *request)
{
    const char *name = request->name;
    zcert_t *cert = zcert_new ();
    if (!cert) {
        fprintf (stderr, "jace-keygen: cannot make a key pair for %s\n",
                 name);
        return -1;
    }
    zcert_set_meta (cert, "role", "%s", request->role);
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "created-by", "jace-keygen");
    char *path = zsys_sprintf ("%s/%s.cert", dir, name);
    char *secret = zsys_sprintf ("%s_secret", path);
    //  Written under the umask first: tighten before anyone else looks,
    //  the folder being 0700 meanwhile when we made it.
    unlink (secret);
    int rc = zcert_save (cert, path);
    if (rc == 0)
        rc = chmod (secret, 0600);
    if (rc == 0)
        rc = chmod (path, 0644);
    if (rc == 0)
        printf ("%s %s %s\n", path, zcert_public_txt (cert), request->role);
    else
        fprintf (stderr, "jace-keygen: cannot write %s: %s\n", path,
                 strerror (errno));
    free (secret);
    free (path);
    zcert_destroy (&cert);
    return rc;
}


//  --------------------------------------------------------------------------
//  Make every requested certificate in dir.  Returns 0 or 1.

static int
s_make_all (const char *dir, const request_t *requests, int count,
            bool force)
{
    if (!zsys_has_curve ()) {
        fprintf (stderr, "jace-keygen: this libzmq has no CURVE support"
                 " (build it with libsodium)\n");
        return 1;
    }
    if (s_make_key_dir (dir))
        return 1;
    int refused = 0;
    for (int index = 0; index < count; index++)
        if (s_check_free (dir, requests [index].name, force))
            refused++;
    if (refused)
        return 1;
    for (int index = 0; index < count; index++)
        if (s_make_cert (dir, &requests [index]))
            return 1;
    fprintf (stderr, "jace-keygen: copy every .cert to every host, and each"
             " .cert_secret only to its own host (mode 0600)\n");
    return 0;
}


int
main (int argc, char **argv)
{
    static const struct option table [] = {
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    bool force = false;
    int code;
    opterr = 0;
    while ((code = getopt_long (argc, argv, "fhV", table, NULL)) != -1) {
        if (code == 'h') {
            fputs (s_usage, stdout);
            return 0;
        }
        if (code == 'V') {
            printf ("jace-keygen %s\n", PACKAGE_VERSION);
            return 0;
        }
        if (code == 'f')
            force = true;
        else
            return s_usage_error ("unknown option '%s'", argv [optind - 1]);
    }
    if (optind >= argc)
        return s_usage_error ("missing DIR");
    const char *dir = argv [optind++];
    int count = optind < argc ? argc - optind : (int) ROLES;
    request_t *requests = (request_t *) zmalloc (count * sizeof *requests);
    int status = 0;

    //  Check every request before writing anything, so that a refused run
    //  changes nothing.
    for (int index = 0; index < count && !status; index++) {
        const char *word = optind < argc ? argv [optind + index]
                                         : s_roles [index];
        status = s_parse_request (word, &requests [index]);
        for (int other = 0; other < index && !status; other++)
            if (streq (requests [other].name, requests [index].name))
                status = s_usage_error ("certificate name '%s' given twice",
                                        requests [index].name);
    }
    if (!status)
        status = s_make_all (dir, requests, count, force);
    free (requests);
    return status;
}
