// Online-softmax reductions shared by the templates that keep a running
// (max, sum) pair or combine partial ones: softmax_online, softmax_smem,
// softmax_split and the cluster templates. Needs WARPS (warps per
// CTA) defined before it is included.
#pragma once

// Merges (m2, s2) into (m, s), maxima in log2 units and each s relative to its
// own max. A side whose max is -inf holds a sum of 0 or NaN (a NaN among -inf):
// it adds nothing, or its NaN.
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
	const float mx = fmaxf(m, m2);
	if (mx == NEG_INF_F) {
		s += s2;
		return;
	}
	s = s * fast_exp2(m - mx) + s2 * fast_exp2(m2 - mx);
	m = mx;
}

// Merges (m, s) over the CTA; every thread gets the total. m_slot and s_slot
// are WARPS floats each, used by every other row (see the top comment).
__device__ __forceinline__ void cta_merge(float &m, float &s, float *m_slot, float *s_slot)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	if (WARPS == 1)
		return;
	if (threadIdx.x % 32 == 0) {
		m_slot[threadIdx.x / 32] = m;
		s_slot[threadIdx.x / 32] = s;
	}
	__syncthreads();
	const int lane = threadIdx.x % 32;
	m = lane < WARPS ? m_slot[lane] : NEG_INF_F;
	s = lane < WARPS ? s_slot[lane] : 0.0f;
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		if (o < WARPS)
			merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	m = __shfl_sync(0xffffffffu, m, 0);
	s = __shfl_sync(0xffffffffu, s, 0);
}

// A CTA's (max in log2 units, sum relative to it).
struct alignas(8) partial_t {
	float m, s;
};

// Merges (m, s) over the warp in a fixed order and gives every lane lane 0's
// result: merge contracts to FMAs, so it is not bitwise symmetric, but every
// warp that merges the same values in the same lanes gets the same bits.
__device__ __forceinline__ void warp_merge_fixed(float &m, float &s)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	m = __shfl_sync(0xffffffffu, m, 0);
	s = __shfl_sync(0xffffffffu, s, 0);
}
