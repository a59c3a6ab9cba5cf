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
// Slices start on a VEC boundary, so a slice is as far (k elements) from a
// 16-byte boundary as its row: it is peeled (softmax_peel.cuh) into a
// scalar head window, whole 16-byte windows (cp.async 16, ld/st.global.v4)
// and a tail window copied with a zero-filling cp.async; element j is
// staged at j + k, and lanes outside the slice are masked to -inf when
// read. With the extra window a slice may need one chunk more than its
// shared memory holds: that tail is then overflow, re-read (a few
// elements). y is peeled by its own offset; where it differs from x's, the
// write reads other threads' staged elements (slice_write_shifted).
//
// Held windows (REG_WINDOWS, for a template that holds rows in turn): the
// slice's first REG_WINDOWS x THREADS windows are held in registers, each
// thread's own, and the staged ones follow them, so that more of a slice is
// on chip (fewer rows in turn). They are loaded first and folded while the
// staged copies are still landing; written first, each reloaded with the
// next slice's window as soon as it is written (plain loads: a register
// holds its window until the write has used it).
//
// Needs THREADS, VEC, elem_t (softmax_common.cuh) and the running (max, sum)
// and merge helpers of softmax_online_merge.cuh.
#pragma once

#include "softmax_peel.cuh"
#include "softmax_window.cuh"

#define CHUNK_BYTES 16
// Chunks of the overflow each thread loads before it reduces them.
#define OVERFLOW_BATCH 2
// REDUCE_LAG (0 when the template leaves it out): in slice_write with a next
// slice, the windows of it a thread has in flight before it waits for the
// oldest and folds that into the next slice's (max, sum); 0 leaves the whole
// next slice to slice_reduce.
#ifndef REDUCE_LAG
#define REDUCE_LAG 0
#endif

// REG_WINDOWS (0 when the template leaves it out): windows of a slice each
// thread holds in registers, before the staged ones.
#ifndef REG_WINDOWS
#define REG_WINDOWS 0
#endif
#define HELD_WINDOWS (REG_WINDOWS * THREADS)

static_assert(VEC * sizeof(elem_t) == CHUNK_BYTES, "a chunk is one 16-byte access");

// This thread's held windows: window r * THREADS + threadIdx.x of the slice
// in w[r] (lanes outside the slice -inf). Indexed only in unrolled loops,
// so that they stay in registers.
struct held_windows {
	vec_t w[REG_WINDOWS > 0 ? REG_WINDOWS : 1];
};

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

// Waits until at most `pending` (0 or 1) of this thread's committed copy
// groups are still in flight.
__device__ __forceinline__ void cp_async_wait(int pending)
{
#if __CUDA_ARCH__ >= 800
	if (pending)
		asm volatile("cp.async.wait_group 1;" ::: "memory");
	else
		asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

// Waits until at most REDUCE_LAG of this thread's committed copy groups are
// still in flight.
__device__ __forceinline__ void cp_async_wait_lag(void)
{
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.wait_group %0;" :: "n"(REDUCE_LAG) : "memory");
#endif
}

// ---- chunks as f32 ------------------------------------------------------------

// A chunk in shared memory as four 32-bit words: read as one 16-byte access
// (an array of 16-bit elements would be read piecewise).
struct alignas(CHUNK_BYTES) chunk_t {
	unsigned w[4];
};

// Lanes outside [lo, hi) (the head's lanes before the run, the tail's past
// its end; garbage in shared memory) become -inf, which adds nothing. A
// select, so that a garbage NaN does not leak.
__device__ __forceinline__ void mask_lanes(float *v, int lo, int hi)
{
	if (lo > 0 || hi < VEC) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[j] = j >= lo && j < hi ? v[j] : NEG_INF_F;
	}
}

__device__ __forceinline__ void chunk_values(const chunk_t &c, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++) {
#if DTYPE_F32
		v[j] = __uint_as_float(c.w[j]);
#else
		v[j] = to_f32((elem_t)(j % 2 ? c.w[j / 2] >> 16 : c.w[j / 2] & 0xffffu));
#endif
	}
}

// ---- the slice ------------------------------------------------------------------

// The slice is cut into 16-byte windows of memory (softmax_peel.cuh):
// window c is xa[c * VEC ...] with its lanes [peel_lo, peel_hi) in the
// slice. The first HELD_WINDOWS are held in registers, the next `staged`
// are staged (window HELD_WINDOWS + c at chunk c of the buffer), the rest
// are overflow.
struct row_slice {
	const elem_t *xa; // the 16-byte boundary at or below the slice's start
	elem_t *y;        // the slice's first element in y
	long long n;       // elements, 0 for a slice past the row's end
	long long nchunks; // windows of x (peel_chunks)
	int kx, ky;        // the starts' offsets from a 16-byte boundary, in elements
	int staged;        // windows copied to shared memory, after the held ones
};

// The slice [begin, begin + len) of a row of N elements (clipped to the row),
// with room for cap_chunks chunks in shared memory (and HELD_WINDOWS in
// registers).
__device__ __forceinline__ row_slice make_slice(const elem_t *xrow, elem_t *yrow, long long N,
						long long begin, long long len, int cap_chunks)
{
	row_slice s;
	const long long end = begin + len < N ? begin + len : N;
	s.n = end > begin ? end - begin : 0;
	const elem_t *x = xrow + (s.n ? begin : 0);
	s.y = yrow + (s.n ? begin : 0);
	s.kx = peel_offset(x, (int)sizeof(elem_t));
	s.ky = peel_offset(s.y, (int)sizeof(elem_t));
	s.xa = x - s.kx;
	s.nchunks = peel_chunks(s.n, s.kx, VEC);
	const long long rest = HELD_WINDOWS == 0 ? s.nchunks
				 : s.nchunks > HELD_WINDOWS ? s.nchunks - HELD_WINDOWS : 0;
	s.staged = rest < cap_chunks ? (int)rest : cap_chunks;
	return s;
}

// The shared-memory address cp.async takes for buf (0 before sm_80).
__device__ __forceinline__ unsigned stage_base(const elem_t *buf)
{
#if __CUDA_ARCH__ >= 800
	return shared_addr(buf);
#else
	return 0;
#endif
}

// Starts copying the window staged at chunk c of s into buf (base:
// stage_base(buf)): a whole window by cp.async, a partial one (the head,
// not aligned at its first element, or the tail) element by element,
// zero-filled.
__device__ __forceinline__ void stage_window(elem_t *buf, unsigned base, const row_slice &s,
					     int c)
{
	const long long w = (long long)c + HELD_WINDOWS;
	const int lo = peel_lo(w, s.kx), hi = peel_hi(w, s.n, s.kx, VEC);
	const elem_t *src = s.xa + w * VEC;
	// only whole windows by cp.async: a zero-filling cp.async of a partial
	// one still counts as a 16-byte read past the row (compute-sanitizer)
	if (lo == 0 && hi == VEC) {
#if __CUDA_ARCH__ >= 800
		cp_async16(base + (unsigned)c * CHUNK_BYTES, src, CHUNK_BYTES);
#else
		reinterpret_cast<vec_t *>(buf)[c] = ld_vec(src);
#endif
		return;
	}
	for (int j = lo; j < hi; j++)
		buf[c * VEC + j] = src[j];
	for (int j = hi; j < VEC; j++)
		buf[c * VEC + j] = elem_t(0); // as the zero-filling copy left them
}

// Starts copying this thread's staged windows into buf, from chunk `from`
// of the buffer on (a multiple of THREADS: chunks this thread owns).
__device__ __forceinline__ void slice_stage_from(elem_t *buf, const row_slice &s, int from)
{
	const unsigned base = stage_base(buf);
#pragma unroll 4
	for (int c = from + threadIdx.x; c < s.staged; c += THREADS)
		stage_window(buf, base, s, c);
	cp_async_commit();
}

// Starts loading this thread's held windows of s into h.
__device__ __forceinline__ void slice_hold(held_windows &h, const row_slice &s)
{
#pragma unroll
	for (int r = 0; r < REG_WINDOWS; r++) {
		const long long c = (long long)r * THREADS + threadIdx.x;
		if (c < s.nchunks)
			load_window(h.w[r], s.xa + c * VEC, peel_lo(c, s.kx),
				    peel_hi(c, s.n, s.kx, VEC));
	}
}

// Starts bringing s on chip: the held windows first (folded first).
__device__ __forceinline__ void slice_stage(elem_t *buf, held_windows &h, const row_slice &s)
{
	slice_hold(h, s);
	slice_stage_from(buf, s, 0);
}

// Loads OVERFLOW_BATCH overflow windows of this thread from global memory,
// starting at window c (lanes outside the slice read as -inf).
__device__ __forceinline__ void load_overflow(vec_t *raw, const row_slice &s, long long c)
{
#pragma unroll
	for (int u = 0; u < OVERFLOW_BATCH; u++) {
		const long long cu = c + (long long)u * THREADS;
		load_window(raw[u], s.xa + cu * VEC, peel_lo(cu, s.kx), peel_hi(cu, s.n, s.kx, VEC));
	}
}

// Folds the staged chunk c of s (lanes outside the slice masked) into (m, sum).
__device__ __forceinline__ void reduce_chunk(const elem_t *buf, const row_slice &s, int c,
					     float &m, float &sum)
{
	float v[VEC];
	chunk_values(reinterpret_cast<const chunk_t *>(buf)[c], v);
	const long long w = (long long)c + HELD_WINDOWS;
	mask_lanes(v, peel_lo(w, s.kx), peel_hi(w, s.n, s.kx, VEC));
	accumulate(m, sum, v);
}

// slice_stage where nothing else streams (a CTA's first slice, or the next
// one after a shifted write): with REDUCE_LAG, each thread keeps REDUCE_LAG
// windows in flight and folds the oldest into (m, sum) as it lands, so that
// the fold runs under the copies instead of after the last lands (bf16: an
// exp an element, 16 a clock per multiprocessor, is microseconds at 3 CTAs
// a multiprocessor). Returns the first chunk not folded (slice_reduce's
// `from`); (m, sum) must start at (-inf, 0).
__device__ __forceinline__ int slice_stage_folding(elem_t *buf, held_windows &h,
						   const row_slice &s, float &m, float &sum)
{
	slice_hold(h, s);
#if REDUCE_LAG
	const unsigned base = stage_base(buf);
	int c = threadIdx.x, folded = threadIdx.x;
#pragma unroll 1
	for (; c < s.staged; c += THREADS) {
		stage_window(buf, base, s, c);
		cp_async_commit(); // a group a window: the group REDUCE_LAG back is `folded`'s
		if (c >= REDUCE_LAG * THREADS) {
			cp_async_wait_lag();
			reduce_chunk(buf, s, folded, m, sum);
			folded += THREADS;
		}
	}
	return folded;
#else
	slice_stage_from(buf, s, 0);
	(void)m;
	(void)sum;
	return threadIdx.x;
#endif
}

// Folds this thread's held windows of s into (m, sum).
__device__ __forceinline__ void fold_held(const held_windows &h, const row_slice &s, float &m,
					  float &sum)
{
#pragma unroll
	for (int r = 0; r < REG_WINDOWS; r++) {
		if ((long long)r * THREADS + threadIdx.x < s.nchunks) {
			float v[VEC];
			vec_values(h.w[r], v); // lanes outside the slice loaded as -inf
			accumulate(m, sum, v);
		}
	}
}

// Writes this thread's held windows of s (to ya, y's 16-byte boundary at or
// below the slice's start, as far below as x's); with `next`, reloads each
// with next's window once written.
__device__ __forceinline__ void write_held(held_windows &h, const row_slice &s, elem_t *ya,
					   float m, float scale, const row_slice *next)
{
#pragma unroll
	for (int r = 0; r < REG_WINDOWS; r++) {
		const long long c = (long long)r * THREADS + threadIdx.x;
		if (c < s.nchunks) {
			float v[VEC];
			launder(h.w[r]); // else the f32 of fold_held's pass is kept
			vec_values(h.w[r], v);
			write_window(ya + c * VEC, peel_lo(c, s.kx), peel_hi(c, s.n, s.kx, VEC), v,
				     m, scale);
		}
		if (next && c < next->nchunks)
			load_window(h.w[r], next->xa + c * VEC, peel_lo(c, next->kx),
				    peel_hi(c, next->n, next->kx, VEC));
	}
}

// This thread's (m, s) over its windows of the slice: the overflow first,
// from global memory, and the held windows, while the staged copies arrive,
// then the staged ones from chunk `from` (those before it already folded
// into (m, sum) by slice_write; else from = threadIdx.x and (m, sum) =
// (-inf, 0)). `pending`: copy groups committed after this slice's (1 when
// the next row's slice is already on its way into another buffer).
__device__ __forceinline__ void slice_reduce(const elem_t *buf, const held_windows &h,
					     const row_slice &s, float &m, float &sum, int pending,
					     int from)
{
	for (long long c = HELD_WINDOWS + s.staged + threadIdx.x; c < s.nchunks;
	     c += OVERFLOW_BATCH * THREADS) {
		vec_t raw[OVERFLOW_BATCH];
		load_overflow(raw, s, c);
#pragma unroll
		for (int u = 0; u < OVERFLOW_BATCH; u++) {
			float v[VEC];
			vec_values(raw[u], v);
			accumulate(m, sum, v);
		}
	}
	fold_held(h, s, m, sum);
	cp_async_wait(pending);
#pragma unroll 2
	for (int c = from; c < s.staged; c += THREADS)
		reduce_chunk(buf, s, c, m, sum);
}

// y's start is not as far from a 16-byte boundary as x's: y's windows
// straddle x's, so a thread reads staged elements other threads copied
// (barriers before and after, the CTA being in step: kx and ky are the
// same for all its threads) with scalar shared-memory reads, the held
// windows (other threads' registers) and the overflow from global memory.
__device__ __forceinline__ void slice_write_shifted(const elem_t *buf, const row_slice &s,
						    float m, float scale)
{
	__syncthreads();
	// the slice's elements staged: [held_end, staged_end)
	const long long held_end = (long long)HELD_WINDOWS * VEC - s.kx;
	const long long staged_end = held_end + (long long)s.staged * VEC;
	elem_t *const ya = s.y - s.ky;
	const elem_t *const x = s.xa + s.kx;
	const long long nyc = peel_chunks(s.n, s.ky, VEC);
	for (long long c = threadIdx.x; c < nyc; c += THREADS) {
		const int lo = peel_lo(c, s.ky), hi = peel_hi(c, s.n, s.ky, VEC);
		float v[VEC];
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			const long long e = c * VEC - s.ky + j; // the slice's element
			v[j] = 0.0f;
			const bool staged = (HELD_WINDOWS == 0 || e >= held_end) && e < staged_end;
			if (j >= lo && j < hi)
				v[j] = to_f32(staged ? buf[e - held_end] : x[e]);
		}
		write_window(ya + c * VEC, lo, hi, v, m, scale);
	}
	__syncthreads(); // before the next row's copy overwrites what others read
}

// Writes y (out_from_max) over the slice: the held windows from
// h, the staged ones from shared memory, the overflow read again. With
// `next` (a persistent CTA's next slice, staged in the same buffer and held
// in h), each window of next is loaded as soon as this thread has written
// the one it replaces, so the next slice's loads overlap this one's stores:
// the chunk was read into registers that fed the store, issued before (in
// order) the copy. With
// REDUCE_LAG, the window copied REDUCE_LAG windows earlier is then waited
// for and folded into next's (nm, ns), so that little of next is left to
// reduce once this slice is written; returns the first chunk of next this
// thread has not folded (slice_reduce's `from`).
__device__ __forceinline__ int slice_write(elem_t *buf, held_windows &h, const row_slice &s,
					   float m, float scale, const row_slice *next = nullptr,
					   float *nm = nullptr, float *ns = nullptr)
{
	if (s.kx != s.ky) {
		slice_write_shifted(buf, s, m, scale);
		return next ? slice_stage_folding(buf, h, *next, *nm, *ns) : (int)threadIdx.x;
	}
	elem_t *const ya = s.y - s.ky;
	write_held(h, s, ya, m, scale, next);
	for (long long c = HELD_WINDOWS + s.staged + threadIdx.x; c < s.nchunks;
	     c += OVERFLOW_BATCH * THREADS) {
		vec_t raw[OVERFLOW_BATCH];
		load_overflow(raw, s, c);
#pragma unroll
		for (int u = 0; u < OVERFLOW_BATCH; u++) {
			const long long cu = c + (long long)u * THREADS;
			float v[VEC];
			vec_values(raw[u], v);
			write_window(ya + cu * VEC, peel_lo(cu, s.kx), peel_hi(cu, s.n, s.kx, VEC), v,
				     m, scale);
		}
	}
	const chunk_t *chunks = reinterpret_cast<const chunk_t *>(buf);
	if (!next) {
#pragma unroll 2
		for (int c = threadIdx.x; c < s.staged; c += THREADS) {
			float v[VEC];
			chunk_values(chunks[c], v); // write_window drops the lanes outside the slice
			const long long w = (long long)c + HELD_WINDOWS;
			write_window(ya + w * VEC, peel_lo(w, s.kx), peel_hi(w, s.n, s.kx, VEC), v,
				     m, scale);
		}
		return threadIdx.x;
	}
	// not unrolled: with the copies in the loop, unrolling made ptxas spill
	// bf16 512-thread variants at 64 registers
	const unsigned base = stage_base(buf);
	int c = threadIdx.x, folded = threadIdx.x;
#pragma unroll 1
	for (; c < s.staged; c += THREADS) {
		float v[VEC];
		chunk_values(chunks[c], v);
		const long long w = (long long)c + HELD_WINDOWS;
		write_window(ya + w * VEC, peel_lo(w, s.kx), peel_hi(w, s.n, s.kx, VEC), v, m, scale);
		if (c < next->staged)
			stage_window(buf, base, *next, c);
#if REDUCE_LAG
		// one copy group a window (empty past next's), so that the
		// group REDUCE_LAG back is window `folded`'s
		cp_async_commit();
		if (c >= REDUCE_LAG * THREADS && folded < next->staged) {
			cp_async_wait_lag();
			reduce_chunk(buf, *next, folded, *nm, *ns);
			folded += THREADS;
		}
#endif
	}
	slice_stage_from(buf, *next, c - (int)threadIdx.x);
	return folded;
}
