/* The CUDA driver API, loaded at run time from libcuda.so.1 so that programs
 * and tests start on machines without an NVIDIA driver. Each entry point is
 * resolved with cuGetProcAddress for the CUDA version of our headers, so the
 * right versioned symbol (cuMemAlloc_v2 ...) is used without naming it.
 *
 * Usage: if (cudrv_load(&err) == 0) cudrv.cuInit(0); ...
 * Shared by the tuner and the dispatch library (which must not depend on
 * anything else of the tuner). */
#ifndef AT_CUDA_DRIVER_H
#define AT_CUDA_DRIVER_H

#include <cuda.h>

#include "common/error.h"

/* X(name, version): the CUDA version whose ABI the header's plain name has.
 * Most plain names are macros for the newest version (cuMemAlloc ->
 * cuMemAlloc_v2); a few are not remapped although a newer version with
 * another signature exists (cuCtxSynchronize_v2 takes a context), and
 * asking for those at CUDA_VERSION would return the wrong function. */
#define CUDRV_FUNCTIONS(X) \
	X(cuInit, CUDA_VERSION) \
	X(cuDriverGetVersion, CUDA_VERSION) \
	X(cuDeviceGetCount, CUDA_VERSION) \
	X(cuDeviceGet, CUDA_VERSION) \
	X(cuDeviceGetName, CUDA_VERSION) \
	X(cuDeviceGetAttribute, CUDA_VERSION) \
	X(cuDeviceTotalMem, CUDA_VERSION) \
	X(cuDevicePrimaryCtxRetain, CUDA_VERSION) \
	X(cuDevicePrimaryCtxRelease, CUDA_VERSION) \
	X(cuCtxSetCurrent, CUDA_VERSION) \
	X(cuCtxGetCurrent, CUDA_VERSION) \
	X(cuCtxGetDevice, 12000) \
	X(cuCtxSynchronize, 12000) \
	X(cuGetErrorName, CUDA_VERSION) \
	X(cuGetErrorString, CUDA_VERSION) \
	X(cuMemAlloc, CUDA_VERSION) \
	X(cuMemFree, CUDA_VERSION) \
	X(cuMemGetInfo, CUDA_VERSION) \
	X(cuMemcpyHtoD, CUDA_VERSION) \
	X(cuMemcpyDtoH, CUDA_VERSION) \
	X(cuMemcpyDtoDAsync, CUDA_VERSION) \
	X(cuMemcpyDtoHAsync, CUDA_VERSION) \
	X(cuMemcpyHtoDAsync, CUDA_VERSION) \
	X(cuMemsetD32Async, CUDA_VERSION) \
	X(cuMemsetD8Async, CUDA_VERSION) \
	X(cuModuleLoadData, CUDA_VERSION) \
	X(cuModuleUnload, CUDA_VERSION) \
	X(cuModuleGetFunction, CUDA_VERSION) \
	X(cuFuncGetAttribute, CUDA_VERSION) \
	X(cuFuncGetParamInfo, 12040) \
	X(cuFuncSetAttribute, CUDA_VERSION) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUDA_VERSION) \
	X(cuLaunchKernel, CUDA_VERSION) \
	X(cuLaunchCooperativeKernel, 9000) \
	X(cuLaunchKernelEx, 12000) \
	X(cuOccupancyMaxActiveClusters, 11080) \
	X(cuStreamCreate, CUDA_VERSION) \
	X(cuStreamDestroy, CUDA_VERSION) \
	X(cuStreamSynchronize, CUDA_VERSION) \
	X(cuStreamIsCapturing, CUDA_VERSION) \
	X(cuEventCreate, CUDA_VERSION) \
	X(cuEventDestroy, CUDA_VERSION) \
	X(cuEventRecord, CUDA_VERSION) \
	X(cuEventSynchronize, CUDA_VERSION) \
	X(cuEventElapsedTime, CUDA_VERSION)

/* __typeof__ of the macro-renamed prototype gives the exact versioned type. */
#define CUDRV_MEMBER(name, version) __typeof__(name) *name;
typedef struct cudrv_table {
	CUDRV_FUNCTIONS(CUDRV_MEMBER)
} cudrv_table;
#undef CUDRV_MEMBER

extern cudrv_table cudrv;

/* Loads libcuda.so.1 and resolves every entry point (once; later calls
 * return the first outcome). Returns 0, or -1 with a message saying that no
 * NVIDIA driver was found. Thread-safe. */
int cudrv_load(at_error *err);

/* Formats "what: CUDA_ERROR_X (description)" into err for a failed call.
 * Returns -1. */
int cudrv_error(at_error *err, CUresult rc, const char *what);

/* Calls `call`; on failure sets err with the call's text and returns -1 from
 * the enclosing function. */
#define CU_TRY(err, call)                                        \
	do {                                                     \
		CUresult cu_try_rc_ = (call);                    \
		if (cu_try_rc_ != CUDA_SUCCESS)                  \
			return cudrv_error((err), cu_try_rc_, #call); \
	} while (0)

#endif
