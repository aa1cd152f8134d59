/*  =========================================================================
    grid_revive - crashed daemons of a local grid come back

    A volatile grid loses nodes and gains others.  `jace-grid kill` makes
    the losses; revive makes the gains: every recorded daemon found dead is
    started again with the command line it was started with, under a new
    id (NAME+1, NAME+2, ...), so that it joins as the fresh node it is.  A
    job that saw the old id die has fenced it; a new id is free to take.
    =========================================================================
*/
#ifndef JACE_GRID_REVIVE_H_INCLUDED
#define JACE_GRID_REVIVE_H_INCLUDED

#include "grid_run.h"

//  Save daemon `name`'s command line (argv, NULL terminated) in
//  DIR/argv/NAME.  Returns 0, or -1 when it cannot be written or an
//  argument holds a newline.
int
    grid_revive_save_argv (grid_run_t *run, const char *name,
                           char *const argv []);

//  Start again every recorded daemon that is dead, each under its next
//  id, logging to DIR/logs/NEWNAME.log; update and save DIR/pids.  Prints
//  "OLD NEW" per revived daemon on stdout.  Returns the number revived, or
//  -1 (with a reason on stderr) when one could not be.
int
    grid_revive_dead (grid_run_t *run);

#endif
