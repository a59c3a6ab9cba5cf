// A CTA's slice of a row, for the templates that cut a row over several CTAs
// (softmax_split over the whole GPU, softmax_cluster over a thread-block
// cluster). Each CTA reduces its slice to a partial (max, sum), the partials
// of a row are combined (how is the template's business), then each CTA
// writes its slice.
//
// The slice is staged in dynamic shared memory as far as the launch gave
// room (cp.async on sm_80+, through registers before), so that it is read
// from global memory once. What does not fit, the overflow, is read from
// global memory while the staged copies arrive and read again for the write
// pass (mostly from L2: it was read a few microseconds before). So a slice
// of any length works with any amount of shared memory.
//
// Ownership: the slice is cut into 16-byte chunks (VEC elements); staged
// chunk c belongs to thread c % THREADS, which copies it, reduces it and
// writes it. A thread only reads the shared memory that it wrote itself, so
// no barrier is needed between the copy and its use, nor before the next
// row's copy overwrites the buffer (the thread's last reads of it fed its
// global stores, issued before; see softmax_smem.cu).
//
// Slices start on a VEC boundary, so a row that is 16-byte aligned has
// 16-byte aligned slices; misaligned rows take a scalar path. Only the
// row's last slice has a partial chunk: its tail is copied with a
// zero-filling cp.async and masked to -inf when read.
//
// Needs THREADS, VEC, elem_t (softmax_common.cuh) and the merge helpers of
// softmax_online_merge.cuh.
#pragma once

#define CHUNK_BYTES 16
// Chunks of the overflow each thread loads before it reduces them.
#define OVERFLOW_BATCH 2

static_assert(VEC * sizeof(elem_t) == CHUNK_BYTES, "a chunk is one 16-byte access");

extern __shared__ __align__(16) unsigned char slice_smem[];

// ---- copies into shared memory ----------------------------------------------

__device__ __forceinline__ unsigned dynamic_smem_bytes(void)
{
	unsigned b;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
	return b;
}

#if __CUDA_ARCH__ >= 800
__device__ __forceinline__ unsigned shared_addr(const void *p)
{
	unsigned a;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

// Copies `bytes` (1..16) from src to dst (both 16-byte aligned); the rest of
// the 16 bytes at dst is zero-filled.
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, unsigned bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
		     :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
#endif

__device__ __forceinline__ void cp_async_commit(void)
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

__device__ __forceinline__ void cp_async_wait_all(void)
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

// ---- chunks as f32 ------------------------------------------------------------

// A chunk in shared memory as four 32-bit words: read as one 16-byte access
// (an array of 16-bit elements would be read piecewise).
struct alignas(CHUNK_BYTES) chunk_t {
	unsigned w[4];
};

// Elements at or past the slice's end (all but the first `valid`) become
// -inf, which adds nothing.
__device__ __forceinline__ void mask_tail(float *v, long long valid)
{
	if (valid < VEC) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[j] = j < valid ? v[j] : NEG_INF_F;
	}
}

__device__ __forceinline__ void chunk_values(const chunk_t &c, long long valid, float *v)
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

// load_vec has already made the elements past the end -inf.
__device__ __forceinline__ void vec_values(const vec_t &c, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		v[j] = to_f32(c.v[j]);
}

// ---- a running (max, sum) -------------------------------------------------------

// A thread's running (m, s) over its chunks: m the max in input units, s the
// sum of exp relative to ref(m) = m * log2(e), or to 0 while m is -inf (then s
// is 0, or NaN if a NaN was seen). Maxima use fmaxf, which skips NaN; a NaN
// still reaches s, and a +inf makes s NaN (inf - inf).

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

// Adds the chunk to (m, s): one exp per element. A masked -inf adds
// exp2(-inf - ref) = 0 (ref is finite or +inf).
__device__ __forceinline__ void accumulate(float &m, float &s, const float *v)
{
	rescale(m, s, chunk_max(v));
	const float ref = log2_ref(m);
#pragma unroll
	for (int j = 0; j < VEC; j++)
		s += fast_exp2(fmaf(v[j], LOG2E_F, -ref));
}

// Converts and stores VEC results at row[col...] (masked to n). Unlike
// store_vec, the whole-chunk store is written out as one 16-byte st.global:
// left to the compiler, some of these stores came out as four scalar ones.
__device__ __forceinline__ void store_chunk(elem_t *row, long long col, long long n, bool vec_ok,
					    const float *vals)
{
	vec_t out;
#if DTYPE_F32
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out.v[j] = vals[j];
#else
#pragma unroll
	for (int j = 0; j < VEC; j += 2)
		store_pair(&out.v[j], vals[j], vals[j + 1]);
#endif
	if (vec_ok && col + VEC <= n) {
		const unsigned *w = reinterpret_cast<const unsigned *>(&out);
		asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};"
			     :: "l"(row + col), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if (col + j < n)
				row[col + j] = out.v[j];
	}
}

// exp2(v * log2(e) - m2) * inv for the chunk at y[col...] (masked to n).
__device__ __forceinline__ void write_chunk(elem_t *y, long long col, long long n, bool y_ok,
					    const float *v, float m2, float inv)
{
	float out[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = fast_exp2(fmaf(v[j], LOG2E_F, -m2)) * inv;
	store_chunk(y, col, n, y_ok, out);
}

// ---- the slice ------------------------------------------------------------------

struct row_slice {
	const elem_t *x; // the slice's first element (not read when n is 0)
	elem_t *y;
	long long n;       // elements, 0 for a slice past the row's end
	long long nchunks; // ceil(n / VEC)
	int staged;        // the first `staged` chunks are copied to shared memory
};

// The slice [begin, begin + len) of a row of N elements (clipped to the row),
// with room for cap_chunks chunks in shared memory.
__device__ __forceinline__ row_slice make_slice(const elem_t *xrow, elem_t *yrow, long long N,
						long long begin, long long len, int cap_chunks)
{
	row_slice s;
	const long long end = begin + len < N ? begin + len : N;
	s.n = end > begin ? end - begin : 0;
	s.x = xrow + (s.n ? begin : 0);
	s.y = yrow + (s.n ? begin : 0);
	s.nchunks = (s.n + VEC - 1) / VEC;
	s.staged = s.nchunks < cap_chunks ? (int)s.nchunks : cap_chunks;
	return s;
}

// Starts copying this thread's staged chunks into buf.
__device__ __forceinline__ void slice_stage(elem_t *buf, const row_slice &s, bool x_ok)
{
#if __CUDA_ARCH__ >= 800
	const unsigned base = shared_addr(buf);
#endif
#pragma unroll 4
	for (int c = threadIdx.x; c < s.staged; c += THREADS) {
		const long long col = (long long)c * VEC;
		if (x_ok) {
#if __CUDA_ARCH__ >= 800
			const long long left = s.n - col;
			const unsigned bytes = left >= VEC ? CHUNK_BYTES
							   : (unsigned)left * (unsigned)sizeof(elem_t);
			cp_async16(base + (unsigned)c * CHUNK_BYTES, s.x + col, bytes);
#else
			vec_t v;
			load_vec(v, s.x, col, s.n, true);
			reinterpret_cast<vec_t *>(buf)[c] = v;
#endif
		} else {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				if (col + j < s.n)
					buf[col + j] = s.x[col + j];
		}
	}
	cp_async_commit();
}

// Loads OVERFLOW_BATCH overflow chunks of this thread from global memory,
// starting at chunk c (chunks past the end read as -inf).
__device__ __forceinline__ void load_overflow(vec_t *raw, const row_slice &s, long long c, bool x_ok)
{
#pragma unroll
	for (int u = 0; u < OVERFLOW_BATCH; u++)
		load_vec(raw[u], s.x, (c + (long long)u * THREADS) * VEC, s.n, x_ok);
}

// This thread's (m, s) over its chunks of the slice: the overflow first,
// from global memory while the staged copies arrive, then the staged chunks.
__device__ __forceinline__ void slice_reduce(const elem_t *buf, const row_slice &s, bool x_ok,
					     float &m, float &sum)
{
	m = NEG_INF_F;
	sum = 0.0f;
	for (long long c = s.staged + threadIdx.x; c < s.nchunks; c += OVERFLOW_BATCH * THREADS) {
		vec_t raw[OVERFLOW_BATCH];
		load_overflow(raw, s, c, x_ok);
#pragma unroll
		for (int u = 0; u < OVERFLOW_BATCH; u++) {
			float v[VEC];
			vec_values(raw[u], v);
			accumulate(m, sum, v);
		}
	}
	cp_async_wait_all();
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
#pragma unroll 2
	for (int c = threadIdx.x; c < s.staged; c += THREADS) {
		float v[VEC];
		chunk_values(chunks[c], s.n - (long long)c * VEC, v);
		accumulate(m, sum, v);
	}
}

// Writes exp2(x * log2(e) - m2) * inv over the slice: the staged chunks from
// shared memory, the overflow read again.
__device__ __forceinline__ void slice_write(const elem_t *buf, const row_slice &s, bool x_ok,
					    bool y_ok, float m2, float inv)
{
	for (long long c = s.staged + threadIdx.x; c < s.nchunks; c += OVERFLOW_BATCH * THREADS) {
		vec_t raw[OVERFLOW_BATCH];
		load_overflow(raw, s, c, x_ok);
#pragma unroll
		for (int u = 0; u < OVERFLOW_BATCH; u++) {
			float v[VEC];
			vec_values(raw[u], v);
			write_chunk(s.y, (c + (long long)u * THREADS) * VEC, s.n, y_ok, v, m2, inv);
		}
	}
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
#pragma unroll 2
	for (int c = threadIdx.x; c < s.staged; c += THREADS) {
		float v[VEC];
		chunk_values(chunks[c], VEC, v); // store_chunk drops the tail's padding
		write_chunk(s.y, (long long)c * VEC, s.n, y_ok, v, m2, inv);
	}
}

// ---- combining partials -----------------------------------------------------------

// A CTA's (max in log2 units, sum relative to it).
struct alignas(8) partial_t {
	float m, s;
};

// Merges (m, s) over the warp in a fixed order and gives every lane lane 0's
// result: merge contracts to FMAs, so it is not bitwise symmetric, but every
// warp that merges the same values in the same lanes gets the same bits.
__device__ __forceinline__ void warp_merge_fixed(float &m, float &s)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	m = __shfl_sync(0xffffffffu, m, 0);
	s = __shfl_sync(0xffffffffu, s, 0);
}
