// 16-byte windows of a peeled row (softmax_peel.cuh) to and from global
// memory, shared by the templates that peel: softmax_smem, softmax_slice's
// users and softmax_cluster_regs. Window p[0..VEC) is 16-byte aligned; only
// its lanes [lo, hi) belong to the row.
//
// Needs VEC, elem_t and the accessors of softmax_common.cuh.
#pragma once

// Loads window p: one access when whole, else only the lanes [lo, hi), the
// others -inf (they vanish from the max and the sum). hi <= lo (a window
// past the row's end) reads nothing.
__device__ __forceinline__ void load_window(vec_t &out, const elem_t *p, int lo, int hi)
{
	if (lo == 0 && hi == VEC) {
		out = ld_vec(p);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out.v[j] = j >= lo && j < hi ? p[j] : elem_neg_inf();
	}
}

// A loaded window as f32.
__device__ __forceinline__ void vec_values(const vec_t &c, float *v)
{
#pragma unroll
	for (int j = 0; j < VEC; j++)
		v[j] = to_f32(c.v[j]);
}

// Converts and stores the lanes [lo, hi) of VEC results to the window p. A
// whole window is one 16-byte st.global (evict-first with CACHE_HINT): left
// to the compiler, some of these stores came out as four scalar ones.
__device__ __forceinline__ void store_window(elem_t *p, int lo, int hi, const float *vals)
{
	vec_t out;
	pack_vec(out, vals);
	if (lo == 0 && hi == VEC) {
#if CACHE_HINT
		st_vec(p, out);
#else
		const unsigned *w = reinterpret_cast<const unsigned *>(&out);
		asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};"
			     :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
#endif
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if (j >= lo && j < hi)
				p[j] = out.v[j];
	}
}

// y from v (out_from_max), lanes [lo, hi) stored to the window p.
__device__ __forceinline__ void write_window(elem_t *p, int lo, int hi, const float *v, float m,
					     float scale)
{
	float out[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = out_from_max(v[j], m, scale);
	store_window(p, lo, hi, out);
}
