/* The largest shape autotune takes: one bound for everything that reads an
 * M and an N (the sweep config, `autotune show`, `autotune gen`), so that
 * none of them accepts what the sweep would refuse. Each dimension is at
 * most AT_SHAPE_MAX_DIM, and the input and output of M x N elements take
 * at most AT_SHAPE_MAX_BYTES together: no GPU holds more (the largest have
 * about 200 GB), so a bigger shape could only fail after minutes of
 * compiling (M = 4096, N = 10^12), or name a kernel nothing can launch. */
#ifndef AT_COMMON_SHAPE_BOUND_H
#define AT_COMMON_SHAPE_BOUND_H

#include <stddef.h>

#include "common/dtype.h"

#define AT_SHAPE_MAX_DIM (1LL << 40)
#define AT_SHAPE_MAX_BYTES (1LL << 40)

/* 0 when M x N of dt is within the bound; else -1 and why says which bound
 * and why, e.g. "shape M=4096 x N=1000000000000 needs 3.28e+07 GB for its
 * input and output; no GPU holds that (at most 1099 GB a shape)". */
int at_shape_check(at_dtype dt, long long M, long long N, char *why, size_t cap);

#endif
