/* Tests for templates/softmax_peel.cuh (compiled here as C: the very code
 * the slice and smem kernels run): over every run length up to a few
 * windows and every offset, the windows cover each element of the run
 * exactly once, never a lane outside it; every window but the first and
 * the last is whole; staged at j + k, the windows stay within one chunk
 * more than ceil(n / vec); and peel_offset reads the offset of a pointer. */
#include <criterion/criterion.h>

#include <string.h>

#include "templates/softmax_peel.cuh"

Test(peel, windows_cover_the_run_exactly_once)
{
	for (int vec = 4; vec <= 8; vec += 4)
		for (int k = 0; k < vec; k++)
			for (long long n = 0; n <= 5 * vec + 1; n++) {
				int seen[64];
				memset(seen, 0, sizeof seen);
				const long long nc = peel_chunks(n, k, vec);
				cr_assert_leq(nc, (n + vec - 1) / vec + 1);
				for (long long c = 0; c < nc; c++) {
					const int lo = peel_lo(c, k), hi = peel_hi(c, n, k, vec);
					cr_assert_lt(lo, hi, "vec %d k %d n %lld: window %lld empty", vec,
						     k, n, c);
					cr_assert_geq(lo, 0);
					cr_assert_leq(hi, vec);
					if (c > 0 && c < nc - 1)
						cr_assert(lo == 0 && hi == vec,
							  "vec %d k %d n %lld: inner window %lld partial",
							  vec, k, n, c);
					for (int j = lo; j < hi; j++) {
						const long long e = c * vec - k + j;
						cr_assert(e >= 0 && e < n, "vec %d k %d n %lld: element %lld",
							  vec, k, n, e);
						seen[e]++;
					}
				}
				for (long long e = 0; e < n; e++)
					cr_assert_eq(seen[e], 1, "vec %d k %d n %lld: element %lld seen %d",
						     vec, k, n, e, seen[e]);
				/* a window past the end has no lane */
				if (n > 0)
					cr_assert_eq(peel_hi(nc, n, k, vec), 0);
			}
}

Test(peel, aligned_runs_are_unchanged)
{
	for (long long n = 1; n < 40; n++) {
		cr_assert_eq(peel_chunks(n, 0, 4), (n + 3) / 4);
		cr_assert_eq(peel_hi((n + 3) / 4 - 1, n, 0, 4), n % 4 ? n % 4 : 4);
	}
	/* odd N: one extra window only where the tail and the head overlap a chunk */
	cr_assert_eq(peel_chunks(50257, 3, 4), 12565); /* 1 + 12563 + 1 */
	cr_assert_eq(peel_chunks(50257, 1, 4), 12565);
	cr_assert_eq(peel_chunks(50258, 3, 4), 12566); /* ceil(n / 4) + 1 */
}

Test(peel, offset_of_a_pointer)
{
	static _Alignas(16) unsigned char buf[64];
	for (int b = 0; b < 16; b += 4)
		cr_assert_eq(peel_offset(buf + 16 + b, 4), b / 4);
	for (int b = 0; b < 16; b += 2)
		cr_assert_eq(peel_offset(buf + 32 + b, 2), b / 2);
}
