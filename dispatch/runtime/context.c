/* The library's view of the CUDA driver: loading it and cuInit once per
 * process, the calling thread's context, and the identity of each
 * context's GPU (name, compute capability, SM count, memory: the key of the
 * gpus table), read once per context and kept for the handle's life. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/handle.h"

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static atd_status driver_status = ATD_ERR_NO_DRIVER;
static char driver_message[ATDI_MSG_CAP];

static void init_driver(void)
{
	at_error err;
	if (cudrv_load(&err) != 0) {
		snprintf(driver_message, sizeof driver_message, "%.1000s", err.msg);
		return;
	}
	CUresult rc = cudrv.cuInit(0);
	if (rc != CUDA_SUCCESS) {
		cudrv_error(&err, rc, "cuInit");
		snprintf(driver_message, sizeof driver_message,
			 "no usable NVIDIA GPU: the driver is installed but %.900s", err.msg);
		return;
	}
	driver_status = ATD_OK;
}

atd_status atdi_driver(atd_handle *h)
{
	pthread_once(&driver_once, init_driver);
	if (driver_status != ATD_OK)
		return atdi_fail(h, driver_status, "%s", driver_message);
	return ATD_OK;
}

atd_status atdi_current(atd_handle *h, CUcontext *ctx)
{
	CUresult rc = cudrv.cuCtxGetCurrent(ctx);
	if (rc != CUDA_SUCCESS)
		return atdi_cuda_fail(h, ATD_ERR_CUDA, rc, "cuCtxGetCurrent");
	if (!*ctx)
		return atdi_fail(h, ATD_ERR_NO_CONTEXT,
				 "no CUDA context is current on this thread: make one current "
				 "first (cuCtxSetCurrent, or any CUDA runtime call such as cudaSetDevice)");
	return ATD_OK;
}

/* The device of ctx, which is current on this thread. */
static CUresult ctx_device(CUcontext ctx, CUdevice *dev)
{
	(void)ctx;
	return cudrv.cuCtxGetDevice(dev);
}

static atd_status read_identity(atd_handle *h, atdi_ctx_info *ci)
{
	CUresult rc;
	const char *what;
	int major = 0, minor = 0, sms = 0;
	size_t mem = 0;
	if ((rc = ctx_device(ci->ctx, &ci->dev)) != CUDA_SUCCESS)
		what = "cuCtxGetDevice";
	else if ((rc = cudrv.cuDeviceGetName(ci->name, (int)sizeof ci->name, ci->dev)) != CUDA_SUCCESS)
		what = "cuDeviceGetName";
	else if ((rc = cudrv.cuDeviceGetAttribute(
			  &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ci->dev)) != CUDA_SUCCESS ||
		 (rc = cudrv.cuDeviceGetAttribute(
			  &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ci->dev)) != CUDA_SUCCESS ||
		 (rc = cudrv.cuDeviceGetAttribute(
			  &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ci->dev)) != CUDA_SUCCESS ||
		 (rc = cudrv.cuDeviceGetAttribute(&ci->max_threads,
						  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
						  ci->dev)) != CUDA_SUCCESS ||
		 (rc = cudrv.cuDeviceGetAttribute(&ci->max_smem,
						  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
						  ci->dev)) != CUDA_SUCCESS ||
		 (rc = cudrv.cuDeviceGetAttribute(&ci->regs_per_sm,
						  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
						  ci->dev)) != CUDA_SUCCESS)
		what = "cuDeviceGetAttribute";
	else if ((rc = cudrv.cuDeviceTotalMem(&mem, ci->dev)) != CUDA_SUCCESS)
		what = "cuDeviceTotalMem";
	else
		what = NULL;
	if (what)
		return atdi_cuda_fail(h, ATD_ERR_CUDA, rc, what);
	ci->arch = major * 10 + minor;
	ci->gpu.name = ci->name;
	ci->gpu.cc_major = major;
	ci->gpu.cc_minor = minor;
	ci->gpu.sm_count = sms;
	ci->gpu.mem_bytes = (int64_t)mem;
	return ATD_OK;
}

atd_status atdi_ctx_info_get(atd_handle *h, CUcontext ctx, const atdi_ctx_info **out)
{
	for (size_t i = 0; i < h->nctxs; i++) {
		if (h->ctxs[i]->ctx == ctx) {
			*out = h->ctxs[i];
			return ATD_OK;
		}
	}
	if (h->nctxs == h->ctx_cap) {
		size_t cap = h->ctx_cap ? 2 * h->ctx_cap : 4;
		atdi_ctx_info **v = realloc(h->ctxs, cap * sizeof *v);
		if (!v)
			return atdi_fail(h, ATD_ERR_NO_MEMORY, "out of memory");
		h->ctxs = v;
		h->ctx_cap = cap;
	}
	atdi_ctx_info *ci = calloc(1, sizeof *ci);
	if (!ci)
		return atdi_fail(h, ATD_ERR_NO_MEMORY, "out of memory");
	ci->ctx = ctx;
	atd_status s = read_identity(h, ci);
	if (s != ATD_OK) {
		free(ci);
		return s;
	}
	h->ctxs[h->nctxs++] = ci;
	*out = ci;
	return ATD_OK;
}

atdi_env atdi_ctx_env(const atdi_ctx_info *ci, at_dtype dtype, long long M, long long N)
{
	return (atdi_env){ .M = M,
			   .N = N,
			   .elem_bytes = (long long)at_dtype_size(dtype),
			   .sm_count = ci->gpu.sm_count,
			   .cc = ci->arch,
			   .max_threads = ci->max_threads,
			   .max_smem = ci->max_smem,
			   .regs_per_sm = ci->regs_per_sm };
}
