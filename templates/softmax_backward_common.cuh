// Shared pieces of the softmax_backward templates (softmax_backward_warp,
// _block, _loop), on top of softmax_common.cuh's element type, conversions
// and vector access. Every kernel is
//
//   softmax_backward_kernel(elem *dx, const elem *y, const elem *dy, M, N,
//                           lddx, ldy, lddy, flags)
//
// and computes, per row, one sum r and then each dx from (y, dy, r):
//   softmax_backward:     r = sum dy y,  dx = y (dy - r)
//   log_softmax_backward: r = sum dy,    dx = dy - e^y r
// A source the generator made for log_softmax_backward defines
// OP_LOG_SOFTMAX_BACKWARD (common/kernel_source.h); only the two helpers
// below differ. dx may be dy (in place): every kernel reads a row's
// elements before it writes them, each element by the thread that writes
// it. flags (ATD_MASKED_ZERO) is taken and ignored: a masked forward row
// (y all 0, or all -inf) gives dx = 0, or dy, by the same arithmetic.
#pragma once

#include "softmax_common.cuh"
#include "softmax_row_windows.cuh"

#if defined(OP_LOG_SOFTMAX_BACKWARD)
#define LOG_BACKWARD 1
#else
#define LOG_BACKWARD 0
#endif

// The row's sum r. softmax_backward sums y dy in double (a product of two
// floats is exact there) and writes with r as a pair of floats, hi + lo,
// taking dy - r as (dy - hi) - lo, the first difference exact where it
// cancels. Where y is nearly one-hot, dy_k - r is dy_k (1 - y_k) minus
// small terms, and a float sum's rounding (eps |dy_k|) was 1500 f32 eps of
// the result at N = 7 (8.9e-5 against f32's tolerance of 1e-5; 1.1-1.6%
// against 1e-2 in f16 and bf16; PyTorch's float sum has the same error).
// On the H200 this costs f32 nothing; half precision lost 8% with dy - r
// in double too, 12% with the sum as two-sums of floats. log_softmax's e^y
// is only as good as f32's exp, so its backward keeps one float.
#if !LOG_BACKWARD
typedef double grad_acc_t;
struct grad_r_t {
	float hi, lo;
};

// y dy exactly: in double for f32; a product of two halves (11 or 8 bit
// significands) is exact in float already, so half precision converts
// once, not twice (its bandwidth is conversions' bound here)
__device__ __forceinline__ grad_acc_t grad_term(float y, float dy)
{
#if DTYPE_F32
	return (double)y * (double)dy;
#else
	return (double)(y * dy);
#endif
}

// r as the write takes it; an r beyond float's range is hi alone (an
// infinity, as a float sum gives it)
__device__ __forceinline__ grad_r_t acc_final(grad_acc_t r)
{
	const float hi = (float)r;
	return { hi, isfinite(hi) ? (float)(r - (double)hi) : 0.0f };
}

__device__ __forceinline__ float grad_out(float y, float dy, grad_r_t r)
{
	return y * ((dy - r.hi) - r.lo);
}

// r of a row of one element, y dy: the same hi and lo as acc_final's
// through double (hi the product rounded once, lo the rest rounded once),
// by a fused multiply-add, without the double unit's conversions. hi by
// __fmul_rn, which is never contracted: dy - hi fused into one rounding
// would count lo twice.
__device__ __forceinline__ grad_r_t single_term_r(float y, float dy)
{
	const float hi = __fmul_rn(y, dy);
	return { hi, isfinite(hi) ? fmaf(y, dy, -hi) : 0.0f };
}
#else
typedef float grad_acc_t;
typedef float grad_r_t;

__device__ __forceinline__ grad_acc_t grad_term(float y, float dy) { return dy; }
__device__ __forceinline__ grad_r_t acc_final(grad_acc_t r) { return r; }

// e^y as 2^(y log2 e): y = -inf (a masked element of log_softmax) gives 0,
// so dx = dy, as PyTorch's exp gives; 0 * an infinite r is NaN there too.
__device__ __forceinline__ float grad_out(float y, float dy, grad_r_t r)
{
	return dy - fast_exp2(y * LOG2E_F) * r;
}

__device__ __forceinline__ grad_r_t single_term_r(float y, float dy) { return dy; }
#endif

// The sum over WIDTH consecutive lanes (group_sum's, a template argument
// for the same reason), every lane getting it.
template <int WIDTH> __device__ __forceinline__ grad_acc_t group_sum_acc(grad_acc_t v)
{
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// Whether element c of a window belongs to the row: its elements are
// base[k, k + n) (unpeeled rows: k = 0, and c >= 0 always).
template <bool PEELED>
__device__ __forceinline__ bool in_row(long long c, int k, long long n)
{
	return PEELED ? (unsigned long long)(c - k) < (unsigned long long)n : c < n;
}

// Whether window col (elements base[col, col + VEC)) lies wholly in the
// row and may be one vector access.
template <bool PEELED>
__device__ __forceinline__ bool window_in_row(long long col, int k, long long n, bool vec_ok)
{
	return vec_ok && (PEELED ? col >= k && col - k + VEC <= n : col + VEC <= n);
}

// Loads window col of a row whose elements are base[k, k + n): whole where
// it lies in the row, else element by element, elements outside the row
// reading as 0, whose term of r is 0 for both ops (for y and dy alike).
// PEELED: rows that start k elements past a vector boundary, read in
// windows aligned to the vector (softmax_backward_smem, and _block and
// _warp with peel); else k = 0 and a misaligned launch (vec_ok false) goes
// element by element.
template <bool PEELED>
__device__ __forceinline__ void load_window0(vec_t &out, const elem_t *base, long long col, int k,
					     long long n, bool vec_ok)
{
#if !DTYPE_F32 && VEC % 2 == 0
	// Half precision: the vector load and the masked path meet as 32-bit
	// words. Met as 16-bit elements, ptxas split the loaded words at the
	// join (PRMT), which waits for the load, so each load waited for the
	// one before: softmax_backward_warp bf16 32768 x 1000 at 54% of a copy
	// (its SASS on the H200, 2026-11-29), y then dy a round trip each in
	// softmax_backward_block.
	unsigned w[VEC / 2];
	if (window_in_row<PEELED>(col, k, n, vec_ok)) {
		const vec_t v = ld_vec(base + col);
#pragma unroll
		for (int q = 0; q < VEC / 2; q++)
			w[q] = reinterpret_cast<const unsigned *>(&v)[q];
	} else {
#pragma unroll
		for (int q = 0; q < VEC / 2; q++) {
			const long long c = col + 2 * q;
			const unsigned lo = in_row<PEELED>(c, k, n) ? base[c] : 0u,
				       hi = in_row<PEELED>(c + 1, k, n) ? base[c + 1] : 0u;
			w[q] = lo | hi << 16; // 0 bits: +0 in f16 and bf16
		}
	}
#pragma unroll
	for (int q = 0; q < VEC / 2; q++)
		reinterpret_cast<unsigned *>(&out)[q] = w[q];
#else
	if (window_in_row<PEELED>(col, k, n, vec_ok)) {
		out = ld_vec(base + col);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out.v[j] = in_row<PEELED>(col + j, k, n) ? base[col + j] : from_f32(0.0f);
	}
#endif
}

// Loads the VEC elements at row[col...]; elements at or past n read as 0.
__device__ __forceinline__ void load_vec0(vec_t &out, const elem_t *row, long long col,
					  long long n, bool vec_ok)
{
	load_window0<false>(out, row, col, 0, n, vec_ok);
}

// The sum of the VEC terms of one pair of vectors.
__device__ __forceinline__ grad_acc_t vec_terms(const vec_t &y, const vec_t &dy)
{
	grad_acc_t r = 0;
#pragma unroll
	for (int j = 0; j < VEC; j++)
		r += grad_term(to_f32(y.v[j]), to_f32(dy.v[j]));
	return r;
}

// Writes the VEC results of one pair of vectors at row[col...] (masked).
__device__ __forceinline__ void store_grads(elem_t *row, long long col, long long n, bool vec_ok,
					    const vec_t &y, const vec_t &dy, grad_r_t r)
{
	float out[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out[j] = grad_out(to_f32(y.v[j]), to_f32(dy.v[j]), r);
	store_vec(row, col, n, vec_ok, out);
}

// Stores a vector's 32-bit words at p, one access (16 or 8 bytes).
__device__ __forceinline__ void st_vec_words(elem_t *p, const vec_t &v)
{
	const unsigned *w = reinterpret_cast<const unsigned *>(&v);
	if (!CACHE_HINT && sizeof(vec_t) == 16)
		asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};"
			     :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
	else if (!CACHE_HINT && sizeof(vec_t) == 8)
		asm volatile("st.global.v2.u32 [%0], {%1,%2};" :: "l"(p), "r"(w[0]), "r"(w[1])
			     : "memory");
	else
		st_vec(p, v);
}

// store_grads for window col of a row whose elements are base[k, k + n)
// (load_window0's; unpeeled: store_grads): only the row's own elements are
// written. The whole window is stored as words, the partial one's
// half-precision elements taken out of them: with the partial path
// reading 16-bit elements, NVVM split the whole store too, into VEC 2-byte
// ones (then 32-bit ones through a uint4): a peeled f16 row staged whole
// ran at 0.39 of a copy (softmax_backward_smem, 8797 x 24186, H200).
template <bool PEELED>
__device__ __forceinline__ void store_grads_window(elem_t *base, long long col, int k, long long n,
						   bool vec_ok, const vec_t &y, const vec_t &dy,
						   grad_r_t r)
{
	float vals[VEC];
#pragma unroll
	for (int j = 0; j < VEC; j++)
		vals[j] = grad_out(to_f32(y.v[j]), to_f32(dy.v[j]), r);
	vec_t out;
	pack_vec(out, vals);
	// an else, not an early return: nvcc warned the loops after it unreachable
	if (!PEELED) {
		store_vec(base, col, n, vec_ok, vals);
	} else if (window_in_row<true>(col, k, n, vec_ok)) {
		st_vec_words(base + col, out);
	} else {
#if !DTYPE_F32 && VEC % 2 == 0
		const unsigned *w = reinterpret_cast<const unsigned *>(&out);
		unsigned short *bits = reinterpret_cast<unsigned short *>(base);
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if (in_row<true>(col + j, k, n))
				bits[col + j] = (unsigned short)(w[j / 2] >> (16 * (j % 2)));
#else
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if (in_row<true>(col + j, k, n))
				base[col + j] = out.v[j];
#endif
	}
}

// True when the rows of all three tensors start on a VEC-element boundary.
__device__ __forceinline__ bool grads_vec_aligned(const elem_t *dx, long long lddx,
						  const elem_t *y, long long ldy,
						  const elem_t *dy, long long lddy)
{
	return rows_vec_aligned(dx, lddx) && rows_vec_aligned(y, ldy) && rows_vec_aligned(dy, lddy);
}

// True when every row of the three tensors starts at the same offset from
// a VEC-element boundary as the same row of the others, so that one peel
// (softmax_backward_smem's windows) serves the three: true for tensors of
// one shape and stride at 16-byte-aligned bases, whatever N.
__device__ __forceinline__ bool grads_coaligned(const elem_t *dx, long long lddx, const elem_t *y,
						long long ldy, const elem_t *dy, long long lddy)
{
	return rows_coaligned<true>(y, ldy, dx, lddx) && rows_coaligned<true>(dy, lddy, dx, lddx);
}
