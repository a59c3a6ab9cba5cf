// Template softmax_cluster_regs: each row cut over a thread-block cluster of
// CLUSTER CTAs (sm_90+), each CTA's slice held in registers: softmax_block's
// way of reading a row, stretched over a cluster. Every thread issues all
// its 16-byte loads at once, reduces them to a running (max, sum), the CTA
// merges those, and the cluster's CTAs combine their partials through
// distributed shared memory in rank order (softmax_cluster_sync.cuh:
// deterministic). Each thread then scales the exponentials it kept and
// writes them: one exp per element, the row read once and written once.
// Regime: rows of 16K-512K elements (M large), too long for one CTA's
// registers; unlike softmax_cluster, no shared-memory staging (no second
// pass over shared memory, no cp.async), and a CTA needs only registers, so
// one CTA's loads overlap another's reduction on the same multiprocessor.
//
// Layout: the row is peeled into 16-byte windows (softmax_peel.cuh). The
// head window (scalar, when the row does not start on a 16-byte boundary)
// belongs to thread 0 of rank 0 beside its others, read again to be
// written rather than held across the barrier; the aligned windows
// 1, 2, ... are held in order, rank by rank: CTA r holds the
// ITERS * THREADS windows from r * ITERS * THREADS, thread t its
// i * THREADS + t-th (consecutive threads, consecutive windows). So
// CLUSTER * THREADS * ELEMS_PER_THREAD >= N elements always fit, whatever
// the row's alignment. y is written by the same windows when it is as far
// from a 16-byte boundary as x (the usual case), else element by element.
// In place (y == x) works: a CTA reads all of its slice before the cluster
// barrier, and writes only its own windows after it.
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
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)
#define ITERS (ELEMS_PER_THREAD / VEC)

#include "softmax_peel.cuh"
#include "softmax_window.cuh"
#include "softmax_online_merge.cuh"
#include "softmax_cluster_sync.cuh"

static_assert(VEC * sizeof(elem_t) == 16, "a window is one 16-byte access");
static_assert(ELEMS_PER_THREAD % VEC == 0, "a thread holds whole windows");

// The peel window (softmax_peel.cuh) of this thread's i-th held window;
// `first` is 1 when window 0 is the head, kept out of the held ones.
__device__ __forceinline__ long long held_window(unsigned rank, int i, int first)
{
	return ((long long)rank * ITERS + i) * THREADS + threadIdx.x + first;
}

// Issues every load of this thread's windows of the row xa (the 16-byte
// boundary at or below the row's start, kx elements before it).
__device__ __forceinline__ void load_held(vec_t *raw, const elem_t *xa, long long n, int kx,
					  unsigned rank)
{
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		const long long c = held_window(rank, i, kx > 0);
		load_window(raw[i], xa + c * VEC, peel_lo(c, kx), peel_hi(c, n, kx, VEC));
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

// Sets v to exp2(value * log2(e) - ref) and returns their sum; ref is this
// thread's max in log2 units, or 0 while that is -inf (then every value is
// -inf and its exp 0, where -inf - -inf would give NaN).
__device__ __forceinline__ float exponentiate(const vec_t *raw, float (*v)[VEC], float ref)
{
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			v[i][j] = fast_exp2(fmaf(to_f32(raw[i].v[j]), LOG2E_F, -ref));
			s += v[i][j];
		}
	return s;
}

// The head window's (max in log2 units, sum relative to it), merged into
// (m2, s). Only its holder calls this; the head is read again to be written
// (head_write), so it costs no registers across the cluster barrier.
__device__ __forceinline__ void merge_head(float &m2, float &s, const elem_t *xa, long long n,
					   int kx)
{
	vec_t raw;
	load_window(raw, xa, kx, peel_hi(0, n, kx, VEC));
	float hv[VEC];
	vec_values(raw, hv);
	float hm = NEG_INF_F;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		hm = fmaxf(hm, hv[j]);
	const float ref = hm == NEG_INF_F ? 0.0f : hm * LOG2E_F;
	float hs = 0.0f;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		hs += fast_exp2(fmaf(hv[j], LOG2E_F, -ref));
	merge(m2, s, hm * LOG2E_F, hs);
}

// Stores the f32 results of window c of the row: one window of y when y is
// peeled like x (ky == kx), else element by element.
__device__ __forceinline__ void store_held(elem_t *yrow, long long n, int kx, int ky, long long c,
					   float *out)
{
	const int lo = peel_lo(c, kx), hi = peel_hi(c, n, kx, VEC);
	if (kx == ky) {
		store_window(yrow - ky + c * VEC, lo, hi, out);
		return;
	}
#pragma unroll
	for (int j = 0; j < VEC; j++)
		if (j >= lo && j < hi)
			yrow[c * VEC - kx + j] = from_f32(out[j]);
}

// The head window, read again (only its holder ever writes it, so in place
// it is still x), to y: exp2(x * log2(e) - m2) * inv.
__device__ __forceinline__ void head_write(elem_t *yrow, const elem_t *xa, long long n, int kx,
					   int ky, float m2, float inv)
{
	vec_t raw;
	load_window(raw, xa, kx, peel_hi(0, n, kx, VEC));
	float out[VEC];
	vec_values(raw, out);
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = fast_exp2(fmaf(out[j], LOG2E_F, -m2)) * inv;
	store_held(yrow, n, kx, ky, 0, out);
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx)
{
	__shared__ float m_slot[WARPS], s_slot[WARPS];
	__shared__ partial_t cta_partial;
	const unsigned rank = cluster_rank();
	const long long row = blockIdx.x / CLUSTER; // < M: the grid is M clusters
	const elem_t *const xrow = x + row * ldx;
	elem_t *const yrow = y + row * ldy;
	const int kx = peel_offset(xrow, (int)sizeof(elem_t));
	const int ky = peel_offset(yrow, (int)sizeof(elem_t));

	vec_t raw[ITERS];
	load_held(raw, xrow - kx, N, kx, rank);
	const float m = held_max(raw);
	const float m2 = m * LOG2E_F; // -inf stays -inf
	float v[ITERS][VEC];
	const float s = exponentiate(raw, v, m == NEG_INF_F ? 0.0f : m2);

	// the row's (max, sum): the thread's (and the head's), the CTA's, the cluster's
	const bool holds_head = kx > 0 && rank == 0 && threadIdx.x == 0;
	float cm = m2, cs = s;
	if (holds_head)
		merge_head(cm, cs, xrow - kx, N, kx);
	cta_merge(cm, cs, m_slot, s_slot);
	if (threadIdx.x == 0) {
		cta_partial.m = cm;
		cta_partial.s = cs;
	}
	cluster_arrive();
	cluster_wait();
	cluster_total(&cta_partial, cm, cs);
	cluster_arrive(); // done reading the others' partials

	// exp2(v - m2) * exp2(m2 - row max) / row sum; a thread of -inf values
	// gets 0 (NaN when the whole row is -inf: -inf - -inf)
	const float inv = 1.0f / cs;
	const float scale = fast_exp2(m2 - cm) * inv;
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[i][j] *= scale;
		store_held(yrow, N, kx, ky, held_window(rank, i, kx > 0), v[i]);
	}
	if (holds_head)
		head_write(yrow, xrow - kx, N, kx, ky, cm, inv);
	cluster_wait(); // no CTA leaves while another may still read its partial
}
