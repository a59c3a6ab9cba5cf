// The cluster's exchange of the cross_entropy templates that cut a row over
// a thread-block cluster (cross_entropy_cluster, cross_entropy_regs; sm_90+):
// each CTA's partial (max, sum of exps against it, sum of z) in its shared
// memory, read by every CTA of the cluster through distributed shared
// memory and merged in a fixed order (the same bits in every CTA).
// Needs WARPS defined before it is included (softmax_online_merge.cuh).
#pragma once

#include "softmax_online_merge.cuh"

// A CTA's partial of the row, read by the others through distributed
// shared memory as one 16-byte access.
struct alignas(16) ce_partial {
	float m, s, sz, unused;
};

__device__ __forceinline__ unsigned ce_cluster_rank(void)
{
	unsigned r;
	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}

// All threads of every CTA of the cluster: what each wrote to its shared
// memory before is visible to all after.
__device__ __forceinline__ void ce_cluster_sync(void)
{
	asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
		     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The partial of the CTA of rank r (p: this CTA's copy of it).
__device__ __forceinline__ ce_partial ce_partial_of(const ce_partial *p, unsigned r)
{
	const unsigned local = (unsigned)__cvta_generic_to_shared(p);
	unsigned remote;
	asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(r));
	ce_partial q;
	asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
		     : "=f"(q.m), "=f"(q.s), "=f"(q.sz), "=f"(q.unused) : "r"(remote) : "memory");
	return q;
}

// The cluster's (max, sum, sum of z) from every CTA's partial, put in part
// by thread 0 before. Lane r of every warp reads rank r's partial, and the
// warp merges them in a fixed order (warp_merge_fixed's: the same bits in
// every warp of every CTA); an empty slice's (-inf, 0) adds 0, a row of
// -inf only gives a NaN sum. Each thread held all CLUSTER partials before (4
// registers each, live with the held row: 64 registers at 32 bf16 logits a
// thread where softmax_cluster_regs takes 40). One cluster barrier before
// the reads (every partial written); after them this CTA only arrives, and
// waits in ce_cluster_leave at its end (no CTA leaves while another may
// still read its partial), so that its gradient starts without the others.
__device__ __forceinline__ void ce_cluster_merge(const ce_partial *part, float &m, float &s,
						 float &sz)
{
	ce_cluster_sync();
	const unsigned lane = threadIdx.x % 32;
	ce_partial q = { NEG_INF_F, 0.0f, 0.0f, 0.0f };
	if (lane < CLUSTER)
		q = ce_partial_of(part, lane);
#pragma unroll
	for (int o = pow2_below(CLUSTER); o > 0; o >>= 1) {
		const float m2 = __shfl_xor_sync(0xffffffffu, q.m, o);
		const float s2 = __shfl_xor_sync(0xffffffffu, q.s, o);
		q.sz += __shfl_xor_sync(0xffffffffu, q.sz, o);
		merge(q.m, q.s, m2, s2);
	}
	// the reads are done (their values merged): the others may leave
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
	m = __shfl_sync(0xffffffffu, q.m, 0);
	s = __shfl_sync(0xffffffffu, q.s, 0);
	if (m == NEG_INF_F) // a row of -inf only: NaN, as its log-softmax (merge left 0)
		s = NAN_F;
	sz = __shfl_sync(0xffffffffu, q.sz, 0);
}

// Every thread, last, after ce_cluster_merge: the cluster's CTAs have all
// read their partials.
__device__ __forceinline__ void ce_cluster_leave(void)
{
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// After a CTA's max m and sum s (and, smooth, its threads' sums of z sz,
// summed over the CTA here through sz_slot): its partial put in part, the
// cluster's merged, and the row's loss written by the one thread of the
// cluster that writes_loss (zt: the target's z, that thread's read).
// Returns what the gradient needs (scale: ce_scale's, read early).
__device__ __forceinline__ ce_row ce_cluster_finish(ce_partial *part, float m, float s, float sz,
						    bool smooth, float *sz_slot, bool writes_loss,
						    float *loss, float *lse, long long row, float zt,
						    long long t, long long V, long long ignore_index,
						    float ls, float zl, ce_cap cap, float scale)
{
	if (smooth)
		sz = cta_sum(sz, sz_slot);
	if (threadIdx.x == 0)
		*part = ce_partial{ m, s, sz, 0.0f };
	ce_cluster_merge(part, m, s, sz);
	if (writes_loss)
		ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index, ls, zl);
	return ce_row_finish(m, s, t, V, ignore_index, ls, zl, cap, scale);
}
