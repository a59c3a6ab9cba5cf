/* Opening the tuner's GPU: see device.h. */
#include "tuner/device.h"

#include <string.h>

static int attr(const gpu_device *gpu, CUdevice_attribute a, int *out, at_error *err)
{
	CU_TRY(err, cudrv.cuDeviceGetAttribute(out, a, gpu->dev));
	return 0;
}

int gpu_open(int ordinal, gpu_device *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	if (cudrv_load(err))
		return -1;
	CUresult rc = cudrv.cuInit(0);
	if (rc == CUDA_ERROR_NO_DEVICE || rc == CUDA_ERROR_NOT_FOUND)
		return at_error_set(err, "no NVIDIA GPU found (the driver is installed but sees none)");
	if (rc != CUDA_SUCCESS)
		return cudrv_error(err, rc, "cuInit (no usable NVIDIA driver or GPU)");
	int count = 0;
	CU_TRY(err, cudrv.cuDeviceGetCount(&count));
	if (count == 0)
		return at_error_set(err, "no NVIDIA GPU found");
	if (ordinal < 0 || ordinal >= count)
		return at_error_set(err, "GPU %d does not exist (this machine has %d)", ordinal,
				    count);
	CU_TRY(err, cudrv.cuDeviceGet(&out->dev, ordinal));
	CU_TRY(err, cudrv.cuDeviceGetName(out->info.name, sizeof out->info.name, out->dev));
	size_t mem = 0;
	CU_TRY(err, cudrv.cuDeviceTotalMem(&mem, out->dev));
	out->info.mem_bytes = (long long)mem;
	if (attr(out, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out->info.cc_major, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out->info.cc_minor, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &out->info.sm_count, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &out->max_smem, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &out->regs_per_sm, err) ||
	    attr(out, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &out->l2_bytes, err))
		return -1;
	out->cc = out->info.cc_major * 10 + out->info.cc_minor;
	CU_TRY(err, cudrv.cuDriverGetVersion(&out->driver_version));
	CU_TRY(err, cudrv.cuDevicePrimaryCtxRetain(&out->ctx, out->dev));
	rc = cudrv.cuCtxSetCurrent(out->ctx);
	if (rc != CUDA_SUCCESS) {
		cudrv.cuDevicePrimaryCtxRelease(out->dev);
		out->ctx = NULL;
		return cudrv_error(err, rc, "cuCtxSetCurrent");
	}
	return 0;
}

void gpu_close(gpu_device *gpu)
{
	if (gpu->ctx) {
		cudrv.cuCtxSetCurrent(NULL);
		cudrv.cuDevicePrimaryCtxRelease(gpu->dev);
		gpu->ctx = NULL;
	}
}

tr_env gpu_shape_env(const gpu_device *gpu, long long M, long long N, size_t elem_bytes)
{
	return (tr_env){
		.M = M, .N = N, .elem_bytes = (long long)elem_bytes,
		.sm_count = gpu->info.sm_count, .cc = gpu->cc,
		.max_threads = gpu->max_threads, .max_smem = gpu->max_smem,
		.regs_per_sm = gpu->regs_per_sm,
	};
}

tr_env nominal_shape_env(int cc, long long M, long long N, size_t elem_bytes)
{
	return (tr_env){
		.M = M, .N = N, .elem_bytes = (long long)elem_bytes,
		.sm_count = 132, .cc = cc, .max_threads = 1024,
		.max_smem = 227 * 1024, .regs_per_sm = 65536,
	};
}
