/* Grid sizing and launching of softmax kernels: see launch_geometry.h.
 *
 * A kernel whose static and dynamic shared memory together pass 48 KB a
 * CTA must be opted into its dynamic share with
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES), both to launch and for
 * the occupancy query to count it (the default is 48 KB less the static
 * share: a row of exactly 48 KB beside 512 B of static slots needs it); a cluster of more than
 * 8 CTAs needs NON_PORTABLE_CLUSTER_SIZE_ALLOWED. launch_grid does that (it
 * runs once per kernel and shape, in the tuner and in the dispatch
 * library's miss path), so launch_softmax, the hot path, stays a plain
 * launch. The shared memory attribute is only ever raised: a function shared
 * by shapes of different row lengths keeps the largest opt-in that any of
 * them needed. */
#include "dispatch/runtime/launch_geometry.h"

#include <stdio.h>
#include <string.h>

/* Above this many CTAs a cluster is non-portable and must be allowed. */
#define PORTABLE_CLUSTER_SIZE 8

static int cluster_size(const launch_geometry *g)
{
	return g->ctas_per_row > 1 ? g->ctas_per_row : 1;
}

static int opt_into_dyn_smem(CUfunction fn, int bytes, at_error *err)
{
	int current = 0;
	if (cudrv.cuFuncGetAttribute(&current, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				     fn) == CUDA_SUCCESS &&
	    current >= bytes)
		return 0;
	CUresult rc = cudrv.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					       bytes);
	if (rc != CUDA_SUCCESS) {
		char what[120];
		snprintf(what, sizeof what,
			 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %d) (the kernel's "
			 "dynamic shared memory)", bytes);
		return cudrv_error(err, rc, what);
	}
	return 0;
}

static int check_cooperative_support(at_error *err)
{
	CUdevice dev;
	int supported = 0;
	CU_TRY(err, cudrv.cuCtxGetDevice(&dev));
	CU_TRY(err, cudrv.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
					       dev));
	if (!supported)
		return at_error_set(err, "this GPU does not support cooperative launches");
	return 0;
}

/* A clear message, rather than a launch failure, when not even one cluster
 * of the kernel's size and shared memory can be placed on the GPU. */
static int check_cluster_fits(const launch_geometry *g, CUfunction fn, unsigned grid,
			      at_error *err)
{
	CUlaunchConfig cfg = { .gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = (unsigned)g->threads, .blockDimY = 1, .blockDimZ = 1,
			       .sharedMemBytes = (unsigned)g->dyn_smem };
	int clusters = 0;
	CU_TRY(err, cudrv.cuOccupancyMaxActiveClusters(&clusters, fn, &cfg));
	if (clusters < 1)
		return at_error_set(err, "no cluster of %d CTAs (%d threads and %d bytes of dynamic "
				    "shared memory each) fits on this GPU", g->ctas_per_row, g->threads,
				    g->dyn_smem);
	return 0;
}

int launch_prepare_fn(const launch_geometry *g, CUfunction fn, at_error *err)
{
	/* the function's own limit says (48 KB less its static share) */
	if (g->dyn_smem > 0 && opt_into_dyn_smem(fn, g->dyn_smem, err))
		return -1;
	int allowed = 0;
	if (cluster_size(g) > PORTABLE_CLUSTER_SIZE &&
	    (cudrv.cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
				      fn) != CUDA_SUCCESS ||
	     !allowed))
		CU_TRY(err, cudrv.cuFuncSetAttribute(
				    fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	return 0;
}

int launch_grid(const launch_geometry *g, CUfunction fn, long long M, int sm_count,
		unsigned *grid, at_error *err)
{
	if (launch_geometry_check(g, err) || launch_prepare_fn(g, fn, err))
		return -1;
	int per_sm = 0;
	if (g->persistent || g->cooperative)
		CU_TRY(err, cudrv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
				    &per_sm, fn, g->threads, (size_t)g->dyn_smem));
	if (g->cooperative && check_cooperative_support(err))
		return -1;
	if (launch_grid_size(g, M, per_sm, sm_count, grid, err))
		return -1;
	return cluster_size(g) > 1 ? check_cluster_fits(g, fn, *grid, err) : 0;
}

/* Launches fn with args as g says: cooperatively or not. */
int launch_kernel(CUfunction fn, unsigned grid, unsigned threads, unsigned dyn_smem,
		  int cooperative, int dependent, void **args, CUstream stream, at_error *err)
{
	if (dependent) {
		CUlaunchAttribute attr[2];
		memset(attr, 0, sizeof attr);
		attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
		attr[0].value.programmaticStreamSerializationAllowed = 1;
		attr[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr[1].value.cooperative = 1;
		CUlaunchConfig c = { grid, 1, 1, threads, 1, 1, dyn_smem, stream, attr,
				     cooperative ? 2u : 1u };
		CU_TRY(err, cudrv.cuLaunchKernelEx(&c, fn, args, NULL));
	} else if (cooperative) {
		CU_TRY(err, cudrv.cuLaunchCooperativeKernel(fn, grid, 1, 1, threads, 1, 1, dyn_smem,
							    stream, args));
	} else {
		CU_TRY(err, cudrv.cuLaunchKernel(fn, grid, 1, 1, threads, 1, 1, dyn_smem, stream,
						 args, NULL));
	}
	return 0;
}

static int launch_args(CUfunction fn, const launch_geometry *g, unsigned grid, void **args,
		       int dependent, CUstream stream, at_error *err)
{
	return launch_kernel(fn, grid, (unsigned)g->threads, (unsigned)g->dyn_smem, g->cooperative,
			     dependent, args, stream, err);
}

int launch_softmax(CUfunction fn, const launch_geometry *g, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		   unsigned flags, CUstream stream, at_error *err)
{
	void *args[] = { &y, &x, &M, &N, &ldy, &ldx, &flags };
	return launch_args(fn, g, grid, args, 0, stream, err);
}

int launch_softmax_backward(CUfunction fn, const launch_geometry *g, unsigned grid,
			    CUdeviceptr dx, CUdeviceptr y, CUdeviceptr dy, long long M,
			    long long N, long long lddx, long long ldy, long long lddy,
			    unsigned flags, CUstream stream, at_error *err)
{
	void *args[] = { &dx, &y, &dy, &M, &N, &lddx, &ldy, &lddy, &flags };
	return launch_args(fn, g, grid, args, 0, stream, err);
}

int ce_options_plain(const ce_launch_args *a)
{
	/* a negative soft-cap is none, as the kernels read it (ce_cap_of) */
	return !(a->softcap > 0.0f) && a->label_smoothing == 0.0f;
}

int launch_cross_entropy(CUfunction fn, CUfunction plain, const launch_geometry *g,
			 unsigned grid, const ce_launch_args *a, int dependent, CUstream stream,
			 at_error *err)
{
	if (plain && ce_options_plain(a))
		fn = plain;
	ce_launch_args c = *a; /* the driver takes pointers to non-const copies */
	void *args[] = { &c.dx,	    &c.x,     &c.target,	  &c.loss,
			 &c.lse,    &c.scale, &c.M,		  &c.V,
			 &c.lddx,   &c.ldx,   &c.ignore_index,	  &c.label_smoothing,
			 &c.z_loss, &c.softcap, &c.flags };
	return launch_args(fn, g, grid, args, dependent, stream, err);
}

size_t ce_workspace_bytes(long long M)
{
	return CE_WS_HEAD_BYTES + (M > 0 ? (size_t)M : 0) * sizeof(float);
}

int launch_cross_entropy_prepare(CUfunction fn, CUdeviceptr ws, CUdeviceptr target, long long M,
				 long long V, long long ignore_index, float upstream, int mean,
				 unsigned flags, CUstream stream, at_error *err)
{
	void *args[] = { &ws, &target, &M, &V, &ignore_index, &upstream, &mean, &flags };
	CU_TRY(err, cudrv.cuLaunchKernel(fn, 1, 1, 1, CE_ONE_CTA_THREADS, 1, 1, 0, stream, args,
					 NULL));
	return 0;
}

int launch_check_signature(CUfunction fn, int flags_param, at_error *err)
{
	size_t offset = 0, size = 0;
	CUresult rc = cudrv.cuFuncGetParamInfo(fn, (size_t)flags_param, &offset, &size);
	if (rc == CUDA_SUCCESS && size == sizeof(unsigned))
		return 0;
	return at_error_set(err, "the kernel takes no flags argument (parameter %d): it was "
			    "built by autotune 0.2 or older, whose kernels gave NaN for logits "
			    "above about 1e29; tune again", flags_param);
}

/* The most threads a CTA of cross_entropy_scale_kernel
 * (templates/cross_entropy_common.cuh) takes; older code's took 256. */
#define CE_SCALE_THREADS 1024
/* Its CTAs: few, since each costs the common case (g is 1: nothing to do)
 * time to start and end, yet a CTA a multiprocessor for a pass over the
 * gradient when g is not 1. */
#define CE_SCALE_CTAS 128

int launch_cross_entropy_scale(CUfunction fn, CUdeviceptr dx, long long M, long long V,
			       long long lddx, CUdeviceptr g, int per_row, int dependent,
			       CUstream stream, at_error *err)
{
	int threads = 0;
	CU_TRY(err, cudrv.cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
	threads = threads < CE_SCALE_THREADS ? threads : CE_SCALE_THREADS;
	unsigned grid = M < CE_SCALE_CTAS ? (unsigned)M : CE_SCALE_CTAS;
	void *args[] = { &dx, &M, &V, &lddx, &g, &per_row };
	return launch_kernel(fn, grid, (unsigned)threads, 0, 0, dependent, args, stream, err);
}
