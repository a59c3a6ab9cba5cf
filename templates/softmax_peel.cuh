// Peeling a misaligned row (or slice) into 16-byte windows. Written in the
// common subset of C and CUDA so that a host test (tests/test_peel.c)
// checks the very same code.
//
// A run of n elements starting k elements past a 16-byte boundary (k =
// peel_offset(start)) is cut into windows of vec elements aligned in
// memory: window c holds elements c * vec - k + lane for lanes
// [peel_lo(c, k), peel_hi(c, n, k, vec)). Window 0 (when k > 0) is the
// scalar head, the last one may be a partial tail, and every other window
// is one whole 16-byte access. Staged in shared memory, element j sits at
// index j + k, so the windows stay 16-byte aligned there too (cp.async).
// peel_chunks(n, k, vec) windows cover the run: at most one more than
// ceil(n / vec), never an element outside [0, n).
#pragma once

#ifdef __CUDACC__
#define PEEL_FN __device__ __forceinline__
#else
#define PEEL_FN static inline
#endif

// Elements between p and the 16-byte boundary below it.
PEEL_FN int peel_offset(const void *p, int elem_bytes)
{
	return (int)(((unsigned long long)p % 16u) / (unsigned)elem_bytes);
}

PEEL_FN long long peel_chunks(long long n, int k, int vec)
{
	return n > 0 ? (n + k + vec - 1) / vec : 0;
}

// First valid lane of window c.
PEEL_FN int peel_lo(long long c, int k)
{
	return c == 0 ? k : 0;
}

// One past the last valid lane of window c (<= 0 for a window past the end).
PEEL_FN int peel_hi(long long c, long long n, int k, int vec)
{
	const long long h = n + k - c * vec;
	return h < vec ? (h > 0 ? (int)h : 0) : vec;
}
