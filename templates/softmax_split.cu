// Template softmax_split: few long rows spread over the whole GPU. A
// cooperative grid (every CTA resident at once: launched with
// cuLaunchCooperativeKernel, the grid sized from occupancy) cuts each row
// into S slices, one per CTA, and takes R rows at a time (R * S <= grid;
// the CTAs left over idle). Each CTA stages its slice on chip
// (softmax_slice.cuh), reduces it to a partial (max, sum) and writes that to
// a module-global scratch array; the S CTAs of a row then meet at a barrier
// of their own, each combines the row's S partials in slice order (the same
// bits in every CTA: deterministic) and writes its slice. Rows do not wait
// for each other: the barrier is per row, not grid-wide, so one row's
// loads overlap another's barrier.
// Regime: M below the number of CTAs (M = 8 rows would keep 8 SMs busy one
// CTA per row), or rows too long for one CTA's shared memory.
//
// The layout, the same in every CTA, is softmax_split_layout.cuh's: FIT 0
// spreads R = min(M, grid) rows over every CTA (slices longer than shared
// memory re-read their overflow, from L2); FIT 1 cuts rows into enough
// slices to fit in shared memory and takes fewer rows at a time. Rows past
// whole groups may go last in a tail group, cut into more slices.
//
// Scratch: the partials, double-buffered by group parity (a CTA writes the
// buffer of group g + 2 only after the barrier of group g + 1, by which time
// every CTA of its row has read group g's), and one barrier (arrival count,
// generation) per row slot; the tail group has a set of its own. Being
// module-global, it is shared by every launch of the module: two launches
// of one module must not run at the same time (e.g. on two streams). The
// barrier leaves its count at 0, so a launch that ended normally leaves the
// scratch ready for the next.
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
//                while this row is reduced, waits at its barrier and is
//                written (each buffer half the shared memory)
//   REDUCE_LAG   with STAGES 1: the next row's windows each thread has in
//                flight before it reduces the oldest, during this row's
//                write (softmax_slice.cuh); 0: the next row is reduced
//                once this one is written
//
// Dynamic shared memory: whatever the launch gives (%dynamic_smem_size),
// cut into STAGES buffers; any N works with any amount, overflow being
// re-read.
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)

#include "softmax_online_merge.cuh"
#include "softmax_slice.cuh"
#include "softmax_split_layout.cuh"

// Partial slots per buffer: CTAs past this many idle (a larger grid than any
// GPU holds today at THREADS >= 256).
#define MAX_CTAS 4096

__device__ partial_t split_partials[2][MAX_CTAS];
__device__ unsigned split_arrived[MAX_CTAS];
__device__ unsigned split_generation[MAX_CTAS];
// the tail group's (softmax_split_layout.cuh), each slot used once a launch
__device__ partial_t split_tail_partials[MAX_CTAS];
__device__ unsigned split_tail_arrived[MAX_CTAS];
__device__ unsigned split_tail_generation[MAX_CTAS];

// ---- memory operations with explicit order (sm_70+) ---------------------------

__device__ __forceinline__ unsigned ld_relaxed(const unsigned *p)
{
	unsigned v;
	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
	unsigned v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void st_relaxed(unsigned *p, unsigned v)
{
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void st_release(unsigned *p, unsigned v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned *p, unsigned v)
{
	unsigned old;
	asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], %2;"
		     : "=r"(old) : "l"(p), "r"(v) : "memory");
	return old;
}

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

__device__ __forceinline__ void nap(void)
{
	asm volatile("nanosleep.u32 32;");
}

// ---- the row barrier ----------------------------------------------------------------

// The `parties` CTAs of a row slot wait here until all have arrived; what
// any of them wrote before is visible to all after. Thread 0 reads the
// generation before arriving (the release orders that read first), so the
// last arrival's increment is always the one it waits for.
__device__ __forceinline__ void row_barrier(unsigned *arrived, unsigned *gen, unsigned parties)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		const unsigned g = ld_relaxed(gen);
		if (atom_add_acq_rel(arrived, 1) == parties - 1) {
			st_relaxed(arrived, 0); // before the release: seen by the next arrivals
			st_release(gen, g + 1);
		} else {
			while (ld_acquire(gen) == g)
				nap();
		}
	}
	__syncthreads();
}

// The row's total from its S partials, merged in slice order by every warp.
__device__ __forceinline__ void row_total(const partial_t *parts, unsigned S, float &m, float &s)
{
	m = NEG_INF_F;
	s = 0.0f;
	for (unsigned i = threadIdx.x % 32; i < S; i += 32) {
		const partial_t q = ld_partial(parts + i);
		merge(m, s, q.m, q.s);
	}
	warp_merge_fixed(m, s, 32);
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

// The row's total from the partials of its CTAs, met at the row's barrier:
// task i's scratch. The tail has scratch of its own: its slots are cut
// differently, and a slot of the main groups may still be reading its
// partials when another's CTAs reach the tail.
__device__ __forceinline__ void split_combine(float &m2, float &s, const split_layout &L,
					      unsigned i, unsigned n_main)
{
	unsigned part, S;
	split_task_row(&L, blockIdx.x, i, n_main, &part, &S);
	if (S == 1)
		return;
	const bool tail = i >= n_main;
	const unsigned slot = blockIdx.x / S;
	partial_t *const parts = tail ? &split_tail_partials[slot * S]
				      : &split_partials[i & 1][slot * S];
	if (threadIdx.x == 0)
		st_partial(parts + part, m2, s);
	if (tail)
		row_barrier(&split_tail_arrived[slot], &split_tail_generation[slot], S);
	else
		row_barrier(&split_arrived[slot], &split_generation[slot], S);
	row_total(parts, S, m2, s);
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx)
{
	__shared__ float m_slot[2][WARPS], s_slot[2][WARPS];
	const unsigned G = gridDim.x < MAX_CTAS ? gridDim.x : MAX_CTAS;
	// each of the STAGES buffers gets an equal share of the shared memory
	const int cap = (int)(dynamic_smem_bytes() / CHUNK_BYTES / STAGES);
	const split_layout L = split_plan_layout(M, N, G, cap, FIT, VEC);
	const unsigned n_main = split_main_tasks(&L, blockIdx.x);
	const unsigned tasks = split_tasks(&L, blockIdx.x);
	if (tasks == 0)
		return; // left over: no row waits for this CTA
	elem_t *const buf0 = reinterpret_cast<elem_t *>(slice_smem);
	row_slice sl = split_task_slice(y, x, N, ldy, ldx, L, 0, n_main, cap);
	slice_stage(buf0, sl);
	// the (max, sum) of sl's chunks before `from`, folded in the last write
	float m = NEG_INF_F, s = 0.0f;
	int from = threadIdx.x;
	for (unsigned i = 0; i < tasks; i++) {
		const int k = (int)(i & 1); // the task's parity, and with STAGES 2 its buffer
		elem_t *const buf = buf0 + (STAGES == 2 ? k * cap * VEC : 0);
		const bool more = i + 1 < tasks;
		row_slice next;
		if (more)
			next = split_task_slice(y, x, N, ldy, ldx, L, i + 1, n_main, cap);
		if (STAGES == 2 && more) {
			// the next slice comes in while this one is reduced, waits
			// at the barrier and is written
			slice_stage(buf0 + (k ^ 1) * cap * VEC, next);
		}
		// with STAGES 2, next's copies were committed after sl's
		slice_reduce(buf, sl, m, s, STAGES == 2 && more, from);
		float m2 = m * LOG2E_F; // -inf stays -inf
		cta_merge(m2, s, m_slot[k], s_slot[k]);
		split_combine(m2, s, L, i, n_main);
		const float inv = 1.0f / s;
		m = NEG_INF_F;
		s = 0.0f;
		from = threadIdx.x;
		if (STAGES == 1 && more) {
			// the next slice comes in window by window as this one's
			// windows are written (and, with REDUCE_LAG, is reduced
			// as they arrive)
			from = slice_write(buf, sl, m2, inv, &next, &m, &s);
			sl = next;
		} else {
			slice_write(buf, sl, m2, inv);
			if (more)
				sl = next;
		}
	}
}
