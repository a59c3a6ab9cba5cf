/* Comparing a GPU result with the CPU reference on the GPU: the reference
 * (computed on the CPU in double, each value rounded to float: half the
 * bytes to upload, within 2^-24 of the double) is uploaded once per shape,
 * and each variant's check is one kernel that sums the squared error and
 * the squared reference in double and counts NaN mismatches, instead of
 * copying the whole output back and comparing on the host (hundreds of MB
 * a variant at large shapes). Same definition as ref_compare
 * (tuner/check/reference.h). */
#ifndef AT_TUNER_GPU_COMPARE_H
#define AT_TUNER_GPU_COMPARE_H

#include "common/dtype.h"
#include "common/error.h"
#include "cuda/driver.h"
#include "tuner/check/reference.h"

typedef struct gpu_compare {
	CUmodule module;
	CUfunction fn[AT_DTYPE_COUNT];
	CUdeviceptr sums; /* diff2, norm2 (double), mismatches, first_bad (u64) */
} gpu_compare;

int gpu_compare_open(gpu_compare *g, int cc, at_error *err);
void gpu_compare_close(gpu_compare *g);

/* Compares y (dtype dt, M x N, row stride ldy) with ref (M x N floats on
 * the device, ref_op_check_data_f32's) on stream, and waits for the
 * answer. */
int gpu_compare_run(gpu_compare *g, at_dtype dt, CUdeviceptr y, CUdeviceptr ref, long long M,
		    long long N, long long ldy, CUstream stream, check_result *out, at_error *err);

#endif
