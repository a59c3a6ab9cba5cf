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
