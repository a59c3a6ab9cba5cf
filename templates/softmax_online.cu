// Template softmax_online: online softmax in two passes (arXiv 1805.02867).
// One CTA per row loops over the row in chunks: the first pass keeps a
// running max and a sum rescaled whenever the max grows, so it needs one
// exponential per element; the second pass writes exp(x - max) / sum.
// Regime: any N on any GPU: the fallback when nothing faster fits, and the
// built-in kernel of the dispatch library. The row is read twice; for rows
// of up to a few MB the second read mostly hits L2.
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA
//   VEC         elements per vector access (VEC * element size <= 16 B)
//   UNROLL      vectors each thread loads per loop step (loads in flight)
//   CACHE_HINT  1: streaming cache hints on loads and stores
//   PERSISTENT  0: one CTA per row; 1: occupancy-sized grid looping over rows
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)
#define STEP ((long long)THREADS * VEC * UNROLL)

#include "softmax_online_merge.cuh"

__device__ __forceinline__ void softmax_row(elem_t *y, const elem_t *x, long long N, bool vec_ok,
					    float *m_slot, float *s_slot, unsigned flags)
{
	float m = NEG_INF_F, s = 0.0f;
	for (long long base = 0; base < N; base += STEP) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			load_vec(v[u], x, base + ((long long)u * THREADS + threadIdx.x) * VEC, N, vec_ok);
		float cm = NEG_INF_F;
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
#pragma unroll
			for (int j = 0; j < VEC; j++)
				cm = fmaxf(cm, to_f32(v[u].v[j]));
		if (cm == NEG_INF_F) {
			// nothing but padding, -inf or NaN: adds 0, or the NaN
#pragma unroll
			for (int u = 0; u < UNROLL; u++)
#pragma unroll
				for (int j = 0; j < VEC; j++)
					if (isnan(to_f32(v[u].v[j])))
						s = __int_as_float(0x7fc00000);
			continue;
		}
		if (cm > m) {
			s *= exp_from_max(m, cm);
			m = cm;
		}
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
#pragma unroll
			for (int j = 0; j < VEC; j++)
				s += exp_from_max(to_f32(v[u].v[j]), m);
	}
	cta_merge(m, s, m_slot, s_slot);
	__syncthreads(); // the slots are reused by the next row
	m = masked_max(m, flags);
	const float scale = write_scale(masked_sum(s, flags));
	for (long long base = 0; base < N; base += STEP) {
		vec_t v[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			load_vec(v[u], x, base + ((long long)u * THREADS + threadIdx.x) * VEC, N, vec_ok);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			float out[VEC];
#pragma unroll
			for (int j = 0; j < VEC; j++)
				out[j] = out_from_max(to_f32(v[u].v[j]), m, scale);
			store_vec(y, base + ((long long)u * THREADS + threadIdx.x) * VEC, N, vec_ok, out);
		}
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	__shared__ float m_slot[32], s_slot[32];
	const bool vec_ok = rows_vec_aligned(x, ldx) && rows_vec_aligned(y, ldy);
#if PERSISTENT
	for (long long row = blockIdx.x; row < M; row += gridDim.x)
		softmax_row(y + row * ldy, x + row * ldx, N, vec_ok, m_slot, s_slot, flags);
#else
	const long long row = blockIdx.x;
	softmax_row(y + row * ldy, x + row * ldx, N, vec_ok, m_slot, s_slot, flags);
#endif
}
