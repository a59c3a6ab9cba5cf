/* The driver and the contexts: libcuda loaded once per process, the
 * calling thread's context, and the GPU behind each context, read once
 * (the handle's ctxs, guarded by slow). */
#ifndef AT_DISPATCH_CONTEXT_H
#define AT_DISPATCH_CONTEXT_H

#include "common/dtype.h"
#include "cuda/driver.h"
#include "dispatch/policy/derive.h" /* atdi_env */
#include "include/autotune/dispatch.h"

/* The GPU behind a context, read once per context. */
typedef struct atdi_ctx_info {
	CUcontext ctx;
	CUdevice dev;
	int arch; /* cc_major * 10 + cc_minor, as kernels.arch */
	int max_threads, max_smem, regs_per_sm; /* for the manifests' rules */
	char name[256];
	atd_gpu gpu; /* gpu.name points to name */
} atdi_ctx_info;

/* Loads libcuda and calls cuInit, once per process. ATD_OK or
 * ATD_ERR_NO_DRIVER (message set). */
atd_status atdi_driver(atd_handle *h);

/* The calling thread's context: ATD_OK, ATD_ERR_NO_CONTEXT or ATD_ERR_CUDA. */
atd_status atdi_current(atd_handle *h, CUcontext *ctx);

/* The GPU of ctx, the current context, read on first use. With slow held. */
atd_status atdi_ctx_info_get(atd_handle *h, CUcontext ctx, const atdi_ctx_info **out);

/* The shape variables of (M, N, dtype) on ci's GPU. */
atdi_env atdi_ctx_env(const atdi_ctx_info *ci, at_dtype dtype, long long M, long long N);

#endif
