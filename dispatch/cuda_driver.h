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

#define CUDRV_FUNCTIONS(X)                          \
	X(cuInit)                                   \
	X(cuDriverGetVersion)                       \
	X(cuDeviceGetCount)                         \
	X(cuDeviceGet)                              \
	X(cuDeviceGetName)                          \
	X(cuDeviceGetAttribute)                     \
	X(cuDeviceTotalMem)                         \
	X(cuDevicePrimaryCtxRetain)                 \
	X(cuDevicePrimaryCtxRelease)                \
	X(cuCtxSetCurrent)                          \
	X(cuCtxGetCurrent)                          \
	X(cuCtxGetDevice)                           \
	X(cuCtxSynchronize)                         \
	X(cuGetErrorName)                           \
	X(cuGetErrorString)                         \
	X(cuMemAlloc)                               \
	X(cuMemFree)                                \
	X(cuMemGetInfo)                             \
	X(cuMemcpyHtoD)                             \
	X(cuMemcpyDtoH)                             \
	X(cuMemcpyDtoDAsync)                        \
	X(cuMemsetD32Async)                         \
	X(cuMemsetD8Async)                          \
	X(cuModuleLoadData)                         \
	X(cuModuleUnload)                           \
	X(cuModuleGetFunction)                      \
	X(cuFuncGetAttribute)                       \
	X(cuFuncSetAttribute)                       \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
	X(cuLaunchKernel)                           \
	X(cuStreamCreate)                           \
	X(cuStreamDestroy)                          \
	X(cuStreamSynchronize)                      \
	X(cuEventCreate)                            \
	X(cuEventDestroy)                           \
	X(cuEventRecord)                            \
	X(cuEventSynchronize)                       \
	X(cuEventElapsedTime)

/* __typeof__ of the macro-renamed prototype gives the exact versioned type. */
#define CUDRV_MEMBER(name) __typeof__(name) *name;
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
