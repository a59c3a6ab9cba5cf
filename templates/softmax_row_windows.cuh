// Whole-vector access to rows that start anywhere, for the templates that
// hold a row in registers (softmax_block, softmax_warp).
//
// A row that starts k elements past a VEC-element boundary (k = vec_offset
// of its first element) is read as windows of memory aligned to the vector:
// window c (col = c * VEC) holds the row's elements col - k + j, j < VEC.
// Only the first window (the head, when k > 0) and the last (the tail) are
// partial; every other one is one whole access. With k = 0 this is the
// plain layout of load_vec. Half-precision rows whose length is not a
// multiple of 8 (and f32 rows not a multiple of 4) thereby keep 16-byte
// accesses in every row, where they used to fall back to 2-byte ones (55-60%
// of a copy on the H100, issue 22).
//
// x and y must be peeled alike: a launch qualifies when its x and y rows
// start at the same offset in every row (rows_coaligned). A row also needs
// room for its head: n + k elements within the variant's hold. A row that
// has neither takes the element-by-element path (k = 0, vec = false).
//
// PEEL is the templates' `peel` param: without it every row must be
// vector-aligned for whole vectors (rows_vec_aligned, once a launch), else
// the whole launch goes element by element: the plain code, with no head
// to test. The tuner chooses: on aligned rows the peel's tests cost 2-5%
// on the H100 (bf16 4096 x 4096: 23.2 us against 22.1), and at some short
// unaligned rows the element-by-element path wins (bf16 8192 x 255).
//
// Needs VEC, elem_t and the accessors of softmax_common.cuh.
#pragma once

// Elements between p and the VEC-element boundary below it.
__device__ __forceinline__ int vec_offset(const elem_t *p)
{
	return VEC == 1 ? 0 : (int)(((unsigned long long)p / sizeof(elem_t)) % VEC);
}

// PEELED: true when every row of x (stride ldx) starts at the same
// offset from a vector boundary as the same row of y (stride ldy); else
// true when every row of both is vector-aligned. Checked once a launch.
template <bool PEELED>
__device__ __forceinline__ bool rows_coaligned(const elem_t *x, long long ldx, const elem_t *y,
					       long long ldy)
{
	if (!PEELED)
		return rows_vec_aligned(x, ldx) && rows_vec_aligned(y, ldy);
	return VEC == 1 ||
	       (((unsigned long long)x - (unsigned long long)y) % (VEC * sizeof(elem_t)) == 0 &&
		(ldx - ldy) % VEC == 0);
}

// How one row is read and written: its head offset k, its length n (held
// rows are short: 32-bit math) and whether whole vectors are used (else
// element by element, with k = 0).
struct row_peel {
	int k, n;
	bool vec;
};

// The peel of a row of n elements at row, in a variant that holds `hold`
// elements of it (n <= hold: a longer row is never launched); coaligned
// from rows_coaligned. Unless PEELED: k = 0, and coaligned is whether every
// row is vector-aligned.
template <bool PEELED>
__device__ __forceinline__ row_peel peel_row(const elem_t *row, long long n, int hold,
					     bool coaligned)
{
	row_peel p;
	p.n = (int)n;
	if (!PEELED) {
		p.k = 0;
		p.vec = coaligned;
		return p;
	}
	const int k = vec_offset(row);
	p.vec = coaligned && p.n + k <= hold;
	p.k = p.vec ? k : 0;
	return p;
}

// True when window col of a row peeled by p is one whole access.
template <bool PEELED>
__device__ __forceinline__ bool window_whole(int col, row_peel p)
{
	if (!PEELED)
		return p.vec && col + VEC <= p.n;
	const int lo = col - p.k;
	return p.vec && lo >= 0 && lo + VEC <= p.n;
}

// Loads window col of a row peeled by p (base = the row's start - p.k);
// elements outside the row read as -inf so they vanish from the max and
// the sum.
template <bool PEELED>
__device__ __forceinline__ void load_row_window(vec_t &out, const elem_t *base, int col,
						row_peel p)
{
	if (window_whole<PEELED>(col, p)) {
		out = ld_vec(base + col);
	} else {
		const int lo = col - p.k;
#pragma unroll
		for (int j = 0; j < VEC; j++) // 0 <= lo + j < n
			out.v[j] = (unsigned)(lo + j) < (unsigned)p.n ? base[col + j]
								      : elem_neg_inf();
	}
}

// Converts and stores window col of a row peeled by p (base as above):
// only the row's own elements are written.
template <bool PEELED>
__device__ __forceinline__ void store_row_window(elem_t *base, int col, row_peel p,
						 const float *vals)
{
	vec_t out;
	pack_vec(out, vals);
	if (window_whole<PEELED>(col, p)) {
		st_vec(base + col, out);
	} else {
		const int lo = col - p.k;
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if ((unsigned)(lo + j) < (unsigned)p.n)
				base[col + j] = out.v[j];
	}
}
