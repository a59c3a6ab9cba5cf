// Template cross_entropy_regs: the cross-entropy loss and gradient with
// each row cut over a thread-block cluster of CLUSTER CTAs (sm_90+), every
// CTA's slice held in registers, as loaded (packed in half precision):
// cross_entropy_block's way of holding a row, stretched over a cluster as
// softmax_cluster_regs stretches softmax_block's. Every thread issues all
// its 16-byte loads at once; the CTA's max, then its sum of exps against
// it (and, with label smoothing, of z); the cluster merges its CTAs'
// partials (cross_entropy_cluster.cuh) and each thread writes the gradient
// of the logits it holds, their exps computed again: the row read once
// and written once, no shared-memory staging, so one CTA's loads overlap
// another's reductions on the same multiprocessor.
// Regime: vocabularies of 8K-256K (softmax_cluster_regs reached 95-98% of
// a copy there, softmax_smem 73-77%); on the H200 the sweep's winner at
// nearly every shape from 8192 to 262144 from one row to 16384 (half
// precision at 1024-4096 rows: 87-96% of a copy at 32000, 128256, 151936
// (80 logits a thread) and 262144, 75-82% at 50257, odd rows;
// results/h200/cross-entropy-h200.db.xz).
//
// Slices as cross_entropy_cluster's: whole vectors, CTA r the columns
// [r len, (r + 1) len); a slice that does not start on a vector boundary
// is peeled (ce_head: its head by CE_HEAD_THREAD), and one that does not
// end on one leaves a tail (CE_TAIL_THREAD's); both are read from global
// memory once and kept in shared memory (edge) for the sum and the
// gradient: read again from global memory after the CTA's and the
// cluster's barriers, each put a round trip on the row's critical path
// (bf16 16384 x 50257: 81.7% of a copy, 84.5% kept; held in registers
// instead, the held slices spilled: 151936 93.3 -> 91.3%,
// results/h200/ce-regs-edge-ab-h200.log). Only whole vectors are held, each a 16-byte
// load or none, all issued at once: with the masked element loads among
// them ptxas issued one vector at a time, each after the last had arrived
// (20-37% of a copy in half precision). dx's other offset takes the scalar
// path (every held vector read element by element). The options are
// uniform over a launch: the row's code is instantiated per option (CAP:
// soft-cap; SMOOTH: label smoothing), so the common case tests nothing an
// element, and the common case is a kernel of its own too
// (cross_entropy_plain_kernel), so that the others' registers do not set
// its occupancy. The target's column is rewritten by its owner last, from
// its own read of the logit (dx may be x: only the owner writes that
// column); the owner writes the row's loss.
//
// Launch: one cluster per row (grid = M x CLUSTER, __cluster_dims__); a
// cluster of 16 is non-portable (launch_grid allows it). Not persistent.
//
// Parameters (macros set by the generator):
//   CLUSTER           CTAs per row, the cluster size (2, 4, 8 or 16)
//   THREADS           threads per CTA
//   VEC               elements per 16-byte access (VEC * element size == 16)
//   ELEMS_PER_THREAD  logits of its slice each thread holds (a multiple of VEC)
#include "cross_entropy_common.cuh"

#define ITERS (ELEMS_PER_THREAD / VEC)
#define WARPS (THREADS / 32)

#include "softmax_cta_reduce.cuh"
#include "cross_entropy_cluster.cuh"

static_assert(VEC * sizeof(elem_t) == 16, "a vector is one 16-byte access");
static_assert(ELEMS_PER_THREAD % VEC == 0, "a thread holds whole vectors");
static_assert(CLUSTER >= 2 && CLUSTER <= 16, "a cluster of 2 to 16 CTAs");

// CTAs a multiprocessor keeps (__launch_bounds__'s second argument) for a
// kernel that needs `need` registers a thread: the bytes in flight decide
// (the row's reductions and the cluster's barriers leave a CTA's loads
// idle; other CTAs' fill them).
#define CE_REGS_CTAS(need)                                            \
	(65536 / (THREADS * (need)) < 1 ? 1                           \
	 : 65536 / (THREADS * (need)) > 2048 / THREADS                \
		 ? 2048 / THREADS                                     \
		 : 65536 / (THREADS * (need)))
// cross_entropy_kernel, every option: the held slice (packed in half
// precision) and 48 registers more (f32: 56), which spills 16-160 bytes
// past 32 logits a thread and wins anyway (bf16 4096 x 32000: 75.1% of a
// copy at 64 logits, 3 CTAs of 256, 40 bytes spilled; 60.4% at 32 without;
// 32.7% when ptxas was left 128 registers, 2 CTAs: H200,
// results/h200/cross-entropy-regs-mini-h200.log).
#define CE_REGS_NEED                                                      \
	(sizeof(elem_t) == 4 ? ELEMS_PER_THREAD + 56 : ELEMS_PER_THREAD / 2 + 48)
// cross_entropy_plain_kernel, no soft-cap and no smoothing: the slice and
// 24, spill-free at 32-64 half-precision logits with 32-bit columns (at
// 32: 40 registers, 6 CTAs of 256, where 64-bit ones took 48 and spilled;
// 20 spilled 20-52 bytes); the soft-cap's and smoothing's instantiations
// had set the one kernel's registers (bf16 4096 x 32000, 64 logits: 82.3%
// of a copy alone, 78.6% with them; f32 32 logits 76.6 against 66.7%:
// results/h200/ce-plain-entry-ab-h200.log).
#define CE_REGS_PLAIN_NEED                                                \
	(sizeof(elem_t) == 4 ? ELEMS_PER_THREAD + 24 : ELEMS_PER_THREAD / 2 + 24)

// A whole 16-byte vector stored as one access: st_vec's struct copy of
// packed half-precision words became eight 16-bit stores in NVVM's PTX
// (cross_entropy_regs: 0 st.global.v4 of 339 stores).
__device__ __forceinline__ void ce_st_vec16(elem_t *p, const vec_t &v)
{
	*reinterpret_cast<uint4 *>(p) = *reinterpret_cast<const uint4 *>(&v);
}

// The thread that takes a slice's tail (the head's takes the first
// thread's: the tail leaves the last threads the fewest vectors).
#define CE_TAIL_THREAD 0

// The column, from the slice's first whole vector, of this thread's i-th
// held vector (consecutive threads, consecutive vectors).
__device__ __forceinline__ int held_col(int i)
{
	return (i * THREADS + (int)threadIdx.x) * VEC;
}

// A held vector's z values; the masked ones (past the slice: -inf as
// loaded) stay -inf only without the cap, which needs the column test.
template <bool CAP>
__device__ __forceinline__ void held_z(float *z, const vec_t &v, long long col, long long n,
				       ce_cap cap)
{
	if (CAP) {
		ce_z_vec(z, v, col, n, cap);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			z[j] = ce_x(v, j);
	}
}

template <bool CAP, bool SMOOTH>
__device__ __forceinline__ void
ce_regs_row(elem_t *dx, const elem_t *x, const void *target, float *loss, float *lse,
	    const float *scale, long long V, long long lddx, long long ldx, long long ignore_index,
	    float label_smoothing, float z_loss, ce_cap cap, unsigned flags, float (*slot)[32],
	    ce_inbox *box, vec_t *edge)
{
	const unsigned rank = ce_cluster_rank();
	const long long row = blockIdx.x / CLUSTER;
	// slices of whole vectors, so that an aligned row's slices are aligned
	// (columns in 32 bits: V <= the cluster's hold, at most 2^20; 64-bit
	// ones kept 12-16 registers more live across the row)
	const int v = (int)V;
	const int len = ((v + CLUSTER - 1) / CLUSTER + VEC - 1) / VEC * VEC;
	const int c0 = (int)rank * len < v ? (int)rank * len : v;
	const int c1 = c0 + len < v ? c0 + len : v;
	const elem_t *xr = x + row * ldx;
	elem_t *dxr = (flags & CE_WRITE_GRAD) ? dx + row * lddx : (elem_t *)xr;
	int h = (int)ce_head(xr, dxr, c0, c1);
	const bool vec_ok = h >= 0;
	h = vec_ok ? h : 0;
	const bool head = h > 0 && threadIdx.x == CE_HEAD_THREAD;
	const elem_t *xb = xr + c0 + h; // the slice from its first whole vector: n elements,
	const int n = c1 - c0 - h; // the first nw of them held, the rest the tail's
	const int nw = vec_ok ? n / VEC * VEC : n;
	const bool tail = nw < n && threadIdx.x == CE_TAIL_THREAD;
	vec_t xv[ITERS];
	if (vec_ok) {
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			if (held_col(i) + VEC <= nw) {
				xv[i] = ld_vec(xb + held_col(i));
			} else {
#pragma unroll
				for (int j = 0; j < VEC; j++)
					xv[i].v[j] = elem_neg_inf();
			}
		}
	} else {
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			load_vec(xv[i], xb, held_col(i), nw, false);
	}
	// the target, read after the logits' loads are issued: t lives in a
	// uniform register, and its move there (R2UR) waits for the load; read
	// before them, every warp's loads waited for it (bf16 1024 x 128256:
	// 136.9 -> 130.5 us, results/h200/ce-target-after-loads-ab-h200.log)
	const long long t = ce_target(target, row, flags);
	const bool fixed = ce_fixed(t, V, ignore_index);
	// the target's column: the head's or the tail's thread's, or its
	// vector's owner's, who reads its logit (after the CTA's max: used
	// after the merge) and writes the row's loss (a row without one: rank
	// 0's thread 0)
	const int tc = c0 + h + nw; // the tail's first column
	const bool owner = !fixed && (ce_owns_col(t, c0 + h, tc) || (head && t >= c0 && t < c0 + h) ||
				      (tail && t >= tc && t < c1));
	float m = NEG_INF_F;
	if (head) { // edge[0]: the head, edge[1]: the tail (different threads)
		edge[0] = ce_head_vec(xr + c0, h);
		float z[VEC];
		ce_z_vec(z, edge[0], 0, h, cap);
		m = ce_z_max(z);
	}
	if (tail) {
		edge[1] = ce_head_vec(xb + nw, n - nw);
		float z[VEC];
		ce_z_vec(z, edge[1], 0, n - nw, cap);
		m = fmaxf(m, ce_z_max(z));
	}
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		if (CAP) {
			float z[VEC];
			held_z<true>(z, xv[i], held_col(i), nw, cap);
			m = fmaxf(m, ce_z_max(z));
		} else {
			m = fmaxf(m, vec_max(xv[i])); // packed pairs, NaN skipped as fmaxf
		}
	}
	m = cta_max(m, slot[0]);
	const float xt = owner ? to_f32(xr[t]) : 0.0f;
	// a slice of -inf only (or past the row's end) sums against 0: its
	// terms are 0, where -inf - -inf would be NaN (the cluster's merge
	// makes a row of -inf only NaN)
	const float ref = m == NEG_INF_F ? 0.0f : m;
	float s = 0.0f, sz = 0.0f;
	if (head) {
		float z[VEC];
		ce_z_vec(z, edge[0], 0, h, cap);
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += exp_from_max(z[j], ref);
		if (SMOOTH)
			sz += ce_sum_z(z, 0, h);
	}
	if (tail) {
		float z[VEC];
		ce_z_vec(z, edge[1], 0, n - nw, cap);
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += exp_from_max(z[j], ref);
		if (SMOOTH)
			sz += ce_sum_z(z, 0, n - nw);
	}
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		float z[VEC];
		held_z<CAP>(z, xv[i], held_col(i), nw, cap);
#pragma unroll
		for (int j = 0; j < VEC; j++)
			s += exp_from_max(z[j], ref);
		if (SMOOTH)
			sz += ce_sum_z(z, held_col(i), nw);
	}
	s = cta_sum(s, slot[1]);
	const ce_row r = ce_cluster_finish(box, m, s, sz, SMOOTH, slot[2],
					   owner || (fixed && rank == 0 && threadIdx.x == 0), loss,
					   lse, row, owner ? ce_z(xt, cap) : 0.0f, t, V,
					   ignore_index, label_smoothing, z_loss, cap, scale);
	if (!(flags & CE_WRITE_GRAD))
		return;
	elem_t *dxb = dxr + c0 + h;
	if (r.fixed) { // ignored or out-of-range target: no logit needed
		float vals[VEC];
#pragma unroll
		for (int j = 0; j < VEC; j++)
			vals[j] = r.value;
		if (head)
			store_vec(dxr + c0, 0, h, false, vals);
		if (tail)
			store_vec(dxb + nw, 0, n - nw, false, vals);
		vec_t w;
		pack_vec(w, vals);
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			if (!vec_ok)
				store_vec(dxb, held_col(i), nw, false, vals);
			else if (held_col(i) + VEC <= nw)
				ce_st_vec16(dxb + held_col(i), w);
		}
		return;
	}
	if (head) {
		float out[VEC];
		ce_grads<false, false, true>(out, edge[0], r);
		store_vec(dxr + c0, 0, h, false, out);
	}
	if (tail) {
		float out[VEC];
		ce_grads<false, false, true>(out, edge[1], r);
		store_vec(dxb + nw, 0, n - nw, false, out);
	}
	// whole vectors as one 16-byte store each (ce_st_vec16), or none
#pragma unroll
	for (int i = 0; i < ITERS; i++) {
		// converted again, not kept as f32 from the sums (twice the registers)
		launder(xv[i]);
		float out[VEC];
		ce_grads<CAP, SMOOTH, false>(out, xv[i], r);
		if (!vec_ok) {
			store_vec(dxb, held_col(i), nw, false, out);
		} else if (held_col(i) + VEC <= nw) {
			vec_t w;
			pack_vec(w, out);
			ce_st_vec16(dxb + held_col(i), w);
		}
	}
	ce_fix_target(dxr, r, owner, xt);
}

// Every option (PLAIN false): one instantiation of the row per uniform
// option; with the cap SMOOTH is always set (x - +0 is x; the tanh
// dominates there), as CE_WITH_OPTIONS. PLAIN: the plain row alone.
template <bool PLAIN> __device__ __forceinline__ void ce_regs_rows(CE_KERNEL_PARAMS)
{
	__shared__ float slot[3][32];
	__shared__ ce_inbox box;
	__shared__ vec_t edge[2];
	if (blockIdx.x / CLUSTER >= M)
		return; // a grid sized for more rows (the whole cluster leaves)
	ce_inbox_init(&box);
	ce_cap cap;
	float ls;
	ce_options_of<PLAIN>(softcap, label_smoothing, cap, ls);
	if (!PLAIN && cap.cap > 0.0f)
		ce_regs_row<true, true>(dx, x, target, loss, lse, scale, V, lddx, ldx, ignore_index,
					ls, z_loss, cap, flags, slot, &box, edge);
	else if (!PLAIN && ls != 0.0f)
		ce_regs_row<false, true>(dx, x, target, loss, lse, scale, V, lddx, ldx, ignore_index,
					 ls, z_loss, cap, flags, slot, &box, edge);
	else
		ce_regs_row<false, false>(dx, x, target, loss, lse, scale, V, lddx, ldx,
					  ignore_index, ls, z_loss, cap, flags, slot, &box, edge);
}

CE_KERNELS(__cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, CE_REGS_CTAS(CE_REGS_NEED)),
	   __cluster_dims__(CLUSTER, 1, 1)
		   __launch_bounds__(THREADS, CE_REGS_CTAS(CE_REGS_PLAIN_NEED)),
	   ce_regs_rows)
