/*  =========================================================================
    tig - the task interaction graph of an AIAC application

    Tasks V_i with a computational cost e_i, and symmetric dependencies
    with a communication amount c_ij (MAHEVE, section 3.1).  d_i is the
    number of dependencies of task i.  A TIG is built edge by edge, or
    from the block rows of a sparse matrix: task i owns a contiguous block
    of rows, e_i is the number of nonzeros of its rows and c_ij the number
    of distinct columns of block j its rows use (the values it needs).
    =========================================================================
*/
#ifndef JACE_TIG_H_INCLUDED
#define JACE_TIG_H_INCLUDED

#include <stddef.h>

typedef struct _tig_t tig_t;

//  Create a graph of count tasks of cost 1 and no dependency
tig_t *
    tig_new (size_t count);

//  Destroy a graph; nullifies the reference.  Safe on NULL.
void
    tig_destroy (tig_t **self_p);

//  Set the computational cost of a task (>= 0)
void
    tig_set_cost (tig_t *self, size_t task, double cost);

//  Add amount to the communication between two distinct tasks (both
//  directions); creates the dependency if needed
void
    tig_add_edge (tig_t *self, size_t first, size_t second, double amount);

//  Number of tasks
size_t
    tig_count (tig_t *self);

//  Computational cost e_i
double
    tig_cost (tig_t *self, size_t task);

//  Number of dependencies d_i
size_t
    tig_degree (tig_t *self, size_t task);

//  index-th dependency of a task
size_t
    tig_neighbour (tig_t *self, size_t task, size_t index);

//  Communication amount of a task's index-th dependency
double
    tig_edge_amount (tig_t *self, size_t task, size_t index);

//  Graph of the block rows of a sparse matrix given in coordinate form
//  (row_index, column_index of nonzeros, 0-based) with rows rows, cut in
//  tasks blocks of contiguous rows.  Returns NULL if tasks is 0 or more
//  than rows, or if an index is out of range.
tig_t *
    tig_new_from_pattern (size_t rows, size_t nonzeros,
                          const size_t *row_index, const size_t *column_index,
                          size_t tasks);

//  Graph of a banded matrix of rows rows and half-bandwidth half_band
//  (every entry |i - j| <= half_band is nonzero), in tasks blocks
tig_t *
    tig_new_banded (size_t rows, size_t half_band, size_t tasks);

//  Graph of a Matrix Market coordinate file.  Returns NULL and writes
//  "PATH:LINE: reason" into error on failure.
tig_t *
    tig_load_matrix_market (const char *path, size_t tasks, char *error,
                            size_t error_size);

#endif
