// Template softmax_smem: rows too long for registers, staged in shared memory.
// A persistent CTA loop (row = blockIdx.x, += gridDim.x): each row is copied
// into dynamic shared memory with cp.async (16-byte, L1-bypassing) so that it
// is read from global memory once; pass 1 reads it from shared memory once,
// each thread keeping a running max and a sum rescaled when the max grows
// (online softmax), merged over the CTA; pass 2 writes exp(x - max) / sum
// from shared memory with 16-byte stores. Regime: N from ~8K up to what shared memory holds (227 KB
// per CTA on an H100: ~58K f32, ~116K f16/bf16 elements with one stage).
// Needs sm_80+ (cp.async).
//
// Ownership: the row is cut into 16-byte chunks (VEC elements) and chunk c
// belongs to thread c % THREADS, which copies it, reduces it and writes it.
// A thread only ever reads the shared memory that it wrote itself, so no
// barrier is needed between the copy and its use (cp.async.wait_group makes a
// thread's own copies visible to it) nor before a buffer is overwritten by a
// later row's copy (the thread's last reads of that buffer fed its global
// stores, which were issued before; the memory clobbers keep the compiler
// from moving them). The only barrier of a row is the one in the CTA
// reduction, whose slots alternate between two sets from row to row, so a
// warp cannot overwrite a set that a slower warp is still reading.
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA
//   VEC         elements per 16-byte access (VEC * element size == 16)
//   STAGES      row buffers per CTA: 2 issues the next row's copy before the
//               current row is reduced and written, so the loads of row k+1
//               overlap the math and the stores of row k
//   GROUPS      commit groups per row (STAGES == 1): pass 1 starts on the
//               first part of the row while the rest is still arriving
//   CACHE_HINT  1: evict-first L2 policy on the copies, evict-first stores
//
// Dynamic shared memory: STAGES * ceil(N * elem_size / 16) * 16 bytes (the
// launch's; a launch with less, e.g. a geometry stored for a shorter row,
// takes a slower path that reads the row from global memory twice).
// Rows that are not 16-byte aligned (x + r * ldx, y + r * ldy, e.g. odd N)
// are peeled (softmax_peel.cuh): chunk c is the 16-byte window c of memory
// from the boundary below the row's start, element j staged at j + kx; the
// head window (kx > 0) is copied element by element, the others by
// cp.async, the tail's zero-filling. The extra window may not fit the
// buffer (ceil(N / VEC) chunks): that tail is then read from global memory
// by its owner in both passes. y is peeled by its own offset; where it
// differs from x's, the write reads other threads' staged elements between
// two barriers (write_row_shifted). In place (y == x) works: a row is read
// (staged, or its unstaged tail by the thread that writes it) before any of
// it is written.
#include "softmax_common.cuh"
#include "softmax_peel.cuh"
#include "softmax_window.cuh"

#define WARPS (THREADS / 32)
#define CHUNK_BYTES 16

#ifndef GROUPS
#define GROUPS 1
#endif

static_assert(VEC * sizeof(elem_t) == CHUNK_BYTES, "a chunk is one 16-byte access");
static_assert(STAGES == 1 || STAGES == 2, "one or two row buffers");
static_assert(GROUPS >= 1 && (STAGES == 1 || GROUPS == 1) && GROUPS * STAGES <= 8,
	      "commit groups in flight must fit cp.async.wait_group's immediate");

extern __shared__ __align__(16) unsigned char smem_rows[];

// ---- asynchronous copies (sm_80+) -------------------------------------------

__device__ __forceinline__ unsigned shared_addr(const void *p)
{
	unsigned a;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

__device__ __forceinline__ unsigned long long copy_policy(void)
{
	unsigned long long pol = 0;
#if CACHE_HINT
	asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
	return pol;
}

// Copies `bytes` (1..16) from src to dst (both 16-byte aligned); the rest of
// the 16 bytes at dst is zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, unsigned bytes,
					   unsigned long long pol)
{
#if CACHE_HINT
	asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;"
		     :: "r"(dst), "l"(src), "r"(bytes), "l"(pol) : "memory");
#else
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
		     :: "r"(dst), "l"(src), "r"(bytes) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most `pending` of this thread's committed groups are still
// in flight. `pending` is a constant once the callers' loops are unrolled.
__device__ __forceinline__ void cp_async_wait(int pending)
{
	switch (pending) {
	case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
	case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
	case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
	case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
	case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
	case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
	case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
	default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
	}
}

__device__ __forceinline__ unsigned dynamic_smem_bytes(void)
{
	unsigned b;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
	return b;
}

// ---- reductions ---------------------------------------------------------------

#include "softmax_online_merge.cuh"

// The chunk's VEC values as f32; those at or past the row's end (all but the
// first `valid`) become -inf, which adds nothing. The chunk is read whole
// (one 16-byte access) and masked afterwards.
// A chunk in shared memory as four 32-bit words: read as one 16-byte access
// (an array of 16-bit elements would be read piecewise).
struct alignas(CHUNK_BYTES) chunk_t {
	unsigned w[4];
};

__device__ __forceinline__ void mask_tail(float *v, int valid)
{
	if (valid < VEC) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[j] = j < valid ? v[j] : NEG_INF_F;
	}
}

// Lanes outside [lo, hi) (garbage in shared memory) become -inf: a select,
// so that a garbage NaN does not leak.
__device__ __forceinline__ void mask_lanes(float *v, int lo, int hi)
{
	if (lo > 0 || hi < VEC) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[j] = j >= lo && j < hi ? v[j] : NEG_INF_F;
	}
}

__device__ __forceinline__ void chunk_values(const chunk_t &c, int valid, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++) {
#if DTYPE_F32
		v[j] = __uint_as_float(c.w[j]);
#else
		v[j] = to_f32((elem_t)(j % 2 ? c.w[j / 2] >> 16 : c.w[j / 2] & 0xffffu));
#endif
	}
	mask_tail(v, valid);
}

__device__ __forceinline__ void chunk_values(const vec_t &c, int valid, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		v[j] = to_f32(c.v[j]);
	mask_tail(v, valid);
}

// y (out_from_max) for the chunk at y[col...] (masked to n).
__device__ __forceinline__ void write_chunk(elem_t *y, long long col, long long n, bool y_ok,
					    const float *v, float m, float scale)
{
	float out[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = out_from_max(v[j], m, scale);
	store_vec(y, col, n, y_ok, out);
}

// The window p's lanes [lo, hi) from global memory as f32, the others -inf.
__device__ __forceinline__ void window_values(const elem_t *p, int lo, int hi, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		v[j] = j >= lo && j < hi ? to_f32(p[j]) : NEG_INF_F;
}

// ---- the shared-memory path ---------------------------------------------------

// A row's windows: the first `staged` in the buffer (at most its chunks), a
// last one past them read from global memory.
__device__ __forceinline__ int staged_chunks(int n, int kx, int nchunks)
{
	const int w = (int)peel_chunks(n, kx, VEC);
	return w < nchunks ? w : nchunks;
}

// The chunks of a row owned by this thread are c = threadIdx.x + i * THREADS
// for c < nchunks; commit group g holds i in [g * kg, (g + 1) * kg).

// Chunks i < own_chunks(nchunks) are this thread's (c < nchunks).
__device__ __forceinline__ int own_chunks(int nchunks)
{
	return (nchunks - (int)threadIdx.x + THREADS - 1) / THREADS;
}

// Issues the copy of row x into buf (all of this thread's staged windows), in
// GROUPS commit groups. The head window is copied element by element
// (synchronous): its first element is not 16-byte aligned.
__device__ __forceinline__ void issue_row(elem_t *buf, const elem_t *x, int n, int nchunks,
					  int kg, unsigned long long pol)
{
	const unsigned base = shared_addr(buf);
	const int kx = peel_offset(x, (int)sizeof(elem_t));
	const elem_t *const xa = x - kx;
	const int own = own_chunks(staged_chunks(n, kx, nchunks));
	// thread 0's first window, the head, outside the unrolled loop
	const int first = threadIdx.x == 0 && kx > 0;
	if (first) {
		const int hi = peel_hi(0, n, kx, VEC);
		for (int j = kx; j < hi; j++)
			buf[j] = xa[j];
	}
#pragma unroll
	for (int g = 0; g < GROUPS; g++) {
		const int i1 = (g + 1) * kg < own ? (g + 1) * kg : own;
#pragma unroll 4
		for (int i = g * kg > first ? g * kg : first; i < i1; i++) {
			const int c = threadIdx.x + i * THREADS;
			const int hi = peel_hi(c, n, kx, VEC);
			if (hi == VEC) {
				cp_async16(base + (unsigned)c * CHUNK_BYTES, xa + c * VEC,
					   CHUNK_BYTES, pol);
			} else {
				// the row's last window element by element: a partial
				// cp.async still reads 16 bytes for compute-sanitizer
				for (int j = 0; j < VEC; j++)
					buf[c * VEC + j] = j < hi ? xa[c * VEC + j] : elem_t(0);
			}
		}
		cp_async_commit();
	}
}

// Reduces this thread's chunks of the row in buf into (m, s) in one read,
// waiting for each commit group before it reads it; `later` groups were
// committed after this row's.
__device__ __forceinline__ void reduce_row(const elem_t *buf, const elem_t *x, int n, int nchunks,
					   int kg, int later, float &m, float &s)
{
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
	const int kx = peel_offset(x, (int)sizeof(elem_t));
	const int staged = staged_chunks(n, kx, nchunks);
	const int own = own_chunks(staged);
	m = NEG_INF_F;
	s = 0.0f;
#pragma unroll
	for (int g = 0; g < GROUPS; g++) {
		cp_async_wait(GROUPS - 1 - g + later);
		const int i1 = (g + 1) * kg < own ? (g + 1) * kg : own;
#pragma unroll 4
		for (int i = g * kg; i < i1; i++) {
			const int c = threadIdx.x + i * THREADS;
			float v[VEC];
			chunk_values(chunks[c], VEC, v);
			mask_lanes(v, peel_lo(c, kx), peel_hi(c, n, kx, VEC));
			rescale(m, s, chunk_max(v));
			s += add_exps(0.0f, v, sum_ref(m));
		}
	}
	if (staged < peel_chunks(n, kx, VEC) && threadIdx.x == staged % THREADS) {
		float v[VEC]; // the tail window that did not fit
		window_values(x - kx + staged * VEC, peel_lo(staged, kx), peel_hi(staged, n, kx, VEC),
			      v);
		rescale(m, s, chunk_max(v));
		s += add_exps(0.0f, v, sum_ref(m));
	}
}

// y is not as far from a 16-byte boundary as x: y's windows straddle x's,
// so a thread reads elements other threads staged (scalar shared-memory
// reads), between barriers (kx and ky are the CTA's, so all its threads
// come here); the unstaged tail from global memory.
__device__ __forceinline__ void write_row_shifted(elem_t *y, const elem_t *x, const elem_t *buf,
						  int n, int kx, int staged, float m, float scale)
{
	__syncthreads();
	const int ky = peel_offset(y, (int)sizeof(elem_t));
	const int staged_end = staged * VEC - kx; // elements staged
	elem_t *const ya = y - ky;
	const int nyc = (int)peel_chunks(n, ky, VEC);
	for (int c = threadIdx.x; c < nyc; c += THREADS) {
		const int lo = peel_lo(c, ky), hi = peel_hi(c, n, ky, VEC);
		float v[VEC];
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			const int e = c * VEC - ky + j; // the row's element
			v[j] = 0.0f;
			if (j >= lo && j < hi)
				v[j] = to_f32(e < staged_end ? buf[e + kx] : x[e]);
		}
		write_window(ya + c * VEC, lo, hi, v, m, scale);
	}
	__syncthreads(); // before a later row's copy overwrites what others read
}

__device__ __forceinline__ void write_row(elem_t *y, const elem_t *x, const elem_t *buf, int n,
					  int nchunks, float m, float scale)
{
	const int kx = peel_offset(x, (int)sizeof(elem_t));
	const int staged = staged_chunks(n, kx, nchunks);
	if (peel_offset(y, (int)sizeof(elem_t)) != kx) {
		write_row_shifted(y, x, buf, n, kx, staged, m, scale);
		return;
	}
	elem_t *const ya = y - kx;
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
#pragma unroll 4
	for (int c = threadIdx.x; c < staged; c += THREADS) {
		float v[VEC];
		chunk_values(chunks[c], VEC, v); // write_window drops the lanes outside the row
		write_window(ya + c * VEC, peel_lo(c, kx), peel_hi(c, n, kx, VEC), v, m, scale);
	}
	if (staged < peel_chunks(n, kx, VEC) && threadIdx.x == staged % THREADS) {
		const int lo = peel_lo(staged, kx), hi = peel_hi(staged, n, kx, VEC);
		float v[VEC];
		window_values(x - kx + staged * VEC, lo, hi, v);
		write_window(ya + staged * VEC, lo, hi, v, m, scale);
	}
}

// ---- the global-memory path (the launch gave too little shared memory) --------

__device__ __forceinline__ void softmax_rows_global(elem_t *y, const elem_t *x, long long M,
						 long long N, long long ldy, long long ldx,
						 bool x_ok, bool y_ok, float (*m_slot)[WARPS],
						 float (*s_slot)[WARPS], unsigned flags)
{
	int parity = 0;
	for (long long row = blockIdx.x; row < M; row += gridDim.x, parity ^= 1) {
		const elem_t *xr = x + row * ldx;
		elem_t *yr = y + row * ldy;
		float m = NEG_INF_F, s = 0.0f;
		for (long long c = threadIdx.x; c * VEC < N; c += THREADS) {
			vec_t raw;
			load_vec(raw, xr, c * VEC, N, x_ok); // -inf past the end
			float v[VEC];
			chunk_values(raw, VEC, v);
			rescale(m, s, chunk_max(v));
			s += add_exps(0.0f, v, sum_ref(m));
		}
		cta_merge(m, s, m_slot[parity], s_slot[parity]);
		m = masked_max(m, flags);
		const float scale = write_scale(masked_sum(s, flags));
		for (long long c = threadIdx.x; c * VEC < N; c += THREADS) {
			vec_t raw;
			load_vec(raw, xr, c * VEC, N, x_ok);
			float v[VEC];
			chunk_values(raw, VEC, v);
			write_chunk(yr, c * VEC, N, y_ok, v, m, scale);
		}
	}
}

// ---- the kernel -----------------------------------------------------------------

// At least 1024 threads resident per SM: at most 64 registers a thread.
extern "C" __global__ void __launch_bounds__(THREADS, 1024 / THREADS)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	__shared__ float m_slot[2][WARPS], s_slot[2][WARPS];
	const bool x_ok = rows_vec_aligned(x, ldx);
	const bool y_ok = rows_vec_aligned(y, ldy);
	const long long nchunks_ll = (N + VEC - 1) / VEC;
	if ((unsigned long long)nchunks_ll * CHUNK_BYTES * STAGES > dynamic_smem_bytes()) {
		softmax_rows_global(y, x, M, N, ldy, ldx, x_ok, y_ok, m_slot, s_slot, flags);
		return;
	}
	const int n = (int)N; // fits: the row is in shared memory
	const int nchunks = (int)nchunks_ll;
	const int kmax = (nchunks + THREADS - 1) / THREADS; // chunks of the busiest thread
	const int kg = (kmax + GROUPS - 1) / GROUPS;         // chunks per commit group
	const unsigned long long pol = copy_policy();
	// buffer b at rows + b * stride (no array of pointers: indexed by the
	// row's parity it would live in local memory)
	elem_t *const rows = reinterpret_cast<elem_t *>(smem_rows);
	const int stride = nchunks * VEC;

	const long long step = gridDim.x;
	long long row = blockIdx.x;
#if STAGES == 2
	if (row < M)
		issue_row(rows, x + row * ldx, n, nchunks, kg, pol);
	else
		cp_async_commit();
#endif
	for (int k = 0; row < M; row += step, k ^= 1) {
		const elem_t *cur = STAGES == 2 && k ? rows + stride : rows;
#if STAGES == 2
		// the next row goes to the other buffer, last read by this thread for
		// the previous row (see the top comment); an empty group if none
		if (row + step < M)
			issue_row(k ? rows : rows + stride, x + (row + step) * ldx, n, nchunks, kg,
				  pol);
		else
			cp_async_commit();
		const int later = GROUPS;
#else
		issue_row(rows, x + row * ldx, n, nchunks, kg, pol);
		const int later = 0;
#endif
		float m, s;
		reduce_row(cur, x + row * ldx, n, nchunks, kg, later, m, s);
		cta_merge(m, s, m_slot[k], s_slot[k]);
		write_row(y + row * ldy, x + row * ldx, cur, n, nchunks, masked_max(m, flags),
			  write_scale(masked_sum(s, flags)));
	}
	cp_async_wait(0); // nothing may be in flight into shared memory at exit
}
