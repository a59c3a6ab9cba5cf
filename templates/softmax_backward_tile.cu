// Template softmax_backward_tile: the softmax (and log_softmax) backward of
// short rows moved as contiguous tiles, softmax_tile's way. A CTA's
// ROWS_PER_CTA rows of y and of dy are one span of memory each, whatever N:
// both spans are copied into shared memory in 16-byte cp.async chunks from
// the vector boundary below their start, each row's r and dx are computed
// there by a group of LANES threads (dx written over dy's tile), and the
// span of dx is written back in 16-byte stores. Only the spans' first and
// last chunks, shared with the neighbouring CTAs' rows, move element by
// element.
// Regime: tall matrices of rows up to 512 elements that are not a whole
// number of 16-byte vectors (f16 / bf16 x 33, 63, 167), where the per-row
// templates load element by element or peel every row: every variant of
// every other backward template ran half-precision rows of 33 and 63 at
// 45-80% of a 2-read-1-write copy (H200, sessions 65-66).
// With HELD 0 the group reads a row from the tile twice (for r, then for
// dx); with HELD > 0 each lane keeps its HELD elements of y and dy in
// registers from the first read to the second (half the shared-memory
// reads: softmax_backward's four a pair of elements against log's three
// had run its tiles 5-10% slower). A strided tensor (a leading dimension != N) or a
// pointer off 16 bytes takes a plain element-by-element copy into the same
// tiles: correct, not fast. In place (dx = dy) is safe: a CTA reads only
// its own rows' elements, all before it writes.
//
// Parameters (macros set by the generator):
//   THREADS       threads per CTA (a multiple of 32)
//   LANES         threads per row (1..32, a power of two)
//   ROWS_PER_CTA  rows of a CTA's tiles; each group of LANES threads takes
//                 ROWS_PER_CTA / (THREADS / LANES) of them
//   VEC           elements per 16-byte chunk (4 for f32, 8 for f16/bf16)
//   CACHE_HINT    1: evict-first copies and stores
//   HELD          elements of a row each lane holds in registers between
//                 its two passes (0: none, the tile read twice); rows
//                 longer than HELD * LANES take the two reads
// Needs sm_80+ (cp.async).
#include "softmax_backward_common.cuh"
#include "softmax_cp_async.cuh"
#include "softmax_tile_span.cuh"

#define GROUPS (THREADS / LANES)
#define ROWS_PER_GROUP (ROWS_PER_CTA / GROUPS)

// Copies t[a, b) into the tile: whole chunks by cp.async, the chunks cut by
// a or b element by element (their other elements are other CTAs' rows).
__device__ __forceinline__ void load_span(elem_t *tile, const elem_t *t, const span &s)
{
	// made here, not passed in: a policy held across both spans' loops put
	// 8 bytes of it on the stack (f16 x 63, cache_hint 1)
	const unsigned long long pol = copy_policy();
	const long long first = s.base / VEC, last = (s.b + VEC - 1) / VEC;
	for (long long c = first + threadIdx.x; c < last; c += THREADS) {
		const long long e = c * VEC;
		elem_t *dst = tile + (e - s.base);
		if (e >= s.a && e + VEC <= s.b) {
			cp_async16(shared_addr(dst), t + e, pol);
		} else {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				if (e + j >= s.a && e + j < s.b)
					dst[j] = t[e + j];
		}
	}
}

// dx of the tiles' rows, written over dy's tile. Every group runs
// ROWS_PER_GROUP steps, rows past `rows` empty, so that the shuffles see
// every lane of the warp.
__device__ __forceinline__ void grads_of_tile_rows(const elem_t *ytile, elem_t *gtile, int rows,
						   int n)
{
	const int group = threadIdx.x / LANES, lane = threadIdx.x % LANES;
#pragma unroll
	for (int k = 0; k < ROWS_PER_GROUP; k++) {
		const int r = group + k * GROUPS;
		const elem_t *yr = ytile + r * n;
		elem_t *gr = gtile + r * n;
		const int len = r < rows ? n : 0;
		grad_acc_t acc = 0;
#if HELD > 0
		if (n <= HELD * LANES) {
			// the same terms in the same order as the reads below; the
			// slots past the row add zeros
			float yv[HELD], gv[HELD];
#pragma unroll
			for (int i = 0; i < HELD; i++) {
				const int j = lane + i * LANES;
				yv[i] = j < len ? to_f32(yr[j]) : 0.0f;
				gv[i] = j < len ? to_f32(gr[j]) : 0.0f;
				if (j < len)
					acc += grad_term(yv[i], gv[i]);
			}
			const grad_r_t rh = acc_final(group_sum_acc<LANES>(acc));
#pragma unroll
			for (int i = 0; i < HELD; i++) {
				const int j = lane + i * LANES;
				if (j < len)
					gr[j] = from_f32(grad_out(yv[i], gv[i], rh));
			}
			continue;
		}
#endif
#pragma unroll 4
		for (int j = lane; j < len; j += LANES)
			acc += grad_term(to_f32(yr[j]), to_f32(gr[j]));
		const grad_r_t rw = acc_final(group_sum_acc<LANES>(acc));
#pragma unroll 4
		for (int j = lane; j < len; j += LANES)
			gr[j] = from_f32(grad_out(to_f32(yr[j]), to_f32(gr[j]), rw));
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	(void)flags;
	extern __shared__ __align__(16) elem_t tile_mem[];
	// two tiles, each half of the launch's shared memory (a 16-byte multiple)
	elem_t *ytile = tile_mem, *gtile = tile_mem + dynamic_smem_bytes() / 2 / 16 * 16 / sizeof(elem_t);
	const long long r0 = (long long)blockIdx.x * ROWS_PER_CTA;
	const int rows = (int)(M - r0 < ROWS_PER_CTA ? M - r0 : ROWS_PER_CTA);
	const int n = (int)N;
	// one span a tensor: all three contiguous, their chunks starting alike
	const bool contiguous = ldy == N && lddy == N && lddx == N &&
				((unsigned long long)y | (unsigned long long)dy |
				 (unsigned long long)dx) % 16 == 0;
	span s = { r0 * N, (r0 + rows) * N, 0 };
	s.base = s.a / VEC * VEC;
	// the rows start at tile[a - base] on the contiguous path, tile[0] else
	const long long at = contiguous ? s.a - s.base : 0;
	if (contiguous) {
		load_span(ytile, y, s);
		load_span(gtile, dy, s);
		cp_async_commit();
		cp_async_wait(0);
	} else {
		load_rows_strided(ytile, y, r0, rows, n, ldy);
		load_rows_strided(gtile, dy, r0, rows, n, lddy);
	}
	__syncthreads();
	grads_of_tile_rows(ytile + at, gtile + at, rows, n);
	__syncthreads();
	if (contiguous)
		store_span(dx, gtile, s);
	else
		store_rows_strided(dx, gtile, r0, rows, n, lddx);
}
