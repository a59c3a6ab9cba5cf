// Template softmax_backward_warp: the softmax (and log_softmax) backward
// with a warp or a sub-warp of LANES threads a row, THREADS / LANES rows a
// CTA, y's and dy's row held in registers, the row's sum by shuffles only
// (no shared memory, no barriers).
// Regime: short rows (up to about 1K elements), where a CTA a row would
// leave most threads idle and pay a barrier a row.
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   LANES             threads per row (2..32, a power of two)
//   VEC               elements per vector access (VEC * element size <= 16 B)
//   ELEMS_PER_THREAD  elements of each input's row a thread holds (multiple of VEC)
//   PERSISTENT        0: one row step per CTA; 1: occupancy-sized grid that loops
//   PEEL              1: rows that are not vector-aligned are read and
//                     written as windows from the boundary below their
//                     start (softmax_row_windows.cuh; the hold has room for
//                     the head); 0: such launches go element by element
#include "softmax_backward_common.cuh"

#ifndef PEEL
#define PEEL 0
#endif
#define ITERS (ELEMS_PER_THREAD / VEC)
#define ROWS_PER_CTA (THREADS / LANES)

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	const bool coaligned = PEEL ? grads_coaligned(dx, lddx, y, ldy, dy, lddy)
				    : grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const int lane = threadIdx.x % LANES;
	const long long step = PERSISTENT ? (long long)gridDim.x * ROWS_PER_CTA : M;
	for (long long first = (long long)blockIdx.x * ROWS_PER_CTA; first < M; first += step) {
		const long long row = first + threadIdx.x / LANES;
		// a row past M still takes part in the shuffles, with nothing loaded
		const long long n = row < M ? N : 0;
		// the rows of dy and dx start at y's offset (coaligned)
		const row_peel p = peel_row<PEEL>(y + row * ldy, n, LANES * ELEMS_PER_THREAD,
						  coaligned);
		vec_t yv[ITERS], gv[ITERS];
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			const long long col = (long long)(i * LANES + lane) * VEC;
			load_window0<PEEL>(yv[i], y + row * ldy - p.k, col, p.k, n, p.vec);
			load_window0<PEEL>(gv[i], dy + row * lddy - p.k, col, p.k, n, p.vec);
		}
		grad_acc_t r = 0;
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			r += vec_terms(yv[i], gv[i]);
		const grad_r_t rw = acc_final(group_sum_acc<LANES>(r));
		if (row >= M)
			continue;
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			store_grads_window<PEEL>(dx + row * lddx - p.k,
						 (long long)(i * LANES + lane) * VEC, p.k, N, p.vec,
						 yv[i], gv[i], rw);
	}
}
