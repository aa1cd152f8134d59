/*  =========================================================================
    test_solvers_multisplit - partition, dependencies, iteration, driver

    The serial driver runs every task of a partition in one process through
    the same calls a distributed task makes; it must reach the known
    solution (b = A * 1) for 1, 2, 3, 5 and 8 blocks with both inner
    solvers, never report success on a system it cannot solve, and stop on
    one where the iteration diverges.
    =========================================================================
*/
#include "solvers.h"
#include "tap.h"

void openblas_set_num_threads (int);

//  A test system: global matrix and b = A * 1
typedef struct {
    const char *name;           //  For check names
    csr_t *A;                   //  Global matrix
    double *b;                  //  Right-hand side
    bool symmetric;             //  CG applies to its blocks
} test_system_t;

static test_system_t
s_system (const char *name, csr_t *A, bool symmetric)
{
    test_system_t system = { name, A, malloc (A->nrows * sizeof (double)),
                             symmetric };
    problems_rhs_ones_solution (A, system.b);
    return system;
}

static void
s_system_destroy (test_system_t *system)
{
    csr_destroy (&system->A);
    free (system->b);
}

static double
s_error_from_ones (const double *x, int32_t n)
{
    double error = 0.0;
    for (int32_t i = 0; i < n; i++)
        error = fmax (error, fabs (x [i] - 1.0));
    return error;
}

static multisplit_serial_options_t
s_options (int32_t tasks, multisplit_inner_t inner)
{
    multisplit_serial_options_t options = {
        .tasks = tasks, .powers = NULL, .overlap = 0,
        .tolerance = 1e-10, .residual_tolerance = 1e-9,
        .max_iterations = 5000
    };
    multisplit_options_defaults (&options.inner);
    options.inner.inner = inner;
    return options;
}

static void
s_test_partition (void)
{
    int32_t boundaries [9];
    ok (multisplit_partition (10, 3, NULL, boundaries, NULL, 0) == 0
        && boundaries [0] == 0 && boundaries [1] == 3 && boundaries [2] == 7
        && boundaries [3] == 10, "10 rows split equally in 3: 0 3 7 10");
    double powers [3] = { 1.0, 2.0, 1.0 };
    multisplit_partition (100, 3, powers, boundaries, NULL, 0);
    ok (boundaries [1] == 25 && boundaries [2] == 75,
        "powers 1, 2, 1 give blocks of 25, 50, 25 rows");
    double lopsided [3] = { 1.0, 1e-9, 1.0 };
    multisplit_partition (10, 3, lopsided, boundaries, NULL, 0);
    ok (boundaries [1] < boundaries [2] && boundaries [2] < 10,
        "a very slow task still gets a row");
    double greedy [4] = { 1e9, 1.0, 1.0, 1.0 };
    multisplit_partition (5, 4, greedy, boundaries, NULL, 0);
    ok (boundaries [1] == 2 && boundaries [2] == 3 && boundaries [3] == 4,
        "a very fast task leaves a row to each later task");
    char error [128] = "";
    ok (multisplit_partition (2, 3, NULL, boundaries, error, sizeof (error)) == -1
        && strstr (error, "cannot split 2 rows into 3"), "more tasks than rows is refused");
    ok (multisplit_partition (10, 0, NULL, boundaries, error, sizeof (error)) == -1,
        "zero tasks is refused");
    double bad [2] = { 1.0, 0.0 };
    ok (multisplit_partition (10, 2, bad, boundaries, error, sizeof (error)) == -1
        && strstr (error, "power"), "a zero power is refused");
    bad [1] = NAN;
    ok (multisplit_partition (10, 2, bad, boundaries, error, sizeof (error)) == -1,
        "a NaN power is refused");
    int32_t three [4] = { 0, 3, 7, 10 }, begin, end;
    multisplit_extended_range (three, 3, 1, 2, &begin, &end);
    ok (begin == 1 && end == 9, "overlap 2 widens [3, 7) to [1, 9)");
    multisplit_extended_range (three, 3, 0, 5, &begin, &end);
    ok (begin == 0 && end == 8, "overlap is clipped at row 0");
    multisplit_extended_range (three, 3, 2, 5, &begin, &end);
    ok (begin == 2 && end == 10, "overlap is clipped at row n");
}

//  Set up all tasks of a partition of A with the given overlap.
static void
s_setup_tasks (const test_system_t *system, const int32_t *boundaries,
               int32_t tasks, int32_t overlap, multisplit_inner_t inner,
               multisplit_t **states)
{
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    options.inner = inner;
    for (int32_t t = 0; t < tasks; t++) {
        int32_t begin, end;
        multisplit_extended_range (boundaries, tasks, t, overlap, &begin, &end);
        csr_t *rows = csr_row_block (system->A, begin, end);
        states [t] = NULL;
        multisplit_new (rows, system->b + begin, boundaries, tasks, t, overlap,
                        &options, &states [t], NULL, 0);
        csr_destroy (&rows);
    }
}

//  True if the group of task `owner` in state holds exactly `expected`.
static bool
s_group_is (const multisplit_t *state, int32_t owner, const int32_t *expected,
            int32_t count)
{
    return multisplit_dependency_count (state, owner) == count
        && memcmp (multisplit_dependency_indices (state, owner), expected,
                   count * sizeof (int32_t)) == 0;
}

static void
s_test_dependencies (void)
{
    csr_t *A = NULL;
    problems_poisson2d (6, 0, 36, &A, NULL, 0);
    test_system_t system = s_system ("2D Poisson 6x6", A, true);
    int32_t boundaries [4] = { 0, 12, 24, 36 };
    multisplit_t *states [3];
    s_setup_tasks (&system, boundaries, 3, 0, MULTISPLIT_INNER_BANDED_LU, states);
    const int32_t below [6] = { 6, 7, 8, 9, 10, 11 };
    const int32_t above [6] = { 24, 25, 26, 27, 28, 29 };
    ok (s_group_is (states [1], 0, below, 6), "middle task needs rows 6..11 from task 0");
    ok (s_group_is (states [1], 2, above, 6), "middle task needs rows 24..29 from task 2");
    is_int (multisplit_dependency_count (states [1], 1), 0, "a task needs nothing from itself");
    is_int (multisplit_dependency_offset (states [1], 2), 6, "task 2's group follows task 0's in x_ext");
    is_int (multisplit_external_size (states [1]), 12, "x_ext holds both groups");
    is_int (multisplit_neighbour_count (states [1]), 2, "middle task has 2 neighbours");
    is_int (multisplit_neighbour_count (states [0]), 1, "first task has 1 neighbour");
    ok (multisplit_row_begin (states [1]) == 12 && multisplit_row_end (states [1]) == 24,
        "core range is the partition block");

    //  The owner answers a request with its current values.
    double core [12], values [6];
    for (int i = 0; i < 12; i++)
        core [i] = 100.0 + i;
    multisplit_set_solution (states [0], core);
    multisplit_gather (states [0], multisplit_dependency_indices (states [1], 0), 6, values);
    ok (values [0] == 106.0 && values [5] == 111.0, "gather returns the owner's values");
    ok (multisplit_check_request (states [0], multisplit_dependency_indices (states [1], 0), 6) == 0,
        "a neighbour's request inside the core passes the check");
    ok (multisplit_check_request (states [0], multisplit_dependency_indices (states [1], 2), 6) == -1,
        "a request for another task's rows fails the check");
    ok (memcmp (multisplit_solution (states [0]), core, sizeof (core)) == 0,
        "set_solution and solution round-trip");
    for (int t = 0; t < 3; t++)
        multisplit_destroy (&states [t]);

    s_setup_tasks (&system, boundaries, 3, 2, MULTISPLIT_INNER_BANDED_LU, states);
    const int32_t below_overlap [8] = { 4, 5, 6, 7, 8, 9, 10, 11 };
    const int32_t above_overlap [8] = { 24, 25, 26, 27, 28, 29, 30, 31 };
    ok (s_group_is (states [1], 0, below_overlap, 8),
        "with overlap 2, task 0 also supplies the overlap rows the core touches");
    ok (s_group_is (states [1], 2, above_overlap, 8),
        "with overlap 2, task 2's group covers the wider reach");
    for (int t = 0; t < 3; t++)
        multisplit_destroy (&states [t]);
    s_system_destroy (&system);
}

//  Fill each task's x_ext from a global vector.
static void
s_fill (multisplit_t *state, int32_t tasks, const double *x, double *x_ext)
{
    for (int32_t owner = 0; owner < tasks; owner++) {
        const int32_t *indices = multisplit_dependency_indices (state, owner);
        double *values = x_ext + multisplit_dependency_offset (state, owner);
        for (int32_t k = 0; k < multisplit_dependency_count (state, owner); k++)
            values [k] = x [indices [k]];
    }
}

static void
s_test_residual_and_step (void)
{
    csr_t *A = NULL;
    problems_random_dominant (300, 5, 1.5, 4, 0, 300, &A, NULL, 0);
    test_system_t system = s_system ("random", A, false);
    double *x = malloc (300 * sizeof (double)), *r = malloc (300 * sizeof (double));
    for (int i = 0; i < 300; i++)
        x [i] = sin (i);
    csr_residual (A, system.b, x, r);
    double global = 0.0;
    for (int i = 0; i < 300; i++)
        global += r [i] * r [i];
    for (int32_t overlap = 0; overlap <= 7; overlap += 7) {
        int32_t boundaries [6];
        multisplit_partition (300, 5, NULL, boundaries, NULL, 0);
        multisplit_t *states [5];
        s_setup_tasks (&system, boundaries, 5, overlap, MULTISPLIT_INNER_BANDED_LU, states);
        double shares = 0.0;
        for (int t = 0; t < 5; t++) {
            double *x_ext = malloc ((multisplit_external_size (states [t]) + 1) * sizeof (double));
            multisplit_set_solution (states [t], x + boundaries [t]);
            s_fill (states [t], 5, x, x_ext);
            multisplit_residual (states [t], x_ext, r);
            for (int i = 0; i < boundaries [t + 1] - boundaries [t]; i++)
                shares += r [i] * r [i];
            free (x_ext);
        }
        is_double (shares, global, 1e-9 * global, overlap
                   ? "residual shares with overlap add up to the true residual"
                   : "residual shares add up to the true residual");
        for (int t = 0; t < 5; t++)
            multisplit_destroy (&states [t]);
    }
    //  A step reports its rows' residual at the iterate it started from:
    //  the shares of the true residual, with either inner solver.
    for (int inner = 0; inner < 2; inner++) {
        int32_t boundaries [6];
        multisplit_partition (300, 5, NULL, boundaries, NULL, 0);
        multisplit_t *states [5];
        s_setup_tasks (&system, boundaries, 5, 0, inner
                       ? MULTISPLIT_INNER_KRYLOV : MULTISPLIT_INNER_BANDED_LU,
                       states);
        double shares = 0.0;
        for (int t = 0; t < 5; t++) {
            double *x_ext = malloc ((multisplit_external_size (states [t]) + 1) * sizeof (double));
            multisplit_set_solution (states [t], x + boundaries [t]);
            s_fill (states [t], 5, x, x_ext);
            multisplit_step_t step;
            multisplit_iterate (states [t], x_ext, &step);
            shares += step.residual * step.residual;
            free (x_ext);
            multisplit_destroy (&states [t]);
        }
        is_double (shares, global, 1e-9 * global, inner
                   ? "Krylov steps' starting residuals add up to the true one"
                   : "LU steps' starting residuals add up to the true one");
    }
    //  Given the exact external values, one LU step gives the exact block.
    for (int i = 0; i < 300; i++)
        x [i] = 1.0;
    int32_t boundaries [4];
    multisplit_partition (300, 3, NULL, boundaries, NULL, 0);
    multisplit_t *states [3];
    s_setup_tasks (&system, boundaries, 3, 0, MULTISPLIT_INNER_BANDED_LU, states);
    double *x_ext = malloc (multisplit_external_size (states [1]) * sizeof (double));
    s_fill (states [1], 3, x, x_ext);
    multisplit_step_t step;
    ok (multisplit_iterate (states [1], x_ext, &step) == 0, "an LU step succeeds");
    is_double (s_error_from_ones (multisplit_solution (states [1]), 100), 0.0, 1e-13,
               "with exact neighbours one step gives the exact block");
    is_double (step.change, 1.0, 1e-12, "the change from 0 to 1 is 1");
    is_double (step.relative_change, 1.0, 1e-12, "relative to a solution of ones, also 1");
    is_int (step.inner_iterations, 0, "an LU step reports no inner iterations");
    multisplit_iterate (states [1], x_ext, &step);
    is_double (step.change, 0.0, 1e-13, "a second step changes nothing");
    //  The library's own gather agrees with the groups read one by one.
    int32_t size = multisplit_external_size (states [1]);
    double *gathered = malloc (size * sizeof (double));
    for (int i = 0; i < 300; i++)
        x [i] = i;
    s_fill (states [1], 3, x, x_ext);
    multisplit_external_from_global (states [1], x, gathered);
    ok (size > 0 && memcmp (gathered, x_ext, size * sizeof (double)) == 0,
        "external_from_global fills x_ext group by group");
    free (gathered);
    free (x_ext);
    for (int t = 0; t < 3; t++)
        multisplit_destroy (&states [t]);
    free (x);
    free (r);
    s_system_destroy (&system);
}

//  The work a block reports: a Krylov solve from a cold start touches
//  more entries than one already converged (a rebalance must not take
//  the cheap iterations of a converged block for a fast node), an LU
//  solve the same each time.
static void
s_test_work (void)
{
    csr_t *A = NULL;
    problems_random_dominant (300, 5, 1.5, 4, 0, 300, &A, NULL, 0);
    test_system_t system = s_system ("random", A, false);
    double x [300];
    for (int i = 0; i < 300; i++)
        x [i] = 1.0;
    double work [2][2];
    for (int inner = 0; inner < 2; inner++) {
        int32_t boundaries [4];
        multisplit_partition (300, 3, NULL, boundaries, NULL, 0);
        multisplit_t *states [3];
        s_setup_tasks (&system, boundaries, 3, 0, inner
                       ? MULTISPLIT_INNER_KRYLOV : MULTISPLIT_INNER_BANDED_LU,
                       states);
        double *x_ext = malloc (multisplit_external_size (states [1])
                                * sizeof (double));
        s_fill (states [1], 3, x, x_ext);
        multisplit_take_work (states [1]);
        for (int k = 0; k < 2; k++) {
            multisplit_step_t step;
            multisplit_iterate (states [1], x_ext, &step);
            work [inner][k] = multisplit_take_work (states [1]);
        }
        free (x_ext);
        for (int t = 0; t < 3; t++)
            multisplit_destroy (&states [t]);
    }
    ok (work [0][0] > 0 && work [0][0] == work [0][1],
        "work: an LU step touches the same entries each time");
    ok (work [1][1] > 0 && work [1][1] < work [1][0],
        "work: a converged Krylov step reports less than a cold one");
    diag ("work: LU %.0f, %.0f; Krylov %.0f, %.0f", work [0][0], work [0][1],
          work [1][0], work [1][1]);
    s_system_destroy (&system);
}

static void
s_test_setup_errors (void)
{
    csr_t *A = NULL;
    problems_poisson2d (30, 0, 900, &A, NULL, 0);
    int32_t boundaries [3] = { 0, 450, 900 };
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    options.inner = MULTISPLIT_INNER_BANDED_LU;
    options.banded_lu_max_bytes = 4096;
    csr_t *rows = csr_row_block (A, 0, 450);
    double *b = calloc (450, sizeof (double));
    multisplit_t *state = NULL;
    char error [256] = "";
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state, error,
                        sizeof (error)) == -1 && state == NULL,
        "a block over the LU byte limit fails set-up");
    ok (strstr (error, "banded LU needs") != NULL, "and the reason says why");
    ok (multisplit_new (rows, b, boundaries, 2, 1, 5, &options, &state, error,
                        sizeof (error)) == -1 && strstr (error, "extended range"),
        "rows that do not match the task's range are refused");
    boundaries [1] = 0;
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state, error,
                        sizeof (error)) == -1, "an empty block in the boundaries is refused");
    boundaries [1] = 450;
    boundaries [2] = 901;
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state, error,
                        sizeof (error)) == -1, "boundaries not ending at n are refused");
    free (b);
    csr_destroy (&rows);
    csr_destroy (&A);
}

//  Run the serial driver and check it reaches the ones vector.
static void
s_check_solve (const test_system_t *system, multisplit_serial_options_t options,
               const char *inner_name)
{
    double *x = malloc (system->A->nrows * sizeof (double));
    multisplit_serial_result_t result;
    char name [200], error [256] = "";
    int rc = multisplit_serial_solve (system->A, system->b, &options, x, &result,
                                      error, sizeof (error));
    snprintf (name, sizeof (name), "%s, %d block%s, %s%s: converges to the ones vector",
              system->name, options.tasks, options.tasks > 1 ? "s" : "", inner_name,
              options.overlap ? " with overlap" : "");
    bool passed = ok (rc == 0 && result.status == MULTISPLIT_CONVERGED
                      && result.residual <= options.residual_tolerance
                      && s_error_from_ones (x, system->A->nrows) < 1e-6, name);
    if (!passed)
        diag ("  rc %d (%s) status %s after %d iterations, residual %.3g, error %.3g",
              rc, error, multisplit_status_name (result.status), result.iterations,
              result.residual, s_error_from_ones (x, system->A->nrows));
    free (x);
}

static void
s_test_driver (void)
{
    const int32_t block_counts [5] = { 1, 2, 3, 5, 8 };
    test_system_t systems [5];
    csr_t *A = NULL;
    problems_poisson2d (16, 0, 256, &A, NULL, 0);
    systems [0] = s_system ("2D Poisson 16x16", A, true);
    problems_poisson3d (7, 0, 343, &A, NULL, 0);
    systems [1] = s_system ("3D Poisson 7^3", A, true);
    problems_random_dominant (600, 6, 2.0, 31, 0, 600, &A, NULL, 0);
    systems [2] = s_system ("random dominant n=600", A, false);
    problems_random_spd (400, 4, 1.0, 37, 0, 400, &A, NULL, 0);
    systems [3] = s_system ("random SPD n=400", A, true);
    problems_nascg_t params = { .n = 1600, .bandwidth = 40, .lower_per_row = 5,
                                .diagonal_shift = 1.0, .seed = 41 };
    problems_nascg (&params, 0, params.n, &A, NULL, 0);
    systems [4] = s_system ("banded SPD n=1600", A, true);
    for (int s = 0; s < 5; s++)
        for (int c = 0; c < 5; c++) {
            multisplit_inner_t krylov = systems [s].symmetric
                                      ? MULTISPLIT_INNER_CG : MULTISPLIT_INNER_BICGSTAB;
            s_check_solve (&systems [s], s_options (block_counts [c], MULTISPLIT_INNER_BANDED_LU),
                           "banded LU");
            s_check_solve (&systems [s], s_options (block_counts [c], krylov),
                           systems [s].symmetric ? "CG" : "BiCGStab");
        }

    //  Overlap and a weighted partition converge too, overlap in fewer steps.
    multisplit_serial_options_t options = s_options (5, MULTISPLIT_INNER_BANDED_LU);
    double *x = malloc (256 * sizeof (double));
    multisplit_serial_result_t plain, overlapped;
    multisplit_serial_solve (systems [0].A, systems [0].b, &options, x, &plain, NULL, 0);
    options.overlap = 16;
    s_check_solve (&systems [0], options, "banded LU");
    multisplit_serial_solve (systems [0].A, systems [0].b, &options, x, &overlapped, NULL, 0);
    ok (overlapped.iterations < plain.iterations, "overlap needs fewer outer iterations");
    diag ("2D Poisson, 5 blocks: %d iterations without overlap, %d with 16 rows",
          plain.iterations, overlapped.iterations);
    options = s_options (3, MULTISPLIT_INNER_CG);
    double powers [3] = { 1.0, 0.5, 0.25 };
    options.powers = powers;
    options.overlap = 3;
    s_check_solve (&systems [4], options, "CG, powers 1, 0.5, 0.25,");
    free (x);
    for (int s = 0; s < 5; s++)
        s_system_destroy (&systems [s]);
}

static void
s_test_inner_choice (void)
{
    multisplit_inner_t inner = MULTISPLIT_INNER_CG;
    const char *names [4] = { "krylov", "lu-banded", "cg", "bicgstab" };
    bool round_trip = true;
    for (int k = 0; k < 4; k++)
        round_trip = round_trip && multisplit_inner_parse (names [k], &inner) == 0
                  && strcmp (multisplit_inner_name (inner), names [k]) == 0;
    ok (round_trip, "inner solver names parse and print back");
    ok (multisplit_inner_parse ("gmres", &inner) == -1
        && inner == MULTISPLIT_INNER_BICGSTAB, "an unknown name is refused");
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    is_int (options.inner, MULTISPLIT_INNER_KRYLOV, "the default inner solver is krylov");

    csr_t *A = NULL;
    problems_poisson2d (8, 0, 64, &A, NULL, 0);
    test_system_t poisson = s_system ("Poisson", A, true);
    problems_random_dominant (64, 4, 2.0, 3, 0, 64, &A, NULL, 0);
    test_system_t random = s_system ("random", A, false);
    int32_t boundaries [3] = { 0, 32, 64 };
    multisplit_t *states [2];
    s_setup_tasks (&poisson, boundaries, 2, 0, MULTISPLIT_INNER_KRYLOV, states);
    ok (multisplit_inner (states [0]) == MULTISPLIT_INNER_CG,
        "krylov runs CG on a symmetric block");
    multisplit_destroy (&states [0]);
    multisplit_destroy (&states [1]);
    s_setup_tasks (&random, boundaries, 2, 0, MULTISPLIT_INNER_KRYLOV, states);
    ok (multisplit_inner (states [1]) == MULTISPLIT_INNER_BICGSTAB,
        "krylov runs BiCGStab on a nonsymmetric block");
    multisplit_destroy (&states [0]);
    multisplit_destroy (&states [1]);
    s_check_solve (&random, s_options (2, MULTISPLIT_INNER_KRYLOV), "default krylov");
    s_system_destroy (&poisson);
    s_system_destroy (&random);
}

static void
s_test_failures (void)
{
    //  Dominance 0.3: the block-Jacobi matrix has spectral radius above 1.
    csr_t *A = NULL;
    problems_random_dominant (400, 6, 0.3, 5, 0, 400, &A, NULL, 0);
    test_system_t system = s_system ("divergent", A, false);
    double *x = malloc (400 * sizeof (double));
    multisplit_serial_result_t result;
    multisplit_serial_options_t options = s_options (4, MULTISPLIT_INNER_BANDED_LU);
    options.max_iterations = 1000;
    ok (multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0) == 0
        && result.status == MULTISPLIT_DIVERGED,
        "a divergent iteration is detected as diverged");
    diag ("divergent system: %s after %d iterations, change %.3g",
          multisplit_status_name (result.status), result.iterations, result.change);
    ok (result.iterations < 1000, "divergence stops the run before the cap");
    s_system_destroy (&system);

    //  A tolerance the iteration cannot reach never reports success.
    problems_poisson2d (10, 0, 100, &A, NULL, 0);
    system = s_system ("Poisson", A, true);
    options = s_options (4, MULTISPLIT_INNER_BANDED_LU);
    options.tolerance = 0.0;
    options.residual_tolerance = 1e-30;
    options.max_iterations = 300;
    multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0);
    ok (result.status == MULTISPLIT_MAX_ITERATIONS && result.iterations == 300,
        "an unreachable tolerance ends at the cap, not in success");

    //  Changes under a loose tolerance long before the true residual is
    //  small: the verification keeps the run going, never a false success.
    options = s_options (4, MULTISPLIT_INNER_CG);
    options.tolerance = 0.5;
    options.residual_tolerance = 1e-12;
    options.max_iterations = 20;
    multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0);
    ok (result.status == MULTISPLIT_MAX_ITERATIONS && result.change < 0.5
        && result.residual > 1e-9,
        "small changes with a large true residual are not reported as converged");
    diag ("loose change tolerance: change %.3g, verified residual %.3g",
          result.change, result.residual);

    //  A loose inner tolerance used to leave a warm start untouched and
    //  stall the outer iteration; each inner solve now gains a digit.
    options = s_options (4, MULTISPLIT_INNER_CG);
    options.inner.inner_tolerance = 1e-3;
    options.max_iterations = 400;
    multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0);
    ok (result.status == MULTISPLIT_CONVERGED && result.residual <= 1e-9,
        "a loose inner tolerance still converges to the outer tolerance");
    diag ("inner tolerance 1e-3: %s after %d iterations, residual %.3g",
          multisplit_status_name (result.status), result.iterations,
          result.residual);

    //  One task is the whole system: it is solved to roundoff at once,
    //  not a digit per outer iteration.
    options = s_options (1, MULTISPLIT_INNER_CG);
    options.inner.inner_tolerance = 1e-3;
    multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0);
    ok (result.status == MULTISPLIT_CONVERGED && result.iterations <= 5,
        "a single block coupled to nothing is solved in a few outer iterations");
    diag ("one task: %d outer iterations", result.iterations);
    s_system_destroy (&system);

    //  CG on an indefinite block breaks down, and the driver says so.
    csr_builder_t *builder = csr_builder_new (4, 4, 0);
    for (int i = 0; i < 4; i++)
        csr_builder_add (builder, i, i, i % 2 ? -1.0 : 1.0);
    A = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    system = s_system ("indefinite", A, false);
    options = s_options (1, MULTISPLIT_INNER_CG);
    multisplit_serial_solve (A, system.b, &options, x, &result, NULL, 0);
    ok (result.status == MULTISPLIT_INNER_FAILED, "an inner breakdown is reported");
    char error [128] = "";
    options.tasks = 9;
    ok (multisplit_serial_solve (A, system.b, &options, x, &result, error,
                                 sizeof (error)) == -1 && strstr (error, "cannot split"),
        "a partition the matrix cannot hold fails set-up");
    s_system_destroy (&system);
    free (x);
}

//  ||A_local z - v|| / ||v|| for task 0 of `split` (no overlap)
static double
s_block_residual (const multisplit_t *split, const double *z, const double *v)
{
    int32_t rows = multisplit_row_end (split) - multisplit_row_begin (split);
    double *zeros = calloc ((size_t) multisplit_external_size (split) + 1,
                            sizeof (double));
    double *y = malloc ((size_t) rows * sizeof (double));
    multisplit_multiply (split, z, zeros, y);
    double r = 0, b = 0;
    for (int32_t i = 0; i < rows; i++) {
        r += (y [i] - v [i]) * (y [i] - v [i]);
        b += v [i] * v [i];
    }
    free (zeros);
    free (y);
    return sqrt (r / b);
}

//  The block solve as GMRES's preconditioner: exact with banded LU, and
//  with ILU(0) on a tridiagonal block (its ILU(0) is its LU); the diagonal
//  once; inner iterations that reduce the residual; NaN refused.
static void
s_test_precondition (void)
{
    csr_builder_t *builder = csr_builder_new (60, 60, 180);
    for (int32_t i = 0; i < 60; i++) {
        csr_builder_add (builder, i, i, 2.0);
        if (i > 0)
            csr_builder_add (builder, i, i - 1, -1.0);
        if (i < 59)
            csr_builder_add (builder, i, i + 1, -1.0);
    }
    csr_t *path = csr_builder_build (builder);
    csr_builder_destroy (&builder);
    csr_t *grid = NULL;
    problems_poisson2d (12, 0, 144, &grid, NULL, 0);
    int32_t halves_path [3] = { 0, 30, 60 }, halves_grid [3] = { 0, 72, 144 };
    double v [72], z [72];
    for (int32_t i = 0; i < 72; i++)
        v [i] = sin (0.3 * i) + 1.5;
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    multisplit_t *split = NULL;
    char error [128];

    options.inner = MULTISPLIT_INNER_BANDED_LU;
    csr_t *rows = csr_row_block (grid, 0, 72);
    multisplit_new (rows, v, halves_grid, 2, 0, 0, &options, &split, error,
                    sizeof error);
    ok (multisplit_precondition (split, v, z, 0) == 0
        && s_block_residual (split, z, v) < 1e-12,
        "banded LU: the preconditioner solves the block exactly");
    multisplit_destroy (&split);

    options.inner = MULTISPLIT_INNER_CG;
    options.preconditioner = MULTISPLIT_PC_JACOBI;
    multisplit_new (rows, v, halves_grid, 2, 0, 0, &options, &split, error,
                    sizeof error);
    bool diagonal = multisplit_precondition (split, v, z, 0) == 0;
    for (int32_t i = 0; i < 72; i++)
        diagonal = diagonal && fabs (4 * z [i] - v [i]) < 1e-15 * fabs (v [i]);
    ok (diagonal, "Jacobi, no inner iteration: z = v / diag (A)");
    double before = s_block_residual (split, z, v);
    ok (multisplit_precondition (split, v, z, 5) == 0
        && s_block_residual (split, z, v) < 0.5 * before,
        "5 inner CG iterations halve the block's residual at least");
    v [7] = NAN;
    ok (multisplit_precondition (split, v, z, 0) == -1,
        "a value that is not finite makes it fail");
    v [7] = 1;
    multisplit_destroy (&split);
    csr_destroy (&rows);

    options.preconditioner = MULTISPLIT_PC_ILU0;
    rows = csr_row_block (path, 0, 30);
    multisplit_new (rows, v, halves_path, 2, 0, 0, &options, &split, error,
                    sizeof error);
    ok (multisplit_precondition (split, v, z, 0) == 0
        && s_block_residual (split, z, v) < 1e-12,
        "ILU(0) applied once solves a tridiagonal block exactly");
    multisplit_destroy (&split);
    csr_destroy (&rows);
    csr_destroy (&path);
    csr_destroy (&grid);
}

//  A block with a zero on its diagonal: a CG inner solve breaks down
//  where the pivoting LU does not, and the failure names the row.  The
//  default (krylov) takes BiCGStab for it: CG needs a positive diagonal.
static void
s_test_zero_diagonal (void)
{
    csr_t *A = NULL;
    problems_poisson2d (30, 0, 900, &A, NULL, 0);
    for (int64_t e = A->row_ptr [100]; e < A->row_ptr [101]; e++)
        if (A->col_idx [e] == 100)
            A->values [e] = 0.0;
    int32_t boundaries [3] = { 0, 450, 900 };
    csr_t *rows = csr_row_block (A, 0, 450);
    double *b = malloc (450 * sizeof (double));
    for (int32_t i = 0; i < 450; i++)
        b [i] = 1.0;
    multisplit_options_t options;
    multisplit_options_defaults (&options);
    multisplit_t *state = NULL;
    char text [320] = "";
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state,
                        text, sizeof text) == 0
        && multisplit_inner (state) == MULTISPLIT_INNER_BICGSTAB,
        "the default inner solver of a symmetric block with a zero on its "
        "diagonal is BiCGStab");
    multisplit_destroy (&state);
    options.inner = MULTISPLIT_INNER_CG;
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state,
                        text, sizeof text) == 0, "a zero diagonal entry "
        "still sets up");
    double *x_ext = calloc ((size_t) multisplit_external_size (state) + 1,
                            sizeof (double));
    multisplit_step_t step;
    bool failed = false;
    for (int i = 0; i < 20 && !failed; i++)
        failed = multisplit_iterate (state, x_ext, &step) != 0;
    ok (failed, "a CG block breaks down on it");
    multisplit_explain_failure (state, text, sizeof text);
    diag ("%s", text);
    ok (strstr (text, "rows 1-450") && strstr (text, "row 101 has no "
        "nonzero diagonal entry") && strstr (text, "lu-banded"),
        "the failure names the block, the row (counted from 1) and the "
        "pivoting solver");
    multisplit_destroy (&state);
    options.inner = MULTISPLIT_INNER_BANDED_LU;
    ok (multisplit_new (rows, b, boundaries, 2, 0, 0, &options, &state,
                        text, sizeof text) == 0
        && multisplit_iterate (state, x_ext, &step) == 0,
        "the banded LU solves the same block");
    multisplit_destroy (&state);
    free (x_ext);
    free (b);
    csr_destroy (&rows);
    csr_destroy (&A);
}

int
main (void)
{
    openblas_set_num_threads (1);
    tap_plan (11 + 14 + 10 + 5 + 6 + 50 + 3 + 9 + 5 + 2 + 5);
    s_test_work ();
    s_test_partition ();
    s_test_dependencies ();
    s_test_residual_and_step ();
    s_test_setup_errors ();
    s_test_inner_choice ();
    s_test_driver ();
    s_test_failures ();
    s_test_precondition ();
    s_test_zero_diagonal ();
    return tap_done ();
}
