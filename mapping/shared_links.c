/*  =========================================================================
    shared_links - a platform's shared link resources, numbered
    =========================================================================
*/
#include "mapping.h"

typedef enum {
    RESOURCE_UPLINK_OUT,        //  A cluster's traffic leaving it
    RESOURCE_UPLINK_IN,         //  A cluster's traffic coming in
    RESOURCE_BACKBONE,          //  Every pair without a link of its own
    RESOURCE_LINK               //  One pair's own link
} resource_kind_t;

//  One shared resource, as numbered
typedef struct {
    resource_kind_t kind;       //  What it is
    size_t first;               //  Its cluster, or a link's first cluster
    size_t second;              //  A link's second cluster
} resource_t;

//  True if some pair of clusters has no link of its own, so uses the
//  backbone
static bool
s_backbone_is_used (platform_t *platform)
{
    size_t clusters = platform_cluster_count (platform);
    for (size_t first = 0; first < clusters; first++)
        for (size_t second = first + 1; second < clusters; second++)
            if (!platform_has_own_link (platform, first, second))
                return true;
    return false;
}

//  Number the resources, in the order shared_links.h gives; writes them
//  into resources when not NULL.  Returns how many there are.
static size_t
s_enumerate (platform_t *platform, resource_t *resources)
{
    size_t clusters = platform_cluster_count (platform);
    size_t count = 0;
    for (size_t cluster = 0; cluster < clusters; cluster++)
        if (platform_uplink_mbps (platform, cluster) > 0) {
            if (resources) {
                resources [count] = (resource_t) {
                    RESOURCE_UPLINK_OUT, cluster, cluster };
                resources [count + 1] = (resource_t) {
                    RESOURCE_UPLINK_IN, cluster, cluster };
            }
            count += 2;
        }
    if (!platform_backbone_is_shared (platform))
        return count;
    if (s_backbone_is_used (platform)) {
        if (resources)
            resources [count] = (resource_t) { RESOURCE_BACKBONE, 0, 0 };
        count++;
    }
    for (size_t first = 0; first < clusters; first++)
        for (size_t second = first + 1; second < clusters; second++)
            if (platform_has_own_link (platform, first, second)) {
                if (resources)
                    resources [count] = (resource_t) {
                        RESOURCE_LINK, first, second };
                count++;
            }
    return count;
}

//  The platform's resources, numbered; the caller frees them
static resource_t *
s_resources (platform_t *platform, size_t *count)
{
    *count = s_enumerate (platform, NULL);
    resource_t *resources = (resource_t *) malloc (
        (*count ? *count : 1) * sizeof (resource_t));
    assert (resources);
    s_enumerate (platform, resources);
    return resources;
}


size_t
shared_links_count (platform_t *platform)
{
    assert (platform);
    return s_enumerate (platform, NULL);
}


void
shared_links_resource (platform_t *platform, size_t index,
                       double *bandwidth_mbps, size_t *transfers)
{
    assert (platform);
    assert (bandwidth_mbps && transfers);
    size_t count;
    resource_t *resources = s_resources (platform, &count);
    assert (index < count);
    resource_t resource = resources [index];
    free (resources);
    *transfers = 0;
    if (resource.kind == RESOURCE_UPLINK_OUT
    ||  resource.kind == RESOURCE_UPLINK_IN)
        *bandwidth_mbps = platform_uplink_mbps (platform, resource.first);
    else
    if (resource.kind == RESOURCE_LINK) {
        *bandwidth_mbps = platform_bandwidth_mbps (platform, resource.first,
                                                   resource.second);
        *transfers = platform_link_transfers (platform, resource.first,
                                              resource.second);
    }
    else {
        //  The backbone's figure is what every pair without a link gets;
        //  there is one such pair, or the backbone would not be numbered.
        *bandwidth_mbps = 0;
        size_t clusters = platform_cluster_count (platform);
        for (size_t first = 0; first < clusters && !*bandwidth_mbps;
             first++)
            for (size_t second = first + 1; second < clusters; second++)
                if (!platform_has_own_link (platform, first, second)) {
                    *bandwidth_mbps = platform_bandwidth_mbps (
                        platform, first, second);
                    break;
                }
        *transfers = platform_backbone_transfers (platform);
    }
}


size_t
shared_links_path (platform_t *platform, size_t from, size_t to,
                   size_t *path)
{
    assert (platform);
    assert (path);
    assert (from < platform_cluster_count (platform));
    assert (to < platform_cluster_count (platform));
    if (from == to)
        return 0;
    size_t count;
    resource_t *resources = s_resources (platform, &count);
    bool own = platform_has_own_link (platform, from, to);
    size_t low = from < to ? from : to, high = from < to ? to : from;
    size_t hops = 0;
    for (size_t index = 0; index < count; index++) {
        resource_t *resource = &resources [index];
        if ((resource->kind == RESOURCE_UPLINK_OUT && resource->first == from)
        ||  (resource->kind == RESOURCE_UPLINK_IN && resource->first == to)
        ||  (resource->kind == RESOURCE_BACKBONE && !own)
        ||  (resource->kind == RESOURCE_LINK && resource->first == low
             && resource->second == high))
            path [hops++] = index;
    }
    free (resources);
    assert (hops <= SHARED_LINKS_PATH_MAX);
    return hops;
}
