/* The log_softmax_backward op: dx[i, j] = dy[i, j] - e^y[i, j] sum_k dy[i, k]
 * over each row, y being log_softmax's output, as PyTorch's
 * _log_softmax_backward_data: computed by the softmax_backward templates,
 * whose manifests name it in also_ops (their source then defines
 * OP_LOG_SOFTMAX_BACKWARD; templates/softmax_backward_common.cuh). */
#include "tuner/ops/ops.h"

#include <math.h>

#include "tuner/check/backward_rows.h"
#include "tuner/check/reference.h"

const at_op log_softmax_backward_op = {
	.name = "log_softmax_backward",
	.summary = "log_softmax's gradient over each row (torch's _log_softmax_backward_data)",
	.kernel_name = "softmax_backward_kernel",
	.kernel_signature = "(elem *dx, const elem *y, const elem *dy, long long M, long long N, "
			    "long long lddx, long long ldy, long long lddy, unsigned flags)",
	.reads_per_elem = 2,
	.writes_per_elem = 1,
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.ninputs = 2,
	.ref_row_inputs = ref_log_softmax_backward_row,
	.make_input = log_softmax_backward_check_input,
	.first_input_from = ref_log_softmax_row,
	/* the flags are taken and ignored: a masked forward row's y of -inf
	 * gives dx = dy by itself */
	.masked_value = NAN,
	.softmax_baselines = 0,
};
