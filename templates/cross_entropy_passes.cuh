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
// A range that does not start on a vector boundary is peeled (ce_head):
// its head, up to x's first boundary, is taken by thread CE_HEAD_THREAD
// alone, element by element, in both passes, and the rest runs through the
// same whole-vector loops as an aligned row from there (c0 + h; the
// staged vectors count from there). dx is peeled with x when it has the
// same offset (in place, or the same strides); otherwise the whole range
// takes the scalar path (h < 0).
//
// Needs THREADS, VEC, UNROLL, STAGE_ROW.
#pragma once

#include "cross_entropy_common.cuh"

#define STEP ((long long)THREADS * VEC * UNROLL) // elements a CTA takes a loop step

#if STAGE_ROW
extern __shared__ __align__(16) vec_t ce_row_buf[];

static_assert(sizeof(vec_t) == 16, "the staged row moves in 16-byte vectors");

// The staged row's shared address, taken once by an asm ptxas cannot
// redo: from the symbol it rebuilt the address at each access (S2R of the
// cluster CTA id, a move, an add, two LEAs a vector).
__device__ __forceinline__ unsigned ce_row_buf_base(void)
{
	unsigned a = (unsigned)__cvta_generic_to_shared(ce_row_buf), b;
	asm("mov.b32 %0, %1;" : "=r"(b) : "r"(a));
	return b;
}

__device__ __forceinline__ void ce_sts(unsigned a, const vec_t &v)
{
	const unsigned *w = reinterpret_cast<const unsigned *>(&v);
	asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
		     :: "r"(a), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
}

__device__ __forceinline__ vec_t ce_lds(unsigned a)
{
	vec_t v;
	unsigned *w = reinterpret_cast<unsigned *>(&v);
	asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
		     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "r"(a) : "memory");
	return v;
}
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

// The staged vectors left from this thread's next one on, counted down a
// step at a time (32-bit: staged is what shared memory holds), held at or
// below 0 once past them: vector u of a step is staged when u THREADS < sl,
// at index staged - sl + u THREADS.
__device__ __forceinline__ int ce_stage_start(long long staged)
{
	return (int)staged - (int)threadIdx.x;
}

__device__ __forceinline__ int ce_stage_next(int sl)
{
	return sl > 0 ? sl - UNROLL * THREADS : sl;
}

// Pass 1's steps of whole vectors, by pointers from c0: nothing tested
// per vector but the staging. Returns where they stopped.
template <bool CAP, bool SMOOTH>
__device__ __forceinline__ long long ce_stats_steps(const elem_t *xr, long long c0, long long c1,
						    long long staged, ce_cap cap, ce_online &o,
						    float &sz)
{
	long long base = c0;
	const elem_t *p = xr + c0 + threadIdx.x * VEC;
	int sl = ce_stage_start(staged);
#if STAGE_ROW
	const unsigned sb = ce_row_buf_base() + (unsigned)staged * 16u;
#endif
	for (; base + STEP <= c1; base += STEP, p += STEP, sl = ce_stage_next(sl)) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			v[u] = ld_vec(p + u * THREADS * VEC);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
#if STAGE_ROW
			if (u * THREADS < sl)
				ce_sts(sb + (unsigned)(u * THREADS - sl) * 16u, v[u]);
#endif
			float z[VEC];
			ce_z_full<CAP>(z, v[u], cap);
			ce_online_add(o, z, ce_vec_max<CAP>(v[u], z));
			if (SMOOTH)
				sz += ce_sum_z_full(z);
		}
	}
	return base;
}

// Pass 1 over [c0, c1) of the row xr (h: ce_head's): the thread's running
// (max, sum) in o and its sum of z in sz (with label smoothing), staging
// what fits.
__device__ __forceinline__ void ce_pass_stats(const elem_t *xr, long long c0, long long c1,
					      long long h, long long staged, ce_cap cap,
					      bool smooth, ce_online &o, float &sz)
{
	o.m = NEG_INF_F;
	o.s = 0.0f;
	sz = 0.0f;
	const bool vec_ok = h >= 0;
	if (h > 0 && threadIdx.x == CE_HEAD_THREAD) { // the peeled head
		const vec_t v = ce_head_vec(xr + c0, h);
		float z[VEC];
		ce_z_vec(z, v, 0, h, cap);
		ce_online_add(o, z, ce_z_max(z));
		if (smooth)
			sz += ce_sum_z(z, 0, h);
	}
	if (h > 0) { // whole vectors from the boundary on: the range moves, not
		xr += h; // c0 (the loops as an aligned row's, 0 in cross_entropy_two_pass.cuh)
		c1 -= h;
	}
	long long base = c0;
	if (vec_ok)
		// sz taken with the cap even unasked (unused then; the tanh dominates):
		// one loop a uniform option, as ptxas no longer split it by itself
		base = cap.cap > 0.0f ? ce_stats_steps<true, true>(xr, c0, c1, staged, cap, o, sz)
		       : smooth	      ? ce_stats_steps<false, true>(xr, c0, c1, staged, cap, o, sz)
				      : ce_stats_steps<false, false>(xr, c0, c1, staged, cap, o, sz);
	for (; base < c1; base += STEP) { // the last step, masked (all, misaligned)
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
			ce_online_add(o, z, ce_z_max(z));
			if (smooth)
				sz += ce_sum_z(z, col, c1);
		}
	}
}

// Pass 2's steps of whole vectors for a row that is not fixed, every
// column as if not the target (ce_pass_grads writes the target's after).
// Returns where they stopped.
template <bool CAP, bool SMOOTH, bool RT>
__device__ __forceinline__ void ce_grads_steps(long long &base, elem_t *dxr, const elem_t *xr,
					       long long c0, long long c1, long long staged,
					       const ce_row &r)
{
	const elem_t *p = xr + c0 + threadIdx.x * VEC;
	elem_t *q = dxr + c0 + threadIdx.x * VEC;
	int sl = ce_stage_start(staged);
#if STAGE_ROW
	const unsigned sb = ce_row_buf_base() + (unsigned)staged * 16u;
#endif
	for (base = c0; base + STEP <= c1; base += STEP, p += STEP, q += STEP, sl = ce_stage_next(sl)) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
#if STAGE_ROW
			if (u * THREADS < sl)
				v[u] = ce_lds(sb + (unsigned)(u * THREADS - sl) * 16u);
			else
#endif
				v[u] = ld_vec(p + u * THREADS * VEC);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			float out[VEC];
			ce_grads<CAP, SMOOTH, RT>(out, v[u], r);
			vec_t w;
			pack_vec(w, out);
			st_vec(q + u * THREADS * VEC, w);
		}
	}
}

// Pass 2 over [c0, c1) (h: ce_head's): the gradient of the row into dxr,
// the head's by its thread first (PLAIN: no soft-cap, no smoothing; the
// plain kernel's, CE_KERNELS). A fixed row's is
// written without reading the row; otherwise no loop compares a column
// with the target: its owner rewrites that element last.
template <bool PLAIN>
__device__ __forceinline__ void ce_pass_grads(elem_t *dxr, const elem_t *xr, long long c0,
					      long long c1, long long h, long long staged,
					      const ce_row &r)
{
	const bool vec_ok = h >= 0;
	const bool head = h > 0 && threadIdx.x == CE_HEAD_THREAD;
	// whole vectors from the boundary on: the range moves (xb, dxb, c1b), not
	// c0, as in ce_pass_stats
	const long long hp = h > 0 ? h : 0;
	const elem_t *xb = xr + hp;
	elem_t *dxb = dxr + hp;
	const long long c1b = c1 - hp;
	if (r.fixed) {
		if (head) {
			float out[VEC];
#pragma unroll
			for (int j = 0; j < VEC; j++)
				out[j] = r.value;
			store_vec(dxr + c0, 0, h, false, out);
		}
		ce_fill(dxb, c0, c1b, vec_ok, r);
		return;
	}
	// the target's column: the head's thread's, or its vector's owner's
	const bool owner = ce_owns_target(r, c0 + hp, c1) || (head && r.t >= c0 && r.t < c0 + h);
	const float xt = ce_target_x(xr, r, owner);
	if (head) { // read, then written, by this thread only (after xt)
		float out[VEC];
		ce_grads<false, false, true>(out, ce_head_vec(xr + c0, h), r);
		store_vec(dxr + c0, 0, h, false, out);
	}
	long long base = c0;
	if (vec_ok)
		CE_WITH_OPTIONS(PLAIN, r, ce_grads_steps, base, dxb, xb, c0, c1b, staged, r);
	for (; base < c1b; base += STEP) { // the last step, masked (all, misaligned)
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
			if (col < c1b)
				v[u] = ce_reread(xb, col, (col - c0) / VEC, c1b, vec_ok, staged);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
			if (col < c1b) {
				float out[VEC];
				ce_grads<false, false, true>(out, v[u], r);
				store_vec(dxb, col, c1b, vec_ok, out);
			}
		}
	}
	ce_fix_target(dxr, r, owner, xt);
}
