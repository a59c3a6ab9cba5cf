/* What an op must move through memory: the numerator of every GB/s the
 * project stores and reports (results.gbps, the benchmark's goals), one
 * formula for all of them. */
#ifndef AT_COMMON_BYTES_MOVED_H
#define AT_COMMON_BYTES_MOVED_H

#include "common/dtype.h"

/* Softmax over M rows of N: each input element is read once and each
 * output element written once, 2 * M * N * element size bytes (f32 4096 x
 * 4096: 134 MB; at 3 TB/s, 45 us). A kernel that reads a row twice (the
 * two-pass online kernel) is still credited one read, so its GB/s says how
 * close it comes to the ideal, not what the memory bus carried. */
double softmax_bytes_moved(at_dtype dt, long long M, long long N);

#endif
