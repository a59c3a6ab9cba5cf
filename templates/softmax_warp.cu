// Template softmax_warp: a warp or a sub-warp of LANES threads per row,
// several rows per CTA, rows held in registers, reductions by shuffles only
// (no shared memory, no barriers).
// Regime: short rows (up to about 1K elements) where a CTA per row would
// leave most threads idle and pay a barrier per row.
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   LANES             threads per row (2..32, a power of two)
//   ROWS_PER_CTA      rows a CTA handles per step; each group of LANES
//                     threads takes ROWS_PER_CTA / (THREADS / LANES) of them
//   VEC               elements per vector access (VEC * element size <= 16 B)
//   ELEMS_PER_THREAD  elements of one row each thread holds (multiple of VEC)
//   STAGES            row steps in flight in the persistent loop (1 = none)
//   CACHE_HINT        1: streaming cache hints on loads and stores
//   PERSISTENT        0: one step per CTA; 1: occupancy-sized grid that loops
//   PEEL              1: rows of any length and alignment move whole
//                     vectors, each peeled at its own offset from a vector
//                     boundary (softmax_row_windows.cuh); 0: only when every
//                     row is vector-aligned, else element by element
#include "softmax_common.cuh"
#include "softmax_row_windows.cuh"

#define ITERS (ELEMS_PER_THREAD / VEC)
#define GROUPS (THREADS / LANES)
#define ROWS_PER_GROUP (ROWS_PER_CTA / GROUPS)
#define HOLD (LANES * ELEMS_PER_THREAD)

struct rows_buf {
	vec_t v[ROWS_PER_GROUP][ITERS];
};

// Where this thread's row r of the step at row `first` starts. FULL (see
// full_step: every offset below 2^31): in 32-bit math, and already at the
// lane's first vector; at short rows, which are latency-bound, the prologue
// before the first load is what the kernel costs.
template <bool FULL>
__device__ __forceinline__ long long row_offset(long long first, int r, long long ld)
{
	const int row_in_cta = (threadIdx.x / LANES) * ROWS_PER_GROUP + r;
	if (FULL)
		return ((int)first + row_in_cta) * (int)ld + (int)(threadIdx.x % LANES) * VEC;
	return (first + row_in_cta) * ld;
}

// Loads this group's rows of the step that starts at row `first`. FULL:
// every vector is whole and every row is below M, so none is checked.
template <bool FULL>
__device__ __forceinline__ void load_rows(rows_buf &b, const elem_t *x, long long first,
					  long long M, long long N, long long ldx, bool coaligned)
{
	const int lane = threadIdx.x % LANES;
	const long long base = first + (long long)(threadIdx.x / LANES) * ROWS_PER_GROUP;
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++) {
		const elem_t *row = x + row_offset<FULL>(first, r, ldx);
		// Rows past M still take part in the shuffles, with nothing loaded.
		const long long n = base + r < M ? N : 0;
		const row_peel p = peel_row<PEEL>(row, n, HOLD, coaligned);
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			if (FULL)
				b.v[r][i] = ld_vec(row + i * LANES * VEC);
			else
				load_row_window<PEEL>(b.v[r][i], row - p.k, (i * LANES + lane) * VEC, p);
		}
	}
}

template <bool FULL>
__device__ __forceinline__ void finish_rows(const rows_buf &b, elem_t *y, long long first,
					    long long M, long long N, long long ldy, bool coaligned,
					    unsigned flags)
{
	const int lane = threadIdx.x % LANES;
	const long long base = first + (long long)(threadIdx.x / LANES) * ROWS_PER_GROUP;
	// the max from the loaded vectors, the values converted only for their
	// exps (vec_max: fewer registers in half precision)
	float m[ROWS_PER_GROUP], s[ROWS_PER_GROUP];
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++) {
		m[r] = NEG_INF_F;
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			m[r] = fmaxf(m[r], vec_max(b.v[r][i]));
	}
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++)
		m[r] = masked_max(group_max<LANES>(m[r]), flags);
	float v[ROWS_PER_GROUP][ITERS][VEC];
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++) {
		s[r] = 0.0f;
#pragma unroll
		for (int i = 0; i < ITERS; i++)
#pragma unroll
			for (int j = 0; j < VEC; j++) {
				v[r][i][j] = held_from(to_f32(b.v[r][i].v[j]), m[r]);
				s[r] += held_term(v[r][i][j]);
			}
	}
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++)
		s[r] = write_scale(masked_sum(group_sum<LANES>(s[r]), flags));
#pragma unroll
	for (int r = 0; r < ROWS_PER_GROUP; r++) {
		if (!FULL && base + r >= M)
			continue;
		elem_t *row = y + row_offset<FULL>(first, r, ldy);
		// peeled again, not kept from the load: y's rows start where x's do
		const row_peel p = peel_row<PEEL>(row, N, HOLD, coaligned);
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				v[r][i][j] = out_from_held(v[r][i][j], s[r]);
			if (FULL) {
				vec_t out;
				pack_vec(out, v[r][i]);
				st_vec(row + i * LANES * VEC, out);
			} else {
				store_row_window<PEEL>(row - p.k, (i * LANES + lane) * VEC, p, v[r][i]);
			}
		}
	}
}

// True when the step at row `first` takes the checked-nothing path: its rows
// all below M, each exactly LANES * ELEMS_PER_THREAD whole vectors, and
// every offset in x and y below 2^31.
__device__ __forceinline__ bool full_step(long long first, long long M, long long N,
					  long long ldy, long long ldx, bool vec_ok)
{
	const long long ld = ldx > ldy ? ldx : ldy;
	return vec_ok && N == LANES * ELEMS_PER_THREAD && first + ROWS_PER_CTA <= M &&
	       M * ld <= 0x7fffffffLL;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_kernel(elem_t *__restrict__ y, const elem_t *__restrict__ x, long long M,
	       long long N, long long ldy, long long ldx, unsigned flags)
{
	if (N == 1) {
		one_element_rows(y, x, M, ldy, ldx, flags);
		return;
	}
	// every row vector-aligned (the FULL path's condition); with PEEL, or
	// x's and y's rows peeled alike
	const bool vec_ok = rows_vec_aligned(x, ldx) && rows_vec_aligned(y, ldy);
	const bool coaligned = PEEL ? rows_coaligned<true>(x, ldx, y, ldy) : vec_ok;
#if PERSISTENT
	rows_buf buf[STAGES];
	const long long step = (long long)gridDim.x * ROWS_PER_CTA;
	long long first = (long long)blockIdx.x * ROWS_PER_CTA;
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++)
		if (first + s * step < M)
			load_rows<false>(buf[s], x, first + s * step, M, N, ldx, coaligned);
	for (; first < M; first += STAGES * step) {
#pragma unroll
		for (int s = 0; s < STAGES; s++) {
			const long long f = first + s * step;
			const long long ahead = f + (STAGES - 1) * step;
			if (ahead < M)
				load_rows<false>(buf[(s + STAGES - 1) % STAGES], x, ahead, M, N, ldx,
						 coaligned);
			if (f < M)
				finish_rows<false>(buf[s], y, f, M, N, ldy, coaligned, flags);
		}
	}
#else
	rows_buf buf;
	const long long first = (long long)blockIdx.x * ROWS_PER_CTA;
	if (full_step(first, M, N, ldy, ldx, vec_ok)) {
		load_rows<true>(buf, x, first, M, N, ldx, coaligned);
		finish_rows<true>(buf, y, first, M, N, ldy, coaligned, flags);
	} else {
		load_rows<false>(buf, x, first, M, N, ldx, coaligned);
		finish_rows<false>(buf, y, first, M, N, ldy, coaligned, flags);
	}
#endif
}
