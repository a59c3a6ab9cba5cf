// Development probe (not part of the product), for tools/variant_bench.py:
// the leanest softmax of rows up to LANES elements, one element a lane,
// 32-bit indexing, no second path, to see how close to a copy of the same
// bytes a launch-bound shape (bf16 3 x 7) can get. -DEMPTY: a kernel that
// does nothing (the launch's own cost).
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

extern "C" __global__ void softmax_kernel(T *__restrict__ y, const T *__restrict__ x,
					  long long M, long long N, long long ldy, long long ldx)
{
#ifndef EMPTY
	const int row = blockIdx.x * (blockDim.x / LANES) + threadIdx.x / LANES;
	const int lane = threadIdx.x % LANES;
	const bool ok = row < (int)M && lane < (int)N;
	const float v = ok ? (float)x[row * (int)ldx + lane] : -__int_as_float(0x7f800000);
	float m = v;
#pragma unroll
	for (int o = LANES / 2; o > 0; o /= 2)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	const float e = ok ? __exp2f_fast((v - m) * 1.4426950408889634f) : 0.0f;
	float s = e;
#pragma unroll
	for (int o = LANES / 2; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (ok)
		y[row * (int)ldy + lane] = (T)__fdividef(e, s);
#endif
}
