/*  =========================================================================
    app_plugin - load application plugins into the application table

    An application plugin is a shared library (NAME.so) that exports
    `const jace_app_t *jace_app (void)`, its jace_app_t built with the
    JACE_APP_ABI of this Jace (jace.h).  A process loads every "*.so" of
    its apps directories at start, in order: the --apps directories it was
    given, the directories of the JACE_APPS path (colon-separated), then
    the installed JACE_APPSDIR ($(pkglibdir)/apps).  The first plugin of a
    name is kept; a later one of the same name is skipped with a warning.
    Nothing else loads code: jobs and messages only name applications.
    =========================================================================
*/
#ifndef APP_PLUGIN_H_INCLUDED
#define APP_PLUGIN_H_INCLUDED

#include "jace.h"

//  Load the plugin at path into the application table.  Returns 0, or -1
//  with the reason, which names the file: it cannot be opened, has no
//  jace_app, was built for another ABI (both versions named), or its
//  application lacks a name or a callback the runtime needs.  A name
//  already in the table is not an error: the plugin is closed, with a
//  warning.
int
    app_plugin_load (const char *path, char *reason, size_t reason_size);

//  Load every "*.so" of directory dir, in name order.  A directory that
//  does not exist is an error when required, else skipped.  Returns the
//  number of plugins added, or -1 with the reason.
int
    app_plugin_load_dir (const char *dir, bool required, char *reason,
                         size_t reason_size);

//  Load the plugins of the `count` directories dirs (--apps: required),
//  then of the JACE_APPS path and the installed directory (skipped when
//  missing).  Returns the number added, or -1 with the reason.
int
    app_plugin_load_all (const char **dirs, size_t count, char *reason,
                         size_t reason_size);

//  Print the application table to out, one "NAME  SOURCE" line each
//  (SOURCE: "built in" or the plugin's file).
void
    app_plugin_print (FILE *out);

//  The installed plugin directory, $(pkglibdir)/apps.
const char *
    app_plugin_installed_dir (void);

#endif
