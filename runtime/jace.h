/*  =========================================================================
    jace.h - Jace runtime: the public header for application writers

    Placeholder umbrella; the runtime classes are being written.
    =========================================================================
*/
#ifndef JACE_H_INCLUDED
#define JACE_H_INCLUDED
#endif
