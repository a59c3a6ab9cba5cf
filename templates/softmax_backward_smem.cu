// Template softmax_backward_smem: the softmax (and log_softmax) backward
// with one CTA a row in two passes, y and dy staged in dynamic shared
// memory by cp.async (16-byte, L1-bypassing), issued for the whole row at
// once: y and dy are read from global memory once (2 reads + 1 write an
// element, against softmax_backward_loop's 4 + 1), with a row's worth of
// bytes in flight rather than a loop step's. Pass 1 sums the row from
// shared memory (in double, softmax_backward_common.cuh), pass 2 writes dx
// from it. Regime: N from about 8K up to what shared memory holds (227 KB
// a CTA on the H100/H200: 29K f32, 58K f16/bf16 pairs of y and dy), and
// past that with the rest of the row read twice from global memory, up to
// 2.5 times that (softmax_backward_cluster reads such rows once, cut over
// several CTAs).
//
// Ownership (as softmax_smem): the row is cut into 16-byte chunks and chunk
// c of y and of dy belongs to thread c % THREADS, which copies, sums and
// writes it, whatever the row. A thread reads only shared memory it filled
// itself, so no barrier guards the staging (cp.async.wait_group makes its
// own copies visible to it) nor a slot's refill (its last read fed a dx
// store issued before the copy). dx may be y or dy: each element is read
// (staged, or the unstaged tail in both passes) by the thread that writes
// it, before it writes it; a prefetch reads another row (rows must not
// overlap, as everywhere).
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per chunk (VEC * element size = 16 B)
//   STAGES      row buffers: 2 issues the next row's copy before this row is
//               summed and written (both rows must fit)
//   REFILL      1 (STAGES 1): each slot takes the next row's chunk as soon as
//               its dx is written, so the next row's loads overlap this
//               row's writes in one buffer
//   GROUPS      commit groups a row: the sum starts on the first part while
//               the rest arrives
//   UNROLL      vectors of each input a thread loads per step of the
//               unstaged tail (rows longer than the buffer, misaligned rows)
//   PERSISTENT  0: one row per CTA; 1: occupancy-sized grid that loops
//   CTAS_PER_SM CTAs a multiprocessor holds (shared memory and registers)
//   CACHE_HINT  1: evict-first copies, loads and stores (every byte once)
//   PEEL        1: rows peeled to windows (below); 0: the rows of an
//               aligned launch as they are, a misaligned one element by
//               element (the manifest peels exactly the rows that are not
//               whole vectors: on aligned rows the peel's extra pass cost
//               refilling variants up to 1.5x, bf16 4096 x 4096 on the H200)
//
// Dynamic shared memory: STAGES buffers of S vectors of y then S of dy,
// S = the launch's size / (32 STAGES): ceil(N / VEC) (peeled, of N + VEC - 1),
// or what a CTA's share has (chunks past S read from global memory twice).
//
// With PEEL, rows that start k elements past a 16-byte boundary (N not a
// multiple of VEC: every row but the first) are peeled: chunk c is the window of
// memory [c VEC, (c + 1) VEC) from the boundary below the row's start, so
// that every window but the first and the last is one 16-byte access
// (softmax_row_windows.cuh's layout). The partial ones are read and
// written element by element, the elements outside the row zero-filled
// and never written. Before, such rows staged nothing and went element by
// element: f16 2482 x 79668 at 0.23 of a copy, 2.3 times torch.compile's
// time (H200, drawn shapes, results/h200/softmax-backward-draw-1796023764-h200.csv).
// The three tensors' rows must start at one offset (grads_coaligned: true
// for one shape and stride); launches that are not stage nothing and go
// element by element (S taken as 0).
#include "softmax_backward_common.cuh"
#include "softmax_cp_async.cuh"

#define WARPS (THREADS / 32)

#ifndef PEEL
#define PEEL 0
#endif

#ifndef GROUPS
#define GROUPS 1
#endif
#ifndef REFILL
#define REFILL 0
#endif

static_assert(VEC * sizeof(elem_t) == 16, "a chunk is one 16-byte access");
static_assert(STAGES == 1 || STAGES == 2, "one or two row buffers");
static_assert(STAGES == 1 || REFILL == 0, "two buffers need no refill");
static_assert(GROUPS >= 1 && GROUPS * STAGES <= 8,
	      "commit groups in flight must fit cp.async.wait_group's immediate");

#include "softmax_backward_reduce.cuh"

// buffer b: y's chunks at [2bS, 2bS + S), dy's at [2bS + S, 2(b+1)S); a
// warp's 16-byte accesses fall on consecutive chunks (no bank conflicts)
extern __shared__ __align__(16) vec_t sbw_buf[];

// A staged chunk as one 16-byte shared-memory read (a vector of 16-bit
// elements might be read piecewise).
__device__ __forceinline__ vec_t ld_chunk(const vec_t *buf, int c)
{
	const uint4 w = reinterpret_cast<const uint4 *>(buf)[c];
	vec_t v;
	*reinterpret_cast<uint4 *>(&v) = w;
	return v;
}

// Chunks i < own_chunks(n) of the n staged are this thread's:
// c = threadIdx.x + i * THREADS; commit group g holds i in [g kg, (g+1) kg).
__device__ __forceinline__ int own_chunks(int n)
{
	return (n - (int)threadIdx.x + THREADS - 1) / THREADS;
}

// A row's peel: its windows start at base = the row's start - k.
struct row_windows {
	const elem_t *y, *dy; // the rows' bases
	int k;
};

__device__ __forceinline__ row_windows windows_of(const elem_t *yr, const elem_t *gr)
{
	const int k = PEEL ? vec_offset(yr) : 0; // coaligned: dy's and dx's rows the same
	return { yr - k, gr - k, k };
}

// Issues the copy of window c of y's and dy's rows into buf (y) and
// buf + S (dy), where it is whole; peeled, partial_windows takes the
// others; unpeeled, the only partial one (the row's last, N % VEC) is
// loaded here element by element, zero-filled (zeros add nothing to r).
__device__ __forceinline__ void issue_chunk(vec_t *buf, int S, int c, row_windows w, long long N,
					    unsigned long long pol)
{
	const long long col = (long long)c * VEC;
	if (window_in_row<PEEL>(col, w.k, N, true)) {
		const unsigned b = shared_addr(buf + c);
		cp_async16(b, w.y + col, pol);
		cp_async16(b + (unsigned)S * 16u, w.dy + col, pol);
	} else if (!PEEL) {
		vec_t yv, gv;
		load_window0<false>(yv, w.y, col, 0, N, false);
		load_window0<false>(gv, w.dy, col, 0, N, false);
		buf[c] = yv;
		buf[S + c] = gv;
	}
}

// This thread's staged windows that are not whole (a row's head and tail,
// and windows past a row that starts nearer its boundary than others),
// element by element, zero-filled (zeros add nothing to r). Taken after
// the thread's copies are issued: their loads wait for their data, and
// waiting first held the thread's copies back (thread 0 owns every head).
__device__ __forceinline__ void partial_windows(vec_t *buf, int S, int staged, row_windows w,
						long long N)
{
	const int own = own_chunks(staged);
#pragma unroll 1
	for (int i = 0; i < own; i++) {
		const int c = threadIdx.x + i * THREADS;
		const long long col = (long long)c * VEC;
		if (window_in_row<true>(col, w.k, N, true))
			continue;
		vec_t yv, gv;
		load_window0<true>(yv, w.y, col, w.k, N, false);
		load_window0<true>(gv, w.dy, col, w.k, N, false);
		buf[c] = yv;
		buf[S + c] = gv;
	}
}

// Issues the copy of this thread's staged chunks of a row, in GROUPS
// commit groups (every group committed, empty or not: the waits count them).
__device__ __forceinline__ void issue_row(vec_t *buf, int S, int staged, int kg, const elem_t *yr,
					  const elem_t *gr, long long N, unsigned long long pol)
{
	const int own = own_chunks(staged);
	const row_windows w = windows_of(yr, gr);
#pragma unroll 1 // a group loop unrolled took 72-128 registers (f32 spilled)
	for (int g = 0; g < GROUPS; g++) {
		const int i1 = min((g + 1) * kg, own);
#pragma unroll 2
		for (int i = g * kg; i < i1; i++)
			issue_chunk(buf, S, threadIdx.x + i * THREADS, w, N, pol);
		cp_async_commit();
	}
	if (PEEL)
		partial_windows(buf, S, staged, w, N);
}

// This thread's part of r over its staged chunks, waiting for each commit
// group before reading it; `later` groups were committed after the row's.
__device__ __forceinline__ grad_acc_t sum_staged(const vec_t *buf, int S, int staged, int kg,
						 int later)
{
	const int own = own_chunks(staged);
	grad_acc_t r = 0;
#pragma unroll 1
	for (int g = 0; g < GROUPS; g++) {
		cp_async_wait(GROUPS - 1 - g + later);
		const int i1 = min((g + 1) * kg, own);
#pragma unroll 2
		for (int i = g * kg; i < i1; i++) {
			const int c = threadIdx.x + i * THREADS;
			r += vec_terms(ld_chunk(buf, c), ld_chunk(buf + S, c));
		}
	}
	return r;
}

// dx for this thread's staged chunks (dxb: dx's row base, peeled as the
// row's k); with REFILL and a next row (ny), each slot then takes the next
// row's chunk, in the same commit groups.
__device__ __forceinline__ void write_staged(elem_t *dxb, int k, vec_t *buf, int S, int staged,
					     int kg, long long N, grad_r_t rw, const elem_t *ny,
					     const elem_t *ng, unsigned long long pol)
{
	const int own = own_chunks(staged);
	const row_windows next = windows_of(ny, ng); // used only with ny
#pragma unroll 1
	for (int g = 0; g < GROUPS; g++) {
		const int i1 = min((g + 1) * kg, own);
#pragma unroll 2
		for (int i = g * kg; i < i1; i++) {
			const int c = threadIdx.x + i * THREADS;
			store_grads_window<PEEL>(dxb, (long long)c * VEC, k, N, true, ld_chunk(buf, c),
						 ld_chunk(buf + S, c), rw);
			if (REFILL && ny)
				issue_chunk(buf, S, c, next, N, pol);
		}
		if (REFILL && ny)
			cp_async_commit();
	}
	if (PEEL && REFILL && ny)
		partial_windows(buf, S, staged, next, N);
}

// The unstaged chunks [c0 - its offset, nch) of this thread (c0 its first):
// from global memory in both passes, UNROLL pairs in flight a step; whole
// windows as vectors where the launch is coaligned.
__device__ __forceinline__ grad_acc_t sum_tail(row_windows w, long long c0, long long nch,
					       long long N, bool vec_ok)
{
	grad_acc_t r = 0;
	for (long long c = c0; c < nch; c += (long long)THREADS * UNROLL) {
		vec_t yv[UNROLL], gv[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = (c + (long long)u * THREADS) * VEC;
			load_window0<PEEL>(yv[u], w.y, col, w.k, N, vec_ok);
			load_window0<PEEL>(gv[u], w.dy, col, w.k, N, vec_ok);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			r += vec_terms(yv[u], gv[u]);
	}
	return r;
}

__device__ __forceinline__ void write_tail(elem_t *dxb, row_windows w, long long c0, long long nch,
					   long long N, bool vec_ok, grad_r_t rw)
{
	for (long long c = c0; c < nch; c += (long long)THREADS * UNROLL) {
		vec_t yv[UNROLL], gv[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = (c + (long long)u * THREADS) * VEC;
			load_window0<PEEL>(yv[u], w.y, col, w.k, N, vec_ok);
			load_window0<PEEL>(gv[u], w.dy, col, w.k, N, vec_ok);
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const long long col = (c + (long long)u * THREADS) * VEC;
			if (col < N + w.k)
				store_grads_window<PEEL>(dxb, col, w.k, N, vec_ok, yv[u], gv[u], rw);
		}
	}
}

// CTAS_PER_SM bounds the registers so that the CTAs the shared memory
// was sized for fit.
extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	__shared__ grad_acc_t slot[2][32]; // taken in turn, as in softmax_backward_block
	const bool vec_ok = PEEL ? grads_coaligned(dx, lddx, y, ldy, dy, lddy)
				 : grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const int S = vec_ok ? (int)(dynamic_smem_bytes() / (STAGES * 2 * sizeof(vec_t))) : 0;
	// windows a row spans, at most: N + its k elements from a boundary (k
	// the same in every row when the rows' stride is whole vectors)
	const int kmax = !PEEL || !vec_ok ? 0 : ldy % VEC == 0 ? vec_offset(y) : VEC - 1;
	const long long nch = (N + kmax + VEC - 1) / VEC;
	const int staged = (int)min(nch, (long long)S);
	const int kg = ((staged + THREADS - 1) / THREADS + GROUPS - 1) / GROUPS;
	// this thread's first unstaged chunk (its chunks are threadIdx.x mod THREADS)
	const long long c0 = staged + (threadIdx.x + THREADS - staged % THREADS) % THREADS;
	const unsigned long long pol = copy_policy();
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	long long row = blockIdx.x;
#if STAGES == 2 || REFILL
	if (row < M)
		issue_row(sbw_buf, S, staged, kg, y + row * ldy, dy + row * lddy, N, pol);
	else
		for (int g = 0; g < GROUPS; g++)
			cp_async_commit();
#endif
	for (int k = 0; row < M; row += step, k ^= 1) {
		const elem_t *yr = y + row * ldy, *gr = dy + row * lddy;
		const bool next = row + step < M;
		vec_t *const cur = STAGES == 2 && k ? sbw_buf + 2 * S : sbw_buf;
#if STAGES == 2
		// the next row to the other buffer, whose last reads (this thread's,
		// for the previous row) fed stores issued before
		if (next)
			issue_row(k ? sbw_buf : sbw_buf + 2 * S, S, staged, kg, yr + step * ldy,
				  gr + step * lddy, N, pol);
		else
			for (int g = 0; g < GROUPS; g++)
				cp_async_commit();
		const int later = GROUPS;
#elif REFILL
		const int later = 0; // this row's copy was issued by the last one's writes
#else
		issue_row(cur, S, staged, kg, yr, gr, N, pol);
		const int later = 0;
#endif
		// misaligned launches: k = 0, element by element (vec_ok false)
		row_windows w = windows_of(yr, gr);
		if (!vec_ok)
			w = { yr, gr, 0 };
		grad_acc_t r = sum_staged(cur, S, staged, kg, later);
		r += sum_tail(w, c0, nch, N, vec_ok);
		const grad_r_t rw = acc_final(cta_sum_acc(r, slot[k]));
		elem_t *dxb = dx + row * lddx - w.k;
		write_staged(dxb, w.k, cur, S, staged, kg, N, rw, next ? yr + step * ldy : nullptr,
			     gr + step * lddy, pol);
		write_tail(dxb, w, c0, nch, N, vec_ok, rw);
	}
	cp_async_wait(0); // nothing may be in flight into shared memory at exit
}
