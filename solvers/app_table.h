/*  =========================================================================
    app_table - the applications a process can run, by name

    The built-in applications (exchange, jacobi2d, multisplit) and those a
    process added: the plugins it loaded at start (app_plugin), or a test's
    own.  Lookups never load anything: a job or a message names an
    application, and finds it here or nowhere.  The table is filled before
    a process starts its actors and only read afterwards.
    =========================================================================
*/
#ifndef APP_TABLE_H_INCLUDED
#define APP_TABLE_H_INCLUDED

#include "jace_task.h"

//  Most applications a process holds, built-ins included.
#define APP_TABLE_MAX 64

//  The application called name, or NULL.
const jace_app_t *
    app_table_find (const char *name);

//  Add app, from `source` (a plugin's file, or a test's name for it;
//  copied).  Returns 0, or -1 with the reason when its name is taken (by
//  a built-in or an earlier plugin: the first one found is kept) or the
//  table is full.
int
    app_table_add (const jace_app_t *app, const char *source, char *reason,
                   size_t reason_size);

//  Number of applications, and each one with where it came from ("built
//  in" or a plugin's file), in the table's order.
size_t
    app_table_size (void);
const jace_app_t *
    app_table_at (size_t index, const char **source);

//  Names of all applications, comma-separated (for error messages).
//  Borrowed until the table changes.
const char *
    app_table_names (void);

//  Names of all applications separated by one space, as a daemon's node
//  record advertises them, into buffer.  Returns 0, or -1 if they do not
//  fit (buffer then holds the names that do).
int
    app_table_advertise (char *buffer, size_t size);

//  True if name looks like a file path rather than an application name
//  (a '/', a leading '.' or '~', a ".so" suffix): jobs never name files.
bool
    app_table_is_path (const char *name);

#endif
