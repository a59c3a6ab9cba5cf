/* The tool's version, stored with every sweep: the library's (the public
 * header's ATD_VERSION_*), the one number that the CLI, libautotune-dispatch,
 * its .pc (the Makefile reads the header) and the Python package (its build
 * backend reads it too) all say. */
#ifndef AT_TUNER_VERSION_H
#define AT_TUNER_VERSION_H

#include "include/autotune/dispatch.h"

#define AUTOTUNE_VERSION ATD_VERSION_STRING

#endif
