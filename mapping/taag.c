/*  =========================================================================
    taag - topology-aware scheduling of process groups (TAAG)

    The search maps every kept partition; to keep it fast each cluster's
    free capacity is kept up to date as hosts fill (a host belongs to at
    most one cluster per level), so finding the first cluster with room
    costs one pass over the sorted cluster list.
    =========================================================================
*/
#include "mapping.h"

typedef enum {
    SCHEMA_GROUPS,
    SCHEMA_RING,
    SCHEMA_TREE,
    SCHEMA_GRAPH
} schema_kind_t;

struct _taag_topology_t {
    size_t count;               //  Number of hosts
    char **names;               //  Host names
    size_t *cpus;               //  CPUs of each host
    double *latency;            //  count x count latencies, ms
    size_t *level;              //  count x count levels, when fresh
    bool levels_fresh;          //  False after a latency changed
};

struct _taag_schema_t {
    schema_kind_t kind;         //  Groups, Ring, Tree or Graph
    char *text;                 //  The schema as written
    size_t processes;           //  N (leaves for Tree; sum for Graph)
    size_t min_size;            //  Least group size
    size_t min_groups;          //  Least number of groups
    size_t group_count;         //  Graph: number of groups
    size_t *sizes;              //  Graph: size of each group
    size_t link_count;          //  Graph: number of links
    size_t *links;              //  Graph: pairs of group indices
};

struct _taag_partitions_t {
    size_t count;               //  Number of partitions
    size_t capacity;            //  Allocated partitions
    size_t *first;              //  Offset of each partition's sizes
    size_t *groups;             //  Groups of each partition
    size_t *sizes;              //  All sizes, partition after partition
    size_t size_count;          //  Sizes stored
    size_t size_capacity;       //  Allocated sizes
};

struct _taag_mapping_t {
    char *schema;               //  Schema text
    size_t process_count;       //  Number of processes
    size_t group_count;         //  Number of groups
    size_t *group;              //  Group of each rank (SIZE_MAX: global)
    taag_role_t *role;          //  Role of each rank
    char **host;                //  Host name of each rank
    size_t *manager;            //  Local manager rank of each group
    size_t global_manager;      //  Rank of the global manager, or SIZE_MAX
    size_t link_count;          //  Links between groups
    size_t *links;              //  Pairs of group indices
    size_t level;               //  Cost: max level inside groups
    double max_ms;              //  Cost: max latency between linked groups
    double average_ms;          //  Cost: average of those latencies
};

//  ---------------------------------------------------------------------
//  Topology

taag_topology_t *
taag_topology_new (size_t hosts)
{
    assert (hosts >= 1);
    taag_topology_t *self = (taag_topology_t *) calloc (1, sizeof (*self));
    assert (self);
    self->count = hosts;
    self->names = (char **) calloc (hosts, sizeof (char *));
    self->cpus = (size_t *) malloc (hosts * sizeof (size_t));
    self->latency = (double *) calloc (hosts * hosts, sizeof (double));
    self->level = (size_t *) calloc (hosts * hosts, sizeof (size_t));
    assert (self->names && self->cpus && self->latency && self->level);
    for (size_t host = 0; host < hosts; host++) {
        char name [32];
        snprintf (name, sizeof name, "H%zu", host + 1);
        self->names [host] = strdup (name);
        self->cpus [host] = 1;
    }
    return self;
}

taag_topology_t *
taag_topology_new_from_platform (platform_t *platform)
{
    assert (platform);
    size_t hosts = platform_node_count (platform);
    taag_topology_t *self = taag_topology_new (hosts);
    for (size_t host = 0; host < hosts; host++) {
        size_t cluster = platform_node_cluster (platform, host);
        size_t local = host - platform_node_index (platform, cluster, 0);
        char name [200];
        snprintf (name, sizeof name, "%s-%zu",
                  platform_cluster_name (platform, cluster), local);
        free (self->names [host]);
        self->names [host] = strdup (name);
        for (size_t other = 0; other < host; other++)
            taag_topology_set_latency (self, host, other, 1e-3
                * platform_latency_us (platform, cluster,
                      platform_node_cluster (platform, other)));
    }
    return self;
}

//  A small generator of our own, so runs are reproducible everywhere
static unsigned
s_next_random (unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

taag_topology_t *
taag_topology_new_virtual (size_t hosts, unsigned seed)
{
    taag_topology_t *self = taag_topology_new (hosts);
    size_t *site = (size_t *) malloc (hosts * sizeof (size_t));
    assert (site);
    unsigned state = seed;
    size_t current = 0, left = 0;
    for (size_t host = 0; host < hosts; host++) {
        if (left == 0) {
            left = 8 + s_next_random (&state) % 13;
            current = host ? current + 1 : 0;
        }
        site [host] = current;
        left--;
        unsigned draw = s_next_random (&state) % 100;
        self->cpus [host] = draw < 40 ? 1 : draw < 72 ? 2 : 4;
    }
    //  Three sites per region
    for (size_t host = 0; host < hosts; host++)
        for (size_t other = 0; other < host; other++) {
            double scale = site [host] == site [other] ? 0.1
                         : site [host] / 3 == site [other] / 3 ? 1 : 10;
            double latency = scale * (1 + s_next_random (&state) % 9);
            taag_topology_set_latency (self, host, other, latency);
        }
    free (site);
    return self;
}

void
taag_topology_destroy (taag_topology_t **self_p)
{
    assert (self_p);
    taag_topology_t *self = *self_p;
    if (!self)
        return;
    for (size_t host = 0; host < self->count; host++)
        free (self->names [host]);
    free (self->names);
    free (self->cpus);
    free (self->latency);
    free (self->level);
    free (self);
    *self_p = NULL;
}

void
taag_topology_set_cpus (taag_topology_t *self, size_t host, size_t cpus)
{
    assert (self);
    assert (host < self->count);
    self->cpus [host] = cpus;
}

void
taag_topology_set_latency (taag_topology_t *self, size_t first,
                           size_t second, double latency_ms)
{
    assert (self);
    assert (first < self->count && second < self->count);
    assert (latency_ms >= 0);
    self->latency [first * self->count + second] = latency_ms;
    self->latency [second * self->count + first] = latency_ms;
    self->levels_fresh = false;
}

size_t
taag_topology_host_count (taag_topology_t *self)
{
    assert (self);
    return self->count;
}

const char *
taag_topology_host_name (taag_topology_t *self, size_t host)
{
    assert (self);
    assert (host < self->count);
    return self->names [host];
}

//  Order of magnitude of a latency; zero latencies form their own class
static int
s_magnitude (double latency)
{
    return latency > 0 ? (int) floor (log10 (latency) + 1e-12) : INT_MIN;
}

static int
s_compare_ints (const void *first, const void *second)
{
    int a = *(const int *) first, b = *(const int *) second;
    return (a > b) - (a < b);
}

//  Levels of every link: distinct magnitudes in ascending order
static void
s_refresh_levels (taag_topology_t *self)
{
    if (self->levels_fresh)
        return;
    size_t count = self->count;
    int *magnitudes = (int *) malloc ((count * count + 1) * sizeof (int));
    assert (magnitudes);
    size_t distinct = 0;
    for (size_t first = 0; first < count; first++)
        for (size_t second = first + 1; second < count; second++)
            magnitudes [distinct++] = s_magnitude (
                self->latency [first * count + second]);
    qsort (magnitudes, distinct, sizeof (int), s_compare_ints);
    size_t unique = 0;
    for (size_t index = 0; index < distinct; index++)
        if (unique == 0 || magnitudes [unique - 1] != magnitudes [index])
            magnitudes [unique++] = magnitudes [index];
    for (size_t first = 0; first < count; first++)
        for (size_t second = 0; second < count; second++) {
            size_t level = 0;
            if (first != second) {
                int magnitude = s_magnitude (
                    self->latency [first * count + second]);
                while (magnitudes [level] != magnitude)
                    level++;
                level++;
            }
            self->level [first * count + second] = level;
        }
    free (magnitudes);
    self->levels_fresh = true;
}

size_t
taag_latency_level (taag_topology_t *self, size_t first, size_t second)
{
    assert (self);
    assert (first < self->count && second < self->count);
    s_refresh_levels (self);
    return self->level [first * self->count + second];
}

//  ---------------------------------------------------------------------
//  Latency clusters

static size_t
s_find (size_t *parent, size_t node)
{
    while (parent [node] != node)
        node = parent [node] = parent [parent [node]];
    return node;
}

static int
s_compare_clusters (const void *first_p, const void *second_p)
{
    const taag_cluster_t *first = (const taag_cluster_t *) first_p;
    const taag_cluster_t *second = (const taag_cluster_t *) second_p;
    if (first->level != second->level)
        return first->level < second->level ? -1 : 1;
    if (first->capacity != second->capacity)
        return first->capacity > second->capacity ? -1 : 1;
    return first->hosts [0] < second->hosts [0] ? -1
         : first->hosts [0] > second->hosts [0];
}

//  Add the cluster of hosts unless the same set is already there
static void
s_add_cluster (taag_topology_t *self, taag_cluster_t *clusters,
               size_t *count, const size_t *hosts, size_t size,
               size_t coefficient)
{
    for (size_t index = 0; index < *count; index++)
        if (clusters [index].count == size
        &&  memcmp (clusters [index].hosts, hosts, size * sizeof (size_t)) == 0)
            return;
    taag_cluster_t *cluster = &clusters [(*count)++];
    cluster->count = size;
    cluster->hosts = (size_t *) malloc (size * sizeof (size_t));
    assert (cluster->hosts);
    memcpy (cluster->hosts, hosts, size * sizeof (size_t));
    cluster->capacity = 0;
    cluster->level = 0;
    for (size_t index = 0; index < size; index++) {
        cluster->capacity += self->cpus [hosts [index]] * coefficient;
        for (size_t other = 0; other < index; other++) {
            size_t level = self->level [hosts [index] * self->count
                                        + hosts [other]];
            if (level > cluster->level)
                cluster->level = level;
        }
    }
}

taag_cluster_t *
taag_latency_clusters (taag_topology_t *self, size_t coefficient,
                       size_t *count)
{
    assert (self && count);
    assert (coefficient >= 1);
    s_refresh_levels (self);
    size_t hosts = self->count;
    size_t top = 0;
    for (size_t cell = 0; cell < hosts * hosts; cell++)
        if (self->level [cell] > top)
            top = self->level [cell];
    //  At most one cluster per host and level (components are disjoint)
    taag_cluster_t *clusters = (taag_cluster_t *) calloc (
        hosts * (top + 1) + 1, sizeof (taag_cluster_t));
    size_t *parent = (size_t *) malloc (hosts * sizeof (size_t));
    size_t *members = (size_t *) malloc (hosts * sizeof (size_t));
    assert (clusters && parent && members);
    *count = 0;
    for (size_t host = 0; host < hosts; host++)
        s_add_cluster (self, clusters, count, &host, 1, coefficient);
    for (size_t level = 1; level <= top; level++) {
        for (size_t host = 0; host < hosts; host++)
            parent [host] = host;
        for (size_t first = 0; first < hosts; first++)
            for (size_t second = first + 1; second < hosts; second++)
                if (self->level [first * hosts + second] <= level)
                    parent [s_find (parent, first)] = s_find (parent, second);
        for (size_t root = 0; root < hosts; root++) {
            size_t size = 0;
            for (size_t host = 0; host < hosts; host++)
                if (s_find (parent, host) == root)
                    members [size++] = host;
            if (size >= 2)
                s_add_cluster (self, clusters, count, members, size,
                               coefficient);
        }
    }
    qsort (clusters, *count, sizeof (taag_cluster_t), s_compare_clusters);
    free (parent);
    free (members);
    return clusters;
}

void
taag_clusters_destroy (taag_cluster_t **clusters_p, size_t count)
{
    assert (clusters_p);
    taag_cluster_t *clusters = *clusters_p;
    if (!clusters)
        return;
    for (size_t index = 0; index < count; index++)
        free (clusters [index].hosts);
    free (clusters);
    *clusters_p = NULL;
}

//  ---------------------------------------------------------------------
//  Schemas

//  Read a whole number at *cursor, skipping blanks; false if none
static bool
s_read_count (const char **cursor, size_t *value)
{
    while (isspace ((unsigned char) **cursor))
        (*cursor)++;
    if (!isdigit ((unsigned char) **cursor))
        return false;
    char *end;
    unsigned long long number = strtoull (*cursor, &end, 10);
    if (number > 1000000)
        return false;
    *value = (size_t) number;
    *cursor = end;
    return true;
}

//  Expect character c (after blanks)
static bool
s_expect (const char **cursor, char c)
{
    while (isspace ((unsigned char) **cursor))
        (*cursor)++;
    if (**cursor != c)
        return false;
    (*cursor)++;
    return true;
}

//  Parse "[a, b, ...]" of counts, or "[a-b, ...]" of pairs when pairs
static bool
s_read_list (const char **cursor, bool pairs, size_t **items, size_t *count)
{
    if (!s_expect (cursor, '['))
        return false;
    size_t capacity = 8;
    *items = (size_t *) malloc (capacity * sizeof (size_t));
    assert (*items);
    *count = 0;
    if (s_expect (cursor, ']'))
        return true;
    do {
        if (*count + 2 > capacity) {
            capacity *= 2;
            *items = (size_t *) realloc (*items, capacity * sizeof (size_t));
            assert (*items);
        }
        if (!s_read_count (cursor, &(*items) [(*count)++]))
            return false;
        if (pairs && (!s_expect (cursor, '-')
                      || !s_read_count (cursor, &(*items) [(*count)++])))
            return false;
    } while (s_expect (cursor, ','));
    return s_expect (cursor, ']');
}

static bool
s_parse_graph (taag_schema_t *self, const char *cursor)
{
    size_t unused, link_items = 0;
    if (!s_read_count (&cursor, &self->group_count)
    ||  !s_expect (&cursor, ',') || !s_read_count (&cursor, &unused)
    ||  !s_expect (&cursor, ',')
    ||  !s_read_list (&cursor, false, &self->sizes, &unused)
    ||  unused != self->group_count || !s_expect (&cursor, ',')
    ||  !s_read_list (&cursor, true, &self->links, &link_items)
    ||  !s_expect (&cursor, '}'))
        return false;
    self->link_count = link_items / 2;
    for (size_t index = 0; index < link_items; index++)
        if (self->links [index] >= self->group_count)
            return false;
    for (size_t group = 0; group < self->group_count; group++) {
        if (self->sizes [group] == 0)
            return false;
        self->processes += self->sizes [group];
    }
    return self->group_count >= 1;
}

taag_schema_t *
taag_schema_parse (const char *text, char *error, size_t error_size)
{
    assert (text);
    taag_schema_t *self = (taag_schema_t *) calloc (1, sizeof (*self));
    assert (self);
    self->text = strdup (text);
    static const struct {
        const char *name;       //  Schema keyword
        schema_kind_t kind;     //  Its kind
    } kinds [] = {
        { "GROUPS", SCHEMA_GROUPS }, { "RING", SCHEMA_RING },
        { "TREE", SCHEMA_TREE }, { "GRAPH", SCHEMA_GRAPH }
    };
    const char *cursor = text;
    while (isspace ((unsigned char) *cursor))
        cursor++;
    bool known = false;
    for (size_t index = 0; index < 4 && !known; index++) {
        size_t length = strlen (kinds [index].name);
        if (strncasecmp (cursor, kinds [index].name, length) == 0) {
            self->kind = kinds [index].kind;
            cursor += length;
            known = true;
        }
    }
    bool parsed = false;
    if (known && self->kind == SCHEMA_GRAPH)
        parsed = s_expect (&cursor, '{') && s_parse_graph (self, cursor);
    else
    if (known) {
        char close = s_expect (&cursor, '{') ? '}'
                   : s_expect (&cursor, '(') ? ')' : 0;
        self->min_groups = 1;
        parsed = close && s_read_count (&cursor, &self->processes)
              && s_expect (&cursor, ',')
              && s_read_count (&cursor, &self->min_size)
              && (!s_expect (&cursor, ',')
                  || s_read_count (&cursor, &self->min_groups))
              && s_expect (&cursor, close)
              && self->min_size >= 1 && self->processes >= 1
              && self->min_groups >= 1
              && self->min_groups * self->min_size <= self->processes;
    }
    if (!parsed) {
        if (error)
            snprintf (error, error_size, "bad schema '%s': expected "
                      "GROUPS{N,MIN,MINGROUPS}, RING{...}, TREE{...} or "
                      "GRAPH{G,0,[SIZES],[A-B,...]}", text);
        taag_schema_destroy (&self);
    }
    return self;
}

void
taag_schema_destroy (taag_schema_t **self_p)
{
    assert (self_p);
    taag_schema_t *self = *self_p;
    if (!self)
        return;
    free (self->text);
    free (self->sizes);
    free (self->links);
    free (self);
    *self_p = NULL;
}

//  ---------------------------------------------------------------------
//  Partitions

static void
s_store_partition (taag_partitions_t *self, const size_t *sizes,
                   size_t groups)
{
    if (self->count == self->capacity) {
        self->capacity = self->capacity * 2 + 64;
        self->first = (size_t *) realloc (self->first,
                                          self->capacity * sizeof (size_t));
        self->groups = (size_t *) realloc (self->groups,
                                           self->capacity * sizeof (size_t));
        assert (self->first && self->groups);
    }
    if (self->size_count + groups > self->size_capacity) {
        self->size_capacity = (self->size_capacity + groups) * 2;
        self->sizes = (size_t *) realloc (self->sizes,
            self->size_capacity * sizeof (size_t));
        assert (self->sizes);
    }
    self->first [self->count] = self->size_count;
    self->groups [self->count++] = groups;
    memcpy (&self->sizes [self->size_count], sizes, groups * sizeof (size_t));
    self->size_count += groups;
}

//  Context of the enumeration of partitions
typedef struct {
    taag_partitions_t *partitions;  //  Where kept partitions go
    size_t min_size;                //  Least group size
    size_t min_groups;              //  Least number of groups
    const bool *fits;               //  fits[s]: a cluster of capacity s
    size_t extra;                   //  Processes a group adds (Tree: 1)
    size_t *sizes;                  //  Partition being built
} enumeration_t;

//  Groups of decreasing size adding up to left, none above largest
static void
s_enumerate (enumeration_t *context, size_t left, size_t largest,
             size_t groups, bool matched)
{
    if (left == 0) {
        if (groups >= context->min_groups
        &&  (!context->fits || groups == 1 || matched))
            s_store_partition (context->partitions, context->sizes, groups);
        return;
    }
    size_t top = largest < left ? largest : left;
    for (size_t size = top; size >= context->min_size; size--) {
        //  A rest smaller than a group cannot be placed
        if (left - size != 0 && left - size < context->min_size)
            continue;
        context->sizes [groups] = size;
        bool fits = context->fits && context->fits [size + context->extra];
        s_enumerate (context, left - size, size, groups + 1,
                     matched || fits);
    }
}

taag_partitions_t *
taag_partitions (taag_schema_t *schema, const taag_cluster_t *clusters,
                 size_t cluster_count)
{
    assert (schema);
    taag_partitions_t *self = (taag_partitions_t *) calloc (1,
                                                            sizeof (*self));
    assert (self);
    if (schema->kind == SCHEMA_GRAPH) {
        s_store_partition (self, schema->sizes, schema->group_count);
        return self;
    }
    size_t total = schema->processes;
    size_t extra = schema->kind == SCHEMA_TREE ? 1 : 0;
    size_t largest = total - (schema->min_groups - 1) * schema->min_size;
    //  The report's pruning applies when a cluster's capacity lies
    //  between the least and the largest group size
    bool *fits = (bool *) calloc (total + 2, sizeof (bool));
    assert (fits);
    bool prune = false;
    for (size_t index = 0; clusters && index < cluster_count; index++) {
        size_t capacity = clusters [index].capacity;
        if (capacity >= schema->min_size + extra
        &&  capacity <= largest + extra) {
            fits [capacity] = true;
            prune = true;
        }
    }
    size_t *sizes = (size_t *) malloc ((total + 1) * sizeof (size_t));
    assert (sizes);
    enumeration_t context = {
        self, schema->min_size, schema->min_groups, prune ? fits : NULL,
        extra, sizes
    };
    s_enumerate (&context, total, largest, 0, false);
    free (sizes);
    free (fits);
    return self;
}

void
taag_partitions_destroy (taag_partitions_t **self_p)
{
    assert (self_p);
    taag_partitions_t *self = *self_p;
    if (!self)
        return;
    free (self->first);
    free (self->groups);
    free (self->sizes);
    free (self);
    *self_p = NULL;
}

size_t
taag_partitions_count (taag_partitions_t *self)
{
    assert (self);
    return self->count;
}

size_t
taag_partitions_groups (taag_partitions_t *self, size_t partition)
{
    assert (self);
    assert (partition < self->count);
    return self->groups [partition];
}

size_t
taag_partitions_size (taag_partitions_t *self, size_t partition,
                      size_t group)
{
    assert (self);
    assert (partition < self->count);
    assert (group < self->groups [partition]);
    return self->sizes [self->first [partition] + group];
}

//  ---------------------------------------------------------------------
//  Mapping search

//  State of the search over partitions
typedef struct {
    taag_topology_t *topology;  //  Borrowed
    taag_schema_t *schema;      //  Borrowed
    taag_cluster_t *clusters;   //  Latency clusters, sorted
    size_t cluster_count;       //  Number of clusters
    size_t *free_slots;         //  Remaining capacity of each host
    size_t *cluster_free;       //  Remaining capacity of each cluster
    size_t *host_clusters;      //  Clusters of each host, host-major
    size_t *host_cluster_count; //  Number of clusters of each host
    size_t stride;              //  Row length of host_clusters
    size_t coefficient;         //  CPUs to processes
    size_t *process_host;       //  Host of each process of the partition
    size_t *group_first;        //  First process of each group
    size_t *group_order;        //  Groups by decreasing footprint
} search_t;

//  Cost of a mapping, compared in this order
typedef struct {
    size_t level;               //  Max latency level inside groups
    double max_ms;              //  Max latency between linked groups
    double average_ms;          //  Average latency between linked groups
} cost_t;

static bool
s_cheaper (const cost_t *first, const cost_t *second)
{
    if (first->level != second->level)
        return first->level < second->level;
    if (fabs (first->max_ms - second->max_ms) > 1e-12)
        return first->max_ms < second->max_ms;
    return first->average_ms < second->average_ms - 1e-12;
}

static void
s_search_init (search_t *search, taag_topology_t *topology,
               taag_schema_t *schema, size_t coefficient)
{
    memset (search, 0, sizeof (*search));
    search->topology = topology;
    search->schema = schema;
    search->coefficient = coefficient;
    search->clusters = taag_latency_clusters (topology, coefficient,
                                              &search->cluster_count);
    size_t hosts = topology->count;
    search->stride = search->cluster_count;
    search->free_slots = (size_t *) malloc (hosts * sizeof (size_t));
    search->cluster_free = (size_t *) malloc (search->cluster_count
                                              * sizeof (size_t));
    search->host_cluster_count = (size_t *) calloc (hosts, sizeof (size_t));
    //  A host is in one cluster per level at most: levels + 1 columns
    size_t top = 0;
    for (size_t index = 0; index < search->cluster_count; index++)
        if (search->clusters [index].level > top)
            top = search->clusters [index].level;
    search->stride = top + 2;
    search->host_clusters = (size_t *) malloc (hosts * search->stride
                                               * sizeof (size_t));
    size_t processes = schema->processes * 2 + 2;
    search->process_host = (size_t *) malloc (processes * sizeof (size_t));
    search->group_first = (size_t *) malloc (processes * sizeof (size_t));
    search->group_order = (size_t *) malloc (processes * sizeof (size_t));
    assert (search->free_slots && search->cluster_free
            && search->host_cluster_count && search->host_clusters
            && search->process_host && search->group_first
            && search->group_order);
    for (size_t index = 0; index < search->cluster_count; index++)
        for (size_t member = 0; member < search->clusters [index].count;
             member++) {
            size_t host = search->clusters [index].hosts [member];
            size_t *slot = &search->host_cluster_count [host];
            assert (*slot < search->stride);
            search->host_clusters [host * search->stride + (*slot)++] = index;
        }
}

static void
s_search_destroy (search_t *search)
{
    taag_clusters_destroy (&search->clusters, search->cluster_count);
    free (search->free_slots);
    free (search->cluster_free);
    free (search->host_clusters);
    free (search->host_cluster_count);
    free (search->process_host);
    free (search->group_first);
    free (search->group_order);
}

//  Processes a group needs on its cluster: Tree adds its local manager,
//  and the largest group also hosts the global manager
static size_t
s_footprint (search_t *search, const size_t *sizes, size_t group)
{
    if (search->schema->kind != SCHEMA_TREE)
        return sizes [group];
    return sizes [group] + 1 + (group == 0);
}

//  Place count processes from first on the hosts of a cluster
static void
s_fill (search_t *search, const taag_cluster_t *cluster, size_t first,
        size_t count)
{
    for (size_t member = 0; member < cluster->count && count; member++) {
        size_t host = cluster->hosts [member];
        while (search->free_slots [host] && count) {
            search->free_slots [host]--;
            for (size_t index = 0; index < search->host_cluster_count [host];
                 index++)
                search->cluster_free [search->host_clusters
                                      [host * search->stride + index]]--;
            search->process_host [first++] = host;
            count--;
        }
    }
}

//  Links between groups (pairs) of a partition of groups groups
static size_t
s_links (taag_schema_t *schema, size_t groups, size_t *links)
{
    size_t count = 0;
    if (schema->kind == SCHEMA_GRAPH) {
        memcpy (links, schema->links, 2 * schema->link_count
                                      * sizeof (size_t));
        return schema->link_count;
    }
    if (schema->kind == SCHEMA_RING) {
        for (size_t group = 0; groups > 1 && group < groups; group++) {
            if (groups == 2 && group == 1)
                break;
            links [2 * count] = group;
            links [2 * count++ + 1] = (group + 1) % groups;
        }
        return count;
    }
    for (size_t first = 0; first < groups; first++)
        for (size_t second = first + 1; second < groups; second++) {
            if (schema->kind == SCHEMA_TREE)
                break;          //  Tree links go through the root
            links [2 * count] = first;
            links [2 * count++ + 1] = second;
        }
    return count;
}

//  Map one partition; returns false if it does not fit
static bool
s_map_partition (search_t *search, const size_t *sizes, size_t groups,
                 cost_t *cost, size_t *links)
{
    taag_topology_t *topology = search->topology;
    for (size_t host = 0; host < topology->count; host++)
        search->free_slots [host] = topology->cpus [host]
                                  * search->coefficient;
    for (size_t index = 0; index < search->cluster_count; index++)
        search->cluster_free [index] = search->clusters [index].capacity;
    //  Process ranks: Tree's rank 0 is the global manager
    size_t rank = search->schema->kind == SCHEMA_TREE ? 1 : 0;
    for (size_t group = 0; group < groups; group++) {
        search->group_first [group] = rank;
        rank += sizes [group] + (search->schema->kind == SCHEMA_TREE);
        search->group_order [group] = group;
    }
    //  Largest footprint first (insertion sort keeps equal groups in order)
    for (size_t index = 1; index < groups; index++) {
        size_t group = search->group_order [index], at = index;
        while (at > 0 && s_footprint (search, sizes, search->group_order
                                      [at - 1])
                         < s_footprint (search, sizes, group)) {
            search->group_order [at] = search->group_order [at - 1];
            at--;
        }
        search->group_order [at] = group;
    }
    cost->level = 0;
    for (size_t index = 0; index < groups; index++) {
        size_t group = search->group_order [index];
        size_t need = s_footprint (search, sizes, group);
        size_t chosen = 0;
        while (chosen < search->cluster_count
               && search->cluster_free [chosen] < need)
            chosen++;
        if (chosen == search->cluster_count)
            return false;
        size_t first = search->group_first [group];
        if (search->schema->kind == SCHEMA_TREE && group == 0) {
            s_fill (search, &search->clusters [chosen], 0, 1);
            need--;
        }
        s_fill (search, &search->clusters [chosen], first, need);
        //  Level inside the group: hosts are filled in cluster order, so
        //  comparing each process with the group's first is enough for
        //  clusters built by levels
        for (size_t process = first; process < first + need; process++)
            for (size_t other = first; other < process; other++) {
                size_t level = topology->level [search->process_host [process]
                    * topology->count + search->process_host [other]];
                if (level > cost->level)
                    cost->level = level;
            }
    }
    size_t link_count = s_links (search->schema, groups, links);
    double sum = 0, largest = 0;
    size_t counted = 0;
    for (size_t link = 0; link < link_count; link++) {
        size_t first = search->process_host [search->group_first
                                             [links [2 * link]]];
        size_t second = search->process_host [search->group_first
                                              [links [2 * link + 1]]];
        double latency = topology->latency [first * topology->count + second];
        sum += latency;
        largest = fmax (largest, latency);
        counted++;
    }
    if (search->schema->kind == SCHEMA_TREE)
        for (size_t group = 0; group < groups; group++) {
            double latency = topology->latency [search->process_host [0]
                * topology->count
                + search->process_host [search->group_first [group]]];
            sum += latency;
            largest = fmax (largest, latency);
            counted++;
        }
    cost->max_ms = largest;
    cost->average_ms = counted ? sum / (double) counted : 0;
    return true;
}

//  Build the mapping object of a partition just mapped by the search
static taag_mapping_t *
s_mapping_new (search_t *search, const size_t *sizes, size_t groups,
               const cost_t *cost, const size_t *links)
{
    taag_schema_t *schema = search->schema;
    bool tree = schema->kind == SCHEMA_TREE;
    taag_mapping_t *self = (taag_mapping_t *) calloc (1, sizeof (*self));
    assert (self);
    self->schema = strdup (schema->text);
    self->process_count = (tree ? 1 + groups : 0) + schema->processes;
    self->group_count = groups;
    self->group = (size_t *) malloc (self->process_count * sizeof (size_t));
    self->role = (taag_role_t *) malloc (self->process_count
                                         * sizeof (taag_role_t));
    self->host = (char **) calloc (self->process_count, sizeof (char *));
    self->manager = (size_t *) malloc (groups * sizeof (size_t));
    self->link_count = s_links (schema, groups, (size_t *) links);
    self->links = (size_t *) malloc ((2 * self->link_count + 1)
                                     * sizeof (size_t));
    assert (self->group && self->role && self->host && self->manager
            && self->links);
    memcpy (self->links, links, 2 * self->link_count * sizeof (size_t));
    self->global_manager = tree ? 0 : SIZE_MAX;
    if (tree) {
        self->group [0] = SIZE_MAX;
        self->role [0] = TAAG_GLOBAL_MANAGER;
    }
    for (size_t group = 0; group < groups; group++) {
        size_t first = search->group_first [group];
        size_t count = sizes [group] + (tree ? 1 : 0);
        self->manager [group] = first;
        for (size_t rank = first; rank < first + count; rank++) {
            self->group [rank] = group;
            self->role [rank] = rank == first ? TAAG_LOCAL_MANAGER
                                              : TAAG_WORKER;
        }
    }
    for (size_t rank = 0; rank < self->process_count; rank++)
        self->host [rank] = strdup (search->topology->names
                                    [search->process_host [rank]]);
    self->level = cost->level;
    self->max_ms = cost->max_ms;
    self->average_ms = cost->average_ms;
    return self;
}

taag_mapping_t *
taag_map (taag_topology_t *topology, taag_schema_t *schema,
          size_t coefficient, char *error, size_t error_size)
{
    assert (topology && schema);
    assert (coefficient >= 1);
    s_refresh_levels (topology);
    search_t search;
    s_search_init (&search, topology, schema, coefficient);
    taag_partitions_t *partitions = taag_partitions (schema, search.clusters,
                                                     search.cluster_count);
    size_t *links = (size_t *) malloc ((schema->processes + 2)
                                       * (schema->processes + 2)
                                       * sizeof (size_t));
    assert (links);
    size_t best = SIZE_MAX;
    cost_t best_cost = { SIZE_MAX, INFINITY, INFINITY };
    for (size_t index = 0; index < partitions->count; index++) {
        cost_t cost;
        if (s_map_partition (&search, &partitions->sizes
                             [partitions->first [index]],
                             partitions->groups [index], &cost, links)
        &&  s_cheaper (&cost, &best_cost)) {
            best_cost = cost;
            best = index;
        }
    }
    taag_mapping_t *self = NULL;
    if (best != SIZE_MAX) {
        const size_t *sizes = &partitions->sizes [partitions->first [best]];
        size_t groups = partitions->groups [best];
        cost_t cost;
        s_map_partition (&search, sizes, groups, &cost, links);
        self = s_mapping_new (&search, sizes, groups, &cost, links);
    }
    else
    if (error)
        snprintf (error, error_size, "no partition of '%s' fits the %zu "
                  "hosts", schema->text, topology->count);
    free (links);
    taag_partitions_destroy (&partitions);
    s_search_destroy (&search);
    return self;
}

void
taag_mapping_destroy (taag_mapping_t **self_p)
{
    assert (self_p);
    taag_mapping_t *self = *self_p;
    if (!self)
        return;
    for (size_t rank = 0; rank < self->process_count; rank++)
        free (self->host [rank]);
    free (self->host);
    free (self->group);
    free (self->role);
    free (self->manager);
    free (self->links);
    free (self->schema);
    free (self);
    *self_p = NULL;
}

void
taag_mapping_cost (taag_mapping_t *self, size_t *level, double *max_ms,
                   double *average_ms)
{
    assert (self);
    if (level)
        *level = self->level;
    if (max_ms)
        *max_ms = self->max_ms;
    if (average_ms)
        *average_ms = self->average_ms;
}

size_t
taag_mapping_process_count (taag_mapping_t *self)
{
    assert (self);
    return self->process_count;
}

size_t
taag_mapping_group_count (taag_mapping_t *self)
{
    assert (self);
    return self->group_count;
}

size_t
taag_mapping_group (taag_mapping_t *self, size_t rank)
{
    assert (self);
    assert (rank < self->process_count);
    return self->group [rank];
}

taag_role_t
taag_mapping_role (taag_mapping_t *self, size_t rank)
{
    assert (self);
    assert (rank < self->process_count);
    return self->role [rank];
}

const char *
taag_mapping_host (taag_mapping_t *self, size_t rank)
{
    assert (self);
    assert (rank < self->process_count);
    return self->host [rank];
}

size_t
taag_mapping_local_manager (taag_mapping_t *self, size_t rank)
{
    assert (self);
    assert (rank < self->process_count);
    size_t group = self->group [rank];
    return group == SIZE_MAX ? rank : self->manager [group];
}

static void
s_push (size_t *neighbours, size_t max, size_t *count, size_t rank)
{
    if (*count < max)
        neighbours [*count] = rank;
    (*count)++;
}

size_t
taag_mapping_neighbours (taag_mapping_t *self, size_t rank,
                         size_t *neighbours, size_t max)
{
    assert (self);
    assert (rank < self->process_count);
    size_t count = 0, group = self->group [rank];
    if (group == SIZE_MAX) {
        //  The global manager talks to every local manager
        for (size_t index = 0; index < self->group_count; index++)
            s_push (neighbours, max, &count, self->manager [index]);
        return count;
    }
    for (size_t other = 0; other < self->process_count; other++)
        if (other != rank && self->group [other] == group)
            s_push (neighbours, max, &count, other);
    if (self->manager [group] != rank)
        return count;
    for (size_t link = 0; link < self->link_count; link++) {
        size_t first = self->links [2 * link];
        size_t second = self->links [2 * link + 1];
        if (first == group || second == group)
            s_push (neighbours, max, &count,
                    self->manager [first == group ? second : first]);
    }
    if (self->global_manager != SIZE_MAX)
        s_push (neighbours, max, &count, self->global_manager);
    return count;
}

static const char *s_role_names [] = {
    "worker", "local-manager", "global-manager"
};

int
taag_mapping_save (taag_mapping_t *self, const char *path)
{
    assert (self && path);
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    fprintf (file, "#  TAAG mapping file written by Jace\n"
             "mapping\n    schema = \"%s\"\n    processes = %zu\n"
             "    level = %zu\n    max_latency_ms = %.17g\n"
             "    average_latency_ms = %.17g\n", self->schema,
             self->process_count, self->level, self->max_ms,
             self->average_ms);
    for (size_t link = 0; link < self->link_count; link++)
        fprintf (file, "    link\n        between = \"%zu %zu\"\n",
                 self->links [2 * link], self->links [2 * link + 1]);
    for (size_t rank = 0; rank < self->process_count; rank++) {
        fprintf (file, "    process\n        rank = %zu\n", rank);
        if (self->group [rank] != SIZE_MAX)
            fprintf (file, "        group = %zu\n", self->group [rank]);
        fprintf (file, "        role = \"%s\"\n        host = \"%s\"\n",
                 s_role_names [self->role [rank]], self->host [rank]);
    }
    return fclose (file) == 0 ? 0 : -1;
}

//  Read a whole number field of item; false if missing or bad
static bool
s_field_count (zpl_t *item, const char *name, size_t *value)
{
    zpl_t *field = zpl_locate (item, name);
    if (!field || !zpl_value (field))
        return false;
    char *end;
    errno = 0;
    unsigned long long number = strtoull (zpl_value (field), &end, 10);
    if (errno || *end || end == zpl_value (field))
        return false;
    *value = (size_t) number;
    return true;
}

static int
s_load_fail (char *error, size_t error_size, const char *path, zpl_t *item,
             const char *reason)
{
    if (error)
        snprintf (error, error_size, "%s:%zu: %s", path,
                  item ? zpl_line (item) : 0, reason);
    return -1;
}

//  Fill a mapping from its parsed file
static int
s_load_tree (taag_mapping_t *self, zpl_t *root, const char *path,
             char *error, size_t error_size)
{
    zpl_t *schema = zpl_locate (root, "schema");
    if (!schema || !zpl_value (schema)
    ||  !s_field_count (root, "processes", &self->process_count)
    ||  self->process_count == 0 || self->process_count > 10000000)
        return s_load_fail (error, error_size, path, root,
                            "mapping needs schema and processes");
    self->schema = strdup (zpl_value (schema));
    s_field_count (root, "level", &self->level);
    size_t count = self->process_count;
    self->group = (size_t *) malloc (count * sizeof (size_t));
    self->role = (taag_role_t *) calloc (count, sizeof (taag_role_t));
    self->host = (char **) calloc (count, sizeof (char *));
    self->manager = (size_t *) malloc (count * sizeof (size_t));
    size_t link_capacity = 16;
    self->links = (size_t *) malloc (2 * link_capacity * sizeof (size_t));
    assert (self->group && self->role && self->host && self->manager
            && self->links);
    for (size_t rank = 0; rank < count; rank++)
        self->manager [rank] = SIZE_MAX;
    self->global_manager = SIZE_MAX;
    for (zpl_t *item = zpl_child (root); item; item = zpl_next (item)) {
        if (streq (zpl_name (item), "link")) {
            zpl_t *between = zpl_locate (item, "between");
            if (self->link_count == link_capacity) {
                link_capacity *= 2;
                self->links = (size_t *) realloc (self->links,
                    2 * link_capacity * sizeof (size_t));
                assert (self->links);
            }
            size_t *pair = &self->links [2 * self->link_count];
            if (!between
            ||  !zpl_value (between)
            ||  sscanf (zpl_value (between), "%zu %zu", pair, pair + 1) != 2)
                return s_load_fail (error, error_size, path, item,
                                    "link needs between = \"A B\"");
            self->link_count++;
            continue;
        }
        if (!streq (zpl_name (item), "process"))
            continue;
        size_t rank, group = SIZE_MAX;
        zpl_t *role = zpl_locate (item, "role");
        zpl_t *host = zpl_locate (item, "host");
        if (!s_field_count (item, "rank", &rank) || rank >= count
        ||  self->host [rank] || !role || !host || !zpl_value (host)
        ||  !zpl_value (role))
            return s_load_fail (error, error_size, path, item,
                                "process needs a new rank below processes, "
                                "a role and a host");
        s_field_count (item, "group", &group);
        size_t kind = 0;
        while (kind < 3 && !streq (s_role_names [kind], zpl_value (role)))
            kind++;
        if (kind == 3 || (kind == TAAG_GLOBAL_MANAGER) != (group == SIZE_MAX)
        ||  (group != SIZE_MAX && group >= count))
            return s_load_fail (error, error_size, path, item,
                                "bad role or group");
        self->role [rank] = (taag_role_t) kind;
        self->group [rank] = group;
        self->host [rank] = strdup (zpl_value (host));
        if (kind == TAAG_GLOBAL_MANAGER)
            self->global_manager = rank;
        if (kind == TAAG_LOCAL_MANAGER) {
            self->manager [group] = rank;
            if (group + 1 > self->group_count)
                self->group_count = group + 1;
        }
    }
    for (size_t rank = 0; rank < count; rank++) {
        if (!self->host [rank])
            return s_load_fail (error, error_size, path, root,
                                "a process is missing");
        size_t group = self->group [rank];
        if (group != SIZE_MAX
        &&  (group >= self->group_count || self->manager [group] == SIZE_MAX))
            return s_load_fail (error, error_size, path, root,
                                "a group has no local manager");
    }
    for (size_t link = 0; link < 2 * self->link_count; link++)
        if (self->links [link] >= self->group_count)
            return s_load_fail (error, error_size, path, root,
                                "a link names an unknown group");
    return 0;
}

taag_mapping_t *
taag_mapping_load (const char *path, char *error, size_t error_size)
{
    assert (path);
    zpl_t *tree = zpl_load (path, error, error_size);
    if (!tree)
        return NULL;
    taag_mapping_t *self = (taag_mapping_t *) calloc (1, sizeof (*self));
    assert (self);
    zpl_t *root = zpl_locate (tree, "mapping");
    int rc = root ? s_load_tree (self, root, path, error, error_size)
                  : s_load_fail (error, error_size, path, NULL,
                                 "no 'mapping' item");
    zpl_destroy (&tree);
    if (rc)
        taag_mapping_destroy (&self);
    return self;
}
