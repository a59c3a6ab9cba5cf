// Template softmax_cluster_regs: each row cut over a thread-block cluster of
// CLUSTER CTAs (sm_90+), each CTA's slice held in registers: softmax_block's
// way of reading a row, stretched over a cluster. Every thread issues all
// its 16-byte loads at once; the CTA reduces the row's max and sum over
// its slice (MAX_FIRST: the max, then the sum; else (max, sum) pairs
// merged), and the cluster's CTAs push their partials into each other's
// shared memory and merge them in rank order (softmax_cluster_sync.cuh:
// deterministic). Each thread then scales the exponentials it kept (or,
// PACKED, computes them again from the packed values) and writes them: the
// row read once and written once.
// Regime: rows of 16K-1M elements (M large), too long for one CTA's
// registers; unlike softmax_cluster, no shared-memory staging (no second
// pass over shared memory, no cp.async), and a CTA needs only registers, so
// one CTA's loads overlap another's reduction on the same multiprocessor.
//
// Layout: the row is peeled into 16-byte windows (softmax_peel.cuh). Only
// whole windows are held: windows 1, 2, ... (0, 1, ... when the row starts
// on a 16-byte boundary) in order, rank by rank: CTA r holds the
// ITERS * THREADS windows from r * ITERS * THREADS, thread t its
// i * THREADS + t-th (consecutive threads, consecutive windows); a slot
// past the last whole window holds -inf and writes nothing. The partial
// head and tail windows belong to thread 0 of rank 0, which merges them
// into its CTA's partial and reads them again to write them, rather than
// holding them across the exchange of partials. So CLUSTER * THREADS *
// ELEMS_PER_THREAD >= N elements always fit, whatever the row's alignment.
// y is written by the same windows when it is as far from a 16-byte
// boundary as x (the usual case), else element by element. In place
// (y == x) works: a CTA reads all of its slice before it sends its partial,
// and writes only its own windows.
//
// NaN and infinities propagate as in softmax_online_merge.cuh; a row of
// -inf gives NaN (exp2(-inf - -inf)), as PyTorch does.
//
// Launch: one cluster per row (grid = M x CLUSTER, the cluster size fixed
// at compile time by __cluster_dims__); a cluster of 16 is non-portable
// (launch_grid allows it).
//
// Parameters (macros set by the generator):
//   CLUSTER           CTAs per row, the cluster size (2, 4, 8 or 16)
//   THREADS           threads per CTA
//   VEC               elements per 16-byte access (VEC * element size == 16)
//   ELEMS_PER_THREAD  elements each thread holds (a multiple of VEC)
//   CACHE_HINT        1: evict-first loads with an L2 prefetch, evict-first stores
//   PACKED            1 (half precision): the slice stays packed in registers
//                     until it is written, its exponentials computed twice
//   MAX_FIRST         1: the CTA's max, then its sum (two CTA barriers);
//                     0: each thread's (max, sum) pair, merged (one barrier,
//                     two exps a merge); which is faster depends on the shape
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)
#define ITERS (ELEMS_PER_THREAD / VEC)

#include "softmax_peel.cuh"
#include "softmax_window.cuh"
#include "softmax_online_merge.cuh"
#include "softmax_cluster_sync.cuh"
#include "softmax_cta_reduce.cuh"

static_assert(VEC * sizeof(elem_t) == 16, "a window is one 16-byte access");
static_assert(ELEMS_PER_THREAD % VEC == 0, "a thread holds whole windows");

// The peel window (softmax_peel.cuh) of this thread's i-th held window;
// `first` is 1 when window 0 is the head, kept out of the held ones.
__device__ __forceinline__ long long held_window(unsigned rank, int i, int first)
{
	return ((long long)rank * ITERS + i) * THREADS + threadIdx.x + first;
}

// Windows [first, whole_end(n, kx)) of a row peeled k = kx are whole.
__device__ __forceinline__ long long whole_end(long long n, int kx)
{
	return (n + kx) / VEC;
}

// The row's tail window: whole_end when it is partial and not the head too
// (a row inside one window is all head); -1 when there is none.
__device__ __forceinline__ long long tail_window(long long n, int kx)
{
	const long long t = whole_end(n, kx);
	return (n + kx) % VEC != 0 && (t > 0 || kx == 0) ? t : -1;
}

// Issues every load of this thread's whole windows of the row xa (the
// 16-byte boundary at or below the row's start, kx elements before it).
// The head and tail windows read -inf here: they are the edge holders'
// (edge_merge). One code path, a 16-byte access or none, per window: a
// scalar fallback in the held loads made ptxas keep twice the registers
// when the slice is held packed.
__device__ __forceinline__ void load_held(vec_t *raw, const elem_t *xa, long long n, int kx,
					  unsigned rank)
{
	const long long end = whole_end(n, kx);
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		const long long c = held_window(rank, i, kx > 0);
		if (c < end) {
			raw[i] = ld_vec(xa + c * VEC);
		} else {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				raw[i].v[j] = elem_neg_inf();
		}
	}
}

// The max of this thread's values (-inf outside the row), from the loaded
// vectors (vec_max: packed in half precision, fewer registers).
__device__ __forceinline__ float held_max(const vec_t *raw)
{
	float m = NEG_INF_F;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
		m = fmaxf(m, vec_max(raw[i]));
	return m;
}

// The sum of e^(value - ref) over the held values; ref is the CTA's
// (MAX_FIRST) or this thread's max, or 0 while that is
// -inf (then every value is -inf and its exp 0, where -inf - -inf would
// give NaN). Unless PACKED the exponentials are kept in v. Half-precision
// pairs are converted from their word (pair_to_f32: one instruction an
// element).
__device__ __forceinline__ float exponentiate(const vec_t *raw, float (*v)[VEC], float ref)
{
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int j = 0; j < VEC; j += 2) {
			float x[2];
			pair_to_f32(raw[i], j / 2, x[0], x[1]);
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const float e = held_from(x[h], ref);
#if !PACKED
				v[i][j + h] = e;
#endif
				s += held_term(e);
			}
		}
	return s;
}

// The lanes [lo, hi) of edge window c (the head or the tail) merged into
// (m, s) as (max, sum relative to it). Only its holder
// calls this; the window is read again to be written (edge_write), so it
// costs no registers across the exchange of partials.
__device__ __forceinline__ void edge_merge(float &m, float &s, const elem_t *xa, long long c,
					   int lo, int hi)
{
	vec_t raw;
	load_window(raw, xa + c * VEC, lo, hi);
	float hv[VEC];
	vec_values(raw, hv);
	float hm = NEG_INF_F;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		hm = fmaxf(hm, hv[j]);
	const float ref = hm == NEG_INF_F ? 0.0f : hm;
	float hs = 0.0f;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		hs += exp_from_max(hv[j], ref);
	merge(m, s, hm, hs);
}

// Stores the lanes [lo, hi) of window c of the row: one window of y when y
// is peeled like x (ky == kx), else element by element.
__device__ __forceinline__ void store_held(elem_t *yrow, int kx, int ky, long long c, int lo,
					   int hi, float *out)
{
	if (kx == ky) {
		store_window(yrow - ky + c * VEC, lo, hi, out);
		return;
	}
	vec_t o;
	pack_vec(o, out);
#pragma unroll
	for (int j = 0; j < VEC; j++)
		if (j >= lo && j < hi)
			yrow[c * VEC - kx + j] = o.v[j];
}

// Edge window c, read again (only its holder ever writes it, so in place
// it is still x), to y: y (out_from_max).
__device__ __forceinline__ void edge_write(elem_t *yrow, const elem_t *xa, int kx, int ky,
					   long long c, int lo, int hi, float m, float scale)
{
	vec_t raw;
	load_window(raw, xa + c * VEC, lo, hi);
	float out[VEC];
	vec_values(raw, out);
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = out_from_max(out[j], m, scale);
	store_held(yrow, kx, ky, c, lo, hi, out);
}

#if PACKED
// Half precision held as loaded (two elements a register) across the
// exchange of partials, as in softmax_block's packed=1: the sum's exps are
// not kept, and the write computes exp2((x - max) log2(e) - log2(sum)) again.
// The cluster's bookkeeping takes 6 registers more than softmax_block's
// (with 4: bf16 512 x 24 spilled 8 bytes at 32 registers, 5 x 128 x 64 82
// bytes at 56).
#define LAUNCH_BOUNDS __launch_bounds__(THREADS, HELD_CTAS(ELEMS_PER_THREAD / 2 + 6))
#else
#define LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) LAUNCH_BOUNDS
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	__shared__ float max_slot[32], sum_slot[32];
	__shared__ cluster_inbox inbox;
	inbox_init(&inbox);
	const unsigned rank = cluster_rank();
	const long long row = blockIdx.x / CLUSTER; // < M: the grid is M clusters
	const elem_t *const xrow = x + row * ldx;
	elem_t *const yrow = y + row * ldy;
	const int kx = peel_offset(xrow, (int)sizeof(elem_t));
	const int ky = peel_offset(yrow, (int)sizeof(elem_t));

	vec_t raw[ITERS];
	load_held(raw, xrow - kx, N, kx, rank);
#if PACKED
	float (*v)[VEC] = nullptr;
#else
	float v[ITERS][VEC];
#endif
#if MAX_FIRST
	// the CTA's max first, then its sum relative to it: two CTA barriers,
	// but no (max, sum) pairs to merge thread by thread (two exps each)
	const float tm = cta_max(held_max(raw), max_slot);
	float cm = tm, cs = cta_sum(exponentiate(raw, v, tm == NEG_INF_F ? 0.0f : tm), sum_slot);
#else
	// each thread's (max, sum), merged over the CTA: one CTA barrier
	const float tm = held_max(raw);
	float cm = tm, cs = exponentiate(raw, v, tm == NEG_INF_F ? 0.0f : tm);
	cta_merge(cm, cs, max_slot, sum_slot);
#endif

	// the CTA's (max, sum), with the head and tail windows of a misaligned
	// row merged in by thread 0 of rank 0; then the cluster's
	const long long tail = tail_window(N, kx);
	const bool holds_edges = rank == 0 && threadIdx.x == 0;
	if (holds_edges && kx > 0)
		edge_merge(cm, cs, xrow - kx, 0, kx, peel_hi(0, N, kx, VEC));
	if (holds_edges && tail >= 0)
		edge_merge(cm, cs, xrow - kx, tail, 0, (int)((N + kx) % VEC));
	inbox_send(&inbox, rank, cm, cs);
	inbox_total(&inbox, cm, cs);
	cm = masked_max(cm, flags);
	cs = masked_sum(cs, flags);

	const float scale = write_scale(cs);
	const long long end = whole_end(N, kx);
#if PACKED
	const float lg = fast_log2(cs);
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		const long long c = held_window(rank, i, kx > 0);
		launder(raw[i]);
		float out[VEC];
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out[j] = out_from_max_over(to_f32_again(raw[i], j), cm, lg);
		if (c < end)
			store_held(yrow, kx, ky, c, 0, VEC, out);
	}
#else
	// e^(v - tm) * e^(tm - row max) / row sum; tm the CTA's or the
	// thread's max: one of -inf values gets 0 (NaN when the whole row is
	// -inf: -inf - -inf)
	// (log_softmax holds v - ref, ref being tm or 0 for tm = -inf)
	const float factor = part_factor(LOG_OUTPUT && tm == NEG_INF_F ? 0.0f : tm, cm, scale);
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		const long long c = held_window(rank, i, kx > 0);
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[i][j] = out_from_part(v[i][j], factor);
		if (c < end)
			store_held(yrow, kx, ky, c, 0, VEC, v[i]);
	}
#endif
	if (holds_edges && kx > 0)
		edge_write(yrow, xrow - kx, kx, ky, 0, kx, peel_hi(0, N, kx, VEC), cm, scale);
	if (holds_edges && tail >= 0)
		edge_write(yrow, xrow - kx, kx, ky, tail, 0, (int)((N + kx) % VEC), cm, scale);
}
