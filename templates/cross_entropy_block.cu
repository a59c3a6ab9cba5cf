// Template cross_entropy_block: the cross-entropy loss (and its gradient)
// with one CTA a row, the row held in registers: the logits are read once
// and the gradient written from registers, 1 read + 1 write an element,
// the bound. The row's max first, then its sum of exps (and, with label
// smoothing, of z) against it: one exp an element, exact at any magnitude.
// Regime: vocabularies up to about 16K-32K elements (held packed, as the
// dtype: 2-4 bytes a logit of registers).
//
// Parameters (macros set by the generator):
//   THREADS           threads per CTA (a multiple of 32)
//   VEC               elements per vector access (VEC * element size <= 16 B)
//   ELEMS_PER_THREAD  elements of the row a thread holds (multiple of VEC)
//   PERSISTENT        0: one row per CTA; 1: occupancy-sized grid that loops
#include "cross_entropy_common.cuh"

#define ITERS (ELEMS_PER_THREAD / VEC)
#define WARPS (THREADS / 32)

#include "softmax_cta_reduce.cuh"

template <bool PLAIN> __device__ __forceinline__ void ce_block_rows(CE_KERNEL_PARAMS)
{
	// three reductions' slots a row, two sets taken in turn: a thread still
	// reading one row's partials is never overwritten by the next row's
	__shared__ float slot[2][3][32];
	__shared__ float slot_xt[2]; // the target's logit, for its owner's gradient
	const float sc = ce_scale(scale);
	ce_cap cap;
	float ls;
	ce_options_of<PLAIN>(softcap, label_smoothing, cap, ls);
	const long long step = PERSISTENT ? (long long)gridDim.x : M;
	int turn = 0;
	for (long long row = blockIdx.x; row < M; row += step, turn ^= 1) {
		const elem_t *xr = x + row * ldx;
		elem_t *dxr = (flags & CE_WRITE_GRAD) ? dx + row * lddx : (elem_t *)xr;
		// the row peeled: its head (h elements) by CE_HEAD_THREAD, read again
		// in each phase rather than held (registers), the rest in whole
		// vectors from xb; when dx's offset differs, the scalar path
		long long h = ce_head(xr, dxr, 0, V);
		const bool vec_ok = h >= 0;
		h = vec_ok ? h : 0;
		const bool head = h > 0 && threadIdx.x == CE_HEAD_THREAD;
		const elem_t *xb = xr + h;
		const long long Vb = V - h;
		const long long t = ce_target(target, row, flags);
		vec_t xv[ITERS];
#pragma unroll
		for (int i = 0; i < ITERS; i++)
			load_vec(xv[i], xb, (long long)(i * THREADS + threadIdx.x) * VEC, Vb, vec_ok);
		// the target's logit read after the row's loads are issued (t's
		// latency hidden behind them)
		float zt = 0.0f;
		if (threadIdx.x == 0) {
			const float xt0 = t >= 0 && t < V ? to_f32(xr[t]) : NAN_F;
			slot_xt[turn] = xt0; // seen by all after the reductions' barriers
			zt = t >= 0 && t < V ? ce_z(xt0, cap) : NAN_F; // ce_target_z's
		}
		float m = NEG_INF_F;
		if (head) {
			float z[VEC];
			ce_z_vec(z, ce_head_vec(xr, h), 0, h, cap);
			m = ce_z_max(z);
		}
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			float z[VEC];
			ce_z_vec(z, xv[i], (long long)(i * THREADS + threadIdx.x) * VEC, Vb, cap);
			m = fmaxf(m, ce_z_max(z));
		}
		m = cta_max(m, slot[turn][0]);
		float s = 0.0f, sz = 0.0f;
		if (head) { // no thread writes the row before the gradient
			float z[VEC];
			ce_z_vec(z, ce_head_vec(xr, h), 0, h, cap);
#pragma unroll
			for (int j = 0; j < VEC; j++)
				s += exp_from_max(z[j], m);
			if (ls != 0.0f)
				sz += ce_sum_z(z, 0, h);
		}
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			const long long col = (long long)(i * THREADS + threadIdx.x) * VEC;
			float z[VEC];
			ce_z_vec(z, xv[i], col, Vb, cap);
#pragma unroll
			for (int j = 0; j < VEC; j++)
				s += exp_from_max(z[j], m);
			if (ls != 0.0f)
				sz += ce_sum_z(z, col, Vb);
		}
		s = cta_sum(s, slot[turn][1]);
		if (ls != 0.0f)
			sz = cta_sum(sz, slot[turn][2]);
		if (threadIdx.x == 0)
			ce_write_loss(loss, lse, row, m, s, sz, zt, t, V, ignore_index, ls, z_loss);
		if (!(flags & CE_WRITE_GRAD))
			continue;
		const ce_row r = ce_row_finish(m, s, t, V, ignore_index, ls, z_loss, cap, sc);
		elem_t *dxb = dxr + h;
		if (r.fixed) { // no logit read (ce_fill's loop cost a stack frame here)
			float vals[VEC];
#pragma unroll
			for (int j = 0; j < VEC; j++)
				vals[j] = r.value;
			if (head)
				store_vec(dxr, 0, h, false, vals);
#pragma unroll
			for (int i = 0; i < ITERS; i++)
				store_vec(dxb, (long long)(i * THREADS + threadIdx.x) * VEC, Vb, vec_ok,
					  vals);
			continue;
		}
		// no column compared with the target: its owner writes it last, from
		// thread 0's read (an index into the registers would be local memory;
		// a read of its own, held across the loop, spilled)
		if (head) { // read, then written, by this thread only
			float out[VEC];
			ce_grads<false, false, true>(out, ce_head_vec(xr, h), r);
			store_vec(dxr, 0, h, false, out);
		}
#pragma unroll
		for (int i = 0; i < ITERS; i++) {
			float out[VEC];
			ce_grads<false, false, true>(out, xv[i], r);
			store_vec(dxb, (long long)(i * THREADS + threadIdx.x) * VEC, Vb, vec_ok, out);
		}
		const bool owner = ce_owns_target(r, h, V) || (head && !r.fixed && r.t < h);
		ce_fix_target(dxr, r, owner, owner ? slot_xt[turn] : 0.0f);
	}
}

// (THREADS, 1): every register a CTA alone may have; with the first
// argument only, ptxas held the looped kernel to 64 at 512 threads and
// spilled (f32 512 x 4 x 4: 36 bytes).
CE_KERNELS(__launch_bounds__(THREADS, 1), __launch_bounds__(THREADS, 1), ce_block_rows)
