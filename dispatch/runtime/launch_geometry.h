/* How a softmax kernel is launched: every template's kernel has the same
 * signature (y, x, M, N, ldy, ldx, flags), and its launch is described by a few
 * numbers (launch_geometry, common/template_rules.h) that the rules give and
 * the tuner stores with each result. The tuner and the dispatch library both
 * launch through this, so the two can never disagree on the grid. */
#ifndef AT_DISPATCH_LAUNCH_GEOMETRY_H
#define AT_DISPATCH_LAUNCH_GEOMETRY_H

#include "common/error.h"
#include "common/template_rules.h"
#include "cuda/driver.h"
#include "dispatch/policy/launch_grid_size.h" /* the pure part */

/* The grid for M rows on the current context's GPU: opts fn into its
 * dynamic shared memory (and a non-portable cluster size above 8), asks
 * the driver for occupancy where the grid needs it, and checks that a
 * cooperative launch is supported and a cluster fits. */
int launch_grid(const launch_geometry *g, CUfunction fn, long long M, int sm_count,
		unsigned *grid, at_error *err);

/* Launches fn on stream with the common softmax arguments (strides in
 * elements; flags: ATD_MASKED_ZERO or 0), cooperatively if g says so.
 * Checks nothing else; the caller has validated the shape. */
int launch_softmax(CUfunction fn, const launch_geometry *g, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		   unsigned flags, CUstream stream, at_error *err);

/* Launches fn, a kernel of two inputs and one output (the backward ops':
 * dx, y, dy, M, N, lddx, ldy, lddy, flags; dx may be dy), on stream as
 * launch_softmax does: the same grid, cooperatively if g says so. */
int launch_softmax_backward(CUfunction fn, const launch_geometry *g, unsigned grid,
			    CUdeviceptr dx, CUdeviceptr y, CUdeviceptr dy, long long M,
			    long long N, long long lddx, long long ldy, long long lddy,
			    unsigned flags, CUstream stream, at_error *err);

/* The cross_entropy kernel's flags (docs/cross-entropy.md). */
#define CE_TARGET_I32 1u /* targets are int32, else int64 */
#define CE_WRITE_GRAD 2u /* dx written; without it dx is untouched and may be 0 */

/* Every argument of cross_entropy_kernel, in its order (dx, x, target,
 * loss, lse, scale, M, V, lddx, ldx, ignore_index, label_smoothing,
 * z_loss, softcap, flags): strides in elements; lse and scale may be 0
 * (scale 0: 1.0f). */
typedef struct ce_launch_args {
	CUdeviceptr dx, x, target, loss, lse, scale;
	long long M, V, lddx, ldx, ignore_index;
	float label_smoothing, z_loss, softcap;
	unsigned flags;
} ce_launch_args;

/* Opts fn into what g needs to launch (dynamic shared memory above its
 * default limit, 48 KB less its static shared memory; a cluster of more
 * than 8 CTAs): launch_grid does it for the kernel it
 * sizes the grid of; an alternative entry launched on the same geometry
 * and grid (cross_entropy's plain kernel) needs it too. */
int launch_prepare_fn(const launch_geometry *g, CUfunction fn, at_error *err);

/* Whether a's options are plain (no soft-cap, no label smoothing): a
 * source's CE_PLAIN_KERNEL (dispatch/policy/row_ops.h) computes them. */
int ce_options_plain(const ce_launch_args *a);

/* Launches fn, a cross_entropy_kernel, on stream as launch_softmax does:
 * the same grid, cooperatively if g says so; plain (the module's
 * CE_PLAIN_KERNEL, or NULL when it has none) instead when a's options are
 * plain; dependent: as launch_kernel's. */
int launch_cross_entropy(CUfunction fn, CUfunction plain, const launch_geometry *g,
			 unsigned grid, const ce_launch_args *a, int dependent, CUstream stream,
			 at_error *err);

/* Launches fn over grid CTAs of threads (cooperatively if asked); with
 * dependent, as a programmatic dependent launch: on sm_90 it may start
 * before the kernel before it in the stream has ended, and must wait for
 * it (griddepcontrol.wait) before reading what that one wrote. */
int launch_kernel(CUfunction fn, unsigned grid, unsigned threads, unsigned dyn_smem,
		  int cooperative, int dependent, void **args, CUstream stream, at_error *err);

/* The threads of the one CTA of cross_entropy_prepare_kernel and
 * cross_entropy_reduce_kernel: fixed, so that the reduction's order (and
 * its float result) is the same every call; the most a CTA has, as each
 * thread waits a load latency for every few rows. */
#define CE_ONE_CTA_THREADS 1024

/* cross_entropy's workspace (docs/cross-entropy.md), the library's and
 * the tuner's: a head of CE_WS_HEAD_BYTES (the gradient's scale, a float;
 * n_valid, the out-of-range targets and the first such row, long longs
 * from byte 8), then M floats of row losses, which prepare marks pending
 * (CE_WS_LOSSES in templates/cross_entropy_common.cuh). */
#define CE_WS_HEAD_BYTES 32
size_t ce_workspace_bytes(long long M);

/* Launches fn, a source's cross_entropy_prepare_kernel (one CTA) on ws,
 * ce_workspace_bytes(M) of them: its head gets the gradient's scale,
 * n_valid, the out-of-range targets and the first such row, its row losses
 * the pending mark. */
int launch_cross_entropy_prepare(CUfunction fn, CUdeviceptr ws, CUdeviceptr target, long long M,
				 long long V, long long ignore_index, float upstream, int mean,
				 unsigned flags, CUstream stream, at_error *err);

/* Launches cross_entropy_scale_kernel (fn): dx's M rows of V times g[0],
 * or g[row] with per_row; rows whose factor is 1 untouched. dependent: as
 * launch_kernel's (fn's code waits for the kernel before it). */
int launch_cross_entropy_scale(CUfunction fn, CUdeviceptr dx, long long M, long long V,
			       long long lddx, CUdeviceptr g, int per_row, int dependent,
			       CUstream stream, at_error *err);

/* The index of the flags argument, the last of the signature: a kernel
 * without it was built before it existed (and before the numerics that
 * came with it), and is not launched. */
#define LAUNCH_FLAGS_PARAM 6

/* 0 when fn takes a 4-byte flags parameter at index flags_param (the last
 * of its op's signature: LAUNCH_FLAGS_PARAM for softmax's, each op's in
 * its row of dispatch/policy/row_ops.h), else -1 with a message saying
 * that the kernel predates it. */
int launch_check_signature(CUfunction fn, int flags_param, at_error *err);

#endif
