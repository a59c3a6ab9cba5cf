// Max and sum of one float per thread over the CTA, every thread getting
// the result, for the templates that reduce a row's max first and its sum
// second (softmax_block, softmax_cluster_regs): no exps to merge, unlike
// the (max, sum) pairs of softmax_online_merge.cuh. One __syncthreads each.
//
// Needs WARPS (THREADS / 32) and group_max / group_sum (softmax_common.cuh).
#pragma once

// Reduces v over the CTA; `slot` is a 32-float shared array owned by this
// reduction. Every thread gets the result.
__device__ __forceinline__ float cta_max(float v, float *slot)
{
	v = group_max<32>(v);
	if (WARPS == 1)
		return v;
	if (threadIdx.x % 32 == 0)
		slot[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < WARPS ? slot[threadIdx.x % 32] : NEG_INF_F;
	// lanes 0..WARPS-1 hold the partials; lane 0 ends with the total
	return __shfl_sync(0xffffffffu, group_max<WARPS>(v), 0);
}

__device__ __forceinline__ float cta_sum(float v, float *slot)
{
	v = group_sum<32>(v);
	if (WARPS == 1)
		return v;
	if (threadIdx.x % 32 == 0)
		slot[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < WARPS ? slot[threadIdx.x % 32] : 0.0f;
	return __shfl_sync(0xffffffffu, group_sum<WARPS>(v), 0);
}
