// Template cross_entropy_cluster: the cross-entropy loss and gradient with
// each row cut over a thread-block cluster of CLUSTER CTAs (sm_90+). Each
// CTA takes its slice of the row through the two passes of
// cross_entropy_passes.cuh, its slice staged in its shared memory (as far
// as it holds, the rest read twice): the first pass's (max, sum of exps,
// sum of z) is merged over the CTA and pushed into every CTA's inbox
// (cross_entropy_cluster.cuh), where every thread merges the cluster's
// partials in rank order (the same bits in every CTA: deterministic).
// Rank 0's thread 0 reads the target's logit
// (before its push: no CTA writes the row before it has every partial, dx
// may be x) and writes the loss; each CTA writes its slice's gradient.
// Regime: vocabularies past one CTA's shared memory (f32 past 56K, bf16
// 128256-262144) read once: CLUSTER x 227 KB.
//
// Launch: one cluster per row (grid = M x CLUSTER, the cluster size fixed
// at compile time by __cluster_dims__); a cluster of 16 is non-portable
// (launch_grid allows it). Not persistent.
//
// Parameters (macros set by the generator):
//   CLUSTER   CTAs per row, the cluster size (2, 4, 8 or 16)
//   THREADS   threads per CTA
//   VEC       elements per 16-byte access (VEC * element size == 16)
//   UNROLL    vectors a thread loads per loop step
//
// Dynamic shared memory: the slice, ceil(ceil(V / CLUSTER) / VEC) vectors,
// or what a CTA has.
#define STAGE_ROW 1
#include "cross_entropy_passes.cuh"

#define WARPS (THREADS / 32)

#include "softmax_cta_reduce.cuh"
#include "cross_entropy_cluster.cuh"

static_assert(CLUSTER >= 2 && CLUSTER <= 16, "a cluster of 2 to 16 CTAs");

template <bool PLAIN> __device__ __forceinline__ void ce_cluster_row(CE_KERNEL_PARAMS)
{
	__shared__ float slot[3][32];
	__shared__ ce_inbox box;
	ce_cap cap;
	float ls;
	ce_options_of<PLAIN>(softcap, label_smoothing, cap, ls);
	const bool smooth = ls != 0.0f;
	const unsigned rank = ce_cluster_rank();
	const long long row = blockIdx.x / CLUSTER;
	if (row >= M)
		return; // a grid sized for more rows (the whole cluster leaves)
	ce_inbox_init(&box);
	// slices of whole vectors, so that an aligned row's slices are aligned
	const long long len = ((V + CLUSTER - 1) / CLUSTER + VEC - 1) / VEC * VEC;
	const long long c0 = (long long)rank * len < V ? (long long)rank * len : V;
	const long long c1 = c0 + len < V ? c0 + len : V;
	const elem_t *xr = x + row * ldx;
	elem_t *dxr = (flags & CE_WRITE_GRAD) ? dx + row * lddx : (elem_t *)xr;
	const long long h = ce_head(xr, dxr, c0, c1); // the slice peeled (-1: scalar)
	const long long t = ce_target(target, row, flags);
	const long long staged = ce_staged_vecs();
	ce_online o;
	float sz;
	ce_pass_stats(xr, c0, c1, h, staged, cap, smooth, o, sz);
	// read after the row's (t's latency hidden; the logit in L2 by now)
	const bool writes_loss = rank == 0 && threadIdx.x == 0;
	const float zt = writes_loss ? ce_target_z(xr, t, V, cap) : 0.0f;
	// a thread that added nothing adds 0 (not 0 x e^(-inf - -inf)): a slice
	// past the row's end, or of -inf only, has the partial (-inf, 0), which
	// the cluster's merge makes 0, or NaN for a row of -inf only
	float m = cta_max(o.m, slot[0]);
	float s = cta_sum(o.s == 0.0f ? 0.0f : o.s * exp_from_max(o.m, m), slot[1]);
	const ce_row r = ce_cluster_finish(&box, m, s, sz, smooth, slot[2], writes_loss, loss, lse,
					   row, zt, t, V, ignore_index, ls, z_loss, cap, scale);
	if (flags & CE_WRITE_GRAD)
		ce_pass_grads<PLAIN>(dxr, xr, c0, c1, h, staged, r);
}

// (THREADS, 1): every register a CTA alone may have, as cross_entropy_two_pass.cuh.
CE_KERNELS(__cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1),
	   __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1), ce_cluster_row)
