// Template softmax_backward_tiny: the leanest softmax (and log_softmax)
// backward, for launch-bound shapes and rows of a few elements (the
// forward's softmax_tiny, with y and dy in and dx out). A group of LANES
// threads takes one row, each lane ELEMS_PER_THREAD of its elements, LANES
// apart (a warp's loads coalesce element by element); one path, no
// vectors, no peeling, no persistent grid. Rows whose bytes divide 16 (1,
// 2, 4 or 8 halves; 1, 2 or 4 floats) are the exception: a 16-byte vector
// of them a thread (below).
// Regime: rows up to 512 elements where the problem takes a few
// microseconds, and tall matrices of rows of a few elements, where
// softmax_backward_warp's smallest group (two lanes, a 4-byte vector) ran
// f16 591129 x 2 at 0.62 of a copy's bandwidth, torch.compile's one
// thread a row at 0.96-0.98 (H200, session 55's draws).
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   LANES             threads per row (2..32, a power of two)
//   ELEMS_PER_THREAD  elements of each input's row a lane holds (LANES * it >= N)
//   VECTORS           16-byte vectors of rows a thread, where rows divide 16 bytes
#define VEC 1
#include "softmax_backward_common.cuh"

#ifndef VECTORS
#define VECTORS 1
#endif

#define GROUPS (THREADS / LANES)

// Loads E elements of rows r0.. (NN each) of y and of dy: two 16-byte
// loads where the rows are contiguous (ld NN) and aligned, else element by
// element, elements of rows past M 0 (never stored). One branch for both
// tensors: with a branch each, the first's halves were packed two a
// register at its join, which waited for its loads before the second's
// were issued: two DRAM round trips, not one, for the thread holding the
// matrix's last rows (one branch: f16 1001 x 4 4.54 -> 4.22 us, bf16 301 x
// 4 4.35 -> 4.10, the best variants; H200, results/h200/backward-tiny-ab-
// h200.log).
template <int NN, int E>
__device__ __forceinline__ void load_rows(elem_t (&ye)[E], elem_t (&ge)[E], const elem_t *y,
					  const elem_t *dy, long long r0, long long M, long long ldy,
					  long long lddy, bool whole)
{
	if (whole) {
		*reinterpret_cast<uint4 *>(ye) = *reinterpret_cast<const uint4 *>(y + r0 * NN);
		*reinterpret_cast<uint4 *>(ge) = *reinterpret_cast<const uint4 *>(dy + r0 * NN);
		return;
	}
#pragma unroll
	for (int k = 0; k < E; k++) {
		const bool in = r0 + k / NN < M;
		ye[k] = in ? y[(r0 + k / NN) * ldy + k % NN] : from_f32(0.0f);
		ge[k] = in ? dy[(r0 + k / NN) * lddy + k % NN] : from_f32(0.0f);
	}
}

// Whether vector v (rows v R .. v R + R - 1) lies within M and so does
// every vector of its warp: the warp holding the matrix's last, partial
// vector goes element by element as one. Its threads diverging between
// the whole vectors and the partial one cost half-precision rows of one
// 0.2-0.35 us (f16 255 x 1 4.16 -> 3.81 us, 1001 x 1 4.16 -> 3.81, the
// best variants; H200, results/h200/backward-tiny-tails-h200.log).
__device__ __forceinline__ bool whole_warp(long long v, int R, long long M)
{
	return (v + 1) * R <= M && (M % R == 0 || v - threadIdx.x % 32 + 32 <= M / R);
}

// Rows whose bytes divide 16: each thread takes VECTORS 16-byte vectors of
// y and of dy, THREADS vectors apart (a warp's accesses coalesce), each the
// R = 16 / (NN x element size) rows of one vector, issues all their loads
// before it sums a row, sums each row in its registers and stores dx's
// vectors whole (the manifest's rows_per_cta is THREADS VECTORS R).
// Contiguous rows at 16-byte-aligned bases are whole vectors; strided or
// misaligned ones go element by element. Several vectors a thread: at one
// (f16 1000003 x 2: 250K threads, 38 registers each) the grid was two
// waves, 10.3 us for 12 MB (H200).
template <int NN>
__device__ __forceinline__ void packed_rows_of_thread(elem_t *dx, const elem_t *y,
						      const elem_t *dy, long long M,
						      long long lddx, long long ldy,
						      long long lddy)
{
	constexpr int R = 16 / (NN * (int)sizeof(elem_t)), E = R * NN;
	const long long v0 = (long long)blockIdx.x * THREADS * VECTORS + threadIdx.x;
	if (v0 * R >= M)
		return;
	const bool contiguous = ldy == NN && lddy == NN && lddx == NN &&
				((unsigned long long)dx | (unsigned long long)y |
				 (unsigned long long)dy) % 16 == 0;
	alignas(16) elem_t ye[VECTORS][E];
	alignas(16) elem_t ge[VECTORS][E];
#pragma unroll
	for (int u = 0; u < VECTORS; u++) {
		const long long r0 = (v0 + u * THREADS) * R;
		const bool whole = contiguous && whole_warp(v0 + u * THREADS, R, M);
		load_rows<NN>(ye[u], ge[u], y, dy, r0, M, ldy, lddy, whole);
	}
#pragma unroll
	for (int u = 0; u < VECTORS; u++) {
		const long long r0 = (v0 + u * THREADS) * R;
		alignas(16) elem_t out[E];
#pragma unroll
		for (int r = 0; r < R; r++) {
			grad_r_t rw;
			if constexpr (NN == 1) {
				// rows of one: the double unit's conversions cost
				// bf16 1000003 x 1 5.92 -> 5.50 us, f16 255 x 1
				// 4.32 -> 4.06 (the best variants, H200)
				rw = single_term_r(to_f32(ye[u][r]), to_f32(ge[u][r]));
			} else {
				grad_acc_t s = 0;
#pragma unroll
				for (int c = 0; c < NN; c++)
					s += grad_term(to_f32(ye[u][r * NN + c]),
						       to_f32(ge[u][r * NN + c]));
				rw = acc_final(s);
			}
#pragma unroll
			for (int c = 0; c < NN; c++)
				out[r * NN + c] = from_f32(grad_out(to_f32(ye[u][r * NN + c]),
								    to_f32(ge[u][r * NN + c]), rw));
		}
		if (contiguous && whole_warp(v0 + u * THREADS, R, M)) {
			*reinterpret_cast<uint4 *>(dx + r0 * NN) =
				*reinterpret_cast<const uint4 *>(out);
			continue;
		}
#pragma unroll
		for (int k = 0; k < E; k++)
			if (r0 + k / NN < M)
				dx[(r0 + k / NN) * lddx + k % NN] = out[k];
	}
}

// Whether N is NN, rows of NN divide a vector, this variant's rows may be
// that long (it serves N in (LANES (ELEMS_PER_THREAD - 1), LANES
// ELEMS_PER_THREAD], at most 16 rows a thread: only those are
// instantiated, as the manifest's constraints say) and there are more rows
// than its groups (fewer keep the groups, a grid of one CTA either way);
// if so, its rows done.
template <int NN>
__device__ __forceinline__ bool packed_rows_done(elem_t *dx, const elem_t *y, const elem_t *dy,
						 long long M, long long N, long long lddx,
						 long long ldy, long long lddy)
{
	if constexpr (NN > LANES * ELEMS_PER_THREAD || NN <= LANES * (ELEMS_PER_THREAD - 1) ||
		      16 % (NN * (int)sizeof(elem_t)) != 0 ||
		      VECTORS > NN * (int)sizeof(elem_t)) {
		return false;
	} else {
		if (N != NN || M <= GROUPS)
			return false;
		packed_rows_of_thread<NN>(dx, y, dy, M, lddx, ldy, lddy);
		return true;
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	if (packed_rows_done<1>(dx, y, dy, M, N, lddx, ldy, lddy) ||
	    packed_rows_done<2>(dx, y, dy, M, N, lddx, ldy, lddy) ||
	    packed_rows_done<4>(dx, y, dy, M, N, lddx, ldy, lddy) ||
	    packed_rows_done<8>(dx, y, dy, M, N, lddx, ldy, lddy))
		return;
	const long long row = (long long)blockIdx.x * GROUPS + threadIdx.x / LANES;
	const int lane = threadIdx.x % LANES;
	// N <= LANES * ELEMS_PER_THREAD: a column fits an int; a row past M
	// still takes part in the shuffles, with nothing loaded
	const int n = row < M ? (int)N : 0;
	const elem_t *yr = y + row * ldy, *gr = dy + row * lddy;
	float yv[ELEMS_PER_THREAD], gv[ELEMS_PER_THREAD];
	grad_acc_t s = 0;
#pragma unroll
	for (int i = 0; i < ELEMS_PER_THREAD; i++) {
		const int c = lane + i * LANES;
		// past the row: 0, whose term is 0 for both ops
		yv[i] = c < n ? to_f32(yr[c]) : 0.0f;
		gv[i] = c < n ? to_f32(gr[c]) : 0.0f;
		s += grad_term(yv[i], gv[i]);
	}
	const grad_r_t rw = acc_final(group_sum_acc<LANES>(s));
	elem_t *dr = dx + row * lddx;
#pragma unroll
	for (int i = 0; i < ELEMS_PER_THREAD; i++) {
		const int c = lane + i * LANES;
		if (c < n)
			dr[c] = from_f32(grad_out(yv[i], gv[i], rw));
	}
}
