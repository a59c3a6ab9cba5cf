/* The tuner's own helper kernels (the L2 flush, the GPU comparison, the
 * selftest's row sums, the naive baseline): CUDA source compiled with NVRTC
 * for the GPU at hand and loaded as a module. */
#ifndef AT_TUNER_HELPER_MODULE_H
#define AT_TUNER_HELPER_MODULE_H

#include "common/error.h"
#include "cuda/driver.h"

/* Compiles src (file names it in NVRTC's messages) for sm_<cc> and loads it
 * into *module. `what` names the kernel in errors ("the L2 flush kernel":
 * "... did not compile: <log>", "loading ..."). */
int helper_module_load(const char *src, const char *file, int cc, const char *what,
		       CUmodule *module, at_error *err);

#endif
