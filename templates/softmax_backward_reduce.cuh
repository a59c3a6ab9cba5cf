// The row's sum r over the CTA for the softmax_backward templates of one
// CTA a row (block, loop): softmax_cta_reduce.cuh's cta_sum for r's type,
// grad_acc_t (double for softmax_backward: softmax_backward_common.cuh).
// One __syncthreads. Needs WARPS (THREADS / 32).
#pragma once

// Every thread gets the sum of v; `slot` is a 32-entry shared array owned
// by this reduction.
__device__ __forceinline__ grad_acc_t cta_sum_acc(grad_acc_t v, grad_acc_t *slot)
{
	v = group_sum_acc<32>(v);
	if (WARPS == 1)
		return v;
	if (threadIdx.x % 32 == 0)
		slot[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < WARPS ? slot[threadIdx.x % 32] : (grad_acc_t)0;
	return __shfl_sync(0xffffffffu, group_sum_acc<WARPS>(v), 0);
}
