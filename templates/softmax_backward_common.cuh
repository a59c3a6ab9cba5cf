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

// Loads the VEC elements at row[col...]; elements at or past n read as 0,
// whose term of r is 0 for both ops (for y and dy alike).
__device__ __forceinline__ void load_vec0(vec_t &out, const elem_t *row, long long col,
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
	if (vec_ok && col + VEC <= n) {
		const vec_t v = ld_vec(row + col);
#pragma unroll
		for (int k = 0; k < VEC / 2; k++)
			w[k] = reinterpret_cast<const unsigned *>(&v)[k];
	} else {
#pragma unroll
		for (int k = 0; k < VEC / 2; k++) {
			const long long c = col + 2 * k;
			const unsigned lo = c < n ? row[c] : 0u, hi = c + 1 < n ? row[c + 1] : 0u;
			w[k] = lo | hi << 16; // 0 bits: +0 in f16 and bf16
		}
	}
#pragma unroll
	for (int k = 0; k < VEC / 2; k++)
		reinterpret_cast<unsigned *>(&out)[k] = w[k];
#else
	if (vec_ok && col + VEC <= n) {
		out = ld_vec(row + col);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out.v[j] = col + j < n ? row[col + j] : from_f32(0.0f);
	}
#endif
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

// True when the rows of all three tensors start on a VEC-element boundary.
__device__ __forceinline__ bool grads_vec_aligned(const elem_t *dx, long long lddx,
						  const elem_t *y, long long ldy,
						  const elem_t *dy, long long lddy)
{
	return rows_vec_aligned(dx, lddx) && rows_vec_aligned(y, ldy) && rows_vec_aligned(dy, lddy);
}
