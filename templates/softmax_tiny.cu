// Template softmax_tiny: the leanest row softmax, for launch-bound shapes
// (a few rows, or rows of a few elements). A group of LANES threads takes
// one row, each lane ELEMS_PER_THREAD of its elements, LANES apart (a
// warp's loads coalesce element by element); one path, no vectors, no
// peeling, no persistent grid, no second row a group: at a problem of a few
// KB the kernel's time is its chain (load, shuffles, exp, division, store),
// and every test or loop on that chain is paid once, undivided. Rows whose
// bytes divide 16 are the exception: a 16-byte vector of them a thread
// (below).
// Regime: rows up to 512 elements where the whole problem takes a few
// microseconds; softmax_warp's checked path cost ~0.2 us more there than
// a hand-written kernel of this shape (tools/probe_tiny.cu, H200), and its
// vectors of 8 halves left f16 10 x 274 at 0.72 of torch.softmax.
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   LANES             threads per row (2..32, a power of two)
//   ELEMS_PER_THREAD  elements of a row each lane holds (LANES * it >= N)
#define VEC 1
#include "softmax_common.cuh"

#define GROUPS (THREADS / LANES)

// Rows of one element are an elementwise op: each thread takes UNIT_ROWS
// consecutive rows (the grid holds M / (THREADS UNIT_ROWS) CTAs: the
// manifest's rows_per_cta at N = 1), in one 16-byte load and store where x
// and y are one aligned column (ld 1), else one by one. A row a thread
// made a grid of 8-16 times the CTAs, each a load of 2-4 bytes: bf16
// 918038 x 1 took 6.3 us, torch.compile's elementwise kernel 5.6 (H200).
// No grid-stride loop, whose strides' 64-bit products came before the load
// (~60 ns at 1 x 1, H200).
#define UNIT_ROWS (16 / (int)sizeof(elem_t))

__device__ __forceinline__ void one_element_rows_of_thread(elem_t *y, const elem_t *x,
							   long long M, long long ldy,
							   long long ldx, unsigned flags)
{
	const long long r0 = ((long long)blockIdx.x * THREADS + threadIdx.x) * UNIT_ROWS;
	if (r0 >= M)
		return;
	if (ldx == 1 && ldy == 1 && r0 + UNIT_ROWS <= M &&
	    ((unsigned long long)x | (unsigned long long)y) % 16 == 0) {
		alignas(16) elem_t e[UNIT_ROWS];
		*reinterpret_cast<uint4 *>(e) = *reinterpret_cast<const uint4 *>(x + r0);
#pragma unroll
		for (int k = 0; k < UNIT_ROWS; k++)
			e[k] = from_f32(one_element_out(to_f32(e[k]), flags));
		*reinterpret_cast<uint4 *>(y + r0) = *reinterpret_cast<const uint4 *>(e);
		return;
	}
	for (int k = 0; k < UNIT_ROWS && r0 + k < M; k++)
		one_element_row(y, x, r0 + k, ldy, ldx, flags);
}

// Rows whose bytes divide 16 (2, 4 or 8 halves, 2 or 4 floats) likewise: a
// group of lanes a row loaded 2-4 bytes a lane and paid shuffles for a row
// of two (f16 200725 x 2: 0.80 of torch.compile's time, H200). Each thread
// takes the 16 / (NN x element size) rows of one 16-byte vector, loaded
// and stored whole where x and y are contiguous rows (ld NN) and 16-byte
// aligned, else element by element, and reduces each row in its registers
// (the manifest's rows_per_cta is THREADS times those rows). Rows that
// straddle vectors (f16 rows of 5) keep the groups: a thread's several
// vectors, 16 bytes at a stride, left the loads uncoalesced (f32 1M x 7:
// 23.4 -> 33.6 us; results/h200/tiny-packed-rows-multivector-rejected-
// h200.log). H200, results/h200/tiny-packed-rows-h200.log: f16 100000 x 8
// 6.43 -> 5.15 us, f32 500000 x 4 9.60 -> 7.71, f16 200725 x 2 5.34 ->
// 4.74 (torch.softmax 5.15).
template <int NN>
__device__ __forceinline__ void packed_rows_of_thread(elem_t *y, const elem_t *x, long long M,
						      long long ldy, long long ldx, unsigned flags)
{
	constexpr int R = 16 / (NN * (int)sizeof(elem_t)), E = R * NN;
	const long long r0 = ((long long)blockIdx.x * THREADS + threadIdx.x) * R;
	if (r0 >= M)
		return;
	const bool whole = ldx == NN && ldy == NN && r0 + R <= M &&
			   ((unsigned long long)x | (unsigned long long)y) % 16 == 0;
	alignas(16) elem_t e[E];
	if (whole) {
		*reinterpret_cast<uint4 *>(e) = *reinterpret_cast<const uint4 *>(x + r0 * NN);
	} else {
#pragma unroll
		for (int k = 0; k < E; k++)
			if (r0 + k / NN < M)
				e[k] = x[(r0 + k / NN) * ldx + k % NN];
	}
#pragma unroll
	for (int r = 0; r < R; r++) {
		float v[NN];
		float m = NEG_INF_F;
#pragma unroll
		for (int c = 0; c < NN; c++) {
			v[c] = to_f32(e[r * NN + c]);
			m = fmaxf(m, v[c]);
		}
		m = masked_max(m, flags);
		float s = 0.0f;
#pragma unroll
		for (int c = 0; c < NN; c++) {
			v[c] = held_from(v[c], m);
			s += held_term(v[c]);
		}
		s = write_scale(masked_sum(s, flags));
#pragma unroll
		for (int c = 0; c < NN; c++)
			e[r * NN + c] = from_f32(out_from_held(v[c], s));
	}
	if (whole) {
		*reinterpret_cast<uint4 *>(y + r0 * NN) = *reinterpret_cast<const uint4 *>(e);
	} else {
#pragma unroll
		for (int k = 0; k < E; k++)
			if (r0 + k / NN < M)
				y[(r0 + k / NN) * ldy + k % NN] = e[k];
	}
}

// Whether N is NN, rows of NN divide a vector, this variant's rows may be
// that long (it serves N in (LANES (ELEMS_PER_THREAD - 1), LANES
// ELEMS_PER_THREAD]: only those are instantiated) and there are more rows
// than its groups; if so, its rows done.
template <int NN>
__device__ __forceinline__ bool packed_rows_done(elem_t *y, const elem_t *x, long long M,
						 long long N, long long ldy, long long ldx,
						 unsigned flags)
{
	if constexpr (NN > LANES * ELEMS_PER_THREAD || NN <= LANES * (ELEMS_PER_THREAD - 1) ||
		      16 % (NN * (int)sizeof(elem_t)) != 0) {
		return false;
	} else {
		// rows that the CTA's groups hold (a grid of one CTA then) keep
		// them: a row's chain split over lanes (f32 1 x 2: 4.2 us, one
		// thread's two rows 4.4)
		if (N != NN || M <= GROUPS)
			return false;
		packed_rows_of_thread<NN>(y, x, M, ldy, ldx, flags);
		return true;
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_kernel(elem_t *__restrict__ y, const elem_t *__restrict__ x, long long M,
	       long long N, long long ldy, long long ldx, unsigned flags)
{
	if (N == 1) { // no reduction, no exp: a load and a store a row
		one_element_rows_of_thread(y, x, M, ldy, ldx, flags);
		return;
	}
	if (packed_rows_done<2>(y, x, M, N, ldy, ldx, flags) ||
	    packed_rows_done<4>(y, x, M, N, ldy, ldx, flags) ||
	    packed_rows_done<8>(y, x, M, N, ldy, ldx, flags))
		return;
	const long long row = (long long)blockIdx.x * GROUPS + threadIdx.x / LANES;
	const int lane = threadIdx.x % LANES;
	// N <= LANES * ELEMS_PER_THREAD: a column fits an int
	const int n = row < M ? (int)N : 0;
	const elem_t *xr = x + row * ldx;
	float v[ELEMS_PER_THREAD];
	float m = NEG_INF_F;
#pragma unroll
	for (int i = 0; i < ELEMS_PER_THREAD; i++) {
		const int c = lane + i * LANES;
		// past the row (or past M): -inf, whose term is 0 once the max is
		// finite; a row past M still takes part in the shuffles
		v[i] = c < n ? to_f32(xr[c]) : NEG_INF_F;
		m = fmaxf(m, v[i]);
	}
	m = masked_max(group_max<LANES>(m), flags);
	float s = 0.0f;
#pragma unroll
	for (int i = 0; i < ELEMS_PER_THREAD; i++) {
		v[i] = held_from(v[i], m);
		s += held_term(v[i]);
	}
	s = write_scale(masked_sum(group_sum<LANES>(s), flags));
	elem_t *yr = y + row * ldy;
#pragma unroll
	for (int i = 0; i < ELEMS_PER_THREAD; i++) {
		const int c = lane + i * LANES;
		if (c < n)
			yr[c] = from_f32(out_from_held(v[i], s));
	}
}
