/*  =========================================================================
    mapping.h - umbrella header of the planning library's mapping half

    Pure planning code (no sockets, no logging): the platform and task
    models, the heterogeneity degree and the AIAC execution-time model,
    MAHEVE and its baselines, and the TAAG topology-aware scheduler.  Each
    .c file of mapping/ includes only this header.
    =========================================================================
*/
#ifndef JACE_MAPPING_H_INCLUDED
#define JACE_MAPPING_H_INCLUDED

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef streq
#   define streq(first, second) (strcmp ((first), (second)) == 0)
#endif

#include "zpl.h"
#include "platform.h"
#include "shared_links.h"
#include "tig.h"
#include "grid.h"
#include "maheve.h"
#include "aiac_qm.h"
#include "fec.h"
#include "taag.h"

#endif
