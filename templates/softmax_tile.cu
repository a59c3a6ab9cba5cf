// Template softmax_tile: short rows moved as one contiguous tile. A CTA's
// ROWS_PER_CTA rows of a contiguous tensor are one span of memory, whatever
// N: the span is copied into shared memory in 16-byte cp.async chunks from
// the vector boundary below its start, each row is normalised there by a
// group of LANES threads (registers and shuffles), and the span is written
// back in 16-byte stores. Only the span's first and last chunks, shared
// with the neighbouring CTAs' rows, move element by element.
// Regime: rows too short for a CTA each (up to 512 elements) whose
// length is not a multiple of the vector (N % 4 for f32, N % 8 for f16 and
// bf16), where the per-row templates load element by element or peel every
// row (f16 65536 x 100 ran at 86% of copy with softmax_warp).
// A strided tensor (ldx or ldy != N) or a pointer off 16 bytes takes a
// plain element-by-element copy into the same tile: correct, not fast.
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   LANES             threads per row (1..32, a power of two; 1 or 2 for
//                     rows of a few elements, no shuffles)
//   ROWS_PER_CTA      rows of the tile; each group of LANES threads takes
//                     ROWS_PER_CTA / (THREADS / LANES) of them
//   VEC               elements per 16-byte chunk (4 for f32, 8 for f16/bf16)
//   ELEMS_PER_THREAD  elements of a row each lane holds (LANES * it >= N)
//   CACHE_HINT        1: evict-first 16-byte stores
// Needs sm_80+ (cp.async).
#include "softmax_common.cuh"
#include "softmax_tile_span.cuh"

#define GROUPS (THREADS / LANES)
#define ROWS_PER_GROUP (ROWS_PER_CTA / GROUPS)

__device__ __forceinline__ void cp_async16(elem_t *dst, const elem_t *src)
{
	const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all(void)
{
	asm volatile("cp.async.wait_all;" ::: "memory");
}

// Copies x[a, b) into the tile: whole chunks by cp.async, the chunks cut by
// a or b element by element (their other elements are other CTAs' rows).
__device__ __forceinline__ void load_span(elem_t *tile, const elem_t *x, const span &s)
{
	const long long first = s.base / VEC, last = (s.b + VEC - 1) / VEC;
	for (long long c = first + threadIdx.x; c < last; c += THREADS) {
		const long long e = c * VEC;
		elem_t *dst = tile + (e - s.base);
		if (e >= s.a && e + VEC <= s.b) {
			cp_async16(dst, x + e);
		} else {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				if (e + j >= s.a && e + j < s.b)
					dst[j] = x[e + j];
		}
	}
	cp_async_wait_all();
}

// Normalises the tile's rows in place. Every group runs ROWS_PER_GROUP
// steps, rows past `rows` with nothing loaded, so that the shuffles see
// every lane of the warp.
__device__ __forceinline__ void softmax_tile_rows(elem_t *tile, int rows, int n, unsigned flags)
{
	const int group = threadIdx.x / LANES, lane = threadIdx.x % LANES;
#pragma unroll
	for (int k = 0; k < ROWS_PER_GROUP; k++) {
		const int r = group + k * GROUPS;
		elem_t *row = tile + r * n;
		const int len = r < rows ? n : 0;
		float v[ELEMS_PER_THREAD];
		float m = NEG_INF_F;
#pragma unroll
		for (int i = 0; i < ELEMS_PER_THREAD; i++) {
			const int j = i * LANES + lane;
			v[i] = j < len ? to_f32(row[j]) : NEG_INF_F;
			m = fmaxf(m, v[i]);
		}
		m = masked_max(group_max<LANES>(m), flags);
		float s = 0.0f;
#pragma unroll
		for (int i = 0; i < ELEMS_PER_THREAD; i++) {
			// past the row: held as a term of 0
			v[i] = i * LANES + lane < len ? held_from(v[i], m)
						      : (LOG_OUTPUT ? NEG_INF_F : 0.0f);
			s += held_term(v[i]);
		}
		s = write_scale(masked_sum(group_sum<LANES>(s), flags));
#pragma unroll
		for (int i = 0; i < ELEMS_PER_THREAD; i++) {
			const int j = i * LANES + lane;
			if (j < len)
				row[j] = from_f32(out_from_held(v[i], s));
		}
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_kernel(elem_t *__restrict__ y, const elem_t *__restrict__ x, long long M,
	       long long N, long long ldy, long long ldx, unsigned flags)
{
	if (N == 1) {
		one_element_rows(y, x, M, ldy, ldx, flags);
		return;
	}
	extern __shared__ __align__(16) elem_t tile_mem[];
	const long long r0 = (long long)blockIdx.x * ROWS_PER_CTA;
	const int rows = (int)(M - r0 < ROWS_PER_CTA ? M - r0 : ROWS_PER_CTA);
	const int n = (int)N;
	// one span: both tensors contiguous, and chunks of x and y start alike
	const bool contiguous = ldx == N && ldy == N && (unsigned long long)x % 16 == 0 &&
				(unsigned long long)y % 16 == 0;
	span s = { r0 * N, (r0 + rows) * N, 0 };
	s.base = s.a / VEC * VEC;
	// the rows start at tile[a - base] on the contiguous path, tile[0] else
	elem_t *rows_at = contiguous ? tile_mem + (s.a - s.base) : tile_mem;
	if (contiguous)
		load_span(tile_mem, x, s);
	else
		load_rows_strided(tile_mem, x, r0, rows, n, ldx);
	__syncthreads();
	softmax_tile_rows(rows_at, rows, n, flags);
	__syncthreads();
	if (contiguous)
		store_span(y, tile_mem, s);
	else
		store_rows_strided(y, tile_mem, r0, rows, n, ldy);
}
