// Development probe (not part of the product), for tools/variant_bench.py:
// the leanest softmax of rows up to LANES elements, one element a lane,
// 32-bit indexing, no second path, to see how close to a copy of the same
// bytes a launch-bound shape (bf16 3 x 7) can get. -DEMPTY: a kernel that
// does nothing (the launch's own cost). softmax_tiny's features, one at a
// time, to find what it pays at rows of 1 and 2 (H200: 0.1-0.3 us behind
// torch.softmax): -DPRECISE_RCP (1 / s, then a product), -DINDEX64 (64-bit
// rows and columns), -DONE_ELEMENT_BRANCH (rows of one element by a loop
// of their own), -DFLAGS (the masked-row argument and its tests).
// -DROWS_A_THREAD=R -DNN=n: rows of exactly n elements (n known when
// compiled, as torch.compile's kernel knows it), R whole rows a thread in
// one vector load and store (R n elements: 2, 4, 8 or 16 bytes), no
// shuffles; with -DPRECISE_RCP as above (rows_per_cta = threads R).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#if DTYPE_BF16
typedef __nv_bfloat16 T;
#elif DTYPE_F16
typedef __half T;
#else
typedef float T;
#endif
#ifndef LANES
#define LANES 8
#endif

__device__ __forceinline__ float __exp2f_fast(float a)
{
	float r;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
	return r;
}

#ifdef INDEX64
typedef long long index_t;
#else
typedef int index_t;
#endif

extern "C" __global__ void softmax_kernel(T *__restrict__ y, const T *__restrict__ x,
					  long long M, long long N, long long ldy, long long ldx,
					  unsigned flags)
{
#if defined(ROWS_A_THREAD) && !defined(EMPTY)
	{
		constexpr int E = ROWS_A_THREAD * NN;
		struct alignas(E * sizeof(T)) vec_t { T e[E]; };
		const index_t r0 = ((index_t)blockIdx.x * blockDim.x + threadIdx.x) * ROWS_A_THREAD;
		if (r0 >= (index_t)M)
			return;
		vec_t v = *reinterpret_cast<const vec_t *>(x + r0 * NN);
#pragma unroll
		for (int r = 0; r < ROWS_A_THREAD; r++) {
			float f[NN], m = -__int_as_float(0x7f800000), s = 0.0f;
#pragma unroll
			for (int c = 0; c < NN; c++) {
				f[c] = (float)v.e[r * NN + c];
				m = fmaxf(m, f[c]);
			}
#pragma unroll
			for (int c = 0; c < NN; c++) {
				f[c] = __exp2f_fast((f[c] - m) * 1.4426950408889634f);
				s += f[c];
			}
#ifdef PRECISE_RCP
			const float inv = 1.0f / s;
#pragma unroll
			for (int c = 0; c < NN; c++)
				v.e[r * NN + c] = (T)(f[c] * inv);
#else
#pragma unroll
			for (int c = 0; c < NN; c++)
				v.e[r * NN + c] = (T)__fdividef(f[c], s);
#endif
		}
		*reinterpret_cast<vec_t *>(y + r0 * NN) = v;
		return;
	}
#endif
#ifndef EMPTY
#ifdef ONE_ELEMENT_BRANCH
	if (N == 1) {
		for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < M;
		     r += (long long)gridDim.x * blockDim.x) {
			const float v = (float)x[r * ldx];
			y[r * ldy] = (T)((v - v) + 1.0f);
		}
		return;
	}
#endif
	const index_t row = (index_t)blockIdx.x * (blockDim.x / LANES) + threadIdx.x / LANES;
	const int lane = threadIdx.x % LANES;
	const bool ok = row < (index_t)M && lane < (index_t)N;
	const float v = ok ? (float)x[row * (index_t)ldx + lane] : -__int_as_float(0x7f800000);
	float m = v;
#pragma unroll
	for (int o = LANES / 2; o > 0; o /= 2)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
#ifdef FLAGS
	m = (flags & 1u) && m == -__int_as_float(0x7f800000) ? 0.0f : m;
#endif
	const float e = ok ? __exp2f_fast((v - m) * 1.4426950408889634f) : 0.0f;
	float s = e;
#pragma unroll
	for (int o = LANES / 2; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffffu, s, o);
#ifdef FLAGS
	s = (flags & 1u) && s == 0.0f ? 1.0f : s;
#endif
	if (ok)
#ifdef PRECISE_RCP
		y[row * (index_t)ldy + lane] = (T)(e * (1.0f / s));
#else
		y[row * (index_t)ldy + lane] = (T)__fdividef(e, s);
#endif
#endif
}
