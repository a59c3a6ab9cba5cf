// Template softmax_backward_cluster: the softmax (and log_softmax) backward
// with each row cut over a thread-block cluster of CLUSTER CTAs (sm_90+).
// Each CTA stages its slice of y and dy in shared memory by cp.async, sums
// its part of r and pushes it into every CTA's shared memory (st.async,
// softmax_cluster_sync.cuh's inbox); each CTA adds the cluster's parts in
// rank order (the same bits in every CTA), then writes its slice of dx. A
// row is read from global memory once as long as its slices fit: up to
// CLUSTER x 227 KB of y and dy (465K half-precision elements with 8 CTAs).
// Regime: rows too long for one CTA's shared memory (softmax_backward_smem
// reads the rest twice: f16 1024 x 100001 at 0.69-0.76 of a copy, H200),
// and rows of 16K-64K at few rows, where a CTA a row leaves most
// multiprocessors idle.
//
// Ownership (as softmax_backward_smem): the slice is cut into 16-byte
// windows and window c belongs to thread c % THREADS, which copies, sums
// and writes it, so no barrier guards the staging. dx may be y or dy:
// each element is read by the thread that writes it, before it writes it.
//
// Rows that are not whole vectors (PEEL) are cut into the windows of memory
// from the 16-byte boundary below the row's start (softmax_row_windows.cuh's
// layout): the windows of a row are dealt to the CTAs, ceil(windows /
// CLUSTER) each, so every element is in exactly one CTA's slice. The head
// and tail windows go element by element, the others whole.
//
// Launch: one cluster per row (grid = M x CLUSTER, the cluster size fixed
// at compile time by __cluster_dims__). Not persistent: a finished
// cluster's multiprocessors take the next row's.
//
// Parameters (macros set by the generator):
//   CLUSTER     CTAs per row, the cluster size (2, 4 or 8)
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per window (VEC * element size = 16 B)
//   CACHE_HINT  1: evict-first copies, loads and stores (every byte once)
//   PEEL        1: rows peeled to windows (above); 0: an aligned launch's
//               rows as they are, a misaligned one element by element
//
// Dynamic shared memory: S windows of y then S of dy, S = the launch's size
// / 32; a slice's windows past S are read from global memory twice.
#include "softmax_backward_common.cuh"
#include "softmax_cp_async.cuh"

#define WARPS (THREADS / 32)

#ifndef PEEL
#define PEEL 0
#endif

static_assert(VEC * sizeof(elem_t) == 16, "a window is one 16-byte access");

#include "softmax_backward_reduce.cuh"
#include "softmax_online_merge.cuh"
#include "softmax_cluster_sync.cuh"

// The cluster's parts of r, one slot a CTA, pushed by st.async.
struct grad_inbox {
	grad_acc_t slot[CLUSTER];
	unsigned long long full; // mbarrier: CLUSTER parts' bytes
};

extern __shared__ __align__(16) vec_t sbc_buf[];

// A window of the staged slice as one 16-byte shared-memory read.
__device__ __forceinline__ vec_t ld_window(const vec_t *buf, long long s)
{
	const uint4 w = reinterpret_cast<const uint4 *>(buf)[s];
	vec_t v;
	*reinterpret_cast<uint4 *>(&v) = w;
	return v;
}

// Pushes this CTA's part of r (every thread has it) to slot `rank` of every
// CTA's inbox, waits for the cluster's parts, and returns their sum, added
// in rank order by lane 0 of each warp's butterfly (the same bits in every
// CTA). A CTA may leave after this: every push to it has landed.
__device__ __forceinline__ grad_acc_t cluster_sum(grad_inbox *box, grad_acc_t r)
{
	inbox_ready();
	if (threadIdx.x == 0) {
		const unsigned slot = smem_addr(&box->slot[cluster_rank()]);
		const unsigned bar = smem_addr(&box->full);
#pragma unroll
		for (unsigned q = 0; q < CLUSTER; q++)
#if LOG_BACKWARD
			asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32"
				     " [%0], %1, [%2];"
				     :: "r"(cluster_addr(slot, q)), "f"(r), "r"(cluster_addr(bar, q))
				     : "memory");
#else
			asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f64"
				     " [%0], %1, [%2];"
				     :: "r"(cluster_addr(slot, q)), "d"(r), "r"(cluster_addr(bar, q))
				     : "memory");
#endif
	}
	inbox_wait_full(&box->full);
	const unsigned lane = threadIdx.x % 32;
	const grad_acc_t v = lane < CLUSTER ? box->slot[lane] : (grad_acc_t)0;
	return __shfl_sync(0xffffffffu, group_sum_acc<CLUSTER>(v), 0);
}

// The cluster's dims are compiled in, so a plain launch of M x CLUSTER CTAs
// makes one cluster a row.
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	__shared__ grad_acc_t slot[32];
	__shared__ grad_inbox inbox;
	// every thread of every CTA, before any CTA pushes
	inbox_arm(&inbox.full, (unsigned)(CLUSTER * sizeof(grad_acc_t)));
	const long long row = blockIdx.x / CLUSTER; // < M: the grid is M clusters
	const long long rank = cluster_rank();
	const bool vec_ok = PEEL ? grads_coaligned(dx, lddx, y, ldy, dy, lddy)
				 : grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const elem_t *const yr = y + row * ldy, *const gr = dy + row * lddy;
	const int k = PEEL && vec_ok ? vec_offset(yr) : 0; // coaligned: dy's and dx's rows too
	const elem_t *const yb = yr - k, *const gb = gr - k;
	elem_t *const dxb = dx + row * lddx - k;
	// this CTA's windows [w0, w1) of the row's, the first S of them staged
	const long long windows = (N + k + VEC - 1) / VEC;
	const long long per = (windows + CLUSTER - 1) / CLUSTER;
	const long long w0 = min(windows, rank * per), w1 = min(windows, w0 + per);
	const long long S = vec_ok ? (long long)(dynamic_smem_bytes() / (2 * sizeof(vec_t))) : 0;
	const long long staged = min(w1, w0 + S);
	const unsigned long long pol = copy_policy();
	for (long long c = w0 + threadIdx.x; c < staged; c += THREADS)
		if (window_in_row<PEEL>(c * VEC, k, N, true)) {
			const unsigned b = shared_addr(sbc_buf + (c - w0));
			cp_async16(b, yb + c * VEC, pol);
			cp_async16(b + (unsigned)S * 16u, gb + c * VEC, pol);
		}
	cp_async_commit();
	// the partial windows (a peeled row's head and tail, an unpeeled row's
	// last), element by element, zero-filled, after the copies are issued
	for (long long c = w0 + threadIdx.x; c < staged; c += THREADS)
		if (!window_in_row<PEEL>(c * VEC, k, N, true)) {
			vec_t yv, gv;
			load_window0<PEEL>(yv, yb, c * VEC, k, N, false);
			load_window0<PEEL>(gv, gb, c * VEC, k, N, false);
			sbc_buf[c - w0] = yv;
			sbc_buf[S + (c - w0)] = gv;
		}
	// the unstaged windows from global memory while the copies land
	grad_acc_t r = 0;
	for (long long c = staged + threadIdx.x; c < w1; c += THREADS) {
		vec_t yv, gv;
		load_window0<PEEL>(yv, yb, c * VEC, k, N, vec_ok);
		load_window0<PEEL>(gv, gb, c * VEC, k, N, vec_ok);
		r += vec_terms(yv, gv);
	}
	cp_async_wait(0);
	for (long long c = w0 + threadIdx.x; c < staged; c += THREADS)
		r += vec_terms(ld_window(sbc_buf, c - w0), ld_window(sbc_buf + S, c - w0));
	const grad_r_t rw = acc_final(cluster_sum(&inbox, cta_sum_acc(r, slot)));
	for (long long c = w0 + threadIdx.x; c < staged; c += THREADS)
		store_grads_window<PEEL>(dxb, c * VEC, k, N, true, ld_window(sbc_buf, c - w0),
					 ld_window(sbc_buf + S, c - w0), rw);
	for (long long c = staged + threadIdx.x; c < w1; c += THREADS) {
		vec_t yv, gv;
		load_window0<PEEL>(yv, yb, c * VEC, k, N, vec_ok);
		load_window0<PEEL>(gv, gb, c * VEC, k, N, vec_ok);
		store_grads_window<PEEL>(dxb, c * VEC, k, N, vec_ok, yv, gv, rw);
	}
}
