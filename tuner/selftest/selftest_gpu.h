/* The selftest's runner on a GPU: compiles the jobs of a shape through the
 * kernel cache, and runs each variant once on fresh buffer images: the
 * output image (and for out-of-place shapes the input image, which must
 * come back unchanged) is copied back whole and checked on the host
 * (selftest_cases.h). The 2^31 case goes to selftest_big.h. The GPU itself
 * (opening it, launching a variant) is selftest_launch.h. */
#ifndef AT_TUNER_SELFTEST_GPU_H
#define AT_TUNER_SELFTEST_GPU_H

#include "tuner/selftest/selftest_launch.h"

/* The runner interface over g. */
st_runner st_gpu_runner(st_gpu *g);

#endif
