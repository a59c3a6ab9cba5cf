// Template softmax_backward_block: the softmax (and log_softmax) backward
// with one CTA a row, y's and dy's row held in registers, so each is read
// once: 2 reads and 1 write an element, the bandwidth bound.
// Regime: medium rows (1K to about 18K elements: y and dy are held as f32,
// whatever the dtype, and the row's sum in double; 512 threads x 36).
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   VEC               elements per vector access (VEC * element size <= 16 B)
//   ELEMS_PER_THREAD  elements of each input's row a thread holds (multiple of VEC)
//   PERSISTENT        0: one row per CTA; 1: occupancy-sized grid that loops
//   PEEL              1: rows that are not vector-aligned are read and
//                     written as windows from the boundary below their
//                     start (softmax_row_windows.cuh; the hold has room for
//                     the head); 0: such launches go element by element
#include "softmax_backward_common.cuh"

#ifndef PEEL
#define PEEL 0
#endif
#define ITERS (ELEMS_PER_THREAD / VEC)
#define WARPS (THREADS / 32)

#include "softmax_backward_reduce.cuh"

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	// two reductions' slots, taken in turn: a thread still reading one
	// row's partials is never overwritten by the next row's
	__shared__ grad_acc_t slot[2][32];
	const bool coaligned = PEEL ? grads_coaligned(dx, lddx, y, ldy, dy, lddy)
				    : grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	int turn = 0;
	for (long long row = blockIdx.x; row < M; row += step, turn ^= 1) {
		// the rows of dy and dx start at y's offset (coaligned)
		const row_peel p = peel_row<PEEL>(y + row * ldy, N, THREADS * ELEMS_PER_THREAD,
						  coaligned);
		vec_t yv[ITERS], gv[ITERS];
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			const long long col = (long long)(i * THREADS + threadIdx.x) * VEC;
			load_window0<PEEL>(yv[i], y + row * ldy - p.k, col, p.k, N, p.vec);
			load_window0<PEEL>(gv[i], dy + row * lddy - p.k, col, p.k, N, p.vec);
		}
		grad_acc_t r = 0;
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			r += vec_terms(yv[i], gv[i]);
		const grad_r_t rw = acc_final(cta_sum_acc(r, slot[turn]));
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			store_grads_window<PEEL>(dx + row * lddx - p.k,
						 (long long)(i * THREADS + threadIdx.x) * VEC, p.k, N,
						 p.vec, yv[i], gv[i], rw);
	}
}
