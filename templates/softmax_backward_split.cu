// Template softmax_backward_split: the softmax (and log_softmax) backward
// for few long rows, each row cut over many CTAs of a cooperative grid
// (every CTA resident at once, the grid sized from occupancy), as
// softmax_split cuts the forward's. Each row is cut into S slices, one a
// CTA, R rows at a time (softmax_split_layout.cuh: FIT 0 spreads
// min(M, grid) rows over every CTA, FIT 1 cuts rows into enough slices that
// each fits in shared memory). A CTA stages its slice of y and dy in
// shared memory by cp.async, sums its part of r, stores it to module-global
// scratch and counts itself in at its row's arrival count
// (softmax_split_sync.cuh); the row's S CTAs wait for the count, add the S
// parts in slice order (the same bits in every CTA) and write their slices
// of dx. Rows do not wait for each other: one row's loads overlap another's
// wait, and with CTAS_PER_SM > 1 a multiprocessor's CTAs do so too.
// Regime: rows beyond a thread-block cluster's shared memory (465K
// half-precision elements with 8 CTAs: softmax_backward_cluster reads the
// rest twice, f16 62 x 1241923 at 0.49-0.55 of a copy, H200), and tens of
// rows of 100K+ elements, where a cluster a row runs in waves.
//
// Ownership (as softmax_backward_cluster): a slice is cut into 16-byte
// windows and window c belongs to thread c % THREADS in every task, which
// copies, sums and writes it, so no barrier guards the staging, nor the
// buffer's reuse by the next task. dx may be y or dy: each element is read
// by the thread that writes it, before it writes it.
//
// Rows that are not whole vectors (PEEL) are cut into the windows of memory
// from the 16-byte boundary below the row's start (softmax_row_windows.cuh);
// the layout cuts N + VEC - 1 elements, room for any row's head, so every
// CTA plans the same slices whatever its row's offset.
//
// Parameters (macros set by the generator):
//   THREADS      threads per CTA (a multiple of 32)
//   VEC          elements per window (VEC * element size = 16 B)
//   CTAS_PER_SM  CTAs per multiprocessor the launch is sized for (its
//                shared memory is that share of a multiprocessor's)
//   FIT          1: enough slices per row that each fits in shared memory;
//                2: in twice that (split_fit_cap: the rest read twice)
//   PEEL         1: rows peeled to windows (above); 0: an aligned launch's
//                rows as they are, a misaligned one element by element
//   STAGGER      1: odd row slots start once the slot before has its first
//                row's sum in (split_stagger), out of phase with it
//   PREFETCH     1: once a task's slice is on chip, warp 1 asks L2 for the
//                next task's (prefetch_slice), so that it streams in
//                during the row-sum wait (sm_90)
//
// Dynamic shared memory: whatever the launch gives (%dynamic_smem_size):
// C windows of y then C of dy, C = its size / 32; a slice's windows past C
// are read from global memory twice (from L2 while the row's other slices
// are on chip). Each task's slice is copied in while the task before is
// written, window by window. log_softmax_backward's r is the sum of dy
// alone, so it stages dy only (C = the size / 16) and reads y once, as it
// writes: twice the slice on chip, half the rounds at rows of millions.
#include "softmax_backward_common.cuh"
#include "softmax_cp_async.cuh"

#define WARPS (THREADS / 32)

#ifndef PEEL
#define PEEL 0
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

static_assert(VEC * sizeof(elem_t) == 16, "a window is one 16-byte access");

// Whether y is staged beside dy (r needs it: softmax_backward's y dy); dy's
// windows follow y's C, or start the buffer.
#define STAGE_Y (!LOG_BACKWARD)
#define STAGED_TENSORS (STAGE_Y ? 2 : 1)
// Windows of y a thread loads before it writes them, when y is not staged:
// in flight together, ~32 KB a multiprocessor whatever its threads (one at
// a time, f32 1024 x 131072 ran 8% slower; two at 256 threads a
// multiprocessor, f32 100 x 1170563 1.33x slower than staging y: H200).
// More at 1024 threads spilled.
#define RESIDENT_THREADS (THREADS * CTAS_PER_SM)
#define WRITE_BATCH (STAGE_Y ? 1 : RESIDENT_THREADS <= 256 ? 8 : RESIDENT_THREADS <= 512 ? 4 : 2)
// A row's windows: 32-bit where y is not staged (the manifest bounds N),
// else the registers of the write (two tasks' windows held) spilled
// 80-140 bytes at 64 a thread (half precision)
#if STAGE_Y
typedef long long window_t;
#else
typedef int window_t;
#endif

#include "softmax_backward_reduce.cuh"
#include "softmax_split_layout.cuh"
#include "softmax_split_sync.cuh"

// The slices' parts of r, by buffer and slot as split_arrived.
__device__ grad_acc_t split_parts[3][MAX_CTAS];

extern __shared__ __align__(16) vec_t sbs_buf[];

// Parts are read from L2 (never a stale L1 line of an earlier group).
__device__ __forceinline__ grad_acc_t ld_part(const grad_acc_t *p)
{
	grad_acc_t v;
#if LOG_BACKWARD
	asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
#else
	asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
#endif
	return v;
}

__device__ __forceinline__ void st_part(grad_acc_t *p, grad_acc_t v)
{
#if LOG_BACKWARD
	asm volatile("st.relaxed.gpu.global.f32 [%0], %1;" :: "l"(p), "f"(v) : "memory");
#else
	asm volatile("st.relaxed.gpu.global.f64 [%0], %1;" :: "l"(p), "d"(v) : "memory");
#endif
}

// The slot dy's staged windows start at: after y's C, or the buffer's start.
__device__ __forceinline__ int dy_slot0(int C)
{
	return STAGE_Y ? C : 0;
}

// dy's staged windows. Taken where they are read (a pointer held across the
// loops cost 40 instructions more).
__device__ __forceinline__ const vec_t *dy_slots(int C)
{
	return sbs_buf + dy_slot0(C);
}

// A window of the staged slice as one 16-byte shared-memory read.
__device__ __forceinline__ vec_t ld_window(const vec_t *buf, long long s)
{
	const uint4 w = reinterpret_cast<const uint4 *>(buf)[s];
	vec_t v;
	*reinterpret_cast<uint4 *>(&v) = w;
	return v;
}

// The row's r from the parts of its S CTAs, task i's scratch
// (split_task_exchange), given this CTA's part (every thread has it).
// Thread 0 stores the part and waits for the row's S; then each lane adds
// parts lane, lane + 32, ... and the warp's butterfly adds the lanes' sums,
// an order every CTA of the row shares (the same bits in each).
__device__ __forceinline__ grad_acc_t split_row_sum(grad_acc_t r, const split_layout &L, unsigned i)
{
	const unsigned n_main = split_main_tasks(&L, blockIdx.x);
	unsigned part, S;
	split_task_row(&L, blockIdx.x, i, n_main, &part, &S);
	if (S == 1)
		return r;
	unsigned buffer, base;
	const unsigned uses = split_task_exchange(&L, blockIdx.x, i, n_main, &buffer, &base);
	if (threadIdx.x == 0) {
		st_part(&split_parts[buffer][base + part], r);
		split_arrive_and_wait(&split_arrived[buffer][base], uses * S);
	}
	__syncthreads();
	grad_acc_t t = 0;
	for (unsigned j = threadIdx.x % 32; j < S; j += 32)
		t += ld_part(&split_parts[buffer][base + j]);
	return group_sum_acc<32>(t);
}

// One task of a CTA: its slice of a row, as windows [w0, w1) of the
// row's, counted from the VEC boundary at or below the row's start (k
// elements before it); the first `staged` - w0 of them are staged, window
// w0 + s in slot s of each buffer (thread s % THREADS's in every task).
struct split_task {
	long long row;
	window_t w0, w1, staged;
	int k;
};

// Task i of this CTA under L (held in shared memory: the write loop holds
// two tasks, and a layout in registers made ptxas spill at 64 a thread;
// planned again for each task, its 64-bit divisions cost ~10% at f16 62 x
// 1241923, H200).
__device__ __forceinline__ split_task plan_task(const split_layout &L, unsigned i,
						const elem_t *y, long long ldy, long long N,
						int C, bool vec_ok)
{
	const unsigned n_main = split_main_tasks(&L, blockIdx.x);
	unsigned part, S;
	split_task t;
	t.row = split_task_row(&L, blockIdx.x, i, n_main, &part, &S);
	const long long len = (i < n_main ? L.slice_len : L.tail_slice_len) / VEC;
	t.k = PEEL && vec_ok ? vec_offset(y + t.row * ldy) : 0; // coaligned: dy's and dx's too
	const long long windows = (N + t.k + VEC - 1) / VEC;
	t.w0 = (window_t)min(windows, (long long)part * len);
	t.w1 = (window_t)min(windows, (long long)t.w0 + len);
	t.staged = min(t.w1, (window_t)(t.w0 + C));
	return t;
}

// Asks L2 for the windows of t's staged slice in the rows at p (stride ld)
// that lie wholly in the row: on sm_90 one bulk prefetch by the calling
// thread (the windows past the row's ends may lie outside its allocation);
// before, each thread its own windows, only with `every_thread`. No-op for
// launches that stage nothing.
__device__ __forceinline__ void prefetch_staged(const split_task &t, const elem_t *p, long long ld,
						long long N, bool every_thread)
{
	const long long lo = max((long long)t.w0, (long long)(t.k + VEC - 1) / VEC);
	const long long hi = min((long long)t.staged, (N + t.k) / VEC);
	const elem_t *const base = p + t.row * ld - t.k;
#if __CUDA_ARCH__ >= 900
	(void)every_thread;
	if (hi > lo)
		asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
			     :: "l"(base + lo * VEC), "r"((unsigned)((hi - lo) * 16)) : "memory");
#else
	if (every_thread)
		for (long long c = lo + threadIdx.x; c < hi; c += THREADS)
			asm volatile("prefetch.global.L2 [%0];" :: "l"(base + c * VEC));
#endif
}

// The next task's staged slice of y (when staged) and dy into L2 once this
// one's is on chip, so that they stream in from DRAM while this CTA waits
// for its row's sum and the cp.async copies made during the write then
// come from L2 (the exchange's wait otherwise has nothing in flight). sm_90.
__device__ __forceinline__ void prefetch_slice(const split_task &t, const elem_t *y, long long ldy,
					       const elem_t *dy, long long lddy, long long N)
{
	if (STAGE_Y)
		prefetch_staged(t, y, ldy, N, false);
	prefetch_staged(t, dy, lddy, N, false);
}

// Copies window w0 + s of t's slice of y (when staged) and dy into slot s
// of the buffers when it lies wholly in the row (the partial ones:
// stage_partial_windows).
__device__ __forceinline__ void copy_window(const split_task &t, int s, const elem_t *y,
					    long long ldy, const elem_t *dy, long long lddy,
					    long long N, int C, unsigned long long pol)
{
	const long long c = (long long)t.w0 + s;
	if (window_in_row<PEEL>(c * VEC, t.k, N, true)) {
		const unsigned b = shared_addr(sbs_buf + s);
		if (STAGE_Y)
			cp_async16(b, y + t.row * ldy - t.k + c * VEC, pol);
		cp_async16(b + (unsigned)dy_slot0(C) * 16u, dy + t.row * lddy - t.k + c * VEC, pol);
	}
}

// The staged windows that are not wholly in the row (a peeled row's head
// and tail, an unpeeled row's last), element by element, zero-filled.
__device__ __forceinline__ void stage_partial_windows(const split_task &t, const elem_t *y,
						      long long ldy, const elem_t *dy,
						      long long lddy, long long N, int C)
{
	const elem_t *const yb = y + t.row * ldy - t.k, *const gb = dy + t.row * lddy - t.k;
	const int n = (int)(t.staged - t.w0);
	for (int s = threadIdx.x; s < n; s += THREADS) {
		const long long c = (long long)t.w0 + s;
		if (!window_in_row<PEEL>(c * VEC, t.k, N, true)) {
			vec_t gv;
			if (STAGE_Y) {
				vec_t yv;
				load_window0<PEEL>(yv, yb, c * VEC, t.k, N, false);
				sbs_buf[s] = yv;
			}
			load_window0<PEEL>(gv, gb, c * VEC, t.k, N, false);
			sbs_buf[dy_slot0(C) + s] = gv;
		}
	}
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	// by task parity: task i + 2 writes a slot only after every thread has
	// passed task i + 1's barrier, so after task i's reads
	__shared__ grad_acc_t slot[2][32];
	const unsigned G = gridDim.x < MAX_CTAS ? gridDim.x : MAX_CTAS;
	const bool vec_ok = PEEL ? grads_coaligned(dx, lddx, y, ldy, dy, lddy)
				 : grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	// windows of dy (and as many of y, when staged) the shared memory
	// holds; none when the rows go element by element
	const int C = vec_ok ? (int)(dynamic_smem_bytes() / (STAGED_TENSORS * sizeof(vec_t))) : 0;
	__shared__ split_layout L;
	if (threadIdx.x == 0) {
		L = split_plan_layout(M, PEEL && vec_ok ? N + VEC - 1 : N, G, split_fit_cap(C, FIT),
				      FIT, VEC);
		// an odd slot waits here, released by the barrier below (a
		// barrier of its own made ptxas spill 4 bytes more, f32)
		if (blockIdx.x < G)
			split_stagger_wait(L, split_main_tasks(&L, blockIdx.x));
	}
	__syncthreads();
	const unsigned tasks = blockIdx.x < G ? split_tasks(&L, blockIdx.x) : 0;
	const unsigned long long pol = copy_policy();
	split_task t;
	if (tasks > 0) {
		t = plan_task(L, 0, y, ldy, N, C, vec_ok);
		for (int s = threadIdx.x; s < (int)(t.staged - t.w0); s += THREADS)
			copy_window(t, s, y, ldy, dy, lddy, N, C, pol);
		cp_async_commit();
	}
	for (unsigned i = 0; i < tasks; i++) {
		// t's copies are in flight. Unstaged, t's y is asked of L2 now
		// (warp 1 on sm_90, every thread before), to stream in while dy
		// lands and the row's sum is waited for: read straight from DRAM
		// as it is written, one window a thread at a time, it left the
		// write latency-bound (f32 1024 x 131072 7% slower, H200)
		if (!STAGE_Y && (__CUDA_ARCH__ < 900 || threadIdx.x == 32))
			prefetch_staged(t, y, ldy, N, true);
		stage_partial_windows(t, y, ldy, dy, lddy, N, C);
		const elem_t *const yb = y + t.row * ldy - t.k, *const gb = dy + t.row * lddy - t.k;
		elem_t *const dxb = dx + t.row * lddx - t.k;
		// the unstaged windows from global memory while the copies land
		grad_acc_t r = 0;
		for (long long c = t.staged + threadIdx.x; c < t.w1; c += THREADS) {
			vec_t yv, gv;
			load_window0<PEEL>(yv, yb, c * VEC, t.k, N, vec_ok);
			load_window0<PEEL>(gv, gb, c * VEC, t.k, N, vec_ok);
			r += vec_terms(yv, gv);
		}
		cp_async_wait(0);
		// this slice is on chip: the next one into L2 during the exchange
		// (by warp 1: thread 0's planning would delay its arrival, which
		// is on every CTA of the row's critical path)
		if (PREFETCH && threadIdx.x == 32 && i + 1 < tasks)
			prefetch_slice(plan_task(L, i + 1, y, ldy, N, C, vec_ok), y, ldy, dy, lddy, N);
		const int n_cur = (int)(t.staged - t.w0);
		for (int s = threadIdx.x; s < n_cur; s += THREADS) {
			const vec_t gv = ld_window(dy_slots(C), s);
			// log_softmax_backward's terms are dy's alone
			r += vec_terms(STAGE_Y ? ld_window(sbs_buf, s) : gv, gv);
		}
		r = cta_sum_acc(r, slot[i & 1]);
		const grad_r_t rw = acc_final(split_row_sum(r, L, i));
		// the next task's slice comes in window by window as this one's
		// windows are written: slot s is its owner's to refill once it has
		// read it (copied in after the write instead, the slices of f16 62
		// x 1241923 ran 7% slower, of bf16 195 x 2488455 13%: H200)
		const bool more = i + 1 < tasks;
		split_task next = t;
		if (more)
			next = plan_task(L, i + 1, y, ldy, N, C, vec_ok);
		const int n_next = more ? (int)(next.staged - next.w0) : 0;
		for (int s0 = threadIdx.x; s0 < max(n_cur, n_next); s0 += WRITE_BATCH * THREADS) {
			// y unstaged: this batch's windows of it first (each read
			// by the thread that writes it, before it writes: dx may
			// be y)
			vec_t yv[WRITE_BATCH];
#pragma unroll
			for (int u = 0; u < WRITE_BATCH; u++) {
				const int s = s0 + u * THREADS;
				if (!STAGE_Y && s < n_cur)
					load_window0<PEEL>(yv[u], yb, ((long long)t.w0 + s) * VEC, t.k,
							   N, true);
			}
#pragma unroll
			for (int u = 0; u < WRITE_BATCH; u++) {
				const int s = s0 + u * THREADS;
				if (s < n_cur)
					store_grads_window<PEEL>(dxb, ((long long)t.w0 + s) * VEC, t.k, N, true,
								 STAGE_Y ? ld_window(sbs_buf, s) : yv[u],
								 ld_window(dy_slots(C), s), rw);
				if (s < n_next)
					copy_window(next, s, y, ldy, dy, lddy, N, C, pol);
			}
		}
		if (more)
			cp_async_commit();
		for (long long c = t.staged + threadIdx.x; c < t.w1; c += THREADS) {
			vec_t yv, gv;
			load_window0<PEEL>(yv, yb, c * VEC, t.k, N, vec_ok);
			load_window0<PEEL>(gv, gb, c * VEC, t.k, N, vec_ok);
			store_grads_window<PEEL>(dxb, c * VEC, t.k, N, vec_ok, yv, gv, rw);
		}
		t = next;
	}
	split_leave(G);
}
