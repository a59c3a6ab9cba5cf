// Thread-block cluster pieces (sm_90+) shared by softmax_cluster and
// softmax_cluster_regs: the CTA's rank, and the row's total from the CTAs'
// partials, exchanged by push: each CTA sends its partial into slot `rank`
// of every CTA's inbox with st.async, which counts its bytes on the
// receiver's mbarrier; a CTA waits on its own mbarrier only and merges its
// inbox in rank order (the same bits in every CTA: deterministic).
// Against a cluster barrier, reads of each other's partials through
// distributed shared memory and a second barrier before exit (so that none
// leaves while read), the push is one way, not a round trip, and nothing of
// a CTA is read by another: 15% less time at bf16 4096 x 50K-262K (H100).
//
// Needs CLUSTER and the merge helpers of softmax_online_merge.cuh.
#pragma once

// Lane r of a warp reads slot r: at most 32; a cluster holds 16 at most.
static_assert(CLUSTER >= 1 && CLUSTER <= 16, "a cluster holds 1 to 16 CTAs");

struct cluster_inbox {
	partial_t slot[CLUSTER];
	unsigned long long full; // mbarrier: one arrival, CLUSTER partials' bytes
};

__device__ __forceinline__ unsigned cluster_rank(void)
{
	unsigned r;
	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

// The shared::cluster address of `local` (a shared::cta address) in the CTA
// of rank `rank`.
__device__ __forceinline__ unsigned cluster_addr(unsigned local, unsigned rank)
{
	unsigned remote;
	asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
	return remote;
}

// All threads, first thing: the mbarrier `full` expects `bytes` of
// partials; the cluster arrive (relaxed: the init is published by its
// fence) lets the senders know, at inbox_ready, that every CTA's inbox is
// ready. Any inbox of partials pushed with st.async (cross_entropy_cluster.cuh's too).
__device__ __forceinline__ void inbox_arm(unsigned long long *full, unsigned bytes)
{
	if (threadIdx.x == 0) {
		const unsigned bar = smem_addr(full);
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
			     :: "r"(bar), "r"(bytes) : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

// All threads, before a push: every CTA's inbox armed (long since, as a rule).
__device__ __forceinline__ void inbox_ready(void)
{
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Until every partial has landed in this CTA's inbox.
__device__ __forceinline__ void inbox_wait_full(unsigned long long *full)
{
	const unsigned bar = smem_addr(full);
	unsigned done;
	do {
		asm volatile("{ .reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
			     "selp.u32 %0, 1, 0, p; }"
			     : "=r"(done) : "r"(bar) : "memory");
	} while (!done);
}

__device__ __forceinline__ void inbox_init(cluster_inbox *box)
{
	inbox_arm(&box->full, (unsigned)(CLUSTER * sizeof(partial_t)));
}

// All threads: thread 0 sends (m, s) to slot `rank` of every CTA's inbox.
__device__ __forceinline__ void inbox_send(cluster_inbox *box, unsigned rank, float m, float s)
{
	inbox_ready();
	if (threadIdx.x != 0)
		return;
	const unsigned slot = smem_addr(&box->slot[rank]), bar = smem_addr(&box->full);
#pragma unroll
	for (unsigned r = 0; r < CLUSTER; r++)
		asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32"
			     " [%0], {%1, %2}, [%3];"
			     :: "r"(cluster_addr(slot, r)), "f"(m), "f"(s), "r"(cluster_addr(bar, r))
			     : "memory");
}

// All threads: waits until the inbox is full, then merges its partials in
// rank order into (m, s). A CTA may leave after this: every push to it has
// landed, and nothing of it is read by the others.
__device__ __forceinline__ void inbox_total(cluster_inbox *box, float &m, float &s)
{
	inbox_wait_full(&box->full);
	const unsigned lane = threadIdx.x % 32;
	m = NEG_INF_F;
	s = 0.0f;
	if (lane < CLUSTER) {
		const partial_t q = box->slot[lane];
		m = q.m;
		s = q.s;
	}
	warp_merge_fixed<CLUSTER>(m, s);
}
