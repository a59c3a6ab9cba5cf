// Template softmax_split: few long rows spread over the whole GPU. A
// cooperative grid (every CTA resident at once: launched with
// cuLaunchCooperativeKernel, the grid sized from occupancy) cuts each row
// into S slices, one per CTA, and takes R rows at a time (R * S <= grid;
// the CTAs left over idle). Each CTA stages its slice on chip
// (softmax_slice.cuh), reduces it to a partial (max, sum), writes that to
// a module-global scratch array and counts itself in at its row's arrival
// count; each of the S CTAs of a row waits until the count says that the
// row's S partials are in, combines them in slice order (the same bits in
// every CTA: deterministic) and writes its slice. Rows do not wait for
// each other: the wait is per row, not grid-wide, so one row's loads
// overlap another's wait.
// Regime: M below the number of CTAs (M = 8 rows would keep 8 SMs busy one
// CTA per row), or rows too long for one CTA's shared memory.
//
// The layout, the same in every CTA, is softmax_split_layout.cuh's: FIT 0
// spreads R = min(M, grid) rows over every CTA (slices longer than shared
// memory re-read their overflow, from L2); FIT 1 cuts rows into enough
// slices to fit in shared memory and takes fewer rows at a time. Rows past
// whole groups may go last in a tail group, cut into more slices.
//
// Scratch: the partials and the arrival counts, double-buffered by task
// parity: a CTA writes task i + 2's partial only after task i + 1's count
// is complete, which each CTA of its row added to after it had read task
// i's partials. The tail group has a buffer of its own. Counts only grow
// during a launch (a slot's target is S x its uses so far) and the last CTA
// to leave zeroes them, so a launch that ended normally leaves the scratch
// ready for the next. Being module-global, the scratch is shared by every
// launch of the module: two launches of one module must not run at the same
// time (e.g. on two streams).
//
// Parameters (macros set by the generator):
//   THREADS      threads per CTA
//   VEC          elements per 16-byte access (VEC * element size == 16)
//   CTAS_PER_SM  CTAs per multiprocessor the launch is sized for (its
//                shared memory is that share of a multiprocessor's)
//   FIT          1: enough slices per row that each fits in shared memory
//   STAGES       1: one slice buffer; each window of the next row's slice
//                is copied in as soon as this row's window it replaces is
//                written; 2: two slice buffers, the next row's copied in
//                while this row is reduced, waits for its partials and
//                is written (each buffer half the shared memory)
//   REDUCE_LAG   with STAGES 1: the next row's windows each thread has in
//                flight before it reduces the oldest, during this row's
//                write and while the first row comes in
//                (softmax_slice.cuh); 0: a row is reduced once it is in
//   STAGGER      1: odd row slots start once the slot before has its first
//                row's partials in (split_stagger)
//   REG_WINDOWS  with STAGES 1: 16-byte windows of its slice each thread
//                holds in registers on top of the shared memory
//                (softmax_slice.cuh), so that slices are longer and a CTA
//                takes fewer rows in turn (each turn costs an exchange)
//
// Dynamic shared memory: whatever the launch gives (%dynamic_smem_size),
// cut into STAGES buffers; any N works with any amount, overflow being
// re-read.
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)
static_assert(REG_WINDOWS == 0 || STAGES == 1,
	      "held windows are reloaded as this row's are written: one buffer only");

#include "softmax_online_merge.cuh"
#include "softmax_slice.cuh"
#include "softmax_split_layout.cuh"
#include "softmax_split_sync.cuh"

// The partials, by buffer and slot as softmax_split_sync.cuh's arrival
// counts (split_task_exchange: two buffers for the main groups by task
// parity, one for the tail).
__device__ partial_t split_partials[3][MAX_CTAS];

// Partials are read from L2 (never a stale L1 line of an earlier group).
__device__ __forceinline__ partial_t ld_partial(const partial_t *p)
{
	partial_t q;
	asm volatile("ld.relaxed.gpu.global.v2.f32 {%0, %1}, [%2];"
		     : "=f"(q.m), "=f"(q.s) : "l"(p) : "memory");
	return q;
}

__device__ __forceinline__ void st_partial(partial_t *p, float m, float s)
{
	asm volatile("st.relaxed.gpu.global.v2.f32 [%0], {%1, %2};" :: "l"(p), "f"(m), "f"(s)
		     : "memory");
}

// ---- the kernel -----------------------------------------------------------------------

// The slice of this CTA's i-th task under L (softmax_split_layout.cuh);
// only the slice is kept across a task, the rest recomputed where it is
// used (sparing registers).
__device__ __forceinline__ row_slice split_task_slice(elem_t *y, const elem_t *x, long long N,
						      long long ldy, long long ldx,
						      const split_layout &L, unsigned i,
						      unsigned n_main, int cap)
{
	unsigned part, S;
	const long long row = split_task_row(&L, blockIdx.x, i, n_main, &part, &S);
	const long long len = i < n_main ? L.slice_len : L.tail_slice_len;
	return make_slice(x + row * ldx, y + row * ldy, N, (long long)part * len, len, cap);
}

// The row's total from the partials of its S CTAs, task i's scratch
// (split_task_exchange). Thread 0 writes this CTA's partial, then counts
// itself in with a one-way release add, and polls the count until the
// row's S partials are in; then every warp merges them in slice order (the
// same bits in every CTA: deterministic). After the last arrival the
// critical path is the add's way to L2, a poll and the partials' loads (a
// returning atomic, then a generation flag to release the waiters, took a
// round trip more). The tail has scratch of its own: its slots are cut
// differently, and a slot of the main groups may still be waited on when
// another's CTAs reach the tail.
__device__ __forceinline__ void split_exchange(float &m, float &s, const split_layout &L,
					       unsigned i, unsigned n_main)
{
	unsigned part, S;
	split_task_row(&L, blockIdx.x, i, n_main, &part, &S);
	if (S == 1)
		return;
	unsigned buffer, base;
	const unsigned uses = split_task_exchange(&L, blockIdx.x, i, n_main, &buffer, &base);
	const partial_t *const parts = &split_partials[buffer][base];
	if (threadIdx.x == 0) {
		st_partial(&split_partials[buffer][base + part], m, s);
		split_arrive_and_wait(&split_arrived[buffer][base], uses * S);
	}
	__syncthreads();
	m = NEG_INF_F;
	s = 0.0f;
	for (unsigned j = threadIdx.x % 32; j < S; j += 32) {
		const partial_t q = ld_partial(parts + j);
		merge(m, s, q.m, q.s);
	}
	warp_merge_fixed<32>(m, s);
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	__shared__ float m_slot[2][WARPS], s_slot[2][WARPS];
	const unsigned G = gridDim.x < MAX_CTAS ? gridDim.x : MAX_CTAS;
	// each of the STAGES buffers gets an equal share of the shared memory
	const int cap = (int)(dynamic_smem_bytes() / CHUNK_BYTES / STAGES);
	const split_layout L = split_plan_layout(M, N, G, cap + HELD_WINDOWS, FIT, VEC);
	const unsigned n_main = split_main_tasks(&L, blockIdx.x);
	const unsigned tasks = split_tasks(&L, blockIdx.x);
	if (tasks == 0) {
		split_leave(G); // left over: no row waits for this CTA
		return;
	}
	split_stagger(L, n_main);
	elem_t *const buf0 = reinterpret_cast<elem_t *>(slice_smem);
	row_slice sl = split_task_slice(y, x, N, ldy, ldx, L, 0, n_main, cap);
	held_windows held;
	// the (max, sum) of sl's chunks before `from`, folded as they landed
	float m = NEG_INF_F, s = 0.0f;
	int from = slice_stage_folding(buf0, held, sl, m, s);
	for (unsigned i = 0; i < tasks; i++) {
		const int k = (int)(i & 1); // the task's parity, and with STAGES 2 its buffer
		elem_t *const buf = buf0 + (STAGES == 2 ? k * cap * VEC : 0);
		const bool more = i + 1 < tasks;
		row_slice next;
		if (more)
			next = split_task_slice(y, x, N, ldy, ldx, L, i + 1, n_main, cap);
		if (STAGES == 2 && more) {
			// the next slice comes in while this one is reduced, waits
			// for its row's partials and is written
			slice_stage(buf0 + (k ^ 1) * cap * VEC, held, next);
		}
		// with STAGES 2, next's copies were committed after sl's
		slice_reduce(buf, held, sl, m, s, STAGES == 2 && more, from);
		float rm = m; // the row's max once merged; m folds the next slice
		cta_merge(rm, s, m_slot[k], s_slot[k]);
		split_exchange(rm, s, L, i, n_main);
		rm = masked_max(rm, flags);
		const float scale = write_scale(masked_sum(s, flags));
		m = NEG_INF_F;
		s = 0.0f;
		from = threadIdx.x;
		if (STAGES == 1 && more) {
			// the next slice comes in window by window as this one's
			// windows are written (and, with REDUCE_LAG, is reduced
			// as they arrive)
			from = slice_write(buf, held, sl, rm, scale, &next, &m, &s);
			sl = next;
		} else {
			slice_write(buf, held, sl, rm, scale);
			if (more)
				sl = next;
		}
	}
	split_leave(G);
}
