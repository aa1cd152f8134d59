/*  =========================================================================
    app_multisplit - sparse linear systems Ax = b by multisplitting

    Spawner side: the whole system (generated, or read from Matrix Market
    files before anything is reserved) for verification and for the rows
    of file matrices, which travel in each task's ASSIGN.  Daemon side: the
    task's extended rows (generated locally, or from its ASSIGN), the
    multisplit state, and the request lists that say what to send to whom.
    =========================================================================
*/
#include "app_multisplit.h"
#include "csr.h"
#include "mmio.h"
#include "multisplit.h"
#include "outer_krylov.h"
#include "problems.h"
#include "tsirm.h"

#include <errno.h>
#include <math.h>

typedef enum {
    KIND_POISSON2D, KIND_POISSON3D, KIND_NASCG, KIND_MATRIX,
    KIND_RANDOM_DOMINANT, KIND_RANDOM_SPD
} kind_t;

static const char *s_kind_names [] = {
    "poisson2d", "poisson3d", "nascg", "matrix", "random-dominant",
    "random-spd"
};
#define KIND_COUNT (sizeof s_kind_names / sizeof s_kind_names [0])

//  Inner Krylov iterations per outer iteration under TSIRM, by default.
//  The least-squares step makes up for rough blocks.  Serial solves of
//  3D Poisson with ILU(0), 2 blocks: at 60^3, 2-4 inner iterations took
//  half the time of solves to the inner tolerance; at 100^3, 3 took 181
//  outer iterations where 2 took 313 and 1 took 422.  On a nonsymmetric
//  convection matrix 1 is best and 3 still beats solves to the tolerance
//  (BENCHMARKS.md, "TSIRM's inner solves").
#define APP_TSIRM_INNER_MAX_ITERATIONS 3

//  Asynchronous TSIRM over multisplitting: before each iteration a task
//  waits up to this long for every task it reads from to have sent the
//  values of its previous iteration (solver/tsirm_source_wait).  A step
//  combines every task's j-th iterate with one coefficient, so it gains
//  only when those iterates belong together: without the wait, fast or
//  lucky tasks ran their window's iterations on the same old neighbour
//  values, and on wan.platform (8 uneven nodes, 40^3) the job took 360-456
//  iterations and 7.5-8.5 s, against 68-72 and 2.4-3.1 s with it, what
//  synchronous TSIRM takes.  A lost or slow neighbour holds a task up at
//  most this long per iteration.
#define APP_TSIRM_SOURCE_WAIT_MSEC 100

//  TSIRM over GMRES: cycles of 12 steps, a least-squares step every 4.
//  Short cycles keep Gram-Schmidt cheap (a step's cost grows with the
//  cycle's length) and the step combines what the restarts forget: on 3D
//  Poisson 100^3 these took 147-150 steps and 3.0 s where GMRES(30)
//  took 165 and 4.3 s (BENCHMARKS.md, "TSIRM over GMRES").
#define APP_TSIRM_GMRES_RESTART 12
#define APP_TSIRM_KRYLOV_WINDOW 4

//  CG's cycle, alone or under TSIRM: the longest.  CG keeps no basis, so
//  a long cycle costs nothing a step, and every restart forgets the
//  directions so far: 3D Poisson 100^3 took 117 steps in cycles of 200
//  (PETSc's CG: 117), 119 in cycles of 100 and 145 in cycles of 50; 2D
//  Poisson 700^2 879 steps in cycles of 200, 1235 in cycles of 100
//  (BENCHMARKS.md, "CG around the blocks").  Under TSIRM, the step every
//  4 cycles took 2D Poisson to 827.  A replacement runs its cycle again
//  from the others' logs: exchange/log_mib must hold a cycle's pieces.
#define APP_CG_RESTART OUTER_KRYLOV_RESTART_MAX

//  Entries that differ by less than this, relatively, count as equal when
//  CG checks the matrix is symmetric: files written with 16 digits
#define APP_SYMMETRY_TOLERANCE 1e-12

//  The problem as the parameters describe it.
typedef struct {
    kind_t kind;                //  Which problem
    int32_t n;                  //  Order of the matrix
    int32_t grid;               //  Poisson grid side
    int32_t per_row;            //  Random entries per row
    int32_t bandwidth;          //  nascg band
    double dominance;           //  random-dominant diagonal factor
    double shift;               //  Diagonal shift (nascg, random-spd)
    uint64_t seed;              //  Random kinds
    int32_t overlap;            //  Rows of overlap each side
    multisplit_options_t options;   //  Inner solver
    bool tsirm;                 //  solver/outer = tsirm
    tsirm_options_t window;     //  Its least-squares step
    int32_t source_wait;        //  Async, msec: solver/tsirm_source_wait
    bool krylov;                //  GMRES or CG runs the steps: solver/outer
                                //  = gmres | cg, or tsirm over their cycles
    bool tsirm_krylov;          //  solver/tsirm_inner = gmres | cg
    outer_krylov_options_t krylov_options;  //  Its method, restart, blocks
} spec_t;

//  Spawner side: the whole system.
typedef struct {
    spec_t spec;                //  What it is
    csr_t *A;                   //  The matrix, all rows
    double *b;                  //  Right-hand side
    bool known_solution;        //  b = A * 1
    char advice [256];          //  What s_stall_advice last said
} problem_t;

//  Whether the matrix is symmetric.  Only a file's is checked: the
//  generators' are symmetric or not by construction, and the check
//  builds a transpose (7% of the spawner's CPU samples in NAS-CG-like
//  jobs of 50,000 rows).
static bool
s_symmetric (const problem_t *problem)
{
    return problem->spec.kind == KIND_MATRIX
         ? csr_is_symmetric (problem->A, APP_SYMMETRY_TOLERANCE)
         : problem->spec.kind != KIND_RANDOM_DOMINANT;
}

//  Daemon side: TSIRM's window (see s_minimise).  Over multisplitting,
//  windows are aligned on iteration numbers, the same on every task:
//  window w ends at iteration w s + s - 1, where every task takes its
//  least-squares step.  Over Krylov cycles (GMRES or CG), they are
//  aligned on the cycles, which
//  end on every task in the same iteration.
typedef struct {
    tsirm_options_t options;    //  s and the CGLS budget
    int32_t rows;               //  Core rows
    double *columns;            //  Core values of base and the s iterates,
                                //  (s + 1) x rows: column 0 is the base
    bool open;                  //  The base of the window under way is set
    int64_t accept_from;        //  Neighbours' vectors older than our last
                                //  step predate it and are not taken
    double *external;           //  Neighbours' values of the s + 1 columns,
                                //  (s + 1) x external_size
    double *wr;                 //  Our rows of [A D | r0], rows x (s + 1)
    double *factor;             //  Our share of the step, then our rows'
                                //  ||b||^2 (every task learns ||b||)
    double *boundary;           //  Outgoing pieces, in one buffer
    double tolerance;           //  job/tolerance: relative residual
    bool converged;             //  The last step's iterate meets it
    double residual;            //  Its relative residual
    int32_t cycles;             //  Over Krylov cycles: those ended in the
                                //  window
    double *saved;              //  Over Krylov cycles: the checkpoint, or
                                //  NULL
} window_t;

//  Daemon side: one task.
typedef struct {
    multisplit_t *split;        //  Local blocks, inner solver, iterate
    int32_t tasks;              //  Tasks in the job
    int32_t rank;               //  Our task
    double *x_ext;              //  Newest values of the other blocks
    int32_t **requested;        //  Per task: indices it asked us for
    int32_t *requested_count;   //  Per task: entries in requested
    double *outgoing;           //  Values being sent, largest request
    bool requests_read;         //  requested[] filled from the runtime
    window_t *window;           //  TSIRM's window, or NULL
    outer_krylov_t *krylov;     //  The outer GMRES or CG, or NULL
    double residual_bound;      //  job/tolerance x our rows' ||b||: our
                                //  rows' residual under it, every task's
                                //  is the job's under the tolerance
} task_state_t;


//  --------------------------------------------------------------------------
//  Parameters

static int
s_parse_kind (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    const char *kind = (const char *) zhash_lookup (params, "problem/kind");
    for (size_t i = 0; kind && i < KIND_COUNT; i++)
        if (streq (kind, s_kind_names [i])) {
            spec->kind = (kind_t) i;
            return 0;
        }
    snprintf (reason, reason_size, "problem/kind = '%s' is not one of "
              "poisson2d, poisson3d, nascg, matrix, random-dominant, "
              "random-spd", kind ? kind : "");
    return -1;
}

//  A key that takes one of `choices` (NULL-terminated), or is absent
//  (*value NULL).  Returns 0, or -1 with a reason that lists them.
static int
s_parse_choice (zhash_t *params, const char *key,
                const char *const *choices, const char **value,
                char *reason, size_t reason_size)
{
    *value = (const char *) zhash_lookup (params, key);
    if (!*value)
        return 0;
    char list [256] = "";
    for (size_t i = 0; choices [i]; i++) {
        if (streq (*value, choices [i]))
            return 0;
        size_t used = strlen (list);
        snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "",
                  choices [i]);
    }
    snprintf (reason, reason_size, "%s = '%s' is not one of %s", key, *value,
              list);
    return -1;
}

static bool
s_cg (const spec_t *spec)
{
    return spec->krylov && spec->krylov_options.method == OUTER_KRYLOV_CG;
}

//  How the job asked for GMRES or CG, for messages
static const char *
s_krylov_name (const spec_t *spec)
{
    if (s_cg (spec))
        return spec->tsirm_krylov ? "solver/tsirm_inner = cg"
                                  : "solver/outer = cg";
    return spec->tsirm_krylov ? "solver/tsirm_inner = gmres"
                              : "solver/outer = gmres";
}

//  GMRES's or CG's keys, and what they need of the job.
static int
s_parse_krylov (zhash_t *params, spec_t *spec, char *reason,
                size_t reason_size)
{
    //  A job file may hold both methods' keys: the one not run is ignored,
    //  as TSIRM's keys are when solver/outer is not tsirm
    bool cg = s_cg (spec);
    const char *restart_key = cg ? "solver/cg_restart"
                                 : "solver/gmres_restart";
    double restart_default = cg ? APP_CG_RESTART
                           : spec->tsirm_krylov ? APP_TSIRM_GMRES_RESTART
                           : 30;
    double restart, inner;
    if (jace_param_integer (params, restart_key, restart_default, 1,
                            OUTER_KRYLOV_RESTART_MAX, &restart, reason,
                            reason_size)
    ||  jace_param_integer (params, "solver/gmres_inner_iterations", 0, 0,
                            1000, &inner, reason, reason_size))
        return -1;
    if (cg)
        inner = 0;      //  CG needs a fixed preconditioner
    spec->krylov_options.restart = (int32_t) restart;
    spec->krylov_options.inner_iterations = (int32_t) inner;
    const char *mode = (const char *) zhash_lookup (params, "job/mode");
    if (spec->krylov && !(mode && streq (mode, "sync"))) {
        //  Every step sums over all tasks: it cannot run asynchronously
        snprintf (reason, reason_size, "%s needs job/mode = sync (its steps "
                  "are global), not %s", s_krylov_name (spec),
                  mode ? mode : "async (the default)");
        return -1;
    }
    return 0;
}

//  solver/outer and TSIRM's keys.
static int
s_parse_outer (zhash_t *params, spec_t *spec, char *reason,
               size_t reason_size)
{
    static const char *const outers [] = { "multisplit", "tsirm", "gmres",
                                           "cg", NULL };
    static const char *const inners [] = { "multisplit", "gmres", "cg",
                                           NULL };
    const char *outer, *inner;
    if (s_parse_choice (params, "solver/outer", outers, &outer, reason,
                        reason_size)
    ||  s_parse_choice (params, "solver/tsirm_inner", inners, &inner, reason,
                        reason_size))
        return -1;
    spec->tsirm = outer && streq (outer, "tsirm");
    bool inner_krylov = inner && !streq (inner, "multisplit");
    if (inner_krylov && !spec->tsirm) {
        snprintf (reason, reason_size, "solver/tsirm_inner = %s needs "
                  "solver/outer = tsirm, not %s", inner,
                  outer ? outer : "multisplit");
        return -1;
    }
    const char *method = inner_krylov ? inner : outer;
    spec->tsirm_krylov = spec->tsirm && inner_krylov;
    spec->krylov = spec->tsirm_krylov
                || (outer && (streq (outer, "gmres") || streq (outer, "cg")));
    spec->krylov_options.method = method && streq (method, "cg")
                                ? OUTER_KRYLOV_CG : OUTER_KRYLOV_GMRES;
    if (s_parse_krylov (params, spec, reason, reason_size))
        return -1;
    tsirm_options_defaults (&spec->window);
    if (spec->tsirm_krylov)
        spec->window.size = APP_TSIRM_KRYLOV_WINDOW;
    double size, iterations, tolerance, source_wait;
    if (jace_param_integer (params, "solver/tsirm_size", spec->window.size, 2,
                            TSIRM_SIZE_MAX, &size, reason, reason_size)
    ||  jace_param_integer (params, "solver/tsirm_source_wait",
                            APP_TSIRM_SOURCE_WAIT_MSEC, 0, 60000,
                            &source_wait, reason, reason_size)
    ||  jace_param_integer (params, "solver/tsirm_max_iterations",
                            spec->window.max_iterations, 1, 1000, &iterations,
                            reason, reason_size)
    ||  jace_param_number (params, "solver/tsirm_tolerance",
                           spec->window.tolerance, 0, 1, &tolerance, reason,
                           reason_size))
        return -1;
    spec->window.size = (int32_t) size;
    spec->window.max_iterations = (int32_t) iterations;
    spec->window.tolerance = tolerance;
    spec->source_wait = (int32_t) source_wait;
    return 0;
}

static int
s_parse_solver (zhash_t *params, spec_t *spec, char *reason,
                size_t reason_size)
{
    multisplit_options_defaults (&spec->options);
    const char *inner = (const char *) zhash_lookup (params, "solver/inner");
    if (inner && multisplit_inner_parse (inner, &spec->options.inner)) {
        snprintf (reason, reason_size, "solver/inner = '%s' is not one of "
                  "krylov, lu-banded, cg, bicgstab", inner);
        return -1;
    }
    static const char *const preconditioners [] = { "jacobi", "ilu0", NULL };
    const char *pc;
    if (s_parse_choice (params, "solver/preconditioner", preconditioners,
                        &pc, reason, reason_size))
        return -1;
    if (s_parse_outer (params, spec, reason, reason_size))
        return -1;
    //  ILU(0) unless the job asks for the diagonal: TSIRM's few inner
    //  iterations need it (capped Jacobi-PCG blocks took 7x the outer
    //  iterations on 3D Poisson), and solves to the inner tolerance took
    //  0.16-0.68 of the time with it, sync and async, on 3D Poisson and
    //  convection, and the same on the NAS-CG-like system (BENCHMARKS.md,
    //  make bench-inner).
    if (!pc || streq (pc, "ilu0"))
        spec->options.preconditioner = MULTISPLIT_PC_ILU0;
    //  Under CG the matrix is symmetric (the spawner checked it), so is
    //  every block: no task need check its own again to choose CG
    if (s_cg (spec) && spec->options.inner == MULTISPLIT_INNER_KRYLOV)
        spec->options.inner = MULTISPLIT_INNER_CG;
    double tolerance, max_iterations, overlap;
    if (jace_param_number (params, "solver/inner_tolerance",
                           spec->options.inner_tolerance, 1e-300, 1,
                           &tolerance, reason, reason_size)
    ||  jace_param_integer (params, "solver/inner_max_iterations",
                            spec->tsirm ? APP_TSIRM_INNER_MAX_ITERATIONS
                                        : spec->options.inner_max_iterations,
                            1, 1e6, &max_iterations, reason, reason_size)
    ||  jace_param_integer (params, "solver/overlap", 0, 0, 1e6, &overlap,
                            reason, reason_size))
        return -1;
    spec->options.inner_tolerance = tolerance;
    spec->options.inner_max_iterations = (int32_t) max_iterations;
    spec->overlap = (int32_t) overlap;
    if (spec->krylov && spec->overlap > 0) {
        //  Block Jacobi preconditions GMRES and CG; an overlap would need
        //  the restricted additive Schwarz operator, which is not built
        snprintf (reason, reason_size, "%s takes no solver/overlap (%d "
                  "asked)", s_krylov_name (spec), spec->overlap);
        return -1;
    }
    return 0;
}

//  The problem/ keys each kind reads, in s_kind_names' order: another
//  one in the job is a mistake whose effect the user would never see (a
//  problem/matrix beside kind = poisson2d solved the Poisson system).
static const char *const s_kind_keys [] [6] = {
    { "n" },                                            //  poisson2d
    { "n" },                                            //  poisson3d
    { "n", "bandwidth", "per_row", "shift", "seed" },   //  nascg
    { "matrix", "rhs" },                                //  matrix
    { "n", "per_row", "dominance", "seed" },            //  random-dominant
    { "n", "per_row", "shift", "seed" }                 //  random-spd
};

static bool
s_kind_reads (kind_t kind, const char *name)
{
    for (size_t i = 0; i < 6 && s_kind_keys [kind][i]; i++)
        if (streq (s_kind_keys [kind][i], name))
            return true;
    return false;
}

static int
s_check_kind_keys (zhash_t *params, kind_t kind, char *reason,
                   size_t reason_size)
{
    for (const char *value = (const char *) zhash_first (params); value;
         value = (const char *) zhash_next (params)) {
        const char *key = zhash_cursor (params);
        if (strncmp (key, "problem/", 8) != 0 || streq (key, "problem/kind")
        ||  s_kind_reads (kind, key + 8))
            continue;
        char reads [128] = "";
        for (size_t i = 0; i < 6 && s_kind_keys [kind][i]; i++)
            snprintf (reads + strlen (reads), sizeof reads - strlen (reads),
                      "%sproblem/%s", i ? ", " : "", s_kind_keys [kind][i]);
        snprintf (reason, reason_size, "%s is not read by problem/kind = %s,"
                  " which reads only %s", key, s_kind_names [kind], reads);
        return -1;
    }
    return 0;
}

//  Sizes of the generated kinds; the matrix kind learns n from its file.
static int
s_parse_size (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    double n, per_row, bandwidth, dominance, shift, seed;
    bool poisson = spec->kind == KIND_POISSON2D
                || spec->kind == KIND_POISSON3D;
    double max_n = spec->kind == KIND_POISSON2D ? 46340
                 : spec->kind == KIND_POISSON3D ? 1290 : INT32_MAX;
    if (jace_param_integer (params, "problem/n", poisson ? 32 : 1000, 2,
                            max_n, &n, reason, reason_size)
    ||  jace_param_integer (params, "problem/per_row", 4, 1, 1000, &per_row,
                            reason, reason_size)
    ||  jace_param_number (params, "problem/dominance", 2, 1e-3, 1e6,
                           &dominance, reason, reason_size)
    ||  jace_param_number (params, "problem/shift", 1, 1e-12, 1e12, &shift,
                           reason, reason_size)
    ||  jace_param_integer (params, "problem/seed", 1, 0, 1e15, &seed,
                            reason, reason_size))
        return -1;
    spec->grid = (int32_t) n;
    spec->n = spec->kind == KIND_POISSON2D ? spec->grid * spec->grid
            : spec->kind == KIND_POISSON3D ? spec->grid * spec->grid
                                             * spec->grid
            : (int32_t) n;
    if (jace_param_integer (params, "problem/bandwidth",
                            fmax (1, spec->n / 50), 1, fmax (1, spec->n - 1),
                            &bandwidth, reason, reason_size))
        return -1;
    spec->per_row = (int32_t) per_row;
    spec->bandwidth = (int32_t) bandwidth;
    spec->dominance = dominance;
    spec->shift = shift;
    spec->seed = (uint64_t) seed;
    return 0;
}

static int
s_parse_spec (zhash_t *params, spec_t *spec, char *reason,
              size_t reason_size)
{
    memset (spec, 0, sizeof *spec);
    if (s_parse_kind (params, spec, reason, reason_size)
    ||  s_check_kind_keys (params, spec->kind, reason, reason_size)
    ||  s_parse_solver (params, spec, reason, reason_size))
        return -1;
    if (spec->kind == KIND_MATRIX)
        return 0;
    return s_parse_size (params, spec, reason, reason_size);
}

//  Rows [begin, end) of a generated matrix.
static int
s_generate (const spec_t *spec, int32_t begin, int32_t end, csr_t **A,
            char *reason, size_t reason_size)
{
    switch (spec->kind) {
        case KIND_POISSON2D:
            return problems_poisson2d (spec->grid, begin, end, A, reason,
                                       reason_size);
        case KIND_POISSON3D:
            return problems_poisson3d (spec->grid, begin, end, A, reason,
                                       reason_size);
        case KIND_NASCG: {
            problems_nascg_t nascg = { spec->n, spec->bandwidth,
                spec->per_row, spec->shift, spec->seed };
            return problems_nascg (&nascg, begin, end, A, reason,
                                   reason_size);
        }
        case KIND_RANDOM_DOMINANT:
            return problems_random_dominant (spec->n, spec->per_row,
                spec->dominance, spec->seed, begin, end, A, reason,
                reason_size);
        case KIND_RANDOM_SPD:
            return problems_random_spd (spec->n, spec->per_row, spec->shift,
                spec->seed, begin, end, A, reason, reason_size);
        default:
            snprintf (reason, reason_size, "a matrix file is not generated");
            return -1;
    }
}

//  --------------------------------------------------------------------------
//  Spawner side

static void
s_unload (void **problem_p)
{
    problem_t *problem = (problem_t *) *problem_p;
    if (problem) {
        csr_destroy (&problem->A);
        free (problem->b);
        free (problem);
        *problem_p = NULL;
    }
}

static int
s_load_matrix (zhash_t *params, problem_t *problem, char *reason,
               size_t reason_size)
{
    const char *matrix = (const char *) zhash_lookup (params,
                                                      "problem/matrix");
    const char *rhs = (const char *) zhash_lookup (params, "problem/rhs");
    if (!matrix) {
        snprintf (reason, reason_size, "problem/kind = matrix needs "
                  "problem/matrix, a Matrix Market file");
        return -1;
    }
    if (mmio_read_system (matrix, rhs, &problem->A, &problem->b, reason,
                          reason_size))
        return -1;
    //  A zero row or column leaves an unknown free (or the system
    //  without a solution): the job could only ever verify a residual,
    //  never an answer.
    int32_t row, col;
    csr_first_empty (problem->A, &row, &col);
    if (row >= 0) {
        snprintf (reason, reason_size, "problem/matrix = %s is singular: "
                  "row %" PRId32 " holds no nonzero entry (its equation "
                  "reads 0 = b_%" PRId32 ")", matrix, row + 1, row + 1);
        return -1;
    }
    if (col >= 0) {
        snprintf (reason, reason_size, "problem/matrix = %s is singular: "
                  "column %" PRId32 " holds no nonzero entry (x_%" PRId32
                  " appears in no equation)", matrix, col + 1, col + 1);
        return -1;
    }
    problem->spec.n = problem->A->nrows;
    problem->known_solution = rhs == NULL;
    return 0;
}

static void *
s_load (zhash_t *params, char *reason, size_t reason_size)
{
    problem_t *problem = (problem_t *) zmalloc (sizeof *problem);
    if (s_parse_spec (params, &problem->spec, reason, reason_size))
        goto out_fail;
    if (problem->spec.kind == KIND_MATRIX) {
        if (s_load_matrix (params, problem, reason, reason_size))
            goto out_fail;
    }
    else {
        if (s_generate (&problem->spec, 0, problem->spec.n, &problem->A,
                        reason, reason_size))
            goto out_fail;
        problem->b = (double *) malloc (problem->spec.n * sizeof (double));
        assert (problem->b);
        problems_rhs_ones_solution (problem->A, problem->b);
        problem->known_solution = true;
    }
    //  CG needs a symmetric matrix; say so now rather than after a
    //  breakdown.
    bool symmetric = !s_cg (&problem->spec) || s_symmetric (problem);
    if (!symmetric) {
        const char *matrix = (const char *) zhash_lookup (params,
                                                          "problem/matrix");
        snprintf (reason, reason_size, "%s needs a symmetric positive "
                  "definite matrix, and %s%s is not symmetric; use %s = "
                  "gmres", s_krylov_name (&problem->spec),
                  matrix ? "problem/matrix = " : "problem/kind = ",
                  matrix ? matrix : s_kind_names [problem->spec.kind],
                  problem->spec.tsirm_krylov ? "solver/tsirm_inner"
                                             : "solver/outer");
        goto out_fail;
    }
    return problem;

out_fail:
    s_unload ((void **) &problem);
    return NULL;
}

static void
s_shape (void *raw, int64_t *rows, int64_t *unknowns_per_row)
{
    problem_t *problem = (problem_t *) raw;
    *rows = problem->spec.n;
    *unknowns_per_row = 1;
}

static double
s_residual (void *raw, const double *x, int64_t count)
{
    problem_t *problem = (problem_t *) raw;
    int32_t n = problem->spec.n;
    if (count != n)
        return INFINITY;
    double r_norm = csr_residual_squared (problem->A, problem->b, x);
    double b_norm = 0;
    for (int32_t i = 0; i < n; i++)
        b_norm += problem->b [i] * problem->b [i];
    return b_norm > 0 ? sqrt (r_norm / b_norm) : sqrt (r_norm);
}

static double
s_error (void *raw, const double *x, int64_t count)
{
    problem_t *problem = (problem_t *) raw;
    if (!problem->known_solution || count != problem->spec.n)
        return NAN;
    double error = 0;
    for (int64_t i = 0; i < count; i++)
        error = fmax (error, fabs (x [i] - 1));
    return error;
}

static void
s_boundaries (const int64_t *first_row, int64_t tasks, int32_t *boundaries)
{
    for (int64_t i = 0; i <= tasks; i++)
        boundaries [i] = (int32_t) first_row [i];
}

//  A task's extended rows of a file matrix travel in its ASSIGN: relative
//  row offsets, column indices, values, and the right-hand side.
//  A block's column indices travel as 32-bit little-endian integers, as
//  the CSR holds them: as int64 they made the task data 16 bytes an entry
//  instead of 12, a third more to hold and to send.
static void
s_columns_to_wire (const int32_t *columns, size_t count, void *wire)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy (wire, columns, 4 * count);
#else
    uint8_t *out = (uint8_t *) wire;
    for (size_t k = 0; k < count; k++) {
        uint32_t column = (uint32_t) columns [k];
        for (int byte = 0; byte < 4; byte++)
            out [4 * k + byte] = (uint8_t) (column >> (8 * byte));
    }
#endif
}

//  The columns s_columns_to_wire wrote, read in place (count of them).
static void
s_columns_from_wire (int32_t *columns, size_t count)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    (void) columns;
    (void) count;
#else
    for (size_t k = 0; k < count; k++) {
        const uint8_t *in = (const uint8_t *) (columns + k);
        columns [k] = (int32_t) ((uint32_t) in [0] | (uint32_t) in [1] << 8
                                 | (uint32_t) in [2] << 16
                                 | (uint32_t) in [3] << 24);
    }
#endif
}

static int
s_attach (void *raw, const int64_t *first_row, int64_t tasks, int64_t task,
          jace_msg_t *assign)
{
    problem_t *problem = (problem_t *) raw;
    if (problem->spec.kind != KIND_MATRIX)
        return 0;
    int32_t *boundaries = (int32_t *) zmalloc ((tasks + 1) * sizeof (int32_t));
    s_boundaries (first_row, tasks, boundaries);
    int32_t begin, end;
    multisplit_extended_range (boundaries, (int32_t) tasks, (int32_t) task,
                               problem->spec.overlap, &begin, &end);
    free (boundaries);
    const csr_t *A = problem->A;
    int64_t base = A->row_ptr [begin];
    int64_t nnz = A->row_ptr [end] - base;
    //  Built in the message's own frames: a copy on the side doubled the
    //  spawner's peak by a block's indices
    size_t index = jace_msg_payload_count (assign);
    int64_t *offsets = (int64_t *) jace_msg_add_payload_space (assign,
        JACE_PAYLOAD_I64, (size_t) (end - begin + 1));
    for (int32_t row = begin; row <= end; row++)
        offsets [row - begin] = A->row_ptr [row] - base;
    jace_msg_payload_to_wire (assign, index);
    s_columns_to_wire (A->col_idx + base, (size_t) nnz,
                       jace_msg_add_payload_space (assign, JACE_PAYLOAD_BYTES,
                                                   4 * (size_t) nnz));
    jace_msg_add_payload (assign, JACE_PAYLOAD_F64, A->values + base,
                          (size_t) nnz);
    jace_msg_add_payload (assign, JACE_PAYLOAD_F64, problem->b + begin,
                          (size_t) (end - begin));
    return 0;
}

//  True if first_row holds tasks + 1 nondecreasing block starts from 0 to n.
static bool
s_blocks_valid (const int64_t *first_row, int64_t tasks, int32_t n)
{
    if (tasks < 1 || first_row [0] != 0 || first_row [tasks] != n)
        return false;
    for (int64_t t = 0; t < tasks; t++)
        if (first_row [t + 1] < first_row [t])
            return false;
    return true;
}

//  The task graph (docs/MAPPING.md section 3) of the blocks first_row of
//  the whole matrix: e_i = the flops of an iteration on block i
//  (s_block_cost; for Krylov inner solves a lower bound, about alike for
//  every block, so the ratios between tasks are right); c_ij = the distinct columns of
//  block j that block i's rows use, the values task i receives from task j
//  every iteration (with overlap 0; an overlap adds the extended rows'
//  columns, which the contract leaves out): s_describe below.
//  Flops of one iteration on rows begin..end: one product of the rows by
//  a vector; with lu-banded, the banded solve's substitutions too, four
//  flops per row per diagonal of the block's band (a 2D grid's band is
//  its side: 1200 flops a row for side 300, where the product is 10).
//  Krylov inner solves run an unknown number of products: one is counted.
static double
s_block_cost (const problem_t *problem, int64_t begin, int64_t end)
{
    const csr_t *A = problem->A;
    double flops = 2.0 * (double) (A->row_ptr [end] - A->row_ptr [begin]);
    if (problem->spec.options.inner != MULTISPLIT_INNER_BANDED_LU)
        return flops;
    int64_t band = 0;
    for (int64_t row = begin; row < end; row++)
        for (int64_t k = A->row_ptr [row]; k < A->row_ptr [row + 1]; k++) {
            int64_t column = A->col_idx [k];
            if (column >= begin && column < end)
                band = llabs (column - row) > band ? llabs (column - row)
                                                   : band;
        }
    return flops + 4.0 * (double) band * (double) (end - begin);
}

//  The set bits of `seen` in [from, to), a word at a time.
static int64_t
s_bits_set (const uint64_t *seen, int64_t from, int64_t to)
{
    int64_t count = 0;
    while (from < to) {
        int64_t bit = from % 64;
        int64_t span = to - from < 64 - bit ? to - from : 64 - bit;
        uint64_t mask = span == 64 ? ~(uint64_t) 0
                                   : (((uint64_t) 1 << span) - 1) << bit;
        count += __builtin_popcountll (seen [from / 64] & mask);
        from += span;
    }
    return count;
}

//  Task `task` needs from each other block the distinct columns of it
//  marked in `seen`, all between low and high.
static void
s_add_needs (jace_graph_t *graph, const int64_t *first_row, int64_t tasks,
             int64_t task, const uint64_t *seen, int64_t low, int64_t high)
{
    for (int64_t block = 0; block < tasks; block++) {
        int64_t from = first_row [block] > low ? first_row [block] : low;
        int64_t to = first_row [block + 1] < high + 1 ? first_row [block + 1]
                                                      : high + 1;
        if (block == task || from >= to)
            continue;
        int64_t values = s_bits_set (seen, from, to);
        if (values > 0)
            jace_graph_add_need (graph, task, block, (double) values);
    }
}

//  Spawner side: each block's cost, and the distinct columns it reads
//  from each other block.  One bit per column marks those a block's rows
//  use outside it; counting the bits between two block starts gives the
//  need.  O(nnz + tasks x (m / 64 + tasks)) for m the span of the
//  columns marked.  A bitmap, not a sorted list of the columns (qsort
//  took 540 ms of the 1.6-million-row NAS-CG-like job's plan) nor an
//  int array of the matrix's order (its fresh pages cost 2 ms on 50,000
//  rows: BENCHMARKS, "The task graph's page faults"): 6 KB there.
static int
s_describe (void *raw, const int64_t *first_row, int64_t tasks,
            jace_graph_t *graph)
{
    problem_t *problem = (problem_t *) raw;
    const csr_t *A = problem->A;
    if (!s_blocks_valid (first_row, tasks, A->nrows) || tasks > INT32_MAX)
        return -1;
    size_t words = ((size_t) A->ncols + 63) / 64;
    uint64_t *seen = (uint64_t *) calloc (words + 1, sizeof (uint64_t));
    assert (seen);
    for (int64_t task = 0; task < tasks; task++) {
        int64_t begin = first_row [task], end = first_row [task + 1];
        jace_graph_set_cost (graph, task, s_block_cost (problem, begin,
                                                        end));
        int64_t low = A->ncols, high = -1;
        for (int64_t k = A->row_ptr [begin]; k < A->row_ptr [end]; k++) {
            int64_t j = A->col_idx [k];
            if (j >= begin && j < end)
                continue;
            seen [j / 64] |= (uint64_t) 1 << (j % 64);
            low = j < low ? j : low;
            high = j > high ? j : high;
        }
        if (high < 0)
            continue;           //  Nothing outside (one task)
        s_add_needs (graph, first_row, tasks, task, seen, low, high);
        memset (seen + low / 64, 0,
                (size_t) (high / 64 - low / 64 + 1) * sizeof (uint64_t));
    }
    free (seen);
    return 0;
}

//  Spawner side: the unknowns task `task` reads of the others' under the
//  cut first_row, every column outside its core that a row of its
//  extended range touches (a superset of what it requests: multisplit.h,
//  "Dependencies").  A rebalance sends it these values with its rows.
static int
s_reads (void *raw, const int64_t *first_row, int64_t tasks, int64_t task,
         int64_t **numbers_p, size_t *count_p)
{
    problem_t *problem = (problem_t *) raw;
    const csr_t *A = problem->A;
    if (!s_blocks_valid (first_row, tasks, A->nrows) || tasks > INT32_MAX
    ||  task < 0 || task >= tasks)
        return -1;
    int32_t *boundaries = (int32_t *) malloc (((size_t) tasks + 1)
                                              * sizeof (int32_t));
    assert (boundaries);
    for (int64_t t = 0; t <= tasks; t++)
        boundaries [t] = (int32_t) first_row [t];
    int32_t begin, end;
    multisplit_extended_range (boundaries, (int32_t) tasks, (int32_t) task,
                               problem->spec.overlap, &begin, &end);
    int32_t core_begin = boundaries [task], core_end = boundaries [task + 1];
    free (boundaries);
    //  Mark the columns, then list them in order
    uint8_t *read = (uint8_t *) calloc ((size_t) A->ncols + 1, 1);
    assert (read);
    int32_t low = A->ncols, high = -1;
    size_t count = 0;
    for (int64_t k = A->row_ptr [begin]; k < A->row_ptr [end]; k++) {
        int32_t j = A->col_idx [k];
        if ((j >= core_begin && j < core_end) || read [j])
            continue;
        read [j] = 1;
        count++;
        low = j < low ? j : low;
        high = j > high ? j : high;
    }
    int64_t *numbers = (int64_t *) malloc ((count + 1) * sizeof (int64_t));
    assert (numbers);
    size_t listed = 0;
    for (int32_t j = low; j <= high; j++)
        if (read [j])
            numbers [listed++] = j;
    free (read);
    *numbers_p = numbers;
    *count_p = listed;
    return 0;
}

//  --------------------------------------------------------------------------
//  Daemon side: the task's rows

//  Rebuild the rows the spawner attached, checking everything: they came
//  over the wire.
static int
s_rows_from_blocks (jace_task_t *task, int32_t n, int32_t begin, int32_t end,
                    csr_t **rows_p, double **b_p, char *reason,
                    size_t reason_size)
{
    int32_t count = end - begin;
    if (jace_task_block_count (task) != 4
    ||  jace_task_block_kind (task, 0) != JACE_PAYLOAD_I64
    ||  jace_task_block_kind (task, 1) != JACE_PAYLOAD_BYTES
    ||  jace_task_block_kind (task, 2) != JACE_PAYLOAD_F64
    ||  jace_task_block_kind (task, 3) != JACE_PAYLOAD_F64
    ||  jace_task_block_length (task, 0) != (size_t) count + 1
    ||  jace_task_block_length (task, 3) != (size_t) count
    ||  jace_task_block_length (task, 1)
        != 4 * jace_task_block_length (task, 2)) {
        snprintf (reason, reason_size, "ASSIGN does not carry rows %d..%d "
                  "of the matrix", begin, end);
        return -1;
    }
    size_t nnz = jace_task_block_length (task, 2);
    csr_t *rows = csr_new (count, n, (int64_t) nnz);
    jace_task_block_copy (task, 0, rows->row_ptr);
    jace_task_block_copy (task, 1, rows->col_idx);
    s_columns_from_wire (rows->col_idx, nnz);
    int rc = 0;
    for (int32_t i = 0; i <= count && rc == 0; i++)
        if (rows->row_ptr [i] < (i ? rows->row_ptr [i - 1] : 0)
        ||  rows->row_ptr [i] > (int64_t) nnz
        ||  (i == count && rows->row_ptr [i] != (int64_t) nnz))
            rc = -1;
    for (size_t k = 0; k < nnz && rc == 0; k++)
        if (rows->col_idx [k] < 0 || rows->col_idx [k] >= n)
            rc = -1;
    if (rc == 0) {
        jace_task_block_copy (task, 2, rows->values);
        *b_p = (double *) malloc ((count + 1) * sizeof (double));
        assert (*b_p);
        jace_task_block_copy (task, 3, *b_p);
        *rows_p = rows;
        return 0;
    }
    snprintf (reason, reason_size, "ASSIGN carries inconsistent rows");
    csr_destroy (&rows);
    return -1;
}

static int
s_task_rows (jace_task_t *task, const spec_t *spec, int32_t n,
             int32_t begin, int32_t end, csr_t **rows_p, double **b_p,
             char *reason, size_t reason_size)
{
    if (spec->kind == KIND_MATRIX)
        return s_rows_from_blocks (task, n, begin, end, rows_p, b_p, reason,
                                   reason_size);
    if (s_generate (spec, begin, end, rows_p, reason, reason_size))
        return -1;
    *b_p = (double *) malloc (((*rows_p)->nrows + 1) * sizeof (double));
    assert (*b_p);
    problems_rhs_ones_solution (*rows_p, *b_p);
    return 0;
}

//  Tell the runtime whom we need what from.
static void
s_request_dependencies (task_state_t *self, jace_task_t *task)
{
    int32_t largest = 0;
    for (int32_t t = 0; t < self->tasks; t++)
        if (multisplit_dependency_count (self->split, t) > largest)
            largest = multisplit_dependency_count (self->split, t);
    int64_t *indices = (int64_t *) malloc ((largest + 1) * sizeof (int64_t));
    assert (indices);
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t count = multisplit_dependency_count (self->split, t);
        if (t == self->rank || count == 0)
            continue;
        const int32_t *needed = multisplit_dependency_indices (self->split,
                                                               t);
        for (int32_t k = 0; k < count; k++)
            indices [k] = needed [k];
        jace_task_request (task, t, indices, (size_t) count);
    }
    free (indices);
}

static void
s_window_destroy (window_t **window_p)
{
    window_t *window = *window_p;
    if (window) {
        free (window->columns);
        free (window->external);
        free (window->wr);
        free (window->factor);
        free (window->boundary);
        free (window->saved);
        free (window);
        *window_p = NULL;
    }
}

//  ||b||^2 over our core rows, of b over rows [begin, ...): the residual
//  of x = 0, which TSIRM and the outer Krylov methods measure against.
static double
s_rhs_squared (const multisplit_t *split, const double *b, int32_t begin)
{
    int32_t core_begin = multisplit_row_begin (split);
    int32_t core_end = multisplit_row_end (split);
    double sum = 0;
    for (int32_t row = core_begin; row < core_end; row++)
        sum += b [row - begin] * b [row - begin];
    return sum;
}

static window_t *
s_window_new (const tsirm_options_t *options, const multisplit_t *split,
              double tolerance, double b_squared)
{
    window_t *window = (window_t *) zmalloc (sizeof *window);
    window->options = *options;
    window->tolerance = tolerance;
    window->rows = multisplit_row_end (split) - multisplit_row_begin (split);
    size_t columns = (size_t) options->size + 1;
    window->columns = (double *) zmalloc (columns * window->rows
                                          * sizeof (double));
    window->external = (double *) zmalloc (columns
        * ((size_t) multisplit_external_size (split) + 1) * sizeof (double));
    window->wr = (double *) zmalloc (columns * window->rows * sizeof (double));
    size_t length = tsirm_factor_length (options->size);
    window->factor = (double *) zmalloc ((length + 1) * sizeof (double));
    window->factor [length] = b_squared;
    return window;
}

static void
s_destroy (void **state_p)
{
    task_state_t *self = (task_state_t *) *state_p;
    if (self) {
        multisplit_destroy (&self->split);
        for (int32_t t = 0; self->requested && t < self->tasks; t++)
            free (self->requested [t]);
        free (self->requested);
        free (self->requested_count);
        free (self->outgoing);
        free (self->x_ext);
        s_window_destroy (&self->window);
        outer_krylov_destroy (&self->krylov);
        free (self);
        *state_p = NULL;
    }
}

static void *
s_setup (jace_task_t *task, char *reason, size_t reason_size)
{
    spec_t spec;
    if (s_parse_spec (jace_task_params (task), &spec, reason, reason_size))
        return NULL;
    task_state_t *self = (task_state_t *) zmalloc (sizeof *self);
    self->tasks = (int32_t) jace_task_count (task);
    self->rank = (int32_t) jace_task_rank (task);
    int32_t n = (int32_t) jace_task_row_of (task, self->tasks);
    int32_t *boundaries = (int32_t *) zmalloc ((self->tasks + 1)
                                               * sizeof (int32_t));
    for (int32_t t = 0; t <= self->tasks; t++)
        boundaries [t] = (int32_t) jace_task_row_of (task, t);
    int32_t begin, end;
    multisplit_extended_range (boundaries, self->tasks, self->rank,
                               spec.overlap, &begin, &end);
    csr_t *rows = NULL;
    double *b = NULL;
    int rc = s_task_rows (task, &spec, n, begin, end, &rows, &b, reason,
                          reason_size);
    if (rc == 0)
        rc = multisplit_new (rows, b, boundaries, self->tasks, self->rank,
                             spec.overlap, &spec.options, &self->split,
                             reason, reason_size);
    double b_squared = rc == 0 ? s_rhs_squared (self->split, b, begin) : 0;
    csr_destroy (&rows);
    free (b);
    free (boundaries);
    if (rc) {
        s_destroy ((void **) &self);
        return NULL;
    }
    self->x_ext = (double *) zmalloc (
        (multisplit_external_size (self->split) + 1) * sizeof (double));
    s_request_dependencies (self, task);
    double tolerance = jace_task_param_double (task, "job/tolerance", 1e-6);
    self->residual_bound = tolerance * sqrt (b_squared);
    if (spec.tsirm)
        self->window = s_window_new (&spec.window, self->split, tolerance,
                                     b_squared);
    //  The runtime waits so in asynchronous mode only; over Krylov cycles
    //  the mode is synchronous anyway
    if (spec.tsirm && !spec.tsirm_krylov)
        jace_task_set_source_wait (task, spec.source_wait);
    if (spec.krylov) {
        spec.krylov_options.tolerance = tolerance;
        spec.krylov_options.rows_b_squared = b_squared;
        self->krylov = outer_krylov_new (&spec.krylov_options, self->split);
    }
    return self;
}

//  --------------------------------------------------------------------------
//  Daemon side: iterating

//  The request lists arrived before the first iteration; take them once.
static void
s_read_requests (task_state_t *self, jace_task_t *task)
{
    self->requested = (int32_t **) zmalloc (self->tasks * sizeof (int32_t *));
    self->requested_count = (int32_t *) zmalloc (self->tasks
                                                 * sizeof (int32_t));
    size_t largest = 0;
    for (int32_t t = 0; t < self->tasks; t++) {
        size_t count = 0;
        const int64_t *indices = t == self->rank ? NULL
                               : jace_task_requested (task, t, &count);
        if (!indices)
            continue;
        self->requested [t] = (int32_t *) malloc (count * sizeof (int32_t));
        assert (self->requested [t]);
        for (size_t k = 0; k < count; k++)
            self->requested [t][k] = (int32_t) indices [k];
        //  The runtime checked the range; the multisplit checks it again
        //  against the core rows it gathers from.
        if (multisplit_check_request (self->split, self->requested [t],
                                      (int32_t) count)) {
            free (self->requested [t]);
            self->requested [t] = NULL;
            continue;
        }
        self->requested_count [t] = (int32_t) count;
        largest = count > largest ? count : largest;
    }
    self->outgoing = (double *) malloc ((largest + 1) * sizeof (double));
    assert (self->outgoing);
    self->requests_read = true;
}

//  The newest values of each neighbour, unless they were computed
//  before iteration `from` (TSIRM's last step: older values would mix
//  the iterates the step replaced with its answer).
static void
s_take_newest (task_state_t *self, jace_task_t *task, int64_t from)
{
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t needed = multisplit_dependency_count (self->split, t);
        if (t == self->rank || needed == 0)
            continue;
        size_t count = 0;
        int64_t iteration = -1;
        const double *values = jace_task_newest (task, t, &count, NULL,
                                                 &iteration);
        if (values && count == (size_t) needed && iteration >= from)
            memcpy (self->x_ext + multisplit_dependency_offset (self->split,
                                                                t),
                    values, count * sizeof (double));
    }
}

//  --------------------------------------------------------------------------
//  Daemon side: TSIRM
//
//  Every task keeps its core rows of the window's base x0 and of the s
//  iterates.  At the window's last iteration every task, in the same
//  iteration number, runs two total exchanges (jace_task_alltoallv):
//
//  1. each task gives each task that reads its values those values of
//     the s + 1 columns; every task then holds, for its rows, exactly the
//     vectors the other tasks hold (not the older values it iterated
//     with), and computes its rows of [A D | r0] and their R factor;
//  2. each task gives every task its factor; every task stacks them in
//     rank order and solves the same small problem (tsirm.h).
//
//  Every task then continues from x = x0 + D beta, on its rows and on the
//  values it reads from the others, which it computes itself from round
//  1: no vector from before the step is used again (s_take_newest).  The
//  exchanges are the runtime's: a task replaced during a window restarts
//  from its checkpoint (its iterate and its exchange count) and opens the
//  window there; its k-th exchange meets everybody's k-th.

//  Open the window at `position` (iterations of it already run): the base
//  is the present iterate, and so are the iterates missed by a task that
//  starts mid-window (set up, or restored): its rows add no direction for
//  them.
static void
s_window_open (window_t *window, const double *x_core, int32_t position)
{
    size_t bytes = (size_t) window->rows * sizeof (double);
    for (int32_t c = 0; c <= position; c++)
        memcpy (window->columns + (size_t) c * window->rows, x_core, bytes);
    window->open = true;
}

//  Round 1: our values of the s + 1 columns to each task that reads them;
//  theirs into window->external.  Returns 0, or -1.
static int
s_exchange_columns (task_state_t *self, jace_task_t *task)
{
    window_t *window = self->window;
    int32_t columns = window->options.size + 1;
    int32_t begin = multisplit_row_begin (self->split);
    if (!window->boundary) {
        size_t total = 0;
        for (int32_t t = 0; t < self->tasks; t++)
            total += (size_t) self->requested_count [t];
        window->boundary = (double *) zmalloc ((total * columns + 1)
                                               * sizeof (double));
    }
    const void **buffers = (const void **) zmalloc (self->tasks
                                                    * sizeof (void *));
    size_t *sizes = (size_t *) zmalloc (self->tasks * sizeof (size_t));
    const void **received = (const void **) zmalloc (self->tasks
                                                     * sizeof (void *));
    size_t *received_sizes = (size_t *) zmalloc (self->tasks
                                                 * sizeof (size_t));
    double *piece = window->boundary;
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t count = self->requested_count [t];
        if (count == 0)
            continue;
        for (int32_t c = 0; c < columns; c++)
            for (int32_t k = 0; k < count; k++)
                piece [c * count + k] = window->columns [
                    (size_t) c * window->rows + self->requested [t][k] - begin];
        buffers [t] = piece;
        sizes [t] = (size_t) count * columns * sizeof (double);
        piece += (size_t) count * columns;
    }
    int rc = jace_task_alltoallv (task, buffers, sizes, received,
                                  received_sizes);
    int32_t external = multisplit_external_size (self->split);
    for (int32_t t = 0; rc == 0 && t < self->tasks; t++) {
        int32_t needed = multisplit_dependency_count (self->split, t);
        if (t == self->rank || needed == 0)
            continue;
        if (received_sizes [t] != (size_t) needed * columns * sizeof (double)) {
            zsys_error ("task %d: TSIRM columns of task %d are %zu bytes, "
                        "not %d x %d values", self->rank, t,
                        received_sizes [t], columns, needed);
            rc = -1;
            break;
        }
        int32_t offset = multisplit_dependency_offset (self->split, t);
        const char *bytes = (const char *) received [t];
        for (int32_t c = 0; c < columns; c++)
            memcpy (window->external + (size_t) c * external + offset,
                    bytes + (size_t) c * needed * sizeof (double),
                    (size_t) needed * sizeof (double));
    }
    free (buffers);
    free (sizes);
    free (received);
    free (received_sizes);
    return rc;
}

//  Our rows of [A D | r0], column-major, into window->wr, and their R
//  factor into window->factor.  x_ext is the workspace for the
//  neighbours' part of each difference.
static void
s_local_factor (task_state_t *self)
{
    window_t *window = self->window;
    int32_t s = window->options.size, rows = window->rows;
    int32_t external = multisplit_external_size (self->split);
    const double *base = window->columns;
    const double *base_ext = window->external;
    double *scratch = window->wr + (size_t) s * rows;
    for (int32_t j = 1; j <= s; j++) {
        const double *column = window->columns + (size_t) j * rows;
        const double *column_ext = window->external + (size_t) j * external;
        for (int32_t i = 0; i < rows; i++)
            scratch [i] = column [i] - base [i];
        for (int32_t e = 0; e < external; e++)
            self->x_ext [e] = column_ext [e] - base_ext [e];
        multisplit_multiply (self->split, scratch, self->x_ext,
                             window->wr + (size_t) (j - 1) * rows);
    }
    multisplit_residual_of (self->split, base, base_ext, scratch);
    tsirm_local_factor (window->wr, rows, s, window->factor);
}

//  Round 2: every task's factor (and its rows' ||b||^2), and the small
//  problem.  Returns 0 with beta and *b_norm, or -1.
static int
s_exchange_factors (task_state_t *self, jace_task_t *task, double *beta,
                    tsirm_result_t *result, double *b_norm)
{
    window_t *window = self->window;
    size_t length = tsirm_factor_length (window->options.size);
    size_t piece = length + 1;
    const void **buffers = (const void **) zmalloc (self->tasks
                                                    * sizeof (void *));
    size_t *sizes = (size_t *) zmalloc (self->tasks * sizeof (size_t));
    const void **received = (const void **) zmalloc (self->tasks
                                                     * sizeof (void *));
    size_t *received_sizes = (size_t *) zmalloc (self->tasks
                                                 * sizeof (size_t));
    for (int32_t t = 0; t < self->tasks; t++) {
        buffers [t] = window->factor;
        sizes [t] = piece * sizeof (double);
    }
    double *factors = (double *) zmalloc (self->tasks * piece
                                          * sizeof (double));
    const double **pieces = (const double **) zmalloc (self->tasks
                                                       * sizeof (double *));
    int rc = jace_task_alltoallv (task, buffers, sizes, received,
                                  received_sizes);
    double b_squared = 0;
    for (int32_t t = 0; rc == 0 && t < self->tasks; t++) {
        if (received_sizes [t] != piece * sizeof (double)) {
            zsys_error ("task %d: TSIRM factor of task %d is %zu bytes, "
                        "not %zu values", self->rank, t, received_sizes [t],
                        piece);
            rc = -1;
            break;
        }
        //  Copied: a received piece need not be aligned for doubles.
        memcpy (factors + t * piece, received [t], piece * sizeof (double));
        pieces [t] = factors + t * piece;
        b_squared += pieces [t][length];
    }
    *b_norm = sqrt (b_squared);
    if (rc == 0)
        rc = tsirm_solve (pieces, self->tasks, &window->options, beta,
                          result);
    free (pieces);
    free (factors);
    free (buffers);
    free (sizes);
    free (received);
    free (received_sizes);
    return rc;
}

//  Continue from x = x0 + D beta, on our rows and on the values we read
//  from others.  Returns the largest change from the window's last
//  iterate.
static double
s_apply_step (task_state_t *self, const double *beta)
{
    window_t *window = self->window;
    int32_t s = window->options.size, rows = window->rows;
    int32_t external = multisplit_external_size (self->split);
    double *x = window->wr;     //  Free again: the factor is taken
    const double *last = window->columns + (size_t) s * rows;
    double jump = 0;
    for (int32_t i = 0; i < rows; i++) {
        double base = window->columns [i], value = base;
        for (int32_t j = 1; j <= s; j++)
            value += beta [j - 1]
                   * (window->columns [(size_t) j * rows + i] - base);
        x [i] = value;
        jump = fmax (jump, fabs (value - last [i]));
    }
    multisplit_set_solution (self->split, x);
    for (int32_t e = 0; e < external; e++) {
        double base = window->external [e], value = base;
        for (int32_t j = 1; j <= s; j++)
            value += beta [j - 1]
                   * (window->external [(size_t) j * external + e] - base);
        self->x_ext [e] = value;
    }
    return jump;
}

//  The window's least-squares step.  Returns 0 and raises *change to the
//  step's jump, or -1 (an exchange failed, or the step is not finite).
static int
s_minimise (task_state_t *self, jace_task_t *task, double *change)
{
    double beta [TSIRM_SIZE_MAX];
    tsirm_result_t result;
    double b_norm;
    if (s_exchange_columns (self, task))
        return -1;
    s_local_factor (self);
    if (s_exchange_factors (self, task, beta, &result, &b_norm))
        return -1;
    *change = fmax (*change, s_apply_step (self, beta));
    //  The step's residual is the true residual of the iterate every task
    //  goes on from: when it meets the tolerance, the job has its answer,
    //  and the tasks need not wait for their changes to settle.
    self->window->residual = b_norm > 0 ? result.residual_after / b_norm
                                        : result.residual_after;
    self->window->converged = b_norm > 0
        && result.residual_after <= self->window->tolerance * b_norm;
    return isfinite (*change) ? 0 : -1;
}

//  An iteration failed: say why, if the block's solve knows.
static void
s_tell_failure (task_state_t *self, jace_task_t *task)
{
    char why [320];
    if (multisplit_explain_failure (self->split, why, sizeof why))
        jace_task_set_failure (task, why);
}

//  One multisplitting iteration of the block; a failure says why.
static int
s_iterate_block (task_state_t *self, jace_task_t *task,
                 multisplit_step_t *step)
{
    if (multisplit_iterate (self->split, self->x_ext, step) == 0)
        return 0;
    s_tell_failure (self, task);
    return -1;
}

//  One iteration of TSIRM: a multisplitting iteration kept in the window,
//  and at its end the step.
static int
s_iterate_tsirm (task_state_t *self, jace_task_t *task, double *change)
{
    window_t *window = self->window;
    int32_t s = window->options.size;
    int64_t iteration = jace_task_iteration (task);
    int32_t position = (int32_t) (iteration % s);
    if (!window->open || position == 0)
        s_window_open (window, multisplit_solution (self->split), position);
    s_take_newest (self, task, window->accept_from);
    multisplit_step_t step;
    if (s_iterate_block (self, task, &step))
        return -1;
    memcpy (window->columns + (size_t) (position + 1) * window->rows,
            multisplit_solution (self->split),
            (size_t) window->rows * sizeof (double));
    *change = step.change;
    if (position < s - 1)
        return 0;
    window->open = false;
    window->accept_from = iteration;
    return s_minimise (self, task, change);
}

//  --------------------------------------------------------------------------
//  Daemon side: GMRES or CG, and TSIRM over their cycles
//
//  solver/tsirm_inner = gmres | cg runs TSIRM as its authors and PETSc's
//  KSPTSIRM do: each outer step is an inner Krylov solve of the whole
//  system, here one cycle of the outer GMRES or CG, started from the
//  iterate the last one ended at.  The window keeps the iterates the
//  cycles end at, and after s of them the least-squares step (s_minimise)
//  replaces the iterate by their best combination: where a restarted
//  method stagnates, because each cycle forgets the others' directions,
//  that step combines them.  Cycles end on every task in the same
//  iteration (the method's decisions are global), so the windows are
//  aligned on cycles.  A checkpoint adds the window's cycles and columns
//  to the method's (s_checkpoint_tsirm_krylov).

//  One step of the outer GMRES or CG.  Its iterate moves only at a
//  cycle's end; the change reported is its estimate of the relative
//  residual, which is what the job's tolerance is about (after a TSIRM
//  step, that step's).
static int
s_iterate_krylov (task_state_t *self, jace_task_t *task, double *change,
                  bool *converged)
{
    window_t *window = self->window;    //  TSIRM over cycles, or NULL
    if (window && !window->open)
        s_window_open (window, multisplit_solution (self->split),
                       window->cycles);
    outer_krylov_readers_t readers = { self->tasks, self->rank,
        self->requested, self->requested_count };
    outer_krylov_step_t step;
    if (outer_krylov_iterate (self->krylov, task, &readers, &step)) {
        s_tell_failure (self, task);    //  A block solve, or a collective
        return -1;
    }
    *change = step.estimate;
    *converged = step.converged;
    if (!window || !step.cycle_ended || step.converged)
        return 0;
    window->cycles++;
    memcpy (window->columns + (size_t) window->cycles * window->rows,
            multisplit_solution (self->split),
            (size_t) window->rows * sizeof (double));
    if (window->cycles < window->options.size)
        return 0;
    window->open = false;
    window->cycles = 0;
    double jump = 0;
    if (s_minimise (self, task, &jump))
        return -1;
    *change = window->residual;
    *converged = window->converged;
    return 0;
}

static int
s_iterate (jace_task_t *task, void *state)
{
    task_state_t *self = (task_state_t *) state;
    if (!self->requests_read)
        s_read_requests (self, task);
    double change;
    bool converged = false;
    if (self->krylov) {
        if (s_iterate_krylov (self, task, &change, &converged))
            return -1;
    }
    else
    if (self->window) {
        if (s_iterate_tsirm (self, task, &change))
            return -1;
        converged = self->window->converged;
    }
    else {
        s_take_newest (self, task, 0);
        multisplit_step_t step;
        if (s_iterate_block (self, task, &step))
            return -1;
        change = step.change;
        //  The residual of our rows at the iterate we started from: when
        //  every task's is under the tolerance times its rows' ||b||, the
        //  job's is under the tolerance (exactly so in sync mode, where
        //  the values are one iteration's; the spawner verifies anyway).
        //  Waiting for ten small changes ended jobs 8-11 times under it.
        converged = step.residual <= self->residual_bound;
    }
    jace_task_set_change (task, change);
    //  What the rows cost this time: a rebalance weighs the node's speed
    jace_task_set_work (task, multisplit_take_work (self->split));
    if (converged)
        jace_task_set_converged (task);
    for (int32_t t = 0; t < self->tasks; t++) {
        int32_t count = self->requested_count [t];
        if (count == 0)
            continue;
        multisplit_gather (self->split, self->requested [t], count,
                           self->outgoing);
        jace_task_send (task, t, self->outgoing, (size_t) count, 0);
    }
    return 0;
}

static const double *
s_solution (void *state, int64_t *first, size_t *count)
{
    task_state_t *self = (task_state_t *) state;
    *first = multisplit_row_begin (self->split);
    *count = (size_t) (multisplit_row_end (self->split)
                       - multisplit_row_begin (self->split));
    return multisplit_solution (self->split);
}

//  TSIRM over cycles: the method's checkpoint, the cycles the window had
//  ended when the checkpointed cycle began, and the window's columns so
//  far (its base and those cycles' iterates).  A replacement replays from
//  the other tasks' logs, which hold what its predecessor sent: it must
//  compute exactly what that one did, its rows of the least-squares step
//  included, or its sums differ from theirs and the tasks part ways.
static const void *
s_checkpoint_tsirm_krylov (task_state_t *self, size_t *size)
{
    window_t *window = self->window;
    size_t length = outer_krylov_saved_length (self->krylov);
    size_t rows = (size_t) window->rows;
    if (!window->saved)
        window->saved = (double *) zmalloc ((length + 1 + rows
            * ((size_t) window->options.size + 1)) * sizeof (double));
    memcpy (window->saved, outer_krylov_save (self->krylov),
            length * sizeof (double));
    //  Between windows (after a step) the next one's base is the iterate
    int32_t cycles = window->open ? window->cycles : 0;
    const double *columns = window->open ? window->columns
                                         : multisplit_solution (self->split);
    window->saved [length] = (double) cycles;
    memcpy (window->saved + length + 1, columns,
            rows * ((size_t) cycles + 1) * sizeof (double));
    *size = (length + 1 + rows * ((size_t) cycles + 1)) * sizeof (double);
    return window->saved;
}

//  TSIRM over cycles: its checkpoint, or a rebalance's bare iterate (a
//  window then starts with the next cycle).  Returns 0, or -1 with a
//  reason.
static int
s_restore_tsirm_krylov (task_state_t *self, const double *saved,
                        size_t count, char *reason, size_t reason_size)
{
    window_t *window = self->window;
    size_t length = outer_krylov_saved_length (self->krylov);
    size_t rows = (size_t) window->rows;
    if (count == rows) {
        if (outer_krylov_restore (self->krylov, saved, count, reason,
                                  reason_size))
            return -1;
        window->open = false;
        window->cycles = 0;
        return 0;
    }
    double cycles = count > length ? saved [length] : -1;
    if (!(cycles >= 0 && cycles < window->options.size
          && cycles == floor (cycles))
    ||  count != length + 1 + rows * ((size_t) cycles + 1)) {
        snprintf (reason, reason_size, "TSIRM checkpoint has %zu values, "
                  "not an iterate of %zu and a window of %d cycles at most",
                  count, rows, window->options.size);
        return -1;
    }
    const double *columns = saved + length + 1;
    for (size_t i = 0; i < rows * ((size_t) cycles + 1); i++)
        if (!isfinite (columns [i])) {
            snprintf (reason, reason_size, "TSIRM checkpoint holds a value "
                      "that is not finite in its window");
            return -1;
        }
    if (outer_krylov_restore (self->krylov, saved, length, reason,
                              reason_size))
        return -1;
    memcpy (window->columns, columns,
            rows * ((size_t) cycles + 1) * sizeof (double));
    window->open = true;
    window->cycles = (int32_t) cycles;
    if (cycles > 0)
        zsys_notice ("task %d: its TSIRM window goes on after %d of its %d "
                     "Krylov cycles", self->rank, window->cycles,
                     window->options.size);
    return 0;
}

//  A checkpoint is the core iterate: the overlap and the neighbours'
//  values come back with the next messages.
static const void *
s_checkpoint (void *state, size_t *size)
{
    task_state_t *self = (task_state_t *) state;
    if (self->krylov && self->window)
        return s_checkpoint_tsirm_krylov (self, size);
    if (self->krylov) {
        *size = outer_krylov_saved_length (self->krylov) * sizeof (double);
        return outer_krylov_save (self->krylov);
    }
    *size = (size_t) (multisplit_row_end (self->split)
                      - multisplit_row_begin (self->split)) * sizeof (double);
    return multisplit_solution (self->split);
}

static int
s_restore (jace_task_t *task, void *state, const void *bytes, size_t size,
           char *reason, size_t reason_size)
{
    task_state_t *self = (task_state_t *) state;
    if (self->krylov) {
        //  Its own checkpoint, or a rebalance's bare iterate
        if (size % sizeof (double)) {
            snprintf (reason, reason_size, "checkpoint of task %" PRId64
                      " has %zu bytes, not whole doubles",
                      jace_task_rank (task), size);
            return -1;
        }
        double *saved = (double *) malloc (size + 1);
        assert (saved);
        memcpy (saved, bytes, size);
        int rc = self->window
               ? s_restore_tsirm_krylov (self, saved, size / sizeof (double),
                                         reason, reason_size)
               : outer_krylov_restore (self->krylov, saved,
                                       size / sizeof (double), reason,
                                       reason_size);
        free (saved);
        return rc;
    }
    size_t expected;
    s_checkpoint (state, &expected);
    if (size != expected) {
        snprintf (reason, reason_size, "checkpoint of task %" PRId64 " has "
                  "%zu bytes, its block needs %zu", jace_task_rank (task),
                  size, expected);
        return -1;
    }
    double *x_core = (double *) malloc (size + 1);
    assert (x_core);
    memcpy (x_core, bytes, size);
    multisplit_set_solution (self->split, x_core);
    free (x_core);
    return 0;
}

//  The method that stalled, and what else to try.
static const char *
s_stall_advice (void *raw)
{
    problem_t *problem = (problem_t *) raw;
    //  Over block Jacobi, TSIRM's few inner iterations may make an
    //  iteration that diverges, and restarted GMRES may stagnate, where
    //  Krylov cycles or CG converge: on SuiteSparse's 1138_bus both
    //  stalled after 105-130 s, TSIRM over CG cycles answered in 0.54 s.
    //  The job ends here: checking the matrix's symmetry once is cheap.
    if (problem->spec.tsirm && !problem->spec.tsirm_krylov) {
        snprintf (problem->advice, sizeof problem->advice,
                  "TSIRM does not converge on this matrix; try "
                  "solver/tsirm_inner = %s (job/mode = sync), a larger "
                  "solver/tsirm_size, solver/overlap or a smaller "
                  "solver/inner_tolerance",
                  s_symmetric (problem) ? "cg" : "gmres");
        return problem->advice;
    }
    if (problem->spec.tsirm)
        return "TSIRM does not converge on this matrix; try a larger "
               "solver/tsirm_size";
    if (s_cg (&problem->spec))
        return "CG does not converge on this matrix; try a larger "
               "solver/cg_restart, or solver/outer = gmres";
    if (problem->spec.krylov) {
        snprintf (problem->advice, sizeof problem->advice,
                  "GMRES does not converge on this matrix; try %sa larger "
                  "solver/gmres_restart or solver/gmres_inner_iterations",
                  s_symmetric (problem) ? "solver/outer = cg (the matrix "
                  "is symmetric), " : "");
        return problem->advice;
    }
    return "block Jacobi (multisplitting) does not converge on this matrix; "
           "try solver/outer = gmres, or cg on a symmetric matrix (job/mode "
           "= sync), solver/outer = tsirm or solver/overlap";
}

//  Every key the application reads
static const char *const s_keys [] = {
    "problem/kind", "problem/n", "problem/per_row", "problem/dominance",
    "problem/shift", "problem/seed", "problem/bandwidth", "problem/matrix",
    "problem/rhs", "solver/inner", "solver/inner_tolerance",
    "solver/inner_max_iterations", "solver/overlap", "solver/outer",
    "solver/preconditioner",
    "solver/tsirm_size", "solver/tsirm_max_iterations",
    "solver/tsirm_tolerance", "solver/tsirm_source_wait",
    "solver/tsirm_inner", "solver/gmres_restart",
    "solver/gmres_inner_iterations", "solver/cg_restart", NULL
};

const jace_app_t app_multisplit = {
    .name = "multisplit",
    .load = s_load,
    .shape = s_shape,
    .residual = s_residual,
    .error = s_error,
    .attach = s_attach,
    .unload = s_unload,
    .setup = s_setup,
    .iterate = s_iterate,
    .solution = s_solution,
    .destroy = s_destroy,
    .checkpoint = s_checkpoint,
    .restore = s_restore,
    .describe = s_describe,
    .reads = s_reads,
    .stall_advice = s_stall_advice,
    //  Each iteration solves the local block (to the inner tolerance):
    //  without a newer neighbour vector it would find the same answer.
    .idle_without_news = true,
    .keys = s_keys,
    .residual_meaning = "relative, true ||b - Ax|| / ||b||"
};
