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

//  Version of the application interface: the layout of jace_app_t and
//  the meaning of its callbacks.  An application plugin sets .abi to it;
//  a daemon or spawner loads only plugins of its own ABI.  Raised with
//  every incompatible change of jace_app_t or of the task API.
#define JACE_APP_ABI 3

//  The one symbol an application plugin exports (docs/WRITING-APPS.md).
//  dlsym finds it by this name: keep the C linkage.
#define JACE_APP_SYMBOL "jace_app"

#include "jace_msg.h"
#include "jace_task.h"

#ifdef __cplusplus
extern "C" {
#endif

//  What an application plugin defines: its application, .abi set to
//  JACE_APP_ABI.
const jace_app_t *
    jace_app (void);

#ifdef __cplusplus
}
#endif

#endif
