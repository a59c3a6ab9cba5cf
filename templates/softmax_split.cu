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
// slices to fit in shared memory and takes fewer rows at a time.
//
// Scratch: the partials, double-buffered by group parity (a CTA writes the
// buffer of group g + 2 only after the barrier of group g + 1, by which time
// every CTA of its row has read group g's), and one barrier (arrival count,
// generation) per row slot. Being module-global, it is shared by every
// launch of the module: two launches of one module must not run at the
// same time (e.g. on two streams). The barrier leaves its count at 0, so a
// launch that ended normally leaves the scratch ready for the next.
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

// The `parties` CTAs of row slot `slot` wait here until all have arrived;
// what any of them wrote before is visible to all after. Thread 0 reads the
// generation before arriving (the release orders that read first), so the
// last arrival's increment is always the one it waits for.
__device__ __forceinline__ void row_barrier(unsigned slot, unsigned parties)
{
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned *arrived = &split_arrived[slot], *gen = &split_generation[slot];
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

// The slice of `row` this CTA holds (none past the last row).
__device__ __forceinline__ row_slice split_slice(elem_t *y, const elem_t *x, long long M,
						 long long N, long long ldy, long long ldx,
						 long long row, unsigned part, const split_layout &L,
						 int cap)
{
	if (row >= M)
		return make_slice(x, y, N, N, 0, cap); // empty: stages nothing
	return make_slice(x + row * ldx, y + row * ldy, N, (long long)part * L.slice_len,
			  L.slice_len, cap);
}

extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx)
{
	__shared__ float m_slot[2][WARPS], s_slot[2][WARPS];
	const unsigned G = gridDim.x < MAX_CTAS ? gridDim.x : MAX_CTAS;
	// each of the STAGES buffers gets an equal share of the shared memory
	const int cap = (int)(dynamic_smem_bytes() / CHUNK_BYTES / STAGES);
	const split_layout L = split_plan_layout(M, N, G, cap, FIT, VEC);
	const unsigned slot = blockIdx.x / L.slices, part = blockIdx.x % L.slices;
	if (slot >= L.rows)
		return; // left over: no row waits for this CTA
	elem_t *const buf0 = reinterpret_cast<elem_t *>(slice_smem);
	row_slice sl = split_slice(y, x, M, N, ldy, ldx, slot, part, L, cap);
	slice_stage(buf0, sl);
	int k = 0; // the group's parity, and with STAGES 2 the buffer of `row`
	for (long long row = slot; row < M; row += L.rows, k ^= 1) {
		elem_t *const buf = buf0 + (STAGES == 2 ? k * cap * VEC : 0);
		row_slice next;
		if (STAGES == 2) {
			// the next row's slice comes in while this one is reduced,
			// waits at the barrier and is written
			next = split_slice(y, x, M, N, ldy, ldx, row + L.rows, part, L, cap);
			slice_stage(buf0 + (k ^ 1) * cap * VEC, next);
		}
		float m, s;
		slice_reduce(buf, sl, m, s, STAGES == 2);
		float m2 = m * LOG2E_F; // -inf stays -inf
		cta_merge(m2, s, m_slot[k], s_slot[k]);
		if (L.slices > 1) {
			partial_t *parts = &split_partials[k][slot * L.slices];
			if (threadIdx.x == 0)
				st_partial(parts + part, m2, s);
			row_barrier(slot, L.slices);
			row_total(parts, L.slices, m2, s);
		}
		if (STAGES == 2) {
			slice_write(buf, sl, m2, 1.0f / s);
			sl = next;
		} else if (row + L.rows < M) {
			// the next row's slice comes in window by window as this one's
			// windows are written
			next = split_slice(y, x, M, N, ldy, ldx, row + L.rows, part, L, cap);
			slice_write(buf, sl, m2, 1.0f / s, &next);
			sl = next;
		} else {
			slice_write(buf, sl, m2, 1.0f / s);
		}
	}
}
