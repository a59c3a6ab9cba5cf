/* The largest shape autotune takes: see shape_bound.h. */
#include "common/shape_bound.h"

#include <stdio.h>

#include "common/bytes_moved.h"

int at_shape_check(at_dtype dt, long long M, long long N, char *why, size_t cap)
{
	if (M < 1 || N < 1) {
		snprintf(why, cap, "shape M=%lld x N=%lld: M and N must be at least 1", M, N);
		return -1;
	}
	if (M > AT_SHAPE_MAX_DIM || N > AT_SHAPE_MAX_DIM) {
		snprintf(why, cap, "shape M=%lld x N=%lld: %s is more than %lld, the most a "
			 "dimension may be", M, N, M > AT_SHAPE_MAX_DIM ? "M" : "N", AT_SHAPE_MAX_DIM);
		return -1;
	}
	long long bytes;
	if (!__builtin_mul_overflow(M, N, &bytes) &&
	    !__builtin_mul_overflow(bytes, (long long)(2 * at_dtype_size(dt)), &bytes) &&
	    bytes <= AT_SHAPE_MAX_BYTES)
		return 0;
	snprintf(why, cap, "shape M=%lld x N=%lld needs %.3g GB for its input and output; no GPU "
		 "holds that (at most %lld GB a shape)", M, N, softmax_bytes_moved(dt, M, N) / 1e9,
		 AT_SHAPE_MAX_BYTES / 1000000000LL);
	return -1;
}
