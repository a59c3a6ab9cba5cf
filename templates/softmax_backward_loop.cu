// Template softmax_backward_loop: the softmax (and log_softmax) backward
// for rows of any length, one CTA a row, in two passes: the first reads y
// and dy for the row's sum, the second reads them again (from L2 where
// the row still is) and writes dx. Nothing held between the passes but the
// sum, so any N fits.
// Regime: long rows (past what registers hold), and the fallback.
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per vector access (VEC * element size <= 16 B)
//   UNROLL      vectors of each input a thread loads per loop step
//   PERSISTENT  0: one row per CTA; 1: occupancy-sized grid that loops
#include "softmax_backward_common.cuh"

#define WARPS (THREADS / 32)
#define CHUNK (THREADS * VEC * UNROLL) // elements a CTA takes per loop step

#include "softmax_backward_reduce.cuh"

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	__shared__ grad_acc_t slot[2][32]; // taken in turn, as in softmax_backward_block
	const bool vec_ok = grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	int turn = 0;
	for (long long row = blockIdx.x; row < M; row += step, turn ^= 1) {
		const elem_t *yr = y + row * ldy, *gr = dy + row * lddy;
		grad_acc_t r = 0;
		for (long long base = 0; base < N; base += CHUNK) {
			vec_t yv[UNROLL], gv[UNROLL];
			// every load of the step first: UNROLL pairs in flight
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + (long long)(u * THREADS + threadIdx.x) * VEC;
				load_vec0(yv[u], yr, col, N, vec_ok);
				load_vec0(gv[u], gr, col, N, vec_ok);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				r += vec_terms(yv[u], gv[u]);
		}
		// the barrier in cta_sum also orders every read of the first pass
		// before any write of the second (dx may be dy)
		const grad_r_t rw = acc_final(cta_sum_acc(r, slot[turn]));
		for (long long base = 0; base < N; base += CHUNK) {
			vec_t yv[UNROLL], gv[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + (long long)(u * THREADS + threadIdx.x) * VEC;
				load_vec0(yv[u], yr, col, N, vec_ok);
				load_vec0(gv[u], gr, col, N, vec_ok);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
				store_grads(dx + row * lddx, base + (long long)(u * THREADS + threadIdx.x) * VEC,
					    N, vec_ok, yv[u], gv[u], rw);
		}
	}
}
