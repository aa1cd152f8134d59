/*  =========================================================================
    collectives.h - umbrella header of the planning library's collective
    half

    Pure planning code (no sockets, no logging): the LG total exchange and
    the direct all-to-all, GGP/OGGP message scheduling with the eta_o
    estimator, and the load-balanced scatter.  Plans come out as plain
    data; executors over the transport come in a later issue.  Each .c
    file of collectives/ includes only this header.
    =========================================================================
*/
#ifndef JACE_COLLECTIVES_H_INCLUDED
#define JACE_COLLECTIVES_H_INCLUDED

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef streq
#   define streq(first, second) (strcmp ((first), (second)) == 0)
#endif

#include "lg.h"
#include "ggp.h"
#include "eta.h"
#include "scatter.h"

#endif
