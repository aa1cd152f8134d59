/*  =========================================================================
    jace-plan - plan bulk transfers without running a job

    jace-plan ggp|oggp|bruteforce --k K --beta B MATRIX   KPBS schedules
    jace-plan lg --n1 N --n2 M [--direct]                 total exchange
    jace-plan scatter --procs FILE --items N              balanced scatter

    Each prints a readable plan, or JSON with --json.  Bad input is
    reported as "FILE:LINE: reason" and exits with status 1; bad usage
    exits with status 2.
    =========================================================================
*/
#include "collectives.h"
#include "zpl.h"
#include <getopt.h>

//  Options of one run
typedef struct {
    const char *command;        //  ggp, oggp, bruteforce, lg or scatter
    const char *input;          //  MATRIX for ggp/oggp/bruteforce
    const char *procs;          //  --procs FILE
    const char *clusters;       //  --clusters "N1 N2 ..."
    long k;                     //  --k
    double beta;                //  --beta
    long n1;                    //  --n1
    long n2;                    //  --n2
    long items;                 //  --items
    bool direct;                //  --direct
    bool json;                  //  --json
} options_t;

static void
s_usage (FILE *stream)
{
    fprintf (stream,
        "usage: jace-plan ggp|oggp|bruteforce --k K --beta B MATRIX [--json]\n"
        "       jace-plan lg --n1 N --n2 M [--clusters \"N1 N2 ...\"] "
        "[--direct] [--json]\n"
        "       jace-plan scatter --procs FILE --items N [--json]\n"
        "\n"
        "ggp, oggp   schedule the n1 x n2 traffic MATRIX (one sender per line,\n"
        "            whitespace-separated transfer times in seconds) with at\n"
        "            most K transfers at a time and step set-up cost B; print\n"
        "            the steps, the cost, eta_o and the lower bound\n"
        "bruteforce  estimate sending everything at once (eta_o, Figure 5 of\n"
        "            Wagner & Jeannot RR-5361)\n"
        "lg          LG total exchange between clusters of N and M nodes (or\n"
        "            the --clusters sizes): every message's route and step;\n"
        "            --direct plans the direct all-to-all instead\n"
        "scatter     optimal, heuristic and uniform scatter of N items over\n"
        "            the processors of FILE (lines 'NAME COMP COMM': seconds\n"
        "            per item to compute and to receive; the one with the\n"
        "            smallest COMM holds the data and is the root)\n"
        "\n"
        "  -h, --help     this help\n"
        "  -V, --version  print the version and exit\n");
}

//  Read a whole text file (at most ZPL_FILE_MAX bytes); NULL with the
//  reason printed
static char *
s_read_text (const char *path)
{
    char reason [512];
    char *text = zpl_read_file (path, ZPL_FILE_MAX, reason, sizeof reason);
    if (!text)
        fprintf (stderr, "%s\n", reason);
    return text;
}

//  Most clusters `lg --clusters` plans for
#define LG_CLUSTERS_MAX 64

//  Longest time a plan takes, seconds (31 years).  Beside a figure much
//  larger, a one-second transfer would be below a double's precision:
//  sums and the decision between plans would read it as nothing.
#define SECONDS_MAX 1e9

//  Parse a non-negative number token of at most SECONDS_MAX; false if it
//  is not one
static bool
s_number (const char *token, double *value)
{
    char *end;
    errno = 0;
    *value = strtod (token, &end);
    return token != end && *end == '\0' && errno == 0 && isfinite (*value)
        && *value >= 0 && *value <= SECONDS_MAX;
}

//  Read the traffic matrix; returns 0 or -1 (reason printed)
static int
s_read_matrix (const char *path, double **matrix, size_t *rows,
               size_t *columns)
{
    char *text = s_read_text (path);
    if (!text)
        return -1;
    size_t capacity = 64, count = 0, line_number = 0;
    double *values = malloc (capacity * sizeof (double));
    *rows = 0;
    *columns = 0;
    int rc = 0;
    char *saved_line;
    for (char *line = strtok_r (text, "\n", &saved_line); line && rc == 0;
         line = strtok_r (NULL, "\n", &saved_line)) {
        line_number++;
        char *comment = strchr (line, '#');
        if (comment)
            *comment = '\0';
        size_t in_row = 0;
        char *saved_token;
        for (char *token = strtok_r (line, " \t\r", &saved_token); token;
             token = strtok_r (NULL, " \t\r", &saved_token)) {
            double value;
            if (!s_number (token, &value)) {
                fprintf (stderr, "%s:%zu: '%s' is not a number of seconds "
                         "in [0, %g]\n", path, line_number, token,
                         SECONDS_MAX);
                rc = -1;
                break;
            }
            if (count == capacity)
                values = realloc (values, (capacity *= 2) * sizeof (double));
            values [count++] = value;
            in_row++;
        }
        if (rc || in_row == 0)
            continue;
        if (*rows > 0 && in_row != *columns) {
            fprintf (stderr, "%s:%zu: %zu values where the first row has "
                     "%zu\n", path, line_number, in_row, *columns);
            rc = -1;
        }
        *columns = in_row;
        (*rows)++;
    }
    if (rc == 0 && *rows == 0) {
        fprintf (stderr, "%s: no matrix rows\n", path);
        rc = -1;
    }
    free (text);
    if (rc)
        free (values);
    else
        *matrix = values;
    return rc;
}

static void
s_print_schedule_json (ggp_schedule_t *schedule, const char *algorithm,
                       double eta, double bound, bool pays)
{
    printf ("{\"algorithm\": \"%s\", \"steps\": [", algorithm);
    size_t steps = schedule ? ggp_schedule_step_count (schedule) : 0;
    for (size_t step = 0; step < steps; step++) {
        printf ("%s{\"length\": %.17g, \"transfers\": [", step ? ", " : "",
                ggp_schedule_step_length (schedule, step));
        for (size_t index = 0; index < ggp_schedule_step_size (schedule,
                                                               step); index++) {
            const ggp_transfer_t *transfer = ggp_schedule_transfer (schedule,
                                                                    step,
                                                                    index);
            printf ("%s{\"sender\": %zu, \"receiver\": %zu, \"amount\": "
                    "%.17g}", index ? ", " : "", transfer->sender,
                    transfer->receiver, transfer->amount);
        }
        printf ("]}");
    }
    printf ("], \"cost\": %.17g, \"eta_o\": %.17g, \"lower_bound\": %.17g",
            schedule ? ggp_schedule_cost (schedule) : eta, eta, bound);
    if (schedule)
        printf (", \"scheduling_pays\": %s", pays ? "true" : "false");
    printf ("}\n");
}

static void
s_print_schedule_text (ggp_schedule_t *schedule, const char *algorithm,
                       double eta, double bound, bool pays, double beta)
{
    if (schedule) {
        printf ("%s schedule, %zu steps\n", algorithm,
                ggp_schedule_step_count (schedule));
        for (size_t step = 0; step < ggp_schedule_step_count (schedule);
             step++) {
            printf ("step %zu (length %g):", step + 1,
                    ggp_schedule_step_length (schedule, step));
            for (size_t index = 0;
                 index < ggp_schedule_step_size (schedule, step); index++) {
                const ggp_transfer_t *transfer =
                    ggp_schedule_transfer (schedule, step, index);
                printf (" %zu->%zu:%g", transfer->sender, transfer->receiver,
                        transfer->amount);
            }
            printf ("\n");
        }
        printf ("cost         %g (steps plus %g per step)\n",
                ggp_schedule_cost (schedule), beta);
    }
    printf ("eta_o        %g (everything at once)\n", eta);
    printf ("lower bound  %g (max(P/k, W))\n", bound);
    if (schedule)
        printf ("decision     %s\n", pays ? "scheduling pays"
                : "send everything at once");
}

static int
s_run_kpbs (options_t *options)
{
    if (!options->input || options->k < 1 || options->beta < 0
    ||  options->beta > SECONDS_MAX) {
        fprintf (stderr, "jace-plan %s: needs --k K >= 1, --beta B in [0, "
                 "%g] and a MATRIX file\n", options->command, SECONDS_MAX);
        return 2;
    }
    double *matrix;
    size_t rows, columns;
    if (s_read_matrix (options->input, &matrix, &rows, &columns))
        return 1;
    size_t k = (size_t) options->k;
    double eta = eta_brute_force (matrix, rows, columns, k);
    double bound = ggp_lower_bound (matrix, rows, columns, k);
    ggp_schedule_t *schedule = NULL;
    if (streq (options->command, "ggp"))
        schedule = ggp_schedule (matrix, rows, columns, k, options->beta);
    else
    if (streq (options->command, "oggp"))
        schedule = oggp_schedule (matrix, rows, columns, k, options->beta);
    bool pays = schedule
             && ggp_schedule_cost (schedule) < eta + options->beta;
    if (options->json)
        s_print_schedule_json (schedule, options->command, eta, bound, pays);
    else
        s_print_schedule_text (schedule, options->command, eta, bound, pays,
                               options->beta);
    ggp_schedule_destroy (&schedule);
    free (matrix);
    return 0;
}

static int
s_run_lg (options_t *options)
{
    size_t sizes [LG_CLUSTERS_MAX], count = 0;
    if (options->clusters) {
        //  Whole words only: "3 4x 2" is a mistake, not the clusters 3, 4
        char *copy = strdup (options->clusters), *saved;
        assert (copy);
        for (char *word = strtok_r (copy, " \t,", &saved); word;
             word = strtok_r (NULL, " \t,", &saved)) {
            char *end;
            errno = 0;
            long value = strtol (word, &end, 10);
            if (*end || errno || value < 1 || value > 4096) {
                fprintf (stderr, "jace-plan lg: --clusters: '%s' is not a "
                         "cluster size (1..4096)\n", word);
                free (copy);
                return 2;
            }
            if (count == LG_CLUSTERS_MAX) {
                fprintf (stderr, "jace-plan lg: --clusters: more than %d "
                         "clusters\n", LG_CLUSTERS_MAX);
                free (copy);
                return 2;
            }
            sizes [count++] = (size_t) value;
        }
        free (copy);
    }
    else
    if (options->n1 >= 1 && options->n2 >= 1 && options->n1 <= 4096
    &&  options->n2 <= 4096) {
        sizes [count++] = (size_t) options->n1;
        sizes [count++] = (size_t) options->n2;
    }
    size_t nodes_wanted = 0;
    for (size_t index = 0; index < count; index++)
        nodes_wanted += sizes [index];
    if (count < 1 || nodes_wanted > 4096) {
        fprintf (stderr, "jace-plan lg: needs --n1 N --n2 M or --clusters "
                 "\"N1 N2 ...\", 4096 nodes at most\n");
        return 2;
    }
    lg_plan_t *plan = options->direct ? lg_plan_direct (sizes, count, NULL)
                                      : lg_plan (sizes, count, NULL);
    size_t nodes = lg_plan_node_count (plan);
    const char *name = options->direct ? "direct" : "lg";
    if (options->json)
        printf ("{\"algorithm\": \"%s\", \"nodes\": %zu, \"steps\": %zu, "
                "\"backbone_messages\": %zu, \"messages\": [", name, nodes,
                lg_plan_step_count (plan), lg_plan_backbone_messages (plan));
    else
        printf ("%s plan: %zu nodes, %zu steps (step 0 is local), %zu "
                "backbone messages\n", name, nodes, lg_plan_step_count (plan),
                lg_plan_backbone_messages (plan));
    bool first = true;
    for (size_t source = 0; source < nodes; source++)
        for (size_t destination = 0; destination < nodes; destination++) {
            lg_hop_t hops [LG_MAX_HOPS];
            size_t length = lg_plan_route (plan, source, destination, hops,
                                           LG_MAX_HOPS);
            if (options->json) {
                printf ("%s{\"source\": %zu, \"destination\": %zu, "
                        "\"route\": [", first ? "" : ", ", source,
                        destination);
                for (size_t hop = 0; hop < length; hop++)
                    printf ("%s{\"step\": %zu, \"from\": %zu, \"to\": %zu}",
                            hop ? ", " : "", hops [hop].step, hops [hop].from,
                            hops [hop].to);
                printf ("]}");
            }
            else {
                printf ("M(%zu,%zu):", source, destination);
                if (length == 0)
                    printf (" stays on node %zu", source);
                for (size_t hop = 0; hop < length; hop++)
                    printf (" step %zu %zu->%zu", hops [hop].step,
                            hops [hop].from, hops [hop].to);
                printf ("\n");
            }
            first = false;
        }
    if (options->json)
        printf ("]}\n");
    lg_plan_destroy (&plan);
    return 0;
}

//  Processors of a scatter, read from a file
typedef struct {
    size_t count;               //  Number of processors
    char **names;               //  Name of each processor
    scatter_proc_t *procs;      //  Costs of each processor
} procs_t;

static void
s_procs_free (procs_t *procs)
{
    for (size_t index = 0; index < procs->count; index++)
        free (procs->names [index]);
    free (procs->names);
    free (procs->procs);
}

//  Read "NAME COMP COMM" lines (NAME optional); returns 0 or -1
static int
s_read_procs (const char *path, procs_t *procs)
{
    char *text = s_read_text (path);
    if (!text)
        return -1;
    memset (procs, 0, sizeof (*procs));
    size_t capacity = 0, line_number = 0;
    int rc = 0;
    char *saved;
    for (char *line = strtok_r (text, "\n", &saved); line && rc == 0;
         line = strtok_r (NULL, "\n", &saved)) {
        line_number++;
        char *comment = strchr (line, '#');
        if (comment)
            *comment = '\0';
        char first [128], second [64], third [64], extra [2];
        int fields = sscanf (line, "%127s %63s %63s %1s", first, second,
                             third, extra);
        if (fields <= 0)
            continue;
        double comp, comm;
        bool named = fields == 3;
        if ((fields != 2 && fields != 3)
        ||  !s_number (named ? second : first, &comp)
        ||  !s_number (named ? third : second, &comm)) {
            fprintf (stderr, "%s:%zu: expected 'NAME COMP COMM' with "
                     "seconds per item in [0, %g]\n", path, line_number,
                     SECONDS_MAX);
            rc = -1;
            break;
        }
        if (procs->count == capacity) {
            capacity = capacity * 2 + 16;
            procs->names = realloc (procs->names, capacity * sizeof (char *));
            procs->procs = realloc (procs->procs,
                                    capacity * sizeof (scatter_proc_t));
        }
        char name [32];
        snprintf (name, sizeof name, "P%zu", procs->count + 1);
        //  The plan names processors in its order and shares: two of one
        //  name could not be told apart
        for (size_t other = 0; named && other < procs->count; other++)
            if (streq (procs->names [other], first)) {
                fprintf (stderr, "%s:%zu: processor '%s' is already named "
                         "on an earlier line\n", path, line_number, first);
                rc = -1;
            }
        if (rc)
            break;
        procs->names [procs->count] = strdup (named ? first : name);
        procs->procs [procs->count++] = (scatter_proc_t) {
            0, comp, 0, comm
        };
    }
    free (text);
    if (rc == 0 && procs->count == 0) {
        fprintf (stderr, "%s: no processors\n", path);
        rc = -1;
    }
    if (rc)
        s_procs_free (procs);
    return rc;
}

static void
s_print_distribution (procs_t *procs, const size_t *order,
                      const char *label, const size_t *distribution,
                      double makespan, bool json, bool last)
{
    if (json) {
        printf ("\"%s\": {\"distribution\": [", label);
        for (size_t index = 0; index < procs->count; index++)
            printf ("%s%zu", index ? ", " : "", distribution [index]);
        printf ("], \"makespan\": %.17g}%s", makespan, last ? "" : ", ");
        return;
    }
    printf ("%-18s makespan %12.4f s:", label, makespan);
    for (size_t index = 0; index < procs->count; index++)
        printf (" %s=%zu", procs->names [order [index]], distribution [index]);
    printf ("\n");
}

static int
s_run_scatter (options_t *options)
{
    if (!options->procs || options->items < 0
    ||  options->items > 100000000) {
        fprintf (stderr, "jace-plan scatter: needs --procs FILE and --items N "
                 "(0..100000000)\n");
        return 2;
    }
    procs_t procs;
    if (s_read_procs (options->procs, &procs))
        return 1;
    size_t count = procs.count, items = (size_t) options->items;
    size_t root = 0;
    for (size_t index = 1; index < count; index++)
        if (procs.procs [index].comm_per_item
            < procs.procs [root].comm_per_item)
            root = index;
    size_t *order = malloc (count * sizeof (size_t));
    size_t *reversed = malloc (count * sizeof (size_t));
    scatter_proc_t *ordered = malloc (count * sizeof (scatter_proc_t));
    scatter_proc_t *ascending = malloc (count * sizeof (scatter_proc_t));
    size_t *distribution = malloc (4 * count * sizeof (size_t));
    assert (order && reversed && ordered && ascending && distribution);
    scatter_order_by_bandwidth (procs.procs, count, root, order);
    for (size_t index = 0; index < count; index++) {
        ordered [index] = procs.procs [order [index]];
        reversed [index] = index + 1 < count ? order [count - 2 - index]
                                             : root;
        ascending [index] = procs.procs [reversed [index]];
    }
    double optimal = scatter_optimal (ordered, count, items, distribution);
    double rational;
    double heuristic = scatter_heuristic (ordered, count, items,
                                         distribution + count, &rational);
    double uniform = scatter_uniform (ordered, count, items,
                                      distribution + 2 * count);
    double slower = scatter_optimal (ascending, count, items,
                                     distribution + 3 * count);
    if (options->json) {
        printf ("{\"items\": %zu, \"root\": \"%s\", \"order\": [", items,
                procs.names [root]);
        for (size_t index = 0; index < count; index++)
            printf ("%s\"%s\"", index ? ", " : "", procs.names [order [index]]);
        printf ("], ");
    }
    else {
        printf ("%zu items, root %s; order by decreasing bandwidth:", items,
                procs.names [root]);
        for (size_t index = 0; index < count; index++)
            printf (" %s", procs.names [order [index]]);
        printf ("\n");
    }
    s_print_distribution (&procs, order, "optimal", distribution, optimal,
                          options->json, false);
    s_print_distribution (&procs, order, "heuristic", distribution + count,
                          heuristic, options->json, false);
    s_print_distribution (&procs, order, "uniform",
                          distribution + 2 * count, uniform, options->json,
                          false);
    s_print_distribution (&procs, reversed, "optimal_ascending",
                          distribution + 3 * count, slower, options->json,
                          true);
    double bound = scatter_heuristic_bound (ordered, count);
    if (options->json)
        printf (", \"rational_makespan\": %.17g, \"heuristic_bound\": "
                "%.17g}\n", rational, bound);
    else
        printf ("rational optimum %.4f s; the heuristic is within %.4f s of "
                "the optimum (equation 4 allows %.4f s); ascending "
                "bandwidth order costs %.4f s more\n", rational,
                heuristic - optimal, bound, slower - optimal);
    free (order);
    free (reversed);
    free (ordered);
    free (ascending);
    free (distribution);
    s_procs_free (&procs);
    return 0;
}

//  Read a number option; false if it is not entirely a number
static bool
s_option_number (const char *text, double *value)
{
    char *end;
    errno = 0;
    *value = strtod (text, &end);
    return end != text && *end == '\0' && errno == 0 && isfinite (*value);
}

int
main (int argc, char *argv [])
{
    options_t options = { .k = -1, .beta = -1, .n1 = -1, .n2 = -1,
                          .items = -1 };
    static const struct option longs [] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "json", no_argument, NULL, 'j' },
        { "direct", no_argument, NULL, 'd' },
        { "k", required_argument, NULL, 'k' },
        { "beta", required_argument, NULL, 'b' },
        { "n1", required_argument, NULL, '1' },
        { "n2", required_argument, NULL, '2' },
        { "clusters", required_argument, NULL, 'c' },
        { "procs", required_argument, NULL, 'p' },
        { "items", required_argument, NULL, 'i' },
        { NULL, 0, NULL, 0 }
    };
    int option;
    while ((option = getopt_long (argc, argv, "hV", longs, NULL)) != -1) {
        double value = 0;
        bool numeric = strchr ("kb12i", option) != NULL;
        if (numeric && !s_option_number (optarg, &value)) {
            fprintf (stderr, "jace-plan: '%s' is not a number\n", optarg);
            return 2;
        }
        switch (option) {
            case 'h': s_usage (stdout); return 0;
            case 'V': printf ("jace-plan %s\n", PACKAGE_VERSION); return 0;
            case 'j': options.json = true; break;
            case 'd': options.direct = true; break;
            case 'k': options.k = value == floor (value) ? (long) value : -1;
                      break;
            case 'b': options.beta = value; break;
            case '1': options.n1 = (long) value; break;
            case '2': options.n2 = (long) value; break;
            case 'c': options.clusters = optarg; break;
            case 'p': options.procs = optarg; break;
            case 'i': options.items = value == floor (value) ? (long) value
                                                           : -1;
                      break;
            default: s_usage (stderr); return 2;
        }
    }
    if (optind >= argc) {
        s_usage (stderr);
        return 2;
    }
    options.command = argv [optind++];
    if (optind < argc)
        options.input = argv [optind++];
    if (optind < argc) {
        fprintf (stderr, "jace-plan: unexpected argument '%s'\n",
                 argv [optind]);
        return 2;
    }
    if (streq (options.command, "ggp") || streq (options.command, "oggp")
    ||  streq (options.command, "bruteforce"))
        return s_run_kpbs (&options);
    if (streq (options.command, "lg"))
        return s_run_lg (&options);
    if (streq (options.command, "scatter"))
        return s_run_scatter (&options);
    fprintf (stderr, "jace-plan: unknown command '%s'\n", options.command);
    s_usage (stderr);
    return 2;
}
