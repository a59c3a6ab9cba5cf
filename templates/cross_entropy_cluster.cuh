// The cluster's exchange of the cross_entropy templates that cut a row over
// a thread-block cluster (cross_entropy_cluster, cross_entropy_regs; sm_90+):
// each CTA pushes its partial (max, sum of exps against it, sum of z) into
// slot `rank` of every CTA's inbox (softmax_cluster_sync.cuh's push: one
// way, st.async counted on the receiver's mbarrier), and each CTA merges
// its inbox in a fixed order (the same bits in every CTA). Before, each
// CTA read the others' partials through distributed shared memory between
// two cluster barriers, a round trip: bf16 4096 x 32000 at 6 CTAs of 256 a
// multiprocessor, 0.745 of a copy against softmax_cluster_regs' 0.97.
// Needs CLUSTER and WARPS defined before it is included.
#pragma once

#include "softmax_online_merge.cuh"
#include "softmax_cluster_sync.cuh"

// A CTA's partial of the row, pushed as one 16-byte st.async.
struct alignas(16) ce_partial {
	float m, s, sz, unused;
};

struct ce_inbox {
	ce_partial slot[CLUSTER];
	unsigned long long full; // mbarrier: CLUSTER partials' bytes
};

__device__ __forceinline__ unsigned ce_cluster_rank(void)
{
	return cluster_rank();
}

// All threads, first thing (before any return that not the whole cluster
// takes). The mbarrier's phase 0 serves one row: the templates that
// include this are not persistent.
__device__ __forceinline__ void ce_inbox_init(ce_inbox *box)
{
	inbox_arm(&box->full, (unsigned)(CLUSTER * sizeof(ce_partial)));
}

// The cluster's (max, sum, sum of z) from this CTA's (m, s, sz), the
// CTA's totals in thread 0: pushed to every inbox, then lane r of every
// warp reads slot r, and the warp merges them in a fixed order
// (warp_merge_fixed's: the same bits in every warp of every CTA); an empty
// slice's (-inf, 0) adds 0, a row of -inf only gives a NaN sum. A CTA may
// leave after this: every push to it has landed, nothing of it is read.
__device__ __forceinline__ void ce_cluster_merge(ce_inbox *box, float &m, float &s, float &sz)
{
	inbox_ready();
	if (threadIdx.x == 0) {
		const unsigned slot = smem_addr(&box->slot[cluster_rank()]);
		const unsigned bar = smem_addr(&box->full);
#pragma unroll
		for (unsigned r = 0; r < CLUSTER; r++)
			asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32"
				     " [%0], {%1, %2, %3, %4}, [%5];"
				     :: "r"(cluster_addr(slot, r)), "f"(m), "f"(s), "f"(sz),
				     "f"(0.0f), "r"(cluster_addr(bar, r))
				     : "memory");
	}
	inbox_wait_full(&box->full);
	const unsigned lane = threadIdx.x % 32;
	ce_partial q = { NEG_INF_F, 0.0f, 0.0f, 0.0f };
	if (lane < CLUSTER)
		q = box->slot[lane];
#pragma unroll
	for (int o = pow2_below(CLUSTER); o > 0; o >>= 1) {
		const float m2 = __shfl_xor_sync(0xffffffffu, q.m, o);
		const float s2 = __shfl_xor_sync(0xffffffffu, q.s, o);
		q.sz += __shfl_xor_sync(0xffffffffu, q.sz, o);
		merge(q.m, q.s, m2, s2);
	}
	m = __shfl_sync(0xffffffffu, q.m, 0);
	s = __shfl_sync(0xffffffffu, q.s, 0);
	if (m == NEG_INF_F) // a row of -inf only: NaN, as its log-softmax (merge left 0)
		s = NAN_F;
	sz = __shfl_sync(0xffffffffu, q.sz, 0);
}

// After a CTA's max m and sum s (and, smooth, its threads' sums of z sz,
// summed over the CTA here through sz_slot): its partial pushed, the
// cluster's merged, and the row's loss written by the one thread of the
// cluster that writes_loss (zt: the target's z, that thread's read).
// Returns what the gradient needs. The scale is read here (ce_scale), its
// latency under the merge's: a CTA of the first wave waits for prepare,
// the kernel before, only once its sums are done (read before its max,
// that wave sat idle while prepare's reads queued behind its loads; read
// after the merge, every CTA waited for it before its writes). The loss
// is written after that wait: prepare marks the losses pending.
__device__ __forceinline__ ce_row ce_cluster_finish(ce_inbox *box, float m, float s, float sz,
						    bool smooth, float *sz_slot, bool writes_loss,
						    float *loss, float *lse, long long row, float zt,
						    long long t, long long V, long long ignore_index,
						    float ls, float zl, ce_cap cap,
						    const float *scale_ptr)
{
	if (smooth)
		sz = cta_sum(sz, sz_slot);
	const float scale = ce_scale(scale_ptr);
	ce_cluster_merge(box, m, s, sz);
	if (writes_loss)
		ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index, ls, zl);
	return ce_row_finish(m, s, t, V, ignore_index, ls, zl, cap, scale);
}
