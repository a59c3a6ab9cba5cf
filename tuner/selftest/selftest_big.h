/* The selftest's 2^31 case on the GPU (selftest_big.c): M x N just above
 * 2^31 elements, its buffers kept on the GPU, a few rows checked on the
 * host and every row's sum on the GPU. */
#ifndef AT_TUNER_SELFTEST_BIG_H
#define AT_TUNER_SELFTEST_BIG_H

#include "tuner/selftest/selftest_launch.h"

/* Runs the jobs of a 2^31 shape (selftest_big.c). */
int st_gpu_run_big(st_gpu *g, const st_shape *s, at_dtype dt, const st_job *jobs,
		   kernel_entry **entries, size_t n, st_outcome *out, at_error *err);

#endif
