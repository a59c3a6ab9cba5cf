// How softmax_split lays rows over its grid: R rows in flight, each cut
// into S slices of slice_len elements, one CTA per slice (R * S <= G, the
// CTAs left over idle). Written in the common subset of C and CUDA so that
// a host test (tests/test_split_template.c) checks the very same code.
//
//   fit 0: R = min(M, G), S = G / R: every CTA busy with one group of rows
//          when M <= G; a slice longer than shared memory re-reads its
//          overflow.
//   fit 1: S at least what makes every slice fit in cap_chunks 16-byte
//          chunks of shared memory, the rows balanced over the groups this
//          needs, and as many slices per row as those rows leave.
#pragma once

#ifdef __CUDACC__
#define SPLIT_LAYOUT_FN __device__ __forceinline__
#else
#define SPLIT_LAYOUT_FN static inline
#endif

typedef struct split_layout {
	unsigned rows;       /* R: rows in flight, one slot of S CTAs each */
	unsigned slices;     /* S: CTAs per row */
	long long slice_len; /* elements per slice, a multiple of vec */
} split_layout;

/* For M rows of N elements (M, N >= 1) on G >= 1 CTAs, vec elements per
 * chunk. */
SPLIT_LAYOUT_FN split_layout split_plan_layout(long long M, long long N, unsigned G,
					       long long cap_chunks, int fit, int vec)
{
	unsigned S = G / (M < (long long)G ? (unsigned)M : G);
	if (fit && cap_chunks > 0) {
		const long long need = ((N + vec - 1) / vec + cap_chunks - 1) / cap_chunks;
		if (need > S) {
			S = need < (long long)G ? (unsigned)need : G;
			const long long per_group = G / S;
			const long long groups = (M + per_group - 1) / per_group;
			S = G / (unsigned)((M + groups - 1) / groups);
		}
	}
	split_layout l;
	l.slices = S;
	l.rows = G / S;
	l.slice_len = ((N + S - 1) / S + vec - 1) / vec * vec;
	return l;
}
