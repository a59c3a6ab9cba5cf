// The row kernel of cross_entropy_loop and cross_entropy_smem: one CTA a
// row (or a persistent grid of them), two passes over the row
// (cross_entropy_passes.cuh): the first's running max and sum of exps (and
// sum of z) are merged over the CTA and thread 0 writes the loss; the
// second writes the gradient from the logits read again: from global
// memory (cross_entropy_loop: L2 while the rows in flight fit), or from the
// copy the first pass left in dynamic shared memory (STAGE_ROW 1,
// cross_entropy_smem: the logits read from global memory once). A row
// longer than the launch's dynamic shared memory is staged as far as it
// holds and the rest read again from global memory (bf16 128256: 113K
// staged, the last 12% read twice).
//
// Needs THREADS, VEC, UNROLL, PERSISTENT, STAGE_ROW.
#pragma once

#include "cross_entropy_passes.cuh"

#define WARPS (THREADS / 32)

#include "softmax_cta_reduce.cuh"

template <bool PLAIN> __device__ __forceinline__ void ce_two_pass_rows(CE_KERNEL_PARAMS)
{
	__shared__ float slot[2][3][32]; // two sets taken in turn, as in cross_entropy_block
	const long long staged = ce_staged_vecs();
	const float sc = ce_scale(scale);
	ce_cap cap;
	float ls;
	ce_options_of<PLAIN>(softcap, label_smoothing, cap, ls);
	const bool smooth = ls != 0.0f;
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	int turn = 0;
	for (long long row = blockIdx.x; row < M; row += step, turn ^= 1) {
		const elem_t *xr = x + row * ldx;
		elem_t *dxr = (flags & CE_WRITE_GRAD) ? dx + row * lddx : (elem_t *)xr;
		const long long h = ce_head(xr, dxr, 0, V); // the row peeled (-1: scalar)
		const long long t = ce_target(target, row, flags);
		ce_online o;
		float sz;
		ce_pass_stats(xr, 0, V, h, staged, cap, smooth, o, sz);
		// the target's logit read after the row's (t's latency hidden, the
		// logit in L2 by now); the barriers in the reductions order it
		// before any write of the row (dx may be x)
		const float zt = threadIdx.x == 0 ? ce_target_z(xr, t, V, cap) : 0.0f;
		const float m = cta_max(o.m, slot[turn][0]);
		const float s = cta_sum(o.s * exp_from_max(o.m, m), slot[turn][1]);
		if (smooth)
			sz = cta_sum(sz, slot[turn][2]);
		if (threadIdx.x == 0)
			ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index, ls, z_loss);
		if (!(flags & CE_WRITE_GRAD))
			continue;
		const ce_row r = ce_row_finish(m, s, t, V, ignore_index, ls, z_loss, cap, sc);
		ce_pass_grads<PLAIN>(dxr, xr, 0, V, h, staged, r);
	}
}

// (THREADS, 1): every register a CTA alone may have; with the first
// argument only, ptxas held the looped kernel to 64 at 512 threads and
// spilled (f32 512 x 4 x 4: 36 bytes).
CE_KERNELS(__launch_bounds__(THREADS, 1), __launch_bounds__(THREADS, 1), ce_two_pass_rows)
