// The row kernel of cross_entropy_loop and cross_entropy_smem: one CTA a
// row (or a persistent grid of them), two passes over the row. The first
// reads the logits (UNROLL vectors a thread in flight) into a running max
// and sum of exps (online softmax, one exp an element) and, with label
// smoothing, a sum of z; the CTA merges them, thread 0 writes the loss.
// The second writes the gradient from the logits read again: from global
// memory (cross_entropy_loop: L2 while the rows in flight fit), or from the
// copy the first pass left in dynamic shared memory (STAGE_ROW 1,
// cross_entropy_smem: the logits read from global memory once). A row
// longer than the launch's dynamic shared memory is staged as far as it
// holds and the rest read again from global memory (bf16 128256: 113K
// staged, the last 12% read twice).
//
// Each thread owns the vectors c = k THREADS + threadIdx.x of the row: it
// reads them, stages them, reads them back and writes their gradient, so
// no barrier guards the staged row (a thread reads only what it wrote) and
// dx may be x (every element read before it is written, by its writer).
//
// Needs THREADS, VEC, UNROLL, PERSISTENT, STAGE_ROW.
#pragma once

#include "cross_entropy_common.cuh"

#define WARPS (THREADS / 32)
#define STEP ((long long)THREADS * VEC * UNROLL) // elements a CTA takes a loop step

#include "softmax_cta_reduce.cuh"

#if STAGE_ROW
extern __shared__ __align__(16) vec_t ce_row_buf[];
#endif

// The vectors of a row the launch's dynamic shared memory holds (0 for
// the looped template): those from column 0 on are staged.
__device__ __forceinline__ long long ce_staged_vecs(void)
{
#if STAGE_ROW
	unsigned b;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
	return (long long)(b / sizeof(vec_t));
#else
	return 0;
#endif
}

// The vector at column col of the row: staged, or from global memory.
__device__ __forceinline__ vec_t ce_reread(const elem_t *xr, long long col, long long V,
					   bool vec_ok, long long staged)
{
	vec_t v;
#if STAGE_ROW
	if (col / VEC < staged)
		return ce_row_buf[col / VEC];
#endif
	load_vec(v, xr, col, V, vec_ok);
	return v;
}

// (THREADS, 1): every register a CTA alone may have; with the first
// argument only, ptxas held the looped kernel to 64 at 512 threads and
// spilled (f32 512 x 4 x 4: 36 bytes).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
cross_entropy_kernel(elem_t *dx, const elem_t *x, const void *target, float *loss, float *lse,
		     const float *scale, long long M, long long V, long long lddx, long long ldx,
		     long long ignore_index, float label_smoothing, float z_loss, float softcap,
		     unsigned flags)
{
	__shared__ float slot[2][3][32]; // two sets taken in turn, as in cross_entropy_block
	const bool vec_ok = ce_vec_aligned(dx, lddx, x, ldx, flags);
	const long long staged = ce_staged_vecs();
	const float sc = ce_scale(scale);
	const ce_cap cap = ce_cap_of(softcap);
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	int turn = 0;
	for (long long row = blockIdx.x; row < M; row += step, turn ^= 1) {
		const elem_t *xr = x + row * ldx;
		const long long t = ce_target(target, row, flags);
		const float zt = threadIdx.x == 0 ? ce_target_z(xr, t, V, cap) : 0.0f;
		ce_online o = { NEG_INF_F, 0.0f };
		float sz = 0.0f;
		for (long long base = 0; base < V; base += STEP) {
			vec_t v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				load_vec(v[u], xr, base + ((long long)u * THREADS + threadIdx.x) * VEC, V,
					 vec_ok);
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
#if STAGE_ROW
				if (col < V && col / VEC < staged)
					ce_row_buf[col / VEC] = v[u];
#endif
				float z[VEC];
				ce_z_vec(z, v[u], col, V, cap);
				ce_online_add(o, z);
				if (label_smoothing != 0.0f)
					sz += ce_sum_z(z, col, V);
			}
		}
		// the barriers in the reductions also order thread 0's read of the
		// target's logit before any write of the row (dx may be x)
		const float m = cta_max(o.m, slot[turn][0]);
		const float s = cta_sum(o.s * exp_from_max(o.m, m), slot[turn][1]);
		if (label_smoothing != 0.0f)
			sz = cta_sum(sz, slot[turn][2]);
		if (threadIdx.x == 0)
			ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index,
				      label_smoothing, z_loss);
		if (!(flags & CE_WRITE_GRAD))
			continue;
		const ce_row r = ce_row_finish(m, s, t, V, ignore_index, label_smoothing, z_loss,
					       cap, sc);
		for (long long base = 0; base < V; base += STEP) {
			vec_t v[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				if (col < V)
					v[u] = ce_reread(xr, col, V, vec_ok, staged);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				if (col < V)
					ce_store_grads(dx + row * lddx, col, V, vec_ok, v[u], r);
			}
		}
	}
}
