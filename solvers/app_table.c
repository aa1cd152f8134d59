/*  =========================================================================
    app_table - the applications a process can run, by name
    =========================================================================
*/
#include "app_table.h"
#include "app_exchange.h"
#include "app_jacobi2d.h"
#include "app_multisplit.h"

#define BUILT_IN "built in"

typedef struct {
    const jace_app_t *app;
    char *source;               //  NULL for a built-in
} entry_t;

static const jace_app_t *s_built_ins [] = {
    &app_exchange,
    &app_jacobi2d,
    &app_multisplit,
};
#define BUILT_INS (sizeof s_built_ins / sizeof s_built_ins [0])

//  The added applications (the built-ins are not copied in).
static entry_t s_added [APP_TABLE_MAX - BUILT_INS];
static size_t s_added_count;
//  app_table_names once something was added, remade by each addition
//  (before the actors that read it start).
static char s_names [APP_TABLE_MAX * (JACE_ID_MAX + 2)];
#define BUILT_IN_NAMES "exchange, jacobi2d, multisplit"

static int s_join (char *buffer, size_t size, const char *separator);

size_t
app_table_size (void)
{
    return BUILT_INS + s_added_count;
}

const jace_app_t *
app_table_at (size_t index, const char **source)
{
    if (index < BUILT_INS) {
        if (source)
            *source = BUILT_IN;
        return s_built_ins [index];
    }
    index -= BUILT_INS;
    assert (index < s_added_count);
    if (source)
        *source = s_added [index].source;
    return s_added [index].app;
}

const jace_app_t *
app_table_find (const char *name)
{
    assert (name);
    for (size_t i = 0; i < app_table_size (); i++) {
        const jace_app_t *app = app_table_at (i, NULL);
        if (streq (app->name, name))
            return app;
    }
    return NULL;
}

int
app_table_add (const jace_app_t *app, const char *source, char *reason,
               size_t reason_size)
{
    assert (app && app->name && source);
    for (size_t i = 0; i < app_table_size (); i++) {
        const char *holder;
        if (streq (app_table_at (i, &holder)->name, app->name)) {
            snprintf (reason, reason_size, "%s: application '%s' is "
                      "already loaded (%s), this one is not", source,
                      app->name, holder);
            return -1;
        }
    }
    if (app_table_size () == APP_TABLE_MAX) {
        snprintf (reason, reason_size, "%s: not loaded, a process holds at "
                  "most %d applications", source, APP_TABLE_MAX);
        return -1;
    }
    s_added [s_added_count].app = app;
    s_added [s_added_count].source = strdup (source);
    s_added_count++;
    s_join (s_names, sizeof s_names, ", ");
    return 0;
}

//  The names separated by `separator`, into buffer.
static int
s_join (char *buffer, size_t size, const char *separator)
{
    assert (size > 0);
    *buffer = 0;
    size_t used = 0;
    for (size_t i = 0; i < app_table_size (); i++) {
        const char *name = app_table_at (i, NULL)->name;
        int wrote = snprintf (buffer + used, size - used, "%s%s",
                              i ? separator : "", name);
        if (wrote < 0 || (size_t) wrote >= size - used) {
            buffer [used] = 0;
            return -1;
        }
        used += (size_t) wrote;
    }
    return 0;
}

const char *
app_table_names (void)
{
    return s_added_count ? s_names : BUILT_IN_NAMES;
}

int
app_table_advertise (char *buffer, size_t size)
{
    return s_join (buffer, size, " ");
}

bool
app_table_is_path (const char *name)
{
    assert (name);
    size_t length = strlen (name);
    return strchr (name, '/') || *name == '.' || *name == '~'
        || (length > 3 && streq (name + length - 3, ".so"));
}
