// The two passes of the cross_entropy templates that loop over a row
// (cross_entropy_loop, _smem through cross_entropy_two_pass.cuh, and
// cross_entropy_cluster), over the columns [c0, c1) a CTA owns: the whole
// row, or a cluster's slice of it. The first reads the logits (UNROLL
// vectors a thread in flight) into a running max and sum of exps (online
// softmax, one exp an element) and, with label smoothing, a sum of z; the
// second writes the gradient from the logits read again: from global
// memory (L2 while the rows in flight fit), or from the copy the first
// pass left in dynamic shared memory (STAGE_ROW 1), as far as it holds.
//
// Each thread owns the vectors c = k THREADS + threadIdx.x of the range: it
// reads them, stages them, reads them back and writes their gradient, so
// no barrier guards the staged row (a thread reads only what it wrote) and
// dx may be x (every element read before it is written, by its writer).
//
// Needs THREADS, VEC, UNROLL, STAGE_ROW.
#pragma once

#include "cross_entropy_common.cuh"

#define STEP ((long long)THREADS * VEC * UNROLL) // elements a CTA takes a loop step

#if STAGE_ROW
extern __shared__ __align__(16) vec_t ce_row_buf[];
#endif

// The vectors of the range the launch's dynamic shared memory holds (0
// without staging): those from c0 on are staged.
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

// The vector at column col (k = (col - c0) / VEC of the range): staged, or
// from global memory.
__device__ __forceinline__ vec_t ce_reread(const elem_t *xr, long long col, long long k,
					   long long c1, bool vec_ok, long long staged)
{
	vec_t v;
#if STAGE_ROW
	if (k < staged)
		return ce_row_buf[k];
#endif
	load_vec(v, xr, col, c1, vec_ok);
	return v;
}

// Pass 1 over [c0, c1) of the row xr: the thread's running (max, sum) in o
// and its sum of z in sz (with label smoothing), staging what fits.
__device__ __forceinline__ void ce_pass_stats(const elem_t *xr, long long c0, long long c1,
					      bool vec_ok, long long staged, ce_cap cap,
					      bool smooth, ce_online &o, float &sz)
{
	o.m = NEG_INF_F;
	o.s = 0.0f;
	sz = 0.0f;
	for (long long base = c0; base < c1; base += STEP) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			load_vec(v[u], xr, base + ((long long)u * THREADS + threadIdx.x) * VEC, c1,
				 vec_ok);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
#if STAGE_ROW
			if (col < c1 && (col - c0) / VEC < staged)
				ce_row_buf[(col - c0) / VEC] = v[u];
#endif
			float z[VEC];
			ce_z_vec(z, v[u], col, c1, cap);
			ce_online_add(o, z);
			if (smooth)
				sz += ce_sum_z(z, col, c1);
		}
	}
}

// Pass 2 over [c0, c1): the gradient of the row into dxr.
__device__ __forceinline__ void ce_pass_grads(elem_t *dxr, const elem_t *xr, long long c0,
					      long long c1, bool vec_ok, long long staged,
					      const ce_row &r)
{
	for (long long base = c0; base < c1; base += STEP) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
			if (col < c1)
				v[u] = ce_reread(xr, col, (col - c0) / VEC, c1, vec_ok, staged);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
			if (col < c1)
				ce_store_grads(dxr, col, c1, vec_ok, v[u], r);
		}
	}
}
