// Template softmax_block: one CTA per row, the whole row held in registers.
// Regime: medium rows (about 1K to 32K elements) that fit in the registers of
// one CTA; the row is read once and written once.
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA
//   VEC               elements per vector access (VEC * element size <= 16 B)
//   ELEMS_PER_THREAD  elements each thread holds (a multiple of VEC)
//   STAGES            rows in flight per CTA in the persistent loop: the
//                     loads of the next STAGES-1 rows are issued before the
//                     current row is reduced (1 = no prefetch)
//   CACHE_HINT        1: streaming cache hints on loads and stores
//   PERSISTENT        0: one CTA per row; 1: a grid sized from occupancy
//                     whose CTAs loop over rows
//   PACKED            1 (half precision): the row stays packed in registers
//                     until it is written, its exponentials computed twice
//   PEEL              1: rows of any length and alignment move whole
//                     vectors, each peeled at its own offset from a vector
//                     boundary (softmax_row_windows.cuh); 0: only when every
//                     row is vector-aligned, else element by element
#include "softmax_common.cuh"
#include "softmax_row_windows.cuh"

#define ITERS (ELEMS_PER_THREAD / VEC)
#define WARPS (THREADS / 32)
#define HOLD (THREADS * ELEMS_PER_THREAD)

#include "softmax_cta_reduce.cuh"

struct row_buf {
	vec_t v[ITERS];
};

// This thread's i-th window of a row.
__device__ __forceinline__ int window_col(int i)
{
	return (i * THREADS + (int)threadIdx.x) * VEC;
}

__device__ __forceinline__ void load_row(row_buf &b, const elem_t *row, long long n,
					 bool coaligned)
{
	const row_peel p = peel_row<PEEL>(row, n, HOLD, coaligned);
#pragma unroll
	for (int i = 0; i < ITERS; i++)
		load_row_window<PEEL>(b.v[i], row - p.k, window_col(i), p);
}

// Softmax of one row from registers to y. The two reductions use separate
// shared slots, so consecutive rows need no extra barrier: a warp can only
// overwrite a slot after every warp has passed the next reduction's barrier.
#if PACKED
// Half precision, the row kept as loaded (two elements a register) across
// both reductions: half the registers of f32 exponentials, so twice the
// rows in flight a multiprocessor, for a second exp per element at the
// write. That exp folds the division into its exponent,
// exp2((x - m) log2(e) - log2(sum)), so it differs from the sum's: the
// compiler cannot keep the sum's exponentials (f32) alive to reuse them.
__device__ __forceinline__ void finish_row(row_buf &b, elem_t *row, long long n,
					   bool coaligned, float *max_slot, float *sum_slot,
					   unsigned flags)
{
	float m = NEG_INF_F;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
		m = fmaxf(m, vec_max(b.v[i]));
	m = masked_max(cta_max(m, max_slot), flags);
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += exp_from_max(to_f32(b.v[i].v[j]), m);
	const float lg = fast_log2(masked_sum(cta_sum(s, sum_slot), flags));
	// peeled again rather than kept: y's rows start where x's do, and a
	// peel held across the reductions costs registers the packed row needs
	const row_peel p = peel_row<PEEL>(row, n, HOLD, coaligned);
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		launder(b.v[i]);
		float out[VEC];
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out[j] = out_from_max_over(to_f32_again(b.v[i], j), m, lg);
		store_row_window<PEEL>(row - p.k, window_col(i), p, out);
	}
}
#else
__device__ __forceinline__ void finish_row(const row_buf &b, elem_t *row, long long n,
					   bool coaligned, float *max_slot, float *sum_slot,
					   unsigned flags)
{
	// the max from the loaded vectors (packed in half precision: vec_max),
	// then the values converted, before the CTA's barrier: converted after
	// it, some variants took more registers (bf16 512 x 16: 38, not 31)
	float m = NEG_INF_F;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
		m = fmaxf(m, vec_max(b.v[i]));
	float v[ITERS][VEC];
#pragma unroll
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[i][j] = to_f32(b.v[i].v[j]);
	m = masked_max(cta_max(m, max_slot), flags);
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < ITERS; i++)
#pragma unroll
		for (int j = 0; j < VEC; j++) {
			v[i][j] = held_from(v[i][j], m);
			s += held_term(v[i][j]);
		}
	const float scale = write_scale(masked_sum(cta_sum(s, sum_slot), flags));
	const row_peel p = peel_row<PEEL>(row, n, HOLD, coaligned);
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			v[i][j] = out_from_held(v[i][j], scale);
		store_row_window<PEEL>(row - p.k, window_col(i), p, v[i]);
	}
}
#endif

#if PACKED
#define LAUNCH_BOUNDS __launch_bounds__(THREADS, HELD_CTAS(ELEMS_PER_THREAD * STAGES / 2))
#else
#define LAUNCH_BOUNDS __launch_bounds__(THREADS)
#endif

extern "C" __global__ void LAUNCH_BOUNDS
softmax_kernel(elem_t *__restrict__ y, const elem_t *__restrict__ x, long long M,
	       long long N, long long ldy, long long ldx, unsigned flags)
{
	__shared__ float max_slot[32], sum_slot[32];
	const bool coaligned = rows_coaligned<PEEL>(x, ldx, y, ldy);
#if PERSISTENT
	row_buf buf[STAGES];
	const long long step = gridDim.x;
	long long row = blockIdx.x;
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++)
		if (row + s * step < M)
			load_row(buf[s], x + (row + s * step) * ldx, N, coaligned);
	for (; row < M; row += STAGES * step) {
#pragma unroll
		for (int s = 0; s < STAGES; s++) {
			const long long r = row + s * step;
			const long long ahead = r + (STAGES - 1) * step;
			if (ahead < M)
				load_row(buf[(s + STAGES - 1) % STAGES], x + ahead * ldx, N,
					       coaligned);
			if (r < M)
				finish_row(buf[s], y + r * ldy, N, coaligned, max_slot,
						 sum_slot, flags);
		}
	}
#else
	row_buf buf;
	const long long row = blockIdx.x;
	load_row(buf, x + row * ldx, N, coaligned);
	finish_row(buf, y + row * ldy, N, coaligned, max_slot, sum_slot, flags);
#endif
}
