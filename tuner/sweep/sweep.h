/* `autotune sweep`: tune every shape of a config on the GPU and store the
 * results, or (compile_only) compile every variant without a GPU. */
#ifndef AT_TUNER_SWEEP_H
#define AT_TUNER_SWEEP_H

#include "common/error.h"
#include "tuner/sweep/sweep_options.h"

/* Returns 0 on success, -1 with err set, or 128 + the signal when Ctrl-C
 * (or SIGTERM) interrupted it (interrupt.h: the kernels compiled so far are
 * kept, and it says so). Prints the final table on stdout and progress on
 * stderr. */
int sweep_run(const sweep_options *o, at_error *err);

/* --compile-only: returns 0 when every variant compiled, 1 when some did
 * not (each failure's log is printed), -1 on an error, 128 + the signal
 * when interrupted (as sweep_run). */
int sweep_compile_only(const sweep_options *o, at_error *err);

#endif
