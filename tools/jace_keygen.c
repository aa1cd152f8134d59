/*  =========================================================================
    jace-keygen - make the CURVE certificates of a secured Jace grid

    jace-keygen DIR [NAME]... creates DIR (mode 0700) and one certificate
    per NAME (default: supernode daemon spawner) with CZMQ's zcert: the
    public DIR/NAME.cert and the secret DIR/NAME.cert_secret (mode 0600).

    The convention the processes follow: a process given --keys DIR takes
    DIR/<cert>.cert_secret as its own identity (--cert NAME, by default its
    role) and trusts every .cert file in DIR; a client of a super-node uses the
    public key in DIR/supernode.cert.  Copy DIR to every machine of the
    grid; anyone holding a secret file can join it.
    =========================================================================
*/
#include <czmq.h>
#include <getopt.h>

//  Exit codes: 0 success, 1 failure, 2 bad command line
#define EXIT_USAGE 2
//  Longest certificate name
#define KEYGEN_NAME_MAX 64

static const char *s_usage =
"Usage: jace-keygen [--force] DIR [NAME]...\n"
"Create DIR (mode 0700) and one CURVE certificate per NAME (default:\n"
"supernode daemon spawner): DIR/NAME.cert (public) and DIR/NAME.cert_secret\n"
"(secret, mode 0600).\n"
"\n"
"A process started with --keys DIR uses DIR/<cert>.cert_secret as its\n"
"identity (--cert NAME; default its role: supernode, daemon or spawner)\n"
"and accepts only peers whose public certificate is in DIR.  Copy DIR to\n"
"every machine of the grid, by a secure channel.\n"
"\n"
"Options:\n"
"  -f, --force   replace certificates that exist already\n"
"  -h, --help    show this help\n";


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
s_make_cert (const char *dir, const char *name)
{
    zcert_t *cert = zcert_new ();
    if (!cert) {
        fprintf (stderr, "jace-keygen: cannot make a key pair for %s\n",
                 name);
        return -1;
    }
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
        printf ("%s %s\n", path, zcert_public_txt (cert));
    else
        fprintf (stderr, "jace-keygen: cannot write %s: %s\n", path,
                 strerror (errno));
    free (secret);
    free (path);
    zcert_destroy (&cert);
    return rc;
}


int
main (int argc, char **argv)
{
    static const struct option table [] = {
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    bool force = false;
    int code;
    opterr = 0;
    while ((code = getopt_long (argc, argv, "fh", table, NULL)) != -1) {
        if (code == 'h') {
            fputs (s_usage, stdout);
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
    const char *default_names [] = { "supernode", "daemon", "spawner" };
    const char **names = optind < argc ? (const char **) argv + optind
                                       : default_names;
    int count = optind < argc ? argc - optind : 3;

    //  Check every name before writing anything, so that a refused run
    //  changes nothing.
    for (int index = 0; index < count; index++) {
        if (!s_is_cert_name (names [index]))
            return s_usage_error ("bad certificate name '%s' (use letters,"
                                  " digits, '.', '_' or '-')", names [index]);
        for (int other = 0; other < index; other++)
            if (streq (names [other], names [index]))
                return s_usage_error ("certificate name '%s' given twice",
                                      names [index]);
    }
    if (!zsys_has_curve ()) {
        fprintf (stderr, "jace-keygen: this libzmq has no CURVE support"
                 " (build it with libsodium)\n");
        return 1;
    }
    if (s_make_key_dir (dir))
        return 1;
    int refused = 0;
    for (int index = 0; index < count; index++)
        if (s_check_free (dir, names [index], force))
            refused++;
    if (refused)
        return 1;
    for (int index = 0; index < count; index++)
        if (s_make_cert (dir, names [index]))
            return 1;
    return 0;
}
