/* The log_softmax op: y[i, j] = (x[i, j] - max_i) - ln sum_j e^(x[i, j] - max_i)
 * over each row, as torch.log_softmax: computed by the softmax templates,
 * whose manifests name it in also_ops (their source then defines
 * OP_LOG_SOFTMAX; templates/softmax_common.cuh). */
#include "tuner/ops/ops.h"

#include <math.h>

#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"

const at_op log_softmax_op = {
	.name = "log_softmax",
	.summary = "log_softmax over each row (torch.log_softmax(x, dim=-1))",
	.kernel_name = "softmax_kernel",
	.kernel_signature = "(elem *y, const elem *x, long long M, long long N, long long ldy, "
			    "long long ldx, unsigned flags)",
	.reads_per_elem = 1,
	.writes_per_elem = 1,
	/* relative L2 over the row's values (mostly -ln N and below): the
	 * same bounds as softmax's, which the output's rounding sets */
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.ref_row = ref_log_softmax_row,
	.make_input = extreme_check_input,
	/* ln 0: a masked row's elements under ATD_MASKED_ZERO */
	.masked_value = -INFINITY,
	.softmax_baselines = 0,
};
