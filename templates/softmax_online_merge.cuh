// Online-softmax reductions shared by the templates that keep a running
// (max, sum) pair or combine partial ones: softmax_online, softmax_smem,
// softmax_split and the cluster templates. Needs VEC and WARPS (warps per
// CTA) defined before it is included.
#pragma once

// ---- a thread's running (max, sum) over its chunks --------------------------

// m the max, s the sum of e^(x - ref(m)), ref(m) = m, or 0 while m is -inf
// (then s is 0, or NaN if a NaN was seen). Maxima are kept in input units
// and every exp is taken of a difference (exp_from_max): scaled to log2
// units first, maxima of 1e30 lost their low digits. Maxima use fmaxf,
// which skips NaN; a NaN still reaches s, and a +inf makes s NaN (inf - inf).

__device__ __forceinline__ float chunk_max(const float *v)
{
	float cm = v[0];
#pragma unroll
	for (int j = 1; j < VEC; j++)
		cm = fmaxf(cm, v[j]);
	return cm;
}

__device__ __forceinline__ void rescale(float &m, float &s, float new_max)
{
	if (new_max > m) {
		s *= exp_from_max(m, new_max); // m = -inf: s * 0 (0, or NaN stays)
		m = new_max;
	}
}

__device__ __forceinline__ float sum_ref(float m)
{
	return m == NEG_INF_F ? 0.0f : m;
}

// s plus the chunk's e^(v - ref), added in lane order: float
// addition does not reassociate, so a caller that sums a chunk on its own
// first passes s = 0 and keeps its rounding. A masked -inf adds
// exp2(-inf - ref) = 0 (ref is finite or +inf).
__device__ __forceinline__ float add_exps(float s, const float *v, float ref)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		s += exp_from_max(v[j], ref);
	return s;
}

// Adds the chunk to (m, s): one exp per element, straight onto s.
__device__ __forceinline__ void accumulate(float &m, float &s, const float *v)
{
	rescale(m, s, chunk_max(v));
	s = add_exps(s, v, sum_ref(m));
}

// ---- merging (max, sum) pairs -----------------------------------------------

// Merges (m2, s2) into (m, s), each s relative to its own max. A side whose
// max is -inf holds a sum of 0 or NaN (a NaN among -inf):
// it adds nothing, or its NaN.
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
	const float mx = fmaxf(m, m2);
	if (mx == NEG_INF_F) {
		s += s2;
		return;
	}
	s = s * exp_from_max(m, mx) + s2 * exp_from_max(m2, mx);
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
	for (int o = WARPS / 2; o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	m = __shfl_sync(0xffffffffu, m, 0);
	s = __shfl_sync(0xffffffffu, s, 0);
}

// A CTA's (max, sum relative to it).
struct alignas(8) partial_t {
	float m, s;
};

// Merges (m, s) of lanes 0..width-1 (the others hold (-inf, 0)) in a fixed
// order and gives every lane lane 0's result: merge contracts to FMAs, so it
// is not bitwise symmetric, but every warp that merges the same values in
// the same lanes gets the same bits. WIDTH <= 32 (group_max's template
// argument, for its reason), any width (a cluster of 3, 5 or 6 CTAs): the
// offsets are the powers of two below it, so that lane 0 reaches every
// lane under WIDTH (from WIDTH / 2, lanes 4 and 5 of 6 were never merged);
// each halving past them would only merge empty lanes (two exps each).
template <int WIDTH> __device__ __forceinline__ void warp_merge_fixed(float &m, float &s)
{
	static_assert(WIDTH >= 1 && WIDTH <= 32, "a merge within one warp");
#pragma unroll
	for (int o = pow2_below(WIDTH); o > 0; o >>= 1)
		merge(m, s, __shfl_xor_sync(0xffffffffu, m, o),
		      __shfl_xor_sync(0xffffffffu, s, o));
	m = __shfl_sync(0xffffffffu, m, 0);
	s = __shfl_sync(0xffffffffu, s, 0);
}
