/*  =========================================================================
    jace.h - Jace runtime: the public header for application writers

    Include this one header to write an application for Jace: the task API
    (jace_task.h: the callbacks an application implements and the calls it
    makes during an iteration) and the message codec (jace_msg.h) for tools
    that speak the wire protocol.  Link with `pkg-config --libs jace`.
    =========================================================================
*/
#ifndef JACE_H_INCLUDED
#define JACE_H_INCLUDED

#define JACE_VERSION_MAJOR 0
#define JACE_VERSION_MINOR 1
#define JACE_VERSION_PATCH 0

#include "jace_msg.h"
#include "jace_task.h"

#endif
