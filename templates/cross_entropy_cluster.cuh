// The cluster's exchange of the cross_entropy templates that cut a row over
// a thread-block cluster (cross_entropy_cluster, cross_entropy_regs; sm_90+):
// each CTA's partial (max, sum of exps against it, sum of z) in its shared
// memory, read by every CTA of the cluster through distributed shared
// memory, in rank order (the same bits in every CTA: deterministic).
#pragma once

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
// by thread 0 before: merged in rank order, the sums rescaled to the max
// (an empty slice's -inf max and 0 sum add 0; a row of -inf only gives
// NaN). Two cluster barriers: before the reads (every partial written) and
// after (every CTA has read every partial: each may leave).
__device__ __forceinline__ void ce_cluster_merge(const ce_partial *part, float &m, float &s,
						 float &sz)
{
	ce_cluster_sync();
	ce_partial q[CLUSTER];
#pragma unroll
	for (unsigned r = 0; r < CLUSTER; r++)
		q[r] = ce_partial_of(part, r);
	ce_cluster_sync();
	m = q[0].m;
#pragma unroll
	for (int r = 1; r < CLUSTER; r++)
		m = fmaxf(m, q[r].m);
	s = 0.0f;
	sz = 0.0f;
#pragma unroll
	for (int r = 0; r < CLUSTER; r++) {
		s += q[r].s * exp_from_max(q[r].m, m);
		sz += q[r].sz;
	}
}

// After a CTA's max m and sum s (and, smooth, its threads' sums of z sz,
// summed over the CTA here through sz_slot): its partial put in part, the
// cluster's merged, and the row's loss written by rank 0's thread 0 (zt:
// the target's z, that thread's read). Returns what the gradient needs.
__device__ __forceinline__ ce_row ce_cluster_finish(ce_partial *part, float m, float s, float sz,
						    bool smooth, float *sz_slot, unsigned rank,
						    float *loss, float *lse, long long row, float zt,
						    long long t, long long V, long long ignore_index,
						    float ls, float zl, ce_cap cap, const float *scale)
{
	if (smooth)
		sz = cta_sum(sz, sz_slot);
	if (threadIdx.x == 0)
		*part = ce_partial{ m, s, sz, 0.0f };
	ce_cluster_merge(part, m, s, sz);
	if (rank == 0 && threadIdx.x == 0)
		ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index, ls, zl);
	return ce_row_finish(m, s, t, V, ignore_index, ls, zl, cap, ce_scale(scale));
}

