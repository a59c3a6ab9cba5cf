// Shared pieces of the cross_entropy templates (cross_entropy_block, _smem,
// _loop), on top of softmax_common.cuh's element type, conversions and
// vector access: the contract of docs/cross-entropy.md in device code. Every
// row kernel is
//
//   cross_entropy_kernel(elem *dx, const elem *x, const void *target,
//                        float *loss, float *lse, const float *scale, M, V,
//                        lddx, ldx, ignore_index, label_smoothing, z_loss,
//                        softcap, flags)
//
// and, per row: z = softcap ? softcap tanh(x / softcap) : x; the row's max
// m, s = sum e^(z - m) and (label smoothing only) sum z, reduced over the
// CTA; thread 0 reads the target and its logit (once, one thread) and
// writes loss and lse; with CE_WRITE_GRAD every element's gradient is
// written by the thread that read it (dx may be x; the target's column by
// the thread owning it, ignored and bad rows' without a read). A target
// outside [0, V) is never read from: its row is NaN. The per-row formulas
// live here only (ce_write_loss, ce_row_finish, ce_grads, ce_grad_target),
// so the templates differ in where the row is held, not in what they
// compute.
//
// The source also defines the two one-CTA kernels of the contract,
// cross_entropy_prepare_kernel and cross_entropy_reduce_kernel, and
// cross_entropy_scale_kernel, the backward's multiply by the upstream
// gradient.
#pragma once

#include "softmax_common.cuh"

#define CE_TARGET_I32 1u // targets are int32 (else int64)
#define CE_WRITE_GRAD 2u // dx is written (else untouched, may be NULL)

#define NAN_F __int_as_float(0x7fc00000)

// The row's target, int32 or int64 as flags say.
__device__ __forceinline__ long long ce_target(const void *target, long long row, unsigned flags)
{
	return (flags & CE_TARGET_I32) ? (long long)((const int *)target)[row]
				       : ((const long long *)target)[row];
}

// A row whose every dx is one value (ce_row's fixed): its target ignored
// or out of range.
__device__ __forceinline__ bool ce_fixed(long long t, long long V, long long ignore_index)
{
	return t == ignore_index || t < 0 || t >= V;
}

// The soft-cap as the elements take it: its inverse taken once a launch,
// as a division in the loops is a call to a subroutine (a stack frame).
struct ce_cap {
	float cap, inv; // cap 0: none
};

__device__ __forceinline__ ce_cap ce_cap_of(float softcap)
{
	ce_cap c = { softcap > 0.0f ? softcap : 0.0f, softcap > 0.0f ? 1.0f / softcap : 0.0f };
	return c;
}

// z from a logit: soft-capped when the cap is set (tanhf: accurate, as the
// reference's tanh; the exps dominate anyway).
__device__ __forceinline__ float ce_z_capped(float x, ce_cap c)
{
	return c.cap * tanhf(x * c.inv);
}

__device__ __forceinline__ float ce_z(float x, ce_cap c)
{
	return c.cap > 0.0f ? ce_z_capped(x, c) : x;
}

// The steady-state loops are instantiated per uniform option (CAP:
// softcap set; SMOOTH: label smoothing's term) and test nothing per
// element; a range's last, masked step takes the options at run time.

// A vector's z values, v loaded by load_vec (elements at or past n are
// -inf); they stay -inf (no term of the max nor of the sum of exps;
// ce_sum_z leaves them out of the sum of z). Only the cap needs the column
// test (it would make them -softcap).
__device__ __forceinline__ void ce_z_vec(float *z, const vec_t &v, long long col, long long n,
					 ce_cap c)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		z[j] = c.cap > 0.0f ? (col + j < n ? ce_z_capped(to_f32(v.v[j]), c) : NEG_INF_F)
				    : to_f32(v.v[j]);
}

// Element j of v as f32. bf16 from its 32-bit word, one instruction (a
// shift, a mask): from the 16-bit element ptxas extracted the upper one
// first, then shifted it (two, and moves).
__device__ __forceinline__ float ce_x(const vec_t &v, int j)
{
#if DTYPE_BF16 && VEC % 2 == 0
	const unsigned w = reinterpret_cast<const unsigned *>(&v)[j / 2];
	return __uint_as_float(j % 2 ? w & 0xffff0000u : w << 16);
#else
	return to_f32(v.v[j]);
#endif
}

// ce_z_vec's of a whole vector.
template <bool CAP>
__device__ __forceinline__ void ce_z_full(float *z, const vec_t &v, ce_cap c)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		z[j] = CAP ? ce_z_capped(ce_x(v, j), c) : ce_x(v, j);
}

// The sum of a vector's z values that are in the row (label smoothing's
// term; a -inf logit gives -inf, as the reference).
__device__ __forceinline__ float ce_sum_z(const float *z, long long col, long long n)
{
	float s = 0.0f;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		s += col + j < n ? z[j] : 0.0f;
	return s;
}

__device__ __forceinline__ float ce_sum_z_full(const float *z)
{
	float s = 0.0f;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		s += z[j];
	return s;
}

// The max of a vector's z.
__device__ __forceinline__ float ce_z_max(const float *z)
{
	float vm = z[0];
#pragma unroll
	for (int j = 1; j < VEC; j++)
		vm = fmaxf(vm, z[j]);
	return vm;
}

// The same, of a whole vector: without the cap z = x, so it is taken on
// the packed elements (vec_max: bf16x2/f16x2 pairs, NaN skipped as fmaxf).
template <bool CAP>
__device__ __forceinline__ float ce_vec_max(const vec_t &v, const float *z)
{
	return CAP ? ce_z_max(z) : vec_max(v);
}

// A running (max, sum of e^(z - max)) of a thread's values, for the
// templates that take the max and the sum in one pass (online softmax).
// Terms are taken against 0 while the max is -inf (nothing but -inf seen:
// each is e^-inf = 0, a NaN stays NaN), so -inf - -inf is never formed.
struct ce_online {
	float m, s;
};

__device__ __forceinline__ void ce_online_add(ce_online &o, const float *z, float vm)
{
	if (vm > o.m) {
		o.s *= exp_from_max(o.m, vm); // e^-inf = 0 from the first finite max
		o.m = vm;
	}
	const float ref = o.m == NEG_INF_F ? 0.0f : o.m;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		o.s += exp_from_max(z[j], ref);
}

// What a row's pass over its values left for its loss and gradient.
struct ce_row {
	float m;      // max z
	float lg;     // log2 of sum e^(z - m)
	float coef;   // scale (1 + 2 zl lse): p's factor in dz
	float hit;    // scale (1 - ls): subtracted at the target
	float smooth; // scale ls / V: subtracted everywhere
	ce_cap c;
	long long t;  // the target (its column), or -1
	bool fixed;   // ignored (0) or out-of-range (NaN) row: every dx is `value`
	float value;
};

// Whether the gradient subtracts label smoothing's term: -0 counts, as
// x - -0 is +0 where x is -0.
__device__ __forceinline__ bool ce_smooths(const ce_row &r)
{
	return __float_as_uint(r.smooth) != 0u;
}

// Thread 0's part before the row's reductions: the target, and its z when
// it is a column of the row (read once, here, before any write of the row:
// in place is safe).
__device__ __forceinline__ float ce_target_z(const elem_t *xr, long long t, long long V,
					     ce_cap c)
{
	return t >= 0 && t < V ? ce_z(to_f32(xr[t]), c) : NAN_F;
}

// A reduced call's row losses start as CE_LOSS_PENDING (prepare writes
// it), a NaN that no loss is stored as: reduce polls for them
// (cross_entropy_reduce_polled_kernel). Stored as a strong (relaxed, GPU
// scope) write, as another kernel reads it while this one runs.
#define CE_LOSS_PENDING 0xffffffffu

__device__ __forceinline__ void ce_store_loss(float *p, float v)
{
	if (__float_as_uint(v) == CE_LOSS_PENDING) // a negated NaN: NaN as any other
		v = NAN_F;
	asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

// Writes the row's loss (and lse, when asked) from its max m, sum s, sum
// of z sz and target's z zt, the differences first (as softmax): lse - z_t
// as ln s + (m - z_t), so that a row of logits near 1e30 keeps its loss.
__device__ __forceinline__ void ce_write_loss(float *loss, float *lse, long long row, float m,
					      float s, float sz, float zt, long long t,
					      long long V, long long ignore_index, float ls,
					      float zl)
{
	const float lns = logf(s);
	const float l = m + lns;
	if (lse)
		lse[row] = l;
	float v;
	if (t == ignore_index) {
		v = 0.0f;
	} else if (t < 0 || t >= V) {
		v = NAN_F;
	} else {
		v = lns + (1.0f - ls) * (m - zt);
		if (ls != 0.0f)
			v += ls * (m - sz / (float)V);
		if (zl != 0.0f)
			v += zl * l * l;
	}
	ce_store_loss(loss + row, v);
}

// Everything the gradient needs of a row, from its reductions.
__device__ __forceinline__ ce_row ce_row_finish(float m, float s, long long t, long long V,
						long long ignore_index, float ls, float zl,
						ce_cap c, float scale)
{
	ce_row r;
	r.m = m;
	r.lg = fast_log2(s);
	const float l = m + logf(s);
	r.coef = scale * (1.0f + 2.0f * zl * l);
	r.hit = scale * (1.0f - ls);
	r.smooth = scale * ls / (float)V;
	r.c = c;
	r.t = t;
	r.fixed = ce_fixed(t, V, ignore_index);
	r.value = t == ignore_index ? 0.0f : NAN_F;
	return r;
}

// The gradient of a vector of logits but at the target: dz = scale (p (1 +
// 2 zl lse) - ls / V), p = e^(z - lse) as 2^((z - m) log2 e - log2 s) (the
// difference first); with softcap times 1 - tanh^2. p * coef is rounded
// before the subtraction (__fmul_rn: no fused multiply-add), as it was
// when the target's term (0 here) came between: the same bits. SMOOTH
// false leaves out x - (+0), which is x; CAP's run time options (the tail's)
// are r's.
template <bool CAP, bool SMOOTH, bool RT>
__device__ __forceinline__ void ce_grads(float *out, const vec_t &v, const ce_row &r)
{
	const bool cap = RT ? r.c.cap > 0.0f : CAP;
	const bool smooth = RT ? ce_smooths(r) : SMOOTH;
#pragma unroll
	for (int j = 0; j < VEC; j++) {
		const float x = ce_x(v, j);
		float d = 1.0f, z = x;
		if (cap) {
			const float th = tanhf(x * r.c.inv);
			z = r.c.cap * th;
			d = 1.0f - th * th;
		}
		const float p = exp_from_max_over(z, r.m, r.lg);
		float dz = __fmul_rn(p, r.coef);
		if (smooth)
			dz -= r.smooth;
		out[j] = cap ? dz * d : dz;
	}
}

// The gradient at the target column (t, in the row) from its logit x:
// ce_grads' with (1 - ls) subtracted. Written by the thread that owns the
// column after its vector (ce_fix_target), so no loop compares columns.
__device__ __forceinline__ float ce_grad_target(float x, const ce_row &r)
{
	float d = 1.0f, z = x;
	if (r.c.cap > 0.0f) {
		const float th = tanhf(x * r.c.inv);
		z = r.c.cap * th;
		d = 1.0f - th * th;
	}
	const float p = exp_from_max_over(z, r.m, r.lg);
	const float dz = __fmaf_rn(p, r.coef, -r.hit) - r.smooth;
	return dz * d;
}

// Whether this thread owns the target's column: the range [c0, c1) of the
// row is cut into vectors, vector k taken by thread k % THREADS (every
// template's mapping).
__device__ __forceinline__ bool ce_owns_col(long long t, long long c0, long long c1)
{
	return t >= c0 && t < c1 &&
	       (unsigned)((unsigned long long)(t - c0) / VEC % THREADS) == threadIdx.x;
}

__device__ __forceinline__ bool ce_owns_target(const ce_row &r, long long c0, long long c1)
{
	return !r.fixed && ce_owns_col(r.t, c0, c1);
}

// The owner's read of the target's logit, before it writes the row (dx
// may be x: no other thread writes that column).
__device__ __forceinline__ float ce_target_x(const elem_t *xr, const ce_row &r, bool owner)
{
	return owner ? to_f32(xr[r.t]) : 0.0f;
}

// The owner's write of the target's gradient, after its vector's.
__device__ __forceinline__ void ce_fix_target(elem_t *dxr, const ce_row &r, bool owner, float xt)
{
	if (owner)
		dxr[r.t] = from_f32(ce_grad_target(xt, r));
}

// Calls F<CAP, SMOOTH, false>(args) for the row's options; with the cap
// SMOOTH is always set (x - +0 is x: one instantiation less, the tanh
// dominates there).
#define CE_WITH_OPTIONS(PLAIN, r, F, ...)                             \
	do {                                                          \
		if (!(PLAIN) && (r).c.cap > 0.0f)                     \
			F<true, true, false>(__VA_ARGS__);            \
		else if (!(PLAIN) && ce_smooths(r))                   \
			F<false, true, false>(__VA_ARGS__);           \
		else                                                  \
			F<false, false, false>(__VA_ARGS__);          \
	} while (0)

// The arguments of every cross_entropy kernel, in launch_cross_entropy's
// order (docs/cross-entropy.md).
#define CE_KERNEL_PARAMS                                                                   \
	elem_t *dx, const elem_t *x, const void *target, float *loss, float *lse,           \
		const float *scale, long long M, long long V, long long lddx, long long ldx, \
		long long ignore_index, float label_smoothing, float z_loss, float softcap,  \
		unsigned flags
#define CE_KERNEL_ARGS                                                                   \
	dx, x, target, loss, lse, scale, M, V, lddx, ldx, ignore_index, label_smoothing, \
		z_loss, softcap, flags

// A template's two kernels around BODY, its row code: a template <bool
// PLAIN> device function of CE_KERNEL_PARAMS. cross_entropy_kernel takes
// every option (PLAIN false); cross_entropy_plain_kernel (CE_PLAIN_KERNEL
// of dispatch/policy/row_ops.h) none of the soft-cap and label smoothing,
// whose code is compiled out of it (ce_options_of: constants that fold),
// so that it does not set its registers; launch_cross_entropy takes it
// for such calls. ATTRS, PLAIN_ATTRS: each one's __cluster_dims__ and
// __launch_bounds__.
#define CE_KERNELS(ATTRS, PLAIN_ATTRS, BODY)                                           \
	extern "C" __global__ void ATTRS cross_entropy_kernel(CE_KERNEL_PARAMS)          \
	{                                                                              \
		BODY<false>(CE_KERNEL_ARGS);                                           \
	}                                                                              \
	extern "C" __global__ void PLAIN_ATTRS cross_entropy_plain_kernel(CE_KERNEL_PARAMS) \
	{                                                                              \
		BODY<true>(CE_KERNEL_ARGS);                                            \
	}

// The soft-cap and label smoothing a body computes with: none in the
// plain kernel.
template <bool PLAIN>
__device__ __forceinline__ void ce_options_of(float softcap, float label_smoothing, ce_cap &cap,
					      float &ls)
{
	cap = ce_cap_of(PLAIN ? 0.0f : softcap);
	ls = PLAIN ? 0.0f : label_smoothing;
}

// A fixed row's gradient over [c0, c1) (every element r.value, vector k
// by thread k % THREADS): no logit read; whole vectors, then the masked
// rest.
__device__ __forceinline__ void ce_fill(elem_t *dxr, long long c0, long long c1, bool vec_ok,
					const ce_row &r)
{
	float vals[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		vals[j] = r.value;
	vec_t w;
	pack_vec(w, vals);
	long long col = c0 + (long long)threadIdx.x * VEC;
	if (vec_ok)
		for (; col + VEC <= c1; col += (long long)THREADS * VEC)
			st_vec(dxr + col, w);
	for (; col < c1; col += (long long)THREADS * VEC)
		store_vec(dxr, col, c1, vec_ok, vals);
}

// Programmatic dependent launch (the library launches the row kernel so
// after prepare, and reduce after the row kernel, where the code defines
// cross_entropy_dependent_launch): a kernel so launched may start before
// the one it follows has finished, and waits here, before reading what
// that one wrote. Without it (the tuner's launches, sm_80) a no-op.
__device__ __forceinline__ void ce_wait_for_prior_kernel()
{
#if __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernel after this one (reduce, launched dependent) start once
// every CTA of this grid has started and waited for prepare: a grid of one
// row a CTA then starts reduce during its last wave, whose idle
// multiprocessors take its CTA, and reduce overlaps the tail (it polls the
// rows' losses, or older code's waits for this grid's end). A persistent
// grid's CTAs all start at once, so it lets reduce start only at its end,
// as before, rather than hold a multiprocessor through the whole grid.
// Without a dependent launch, a no-op.
__device__ __forceinline__ void ce_start_dependents()
{
#if __CUDA_ARCH__ >= 900 && !(defined(PERSISTENT) && PERSISTENT)
	asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// The row's scale: *scale, read by every CTA (NULL: 1), once prepare, the
// kernel before, has written it: a body reads it after issuing its first
// loads, which then overlap prepare (the cluster templates between their
// CTA's sums and the cluster's merge: ce_cluster_finish). Reduce may start only after: it polls
// the losses prepare marked pending (a grid of one wave would otherwise
// start it before prepare has marked them).
__device__ __forceinline__ float ce_scale(const float *scale)
{
	ce_wait_for_prior_kernel();
	ce_start_dependents();
	return scale ? *scale : 1.0f;
}

// A row (or slice) that does not start on a vector boundary is peeled: its
// head, up to x's first boundary, taken by CE_HEAD_THREAD alone, element
// by element; the rest in whole vectors from there. The head's thread is
// the last, which the tail leaves the fewest vectors.
#define CE_HEAD_THREAD (THREADS - 1)

// The head of [c0, c1) of the row xr (dxr: dx's row, or xr when dx is not
// written): the elements before x's first vector boundary, at most VEC - 1
// (0 when aligned), or -1 when dx's offset differs (the scalar path).
__device__ __forceinline__ long long ce_head(const elem_t *xr, const elem_t *dxr, long long c0,
					     long long c1)
{
	const unsigned vb = VEC * (unsigned)sizeof(elem_t);
	const unsigned ox = (unsigned)((unsigned long long)(xr + c0) % vb);
	if (ox != (unsigned)((unsigned long long)(dxr + c0) % vb) || ox % sizeof(elem_t))
		return -1;
	const long long h = (long long)((vb - ox) % vb / (unsigned)sizeof(elem_t));
	return h < c1 - c0 ? h : c1 - c0;
}

// The head's h elements at xr (h < VEC, the rest -inf), as load_vec's
// masked read.
__device__ __forceinline__ vec_t ce_head_vec(const elem_t *xr, long long h)
{
	vec_t v;
	load_vec(v, xr, 0, h, false);
	return v;
}

// ---- the one-CTA kernels around the row kernel (docs/cross-entropy.md) ----

// The workspace: ws[0] the gradient's scale; long longs at byte 8 n_valid,
// 16 the out-of-range targets, 24 the first such row (-1: none); from byte
// 32 (float CE_WS_LOSSES) the M row losses that reduce sums.
#define CE_WS_N_VALID 1
#define CE_WS_N_BAD 2
#define CE_WS_FIRST_BAD 3
#define CE_WS_LOSSES 8
#define CE_ONE_CTA_MAX 1024

// Sums of a warp by a fixed butterfly (the same order every launch).
__device__ __forceinline__ long long ce_warp_sum_ll(long long v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ double ce_warp_sum_d(double v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// The smallest of a warp's rows, -1 standing for none.
__device__ __forceinline__ long long ce_warp_first(long long f)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		const long long g = __shfl_xor_sync(0xffffffffu, f, o);
		if (g >= 0 && (f < 0 || g < f))
			f = g;
	}
	return f;
}

// Rows a thread of the one-CTA kernels reads at once: their loads issued
// together, one latency for each CE_ONE_CTA_UNROLL of them (a load, then
// its use, a row at a time cost a latency a row: ~5-10 us a call at 4096
// rows on 256 threads).
#define CE_ONE_CTA_UNROLL 8

// The targets of rows base, base + T, ... (CE_ONE_CTA_UNROLL of them;
// ignore_index past M), their loads issued together.
__device__ __forceinline__ void ce_prepare_targets(long long *t, const void *target, long long base,
						   long long T, long long M, long long ignore_index,
						   unsigned flags)
{
#pragma unroll
	for (int k = 0; k < CE_ONE_CTA_UNROLL; k++)
		t[k] = base + k * T < M ? ce_target(target, base + k * T, flags) : ignore_index;
}

// Counts the valid and the out-of-range targets, writes the scale
// (upstream / n_valid for a mean, upstream otherwise) and marks the row
// losses of the workspace pending. Any block size that is a multiple of
// 32, up to 1024; integers, so the order does not matter.
extern "C" __global__ void __launch_bounds__(CE_ONE_CTA_MAX)
cross_entropy_prepare_kernel(float *ws, const void *target, long long M, long long V,
			     long long ignore_index, float upstream, int mean, unsigned flags)
{
	__shared__ long long part[3][32];
	long long nv = 0, nb = 0, f = -1;
	const long long T = blockDim.x;
	unsigned *pending = (unsigned *)ws + CE_WS_LOSSES;
	long long t[CE_ONE_CTA_UNROLL];
	ce_prepare_targets(t, target, threadIdx.x, T, M, ignore_index, flags);
#if __CUDA_ARCH__ >= 900
	// the row kernel may start now (it reads the scale only after waiting),
	// behind the first targets' reads: issued after its launch, they queued
	// behind its first wave's loads (prepare ended ~5 us into the call)
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
	for (long long r = threadIdx.x; r < M; r += T)
		pending[r] = CE_LOSS_PENDING;
	for (long long base = threadIdx.x; base < M; base += CE_ONE_CTA_UNROLL * T) {
		if (base != threadIdx.x)
			ce_prepare_targets(t, target, base, T, M, ignore_index, flags);
#pragma unroll
		for (int k = 0; k < CE_ONE_CTA_UNROLL; k++) {
			if (t[k] == ignore_index)
				continue;
			if (t[k] >= 0 && t[k] < V) {
				nv++;
			} else {
				nb++;
				if (f < 0) // rows rise with k: the first is this thread's least
					f = base + k * T;
			}
		}
	}
	nv = ce_warp_sum_ll(nv);
	nb = ce_warp_sum_ll(nb);
	f = ce_warp_first(f);
	if (threadIdx.x % 32 == 0) {
		part[0][threadIdx.x / 32] = nv;
		part[1][threadIdx.x / 32] = nb;
		part[2][threadIdx.x / 32] = f;
	}
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	for (unsigned k = 1; k < blockDim.x / 32; k++) {
		nv += part[0][k];
		nb += part[1][k];
		if (part[2][k] >= 0 && (f < 0 || part[2][k] < f))
			f = part[2][k];
	}
	long long *w = (long long *)ws;
	ws[0] = mean ? upstream / (float)nv : upstream;
	w[CE_WS_N_VALID] = nv;
	w[CE_WS_N_BAD] = nb;
	w[CE_WS_FIRST_BAD] = f;
}

// out[0] = the sum of the M losses in double / (mean ? n_valid : 1).
// Deterministic for a given block size T (a multiple of 32): thread k sums
// rows k, k + T, k + 2T, ... in that order, each warp its threads' sums by
// a fixed butterfly, then the first warp the warps' sums by the same.
extern "C" __global__ void __launch_bounds__(CE_ONE_CTA_MAX)
cross_entropy_reduce_kernel(float *out, const float *loss, long long M, const float *ws,
			    int mean)
{
	ce_wait_for_prior_kernel(); // the row kernel's losses
	__shared__ double part[32];
	// read with the losses, not after the sum: its latency is the call's
	const long long nv = mean && threadIdx.x == 0 ? ((const long long *)ws)[CE_WS_N_VALID] : 1;
	const long long T = blockDim.x;
	double s = 0.0;
	for (long long base = threadIdx.x; base < M; base += CE_ONE_CTA_UNROLL * T) {
		float v[CE_ONE_CTA_UNROLL];
#pragma unroll
		for (int k = 0; k < CE_ONE_CTA_UNROLL; k++)
			v[k] = base + k * T < M ? loss[base + k * T] : 0.0f;
#pragma unroll
		for (int k = 0; k < CE_ONE_CTA_UNROLL; k++)
			s += (double)v[k];
	}
	s = ce_warp_sum_d(s);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = s;
	__syncthreads();
	if (threadIdx.x >= 32)
		return;
	s = ce_warp_sum_d(threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0);
	if (threadIdx.x == 0)
		out[0] = (float)(mean ? s / (double)nv : s);
}

// The loss at p once its row kernel has stored it (ce_store_loss): polled,
// GPU scope, with a bound. Past CE_POLL_LIMIT_NS a row was never written
// (code that does not store every row, which the marker rules out): a trap,
// an error the call's stream reports, rather than a kernel spinning for
// ever.
#define CE_POLL_LIMIT_NS 30000000000ull

__device__ __forceinline__ unsigned long long ce_global_ns()
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__device__ __forceinline__ unsigned ce_load_polled(const float *p)
{
	unsigned v;
	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ float ce_loss_when_stored(const float *p, unsigned v,
						     unsigned long long t0)
{
	while (v == CE_LOSS_PENDING) {
		if (ce_global_ns() - t0 > CE_POLL_LIMIT_NS)
			__trap();
		__nanosleep(64);
		v = ce_load_polled(p);
	}
	return __uint_as_float(v);
}

// reduce's sum (the same order, so the same result) of losses read as the
// row kernel stores them rather than once it has ended: launched dependent,
// it starts during the row kernel's last wave and is done when the last
// row's loss is, before that row's gradient. It waits for the row kernel
// at its end, so that what follows it in the stream follows the row
// kernel too. Only for row kernels that store losses so
// (cross_entropy_losses_polled); prepare marks them pending.
extern "C" __global__ void __launch_bounds__(CE_ONE_CTA_MAX)
cross_entropy_reduce_polled_kernel(float *out, const float *loss, long long M, const float *ws,
				   int mean)
{
	__shared__ double part[32];
	const long long nv = mean && threadIdx.x == 0 ? ((const long long *)ws)[CE_WS_N_VALID] : 1;
	const long long T = blockDim.x;
	const unsigned long long t0 = ce_global_ns();
	double s = 0.0;
	for (long long base = threadIdx.x; base < M; base += CE_ONE_CTA_UNROLL * T) {
		unsigned v[CE_ONE_CTA_UNROLL];
#pragma unroll
		for (int k = 0; k < CE_ONE_CTA_UNROLL; k++)
			v[k] = base + k * T < M ? ce_load_polled(loss + base + k * T) : 0u;
#pragma unroll
		for (int k = 0; k < CE_ONE_CTA_UNROLL; k++)
			s += (double)ce_loss_when_stored(loss + base + k * T, v[k], t0);
	}
	s = ce_warp_sum_d(s);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = s;
	__syncthreads();
	if (threadIdx.x < 32) {
		s = ce_warp_sum_d(threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0);
		if (threadIdx.x == 0)
			out[0] = (float)(mean ? s / (double)nv : s);
	}
	ce_wait_for_prior_kernel();
}

// Says that this code's row kernels store each row's loss as
// cross_entropy_reduce_polled_kernel polls for it, and let reduce start
// only once they have waited for prepare: the library launches that reduce
// for them. Never launched.
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void cross_entropy_losses_polled() {}
#endif

// Says that this code's row and reduce kernels wait for the kernel before
// them (ce_wait_for_prior_kernel) and prepare lets the row kernel start:
// the library launches them as dependent launches only then (a database's
// older code would read the scale before prepare wrote it). Never launched.
// Only in code that has the waits: PTX for an older architecture, compiled
// by the driver for a newer GPU, has neither.
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void cross_entropy_dependent_launch() {}
#endif

// The gradient's rows times the upstream gradient g, read on the device
// (the loss's grad in autograd's backward: g[0] for a reduced loss, g[row]
// per row): a row whose factor is 1 is not touched, so after a fused
// forward the common case (loss.backward() of a mean) costs a launch and
// one read of g, no pass over the gradient and no wait for the GPU to say
// whether g is 1. It waits for the kernel before it (autograd's fill of g,
// when launched dependent) before reading g, so that its launch overlaps
// that kernel. Any grid and block size up to CE_SCALE_THREADS (the library
// launches few CTAs, as large as the code allows: each CTA costs the
// common case time; older code's took 256 threads).
#define CE_SCALE_THREADS 1024
#define CE_SCALE_UNROLL 4

// 16 bytes of elements, each times s.
__device__ __forceinline__ uint4 ce_scale_words(uint4 w, float s)
{
	union {
		uint4 u;
		elem_t e[16 / sizeof(elem_t)];
	} v;
	v.u = w;
#pragma unroll
	for (unsigned i = 0; i < 16 / sizeof(elem_t); i++)
		v.e[i] = from_f32(to_f32(v.e[i]) * s);
	return v.u;
}

// A row of V elements times s, by the CTA: its head to a 16-byte boundary
// and its tail element by element, the rest 16 bytes a load, CE_SCALE_UNROLL
// loads a thread in flight.
__device__ __forceinline__ void ce_scale_row(elem_t *r, long long V, float s)
{
	const long long T = blockDim.x;
	const unsigned per = 16 / sizeof(elem_t);
	long long head = (long long)((16u - (unsigned)((unsigned long long)r % 16u)) % 16u /
				     sizeof(elem_t));
	head = head < V ? head : V;
	const long long words = (V - head) / per;
	uint4 *w = (uint4 *)(r + head);
	for (long long j = threadIdx.x; j < head; j += T)
		r[j] = from_f32(to_f32(r[j]) * s);
	for (long long k = threadIdx.x; k < words; k += CE_SCALE_UNROLL * T) {
		uint4 v[CE_SCALE_UNROLL];
#pragma unroll
		for (int u = 0; u < CE_SCALE_UNROLL; u++)
			if (k + u * T < words)
				v[u] = w[k + u * T];
#pragma unroll
		for (int u = 0; u < CE_SCALE_UNROLL; u++)
			if (k + u * T < words)
				w[k + u * T] = ce_scale_words(v[u], s);
	}
	for (long long j = head + words * per + threadIdx.x; j < V; j += T)
		r[j] = from_f32(to_f32(r[j]) * s);
}

extern "C" __global__ void __launch_bounds__(CE_SCALE_THREADS)
cross_entropy_scale_kernel(elem_t *dx, long long M, long long V, long long lddx, const float *g,
			   int per_row)
{
	ce_wait_for_prior_kernel();
	if (!per_row && g[0] == 1.0f)
		return;
	for (long long row = blockIdx.x; row < M; row += gridDim.x) {
		const float s = per_row ? g[row] : g[0];
		if (s != 1.0f)
			ce_scale_row(dx + row * lddx, V, s);
	}
}

// Says that the scale kernel waits for the kernel before it: the library
// launches it as a dependent launch only then. Never launched.
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void cross_entropy_scale_waits() {}
#endif
