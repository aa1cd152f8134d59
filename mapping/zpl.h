/*  =========================================================================
    zpl - a ZPL (ZeroMQ Property Language, rfc 4) reader that keeps line
    numbers

    The platform and job files are ZPL, the syntax of CZMQ's zconfig.  We
    read them with this small reader instead of zconfig because zconfig
    reports syntax errors through the log and forgets where each item was
    written; our parsers must return "FILE:LINE: reason" and never log.
    The tree is read-only once built.
    =========================================================================
*/
#ifndef JACE_ZPL_H_INCLUDED
#define JACE_ZPL_H_INCLUDED

#include <stddef.h>

//  One item of a ZPL tree: a name, an optional value, children
typedef struct _zpl_t zpl_t;

//  Parse ZPL text into a tree whose root has no name.  Returns NULL and
//  writes "line N: reason" into error (when not NULL) on a syntax error.
zpl_t *
    zpl_parse (const char *text, char *error, size_t error_size);

//  Largest text file the planning tools read (job, platform, traffic
//  matrix, processors): far above any real one, and a bound on what a
//  wrong path (a device, a data file) can make them allocate.
#define ZPL_FILE_MAX (16 * 1024 * 1024)

//  Read a whole text file of at most `limit` bytes: a regular file, or a
//  pipe.  Returns a fresh NUL-terminated string, or NULL with "PATH:
//  reason" in error (when not NULL): cannot be opened, not a regular
//  file, larger than the limit, unreadable, or holding a NUL byte.
char *
    zpl_read_file (const char *path, size_t limit, char *error,
                   size_t error_size);

//  Read and parse a ZPL file.  Returns NULL and writes "PATH:LINE: reason"
//  (or "PATH: reason" when it cannot be read) into error on failure.
zpl_t *
    zpl_load (const char *path, char *error, size_t error_size);

//  Destroy a tree; nullifies the reference.  Safe on NULL.
void
    zpl_destroy (zpl_t **self_p);

//  Name of the item (the root's is "")
const char *
    zpl_name (zpl_t *self);

//  Value of the item, or NULL when it has none
const char *
    zpl_value (zpl_t *self);

//  Line where the item was written (0 for the root)
size_t
    zpl_line (zpl_t *self);

//  First child, or NULL
zpl_t *
    zpl_child (zpl_t *self);

//  Next sibling, or NULL
zpl_t *
    zpl_next (zpl_t *self);

//  First child with this name, or NULL
zpl_t *
    zpl_locate (zpl_t *self, const char *name);

//  The entry of known (NULL-terminated) nearest to name, for "did you
//  mean" hints about mistyped names: the one fewest single-character
//  edits away, if that is at most a third of name's length (at least 2);
//  NULL when none is that near.  Borrowed from known.
const char *
    zpl_nearest (const char *name, const char *const *known);

#endif
