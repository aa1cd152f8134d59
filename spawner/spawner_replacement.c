/*  =========================================================================
    spawner_replacement - where a task goes when its daemon dies
    =========================================================================
*/
#include "spawner_replacement.h"

static int
s_same_cluster_spare (const jace_node_t *dead, const jace_node_t *spares,
                      size_t count)
{
    int strongest = -1;
    for (size_t i = 0; i < count; i++) {
        if (streq (spares [i].cluster, dead->cluster))
            return (int) i;
        if (strongest < 0 || spares [i].power > spares [strongest].power)
            strongest = (int) i;
    }
    return strongest;
}

static const char *
s_same_cluster_lease (const jace_node_t *dead)
{
    return dead->cluster;
}

static int
s_any_spare (const jace_node_t *dead, const jace_node_t *spares,
             size_t count)
{
    return count > 0 ? 0 : -1;
}

static const char *
s_any_lease (const jace_node_t *dead)
{
    return "";
}

static const spawner_replacement_t s_policies [] = {
    { "same-cluster", s_same_cluster_spare, s_same_cluster_lease },
    { "any", s_any_spare, s_any_lease }
};

#define POLICY_COUNT (sizeof s_policies / sizeof s_policies [0])

const spawner_replacement_t *
spawner_replacement_find (const char *name)
{
    for (size_t i = 0; name && i < POLICY_COUNT; i++)
        if (streq (s_policies [i].name, name))
            return &s_policies [i];
    return NULL;
}

const char *
spawner_replacement_names (void)
{
    return "same-cluster, any";
}
