// Thread-block cluster pieces (sm_90+) shared by softmax_cluster and
// softmax_cluster_regs: the CTA's rank, the cluster barrier's two halves,
// and the row's total from the partials the cluster's CTAs leave in their
// shared memory, read through distributed shared memory in rank order (the
// same bits in every CTA: deterministic).
//
// Needs CLUSTER and the merge helpers of softmax_online_merge.cuh.
#pragma once

// Lane r of a warp reads rank r's partial: at most 32; a cluster holds 16 at most.
static_assert(CLUSTER >= 1 && CLUSTER <= 16, "a cluster holds 1 to 16 CTAs");

__device__ __forceinline__ unsigned cluster_rank(void)
{
	unsigned r;
	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}

__device__ __forceinline__ void cluster_arrive(void)
{
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait(void)
{
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The partial at `local` (a __shared__ variable) in the CTA of rank `rank`.
__device__ __forceinline__ partial_t ld_cluster_partial(const partial_t *local, unsigned rank)
{
	unsigned own, remote;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(own)
	    : "l"(local));
	asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(own), "r"(rank));
	partial_t q;
	asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(q.m), "=f"(q.s)
		     : "r"(remote) : "memory");
	return q;
}

// The row's total: lane r of every warp reads rank r's partial.
__device__ __forceinline__ void cluster_total(const partial_t *local, float &m, float &s)
{
	const unsigned lane = threadIdx.x % 32;
	m = NEG_INF_F;
	s = 0.0f;
	if (lane < CLUSTER) {
		const partial_t q = ld_cluster_partial(local, lane);
		m = q.m;
		s = q.s;
	}
	warp_merge_fixed(m, s, CLUSTER);
}
