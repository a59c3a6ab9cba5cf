// Template softmax_cluster: each row is cut over a thread-block cluster of
// CLUSTER CTAs (sm_90+). Each CTA stages its slice of the row in shared
// memory (softmax_slice.cuh), reduces it to a partial (max, sum) and pushes
// that into every CTA's shared memory (softmax_cluster_sync.cuh); each CTA
// merges the cluster's partials in rank order (the same bits in every CTA:
// deterministic), then writes its slice. A row
// is read from HBM once and written once as long as its slices fit: up to
// CLUSTER x 227 KB on an H100 (~0.9M f32 elements with 16 CTAs); beyond
// that each CTA re-reads its overflow.
// Regime: rows too long for one CTA's shared memory, and rows of 50K-200K
// where one CTA per row leaves nothing in flight while it reduces: with
// slices of a row spread over several CTAs, each CTA needs less shared
// memory, so several CTAs share a multiprocessor and one's loads overlap
// another's reduction.
//
// Launch: one cluster per row (grid = M x CLUSTER, the cluster size fixed
// at compile time by __cluster_dims__, so a plain cuLaunchKernel does). A
// cluster of 16 is non-portable: the launch must allow it
// (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED; launch_grid does).
// Clusters are not persistent: a finished cluster's multiprocessors take
// the next row's, which overlaps rows without a second row buffer.
//
// Parameters (macros set by the generator):
//   CLUSTER   CTAs per row, the cluster size (2, 4, 8 or 16)
//   THREADS   threads per CTA
//   VEC       elements per 16-byte access (VEC * element size == 16)
//
// Dynamic shared memory: whatever the launch gives; a slice longer than
// that re-reads its overflow.
#include "softmax_common.cuh"

#define WARPS (THREADS / 32)

#include "softmax_online_merge.cuh"
#include "softmax_slice.cuh"
#include "softmax_cluster_sync.cuh"

// At least 1024 threads resident per SM: at most 64 registers a thread (left
// alone, ptxas spilled some 512-thread variants at 40 registers).
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1024 / THREADS)
softmax_kernel(elem_t *y, const elem_t *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	__shared__ float m_slot[WARPS], s_slot[WARPS];
	__shared__ cluster_inbox inbox;
	inbox_init(&inbox);
	const unsigned rank = cluster_rank();
	const long long row = blockIdx.x / CLUSTER;
	const long long len = ((N + CLUSTER - 1) / CLUSTER + VEC - 1) / VEC * VEC;
	const int cap = (int)(dynamic_smem_bytes() / CHUNK_BYTES);
	elem_t *const buf = reinterpret_cast<elem_t *>(slice_smem);
	// row < M: the grid is M clusters
	const row_slice sl = make_slice(x + row * ldx, y + row * ldy, N, (long long)rank * len, len,
					cap);
	held_windows held; // none: REG_WINDOWS is 0 here
	slice_stage(buf, held, sl);
	float m = NEG_INF_F, s = 0.0f;
	slice_reduce(buf, held, sl, m, s, 0, threadIdx.x);
	cta_merge(m, s, m_slot, s_slot);
	inbox_send(&inbox, rank, m, s);
	inbox_total(&inbox, m, s);
	slice_write(buf, held, sl, masked_max(m, flags), write_scale(masked_sum(s, flags)));
}
