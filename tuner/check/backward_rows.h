/* The backward ops' CPU side: their references one row at a time in
 * double, as PyTorch's _softmax_backward_data and
 * _log_softmax_backward_data compute them in float64, and their check
 * input (the forward's output y, the gradient dy). */
#ifndef AT_TUNER_BACKWARD_ROWS_H
#define AT_TUNER_BACKWARD_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"

/* dx[j] = y[j] (dy[j] - sum_k dy[k] y[k]), in[0] = y, in[1] = dy (an
 * at_op_ref_row_inputs_fn). Plain arithmetic, so a NaN anywhere in the row
 * makes the row NaN, and an infinite product gives what float64 gives. */
void ref_softmax_backward_row(const void *const *in, at_dtype dt, size_t offset, long long N,
			      double *out);

/* dx[j] = dy[j] - e^y[j] sum_k dy[k], in[0] = y (a log_softmax output),
 * in[1] = dy: y = -inf gives e^y = 0, so dx = dy there (NaN only where the
 * sum is infinite or NaN). */
void ref_log_softmax_backward_row(const void *const *in, at_dtype dt, size_t offset,
				  long long N, double *out);

/* The check inputs (at_op_input_fn): y, M x N, the forward's output of
 * the softmax check input (extreme_check_input's rows, so one-hot rows,
 * 1/N rows, masked zeros or -infs, subnormal exps), as dt holds it; then
 * dy, M x N random in [-8, 8) from another seed, its last row constant
 * (where the softmax backward cancels to about 0). */
void softmax_backward_check_input(void *x, at_dtype dt, long long M, long long N,
				  uint64_t seed);
void log_softmax_backward_check_input(void *x, at_dtype dt, long long M, long long N,
				      uint64_t seed);

#endif
