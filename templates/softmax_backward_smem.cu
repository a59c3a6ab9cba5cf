// Template softmax_backward_smem: the softmax (and log_softmax) backward
// with one CTA a row in two passes, the first staging y and dy in dynamic
// shared memory: y and dy are read from global memory once (2 reads + 1
// write an element, against softmax_backward_loop's 4 + 1, its second
// reads from L2), at rows past what registers hold.
// Regime: N from about 8K up to what shared memory holds (227 KB a CTA on
// the H100/H200: 29K f32, 58K f16/bf16 pairs of y and dy), and past that
// with the rest of the row read twice (from global memory or L2), up to
// 2.5 times that.
//
// Each thread owns the vectors k THREADS + threadIdx.x of the row: it
// reads them, stages them, reads them back and writes their dx, so no
// barrier guards the staged row (a thread reads only what it wrote) and dx
// may be y or dy (every element read before it is written, by its writer).
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per vector access (VEC * element size = 16 B)
//   UNROLL      vectors of each input a thread loads per loop step
//   PERSISTENT  0: one row per CTA; 1: occupancy-sized grid that loops
//   CTAS_PER_SM CTAs a multiprocessor holds (shared memory and registers)
//
// Dynamic shared memory: S vectors of y then S of dy, S = the launch's
// size / 32 B: ceil(N / VEC), or what a CTA's share has (the vectors past
// S are read from global memory twice).
#include "softmax_backward_common.cuh"

#define WARPS (THREADS / 32)
#define CHUNK ((long long)THREADS * VEC * UNROLL) // elements a CTA takes per loop step

#include "softmax_backward_reduce.cuh"

// y's vectors at [0, S), dy's at [S, 2S): a warp's 16-byte accesses fall
// on consecutive vectors of one half (no bank conflicts)
extern __shared__ __align__(16) vec_t sbw_buf[];

// S, the pairs of vectors the launch's dynamic shared memory holds
__device__ __forceinline__ long long sbw_staged(void)
{
	unsigned b;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
	return (long long)(b / (2 * sizeof(vec_t)));
}

// CTAS_PER_SM bounds the registers so that the CTAs the shared memory
// was sized for fit.
extern "C" __global__ void __launch_bounds__(THREADS, CTAS_PER_SM)
softmax_backward_kernel(elem_t *dx, const elem_t *y, const elem_t *dy, long long M, long long N,
			long long lddx, long long ldy, long long lddy, unsigned flags)
{
	__shared__ grad_acc_t slot[2][32]; // taken in turn, as in softmax_backward_block
	const bool vec_ok = grads_vec_aligned(dx, lddx, y, ldy, dy, lddy);
	const long long S = sbw_staged();
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
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				load_vec0(yv[u], yr, col, N, vec_ok);
				load_vec0(gv[u], gr, col, N, vec_ok);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long k = base / VEC + (long long)u * THREADS + threadIdx.x;
				if (k < S) { // past N too: zeros, never read back
					sbw_buf[k] = yv[u];
					sbw_buf[S + k] = gv[u];
				}
				r += vec_terms(yv[u], gv[u]);
			}
		}
		const grad_r_t rw = acc_final(cta_sum_acc(r, slot[turn]));
		elem_t *dxr = dx + row * lddx;
		// the staged columns [0, cs) from shared memory, then the rest
		// from global memory: two loops, so that neither holds the other's
		// path (one loop with both spilled: f16 512 x 8 x 4, 458 bytes)
		const long long cs = min(N, S * VEC);
		for (long long base = 0; base < cs; base += CHUNK) {
			vec_t yv[UNROLL], gv[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long k = base / VEC + (long long)u * THREADS + threadIdx.x;
				if (k * VEC < cs) {
					yv[u] = sbw_buf[k];
					gv[u] = sbw_buf[S + k];
				}
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				if (col < cs)
					store_grads(dxr, col, N, vec_ok, yv[u], gv[u], rw);
			}
		}
		// the same vectors of each thread as in pass 1 (a vector's thread
		// is its index mod THREADS, whatever the start); the loads are not
		// guarded by cs (guarded, f16 1024 x 8 x 2 spilled 514 bytes): at
		// most a vector a thread below cs is read again
		const long long from = cs < N ? cs / (THREADS * VEC) * (THREADS * VEC) : N;
		for (long long base = from; base < N; base += CHUNK) {
			vec_t yv[UNROLL], gv[UNROLL];
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				load_vec0(yv[u], yr, col, N, vec_ok);
				load_vec0(gv[u], gr, col, N, vec_ok);
			}
#pragma unroll
			for (int u = 0; u < UNROLL; u++) {
				const long long col = base + ((long long)u * THREADS + threadIdx.x) * VEC;
				if (col >= cs)
					store_grads(dxr, col, N, vec_ok, yv[u], gv[u], rw);
			}
		}
	}
}
