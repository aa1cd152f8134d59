/*  =========================================================================
    app_table - the applications a daemon can run, by name
    =========================================================================
*/
#include "app_table.h"
#include "app_exchange.h"
#include "app_jacobi2d.h"
#include "app_multisplit.h"

static const jace_app_t *s_apps [] = {
    &app_exchange,
    &app_jacobi2d,
    &app_multisplit,
};

const jace_app_t *
app_table_find (const char *name)
{
    assert (name);
    for (size_t i = 0; i < sizeof s_apps / sizeof s_apps [0]; i++)
        if (streq (s_apps [i]->name, name))
            return s_apps [i];
    return NULL;
}

const char *
app_table_names (void)
{
    return "exchange, jacobi2d, multisplit";
}
