/* cross_entropy's workspace, one layout for the library and the tuner
 * (dispatch/runtime/launch_geometry.h): prepare marks its M row losses
 * pending, so whoever launches prepare allocates them. The tuner's shape
 * is made on a stand-in driver that records what it allocates. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "cuda/driver.h"
#include "dispatch/runtime/launch_geometry.h"
#include "include/autotune/dispatch.h"
#include "tuner/check/reference.h"
#include "tuner/ops/cross_entropy_shape.h"
#include "tuner/ops/ops.h"

#define MAX_ALLOCS 64

static size_t alloc_bytes[MAX_ALLOCS];
static int nallocs;
static char device_memory[MAX_ALLOCS];

static CUresult f_mem_alloc(CUdeviceptr *p, size_t bytes)
{
	cr_assert_lt(nallocs, MAX_ALLOCS);
	alloc_bytes[nallocs] = bytes;
	*p = (CUdeviceptr)(uintptr_t)&device_memory[nallocs++];
	return CUDA_SUCCESS;
}

static CUresult f_mem_free(CUdeviceptr p)
{
	(void)p;
	return CUDA_SUCCESS;
}

static CUresult f_copy_in(CUdeviceptr dst, const void *src, size_t bytes)
{
	(void)dst, (void)src, (void)bytes;
	return CUDA_SUCCESS;
}

static CUresult f_sync(void)
{
	return CUDA_SUCCESS;
}

Test(cross_entropy_workspace, is_a_head_and_a_float_a_row)
{
	cr_assert_eq(ce_workspace_bytes(0), CE_WS_HEAD_BYTES);
	cr_assert_eq(ce_workspace_bytes(1000), 32 + 4000);
	cr_assert_eq(atd_cross_entropy_workspace_size(1000), ce_workspace_bytes(1000),
		     "the library's callers allocate what the layout says");
}

/* The tuner's check launches prepare over the shape's M rows: its
 * workspace must hold their losses too (it had only the head, and
 * prepare's pending marks ran past it into the check's other buffers). */
Test(cross_entropy_workspace, the_tuners_shape_allocates_the_whole_workspace)
{
	cudrv.cuMemAlloc = f_mem_alloc;
	cudrv.cuMemFree = f_mem_free;
	cudrv.cuMemcpyHtoD = f_copy_in;
	cudrv.cuCtxSynchronize = f_sync;
	const at_op *op = op_find("cross_entropy");
	cr_assert_not_null(op);
	const long long M = 300, N = 16;
	void *x = malloc(at_op_input_bytes(op, AT_F32, M, N));
	double *ref = malloc(at_op_ref_count(op, M, N) * sizeof *ref);
	ref_op_check_data(op, AT_F32, M, N, 3, x, ref);
	ce_shape c;
	at_error err;
	nallocs = 0;
	cr_assert_eq(ce_shape_make(&c, op, AT_F32, M, N, x, (CUdeviceptr)1, ref + M * N, &err), 0,
		     "%s", err.msg);
	int found = 0;
	for (int i = 0; i < nallocs; i++)
		if (c.ws == (CUdeviceptr)(uintptr_t)&device_memory[i]) {
			cr_assert_eq(alloc_bytes[i], ce_workspace_bytes(M));
			found = 1;
		}
	cr_assert(found, "the workspace was allocated through the driver");
	ce_shape_free(&c);
	free(x);
	free(ref);
}
