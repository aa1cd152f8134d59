/*  =========================================================================
    app_table - the applications a daemon can run, by name
    =========================================================================
*/
#ifndef APP_TABLE_H_INCLUDED
#define APP_TABLE_H_INCLUDED

#include "jace_task.h"

//  The application called name, or NULL.
const jace_app_t *
    app_table_find (const char *name);

//  Names of all applications, comma-separated (for error messages).
const char *
    app_table_names (void);

#endif
