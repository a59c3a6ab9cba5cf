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
// Rows that are not 16-byte aligned (x + r * ldx, y + r * ldy) take a scalar
// path for the side concerned; a row tail shorter than 16 bytes is copied
// with a zero-filling partial cp.async. In place (y == x) works: a row is
// entirely in shared memory before any of it is written.
#include "softmax_common.cuh"

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

// A thread's running (m, s) over its chunks: m the max in input units, s the
// sum of exp relative to ref(m) = m * log2(e), or to 0 while m is -inf (then s
// is 0, or NaN if a NaN was seen). Maxima use fmaxf, which skips NaN; a NaN
// still reaches s.

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

__device__ __forceinline__ float chunk_max(const float *v)
{
	float cm = v[0];
#pragma unroll
	for (int j = 1; j < VEC; j++)
		cm = fmaxf(cm, v[j]);
	return cm;
}

__device__ __forceinline__ void rescale(float &m, float &s, float new_max)
{
	if (new_max > m) {
		s *= fast_exp2((m - new_max) * LOG2E_F); // m = -inf: s * 0 (0, or NaN stays)
		m = new_max;
	}
}

__device__ __forceinline__ float log2_ref(float m)
{
	return m == NEG_INF_F ? 0.0f : m * LOG2E_F;
}

// A masked -inf adds exp2(-inf * log2(e) - ref) = 0 (ref is finite or +inf).
__device__ __forceinline__ float chunk_sum(const float *v, float ref)
{
	float cs = 0.0f;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		cs += fast_exp2(fmaf(v[j], LOG2E_F, -ref));
	return cs;
}

// exp2(v * log2(e) - m2) * inv for the chunk at y[col...] (masked to n).
__device__ __forceinline__ void write_chunk(elem_t *y, long long col, long long n, bool y_ok,
					    const float *v, float m2, float inv)
{
	float out[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = fast_exp2(fmaf(v[j], LOG2E_F, -m2)) * inv;
	store_vec(y, col, n, y_ok, out);
}

// ---- the shared-memory path ---------------------------------------------------

// The chunks of a row owned by this thread are c = threadIdx.x + i * THREADS
// for c < nchunks; commit group g holds i in [g * kg, (g + 1) * kg).

// Chunks i < own_chunks(nchunks) are this thread's (c < nchunks).
__device__ __forceinline__ int own_chunks(int nchunks)
{
	return (nchunks - (int)threadIdx.x + THREADS - 1) / THREADS;
}

// Issues the copy of row x into buf (all of this thread's chunks), in GROUPS
// commit groups. Misaligned rows are copied element by element (synchronous).
__device__ __forceinline__ void issue_row(elem_t *buf, const elem_t *x, int n, int nchunks,
					  int kg, bool x_ok, unsigned long long pol)
{
	const unsigned base = shared_addr(buf);
	const int own = own_chunks(nchunks);
#pragma unroll
	for (int g = 0; g < GROUPS; g++) {
		const int i1 = (g + 1) * kg < own ? (g + 1) * kg : own;
#pragma unroll 4
		for (int i = g * kg; i < i1; i++) {
			const int c = threadIdx.x + i * THREADS;
			const int col = c * VEC;
			if (x_ok) {
				const int left = n - col;
				const unsigned bytes = left >= VEC ? CHUNK_BYTES
								   : (unsigned)left * (unsigned)sizeof(elem_t);
				cp_async16(base + (unsigned)c * CHUNK_BYTES, x + col, bytes, pol);
			} else {
#pragma unroll
				for (int j = 0; j < VEC; j++)
					if (col + j < n)
						buf[col + j] = x[col + j];
			}
		}
		cp_async_commit();
	}
}

// Reduces this thread's chunks of the row in buf into (m, s) in one read,
// waiting for each commit group before it reads it; `later` groups were
// committed after this row's.
__device__ __forceinline__ void reduce_row(const elem_t *buf, int n, int nchunks, int kg,
					   int later, float &m, float &s)
{
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
	const int own = own_chunks(nchunks);
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
			chunk_values(chunks[c], n - c * VEC, v);
			rescale(m, s, chunk_max(v));
			s += chunk_sum(v, log2_ref(m));
		}
	}
}

__device__ __forceinline__ void write_row(elem_t *y, const elem_t *buf, int n, int nchunks,
					  bool y_ok, float m2, float inv)
{
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
#pragma unroll 4
	for (int c = threadIdx.x; c < nchunks; c += THREADS) {
		float v[VEC];
		chunk_values(chunks[c], VEC, v); // store_vec drops the tail's padding
		write_chunk(y, (long long)c * VEC, n, y_ok, v, m2, inv);
	}
}

// ---- the global-memory path (the launch gave too little shared memory) --------

__device__ __forceinline__ void softmax_rows_global(elem_t *y, const elem_t *x, long long M,
						 long long N, long long ldy, long long ldx,
						 bool x_ok, bool y_ok, float (*m_slot)[WARPS],
						 float (*s_slot)[WARPS])
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
			s += chunk_sum(v, log2_ref(m));
		}
		float m2 = m * LOG2E_F; // -inf stays -inf
		cta_merge(m2, s, m_slot[parity], s_slot[parity]);
		const float inv = 1.0f / s;
		for (long long c = threadIdx.x; c * VEC < N; c += THREADS) {
			vec_t raw;
			load_vec(raw, xr, c * VEC, N, x_ok);
			float v[VEC];
			chunk_values(raw, VEC, v);
			write_chunk(yr, c * VEC, N, y_ok, v, m2, inv);
		}
	}
}

// ---- the kernel -----------------------------------------------------------------

// At least 1024 threads resident per SM: at most 64 registers a thread.
extern "C" __global__ void __launch_bounds__(THREADS, 1024 / THREADS)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx)
{
	__shared__ float m_slot[2][WARPS], s_slot[2][WARPS];
	const bool x_ok = rows_vec_aligned(x, ldx);
	const bool y_ok = rows_vec_aligned(y, ldy);
	const long long nchunks_ll = (N + VEC - 1) / VEC;
	if ((unsigned long long)nchunks_ll * CHUNK_BYTES * STAGES > dynamic_smem_bytes()) {
		softmax_rows_global(y, x, M, N, ldy, ldx, x_ok, y_ok, m_slot, s_slot);
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
		issue_row(rows, x + row * ldx, n, nchunks, kg, x_ok, pol);
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
				  x_ok, pol);
		else
			cp_async_commit();
		const int later = GROUPS;
#else
		issue_row(rows, x + row * ldx, n, nchunks, kg, x_ok, pol);
		const int later = 0;
#endif
		float m, s;
		reduce_row(cur, n, nchunks, kg, later, m, s);
		float m2 = m * LOG2E_F; // -inf stays -inf
		cta_merge(m2, s, m_slot[k], s_slot[k]);
		write_row(y + row * ldy, cur, n, nchunks, y_ok, m2, 1.0f / s);
	}
	cp_async_wait(0); // nothing may be in flight into shared memory at exit
}
