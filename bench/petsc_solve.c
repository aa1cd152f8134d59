/*  =========================================================================
    petsc_solve - a Matrix Market system solved by PETSc, the reference of
    bench/bench_petsc.sh

    Every rank reads the whole coordinate file (real or integer, general or
    symmetric) and keeps the rows of its PETSc ownership range in an AIJ
    matrix.  The system is b = A*1 from x0 = 0, solved by whatever KSP and
    PC the command line names (KSPSetFromOptions).  Rank 0 prints one line:

        iterations N solve S total T residual R reason NAME

    solve is KSPSolve's wall time (PC set-up and factorization included),
    total the whole program's (reading and assembly included), residual
    the true ||b - Ax|| / ||b|| recomputed after the solve.

    Built by bench/bench_petsc.sh with mpicc and PETSc's pkg-config flags,
    in a temp folder: never part of the autotools build nor of make check.

        mpirun -n 4 petsc_solve -f A.mtx -ksp_type richardson \
            -pc_type bjacobi -sub_pc_type lu -ksp_rtol 1e-8
    =========================================================================
*/
#include <petscksp.h>
#include <strings.h>
#include <time.h>

//  The entries of one coordinate file, 0-based, both triangles
typedef struct {
    PetscInt n;                 //  Order of the square matrix
    PetscInt count;             //  Entries stored
    PetscInt *rows;             //  Row of each entry
    PetscInt *cols;             //  Column of each entry
    PetscScalar *values;        //  Value of each entry
} entries_t;

static double
s_now (void)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (double) now.tv_sec + 1e-9 * (double) now.tv_nsec;
}

//  Read the banner and size line; sets the order, the announced entry
//  count and whether only the lower triangle is stored.
static PetscErrorCode
s_read_header (FILE *file, const char *path, PetscInt *n_p, long *nnz_p,
               PetscBool *symmetric_p)
{
    char line [1024], object [64], format [64], field [64], symmetry [64];
    PetscFunctionBeginUser;
    if (!fgets (line, sizeof line, file)
    ||  sscanf (line, "%%%%MatrixMarket %63s %63s %63s %63s", object, format,
                field, symmetry) != 4
    ||  strcasecmp (object, "matrix") || strcasecmp (format, "coordinate")
    ||  (strcasecmp (field, "real") && strcasecmp (field, "integer"))
    ||  (strcasecmp (symmetry, "general") && strcasecmp (symmetry,
                                                         "symmetric")))
        SETERRQ (PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: expected "
                 "a coordinate real|integer general|symmetric matrix", path);
    *symmetric_p = strcasecmp (symmetry, "symmetric") == 0;
    do {
        if (!fgets (line, sizeof line, file))
            SETERRQ (PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                     "%s: missing size line", path);
    } while (line [0] == '%' || line [0] == '\n');
    long rows, cols;
    if (sscanf (line, "%ld %ld %ld", &rows, &cols, nnz_p) != 3
    ||  rows != cols || rows < 1 || *nnz_p < 0 || rows > PETSC_MAX_INT)
        SETERRQ (PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad size "
                 "line, expected 'N N ENTRIES' of a square matrix", path);
    *n_p = (PetscInt) rows;
    PetscFunctionReturn (0);
}

//  Read every entry; a symmetric file's off-diagonal entries are mirrored.
static PetscErrorCode
s_read_entries (const char *path, entries_t *self)
{
    PetscFunctionBeginUser;
    FILE *file = fopen (path, "r");
    if (!file)
        SETERRQ (PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open",
                 path);
    long nnz;
    PetscBool symmetric;
    PetscCall (s_read_header (file, path, &self->n, &nnz, &symmetric));
    long capacity = symmetric ? 2 * nnz : nnz;
    PetscCall (PetscMalloc3 (capacity + 1, &self->rows, capacity + 1,
                             &self->cols, capacity + 1, &self->values));
    self->count = 0;
    for (long k = 0; k < nnz; k++) {
        long row, col;
        double value;
        if (fscanf (file, "%ld %ld %lf", &row, &col, &value) != 3
        ||  row < 1 || row > self->n || col < 1 || col > self->n)
            SETERRQ (PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: bad "
                     "or missing entry %ld of %ld", path, k + 1, nnz);
        self->rows [self->count] = (PetscInt) row - 1;
        self->cols [self->count] = (PetscInt) col - 1;
        self->values [self->count++] = value;
        if (symmetric && row != col) {
            self->rows [self->count] = (PetscInt) col - 1;
            self->cols [self->count] = (PetscInt) row - 1;
            self->values [self->count++] = value;
        }
    }
    fclose (file);
    PetscFunctionReturn (0);
}

//  The rows [rstart, rend) of the entries as a preallocated AIJ matrix.
static PetscErrorCode
s_assemble (const entries_t *entries, Mat *A_p)
{
    PetscFunctionBeginUser;
    PetscInt local = PETSC_DECIDE, n = entries->n;
    PetscCall (PetscSplitOwnership (PETSC_COMM_WORLD, &local, &n));
    PetscInt rend;
    PetscCallMPI (MPI_Scan (&local, &rend, 1, MPIU_INT, MPI_SUM,
                            PETSC_COMM_WORLD));
    PetscInt rstart = rend - local;
    PetscInt *diagonal, *off_diagonal;
    PetscCall (PetscCalloc2 (local + 1, &diagonal, local + 1,
                             &off_diagonal));
    for (PetscInt k = 0; k < entries->count; k++) {
        PetscInt row = entries->rows [k], col = entries->cols [k];
        if (row >= rstart && row < rend) {
            if (col >= rstart && col < rend)
                diagonal [row - rstart]++;
            else
                off_diagonal [row - rstart]++;
        }
    }
    //  Duplicates are summed, so the counts may only overestimate.
    for (PetscInt i = 0; i < local; i++) {
        diagonal [i] = PetscMin (diagonal [i], local);
        off_diagonal [i] = PetscMin (off_diagonal [i], n - local);
    }
    PetscCall (MatCreateAIJ (PETSC_COMM_WORLD, local, local, n, n, 0,
                             diagonal, 0, off_diagonal, A_p));
    PetscCall (PetscFree2 (diagonal, off_diagonal));
    for (PetscInt k = 0; k < entries->count; k++)
        if (entries->rows [k] >= rstart && entries->rows [k] < rend)
            PetscCall (MatSetValue (*A_p, entries->rows [k],
                                    entries->cols [k], entries->values [k],
                                    ADD_VALUES));
    PetscCall (MatAssemblyBegin (*A_p, MAT_FINAL_ASSEMBLY));
    PetscCall (MatAssemblyEnd (*A_p, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn (0);
}

//  Solve Ax = b from x = 0 with the command line's KSP; time the solve and
//  print the true relative residual.
static PetscErrorCode
s_solve (Mat A, double started)
{
    PetscFunctionBeginUser;
    Vec x, b, r;
    PetscCall (MatCreateVecs (A, &x, &b));
    PetscCall (VecDuplicate (b, &r));
    PetscCall (VecSet (x, 1.0));
    PetscCall (MatMult (A, x, b));
    PetscCall (VecSet (x, 0.0));
    KSP ksp;
    PetscCall (KSPCreate (PETSC_COMM_WORLD, &ksp));
    PetscCall (KSPSetOperators (ksp, A, A));
    PetscCall (KSPSetFromOptions (ksp));
    PetscCallMPI (MPI_Barrier (PETSC_COMM_WORLD));
    double solve_started = MPI_Wtime ();
    PetscCall (KSPSolve (ksp, b, x));
    PetscCallMPI (MPI_Barrier (PETSC_COMM_WORLD));
    double solve_seconds = MPI_Wtime () - solve_started;

    PetscReal r_norm, b_norm;
    PetscCall (MatMult (A, x, r));
    PetscCall (VecAYPX (r, -1.0, b));
    PetscCall (VecNorm (r, NORM_2, &r_norm));
    PetscCall (VecNorm (b, NORM_2, &b_norm));
    PetscInt iterations;
    KSPConvergedReason reason;
    PetscCall (KSPGetIterationNumber (ksp, &iterations));
    PetscCall (KSPGetConvergedReason (ksp, &reason));
    PetscCall (PetscPrintf (PETSC_COMM_WORLD, "iterations %" PetscInt_FMT
                            " solve %.4f total %.4f residual %.3e reason %s\n",
                            iterations, solve_seconds, s_now () - started,
                            (double) (r_norm / b_norm),
                            KSPConvergedReasons [reason]));
    PetscCall (KSPDestroy (&ksp));
    PetscCall (VecDestroy (&x));
    PetscCall (VecDestroy (&b));
    PetscCall (VecDestroy (&r));
    PetscFunctionReturn (0);
}

int
main (int argc, char **argv)
{
    double started = s_now ();
    PetscCall (PetscInitialize (&argc, &argv, NULL, NULL));
    char path [PETSC_MAX_PATH_LEN];
    PetscBool given;
    PetscCall (PetscOptionsGetString (NULL, NULL, "-f", path, sizeof path,
                                      &given));
    if (!given)
        SETERRQ (PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "usage: "
                 "petsc_solve -f MATRIX.mtx [-ksp_type ...] [-pc_type ...]");
    entries_t entries;
    PetscCall (s_read_entries (path, &entries));
    Mat A;
    PetscCall (s_assemble (&entries, &A));
    PetscCall (PetscFree3 (entries.rows, entries.cols, entries.values));
    PetscCall (s_solve (A, started));
    PetscCall (MatDestroy (&A));
    PetscCall (PetscFinalize ());
    return 0;
}
