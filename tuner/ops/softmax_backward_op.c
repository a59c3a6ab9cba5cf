/* The softmax_backward op: dx[i, j] = y[i, j] (dy[i, j] - sum_k dy[i, k] y[i, k])
 * over each row, y being softmax's output and dy the gradient of the loss
 * with respect to it, as PyTorch's _softmax_backward_data. Two inputs, one
 * output (dx may be dy: in place). */
#include "tuner/ops/ops.h"

#include <math.h>

#include "tuner/check/backward_rows.h"
#include "tuner/check/reference.h"

const at_op softmax_backward_op = {
	.name = "softmax_backward",
	.summary = "softmax's gradient over each row (torch's _softmax_backward_data)",
	.kernel_name = "softmax_backward_kernel",
	.kernel_signature = "(elem *dx, const elem *y, const elem *dy, long long M, long long N, "
			    "long long lddx, long long ldy, long long lddy, unsigned flags)",
	/* y and dy read, dx written: a template that reads the row twice is
	 * still credited 2 */
	.reads_per_elem = 2,
	.writes_per_elem = 1,
	/* the output's rounding sets them, as for the forward ops */
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.ninputs = 2,
	.ref_row_inputs = ref_softmax_backward_row,
	.make_input = softmax_backward_check_input,
	.first_input_from = ref_softmax_row,
	/* no masked semantics: the flags are taken and ignored (a masked
	 * forward row's y of zeros gives dx = 0 by itself) */
	.masked_value = NAN,
	.softmax_baselines = 0,
};
