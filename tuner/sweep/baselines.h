/* Baselines timed beside the variants of every shape, stored as baseline
 * rows (never winners) so that reports compare with something real:
 *   naive  the seeds' unfused softmax in five kernels (max, subtract, exp,
 *          sum, divide), intermediates in the element type: 5MN+2M elements
 *          read and 3MN+2M written;
 *   cudnn  cudnnSoftmaxForward (accurate, per instance), when libcudnn can be
 *          loaded at run time ($AUTOTUNE_CUDNN, the loader's path, the CUDA
 *          toolkit, or PyTorch's wheel);
 *   copy   a 16-byte copy of the same bytes (x to y): not a softmax but the
 *          ceiling at this size, where launch and ramp-up weigh more than in
 *          the sweep's 1 GiB copy. Not checked; timed when the bytes are a
 *          multiple of 16. */
#ifndef AT_TUNER_BASELINES_H
#define AT_TUNER_BASELINES_H

#include "common/dtype.h"
#include "common/error.h"
#include "cuda/driver.h"

typedef struct baselines baselines;

/* Compiles the naive kernels for sm_<cc> and tries to load cuDNN. Failing to
 * find cuDNN is not an error (cudnn_available says so). */
int baselines_open(baselines **out, int cc, at_error *err);
void baselines_close(baselines *b);

int baselines_cudnn_available(const baselines *b);
/* Why cuDNN is not available ("" when it is). */
const char *baselines_cudnn_reason(const baselines *b);

/* A baseline bound to one shape's buffers, launchable by gpu_time. */
typedef struct baseline_run {
	baselines *b;
	at_dtype dtype;
	CUdeviceptr y, x;
	long long M, N;
	CUdeviceptr scratch, row_stats; /* naive intermediates (MN and 2M elements) */
} baseline_run;

/* Allocates the naive baseline's intermediates for a shape. */
int baseline_run_init(baseline_run *r, baselines *b, at_dtype dt, CUdeviceptr y,
		      CUdeviceptr x, long long M, long long N, at_error *err);
void baseline_run_free(baseline_run *r);

/* timed_launch_fn-compatible launchers (arg is a baseline_run). */
int baseline_launch_naive(void *arg, CUstream stream, at_error *err);
int baseline_launch_cudnn(void *arg, CUstream stream, at_error *err);
int baseline_launch_copy(void *arg, CUstream stream, at_error *err);

#endif
